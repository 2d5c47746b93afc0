package physical

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/sql/plan"
)

// ExecOptions tune a run of a plan.
type ExecOptions struct {
	// QueryMemory bounds the memory exemgr's operators and broadcast build sides hold, in
	// bytes (0: unlimited). Going over it fails the query with exec.ErrMemoryLimit.
	QueryMemory int64
	// BatchRows bounds the batches exemgr's operators exchange (default 1024).
	BatchRows int
	// OutputRows bounds the rows of each result record (default 65536).
	OutputRows int
	// Alloc provides the result records' buffers (default: a recycling pool).
	Alloc memory.Allocator
	// Shared, if set, is the budget every query of the daemon draws on together: the
	// query's own budget (QueryMemory) is its child.
	Shared *exec.Budget
	// Threads is how many build sides of one fragment exemgr computes at once (each is a
	// plan of its own, usually another fragment's rows gathered from the primprocs); 1 or
	// less computes them one after the other.
	Threads int
	// Analyze counts each of exemgr's operators' rows, batches, time and memory, for
	// EXPLAIN ANALYZE (Result.Analysis).
	Analyze bool
}

// run is the state of one execution of a plan.
type run struct {
	ctx    context.Context
	runner Runner
	opts   ExecOptions
	budget *exec.Budget
	stats  statsCollector

	mu     sync.Mutex
	bcasts map[*Broadcast]*bcastData
	nodes  map[Node]*nodeState // under opts.Analyze
}

// bcastData is a broadcast's materialized records.
type bcastData struct {
	recs  []arrow.RecordBatch
	rows  int64
	bytes int64
	acct  *exec.Account
}

// Result streams a plan's result rows.
type Result struct {
	r      *run
	schema *arrow.Schema
	mat    *exec.Materializer
	start  time.Time
	end    time.Time
	closed bool
}

// Execute runs the plan: it computes the parameters (scalar subqueries), then returns the
// result stream. The fragments start when the stream is first read. Close the result, also
// after an error.
func (p *Plan) Execute(ctx context.Context, runner Runner, opts ExecOptions) (*Result, error) {
	if opts.BatchRows <= 0 {
		opts.BatchRows = vec.DefaultBatchRows
	}
	if opts.OutputRows <= 0 {
		opts.OutputRows = 64 * vec.DefaultBatchRows
	}
	if opts.Alloc == nil {
		opts.Alloc = vec.NewPool(0)
	}
	r := &run{ctx: ctx, runner: runner, opts: opts, budget: opts.Shared.Child(opts.QueryMemory, nil),
		bcasts: map[*Broadcast]*bcastData{}, nodes: map[Node]*nodeState{}}
	res := &Result{r: r, schema: p.Schema, start: time.Now()}
	for _, pg := range p.params {
		if err := r.computeParams(ctx, pg); err != nil {
			res.Close()
			return nil, err
		}
	}
	root, err := r.open(p.Root)
	if err != nil {
		res.Close()
		return nil, err
	}
	res.mat = exec.NewMaterializer(root, p.Schema, opts.OutputRows, opts.Alloc)
	return res, nil
}

// computeParams runs a parameter group's subplan and sets its constants.
func (r *run) computeParams(ctx context.Context, pg *paramGroup) error {
	op, err := r.open(pg.node)
	if err != nil {
		return err
	}
	row, err := exec.SingleRow(ctx, op)
	if err != nil {
		return err
	}
	if row == nil && !pg.single {
		return fmt.Errorf("physical: parameter group %d yielded no row", pg.id)
	}
	for i, slot := range pg.slots {
		d := vec.NullDatum(slot.Value.Type)
		if row != nil {
			d = row[i]
		}
		if d.Type != slot.Value.Type {
			return fmt.Errorf("physical: parameter %s is %s, planned as %s", pg.names[i], d.Type, slot.Value.Type)
		}
		slot.Value = d
	}
	return nil
}

// Schema is the result's schema.
func (res *Result) Schema() *arrow.Schema { return res.schema }

