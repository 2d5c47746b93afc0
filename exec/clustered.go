package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
)

// Clustered aggregation: a fragment that groups by a scan column its table is clustered on
// (lineitem by l_orderkey, which dbgen writes in order) finds nearly every group inside one
// segment. Where the scan can hand out its records in units, each with an open interval of
// the column's values that no other unit holds, a row whose key lies in it belongs to a
// group whose rows are all in this unit: the worker aggregates those rows completely in a
// table of one unit's groups and emits the finished groups at once. Only the rows outside
// the interval (keys the unit shares with its neighbours, and NULLs) take the usual path of
// partial states dealt into the Partitioner and merged at the end. Q18's inner aggregation
// at SF 10 then no longer holds 15 M partial groups until the scan ends (1.5 GiB on
// primproc), only the few the segments share.
//
// The fragment package implements KeyedRecordStream over zone maps; other sources (tests,
// in-process runners) simply do not, and aggregate as before.

// KeyedRecordStream is a RecordStream that can hand out its records in units, each with an
// exclusive range of one column.
type KeyedRecordStream interface {
	RecordStream
	// ClusterOn prepares the stream to hand out units with NextKeyed for scan column col,
	// enough for workers workers, or reports false (the column's ranges are unknown or
	// overlap too much): then Next is used as before. It is called once, before any Next.
	ClusterOn(col, workers int) bool
	// NextKeyed returns the next unit's records (the caller releases them; nil at the end)
	// and the open interval (lo, hi) of col's values that no other unit holds (lo >= hi:
	// none). Safe for concurrent use.
	NextKeyed(ctx context.Context) (recs []arrow.RecordBatch, lo, hi int64, err error)
}

// clusterPlan is how a pipeline aggregates by a clustered key: the scan column the key
// reads, and the final output types the workers' complete groups are emitted in.
type clusterPlan struct {
	col   int
	final []vec.Type
}

// newClusterPlan returns the plan for a pipeline whose combined aggregation is final, with
// GROUP BY, and groups by a column of the scan that src can range, or nil.
func newClusterPlan(p *Pipeline, src RecordStream) *clusterPlan {
	keyed, ok := src.(KeyedRecordStream)
	if !ok || p.part == nil {
		return nil
	}
	agg := p.f.Steps[p.split-1].Aggregate
	if !agg.Final {
		return nil
	}
	in, err := p.stepInput(p.split - 1)
	if err != nil {
		return nil
	}
	final, err := agg.Spec.ResultTypes(in)
	if err != nil || !slices.Equal(final, p.stepTypes(p.split, false)) {
		return nil
	}
	for _, g := range agg.Spec.GroupBy {
		col := scanColumnOf(p.f, p.split-1, g)
		if col < 0 || !intClass(p.f.Scan.Types[col]) {
			continue
		}
		if keyed.ClusterOn(col, p.opts.Threads) {
			return &clusterPlan{col: col, final: final}
		}
		return nil // ClusterOn is asked once
	}
	return nil
}

// intClass reports whether a column's values are the int64 domain of zone maps' ranges.
func intClass(t vec.Type) bool {
	switch t.ID {
	case vec.Int32, vec.Int64, vec.Date32, vec.Decimal64, vec.Datetime:
		return true
	}
	return false
}

// scanColumnOf follows column col of step's input back through the steps before it to the
// scan column it carries unchanged (filters, joins' probe columns, projections that pass it
// on), or -1.
func scanColumnOf(f *Fragment, step, col int) int {
	// The input width of every step, to know a join's probe columns.
	widths := make([]int, step+1)
	cur := f.Scan.Types
	for i := 0; i < step; i++ {
		widths[i] = len(cur)
		next, err := f.Steps[i].OutputTypes(cur, f.Builds)
		if err != nil {
			return -1
		}
		cur = next
	}
	for i := step - 1; i >= 0 && col >= 0; i-- {
		s := &f.Steps[i]
		switch {
		case s.Filter != nil:
		case s.Join != nil:
			if col >= widths[i] {
				col = -1 // a build side's column
			}
		case s.Project != nil:
			if col >= len(s.Project) || s.Project[col].Op != expr.OpCol {
				col = -1
			} else {
				col = s.Project[col].Col
			}
		default:
			col = -1
		}
	}
	if col >= len(f.Scan.Types) {
		return -1
	}
	return col
}

// workClustered is worker w's loop under a cluster plan: per unit, the rows inside its
// exclusive range are aggregated completely and their groups emitted; the others go
// through the worker's partial aggregation into the Partitioner.
func (p *Pipeline) workClustered(ctx context.Context, w int, emit func(arrow.RecordBatch) error) error {
	keyed := p.src.(KeyedRecordStream)
	for {
		recs, lo, hi, err := keyed.NextKeyed(ctx)
		if err != nil {
			return fmt.Errorf("scan of %s: %w", p.f.Scan.Table, err)
		}
		if recs == nil {
			return p.part.sets[w].finish()
		}
		for _, rec := range recs {
			p.rowsScanned.Add(rec.NumRows())
			p.batchesScanned.Add(1)
			p.bytesScanned.Add(vec.RecordBytes(rec))
		}
		err = p.clusteredUnit(ctx, w, recs, lo, hi, emit)
		for _, rec := range recs {
			rec.Release()
		}
		if err != nil {
			return err
		}
	}
}

