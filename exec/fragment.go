package exec

import (
	"fmt"
	"strings"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
)

// Fragment is the serializable (msgpack) description of the work a primproc runs next to
// the data: a scan, then Steps in order over the scan's columns. Build sides of hash joins
// arrive with the fragment as Arrow record batches, named by their index in Builds.
//
// Every step sees the previous step's output columns (the scan's, at first):
//
//	Filter     keeps rows where the predicate is TRUE
//	Project    replaces the columns by the expressions' values
//	Join       probes build side Join.Build (a hash join; not right_outer); the output is
//	           the JoinSpec's layout (probe ++ build, probe only, or probe ++ mark)
//	Aggregate  groups and aggregates; the output is the partial layout (AggSpec.PartialTypes)
//	           unless Final is set (final values: use only when every group is complete in
//	           this fragment's data)
//	TopN       rows [Offset, Offset+Limit) in Keys order (as a partial top-N give Offset 0
//	           and Limit = limit+offset; exemgr applies the offset)
//	Limit      rows [Offset, Offset+Limit) in stream order (likewise partial)
//
// The first Aggregate, TopN or Limit runs on every worker and is then combined across
// workers (merge phase; final top-N; final limit); later steps run on the combined stream.
// An aggregate over DISTINCT values runs, with everything after it, on the combined stream.
// A partial (not Final) Aggregate that is the last step is not combined: its output may
// hold one partial row per group per worker, which the final phase merges like any other.
type Fragment struct {
	Scan   Scan        `msgpack:"scan"`
	Builds []BuildSide `msgpack:"builds,omitempty"`
	Steps  []Step      `msgpack:"steps"`
	// Names optionally names the output columns (c0, c1, ... otherwise).
	Names []string `msgpack:"names,omitempty"`
	// StepStats asks for each step's counters in Stats.Steps (EXPLAIN ANALYZE). Off, the
	// steps run unwrapped.
	StepStats bool `msgpack:"step_stats,omitempty"`
}

// Scan describes what primproc reads: a table's columns, and predicates on them that can
// eliminate row groups by their min/max statistics (the rows still pass the Filter steps;
// zone predicates only save reading).
type Scan struct {
	Table   string          `msgpack:"table"`
	Columns []string        `msgpack:"columns"`
	Types   []vec.Type      `msgpack:"types"`
	Zone    []ZonePredicate `msgpack:"zone,omitempty"`
}

// ZonePredicate is "column Col (an index into Scan.Columns) Op Value", Op one of
// = < <= > >=.
type ZonePredicate struct {
	Col   int       `msgpack:"col"`
	Op    expr.Op   `msgpack:"op"`
	Value vec.Datum `msgpack:"value"`
}

// BuildSide declares the column types of a join build side shipped with the fragment.
type BuildSide struct {
	Types []vec.Type `msgpack:"types"`
}

// Step is one operation; exactly one field is set.
type Step struct {
	Filter *expr.Expr `msgpack:"filter,omitempty"`
	// Project is not omitted when empty: a projection to no columns (what COUNT(*) needs)
	// is a step, and must survive the trip to the primprocs.
	Project   []*expr.Expr `msgpack:"project"`
	Join      *JoinStep    `msgpack:"join,omitempty"`
	Aggregate *AggStep     `msgpack:"aggregate,omitempty"`
	TopN      *TopNStep    `msgpack:"topn,omitempty"`
	Limit     *LimitStep   `msgpack:"limit,omitempty"`
}

// JoinStep probes build side Build.
type JoinStep struct {
	Build int      `msgpack:"build"`
	Spec  JoinSpec `msgpack:"spec"`
}

// AggStep aggregates; see Fragment.
type AggStep struct {
	Spec  AggSpec `msgpack:"spec"`
	Final bool    `msgpack:"final,omitempty"`
}

// TopNStep keeps the first rows in an order.
type TopNStep struct {
	Keys   []SortKey `msgpack:"keys"`
	Limit  int64     `msgpack:"limit"`
	Offset int64     `msgpack:"offset,omitempty"`
}

// LimitStep keeps rows [Offset, Offset+Limit).
type LimitStep struct {
	Limit  int64 `msgpack:"limit"`
	Offset int64 `msgpack:"offset,omitempty"`
}

func (s *Step) kind() string {
	var kinds []string
	if s.Filter != nil {
		kinds = append(kinds, "filter")
	}
	if s.Project != nil {
		kinds = append(kinds, "project")
	}
	if s.Join != nil {
		kinds = append(kinds, "join")
	}
	if s.Aggregate != nil {
		kinds = append(kinds, "aggregate")
	}
	if s.TopN != nil {
		kinds = append(kinds, "topn")
	}
	if s.Limit != nil {
		kinds = append(kinds, "limit")
	}
	if len(kinds) != 1 {
		return "invalid: " + strings.Join(kinds, "+")
	}
	return kinds[0]
}

