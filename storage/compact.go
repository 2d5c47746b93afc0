package storage

import (
	"context"
	"fmt"
	"slices"
)

// Compaction. Every small append (a refresh function's INSERT) makes segments of its own, and
// every delete leaves rows in their segments that scans read and drop. Compaction rewrites a
// table's small segments, and the segments with many deleted rows, into new full segments
// holding only their live rows, and swaps them in atomically: a new catalog version names the
// new segments in place of the old ones, which are removed once no snapshot names them. A
// commit that deleted rows from one of the old segments meanwhile, or a prepared transaction
// that deletes from one, makes the compaction fail with ErrConflict (it is simply tried again
// later); it never loses a delete.

// CompactionPolicy says which segments a compaction rewrites.
type CompactionPolicy struct {
	// SmallRows: a segment with fewer live rows is small (default SegmentRows/8).
	SmallRows int64
	// MinSmall: the small segments are merged once there are at least this many (default 4).
	MinSmall int
	// MaxDeletedFraction: a segment with at least this fraction of its rows deleted is
	// rewritten (default 0.1).
	MaxDeletedFraction float64
}

func (p CompactionPolicy) withDefaults(o Options) CompactionPolicy {
	if p.SmallRows <= 0 {
		p.SmallRows = max(int64(o.SegmentRows)/8, 1)
	}
	if p.MinSmall <= 0 {
		p.MinSmall = 4
	}
	if p.MaxDeletedFraction <= 0 {
		p.MaxDeletedFraction = 0.1
	}
	return p
}

// CompactResult describes a compaction.
type CompactResult struct {
	SegmentsIn, SegmentsOut int
	RowsKept                int64 // live rows rewritten
	RowsDropped             int64 // deleted rows left behind
	Version                 uint64
}

// compaction is an opCompact's record of the segments it replaces, each with the delete file
// it read (so that a delete committed since is noticed).
type compaction struct {
	baseID   uint64
	replaced []replacedSegment
}

type replacedSegment struct {
	id      uint64
	deletes string // the delete file the compaction applied, "" if none
}

// apply replaces the compacted segments of t (next's copy) by segs, at the position of the
// first of them.
func (c *compaction) apply(next *catalog, t *tableMeta, segs []*segmentMeta) (*tableMeta, error) {
	if t == nil || t.ID != c.baseID {
		return nil, fmt.Errorf("%w: the table was replaced or dropped while it was compacted", ErrConflict)
	}
	busy := next.preparedSegments(t.Name)
	gone := map[uint64]bool{}
	for _, r := range c.replaced {
		i := slices.IndexFunc(t.Segments, func(s *segmentMeta) bool { return s.ID == r.id })
		if i < 0 {
			return nil, fmt.Errorf("%w: segment %d of %q is gone", ErrConflict, r.id, t.Name)
		}
		cur := ""
		if d := t.Segments[i].Deletes; d != nil {
			cur = d.File
		}
		if cur != r.deletes {
			return nil, fmt.Errorf("%w: rows of segment %d of %q were deleted while it was compacted", ErrConflict, r.id, t.Name)
		}
		if busy[r.id] {
			return nil, fmt.Errorf("%w: a prepared transaction deletes from segment %d of %q", ErrConflict, r.id, t.Name)
		}
		gone[r.id] = true
	}
	nt := *t
	nt.Segments = nil
	placed := false
	for _, s := range t.Segments {
		if !gone[s.ID] {
			nt.Segments = append(nt.Segments, s)
			continue
		}
		if !placed {
			nt.Segments = append(nt.Segments, segs...)
			placed = true
		}
	}
	return &nt, nil
}

