package exec

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/colinkdb/colink/exec/vec"
)

// flushInput is rows rows of (key, value, label) in batches of 1024: key(i) gives each
// row's group key, value is i%97 and NULL on every 11th row, label one of a few strings.
func flushInput(rows int, key func(i int) int64) *BatchSource {
	types := []vec.Type{vec.Int64Type, vec.Int64Type, vec.StringType}
	var batches []*vec.Batch
	for start := 0; start < rows; start += vec.DefaultBatchRows {
		n := min(vec.DefaultBatchRows, rows-start)
		k, v, s := vec.NewVec(types[0]), vec.NewVec(types[1]), vec.NewVec(types[2])
		for i := start; i < start+n; i++ {
			k.AppendDatum(vec.Int64Datum(key(i)))
			if i%11 == 0 {
				v.AppendDatum(vec.NullDatum(types[1]))
			} else {
				v.AppendDatum(vec.Int64Datum(int64(i % 97)))
			}
			s.AppendDatum(vec.StringDatum(fmt.Sprintf("label-%d", i%5)))
		}
		batches = append(batches, &vec.Batch{Cols: []*vec.Vec{k, v, s}, N: n})
	}
	return NewBatchSource(types, batches...)
}

// TestPartialAggregateFlushes checks that a partial aggregation over input clustered on
// its key turns to flushing (its table stops reducing), that one whose groups repeat does
// not, and that either way the merged partial states give the complete aggregation's rows,
// with every aggregate and a pool that scribbles over what it gets back.
func TestPartialAggregateFlushes(t *testing.T) {
	spec := AggSpec{GroupBy: []int{0}, Aggs: []Aggregate{
		{Func: AggSum, Col: 1}, {Func: AggCountStar}, {Func: AggCount, Col: 1},
		{Func: AggMin, Col: 1}, {Func: AggMax, Col: 2}, {Func: AggAvg, Col: 1}}}
	const rows = 400_000
	for _, c := range []struct {
		name    string
		key     func(i int) int64
		flushes bool
	}{
		// Runs of four equal keys, ascending: 100,000 groups, each lookup of a run a new one.
		{"clustered", func(i int) int64 { return int64(i / 4) }, true},
		// 30,000 groups dealt round the input: the table reduces, and keeps growing.
		{"repeating", func(i int) int64 { return int64(i*7919) % 30_000 }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			budget := NewBudgetPool(1<<30, vec.NewScribblingPool(0))
			want, err := Collect(ctx, mustAgg(t, flushInput(rows, c.key), spec, AggComplete, budget), nil)
			if err != nil {
				t.Fatal(err)
			}
			partial := mustAgg(t, flushInput(rows, c.key), spec, AggPartial, budget)
			states, err := Collect(ctx, partial, nil)
			if err != nil {
				t.Fatal(err)
			}
			if partial.flushing != c.flushes {
				t.Fatalf("flushing = %v, want %v", partial.flushing, c.flushes)
			}
			groups := len(want.Rows)
			if n := len(states.Rows); n < groups || n > groups+groups/8 {
				t.Fatalf("partial states: %d rows for %d groups (want at most an eighth more)", n, groups)
			}
			final := mustAgg(t, tableSource(states, 0, len(states.Rows), vec.DefaultBatchRows), spec, AggFinal, budget)
			got, err := Collect(ctx, final, nil)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := sortedRows(got.Rows), sortedRows(want.Rows); !slices.Equal(g, w) {
				t.Fatalf("merged partial states differ from the complete aggregation:\ngot  %v\nwant %v", head(g), head(w))
			}
		})
	}
}

func mustAgg(t *testing.T, in Operator, spec AggSpec, phase AggPhase, budget *Budget) *HashAggregate {
	t.Helper()
	a, err := NewHashAggregate(in, spec, phase, budget)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
