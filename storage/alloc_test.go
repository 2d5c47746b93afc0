package storage

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestDecodePoolOffHeap: a store's decoded columns live in its off-heap pool, a cache drop
// hands them back for reuse, and Close unmaps everything.
func TestDecodePoolOffHeap(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{RowGroupRows: 20000, SegmentRows: 40000, CacheSize: 64 << 20})
	loadTable(t, s, "t", allKindsSchema(), 1, 40000, 20000)
	checkTable(t, s, "t", 1, 40000)
	m := s.MemoryStats()
	if m.Mapped == 0 {
		t.Fatal("decoded columns are not off the heap")
	}
	if used := s.CacheStats().Used; m.Mapped < used/2 {
		t.Errorf("%d bytes mapped for %d cached", m.Mapped, used)
	}
	if err := s.DropCache(false); err != nil {
		t.Fatal(err)
	}
	if m := s.MemoryStats(); m.Idle == 0 {
		t.Fatalf("the cache drop pooled nothing: %+v", m)
	}
	checkTable(t, s, "t", 1, 40000) // decodes again, into the recycled buffers
	s.Close()
	if m := s.MemoryStats(); m.Mapped != 0 || m.Idle != 0 {
		t.Fatalf("after Close: %+v", m)
	}
}

// TestDecodePoolBalanced: every decoded array a scan reads is given back, so after the
// scans and a cache drop the pool's mapped bytes are exactly its idle ones (none leak).
func TestDecodePoolBalanced(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{RowGroupRows: 5000, SegmentRows: 10000, CacheSize: 1 << 20})
	loadTable(t, s, "t", allKindsSchema(), 3, 30000, 10000)
	for range 3 {
		snap := s.Snapshot()
		sc, err := snap.Scan(ScanRequest{Table: "t", Columns: []string{"cc", "ci"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := sc.ForEach(context.Background(), 2, func(RowGroupRef, arrow.Record) error { return nil }); err != nil {
			t.Fatal(err)
		}
		sc.Close()
		snap.Release()
	}
	if err := s.DropCache(false); err != nil {
		t.Fatal(err)
	}
	if m := s.MemoryStats(); m.InUse != 0 {
		t.Fatalf("%d mapped bytes still in use with nothing cached or scanning: decoded arrays were not released (%+v)", m.InUse, m)
	}
}

// TestDecodedColumnsHoldTheirSize: a decoded column holds about the memory its values use
// (within the pool's class rounding, a quarter), and the cache counts what it holds. Arrow's
// Parquet reader reserves twice the values it ends with and then shrinks; before the pool
// honoured the shrink, every cached fixed-width column held double its bytes.
func TestDecodedColumnsHoldTheirSize(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{RowGroupRows: 131072, SegmentRows: 262144, CacheSize: 1 << 30})
	loadTable(t, s, "t", allKindsSchema(), 1, 262144, 131072)
	snap := s.Snapshot()
	defer snap.Release()
	ti, err := snap.Table("t")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range ti.Schema.Fields() {
		names = append(names, f.Name)
	}
	sc, err := snap.Scan(ScanRequest{Table: "t", Columns: names})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var used, held int64
	err = sc.ForEach(context.Background(), 1, func(_ RowGroupRef, rec arrow.Record) error {
		for i, col := range rec.Columns() {
			var u, h int64
			for _, b := range col.Data().Buffers() {
				if b != nil {
					u += int64(b.Len())
					h += int64(cap(b.Buf()))
				}
			}
			if h > u+u/4+64 {
				t.Errorf("column %s (%s) holds %d bytes for %d used", names[i], col.DataType(), h, u)
			}
			used += u
			held += h
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st := s.CacheStats(); st.Used < held || st.Used > held+held/4 {
		t.Errorf("the cache counts %d bytes for columns holding %d (using %d)", st.Used, held, used)
	}
}
