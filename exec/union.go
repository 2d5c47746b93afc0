package exec

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec/vec"
)

// Concat yields all rows of its inputs, one input after the other (UNION ALL).
type Concat struct {
	inputs []Operator
	i      int
}

// NewConcat concatenates inputs of identical types.
func NewConcat(inputs ...Operator) (*Concat, error) {
	if len(inputs) == 0 {
		return nil, fmt.Errorf("concat: no inputs")
	}
	for i, in := range inputs[1:] {
		if !typesEqual(in.Types(), inputs[0].Types()) {
			return nil, fmt.Errorf("concat: input %d has types %v, input 0 %v", i+1, in.Types(), inputs[0].Types())
		}
	}
	return &Concat{inputs: inputs}, nil
}

// Types implements Operator.
func (c *Concat) Types() []vec.Type { return c.inputs[0].Types() }

// Init implements Operator.
func (c *Concat) Init(ctx context.Context) error {
	for _, in := range c.inputs {
		if err := in.Init(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Next implements Operator.
func (c *Concat) Next(ctx context.Context) (*vec.Batch, error) {
	for c.i < len(c.inputs) {
		b, err := c.inputs[c.i].Next(ctx)
		if err != nil || b != nil {
			return b, err
		}
		c.i++
	}
	return nil, nil
}

// Close implements Operator.
func (c *Concat) Close() error {
	var err error
	for _, in := range c.inputs {
		if e := in.Close(); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// Parallel runs work on several goroutines and merges the records they emit, in arrival
// order, into one RecordStream. The channel between them holds a bounded number of records,
// so slow consumption throttles the workers. The first worker error cancels the others and
// is returned by Next once the records already produced have been discarded.
type Parallel struct {
	ch       chan arrow.RecordBatch
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	mu       sync.Mutex
	err      error
	failed   atomic.Bool
	cpuNanos atomic.Int64
	closed   bool
}

// WorkFunc is one worker's job: emit hands a record (ownership included) to the consumer
// and fails once the stream is cancelled.
type WorkFunc func(ctx context.Context, worker int, emit func(arrow.RecordBatch) error) error

// StartParallel starts workers goroutines running work; buffer bounds the records in
// flight (0: two per worker). Each worker runs locked to an OS thread so that its CPU time
// can be measured (Linux).
func StartParallel(ctx context.Context, workers, buffer int, work WorkFunc) *Parallel {
	if workers < 1 {
		workers = 1
	}
	if buffer <= 0 {
		buffer = 2 * workers
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Parallel{ch: make(chan arrow.RecordBatch, buffer), cancel: cancel}
	for w := 0; w < workers; w++ {
		p.wg.Add(1)
		go p.run(ctx, w, work)
	}
	go func() {
		p.wg.Wait()
		close(p.ch)
	}()
	return p
}

func (p *Parallel) run(ctx context.Context, w int, work WorkFunc) {
	defer p.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPUNanos()
	defer func() {
		p.cpuNanos.Add(threadCPUNanos() - start)
	}()
	emit := func(rec arrow.RecordBatch) error {
		select {
		case p.ch <- rec:
			return nil
		case <-ctx.Done():
			rec.Release()
			return ctx.Err()
		}
	}
	if err := runWork(ctx, w, work, emit); err != nil {
		p.fail(err)
	}
}

// runWork calls work, turning a panic into an error that fails only this stream.
func runWork(ctx context.Context, w int, work WorkFunc, emit func(arrow.RecordBatch) error) (err error) {
	defer RecoverTo(ctx, "parallel worker", &err)
	return work(ctx, w, emit)
}

func (p *Parallel) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
	p.failed.Store(true)
	p.cancel()
}

// Next implements RecordStream.
func (p *Parallel) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		p.fail(err)
		return nil, err
	}
	for {
		select {
		case rec, ok := <-p.ch:
			if !ok {
				p.mu.Lock()
				defer p.mu.Unlock()
				return nil, p.err
			}
			if p.failed.Load() {
				rec.Release()
				continue
			}
			return rec, nil
		case <-ctx.Done():
			p.fail(ctx.Err())
			return nil, ctx.Err()
		}
	}
}

// Close cancels the workers, discards undelivered records and waits for the workers.
func (p *Parallel) Close() {
	if p.closed {
		return
	}
	p.closed = true
	p.cancel()
	for rec := range p.ch {
		rec.Release()
	}
}

// CPUNanos is the user+system CPU time the workers have used so far (Linux; 0 elsewhere).
// It is complete once Next has returned the end of the stream or Close has returned.
func (p *Parallel) CPUNanos() int64 { return p.cpuNanos.Load() }

// MergeStreams reads several record streams concurrently (one goroutine each) and yields
// their records in arrival order: exemgr gathering the partial results of N primprocs.
// Close the returned *Parallel when done.
func MergeStreams(ctx context.Context, streams ...RecordStream) *Parallel {
	return StartParallel(ctx, len(streams), 2*len(streams), func(ctx context.Context, w int, emit func(arrow.RecordBatch) error) error {
		for {
			rec, err := streams[w].Next(ctx)
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
	})
}

// ConcatStreams reads record streams one after the other.
func ConcatStreams(streams ...RecordStream) RecordStream {
	i := 0
	return RecordStreamFunc(func(ctx context.Context) (arrow.RecordBatch, error) {
		for i < len(streams) {
			rec, err := streams[i].Next(ctx)
			if err != nil || rec != nil {
				return rec, err
			}
			i++
		}
		return nil, nil
	})
}
