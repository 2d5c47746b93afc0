// Package fragment runs an exec.Fragment over a storage snapshot: the work a primproc does
// next to its data. It turns the fragment's scan into a storage scan of the segments this
// primproc owns — with the fragment's zone predicates as storage predicates, so that zone
// maps skip row groups before anything is read — and drives exec's pipeline over it with a
// number of workers that pull row groups from a shared cursor. A fragment whose top-N sorts
// on a scan column also skips as it goes: its row groups are read in the order of their
// zone maps on that column, and those that cannot beat the workers' cutoff are passed over
// (exec.KeyBound). The output is a stream of Arrow records and, at its end, the fragment's
// statistics. A fragment that aggregates by a column its table is clustered on has its
// workers finish each group inside its unit of row groups whose zone maps on the column
// overlap (a segment, for a table loaded in key order; exec.KeyedRecordStream).
//
// The package knows nothing of the link: primproc's daemon hands it decoded fragments and
// build sides and sends what it returns; tests and in-process runners call it directly.
//
// Memory: a daemon passes its one long-lived recycling pool (Options.Pool), from which the
// output records' buffers and the large arrays of the fragment's hash tables, aggregate
// states and join tables are taken and to which they return when the stream closes, so
// that queries reuse warm memory instead of faulting in fresh pages.
package fragment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/storage"
)

// Options tune a fragment run.
type Options struct {
	// Threads is the number of workers (default GOMAXPROCS).
	Threads int
	// QueryMemory bounds the memory the fragment's hash tables, sorts and aggregates hold,
	// in bytes (0: unlimited). A fragment over it fails with exec.ErrMemoryLimit.
	QueryMemory int64
	// Budget, if set, is the fragment's budget instead (a child of the daemon's shared one,
	// already charged with the build sides); QueryMemory and Pool's role in it are then
	// the caller's.
	Budget *exec.Budget
	// BatchRows and OutputRows are exec.Options' (defaults there).
	BatchRows, OutputRows int
	// Pool, if set, is a recycling pool shared with other runs (safe for concurrent use):
	// the output records' buffers (unless Alloc is set) and the hash tables', aggregate
	// states' and join tables' arrays come from it and go back to it.
	Pool *vec.Pool
	// Alloc provides the output records' buffers (default: Pool, else a pool of this run).
	Alloc memory.Allocator
	// RowIDTag goes into the row IDs of a storage.RowIDColumn the scan reads.
	RowIDTag uint8
}

// Stream is a running fragment: Next yields its output records, Stats its counters.
type Stream struct {
	scan   *storage.Scan
	src    *rowGroupStream
	pipe   *exec.Pipeline
	budget *exec.Budget
	done   bool
	closed bool
}

// Run starts frag over the table's segments listed in segments (nil: all of the table's
// segments in the snapshot), with builds holding each build side's records (the caller keeps
// them until the stream is closed). The snapshot must stay pinned until the stream is
// closed; the stream's own scan pins it too.
func Run(ctx context.Context, snap *storage.Snapshot, segments []uint64, v *exec.Valid, builds [][]arrow.RecordBatch, opts Options) (*Stream, error) {
	frag := v.Fragment
	info, err := snap.Table(frag.Scan.Table)
	if err != nil {
		return nil, fmt.Errorf("fragment: %w", err)
	}
	if err := checkColumns(info, &frag.Scan); err != nil {
		return nil, err
	}
	sc, err := snap.Scan(storage.ScanRequest{
		Table:      frag.Scan.Table,
		Columns:    frag.Scan.Columns,
		Segments:   segments,
		Predicates: zonePredicates(&frag.Scan),
		RowIDTag:   opts.RowIDTag,
	})
	if err != nil {
		return nil, fmt.Errorf("fragment: %w", err)
	}
	budget := opts.Budget
	if budget == nil {
		budget = exec.NewBudgetPool(opts.QueryMemory, opts.Pool)
	}
	alloc := opts.Alloc
	if alloc == nil && opts.Pool != nil {
		alloc = opts.Pool
	}
	src := &rowGroupStream{scan: sc, refs: sc.RowGroups()}
	pipe, err := exec.BuildPipeline(v, src, builds, exec.Options{
		Threads: opts.Threads, BatchRows: opts.BatchRows, OutputRows: opts.OutputRows,
		Budget: budget, Alloc: alloc,
	})
	if err != nil {
		sc.Close()
		return nil, err
	}
	if src.bound = pipe.KeyBound(); src.bound != nil {
		src.promisingFirst()
	}
	return &Stream{scan: sc, pipe: pipe, budget: budget, src: src}, nil
}

// Schema is the output records' schema.
func (s *Stream) Schema() *arrow.Schema { return s.pipe.Schema() }

// Next returns the next output record (the caller releases it), or nil at the end.
func (s *Stream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if s.closed {
		return nil, ErrClosed
	}
	if s.done {
		return nil, nil
	}
	rec, err := s.pipe.Next(ctx)
	if rec == nil && err == nil {
		s.done = true
	}
	return rec, err
}

