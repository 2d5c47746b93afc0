package storage

import (
	"context"
	"errors"
	"testing"
)

func segmentCount(t *testing.T, s *Store, table string) int {
	t.Helper()
	snap := s.Snapshot()
	defer snap.Release()
	ti, err := snap.Table(table)
	if err != nil {
		t.Fatal(err)
	}
	return len(ti.Segments)
}

func TestCompaction(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir, testOptions()) // segments of 3000 rows: small below 375
	sc := allKindsSchema()
	loadTable(t, s, "t", sc, 1, 3000, 1000)
	live := func(r int64) bool { return r%13 != 0 }
	rows := int64(3000)
	for k := 0; k < 5; k++ { // five small appends, each its own segment
		tx := s.Begin()
		appendRows(t, tx, "t", 1, rows, rows+100)
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		rows += 100
	}
	tx := s.Begin()
	deleteByRowID(t, s, tx, "t", 0, func(r int64) bool { return r >= 3000 && !live(r) })
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := segmentCount(t, s, "t"); n != 6 {
		t.Fatalf("%d segments before compaction", n)
	}
	policy := CompactionPolicy{}
	if !s.NeedsCompaction("t", policy) {
		t.Fatal("five small segments need no compaction")
	}
	// A prepared delete from one small segment keeps that one out.
	ptx := s.Begin()
	deleteByRowID(t, s, ptx, "t", 0, func(r int64) bool { return r == 3450 })
	if _, err := ptx.Prepare(ctx, "p1", nil); err != nil {
		t.Fatal(err)
	}
	res, err := s.Compact(ctx, "t", policy)
	if err != nil {
		t.Fatal(err)
	}
	if res.SegmentsIn != 4 || res.SegmentsOut != 1 || res.RowsKept != 400-31 || res.RowsDropped != 31 {
		t.Errorf("compaction result %+v", res)
	}
	if n := segmentCount(t, s, "t"); n != 3 {
		t.Errorf("%d segments after compaction, want 3", n)
	}
	if s.NeedsCompaction("t", policy) {
		t.Error("compaction still needed right after compacting")
	}
	checkLive(t, s, "t", 1, rows, func(r int64) bool { return r < 3000 || live(r) })
	if _, err := s.CommitPrepared(ctx, "p1"); err != nil {
		t.Fatal(err)
	}
	after := func(r int64) bool { return (r < 3000 || live(r)) && r != 3450 }
	checkLive(t, s, "t", 1, rows, after)

	// Many deleted rows in the big segment: it is rewritten.
	tx = s.Begin()
	deleteByRowID(t, s, tx, "t", 0, func(r int64) bool { return r < 3000 && r%4 == 0 })
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	res, err = s.Compact(ctx, "t", policy)
	if err != nil {
		t.Fatal(err)
	}
	if res.SegmentsIn != 1 || res.RowsDropped != 750 {
		t.Errorf("compaction result %+v", res)
	}
	final := func(r int64) bool { return after(r) && !(r < 3000 && r%4 == 0) }
	checkLive(t, s, "t", 1, rows, final)
	snap := s.Snapshot()
	ti, _ := snap.Table("t")
	snap.Release()
	for _, sg := range ti.Segments {
		if sg.Deleted > 0 && sg.Rows > 100 {
			t.Errorf("segment %d still has %d deleted rows after compaction", sg.ID, sg.Deleted)
		}
	}
	s.Close()
	s = openTest(t, dir, testOptions())
	checkLive(t, s, "t", 1, rows, final)
}

func TestCompactionConflicts(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir(), testOptions())
	loadTable(t, s, "t", allKindsSchema(), 1, 3000, 1000)
	for k := int64(0); k < 4; k++ {
		tx := s.Begin()
		appendRows(t, tx, "t", 1, 3000+100*k, 3100+100*k)
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// A delete that commits while the compaction writes: the compaction fails, the delete
	// stays.
	tx, _, err := s.writeCompaction(ctx, "t", CompactionPolicy{})
	if err != nil || tx == nil {
		t.Fatalf("compaction: %v", err)
	}
	dtx := s.Begin()
	deleteByRowID(t, s, dtx, "t", 0, func(r int64) bool { return r == 3150 })
	if err := dtx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); !errors.Is(err, ErrConflict) {
		t.Fatalf("compaction after a concurrent delete: %v, want ErrConflict", err)
	}
	checkLive(t, s, "t", 1, 3400, func(r int64) bool { return r != 3150 })
	// A delete planned against the old segments and committed after the compaction
	// conflicts (exemgr retries the statement).
	stale := s.Begin()
	deleteByRowID(t, s, stale, "t", 0, func(r int64) bool { return r == 3250 })
	// Tried again, the compaction succeeds.
	if res, err := s.Compact(ctx, "t", CompactionPolicy{}); err != nil || res.SegmentsIn != 4 {
		t.Fatalf("compaction again: %+v %v", res, err)
	}
	checkLive(t, s, "t", 1, 3400, func(r int64) bool { return r != 3150 })
	if err := stale.Commit(ctx); !errors.Is(err, ErrConflict) {
		t.Errorf("a delete from compacted segments: %v, want ErrConflict", err)
	}
	checkLive(t, s, "t", 1, 3400, func(r int64) bool { return r != 3150 })
}
