package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/colinkdb/colink/tpch"
)

func TestSnapshotIsolationAndObsoleteFiles(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, testOptions())
	orders, _ := tpch.LookupTable("orders")
	sc := orders.ArrowSchema()
	loadTable(t, s, "orders", sc, 1, 4000, 1000)

	old := s.Snapshot()
	oldInfo, _ := old.Table("orders")
	oldScan, err := old.Scan(ScanRequest{Table: "orders", Columns: []string{"o_orderkey"}})
	if err != nil {
		t.Fatal(err)
	}
	old.Release() // the scan keeps its own pin

	loadTable(t, s, "orders", sc, 2, 2500, 1000) // replace
	cur := s.Snapshot()
	if cur.Version() != old.Version()+1 {
		t.Fatalf("version %d after one commit on %d", cur.Version(), old.Version())
	}
	cur.Release()
	checkTable(t, s, "orders", 2, 2500)

	// The old scan still reads the old rows: its files are kept while it is open. ForEach
	// calls fn from both workers at once, so the count is atomic.
	var n atomic.Int64
	err = oldScan.ForEach(context.Background(), 2, func(ref RowGroupRef, rec arrow.Record) error {
		n.Add(rec.NumRows())
		return nil
	})
	if err != nil || n.Load() != 4000 {
		t.Fatalf("old scan: %d rows, %v", n.Load(), err)
	}
	for _, sg := range oldInfo.Segments {
		if _, err := os.Stat(filepath.Join(dir, sg.File)); err != nil {
			t.Fatalf("old segment removed while pinned: %v", err)
		}
	}
	oldScan.Close()
	for _, sg := range oldInfo.Segments {
		if _, err := os.Stat(filepath.Join(dir, sg.File)); !os.IsNotExist(err) {
			t.Fatalf("old segment %s still there after the last pin went: %v", sg.File, err)
		}
	}
	checkOnlyCatalogFiles(t, s)
}

