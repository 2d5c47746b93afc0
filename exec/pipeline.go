package exec

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exec/vec"
)

// Options tune a fragment pipeline.
type Options struct {
	// Threads is the number of workers scanning in parallel (default: GOMAXPROCS).
	Threads int
	// BatchRows bounds the rows of the batches operators exchange (default 1024).
	BatchRows int
	// OutputRows bounds the rows of each output record (default 65536).
	OutputRows int
	// Budget is the query's memory budget (nil: unlimited).
	Budget *Budget
	// Alloc provides the output records' buffers (nil: a new vec.Pool, which recycles them
	// once the consumer releases the records).
	Alloc memory.Allocator
}

// Stats counts a fragment's work. CPU time covers the scanning workers (Linux; the final
// combining stage runs on the caller's goroutine and is not included).
type Stats struct {
	RowsScanned     int64 `msgpack:"rows_scanned"`
	BatchesScanned  int64 `msgpack:"batches_scanned"`
	BytesScanned    int64 `msgpack:"bytes_scanned"`
	RowsProduced    int64 `msgpack:"rows_produced"`
	BatchesProduced int64 `msgpack:"batches_produced"`
	BytesProduced   int64 `msgpack:"bytes_produced"`
	WorkerCPUNanos  int64 `msgpack:"worker_cpu_ns"`
	WallNanos       int64 `msgpack:"wall_ns"`
	PeakMemory      int64 `msgpack:"peak_memory"`
	Workers         int   `msgpack:"workers"`
	// RowsGroupedInUnits is the rows a clustered aggregation finished within their unit of
	// row groups (see KeyedRecordStream) rather than merging at the end.
	RowsGroupedInUnits int64 `msgpack:"rows_grouped_in_units,omitempty"`
	// Steps holds, when the fragment asked (Fragment.StepStats), one entry per step.
	Steps []StepStats `msgpack:"steps,omitempty"`
}

// StepStats is what one step of a fragment did, over all its instances (one a worker,
// and the one that merges the workers' output for a blocking step): the rows and batches
// it produced and the time spent in it and in its inputs (Init and Next, inclusive,
// summed over the instances, so it can exceed the fragment's wall time).
type StepStats struct {
	Rows    int64 `msgpack:"rows"`
	Batches int64 `msgpack:"batches"`
	Nanos   int64 `msgpack:"ns"`
}

// addSteps adds o's steps to s's, index by index.
func addSteps(s, o []StepStats) []StepStats {
	if len(s) < len(o) {
		s = append(s, make([]StepStats, len(o)-len(s))...)
	}
	for i, x := range o {
		s[i].Rows += x.Rows
		s[i].Batches += x.Batches
		s[i].Nanos += x.Nanos
	}
	return s
}

// stepCounters are a pipeline's per-step counters, one entry a step, which every
// instance's stepCounter adds to as it goes (so that they are complete when the output
// ends, before anything is closed).
type stepCounters []struct{ rows, batches, nanos atomic.Int64 }

// stepCounter counts one instance of a step's output and time. The workers' instances of
// a step whose output is merged after them count time only: the step's rows are the
// merged ones.
type stepCounter struct {
	Operator
	into     stepCounters
	step     int
	timeOnly bool
}

func (c *stepCounter) Init(ctx context.Context) error {
	t := time.Now()
	err := c.Operator.Init(ctx)
	c.into[c.step].nanos.Add(int64(time.Since(t)))
	return err
}

func (c *stepCounter) Next(ctx context.Context) (*vec.Batch, error) {
	t := time.Now()
	b, err := c.Operator.Next(ctx)
	x := &c.into[c.step]
	x.nanos.Add(int64(time.Since(t)))
	if b != nil && !c.timeOnly {
		x.rows.Add(int64(b.Len()))
		x.batches.Add(1)
	}
	return b, err
}