// clusteredUnit aggregates one unit's records under the cluster plan.
func (p *Pipeline) clusteredUnit(ctx context.Context, w int, recs []arrow.RecordBatch, lo, hi int64, emit func(arrow.RecordBatch) error) error {
	inside := p.keyRange(recs, lo, hi, false)
	op, err := p.buildSteps(inside, 0, p.split-1, true)
	if err == nil {
		var agg *HashAggregate
		if agg, err = NewHashAggregate(op, p.f.Steps[p.split-1].Aggregate.Spec, AggComplete, p.opts.Budget); err == nil {
			op = p.countStep(agg, p.split-1, true)
		}
	}
	if err != nil {
		inside.Close()
		return fmt.Errorf("fragment step %d (aggregate): %w", p.split-1, err)
	}
	if err := op.Init(ctx); err != nil {
		op.Close()
		return err
	}
	m := NewMaterializer(op, vec.SchemaOf(nil, p.cluster.final), p.opts.OutputRows, p.opts.Alloc)
	for {
		out, err := m.Next(ctx)
		if err == nil && out != nil {
			err = emit(out)
		}
		if err != nil {
			m.Close()
			return err
		}
		if out == nil {
			break
		}
	}
	if err := m.Close(); err != nil {
		return err
	}
	p.clusteredRows.Add(inside.kept)
	if inside.skipped == 0 {
		return nil
	}
	// The rows this unit shares with others: partial states, merged at the end.
	shared := p.keyRange(recs, lo, hi, true)
	if op, err = p.buildSteps(shared, 0, p.split, true); err != nil {
		shared.Close()
		return err
	}
	if err := op.Init(ctx); err != nil {
		op.Close()
		return err
	}
	return errors.Join(p.part.add(ctx, w, op), op.Close())
}

// keyRange is a source of recs' rows whose cluster column lies inside the open interval
// (lo, hi), or with outside the others (NULLs included); it holds its own references to
// the records.
func (p *Pipeline) keyRange(recs []arrow.RecordBatch, lo, hi int64, outside bool) *keyRangeSource {
	for _, rec := range recs {
		rec.Retain()
	}
	list := &recordList{recs: recs}
	return &keyRangeSource{Source: NewSource(list, p.f.Scan.Types, p.opts.BatchRows), list: list,
		col: p.cluster.col, lo: lo, hi: hi, outside: outside}
}

// recordList is a RecordStream of records held in a list; whoever takes one releases it.
type recordList struct {
	recs  []arrow.RecordBatch
	taken int
}

func (l *recordList) Next(context.Context) (arrow.RecordBatch, error) {
	if l.taken == len(l.recs) {
		return nil, nil
	}
	l.taken++
	return l.recs[l.taken-1], nil
}

// release releases the records not taken.
func (l *recordList) release() {
	for ; l.taken < len(l.recs); l.taken++ {
		l.recs[l.taken].Release()
	}
}

// keyRangeSource narrows a Source's batches to the rows inside (or outside) a key range,
// counting the rows it keeps and skips.
type keyRangeSource struct {
	*Source
	list          *recordList
	col           int
	lo, hi        int64
	outside       bool
	kept, skipped int64
	sel           []int32
	out           vec.Batch
}

func (s *keyRangeSource) Next(ctx context.Context) (*vec.Batch, error) {
	for {
		b, err := s.Source.Next(ctx)
		if err != nil || b == nil {
			return nil, err
		}
		k := b.Cols[s.col]
		s.sel = s.sel[:0]
		if k.I64 != nil {
			for i, v := range k.I64[:b.N] {
				if (v > s.lo && v < s.hi && !k.IsNull(i)) != s.outside {
					s.sel = append(s.sel, int32(i))
				}
			}
		} else {
			for i, v := range k.I32[:b.N] {
				if (int64(v) > s.lo && int64(v) < s.hi && !k.IsNull(i)) != s.outside {
					s.sel = append(s.sel, int32(i))
				}
			}
		}
		n := int64(len(s.sel))
		s.kept += n
		s.skipped += int64(b.N) - n
		switch {
		case n == int64(b.N):
			return b, nil
		case n > 0:
			s.out = vec.Batch{Cols: b.Cols, N: b.N, Sel: s.sel}
			return &s.out, nil
		}
	}
}

func (s *keyRangeSource) Close() error {
	s.list.release()
	return s.Source.Close()
}

// clusteredCombine is the combine step under a cluster plan: the groups the workers
// finished (their records, through the gather), then the merged groups of the rows they
// shared.
type clusteredCombine struct {
	finished Operator // the gathered records of finished groups
	merged   Operator // the partitioned aggregation over the shared rows
	drained  bool
}

func (c *clusteredCombine) Types() []vec.Type { return c.merged.Types() }

func (c *clusteredCombine) Init(ctx context.Context) error {
	return errors.Join(c.finished.Init(ctx), c.merged.Init(ctx))
}

func (c *clusteredCombine) Next(ctx context.Context) (*vec.Batch, error) {
	if !c.drained {
		b, err := c.finished.Next(ctx)
		if err != nil || b != nil {
			return b, err
		}
		// Every worker is done: the Partitioner holds all the shared rows.
		c.drained = true
	}
	return c.merged.Next(ctx)
}

func (c *clusteredCombine) Close() error {
	return errors.Join(c.finished.Close(), c.merged.Close())
}