func TestTxnOperations(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir, testOptions())
	sc := allKindsSchema()
	loadTable(t, s, "a", sc, 1, 2000, 500)
	loadTable(t, s, "b", sc, 2, 1000, 500)

	// Append: rows 2000..4999 of the same generator extend table a.
	tx := s.Begin()
	w, err := tx.Append("a")
	if err != nil {
		t.Fatal(err)
	}
	rec := genRecord(memory.DefaultAllocator, sc, 1, 2000, 3000)
	if err := w.Write(ctx, rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	// In the same transaction, drop b: both changes land together.
	if err := tx.Drop("b"); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot() // before the commit
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if ti, _ := snap.Table("a"); ti.Rows != 2000 {
		t.Fatalf("pinned snapshot sees %d rows of a", ti.Rows)
	}
	if _, err := snap.Table("b"); err != nil {
		t.Fatal("pinned snapshot lost table b")
	}
	snap.Release()
	checkTable(t, s, "a", 1, 5000)
	snap = s.Snapshot()
	if _, err := snap.Table("b"); !errors.Is(err, ErrNoTable) {
		t.Fatalf("b after drop: %v", err)
	}
	snap.Release()

	// An append to an incarnation that is replaced before the append commits conflicts.
	tx1 := s.Begin()
	w1, _ := tx1.Append("a")
	rec = genRecord(memory.DefaultAllocator, sc, 1, 5000, 10)
	w1.Write(ctx, rec)
	rec.Release()
	loadTable(t, s, "a", sc, 3, 100, 100)
	if err := tx1.Commit(ctx); !errors.Is(err, ErrConflict) {
		t.Fatalf("conflicting append committed: %v", err)
	}
	checkTable(t, s, "a", 3, 100)

	// An aborted transaction leaves nothing behind.
	tx2 := s.Begin()
	w2, _ := tx2.Replace("c", sc)
	rec = genRecord(memory.DefaultAllocator, sc, 1, 0, 7000)
	w2.Write(ctx, rec)
	rec.Release()
	tx2.Abort()
	if err := tx2.Commit(ctx); err == nil {
		t.Fatal("commit after abort succeeded")
	}
	checkOnlyCatalogFiles(t, s)

	// Reopen: everything is as committed.
	s.Close()
	s = openTest(t, dir, testOptions())
	checkTable(t, s, "a", 3, 100)
	snap = s.Snapshot()
	if got := len(snap.Tables()); got != 1 {
		t.Fatalf("%d tables after reopen, want 1", got)
	}
	snap.Release()
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir(), testOptions())
	sc := allKindsSchema()
	loadTable(t, s, "t", sc, 1, 10, 10)
	other := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"bad table name", func() error { _, err := s.Begin().Replace("../etc", sc); return err }, "not an identifier"},
		{"unsupported type", func() error {
			_, err := s.Begin().Replace("u", arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Uint16}}, nil))
			return err
		}, "cannot be stored"},
		{"wide decimal", func() error {
			_, err := s.Begin().Replace("u", arrow.NewSchema([]arrow.Field{{Name: "x", Type: &arrow.Decimal128Type{Precision: 38, Scale: 2}}}, nil))
			return err
		}, "cannot be stored"},
		{"duplicate column", func() error {
			_, err := s.Begin().Replace("u", arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}, {Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil))
			return err
		}, "appears twice"},
		{"append to missing table", func() error { _, err := s.Begin().Append("nope"); return err }, "no such table"},
		{"record with the wrong schema", func() error {
			w, _ := s.Begin().Append("t")
			rec := genRecord(memory.DefaultAllocator, other, 1, 0, 5)
			defer rec.Release()
			return w.Write(ctx, rec)
		}, "has 20 columns, the record 1"},
		{"nulls in a NOT NULL column", func() error {
			nullable := make([]arrow.Field, sc.NumFields())
			for i, f := range sc.Fields() {
				f.Nullable = true
				nullable[i] = f
			}
			w, _ := s.Begin().Append("t")
			rec := genRecord(memory.DefaultAllocator, arrow.NewSchema(nullable, nil), 1, 0, 50)
			defer rec.Release()
			return w.Write(ctx, rec)
		}, "is NOT NULL but the record has"},
		{"scan of a missing column", func() error {
			snap := s.Snapshot()
			defer snap.Release()
			_, err := snap.Scan(ScanRequest{Table: "t", Columns: []string{"zz"}})
			return err
		}, `table "t" has no column "zz"`},
		{"scan of a missing segment", func() error {
			snap := s.Snapshot()
			defer snap.Release()
			_, err := snap.Scan(ScanRequest{Table: "t", Segments: []uint64{999}})
			return err
		}, "has no segment(s) [999]"},
		{"second opener", func() error { _, err := Open(s.Dir(), testOptions()); return err }, "in use by another process"},
		{"bad options", func() error { _, err := Open(t.TempDir(), Options{RowGroupRows: 10, SegmentRows: 5}); return err }, "RowGroupRows"},
		{"bad compression", func() error { _, err := Open(t.TempDir(), Options{Compression: "lzma"}); return err }, "unknown compression"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestLeftoversRemoved plants files no catalog names and checks Open removes them.
func TestLeftoversRemoved(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, testOptions())
	loadTable(t, s, "t", allKindsSchema(), 1, 100, 100)
	s.Close()
	for _, f := range []string{"tables/t/seg-00009999.parquet", "tables/gone/seg-00000077.parquet", "CATALOG.tmp-123", ".CATALOG.tmp-456"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s = openTest(t, dir, testOptions())
	checkOnlyCatalogFiles(t, s)
	if _, err := os.Stat(filepath.Join(dir, "tables/gone")); !os.IsNotExist(err) {
		t.Fatalf("empty directory of an unknown table kept: %v", err)
	}
	checkTable(t, s, "t", 1, 100)
}