// countStep wraps step i's operator when the fragment asked for step counters; timeOnly
// marks a worker's instance of a step merged after the workers.
func (p *Pipeline) countStep(op Operator, i int, timeOnly bool) Operator {
	if p.steps == nil {
		return op
	}
	return &stepCounter{Operator: op, into: p.steps, step: i, timeOnly: timeOnly}
}

// Pipeline runs a fragment: Next streams its output records.
type Pipeline struct {
	f       *Fragment
	types   []vec.Type
	schema  *arrow.Schema
	opts    Options
	src     RecordStream
	tables  map[int]*JoinTable // per join step
	split   int                // steps[:split] run on every worker
	combine bool               // steps[split-1] is combined across workers after the gather
	// part, for a combined aggregation with GROUP BY, holds the workers' partial groups,
	// which they deal into partitions themselves instead of streaming them to one dealer.
	part *Partitioner
	// bound, when the first blocking step is a top-N on a scan column, is its workers'
	// cutoff, for the scan to skip row groups (KeyBound); boundStep is that step.
	bound     *KeyBound
	boundStep int
	// cluster, when the combined aggregation groups by a column the scan can range, has
	// the workers finish the groups inside their units of row groups (see clustered.go);
	// clusteredRows counts the rows aggregated so.
	cluster       *clusterPlan
	clusteredRows atomic.Int64

	started bool
	start   time.Time
	par     *Parallel
	post    *Materializer
	out     RecordStream
	done    bool

	steps stepCounters // nil unless the fragment asked for step counters

	rowsScanned, batchesScanned, bytesScanned atomic.Int64
	rowsOut, batchesOut, bytesOut             int64
	wall                                      time.Duration
	closeOnce                                 sync.Once
}

// BuildPipeline prepares a validated fragment to run over scan, a source of the
// scan's record batches (in Scan.Types) whose Next is safe for concurrent use: every
// worker pulls row groups from it. builds holds, for each Fragment.Builds entry, the
// build side's records; their hash tables are built here (charged to opts.Budget) and
// shared by the workers. The caller keeps ownership of the build records.
func BuildPipeline(v *Valid, scan RecordStream, builds [][]arrow.RecordBatch, opts Options) (*Pipeline, error) {
	f, types := v.Fragment, v.Types
	if len(builds) != len(f.Builds) {
		return nil, fmt.Errorf("fragment: declares %d build sides, %d supplied", len(f.Builds), len(builds))
	}
	if opts.Threads <= 0 {
		opts.Threads = runtime.GOMAXPROCS(0)
	}
	if opts.BatchRows <= 0 {
		opts.BatchRows = vec.DefaultBatchRows
	}
	if opts.OutputRows <= 0 {
		opts.OutputRows = 64 * vec.DefaultBatchRows
	}
	if opts.Alloc == nil {
		opts.Alloc = vec.NewPool(0)
	}
	p := &Pipeline{f: f, types: types, schema: vec.SchemaOf(f.Names, types), opts: opts, src: scan,
		tables: map[int]*JoinTable{}, split: len(f.Steps)}
	if f.StepStats {
		p.steps = make(stepCounters, len(f.Steps))
	}
	for i := range f.Steps {
		if f.Steps[i].blocking() {
			p.bound, p.boundStep = newKeyBound(f, i), i
			break
		}
	}
	for i := range f.Steps {
		s := &f.Steps[i]
		if !s.blocking() || opts.Threads == 1 {
			// One worker runs every step itself.
			continue
		}
		switch {
		case s.Aggregate != nil && hasDistinct(s.Aggregate.Spec):
			p.split = i
		case s.Aggregate != nil && !s.Aggregate.Final && i == len(f.Steps)-1:
			// A partial aggregate that ends the fragment: the workers' partial states go
			// out as they are (exemgr's final phase merges them anyway), sparing a second
			// hash table over every group.
		default:
			p.split, p.combine = i+1, true
		}
		break
	}
	if a := p.combinedAggregate(); a != nil && len(a.Spec.GroupBy) > 0 {
		keys := make([]int, len(a.Spec.GroupBy))
		for k := range keys {
			keys[k] = k // partial states: the group keys first
		}
		p.part = NewPartitioner(opts.Threads, p.stepTypes(p.split, true), keys, opts.Budget)
		p.cluster = newClusterPlan(p, scan)
	}
	for i := range f.Steps {
		j := f.Steps[i].Join
		if j == nil {
			continue
		}
		t, err := NewJoinTable(f.Builds[j.Build].Types, j.Spec.BuildKeys, opts.Budget)
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("fragment step %d (join): %w", i, err)
		}
		p.tables[i] = t
		if err := t.AddRecords(builds[j.Build]); err != nil {
			p.Close()
			return nil, fmt.Errorf("fragment step %d (join): build side %d: %w", i, j.Build, err)
		}
	}
	return p, nil
}

