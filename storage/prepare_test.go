package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// appendRows writes generator rows [from, to) to table in tx.
func appendRows(t *testing.T, tx *Txn, table string, seed uint64, from, to int64) {
	t.Helper()
	w, err := tx.Append(table)
	if err != nil {
		t.Fatal(err)
	}
	rec := genRecord(memory.DefaultAllocator, w.schema, seed, from, to-from)
	defer rec.Release()
	if err := w.Write(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
}

// deleteByRowID adds to tx the deletion of the rows (global generator row numbers of the
// table's load order) for which del holds, finding them through the row ID column.
func deleteByRowID(t *testing.T, s *Store, tx *Txn, table string, tag uint8, del func(int64) bool) int {
	t.Helper()
	snap := s.Snapshot()
	defer snap.Release()
	ti, _ := snap.Table(table)
	segStart := map[uint64]int64{}
	var n int64
	for _, sg := range ti.Segments {
		segStart[sg.ID] = n
		n += sg.Rows
	}
	sc, err := snap.Scan(ScanRequest{Table: table, Columns: []string{RowIDColumn}, RowIDTag: tag})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var ids []int64
	for _, ref := range sc.RowGroups() {
		rec, err := sc.Read(context.Background(), ref)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range rec.Column(0).(*array.Int64).Int64Values() {
			gotTag, seg, row, err := SplitRowID(id)
			if err != nil || gotTag != tag {
				t.Fatalf("row ID %d: tag %d, %v", id, gotTag, err)
			}
			if del(segStart[seg] + row) {
				ids = append(ids, id)
			}
		}
		rec.Release()
	}
	bySeg := map[uint64][]int64{}
	if err := GroupRowIDs(ids, tag, bySeg); err != nil {
		t.Fatal(err)
	}
	for seg, rows := range bySeg {
		if err := tx.Delete(table, seg, rows); err != nil {
			t.Fatal(err)
		}
	}
	return len(ids)
}

func storeFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(filepath.Join(dir, "tables"), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			out = append(out, filepath.Base(p))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

func TestRowIDs(t *testing.T) {
	for _, c := range []struct {
		tag      uint8
		seg      uint64
		row      int64
		overflow bool
	}{{0, 0, 0, false}, {5, 17, 123, false}, {255, MaxRowIDSegment, MaxRowIDRow, false},
		{1, MaxRowIDSegment + 1, 0, true}, {1, 1, MaxRowIDRow + 1, true}, {1, 1, -1, true}} {
		id, err := MakeRowID(c.tag, c.seg, c.row)
		if c.overflow {
			if err == nil {
				t.Errorf("MakeRowID(%d, %d, %d) = %d, want an error", c.tag, c.seg, c.row, id)
			}
			continue
		}
		if err != nil || id < 0 {
			t.Fatalf("MakeRowID(%d, %d, %d) = %d, %v", c.tag, c.seg, c.row, id, err)
		}
		tag, seg, row, err := SplitRowID(id)
		if err != nil || tag != c.tag || seg != c.seg || row != c.row {
			t.Errorf("SplitRowID(%d) = %d %d %d %v", id, tag, seg, row, err)
		}
	}
	if _, _, _, err := SplitRowID(-5); err == nil {
		t.Error("SplitRowID(-5) succeeded")
	}
	if err := GroupRowIDs([]int64{1 << 55}, 2, map[uint64][]int64{}); err == nil || !strings.Contains(err.Error(), "tag 1") {
		t.Errorf("GroupRowIDs of another tag: %v", err)
	}
	s := openTest(t, t.TempDir(), testOptions())
	sc := allKindsSchema()
	if _, err := s.Begin().Replace("bad", addField(sc, RowIDColumn)); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("a column named %s: %v", RowIDColumn, err)
	}
	loadTable(t, s, "t", sc, 1, 7000, 1000)
	tx := s.Begin()
	n := deleteByRowID(t, s, tx, "t", 9, func(r int64) bool { return r%5 == 1 })
	if n != 1400 {
		t.Fatalf("%d rows to delete, want 1400", n)
	}
	if err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkLive(t, s, "t", 1, 7000, func(r int64) bool { return r%5 != 1 })
}

func TestPreparedTransactions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir, testOptions())
	id := s.ID()
	if !strings.HasPrefix(id, "st-") {
		t.Fatalf("store ID %q", id)
	}
	sc := allKindsSchema()
	loadTable(t, s, "t", sc, 1, 5000, 1000)

	// tx1 appends rows 5000..5600 and deletes every 7th base row; prepared, it changes nothing
	// visible and survives a restart.
	tx := s.Begin()
	appendRows(t, tx, "t", 1, 5000, 5600)
	if n := deleteByRowID(t, s, tx, "t", 0, func(r int64) bool { return r%7 == 0 }); n != 715 {
		t.Fatalf("%d rows to delete", n)
	}
	res, err := tx.Prepare(ctx, "tx1", map[string]string{"decider": "st-x"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Appended != 600 || res.Deleted != 715 {
		t.Errorf("prepare result %+v", res)
	}
	if err := tx.Commit(ctx); err == nil {
		t.Error("a prepared Txn committed again")
	}
	checkLive(t, s, "t", 1, 5000, func(int64) bool { return true })
	rtx := s.Begin()
	if _, err := rtx.Replace("t", sc); err != nil {
		t.Fatal(err)
	}
	if err := rtx.Commit(ctx); !errors.Is(err, ErrConflict) {
		t.Errorf("replacing a table with a prepared transaction: %v, want ErrConflict", err)
	}
	s.Close()
	s = openTest(t, dir, testOptions())
	if s.ID() != id {
		t.Errorf("store ID changed from %s to %s", id, s.ID())
	}
	snap := s.Snapshot()
	p := snap.Prepared()
	snap.Release()
	if len(p) != 1 || p[0].ID != "tx1" || p[0].Meta["decider"] != "st-x" || !slices.Equal(p[0].Tables, []string{"t"}) {
		t.Fatalf("prepared after reopening: %+v", p)
	}
	if st := s.TxnState("tx1"); st != TxnPrepared {
		t.Fatalf("state %s", st)
	}
	// Another delete commits meanwhile; the prepared one merges with it.
	dtx := s.Begin()
	deleteByRowID(t, s, dtx, "t", 0, func(r int64) bool { return r%11 == 0 })
	if err := dtx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CommitPrepared(ctx, "tx1"); err != nil {
		t.Fatal(err)
	}
	live := func(r int64) bool { return r%7 != 0 && r%11 != 0 }
	checkLive(t, s, "t", 1, 5600, func(r int64) bool { return r >= 5000 || live(r) })
	if _, err := s.CommitPrepared(ctx, "tx1"); err != nil {
		t.Errorf("committing again: %v", err)
	}
	if err := s.AbortPrepared("tx1"); !errors.Is(err, ErrTxnCommitted) {
		t.Errorf("aborting a committed transaction: %v", err)
	}
	if st := s.TxnState("tx1"); st != TxnCommitted {
		t.Errorf("state %s", st)
	}

	// tx2 is prepared, then aborted after a restart: nothing changes, its files go.
	files := storeFiles(t, dir)
	tx = s.Begin()
	appendRows(t, tx, "t", 1, 5600, 6000)
	deleteByRowID(t, s, tx, "t", 0, func(r int64) bool { return r < 100 })
	if _, err := tx.Prepare(ctx, "tx2", nil); err != nil {
		t.Fatal(err)
	}
	if got := storeFiles(t, dir); len(got) <= len(files) {
		t.Errorf("prepare wrote no files: %v", got)
	}
	s.Close()
	s = openTest(t, dir, testOptions())
	if err := s.AbortPrepared("tx2"); err != nil {
		t.Fatal(err)
	}
	if got := storeFiles(t, dir); !slices.Equal(got, files) {
		t.Errorf("files after the abort:\n%v\nwant\n%v", got, files)
	}
	checkLive(t, s, "t", 1, 5600, func(r int64) bool { return r >= 5000 || live(r) })
	if _, err := s.CommitPrepared(ctx, "tx2"); !errors.Is(err, ErrTxnAborted) {
		t.Errorf("committing an aborted transaction: %v", err)
	}
	if _, err := s.CommitPrepared(ctx, "never"); !errors.Is(err, ErrTxnUnknown) {
		t.Errorf("committing an unknown transaction: %v", err)
	}
	// Aborting an unknown ID refuses a late prepare of it.
	if err := s.AbortPrepared("tx3"); err != nil {
		t.Fatal(err)
	}
	tx = s.Begin()
	appendRows(t, tx, "t", 1, 6000, 6100)
	if _, err := tx.Prepare(ctx, "tx3", nil); !errors.Is(err, ErrTxnExists) {
		t.Errorf("preparing an aborted ID: %v", err)
	}
	tx = s.Begin()
	if _, err := tx.Prepare(ctx, "bad id!", nil); err == nil {
		t.Error("a bad ID was accepted")
	}
	tx = s.Begin()
	if _, err := tx.Replace("u", sc); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Prepare(ctx, "tx4", nil); err == nil || !strings.Contains(err.Error(), "only appends and deletes") {
		t.Errorf("preparing a replace: %v", err)
	}
}

// addField returns sc with an Int64 field named name added.
func addField(sc *arrow.Schema, name string) *arrow.Schema {
	fields := append(slices.Clone(sc.Fields()), arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64})
	return arrow.NewSchema(fields, nil)
}

