package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// deleteWhere deletes, in one transaction, the rows of table whose global row number (the
// generator's row) satisfies del. It finds their ordinals with ReadWithDeleted.
func deleteWhere(t *testing.T, s *Store, table string, del func(row int64) bool) {
	t.Helper()
	ctx := context.Background()
	snap := s.Snapshot()
	defer snap.Release()
	ti, _ := snap.Table(table)
	sc, err := snap.Scan(ScanRequest{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	segStart := map[uint64]int64{}
	var n int64
	for _, sg := range ti.Segments {
		segStart[sg.ID] = n
		n += sg.Rows
	}
	tx := s.Begin()
	for _, ref := range sc.RowGroups() {
		rec, err := sc.ReadWithDeleted(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		var rows []int64
		for i := int64(0); i < rec.NumRows(); i++ {
			if !ref.IsDeleted(i) && del(segStart[ref.Segment]+ref.FirstRow+i) {
				rows = append(rows, ref.FirstRow+i)
			}
		}
		rec.Release()
		if err := tx.Delete(table, ref.Segment, rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// checkLive scans every column and compares with the generator's rows for which live holds.
func checkLive(t *testing.T, s *Store, table string, seed uint64, rows int64, live func(int64) bool) ScanStats {
	t.Helper()
	var want []int64
	for r := int64(0); r < rows; r++ {
		if live(r) {
			want = append(want, r)
		}
	}
	snap := s.Snapshot()
	defer snap.Release()
	ti, _ := snap.Table(table)
	if ti.Rows != int64(len(want)) {
		t.Fatalf("table reports %d rows, want %d", ti.Rows, len(want))
	}
	names := make([]string, ti.Schema.NumFields())
	for i, f := range ti.Schema.Fields() {
		names[i] = f.Name
	}
	sc, err := snap.Scan(ScanRequest{Table: table, Columns: names})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	k := 0
	for _, ref := range sc.RowGroups() {
		rec, err := sc.Read(context.Background(), ref)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			if k >= len(want) {
				t.Fatalf("scan returns more than %d rows", len(want))
			}
			for c, f := range ti.Schema.Fields() {
				if got, w := cellValue(rec.Column(c), i), genValue(f, seed, want[k], c); got != w {
					t.Fatalf("live row %d (generator row %d) column %s: %v, want %v", k, want[k], f.Name, got, w)
				}
			}
			k++
		}
		rec.Release()
	}
	if k != len(want) {
		t.Fatalf("scan returned %d rows, want %d", k, len(want))
	}
	return sc.Stats()
}

func TestDeletes(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, testOptions())
	sc := allKindsSchema()
	const rows = 7500
	loadTable(t, s, "t", sc, 1, rows, 1000)

	first := func(r int64) bool { return r%3 == 0 || (r >= 1000 && r < 2000) }
	deleteWhere(t, s, "t", first)
	st := checkLive(t, s, "t", 1, rows, func(r int64) bool { return !first(r) })
	if st.RowGroupsEliminated != 1 { // row group 1000–1999 is entirely deleted
		t.Errorf("eliminated %d row groups, want 1", st.RowGroupsEliminated)
	}

	before := s.Snapshot()
	second := func(r int64) bool { return r%5 == 0 }
	deleteWhere(t, s, "t", second)
	both := func(r int64) bool { return !first(r) && !second(r) }
	checkLive(t, s, "t", 1, rows, both)

	// The snapshot taken between the two deletes still sees only the first.
	ti, _ := before.Table("t")
	var wantBefore int64
	for r := int64(0); r < rows; r++ {
		if !first(r) {
			wantBefore++
		}
	}
	if ti.Rows != wantBefore {
		t.Fatalf("pinned snapshot has %d rows, want %d", ti.Rows, wantBefore)
	}
	before.Release()
	checkOnlyCatalogFiles(t, s) // superseded delete files are gone

	// Durable: reopen and read again.
	s.Close()
	s = openTest(t, dir, testOptions())
	checkLive(t, s, "t", 1, rows, both)

	// Bad deletes.
	tx := s.Begin()
	if err := tx.Delete("t", 12345, []int64{1}); err == nil || !strings.Contains(err.Error(), "no segment 12345") {
		t.Errorf("delete from a missing segment: %v", err)
	}
	snap := s.Snapshot()
	ti, _ = snap.Table("t")
	snap.Release()
	if err := tx.Delete("t", ti.Segments[0].ID, []int64{3000}); err == nil || !strings.Contains(err.Error(), "has 3000 rows") {
		t.Errorf("delete past the end: %v", err)
	}
	tx.Abort()

	// A delete racing with a replace of the table conflicts.
	tx = s.Begin()
	if err := tx.Delete("t", ti.Segments[0].ID, []int64{1}); err != nil {
		t.Fatal(err)
	}
	loadTable(t, s, "t", sc, 2, 100, 100)
	if err := tx.Commit(context.Background()); !errors.Is(err, ErrConflict) {
		t.Fatalf("delete after replace committed: %v", err)
	}
	checkTable(t, s, "t", 2, 100)
}

func TestDamagedDeleteFile(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, testOptions())
	loadTable(t, s, "t", allKindsSchema(), 1, 2000, 1000)
	deleteWhere(t, s, "t", func(r int64) bool { return r == 7 })
	snap := s.Snapshot()
	f := snap.cat.table("t").Segments[0].Deletes.File
	snap.Release()
	s.Close()
	p := filepath.Join(dir, f)
	data, _ := os.ReadFile(p)
	data[deleteHeaderSize] ^= 0x80 // un-delete row 7 would be a wrong answer
	os.WriteFile(p, data, 0o644)
	s = openTest(t, dir, testOptions())
	snap = s.Snapshot()
	defer snap.Release()
	_, err := snap.Scan(ScanRequest{Table: "t", Columns: []string{"cc"}})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), p) {
		t.Fatalf("scan with a damaged delete file: %v", err)
	}
}

// TestDeleteFileFailure fails the writing of a delete file: the commit fails, the previous
// delete set stays as it was, no partial file is left under the new file's name, and the
// same delete then commits (a partial file left under that name would make it fail).
func TestDeleteFileFailure(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, testOptions())
	loadTable(t, s, "t", allKindsSchema(), 1, 2000, 1000)
	first := func(r int64) bool { return r%3 == 0 }
	deleteWhere(t, s, "t", first)

	second := func(r int64) bool { return r%5 == 0 }
	snap := s.Snapshot()
	ti, _ := snap.Table("t")
	snap.Release()
	tx := s.Begin()
	for _, sg := range ti.Segments {
		var rows []int64
		for r := int64(0); r < sg.Rows; r++ {
			if second(r) {
				rows = append(rows, r)
			}
		}
		if err := tx.Delete("t", sg.ID, rows); err != nil {
			t.Fatal(err)
		}
	}
	s.failAt = func(st commitStep) error {
		if st == stepDeleteFile {
			return errInjected
		}
		return nil
	}
	if err := tx.Commit(context.Background()); !errors.Is(err, errInjected) {
		t.Fatalf("commit with a failing delete file: %v", err)
	}
	s.failAt = nil
	checkLive(t, s, "t", 1, 2000, func(r int64) bool { return !first(r) })
	checkOnlyCatalogFiles(t, s)

	deleteWhere(t, s, "t", second) // the same delete, at the same catalog version
	both := func(r int64) bool { return !first(r) && !second(r) }
	checkLive(t, s, "t", 1, 2000, both)
	s.Close()
	s = openTest(t, dir, testOptions())
	checkLive(t, s, "t", 1, 2000, both)
}
