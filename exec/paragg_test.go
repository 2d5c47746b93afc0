package exec

import (
	"context"
	"errors"
	"testing"

	"github.com/colinkdb/colink/exec/vec"
)

// groupsTable is n rows of (k, v) with k = i % groups.
func groupsTable(n, groups int) *vec.Table {
	tab := &vec.Table{Names: []string{"k", "v"}, Types: []vec.Type{vec.Int64Type, vec.Int64Type}}
	for i := range n {
		tab.Rows = append(tab.Rows, []vec.Datum{vec.Int64Datum(int64(i % groups)), vec.Int64Datum(int64(i))})
	}
	return tab
}

// TestParallelAggregateErrors: a worker over the memory budget fails the query with
// ErrMemoryLimit; closing before the output is read, or after a cancellation, returns
// without waiting forever.
func TestParallelAggregateErrors(t *testing.T) {
	spec := AggSpec{GroupBy: []int{0}, Aggs: []Aggregate{{Func: AggSum, Col: 1}}}
	tab := groupsTable(200_000, 50_000)

	a, err := NewParallelAggregate(tableSource(tab, 0, len(tab.Rows), 1024), spec, AggComplete, 2, NewBudget(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got error
	for {
		b, err := a.Next(context.Background())
		if err != nil || b == nil {
			got = err
			break
		}
	}
	if !errors.Is(got, ErrMemoryLimit) {
		t.Errorf("over the budget: %v, want %v", got, ErrMemoryLimit)
	}
	if err := a.Close(); err != nil {
		t.Errorf("close after a failure: %v", err)
	}

	// Early close: one batch read of 50k groups.
	a, err = NewParallelAggregate(tableSource(tab, 0, len(tab.Rows), 1024), spec, AggComplete, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, err := a.Next(context.Background()); err != nil || b == nil {
		t.Fatalf("first batch: %v, %v", b, err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("early close: %v", err)
	}

	// Cancelled while dealing.
	ctx, cancel := context.WithCancel(context.Background())
	a, err = NewParallelAggregate(&cancelAfter{Operator: tableSource(tab, 0, len(tab.Rows), 1024), n: 20, cancel: cancel}, spec, AggComplete, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	a.Close()
}

// cancelAfter cancels its context after n batches.
type cancelAfter struct {
	Operator
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Next(ctx context.Context) (*vec.Batch, error) {
	if c.n--; c.n == 0 {
		c.cancel()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.Operator.Next(ctx)
}
