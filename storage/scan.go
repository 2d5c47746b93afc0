package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// ScanRequest says what a scan reads: which columns of which table, from which of its
// segments, and which predicates may skip row groups.
type ScanRequest struct {
	Table      string
	Columns    []string    // output columns in order; may be empty (row counts only)
	Segments   []uint64    // segment ids to read; nil reads all of the table's segments
	Predicates []Predicate // conjunctive; used only for zone-map elimination
	// RowIDTag goes into the row IDs of a RowIDColumn among Columns (see MakeRowID).
	RowIDTag uint8
}

// RowGroupRef is one unit of scan work: a row group of a segment. Refs are independent; any
// goroutine may read any of them.
type RowGroupRef struct {
	Segment  uint64
	RowGroup int
	FirstRow int64 // ordinal of the group's first row within the segment (for Txn.Delete)
	Rows     int64 // rows stored in the group, deleted ones included
	Deleted  int64 // of those, rows deleted in the scan's snapshot
	seg      *segmentMeta
	deleted  bitmap // the segment's delete bitmap, nil if none
}

// IsDeleted reports whether row i (0-based within the row group) is deleted in the scan's
// snapshot.
func (r RowGroupRef) IsDeleted(i int64) bool {
	return r.deleted != nil && r.deleted.has(r.FirstRow+i)
}

// ScanStats are a scan's counters. They are updated as row groups are read.
type ScanStats struct {
	RowGroups           int   // row groups in the scanned segments
	RowGroupsEliminated int   // of those, skipped by zone maps or because all their rows are deleted
	RowsRead            int64 // live rows returned so far
	CacheHits           int64 // column chunks served from the cache
	CacheMisses         int64 // column chunks decoded from disk
	BytesFromCache      int64 // decoded bytes served from the cache
	BytesFromDisk       int64 // segment file bytes read
	BytesDecoded        int64 // decoded bytes produced from disk reads
}

// Scan is a planned read of one table in one snapshot. It keeps the snapshot pinned until
// Close; Read may be called concurrently.
type Scan struct {
	store  *Store
	snap   *Snapshot
	table  *tableMeta
	schema *arrow.Schema
	cols   []int // table column index of each output column; -1: the row ID
	refs   []RowGroupRef
	tag    uint8 // row ID tag

	rowGroups, eliminated                  int
	rowsRead, hits, misses                 atomic.Int64
	bytesFromCache, bytesFromDisk, decoded atomic.Int64
	closeOnce                              sync.Once
}

// Scan plans a scan: it resolves columns, binds predicates, and lists the row groups that
// zone maps do not eliminate. The scan pins the snapshot (its own reference) until Close.
func (sn *Snapshot) Scan(req ScanRequest) (*Scan, error) {
	t := sn.cat.table(req.Table)
	if t == nil {
		return nil, fmt.Errorf("%w: %q", ErrNoTable, req.Table)
	}
	sc := &Scan{store: sn.store, table: t, tag: req.RowIDTag}
	fields := make([]arrow.Field, len(req.Columns))
	for i, name := range req.Columns {
		if name == RowIDColumn {
			sc.cols = append(sc.cols, -1)
			fields[i] = arrow.Field{Name: RowIDColumn, Type: arrow.PrimitiveTypes.Int64}
			continue
		}
		idx := t.schema.FieldIndices(name)
		if len(idx) != 1 {
			return nil, fmt.Errorf("storage: table %q has no column %q", t.Name, name)
		}
		sc.cols = append(sc.cols, idx[0])
		fields[i] = t.schema.Field(idx[0])
	}
	sc.schema = arrow.NewSchema(fields, nil)
	preds := make([]boundPred, len(req.Predicates))
	for i, p := range req.Predicates {
		bp, err := bindPredicate(t, p)
		if err != nil {
			return nil, err
		}
		preds[i] = bp
	}
	segs := t.Segments
	if req.Segments != nil {
		want := make(map[uint64]bool, len(req.Segments))
		for _, id := range req.Segments {
			want[id] = true
		}
		segs = nil
		for _, s := range t.Segments {
			if want[s.ID] {
				segs = append(segs, s)
				delete(want, s.ID)
			}
		}
		if len(want) > 0 {
			missing := make([]uint64, 0, len(want))
			for id := range want {
				missing = append(missing, id)
			}
			slices.Sort(missing)
			return nil, fmt.Errorf("storage: table %q has no segment(s) %v in catalog version %d", t.Name, missing, sn.cat.Version)
		}
	}
	for _, s := range segs {
		dels, err := sn.store.deletes(s)
		if err != nil {
			return nil, fmt.Errorf("storage: scan table %q: %w", t.Name, err)
		}
		first := int64(0)
	groups:
		for g, rg := range s.RowGroups {
			ref := RowGroupRef{Segment: s.ID, RowGroup: g, FirstRow: first, Rows: rg.Rows, seg: s, deleted: dels}
			first += rg.Rows
			sc.rowGroups++
			if dels != nil {
				ref.Deleted = dels.countRange(ref.FirstRow, ref.FirstRow+rg.Rows)
				if ref.Deleted == rg.Rows {
					sc.eliminated++
					continue
				}
			}
			for i := range preds {
				if preds[i].excludes(rg.Zones[preds[i].col], rg.Rows) {
					sc.eliminated++
					continue groups
				}
			}
			sc.refs = append(sc.refs, ref)
		}
	}
	sn.store.mu.Lock()
	sn.refs++
	sn.store.mu.Unlock()
	sc.snap = sn
	return sc, nil
}

