package exec

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec/internal/lineitem"
	"github.com/colinkdb/colink/exec/vec"
)

// lockedBuffer is a log destination safe for the workers' concurrent writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// loggingContext returns a context whose engine logger writes to the returned buffer.
func loggingContext() (context.Context, *lockedBuffer) {
	buf := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(buf, nil))
	return ContextWithLogger(context.Background(), log), buf
}

// checkInternalError checks that err is the short error a panic in op becomes (code 1105,
// no stack), and that the log holds the stack.
func checkInternalError(t *testing.T, err error, op string, log *lockedBuffer) {
	t.Helper()
	var ve *vec.Error
	if !errors.Is(err, ErrInternal) || !errors.As(err, &ve) || ve.Code != vec.CodeUnknown {
		t.Fatalf("error %v (%T), want an internal error (1105)", err, err)
	}
	if want := "internal error in " + op + ": boom"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "goroutine") {
		t.Errorf("error carries a stack: %q", err)
	}
	if l := log.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "panics_test.go") {
		t.Errorf("log lacks the error and its stack:\n%s", l)
	}
}

// TestParallelWorkerPanic: a worker goroutine that panics fails the stream with an
// internal error; the other workers stop and the process goes on.
func TestParallelWorkerPanic(t *testing.T) {
	ctx, log := loggingContext()
	recs := lineitem.Generate(10_000, 1024, 1)
	p := StartParallel(ctx, 3, 0, func(ctx context.Context, w int, emit func(arrow.RecordBatch) error) error {
		if w == 1 {
			panic("boom")
		}
		for _, r := range recs {
			r.Retain()
			if err := emit(r); err != nil {
				return err
			}
		}
		return nil
	})
	defer p.Close()
	var err error
	for range 1000 {
		var rec arrow.RecordBatch
		if rec, err = p.Next(ctx); rec == nil || err != nil {
			break
		}
		rec.Release()
	}
	checkInternalError(t, err, "parallel worker", log)
}

// panicStream panics once it has handed out n records.
type panicStream struct {
	mu   sync.Mutex
	recs []arrow.RecordBatch
	n    int
}

func (s *panicStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == 0 {
		panic("boom")
	}
	s.n--
	r := s.recs[s.n%len(s.recs)]
	r.Retain()
	return r, nil
}

// TestFragmentWorkerPanic: a panic inside a fragment worker fails the fragment with a
// short error; its stack goes to the log only.
func TestFragmentWorkerPanic(t *testing.T) {
	ctx, log := loggingContext()
	recs := lineitem.Generate(4096, 1024, 2)
	p, err := validateAndBuild(q6Fragment(), &panicStream{recs: recs, n: 3}, nil, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for range 1000 {
		var rec arrow.RecordBatch
		if rec, err = p.Next(ctx); rec == nil || err != nil {
			break
		}
		rec.Release()
	}
	checkInternalError(t, err, "fragment worker", log)
}

// panicOp is an operator whose Next panics.
type panicOp struct{ types []vec.Type }

func (o panicOp) Types() []vec.Type                        { return o.types }
func (o panicOp) Init(context.Context) error               { return nil }
func (o panicOp) Close() error                             { return nil }
func (o panicOp) Next(context.Context) (*vec.Batch, error) { panic("boom") }

// TestParallelAggregateWorkerPanic: a panic in one of a parallel aggregate's workers (here
// its input, standing in for a faulty aggregate or expression) fails the query with an
// internal error instead of ending the process.
func TestParallelAggregateWorkerPanic(t *testing.T) {
	ctx, log := loggingContext()
	spec := AggSpec{GroupBy: []int{0}, Aggs: []Aggregate{{Func: AggSum, Col: 1}}}
	tab := groupsTable(20_000, 1000)
	op, err := NewParallelAggregate(tableSource(tab, 0, len(tab.Rows), 1024), spec, AggComplete, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := op.(*ParallelAggregate)
	a.minRows = 1    // deal out even this small input
	a.radixShare = 2 // to workers that aggregate as their input comes
	// Worker 1 aggregates an input that panics.
	if a.workers[1].agg, err = NewHashAggregate(panicOp{types: tab.Types}, spec, AggComplete, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Init(ctx); err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		var b *vec.Batch
		if b, err = a.Next(ctx); b == nil || err != nil {
			break
		}
	}
	checkInternalError(t, err, "parallel aggregate worker", log)
	if err := a.Close(); err != nil {
		t.Errorf("close after a panic: %v", err)
	}
}