// blocking reports whether the step must see all rows: it runs per worker, then again
// over the workers' combined output.
func (s *Step) blocking() bool { return s.Aggregate != nil || s.TopN != nil || s.Limit != nil }

// Valid is a fragment Validate has checked, with its output column types: what
// BuildPipeline runs. A fragment is validated once, at the door of the process that runs
// it (primproc's fragment method, or an in-process runner); the planner that builds
// fragments types them step by step (Step.OutputTypes) instead.
type Valid struct {
	*Fragment
	Types []vec.Type
}

// Validate checks the fragment: types flow through the steps, every column index exists,
// every expression type-checks.
func (f *Fragment) Validate() (*Valid, error) {
	t, err := f.validate()
	if err != nil {
		return nil, err
	}
	return &Valid{Fragment: f, Types: t}, nil
}

func (f *Fragment) validate() ([]vec.Type, error) {
	sc := &f.Scan
	if sc.Table == "" {
		return nil, fmt.Errorf("fragment: scan names no table")
	}
	if len(sc.Columns) != len(sc.Types) {
		return nil, fmt.Errorf("fragment: scan of %s lists %d columns and %d types", sc.Table, len(sc.Columns), len(sc.Types))
	}
	if len(sc.Columns) == 0 {
		return nil, fmt.Errorf("fragment: scan of %s reads no columns", sc.Table)
	}
	for i, t := range sc.Types {
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("fragment: scan column %d (%s): %w", i, sc.Columns[i], err)
		}
	}
	for i, z := range sc.Zone {
		if err := z.validate(sc.Types); err != nil {
			return nil, fmt.Errorf("fragment: zone predicate %d: %w", i, err)
		}
	}
	for i, b := range f.Builds {
		if len(b.Types) == 0 {
			return nil, fmt.Errorf("fragment: build side %d has no columns", i)
		}
		for c, t := range b.Types {
			if err := t.Validate(); err != nil {
				return nil, fmt.Errorf("fragment: build side %d column %d: %w", i, c, err)
			}
		}
	}
	cur := sc.Types
	for i := range f.Steps {
		s := &f.Steps[i]
		next, err := s.OutputTypes(cur, f.Builds)
		if err != nil {
			return nil, fmt.Errorf("fragment step %d (%s): %w", i, s.kind(), err)
		}
		cur = next
	}
	if f.Names != nil && len(f.Names) != len(cur) {
		return nil, fmt.Errorf("fragment: %d output names for %d columns", len(f.Names), len(cur))
	}
	return cur, nil
}

// OutputTypes is the step's output column types over input columns of types in, with the
// fragment's build sides builds; an error says why the step does not fit them.
func (s *Step) OutputTypes(in []vec.Type, builds []BuildSide) ([]vec.Type, error) {
	switch k := s.kind(); k {
	case "filter":
		t, err := expr.TypeOf(s.Filter, in)
		if err != nil {
			return nil, err
		}
		if t.ID != vec.Bool {
			return nil, fmt.Errorf("predicate is %s, not bool", t)
		}
		return in, nil
	case "project":
		out := make([]vec.Type, len(s.Project))
		for i, e := range s.Project {
			t, err := expr.TypeOf(e, in)
			if err != nil {
				return nil, fmt.Errorf("column %d: %w", i, err)
			}
			out[i] = t
		}
		return out, nil
	case "join":
		j := s.Join
		if j.Build < 0 || j.Build >= len(builds) {
			return nil, fmt.Errorf("build side %d does not exist (the fragment has %d)", j.Build, len(builds))
		}
		if j.Spec.Kind == JoinRightOuter {
			return nil, fmt.Errorf("right_outer needs a single prober; run it in exemgr")
		}
		bt := builds[j.Build].Types
		if err := j.Spec.Validate(in, bt); err != nil {
			return nil, err
		}
		return j.Spec.OutputTypes(in, bt), nil
	case "aggregate":
		if s.Aggregate.Final {
			return s.Aggregate.Spec.ResultTypes(in)
		}
		for i, a := range s.Aggregate.Spec.Aggs {
			if a.Distinct {
				return nil, fmt.Errorf("aggregate %d: %s(DISTINCT) has no partial state; set Final", i, a.Func)
			}
		}
		return s.Aggregate.Spec.PartialTypes(in)
	case "topn":
		if s.TopN.Limit < 0 || s.TopN.Offset < 0 {
			return nil, fmt.Errorf("negative limit %d or offset %d", s.TopN.Limit, s.TopN.Offset)
		}
		if _, err := newRowOrder(s.TopN.Keys, in); err != nil {
			return nil, err
		}
		return in, nil
	case "limit":
		if s.Limit.Offset < 0 {
			return nil, fmt.Errorf("negative offset %d", s.Limit.Offset)
		}
		return in, nil
	default:
		return nil, fmt.Errorf("a step must set exactly one operation (%s)", k)
	}
}

