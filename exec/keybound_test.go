package exec

import (
	"testing"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
)

// TestKeyBoundApplies checks which fragments get a top-N bound and on which scan column:
// the first key followed back through filters, a join's probe columns and projections
// that pass it on, of an integer-class type.
func TestKeyBoundApplies(t *testing.T) {
	scan := Scan{Table: "t", Columns: []string{"k", "d", "s", "f"},
		Types: []vec.Type{vec.Int64Type, vec.DateType, vec.StringType, vec.Float64Type}}
	topn := func(col int, desc bool) Step {
		return Step{TopN: &TopNStep{Keys: []SortKey{{Col: col, Desc: desc}}, Limit: 10}}
	}
	filter := Step{Filter: expr.Call(expr.OpGt, expr.ColRef(0), expr.Const(vec.Int64Datum(5)))}
	join := Step{Join: &JoinStep{Build: 0, Spec: JoinSpec{Kind: JoinInner, ProbeKeys: []int{0}, BuildKeys: []int{0}}}}
	builds := []BuildSide{{Types: []vec.Type{vec.Int64Type, vec.Int32Type}}}
	cases := []struct {
		name  string
		steps []Step
		col   int // -1: no bound
	}{
		{"the scan's first column", []Step{topn(0, false)}, 0},
		{"a date, descending", []Step{topn(1, true)}, 1},
		{"a string", []Step{topn(2, false)}, -1},
		{"a double", []Step{topn(3, false)}, -1},
		{"through a filter", []Step{filter, topn(1, false)}, 1},
		{"through a join, a probe column", []Step{join, topn(1, false)}, 1},
		{"through a join, a build column", []Step{join, topn(5, false)}, -1},
		{"a projection passing it on", []Step{{Project: []*expr.Expr{expr.ColRef(2), expr.ColRef(1)}}, topn(1, false)}, 1},
		{"a computed key", []Step{{Project: []*expr.Expr{expr.Call(expr.OpAdd, expr.ColRef(0), expr.Const(vec.Int64Datum(1)))}}, topn(0, false)}, -1},
		{"after an aggregate", []Step{{Aggregate: &AggStep{Spec: AggSpec{GroupBy: []int{0}}}}, topn(0, false)}, -1},
		{"a limit", []Step{{Limit: &LimitStep{Limit: 3}}}, -1},
	}
	for _, c := range cases {
		f := &Fragment{Scan: scan, Steps: c.steps, Builds: builds}
		split := -1
		for i := range f.Steps {
			if f.Steps[i].blocking() {
				split = i
				break
			}
		}
		b := newKeyBound(f, split)
		switch {
		case c.col < 0 && b != nil:
			t.Errorf("%s: a bound on column %d", c.name, b.Col())
		case c.col >= 0 && b == nil:
			t.Errorf("%s: no bound", c.name)
		case c.col >= 0 && b.Col() != c.col:
			t.Errorf("%s: bound on column %d, want %d", c.name, b.Col(), c.col)
		}
	}
}

// TestKeyBoundExcludes checks the skipping rule: nothing before a cutoff, the tightest
// cutoff offered, strict comparisons (a group that may tie is read), and NULLs, which sort
// first ascending.
func TestKeyBoundExcludes(t *testing.T) {
	var none *KeyBound
	if none.Excludes(1, 2, false) {
		t.Error("a nil bound excludes")
	}
	asc := &KeyBound{}
	if asc.Excludes(100, 200, false) {
		t.Error("excludes before any cutoff")
	}
	asc.offer(50)
	asc.offer(70) // looser: ignored
	asc.offer(40)
	for _, c := range []struct {
		lo, hi  int64
		mayNull bool
		want    bool
	}{{41, 90, false, true}, {40, 90, false, false}, {10, 30, false, false}, {41, 90, true, false}} {
		if got := asc.Excludes(c.lo, c.hi, c.mayNull); got != c.want {
			t.Errorf("ascending, cutoff 40: [%d, %d] nulls %v: %v, want %v", c.lo, c.hi, c.mayNull, got, c.want)
		}
	}
	desc := &KeyBound{desc: true}
	desc.offer(50)
	desc.offer(30) // looser: ignored
	desc.offer(60)
	for _, c := range []struct {
		lo, hi  int64
		mayNull bool
		want    bool
	}{{1, 59, false, true}, {1, 59, true, true}, {1, 60, false, false}, {70, 90, false, false}} {
		if got := desc.Excludes(c.lo, c.hi, c.mayNull); got != c.want {
			t.Errorf("descending, cutoff 60: [%d, %d] nulls %v: %v, want %v", c.lo, c.hi, c.mayNull, got, c.want)
		}
	}
}
