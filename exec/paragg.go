package exec

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"

	"github.com/colinkdb/colink/exec/vec"
)

// ParallelAggregate is a hash aggregation split by group over several workers: the calling
// goroutine hashes each input row's group key and deals the rows into per-worker batches;
// every worker aggregates its share of the groups in a HashAggregate of its own, on its
// own goroutine, or, when the input is partial states whose first rows show about as many
// groups as rows, by partitions of its share once the input has ended (radixagg.go). Over
// a Partitioner (NewPartitionedAggregate) there is no dealer: the producers have dealt the
// rows into partitions, which the workers share out. Each group lives in
// exactly one worker, so the workers' outputs together are the aggregation's output:
// worker 0's groups first, then worker 1's, and so on.
//
// It serves exemgr's final (and one-phase) aggregations, whose inputs have left the
// primprocs' parallelism behind: Q18's final phase merges 1.9 M partial groups. An input
// of fewer than parallelAggMinRows rows is aggregated by one HashAggregate in the calling
// goroutine.
type ParallelAggregate struct {
	input   Operator
	keyCols []int
	types   []vec.Type
	workers []*aggWorker
	seed    maphash.Seed
	budget  *Budget
	spec    AggSpec
	phase   AggPhase

	minRows    int            // the input size from which rows are dealt out
	radixShare float64        // the share of distinct keys in the head from which workers partition (manyGroups)
	headAcct   *Account       // the copied head of the input
	small      *HashAggregate // the aggregation of a small input, done here

	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	errMu   sync.Mutex
	err     error // the first worker failure: the cause, where the others see cancellation
	started bool
	radix   bool        // the workers aggregate by partitions (radixagg.go)
	sets    []*radixSet // rows producers dealt into partitions (NewPartitionedAggregate)
	cur     int         // the worker whose output Next is reading

	h     []uint64
	ident []int32
	parts [][]int32
}

// aggWorker is one share of a ParallelAggregate: batches in, the aggregation's batches out.
type aggWorker struct {
	agg    *HashAggregate
	in     chan *vec.Batch   // dealt rows (owned batches); nil once closed
	recv   <-chan *vec.Batch // in, for the worker (in is cleared when closed)
	free   chan *vec.Batch   // batches the worker has consumed, for reuse
	out    chan *vec.Batch   // output copies
	done   chan *vec.Batch   // output copies Next has passed on, for reuse
	failed bool              // set before out is closed when the worker failed (see p.err)
	fill   *vec.Batch        // the batch being dealt into
	last   *vec.Batch        // the output batch Next returned last
}

// parallelAggMinRows is the input size from which the aggregation is dealt out to the
// workers: below it the copying and hand-offs cost more than a second core saves.
const parallelAggMinRows = 1 << 17

// dealSalt decorrelates the dealing from the hashes the workers' tables use.
const dealSalt = 0x2545f4914f6cdd1d

// parallelAggBatches is how many batches each worker's channels hold: enough to keep the
// dealer and the worker from waiting on each other batch by batch.
const parallelAggBatches = 4

// NewParallelAggregate aggregates input as NewHashAggregate does, over workers workers.
// With one worker, no GROUP BY or a DISTINCT aggregate it is a plain HashAggregate.
func NewParallelAggregate(input Operator, spec AggSpec, phase AggPhase, workers int, budget *Budget) (Operator, error) {
	distinct := false
	for _, a := range spec.Aggs {
		distinct = distinct || a.Distinct
	}
	if workers <= 1 || len(spec.GroupBy) == 0 || distinct {
		return NewHashAggregate(input, spec, phase, budget)
	}
	in := input.Types()
	p := &ParallelAggregate{input: input, seed: maphash.MakeSeed(), budget: budget, spec: spec, phase: phase,
		minRows: parallelAggMinRows, radixShare: manyGroupsShare, headAcct: budget.NewAccount("aggregate input")}
	if phase.rawInput() {
		p.keyCols = spec.GroupBy
	} else {
		// Partial states: the group keys come first.
		for k := range spec.GroupBy {
			p.keyCols = append(p.keyCols, k)
		}
	}
	for w := 0; w < workers; w++ {
		aw := &aggWorker{in: make(chan *vec.Batch, parallelAggBatches), free: make(chan *vec.Batch, parallelAggBatches+2),
			out: make(chan *vec.Batch, parallelAggBatches), done: make(chan *vec.Batch, parallelAggBatches+2)}
		aw.recv = aw.in
		agg, err := NewHashAggregate(&chanSource{types: in, in: aw.in, free: aw.free}, spec, phase, budget)
		if err != nil {
			return nil, err
		}
		aw.agg = agg
		p.workers = append(p.workers, aw)
	}
	p.types = p.workers[0].agg.Types()
	p.parts = make([][]int32, workers)
	return p, nil
}