// Next returns the next result record (the caller releases it), or nil at the end.
func (res *Result) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if res.closed {
		return nil, fmt.Errorf("physical: result read after Close")
	}
	rec, err := res.mat.Next(ctx)
	if rec == nil && err == nil && res.end.IsZero() {
		res.end = time.Now()
	}
	return rec, err
}

// Stats returns the run's statistics (complete once the result has been read to its end
// and closed).
func (res *Result) Stats() QueryStats {
	s := res.r.stats.snapshot()
	end := res.end
	if end.IsZero() {
		end = time.Now()
	}
	s.Elapsed = end.Sub(res.start)
	s.PeakMemory = res.r.budget.Peak()
	return s
}

// Close stops the plan's operators and fragments and releases its memory.
func (res *Result) Close() error {
	if res.closed {
		return nil
	}
	res.closed = true
	var err error
	if res.mat != nil {
		err = res.mat.Close()
	}
	if res.end.IsZero() {
		res.end = time.Now()
	}
	r := res.r
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.bcasts {
		for _, rec := range d.recs {
			rec.Release()
		}
		d.acct.Close()
	}
	r.bcasts = nil
	return err
}

// ReadAll reads the result to its end and returns its records (the caller releases them).
func (res *Result) ReadAll(ctx context.Context) ([]arrow.RecordBatch, error) {
	return exec.ReadAll(ctx, res)
}

// broadcast materializes a build side once per run.
func (r *run) broadcast(ctx context.Context, b *Broadcast) (_ *bcastData, err error) {
	// A build side runs on a goroutine of its own, out of reach of the caller's recover:
	// a panic fails the query (1105, stack to the context's logger), not the daemon.
	defer exec.RecoverTo(ctx, fmt.Sprintf("broadcast %d", b.ID), &err)
	r.mu.Lock()
	if d, ok := r.bcasts[b]; ok {
		r.mu.Unlock()
		return d, nil
	}
	r.mu.Unlock()
	op, err := r.open(b.Input)
	if err != nil {
		return nil, err
	}
	in := b.Input.Types()
	m := exec.NewMaterializer(op, vec.SchemaOf(nil, in), r.opts.OutputRows, nil)
	d := &bcastData{acct: r.budget.NewAccount(fmt.Sprintf("broadcast %d", b.ID))}
	// Until d is stored in r.bcasts, a failure (or a panic) releases what d holds.
	stored := false
	defer func() {
		if !stored {
			m.Close()
			for _, rec := range d.recs {
				rec.Release()
			}
			d.acct.Close()
		}
	}()
	for {
		rec, err := m.Next(ctx)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			break
		}
		if b.RowID {
			numbered := withRowNumbers(rec, d.rows)
			rec.Release()
			rec = numbered
		}
		d.recs = append(d.recs, rec)
		d.rows += rec.NumRows()
		d.bytes += vec.RecordBytes(rec)
		if err := d.acct.Resize(d.bytes); err != nil {
			return nil, err
		}
	}
	if err := m.Close(); err != nil {
		return nil, err
	}
	if b.uniqueKeys != nil {
		if err := exec.CheckUnique(d.recs, b.types, b.uniqueKeys); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bcasts == nil {
		return nil, fmt.Errorf("physical: broadcast %d computed after the result was closed", b.ID)
	}
	r.bcasts[b] = d
	stored = true
	return d, nil
}