// KeyBound is the cutoff of the fragment's top-N for the scan to skip row groups by, or
// nil where there is none (see KeyBound). Set it up before the first Next.
func (p *Pipeline) KeyBound() *KeyBound { return p.bound }

// combinedAggregate is the aggregation combined across workers, if there is one.
func (p *Pipeline) combinedAggregate() *AggStep {
	if !p.combine {
		return nil
	}
	return p.f.Steps[p.split-1].Aggregate
}

func hasDistinct(s AggSpec) bool {
	for _, a := range s.Aggs {
		if a.Distinct {
			return true
		}
	}
	return false
}

// Schema is the output records' schema.
func (p *Pipeline) Schema() *arrow.Schema { return p.schema }

// Types is the output columns' types.
func (p *Pipeline) Types() []vec.Type { return p.types }

// scanOp is one worker's view of the shared scan source.
type scanOp struct {
	p   *Pipeline
	src *Source
}

func (s *scanOp) Types() []vec.Type              { return s.p.f.Scan.Types }
func (s *scanOp) Init(ctx context.Context) error { return nil }
func (s *scanOp) Close() error                   { return s.src.Close() }
func (s *scanOp) Next(ctx context.Context) (*vec.Batch, error) {
	b, err := s.src.Next(ctx)
	if err != nil {
		return nil, fmt.Errorf("scan of %s: %w", s.p.f.Scan.Table, err)
	}
	return b, nil
}

// countingStream counts the records a worker takes from the shared scan.
type countingStream struct{ p *Pipeline }

func (c countingStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	rec, err := c.p.src.Next(ctx)
	if rec != nil {
		c.p.rowsScanned.Add(rec.NumRows())
		c.p.batchesScanned.Add(1)
		c.p.bytesScanned.Add(vec.RecordBytes(rec))
	}
	return rec, err
}