// Received is what the stream handed out: in process, what the pipeline produced (rows,
// batches, and the records' buffer bytes), counted by the pipeline.
func (s *Stream) Received() (rows, batches, bytes int64) {
	st := s.pipe.Stats()
	return st.RowsProduced, st.BatchesProduced, st.BytesProduced
}

// Stats returns the fragment's counters; they are complete once Next has returned nil.
func (s *Stream) Stats() exec.FragmentStats {
	st := exec.FragmentStats{Stats: s.pipe.Stats()}
	ss := s.scan.Stats()
	st.RowGroups = ss.RowGroups
	st.RowGroupsEliminated = ss.RowGroupsEliminated + int(s.src.skipped.Load())
	st.CacheHits = ss.CacheHits
	st.CacheMisses = ss.CacheMisses
	st.BytesFromCache = ss.BytesFromCache
	st.BytesFromDisk = ss.BytesFromDisk
	return st
}

// Close stops the workers (if the stream was not read to its end), releases the
// pipeline's memory and unpins the scan's snapshot.
func (s *Stream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.pipe.Close()
	s.scan.Close()
	return err
}

// rowGroupStream hands out one row group per Next, to any number of concurrent callers.
// With a top-N's bound it skips the row groups whose zone maps put every key past it.
type rowGroupStream struct {
	scan    *storage.Scan
	refs    []storage.RowGroupRef
	next    atomic.Int64
	bound   *exec.KeyBound
	skipped atomic.Int64
	// units, once ClusterOn has succeeded, are the row groups to hand out together with
	// their exclusive range (NextKeyed), nextUnit the cursor over them.
	units    []clusterUnit
	nextUnit atomic.Int64
}

// clusterUnit is row groups whose ranges of the cluster column overlap one another, and
// the open interval of values that no other unit's row groups hold.
type clusterUnit struct {
	refs   []storage.RowGroupRef
	lo, hi int64
}

// maxUnitRowGroups bounds a clustered unit: a worker aggregates a unit's groups in one
// table. Q18's lineitem is written by dbgen in l_orderkey order and each segment sorted by
// l_shipdate, so a segment's 8 row groups each span all of its orders and form one unit of
// ~260 K orders at the default segment size.
const maxUnitRowGroups = 32

// ClusterOn implements exec.KeyedRecordStream from the zone maps. Ordered by their least
// value of col, the row groups fall into units: a group whose least value is below the
// greatest seen so far overlaps the unit being formed and joins it; one whose least is at
// or above it starts the next (ranges that touch are separate units, as where one key's
// rows straddle two segments). A unit's values strictly between the previous unit's
// greatest and the next unit's least are in no other unit: every earlier group's greatest
// is at most the previous unit's, and every later group's least at least the next unit's.
// It fails (the stream then serves Next as before) if a group has no range on col, a unit
// would exceed maxUnitRowGroups, or there are fewer units than workers could share.
func (r *rowGroupStream) ClusterOn(col int, workers int) bool {
	type zone struct {
		ref    storage.RowGroupRef
		lo, hi int64
	}
	zones := make([]zone, len(r.refs))
	for i, ref := range r.refs {
		lo, hi, _, ok := r.scan.IntRange(ref, col)
		if !ok {
			return false
		}
		zones[i] = zone{ref, lo, hi}
	}
	slices.SortStableFunc(zones, func(a, b zone) int {
		return cmp.Or(cmp.Compare(a.lo, b.lo), cmp.Compare(a.hi, b.hi))
	})
	var units []clusterUnit
	var his []int64 // each unit's greatest value
	for _, z := range zones {
		n := len(units)
		if n > 0 && z.lo < his[n-1] {
			u := &units[n-1]
			if len(u.refs) == maxUnitRowGroups {
				return false
			}
			u.refs = append(u.refs, z.ref)
			his[n-1] = max(his[n-1], z.hi)
			continue
		}
		units = append(units, clusterUnit{refs: []storage.RowGroupRef{z.ref}, lo: z.lo})
		his = append(his, z.hi)
	}
	if len(units) < workers {
		return false
	}
	for i := range units {
		// lo holds the unit's least value until here.
		next := int64(math.MaxInt64)
		if i+1 < len(units) {
			next = units[i+1].lo
		}
		prev := int64(math.MinInt64)
		if i > 0 {
			prev = his[i-1]
		}
		units[i].lo, units[i].hi = prev, next
	}
	r.units = units
	return true
}

// NextKeyed implements exec.KeyedRecordStream: the next unit's records (the caller
// releases them) with its exclusive range.
func (r *rowGroupStream) NextKeyed(ctx context.Context) ([]arrow.RecordBatch, int64, int64, error) {
	i := r.nextUnit.Add(1) - 1
	if i >= int64(len(r.units)) {
		return nil, 0, 0, nil
	}
	u := &r.units[i]
	recs := make([]arrow.RecordBatch, 0, len(u.refs))
	for _, ref := range u.refs {
		rec, err := r.scan.Read(ctx, ref)
		if err != nil {
			for _, rec := range recs {
				rec.Release()
			}
			return nil, 0, 0, err
		}
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		recs = append(recs, rec)
	}
	return recs, u.lo, u.hi, nil
}

