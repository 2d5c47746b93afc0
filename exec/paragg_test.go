package exec

import (
	"context"
	"errors"
	"strings"
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

// TestRadixAggregate: a parallel aggregation of partial states whose first rows are
// mostly distinct keys chooses workers that aggregate by partitions (manyGroups), one
// whose keys repeat keeps streaming workers, as does one of raw rows, and each gives every
// group once with exact sums, at 2 and 3 workers; over its budget the partitioned one
// fails with ErrMemoryLimit and leaves nothing charged.
func TestRadixAggregate(t *testing.T) {
	spec := AggSpec{GroupBy: []int{0}, Aggs: []Aggregate{{Func: AggSum, Col: 1}, {Func: AggCountStar}}}
	// input is tab's rows (AggComplete), or the partial states of its two halves, each
	// aggregated on its own (AggFinal).
	input := func(tab *vec.Table, phase AggPhase) Operator {
		if phase == AggComplete {
			return tableSource(tab, 0, len(tab.Rows), 1024)
		}
		var halves []Operator
		for h := range 2 {
			n := len(tab.Rows) / 2
			p, err := NewHashAggregate(tableSource(tab, h*n, (h+1)*n, 1024), spec, AggPartial, nil)
			if err != nil {
				t.Fatal(err)
			}
			halves = append(halves, p)
		}
		cat, err := NewConcat(halves...)
		if err != nil {
			t.Fatal(err)
		}
		return cat
	}
	for _, c := range []struct {
		rows, groups int
		phase        AggPhase
		radix        bool
	}{{300_000, 200_000, AggFinal, true}, {300_000, 200_000, AggComplete, false}, {300_000, 20_000, AggComplete, false}} {
		tab := groupsTable(c.rows, c.groups)
		for _, workers := range []int{2, 3} {
			op, err := NewParallelAggregate(input(tab, c.phase), spec, c.phase, workers, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Collect(context.Background(), op, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r := op.(*ParallelAggregate).radix; r != c.radix {
				t.Errorf("%d groups in %d rows, %v: radix %v, want %v", c.groups, c.rows, c.phase, r, c.radix)
			}
			if err := op.Close(); err != nil {
				t.Fatal(err)
			}
			if len(got.Rows) != c.groups {
				t.Fatalf("%d workers: %d groups, want %d", workers, len(got.Rows), c.groups)
			}
			seen := make([]bool, c.groups)
			for _, r := range got.Rows {
				k := r[0].Int
				if seen[k] {
					t.Fatalf("%d workers: group %d twice", workers, k)
				}
				seen[k] = true
				// Rows k, k+groups, k+2·groups, … have values equal to their index.
				var sum, n int64
				for i := k; i < int64(c.rows); i += int64(c.groups) {
					sum, n = sum+i, n+1
				}
				if r[1].Int != sum || r[2].Int != n {
					t.Fatalf("%d workers: group %d: sum %d count %d, want %d %d", workers, k, r[1].Int, r[2].Int, sum, n)
				}
			}
		}
	}

	budget := NewBudget(8 << 20) // the head's copy fits, the partitions do not
	op, err := NewParallelAggregate(input(groupsTable(300_000, 200_000), AggFinal), spec, AggFinal, 2, budget)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Collect(context.Background(), op, nil); !errors.Is(err, ErrMemoryLimit) || !op.(*ParallelAggregate).radix ||
		!strings.Contains(err.Error(), "aggregate partitions") {
		t.Errorf("over the budget: %v, want %v from partitions", err, ErrMemoryLimit)
	}
	op.Close()
	if budget.Used() != 0 {
		t.Errorf("%d bytes still charged", budget.Used())
	}
}