// buildSteps builds steps[from:to] over input; worker marks the per-worker instance of a
// blocking step at the end of the range, and combine the step that merges workers' output.
func (p *Pipeline) buildSteps(op Operator, from, to int, worker bool) (Operator, error) {
	for i := from; i < to; i++ {
		s := &p.f.Steps[i]
		var err error
		lastWorker := worker && i == p.split-1 && p.combine
		switch {
		case s.Filter != nil:
			op, err = NewFilter(op, s.Filter)
		case s.Project != nil:
			op, err = NewProject(op, s.Project)
		case s.Join != nil:
			op, err = NewHashJoinWithTable(op, p.tables[i], s.Join.Spec)
		case s.Aggregate != nil:
			phase := AggPartial
			if !lastWorker && s.Aggregate.Final {
				phase = AggComplete
			}
			op, err = NewHashAggregate(op, s.Aggregate.Spec, phase, p.opts.Budget)
		case s.TopN != nil:
			var t *TopN
			if lastWorker {
				t, err = NewTopN(op, s.TopN.Keys, s.TopN.Limit+s.TopN.Offset, 0, p.opts.Budget)
			} else {
				t, err = NewTopN(op, s.TopN.Keys, s.TopN.Limit, s.TopN.Offset, p.opts.Budget)
			}
			if t != nil && worker && i == p.boundStep {
				t.bound = p.bound
			}
			op = t
		case s.Limit != nil:
			if lastWorker {
				lim := s.Limit.Limit
				if lim >= 0 {
					lim += s.Limit.Offset
				}
				op, err = NewLimit(op, lim, 0)
			} else {
				op, err = NewLimit(op, s.Limit.Limit, s.Limit.Offset)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("fragment step %d (%s): %w", i, s.kind(), err)
		}
		op = p.countStep(op, i, lastWorker)
		if (s.Join != nil || s.Filter != nil) && i+1 < to {
			// A selective step's few rows a batch are gathered before the next step.
			op = NewCoalesce(op, p.opts.BatchRows)
		}
	}
	return op, nil
}

// combineStep builds the operator that merges the workers' outputs of the blocking step.
func (p *Pipeline) combineStep(op Operator) (Operator, error) {
	s := &p.f.Steps[p.split-1]
	switch {
	case s.Aggregate != nil:
		phase := AggMerge
		if s.Aggregate.Final {
			phase = AggFinal
		}
		// The workers' partial groups overlap (each pulls row groups from anywhere in the
		// table), so the merge sees up to Threads partial rows a group: Q18's inner
		// aggregation merges 2 × 1.5 M at SF 1. Dealt by group over the workers' cores, the
		// merge no longer runs on one core while the others idle; dealt into partitions by
		// the workers themselves (p.part), it neither waits on one dealer nor works in
		// tables larger than a cache.
		if p.part != nil {
			return NewPartitionedAggregate(op, s.Aggregate.Spec, phase, p.opts.Threads, p.opts.Budget, p.part)
		}
		return NewParallelAggregate(op, s.Aggregate.Spec, phase, p.opts.Threads, p.opts.Budget)
	case s.TopN != nil:
		return NewTopN(op, s.TopN.Keys, s.TopN.Limit, s.TopN.Offset, p.opts.Budget)
	case s.Limit != nil:
		return NewLimit(op, s.Limit.Limit, s.Limit.Offset)
	}
	return op, nil
}

// stepTypes is the column types after steps[:n].
func (p *Pipeline) stepTypes(n int, worker bool) []vec.Type {
	cur := p.f.Scan.Types
	for i := 0; i < n; i++ {
		cur, _ = p.f.Steps[i].OutputTypes(cur, p.f.Builds)
		if a := p.f.Steps[i].Aggregate; a != nil && worker && i == n-1 && p.combine && a.Final {
			// The worker instance of a final aggregation emits partial states.
			in, _ := p.stepInput(i)
			cur, _ = a.Spec.PartialTypes(in)
		}
	}
	return cur
}

func (p *Pipeline) stepInput(n int) ([]vec.Type, error) {
	cur := p.f.Scan.Types
	for i := 0; i < n; i++ {
		var err error
		if cur, err = p.f.Steps[i].OutputTypes(cur, p.f.Builds); err != nil {
			return nil, err
		}
	}
	return cur, nil
}

func (p *Pipeline) work(ctx context.Context, w int, emit func(arrow.RecordBatch) error) (err error) {
	// A last resort: validation should have caught whatever panics here. The stack goes
	// to the log, not into the error (which reaches SQL clients).
	defer RecoverTo(ctx, "fragment worker", &err)
	if p.cluster != nil {
		return p.workClustered(ctx, w, emit)
	}
	src := &scanOp{p: p, src: NewSource(countingStream{p}, p.f.Scan.Types, p.opts.BatchRows)}
	op, err := p.buildSteps(src, 0, p.split, true)
	if err != nil {
		src.Close()
		return err
	}
	if p.part != nil {
		if err := op.Init(ctx); err != nil {
			op.Close()
			return err
		}
		err := p.part.Drain(ctx, w, op)
		return errors.Join(err, op.Close())
	}
	schema := p.schema
	if p.split < len(p.f.Steps) || p.combine {
		schema = vec.SchemaOf(nil, op.Types())
	}
	m := NewMaterializer(op, schema, p.opts.OutputRows, p.opts.Alloc)
	defer m.Close()
	for {
		rec, err := m.Next(ctx)
		if err != nil {
			return err
		}
		if rec == nil {
			return nil
		}
		if err := emit(rec); err != nil {
			return err
		}
	}
}

func (p *Pipeline) startRun(ctx context.Context) error {
	p.started = true
	p.start = time.Now()
	p.par = StartParallel(ctx, p.opts.Threads, 2*p.opts.Threads, p.work)
	if p.split == len(p.f.Steps) && !p.combine {
		p.out = p.par
		return nil
	}
	in := p.stepTypes(p.split, true)
	var op Operator
	var err error
	if p.cluster != nil {
		// The workers send finished groups; the shared rows' partial states wait in the
		// Partitioner.
		finished := NewSource(p.par, p.cluster.final, p.opts.BatchRows)
		if op, err = p.combineStep(NewBatchSource(in)); err != nil {
			return err
		}
		op = p.countStep(&clusteredCombine{finished: finished, merged: op}, p.split-1, false)
	} else if op = NewSource(p.par, in, p.opts.BatchRows); p.combine {
		if op, err = p.combineStep(op); err != nil {
			return err
		}
		op = p.countStep(op, p.split-1, false)
	}
	if op, err = p.buildSteps(op, p.split, len(p.f.Steps), false); err != nil {
		return err
	}
	p.post = NewMaterializer(op, p.schema, p.opts.OutputRows, p.opts.Alloc)
	p.out = p.post
	return nil
}

// Next returns the next output record (the caller releases it), or nil at the end.
func (p *Pipeline) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if p.done {
		return nil, nil
	}
	if !p.started {
		if err := p.startRun(ctx); err != nil {
			return nil, err
		}
	}
	rec, err := p.out.Next(ctx)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		p.done = true
		p.wall = time.Since(p.start)
		return nil, nil
	}
	p.rowsOut += rec.NumRows()
	p.batchesOut++
	p.bytesOut += vec.RecordBytes(rec)
	return rec, nil
}

