package physical

import (
	"fmt"
	"runtime"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/sql/plan"
)

// Gather runs a fragment on every primproc and yields the rows of all their streams, in
// arrival order.
type Gather struct {
	Frag  *Fragment
	types []vec.Type
}

// Filter keeps the rows for which Pred is TRUE.
type Filter struct {
	Input Node
	Pred  *expr.Expr
	desc  string
}

// Project computes Exprs over each row.
type Project struct {
	Input Node
	Exprs []*expr.Expr
	desc  string
	types []vec.Type
}

// Aggregate groups and aggregates: Phase complete over raw rows, final over the partial
// states of a fragment's partial aggregate.
type Aggregate struct {
	Input Node
	Spec  exec.AggSpec
	Phase exec.AggPhase
	desc  string
	types []vec.Type
}

// HashJoin joins in exemgr: the build input is hashed, the probe input streams (a UM join,
// or a join whose probe side is not produced on the primprocs).
type HashJoin struct {
	Probe, Build Node
	Spec         exec.JoinSpec
	desc         string
	types        []vec.Type
}

// MatchJoin finishes a semi, anti or left join that built its left side: Input carries
// the row numbers (column IDCol) of the build rows that found a match — for a left join,
// the matching pairs, build columns first — and MatchJoin emits the build rows that
// matched (semi), that did not (anti), or the pairs followed by the unmatched build rows
// with NULLs for the probe side's columns (left).
type MatchJoin struct {
	Input Node
	Build *Broadcast
	Kind  plan.JoinKind
	IDCol int
	desc  string
	types []vec.Type
}

// Sort orders the rows.
type Sort struct {
	Input Node
	Keys  []exec.SortKey
	desc  string
}

// TopN keeps rows [Offset, Offset+Limit) in Keys order.
type TopN struct {
	Input         Node
	Keys          []exec.SortKey
	Limit, Offset int64
	desc          string
}

// Limit keeps rows [Offset, Offset+Limit) (Limit < 0: all after Offset).
type Limit struct {
	Input         Node
	Limit, Offset int64
}

// Distinct removes duplicate rows.
type Distinct struct {
	Input Node
}

// Values produces constant rows.
type Values struct {
	Rows  [][]*expr.Expr
	types []vec.Type
	desc  string
}

// BroadcastScan reads a broadcast's records in exemgr (the build side of a UM match join).
type BroadcastScan struct {
	B *Broadcast
}

func (n *Gather) Types() []vec.Type        { return n.types }
func (n *Filter) Types() []vec.Type        { return n.Input.Types() }
func (n *Project) Types() []vec.Type       { return n.types }
func (n *Aggregate) Types() []vec.Type     { return n.types }
func (n *HashJoin) Types() []vec.Type      { return n.types }
func (n *MatchJoin) Types() []vec.Type     { return n.types }
func (n *Sort) Types() []vec.Type          { return n.Input.Types() }
func (n *TopN) Types() []vec.Type          { return n.Input.Types() }
func (n *Limit) Types() []vec.Type         { return n.Input.Types() }
func (n *Distinct) Types() []vec.Type      { return n.Input.Types() }
func (n *Values) Types() []vec.Type        { return n.types }
func (n *BroadcastScan) Types() []vec.Type { return n.B.types }

func (n *Gather) inputs() []Node        { return nil }
func (n *Filter) inputs() []Node        { return []Node{n.Input} }
func (n *Project) inputs() []Node       { return []Node{n.Input} }
func (n *Aggregate) inputs() []Node     { return []Node{n.Input} }
func (n *HashJoin) inputs() []Node      { return []Node{n.Probe, n.Build} }
func (n *MatchJoin) inputs() []Node     { return []Node{n.Input} }
func (n *Sort) inputs() []Node          { return []Node{n.Input} }
func (n *TopN) inputs() []Node          { return []Node{n.Input} }
func (n *Limit) inputs() []Node         { return []Node{n.Input} }
func (n *Distinct) inputs() []Node      { return []Node{n.Input} }
func (n *Values) inputs() []Node        { return nil }
func (n *BroadcastScan) inputs() []Node { return nil }