// TestTxnStateInDoubt: an outcome whose catalog was renamed into place but whose directory
// fsync failed is not reported as decided (a crash may still bring the transaction back as
// prepared, and a coordinator acting on the answer would split it across stores): TxnState
// says TxnInDoubt until Settle (or a repeated CommitPrepared) makes it durable.
func TestTxnStateInDoubt(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		resolve func(s *Store, id string) error
		want    TxnState
	}{
		{"commit", func(s *Store, id string) error { _, err := s.CommitPrepared(ctx, id); return err }, TxnCommitted},
		{"abort", func(s *Store, id string) error { return s.AbortPrepared(id) }, TxnAborted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t, t.TempDir(), testOptions())
			defer s.Close()
			loadTable(t, s, "t", allKindsSchema(), 1, 1000, 1000)
			tx := s.Begin()
			appendRows(t, tx, "t", 1, 1000, 1100)
			if _, err := tx.Prepare(ctx, "p1", nil); err != nil {
				t.Fatal(err)
			}
			// p0 commits durably before: its outcome stays reported while the store is in doubt.
			tx = s.Begin()
			appendRows(t, tx, "t", 1, 1100, 1200)
			if _, err := tx.Prepare(ctx, "p0", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := s.CommitPrepared(ctx, "p0"); err != nil {
				t.Fatal(err)
			}
			syncFails := 2
			s.failAt = func(st commitStep) error {
				if st == stepCatalogDirSync && syncFails > 0 {
					syncFails--
					return errInjected
				}
				return nil
			}
			if err := tc.resolve(s, "p1"); !errors.Is(err, ErrNotDurable) {
				t.Fatalf("resolve with a failing directory fsync: %v, want ErrNotDurable", err)
			}
			if st := s.TxnState("p1"); st != TxnInDoubt {
				t.Errorf("state of p1 while its outcome is not durable: %s, want %s", st, TxnInDoubt)
			}
			if st := s.TxnState("p0"); st != TxnCommitted {
				t.Errorf("state of p0 (durable before): %s, want %s", st, TxnCommitted)
			}
			if err := s.Settle(); !errors.Is(err, ErrNotDurable) {
				t.Fatalf("settle with a failing directory fsync: %v, want ErrNotDurable", err)
			}
			if st := s.TxnState("p1"); st != TxnInDoubt {
				t.Errorf("state of p1 after a failed settle: %s, want %s", st, TxnInDoubt)
			}
			if err := s.Settle(); err != nil {
				t.Fatal(err)
			}
			if st := s.TxnState("p1"); st != tc.want {
				t.Errorf("state of p1 once settled: %s, want %s", st, tc.want)
			}
		})
	}
}