// Stats returns the fragment's counters (complete once Next has returned nil, or after
// Close).
func (p *Pipeline) Stats() Stats {
	s := Stats{
		RowsScanned:     p.rowsScanned.Load(),
		BatchesScanned:  p.batchesScanned.Load(),
		BytesScanned:    p.bytesScanned.Load(),
		RowsProduced:    p.rowsOut,
		BatchesProduced: p.batchesOut,
		BytesProduced:   p.bytesOut,
		WallNanos:       int64(p.wall),
		PeakMemory:      p.opts.Budget.Peak(),
		Workers:         p.opts.Threads,

		RowsGroupedInUnits: p.clusteredRows.Load(),
	}
	if s.WallNanos == 0 && p.started {
		s.WallNanos = int64(time.Since(p.start))
	}
	if p.par != nil {
		s.WorkerCPUNanos = p.par.CPUNanos()
	}
	if p.steps != nil {
		s.Steps = make([]StepStats, len(p.steps))
		for i := range p.steps {
			x := &p.steps[i]
			s.Steps[i] = StepStats{Rows: x.rows.Load(), Batches: x.batches.Load(), Nanos: x.nanos.Load()}
		}
	}
	return s
}

// Close stops the workers and releases the pipeline's memory.
func (p *Pipeline) Close() error {
	var err error
	p.closeOnce.Do(func() {
		if p.post != nil {
			err = p.post.Close()
		}
		if p.par != nil {
			p.par.Close()
		}
		p.part.Release()
		for _, t := range p.tables {
			t.Release()
		}
		if p.wall == 0 && p.started {
			p.wall = time.Since(p.start)
		}
	})
	return err
}