func (n *Gather) label() string {
	return fmt.Sprintf("Gather fragment %d from every primproc", n.Frag.ID)
}
func (n *Filter) label() string    { return "Filter " + n.desc }
func (n *Project) label() string   { return "Project " + n.desc }
func (n *Aggregate) label() string { return "Aggregate " + n.Phase.String() + " " + n.desc }
func (n *HashJoin) label() string  { return n.desc }
func (n *MatchJoin) label() string { return n.desc }
func (n *Sort) label() string      { return "Sort " + n.desc }
func (n *TopN) label() string {
	s := fmt.Sprintf("TopN %d by %s", n.Limit, n.desc)
	if n.Offset > 0 {
		s += fmt.Sprintf(" offset %d", n.Offset)
	}
	return s
}
func (n *Limit) label() string {
	switch {
	case n.Limit < 0:
		return fmt.Sprintf("Limit offset %d", n.Offset)
	case n.Offset > 0:
		return fmt.Sprintf("Limit %d offset %d", n.Limit, n.Offset)
	}
	return fmt.Sprintf("Limit %d", n.Limit)
}
func (n *Distinct) label() string      { return "Distinct" }
func (n *Values) label() string        { return "Values " + n.desc }
func (n *BroadcastScan) label() string { return fmt.Sprintf("Read broadcast %d", n.B.ID) }

func (n *Filter) open(r *run) (exec.Operator, error) {
	in, err := r.open(n.Input)
	if err != nil {
		return nil, err
	}
	return exec.NewFilter(in, n.Pred)
}

func (n *Project) open(r *run) (exec.Operator, error) {
	in, err := r.open(n.Input)
	if err != nil {
		return nil, err
	}
	return exec.NewProject(in, n.Exprs)
}

func (n *Aggregate) open(r *run) (exec.Operator, error) {
	in, err := r.open(n.Input)
	if err != nil {
		return nil, err
	}
	if n.Phase == exec.AggFinal || n.Phase == exec.AggComplete {
		// exemgr's aggregations run after the primprocs' parallel part: deal the groups
		// over a worker per core.
		return exec.NewParallelAggregate(in, n.Spec, n.Phase, runtime.GOMAXPROCS(0), r.budgetOf(n))
	}
	return exec.NewHashAggregate(in, n.Spec, n.Phase, r.budgetOf(n))
}

func (n *HashJoin) open(r *run) (exec.Operator, error) {
	probe, err := r.open(n.Probe)
	if err != nil {
		return nil, err
	}
	build, err := r.open(n.Build)
	if err != nil {
		probe.Close()
		return nil, err
	}
	return exec.NewHashJoin(probe, []exec.Operator{build}, n.Build.Types(), n.Spec, r.budgetOf(n))
}

func (n *Sort) open(r *run) (exec.Operator, error) {
	in, err := r.open(n.Input)
	if err != nil {
		return nil, err
	}
	return exec.NewSort(in, n.Keys, r.budgetOf(n))
}

func (n *TopN) open(r *run) (exec.Operator, error) {
	in, err := r.open(n.Input)
	if err != nil {
		return nil, err
	}
	return exec.NewTopN(in, n.Keys, n.Limit, n.Offset, r.budgetOf(n))
}

func (n *Limit) open(r *run) (exec.Operator, error) {
	in, err := r.open(n.Input)
	if err != nil {
		return nil, err
	}
	return exec.NewLimit(in, n.Limit, n.Offset)
}

func (n *Distinct) open(r *run) (exec.Operator, error) {
	in, err := r.open(n.Input)
	if err != nil {
		return nil, err
	}
	return exec.NewDistinct(in, r.budgetOf(n)), nil
}

func (n *Values) open(r *run) (exec.Operator, error) {
	var rows []exec.Operator
	for _, row := range n.Rows {
		one := &vec.Batch{N: 1}
		p, err := exec.NewProject(exec.NewBatchSource(nil, one), row)
		if err != nil {
			return nil, err
		}
		rows = append(rows, p)
	}
	if len(rows) == 1 {
		return rows[0], nil
	}
	if len(rows) == 0 {
		return exec.NewBatchSource(n.types), nil
	}
	return exec.NewConcat(rows...)
}