// pickSegments returns the segments of t the policy rewrites, in table order (none if there
// is nothing worth doing). Segments a prepared transaction deletes from are left alone.
func pickSegments(t *tableMeta, p CompactionPolicy, busy map[uint64]bool) []*segmentMeta {
	var small, heavy []uint64
	for _, s := range t.Segments {
		if busy[s.ID] {
			continue
		}
		var deleted int64
		if s.Deletes != nil {
			deleted = s.Deletes.Count
		}
		switch {
		case float64(deleted) >= p.MaxDeletedFraction*float64(s.Rows):
			heavy = append(heavy, s.ID)
		case s.Rows-deleted < p.SmallRows:
			small = append(small, s.ID)
		}
	}
	pick := map[uint64]bool{}
	for _, id := range heavy {
		pick[id] = true
	}
	if len(small) >= p.MinSmall {
		for _, id := range small {
			pick[id] = true
		}
	}
	var out []*segmentMeta
	for _, s := range t.Segments {
		if pick[s.ID] {
			out = append(out, s)
		}
	}
	return out
}

// NeedsCompaction reports whether Compact of table would rewrite anything under policy.
func (s *Store) NeedsCompaction(table string, policy CompactionPolicy) bool {
	snap := s.Snapshot()
	defer snap.Release()
	t := snap.cat.table(table)
	if t == nil {
		return false
	}
	return len(pickSegments(t, policy.withDefaults(s.opts), snap.cat.preparedSegments(table))) > 0
}

// Compact rewrites the segments of table that policy picks (small ones, once there are
// enough, and those with many deleted rows) into new segments of their live rows, in one
// transaction. It returns a zero result when there is nothing to do, and ErrConflict (the
// table is unchanged) when a concurrent change touched the segments it read.
func (s *Store) Compact(ctx context.Context, table string, policy CompactionPolicy) (CompactResult, error) {
	tx, res, err := s.writeCompaction(ctx, table, policy)
	if tx == nil || err != nil {
		return res, err
	}
	if err := tx.Commit(ctx); err != nil {
		return res, err
	}
	snap := s.Snapshot()
	res.Version = snap.Version()
	snap.Release()
	return res, nil
}

// writeCompaction writes the new segments of a compaction and returns the transaction that
// swaps them in when committed (nil if there is nothing to do).
func (s *Store) writeCompaction(ctx context.Context, table string, policy CompactionPolicy) (_ *Txn, res CompactResult, err error) {
	policy = policy.withDefaults(s.opts)
	tx := s.Begin()
	defer func() {
		if err != nil {
			tx.Abort()
		}
	}()
	t := tx.base.cat.table(table)
	if t == nil {
		return nil, res, fmt.Errorf("%w: %q", ErrNoTable, table)
	}
	segs := pickSegments(t, policy, tx.base.cat.preparedSegments(table))
	if len(segs) == 0 {
		tx.Abort()
		return nil, res, nil
	}
	c := &compaction{baseID: t.ID}
	ids := make([]uint64, len(segs))
	for i, sm := range segs {
		ids[i] = sm.ID
		r := replacedSegment{id: sm.ID}
		if sm.Deletes != nil {
			r.deletes = sm.Deletes.File
			res.RowsDropped += sm.Deletes.Count
		}
		c.replaced = append(c.replaced, r)
	}
	w, err := tx.newWriter(table, t.schema, t.kinds)
	if err != nil {
		return nil, res, err
	}
	tx.ops = append(tx.ops, txnOp{kind: opCompact, table: table, baseID: t.ID, writer: w, compact: c})
	names := make([]string, t.schema.NumFields())
	for i, f := range t.schema.Fields() {
		names[i] = f.Name
	}
	sc, err := tx.base.Scan(ScanRequest{Table: table, Columns: names, Segments: ids})
	if err != nil {
		return nil, res, err
	}
	defer sc.Close()
	for _, ref := range sc.RowGroups() {
		rec, err := sc.Read(ctx, ref)
		if err != nil {
			return nil, res, err
		}
		err = w.Write(ctx, rec)
		res.RowsKept += rec.NumRows()
		rec.Release()
		if err != nil {
			return nil, res, err
		}
	}
	if err := w.Close(ctx); err != nil {
		return nil, res, err
	}
	res.SegmentsIn, res.SegmentsOut = len(segs), len(w.segments)
	return tx, res, nil
}