// promisingFirst orders the row groups by their zone maps' least key (ascending) or
// greatest (descending), those without one first: the top-N's cutoff then tightens in the
// first groups read, whatever order the segments were written in, and skips the most.
func (r *rowGroupStream) promisingFirst() {
	col, desc := r.bound.Col(), r.bound.Desc()
	r.refs = slices.Clone(r.refs) // the scan's own list stays in storage order
	slices.SortStableFunc(r.refs, func(a, b storage.RowGroupRef) int {
		alo, ahi, _, aok := r.scan.IntRange(a, col)
		blo, bhi, _, bok := r.scan.IntRange(b, col)
		switch {
		case aok != bok:
			if !aok {
				return -1
			}
			return 1
		case desc:
			return cmp.Compare(bhi, ahi)
		}
		return cmp.Compare(alo, blo)
	})
}

func (r *rowGroupStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	for {
		i := r.next.Add(1) - 1
		if i >= int64(len(r.refs)) {
			return nil, nil
		}
		if r.bound != nil {
			if lo, hi, mayNull, ok := r.scan.IntRange(r.refs[i], r.bound.Col()); ok && r.bound.Excludes(lo, hi, mayNull) {
				r.skipped.Add(1)
				continue
			}
		}
		rec, err := r.scan.Read(ctx, r.refs[i])
		if err != nil {
			return nil, err
		}
		if rec.NumRows() > 0 {
			return rec, nil
		}
		rec.Release()
	}
}

// checkColumns verifies that the stored columns have the types the fragment expects, so
// that a mismatch is an error naming the column rather than a misread.
func checkColumns(info storage.TableInfo, sc *exec.Scan) error {
	for i, name := range sc.Columns {
		if name == storage.RowIDColumn {
			if sc.Types[i] != vec.Int64Type {
				return fmt.Errorf("fragment: the row ID column %s is BIGINT, the fragment reads it as %s", name, sc.Types[i])
			}
			continue
		}
		idx := info.Schema.FieldIndices(name)
		if len(idx) != 1 {
			return fmt.Errorf("fragment: table %s has no column %s", info.Name, name)
		}
		st, err := vec.FromArrow(info.Schema.Field(idx[0]).Type)
		if err != nil {
			return fmt.Errorf("fragment: column %s.%s: %w", info.Name, name, err)
		}
		if st != sc.Types[i] {
			return fmt.Errorf("fragment: column %s.%s is %s in storage, the fragment reads it as %s", info.Name, name, st, sc.Types[i])
		}
	}
	return nil
}

var zoneOps = map[expr.Op]storage.Op{
	expr.OpEq: storage.OpEq, expr.OpLt: storage.OpLt, expr.OpLe: storage.OpLe,
	expr.OpGt: storage.OpGt, expr.OpGe: storage.OpGe,
}

// zonePredicates converts the fragment's zone predicates into storage's. A predicate whose
// constant storage cannot compare exactly with the column is left out: it could only have
// saved reading, never changed the answer.
func zonePredicates(sc *exec.Scan) []storage.Predicate {
	var out []storage.Predicate
	for _, z := range sc.Zone {
		op, ok := zoneOps[z.Op]
		if !ok || z.Value.Null || z.Col < 0 || z.Col >= len(sc.Columns) {
			continue
		}
		v, ok := storageValue(sc.Types[z.Col], z.Value)
		if !ok {
			continue
		}
		out = append(out, storage.Predicate{Column: sc.Columns[z.Col], Op: op, Values: []storage.Value{v}})
	}
	return out
}

// storageValue converts a constant compared with a column of type col.
func storageValue(col vec.Type, d vec.Datum) (storage.Value, bool) {
	exact := col.IsInteger() || col.IsDecimal() || col.ID == vec.Date32 || col.ID == vec.Bool
	switch d.Type.ID {
	case vec.Int32, vec.Int64:
		return storage.Int(d.Int), exact && col.ID != vec.Date32 && col.ID != vec.Datetime
	case vec.Bool:
		return storage.Int(d.Int), col.ID == vec.Bool
	case vec.Date32:
		return storage.Date(int32(d.Int)), col.ID == vec.Date32
	case vec.Datetime:
		return storage.Int(d.Int), col.ID == vec.Datetime // microseconds, as stored
	case vec.Decimal64:
		return storage.Decimal(d.Int, d.Type.Scale), exact && col.ID != vec.Date32 && col.ID != vec.Bool
	case vec.Decimal128:
		v := d.Decimal()
		if !v.IsInt64() {
			return storage.Value{}, false
		}
		return storage.Decimal(int64(v.Lo), d.Type.Scale), exact && col.ID != vec.Date32 && col.ID != vec.Bool
	case vec.Float64:
		return storage.Float(d.Float), col.ID == vec.Float64
	case vec.String:
		return storage.Str(d.Str), col.ID == vec.String
	}
	return storage.Value{}, false
}

// ErrClosed is returned by Next after Close.
var ErrClosed = errors.New("fragment: stream closed")