// broadcasts materializes build sides, up to opts.Threads at once. The first failure
// cancels the others and is the one returned.
func (r *run) broadcasts(ctx context.Context, bs []*Broadcast) ([]*bcastData, error) {
	out := make([]*bcastData, len(bs))
	if r.opts.Threads <= 1 || len(bs) < 2 {
		for i, b := range bs {
			d, err := r.broadcast(ctx, b)
			if err != nil {
				return nil, err
			}
			out[i] = d
		}
		return out, nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errs := make([]error, len(bs))
	sem := make(chan struct{}, r.opts.Threads)
	var wg sync.WaitGroup
	for i, b := range bs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], errs[i] = r.broadcast(ctx, b) // broadcast recovers its own panics
			if errs[i] != nil {
				cancel(errs[i])
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// withRowNumbers returns rec with a BIGINT column numbering its rows from first.
func withRowNumbers(rec arrow.RecordBatch, first int64) arrow.RecordBatch {
	n := int(rec.NumRows())
	bld := array.NewInt64Builder(memory.DefaultAllocator)
	defer bld.Release()
	bld.Reserve(n)
	for i := 0; i < n; i++ {
		bld.UnsafeAppend(first + int64(i))
	}
	ids := bld.NewArray()
	defer ids.Release()
	fields := append(append([]arrow.Field(nil), rec.Schema().Fields()...),
		arrow.Field{Name: "row_number", Type: arrow.PrimitiveTypes.Int64})
	cols := append(append([]arrow.Array(nil), rec.Columns()...), ids)
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n))
}

func (n *Gather) open(r *run) (exec.Operator, error) {
	f := n.Frag
	var bytes int64 // broadcast bytes per primproc
	start := func(ctx context.Context) ([]exec.RecordStream, error) {
		ds, err := r.broadcasts(ctx, f.Builds)
		if err != nil {
			return nil, err
		}
		builds := make([][]arrow.RecordBatch, len(f.Builds))
		for i, d := range ds {
			builds[i] = d.recs
			bytes += d.bytes
		}
		frag := &f.Exec
		if r.opts.Analyze {
			withSteps := f.Exec
			withSteps.StepStats = true
			frag = &withSteps
		}
		streams, err := r.runner.Run(ctx, frag, builds)
		if err != nil {
			return nil, fmt.Errorf("fragment %d: %w", f.ID, err)
		}
		out := make([]exec.RecordStream, len(streams))
		for i, s := range streams {
			out[i] = s
		}
		return out, nil
	}
	done := func(streams []exec.RecordStream) {
		fr := FragmentRun{Fragment: f.ID, Table: f.Exec.Scan.Table, BytesBroadcast: bytes * int64(len(streams))}
		for _, rs := range streams {
			s := rs.(Stream)
			fr.Streams = append(fr.Streams, s.Stats())
			rows, batches, b := s.Received()
			fr.RowsReceived += rows
			fr.BatchesReceived += batches
			fr.BytesReceived += b
		}
		r.stats.addFragment(fr)
	}
	return &fragmentErrors{Operator: exec.NewGather(n.types, r.opts.BatchRows, start, done), id: f.ID}, nil
}

// fragmentErrors names the fragment in the errors its Gather returns.
type fragmentErrors struct {
	exec.Operator
	id int
}

func (o *fragmentErrors) Next(ctx context.Context) (*vec.Batch, error) {
	b, err := o.Operator.Next(ctx)
	if err != nil {
		return nil, fmt.Errorf("fragment %d: %w", o.id, err)
	}
	return b, nil
}

func (n *MatchJoin) open(r *run) (exec.Operator, error) {
	in, err := r.open(n.Input)
	if err != nil {
		return nil, err
	}
	kind := exec.MatchSemi
	switch n.Kind {
	case plan.AntiJoin:
		kind = exec.MatchAnti
	case plan.LeftJoin:
		kind = exec.MatchLeft
	}
	load := func(ctx context.Context) ([]arrow.RecordBatch, int64, error) {
		d, err := r.broadcast(ctx, n.Build)
		if err != nil {
			return nil, 0, err
		}
		return d.recs, d.rows, nil
	}
	return exec.NewMatchJoin(in, kind, n.IDCol, n.Build.types, n.types, r.opts.BatchRows, load), nil
}

func (n *BroadcastScan) open(r *run) (exec.Operator, error) {
	return exec.NewDeferred(n.B.types, r.opts.BatchRows, func(ctx context.Context) ([]arrow.RecordBatch, error) {
		d, err := r.broadcast(ctx, n.B)
		if err != nil {
			return nil, err
		}
		return d.recs, nil
	}), nil
}