// NewPartitionedAggregate aggregates, over workers goroutines, the partial states that
// producers have dealt into part (Partitioner.Drain): input is read to its end first,
// which must say the producers are done, and yields no rows. The caller keeps ownership
// of part and releases it after closing the aggregation.
func NewPartitionedAggregate(input Operator, spec AggSpec, phase AggPhase, workers int, budget *Budget, part *Partitioner) (Operator, error) {
	op, err := NewParallelAggregate(input, spec, phase, max(workers, 2), budget)
	if err != nil {
		return nil, err
	}
	p, ok := op.(*ParallelAggregate)
	if !ok {
		return nil, errors.New("aggregate: a partitioned aggregation needs GROUP BY and no DISTINCT")
	}
	p.sets = part.sets
	return p, nil
}

// Types implements Operator.
func (p *ParallelAggregate) Types() []vec.Type { return p.types }

// Init implements Operator.
func (p *ParallelAggregate) Init(ctx context.Context) error {
	p.ctx, p.cancel = context.WithCancel(ctx)
	return p.input.Init(ctx)
}

// Next implements Operator.
func (p *ParallelAggregate) Next(ctx context.Context) (*vec.Batch, error) {
	if !p.started && p.sets != nil {
		p.started = true
		if err := p.startPartitioned(ctx); err != nil {
			return nil, err
		}
	}
	if !p.started {
		p.started = true
		head, more, err := p.readHead(ctx)
		if err != nil {
			return nil, err
		}
		if !more {
			// A small input: one aggregation here is cheaper than dealing it out.
			if p.small, err = NewHashAggregate(NewBatchSource(p.input.Types(), head...), p.spec, p.phase, p.budget); err != nil {
				return nil, err
			}
			if err := p.small.Init(ctx); err != nil {
				return nil, err
			}
		} else {
			// Partial states only: a raw input's groups may each have many rows yet
			// look distinct in the head (Q13's 15 M orders by 1.5 M customers at SF 10),
			// and its streaming tables overlap with what produces the input, where
			// partitions would hold all of it first.
			p.radix = !p.phase.rawInput() && p.manyGroups(head)
			p.startWorkers()
			if err := p.deal(ctx, head); err != nil {
				return nil, err
			}
		}
	}
	if p.small != nil {
		return p.small.Next(ctx)
	}
	for p.cur < len(p.workers) {
		w := p.workers[p.cur]
		if w.last != nil {
			w.done <- w.last
			w.last = nil
		}
		select {
		case b, ok := <-w.out:
			if !ok {
				if w.failed {
					return nil, p.failure()
				}
				p.cur++
				continue
			}
			w.last = b
			return b, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, nil
}

func (p *ParallelAggregate) startWorkers() {
	for i, w := range p.workers {
		p.wg.Add(1)
		go p.runWorker(w, i)
	}
}

// startPartitioned waits for the producers of p.sets to finish (the input's end) and
// starts the workers on their partitions.
func (p *ParallelAggregate) startPartitioned(ctx context.Context) error {
	for {
		b, err := p.input.Next(ctx)
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		if b.Len() > 0 {
			return errors.New("aggregate: a partitioned aggregation's input produced rows")
		}
	}
	p.stopInputs()
	var rows int
	for _, s := range p.sets {
		rows += s.rows()
	}
	if rows < p.minRows {
		// Few groups (Q1's four, Q3's thousands): one aggregation here is cheaper than a
		// table a partition.
		var all []*vec.Batch
		for _, s := range p.sets {
			for q := range s.parts {
				all = append(all, s.parts[q].batches...)
			}
		}
		var err error
		if p.small, err = NewHashAggregate(NewBatchSource(p.input.Types(), all...), p.spec, p.phase, p.budget); err != nil {
			return err
		}
		return p.small.Init(ctx)
	}
	p.radix = true
	p.startWorkers()
	return nil
}

// readHead reads and copies the input's first minRows rows (charged to the budget) and
// reports whether there are more.
func (p *ParallelAggregate) readHead(ctx context.Context) ([]*vec.Batch, bool, error) {
	var head []*vec.Batch
	var rows int
	var size int64
	for rows < p.minRows || rows == 0 {
		b, err := p.input.Next(ctx)
		if err != nil {
			return nil, false, err
		}
		if b == nil {
			return head, false, nil
		}
		c := &vec.Batch{N: b.N} // dense: Copy keeps only the selected rows
		if b.Sel != nil {
			c.N = len(b.Sel)
		}
		for _, v := range b.Cols {
			cv := &vec.Vec{}
			cv.Copy(v, b.Sel, b.N)
			c.Cols = append(c.Cols, cv)
			size += cv.MemSize()
		}
		if err := p.headAcct.Resize(size); err != nil {
			return nil, false, err
		}
		head = append(head, c)
		rows += c.N
	}
	return head, true, nil
}

// deal sends every row of head and then of the rest of the input to the worker of its
// group.
func (p *ParallelAggregate) deal(ctx context.Context, head []*vec.Batch) error {
	n := len(p.workers)
	keys := make([]*vec.Vec, len(p.keyCols))
	for {
		var b *vec.Batch
		if len(head) > 0 {
			b, head = head[0], head[1:]
		} else {
			var err error
			if b, err = p.input.Next(ctx); err != nil {
				p.stopInputs()
				return err
			}
		}
		if b == nil {
			break
		}
		rows := activeRowsOf(b.Sel, b.N, &p.ident)
		p.h = growTo(p.h[:0], b.N)
		for k, c := range p.keyCols {
			keys[k] = b.Cols[c]
		}
		hashRows(keys, rows, p.h, p.seed)
		for w := range p.parts {
			p.parts[w] = p.parts[w][:0]
		}
		for _, i := range rows {
			// Remixed: the workers' tables index by the same hash's top bits, which
			// must not be the bits that chose the worker.
			w := int((mix64(p.h[i]^dealSalt) >> 32) * uint64(n) >> 32)
			p.parts[w] = append(p.parts[w], i)
		}
		for w, part := range p.parts {
			if len(part) == 0 {
				continue
			}
			if err := p.append(ctx, p.workers[w], b, part); err != nil {
				p.stopInputs()
				return err
			}
		}
	}
	for _, w := range p.workers {
		if w.fill != nil && w.fill.N > 0 {
			if err := p.send(ctx, w); err != nil {
				p.stopInputs()
				return err
			}
		}
	}
	p.stopInputs()
	return nil
}

// append adds rows of b to w's batch being filled, sending it once it is full.
func (p *ParallelAggregate) append(ctx context.Context, w *aggWorker, b *vec.Batch, rows []int32) error {
	if w.fill == nil {
		select {
		case w.fill = <-w.free:
			for _, v := range w.fill.Cols {
				v.Reset()
			}
			w.fill.N = 0
		default:
			w.fill = &vec.Batch{}
			for _, t := range p.input.Types() {
				w.fill.Cols = append(w.fill.Cols, vec.NewVec(t))
			}
		}
	}
	for c, v := range w.fill.Cols {
		v.AppendFrom(b.Cols[c], rows, b.N)
	}
	w.fill.N += len(rows)
	if w.fill.N >= vec.DefaultBatchRows {
		return p.send(ctx, w)
	}
	return nil
}

func (p *ParallelAggregate) send(ctx context.Context, w *aggWorker) error {
	select {
	case w.in <- w.fill:
		w.fill = nil
		return nil
	case <-p.ctx.Done():
		return p.workerErr(ctx)
	}
}

// workerErr stops every worker after one failed (or the query was cancelled) and returns
// the reason.
func (p *ParallelAggregate) workerErr(ctx context.Context) error {
	p.stopInputs()
	p.cancel()
	p.wg.Wait()
	if err := p.failure(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.New("aggregate: cancelled")
}

// stopInputs tells the workers their input has ended.
func (p *ParallelAggregate) stopInputs() {
	for _, w := range p.workers {
		if w.in != nil {
			close(w.in)
			w.in = nil
		}
	}
}

func (p *ParallelAggregate) runWorker(w *aggWorker, i int) {
	defer p.wg.Done()
	defer close(w.out) // after w.err is set
	if err := p.work(w, i); err != nil {
		w.failed = true
		p.errMu.Lock()
		if p.err == nil {
			p.err = err
		}
		p.errMu.Unlock()
		p.cancel()
	}
}

// failure is the first worker error (nil: none).
func (p *ParallelAggregate) failure() error {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return p.err
}

// work runs worker w's aggregation, sending its output batches to w.out. A panic becomes
// its error, which fails only this query.
func (p *ParallelAggregate) work(w *aggWorker, i int) (err error) {
	defer RecoverTo(p.ctx, "parallel aggregate worker", &err)
	if p.radix {
		return p.workRadix(w, i)
	}
	if err := w.agg.Init(p.ctx); err != nil {
		return err
	}
	for {
		b, err := w.agg.Next(p.ctx)
		if err != nil {
			return fmt.Errorf("aggregate worker: %w", err)
		}
		if b == nil || !p.emit(w, b) {
			return nil
		}
	}
}

// emit sends a copy of b to w.out; false: the query was cancelled.
func (p *ParallelAggregate) emit(w *aggWorker, b *vec.Batch) bool {
	var c *vec.Batch
	select {
	case c = <-w.done:
	default:
		c = &vec.Batch{}
		for range b.Cols {
			c.Cols = append(c.Cols, &vec.Vec{})
		}
	}
	for k, v := range c.Cols {
		v.Copy(b.Cols[k], b.Sel, b.N)
	}
	c.N, c.Sel = b.N, nil
	select {
	case w.out <- c:
		return true
	case <-p.ctx.Done():
		return false
	}
}

// Close implements Operator.
func (p *ParallelAggregate) Close() error {
	if p.cancel != nil {
		p.cancel()
	}
	p.stopInputs()
	p.wg.Wait()
	var errs []error
	for _, w := range p.workers {
		errs = append(errs, w.agg.Close())
	}
	if p.small != nil {
		errs = append(errs, p.small.Close())
	}
	p.headAcct.Close()
	errs = append(errs, p.input.Close())
	return errors.Join(errs...)
}

// chanSource is an Operator over batches received from a channel; each batch goes back on
// free when the next is asked for.
type chanSource struct {
	types []vec.Type
	in    <-chan *vec.Batch
	free  chan<- *vec.Batch
	last  *vec.Batch
}

func (s *chanSource) Types() []vec.Type          { return s.types }
func (s *chanSource) Init(context.Context) error { return nil }
func (s *chanSource) Close() error               { return nil }

func (s *chanSource) Next(ctx context.Context) (*vec.Batch, error) {
	if s.last != nil {
		select {
		case s.free <- s.last:
		default:
		}
		s.last = nil
	}
	select {
	case b, ok := <-s.in:
		if !ok {
			return nil, nil
		}
		s.last = b
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
