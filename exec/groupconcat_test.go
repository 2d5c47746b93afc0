package exec

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/colinkdb/colink/exec/vec"
)

// TestGroupConcat checks GROUP_CONCAT in a complete aggregation: values in arrival order,
// the separator between them, NULLs skipped, a group of NULLs only NULL, DISTINCT, the cut
// at MaxLen on a character boundary, the same over a ParallelAggregate's workers, and the
// refusal of the phases it has no state for.
func TestGroupConcat(t *testing.T) {
	ctx := context.Background()
	types := []vec.Type{vec.Int64Type, vec.StringType}
	k, s := vec.NewVec(types[0]), vec.NewVec(types[1])
	for _, r := range []struct {
		k    int64
		s    string
		null bool
	}{{1, "a", false}, {2, "x", false}, {1, "b", false}, {3, "", true}, {1, "a", false}, {2, "", true},
		{2, "héllo", false}, {1, "c", false}} {
		k.AppendDatum(vec.Int64Datum(r.k))
		if r.null {
			s.AppendDatum(vec.NullDatum(types[1]))
		} else {
			s.AppendDatum(vec.StringDatum(r.s))
		}
	}
	in := func() Operator {
		return NewBatchSource(types, &vec.Batch{Cols: []*vec.Vec{k, s}, N: k.Len()})
	}
	run := func(t *testing.T, ag Aggregate, workers int) []string {
		t.Helper()
		op, err := NewParallelAggregate(in(), AggSpec{GroupBy: []int{0}, Aggs: []Aggregate{ag}}, AggComplete, workers, nil)
		if err != nil {
			t.Fatal(err)
		}
		if pa, ok := op.(*ParallelAggregate); ok {
			pa.minRows = 0 // deal even this small input out
		}
		got, err := Collect(ctx, op, nil)
		if err != nil {
			t.Fatal(err)
		}
		return sortedRows(got.Rows)
	}
	for _, c := range []struct {
		name string
		ag   Aggregate
		want []string
	}{
		{"in order", Aggregate{Func: AggGroupConcat, Col: 1, Sep: ","}, []string{"1|a,b,a,c", "2|x,héllo", "3|NULL"}},
		{"separator", Aggregate{Func: AggGroupConcat, Col: 1, Sep: " / "}, []string{"1|a / b / a / c", "2|x / héllo", "3|NULL"}},
		{"distinct", Aggregate{Func: AggGroupConcat, Col: 1, Sep: "", Distinct: true}, []string{"1|abc", "2|xhéllo", "3|NULL"}},
		// "x,h" is 3 bytes; "x,hé" would be 5: the cut at 4 falls inside é and backs off.
		{"cut", Aggregate{Func: AggGroupConcat, Col: 1, Sep: ",", MaxLen: 4}, []string{"1|a,b,", "2|x,h", "3|NULL"}},
	} {
		for _, workers := range []int{1, 2} {
			if got := run(t, c.ag, workers); !slices.Equal(got, c.want) {
				t.Errorf("%s, %d workers: got %v, want %v", c.name, workers, got, c.want)
			}
		}
	}
	for _, phase := range []AggPhase{AggPartial, AggMerge, AggFinal} {
		_, err := NewHashAggregate(in(), AggSpec{GroupBy: []int{0}, Aggs: []Aggregate{{Func: AggGroupConcat, Col: 1}}}, phase, nil)
		if err == nil || !strings.Contains(err.Error(), "complete phase") {
			t.Errorf("%s phase: %v, want an error naming the complete phase", phase, err)
		}
	}
}