func (z ZonePredicate) validate(types []vec.Type) error {
	if z.Col < 0 || z.Col >= len(types) {
		return fmt.Errorf("column #%d does not exist (the scan has %d columns)", z.Col, len(types))
	}
	switch z.Op {
	case expr.OpEq, expr.OpLt, expr.OpLe, expr.OpGt, expr.OpGe:
	default:
		return fmt.Errorf("operator %q is not = < <= > >=", z.Op)
	}
	if err := z.Value.Validate(); err != nil {
		return err
	}
	if z.Value.Null {
		return fmt.Errorf("NULL bound")
	}
	probe := z.Value
	ct := types[z.Col]
	ok := (ct.IsNumeric() && probe.Type.IsNumeric()) || ct.ID == probe.Type.ID
	if !ok {
		return fmt.Errorf("compares column #%d (%s) with %s", z.Col, ct, probe.Type)
	}
	return nil
}

// MayMatch reports whether a row group whose column holds values in [min, max] may hold a
// row satisfying the predicate. Unknown statistics (NULL bounds, incomparable types) give
// true.
func (z ZonePredicate) MayMatch(min, max vec.Datum) bool {
	if min.Null || max.Null {
		return true
	}
	cmin, err1 := vec.CompareDatums(z.Value, min) // value vs min
	cmax, err2 := vec.CompareDatums(z.Value, max) // value vs max
	if err1 != nil || err2 != nil {
		return true
	}
	switch z.Op {
	case expr.OpEq:
		return cmin >= 0 && cmax <= 0
	case expr.OpLt: // col < v: some value below v iff min < v
		return cmin > 0
	case expr.OpLe:
		return cmin >= 0
	case expr.OpGt: // col > v iff max > v
		return cmax < 0
	case expr.OpGe:
		return cmax <= 0
	}
	return true
}

// MayMatch reports whether a row group may hold rows passing every zone predicate;
// stats returns a column's min and max (ok=false: unknown).
func (s *Scan) MayMatch(stats func(col int) (min, max vec.Datum, ok bool)) bool {
	for _, z := range s.Zone {
		lo, hi, ok := stats(z.Col)
		if ok && !z.MayMatch(lo, hi) {
			return false
		}
	}
	return true
}

// String prints the fragment, one step per line (for EXPLAIN and logs).
func (f *Fragment) String() string {
	var sb strings.Builder
	sc := &f.Scan
	fmt.Fprintf(&sb, "scan %s", sc.Table)
	for i, c := range sc.Columns {
		fmt.Fprintf(&sb, " #%d=%s:%s", i, c, sc.Types[i])
	}
	for _, z := range sc.Zone {
		fmt.Fprintf(&sb, " zone(#%d %s %s)", z.Col, z.Op, expr.FormatLiteral(z.Value))
	}
	sb.WriteByte('\n')
	for i := range f.Steps {
		s := &f.Steps[i]
		switch s.kind() {
		case "filter":
			fmt.Fprintf(&sb, "filter %s\n", s.Filter)
		case "project":
			sb.WriteString("project")
			for _, e := range s.Project {
				sb.WriteString(" " + e.String())
			}
			sb.WriteByte('\n')
		case "join":
			j := s.Join
			fmt.Fprintf(&sb, "join %s build=%d probe=%v keys=%v", j.Spec.Kind, j.Build, j.Spec.ProbeKeys, j.Spec.BuildKeys)
			if j.Spec.Residual != nil {
				fmt.Fprintf(&sb, " residual=%s", j.Spec.Residual)
			}
			sb.WriteByte('\n')
		case "aggregate":
			a := s.Aggregate
			phase := "partial"
			if a.Final {
				phase = "final"
			}
			fmt.Fprintf(&sb, "aggregate %s group=%v", phase, a.Spec.GroupBy)
			for _, ag := range a.Spec.Aggs {
				d := ""
				if ag.Distinct {
					d = "distinct "
				}
				if ag.Func == AggCountStar {
					fmt.Fprintf(&sb, " count(*)")
				} else {
					fmt.Fprintf(&sb, " %s(%s#%d)", ag.Func, d, ag.Col)
				}
			}
			sb.WriteByte('\n')
		case "topn":
			fmt.Fprintf(&sb, "topn %v limit=%d offset=%d\n", s.TopN.Keys, s.TopN.Limit, s.TopN.Offset)
		case "limit":
			fmt.Fprintf(&sb, "limit %d offset=%d\n", s.Limit.Limit, s.Limit.Offset)
		default:
			fmt.Fprintf(&sb, "%s\n", s.kind())
		}
	}
	return sb.String()
}