// IntRange is what the zone map of a row group says about the scan's output column i, if
// it is of the integer class (booleans, integers, dates, decimals unscaled, timestamps):
// the least and greatest stored value and whether the group may hold NULLs. ok is false
// for other columns, the row ID, and groups without min/max. Deleted rows count: the
// range may be wider than the live values, never narrower.
func (sc *Scan) IntRange(ref RowGroupRef, i int) (lo, hi int64, mayNull, ok bool) {
	if i < 0 || i >= len(sc.cols) || sc.cols[i] < 0 || ref.seg == nil || ref.RowGroup >= len(ref.seg.RowGroups) {
		return 0, 0, false, false
	}
	c := sc.cols[i]
	if sc.table.kinds[c].zoneClass() != zoneInt {
		return 0, 0, false, false
	}
	z := ref.seg.RowGroups[ref.RowGroup].Zones[c]
	if !z.HasMinMax {
		return 0, 0, false, false
	}
	return z.MinI, z.MaxI, z.Nulls != 0, true
}

// Schema is the schema of the records Read returns.
func (sc *Scan) Schema() *arrow.Schema { return sc.schema }

// RowGroups lists the row groups to read, in segment and row-group order.
func (sc *Scan) RowGroups() []RowGroupRef { return sc.refs }

// Read returns the live rows of one row group's requested columns as a record (the caller
// must Release it), from the column cache or by decoding the segment file. Rows deleted in the
// scan's snapshot are left out (by a copy, for the groups that have any).
func (sc *Scan) Read(ctx context.Context, ref RowGroupRef) (arrow.Record, error) {
	rec, err := sc.ReadWithDeleted(ctx, ref)
	if err != nil || ref.Deleted == 0 {
		return rec, err
	}
	defer rec.Release()
	return dropDeleted(rec, ref, sc.store.alloc)
}

// ReadWithDeleted returns all stored rows of the row group, deleted ones included, without
// copying; ref.IsDeleted tells which to skip. A DELETE uses it to learn row ordinals.
func (sc *Scan) ReadWithDeleted(ctx context.Context, ref RowGroupRef) (arrow.Record, error) {
	if ref.seg == nil {
		return nil, errors.New("storage: Read needs a RowGroupRef from this scan's RowGroups")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sg, err := sc.store.segment(sc.table.Name, ref.seg)
	if err != nil {
		return nil, err
	}
	cols := make([]arrow.Array, len(sc.cols))
	release := func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}
	for i, c := range sc.cols {
		if c < 0 {
			arr, err := rowIDColumn(sc.tag, ref, sc.store.alloc)
			if err != nil {
				release()
				return nil, fmt.Errorf("storage: read table %q: %w", sc.table.Name, err)
			}
			cols[i] = arr
			continue
		}
		field, kind := sc.table.schema.Field(c), sc.table.kinds[c]
		key := cacheKey{seg: ref.Segment, rg: int32(ref.RowGroup), col: int32(c)}
		arr, hit, disk, err := sc.store.cache.get(ctx, key, func() (arrow.Array, int64, error) {
			return sg.readColumn(ref.RowGroup, c, field, kind)
		})
		if err != nil {
			release()
			return nil, fmt.Errorf("storage: read table %q: %w", sc.table.Name, err)
		}
		size := arraySize(arr)
		if hit {
			sc.hits.Add(1)
			sc.bytesFromCache.Add(size)
		} else {
			sc.misses.Add(1)
			sc.bytesFromDisk.Add(disk)
			sc.decoded.Add(size)
		}
		cols[i] = arr
	}
	rec := array.NewRecord(sc.schema, cols, ref.Rows)
	release() // the record holds its own references
	sc.rowsRead.Add(ref.Rows - ref.Deleted)
	return rec, nil
}

// ForEach reads every planned row group with up to workers goroutines and calls fn with each
// record (fn must not keep it past its return without Retain). It stops at the first error.
func (sc *Scan) ForEach(ctx context.Context, workers int, fn func(RowGroupRef, arrow.Record) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers = max(1, min(workers, len(sc.refs)))
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(sc.refs) || ctx.Err() != nil {
					return
				}
				rec, err := sc.Read(ctx, sc.refs[i])
				if err == nil {
					err = fn(sc.refs[i], rec)
					rec.Release()
				}
				if err != nil {
					errOnce.Do(func() { first = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// Stats returns the scan's counters so far.
func (sc *Scan) Stats() ScanStats {
	return ScanStats{
		RowGroups:           sc.rowGroups,
		RowGroupsEliminated: sc.eliminated,
		RowsRead:            sc.rowsRead.Load(),
		CacheHits:           sc.hits.Load(),
		CacheMisses:         sc.misses.Load(),
		BytesFromCache:      sc.bytesFromCache.Load(),
		BytesFromDisk:       sc.bytesFromDisk.Load(),
		BytesDecoded:        sc.decoded.Load(),
	}
}

// Close unpins the scan's snapshot. Records already returned stay valid.
func (sc *Scan) Close() {
	sc.closeOnce.Do(func() { sc.snap.Release() })
}
