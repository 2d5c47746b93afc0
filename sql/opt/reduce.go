package opt

import (
	"github.com/colinkdb/colink/sql/plan"
)

// ReduceGroupedJoins is a semi-join reduction (a "magic set") for the joins decorrelation
// makes out of correlated aggregate subqueries: when an inner join matches some of an
// Aggregate's group columns with columns of a much smaller other side, only the groups
// whose keys that side holds can reach the join's output. The aggregate's input is then
// first semi-joined with a copy of the other side on the same keys, so that it aggregates
// only those groups. Every surviving group keeps all its rows, so the aggregates' values
// do not change.
//
// Q17's and Q2's per-part subqueries then aggregate the few hundred parts the outer query
// selects instead of all of them, and Q20's the (part, supplier) pairs it needs; on the
// primprocs the reduction is a PM semi join probing a small broadcast.
//
// The copy is made only of scans, filters, projections and joins without subqueries (it
// gets new column IDs), and only when the other side is estimated at most half as many
// rows as the aggregate's groups.
type ReduceGroupedJoins struct{}

// Name implements Rule.
func (ReduceGroupedJoins) Name() string { return "reduce-grouped-joins" }

// Apply implements Rule.
func (ReduceGroupedJoins) Apply(c *Context, root plan.Node) (plan.Node, error) {
	r := &reducer{c: c, est: newEstimator(c, root)}
	r.walk(root)
	return root, nil
}

type reducer struct {
	c   *Context
	est *estimator
}

// reduceRatio is how many times fewer rows the other side must have than the aggregate
// has groups for the reduction to pay for computing that side twice.
const reduceRatio = 2

func (r *reducer) walk(n plan.Node) {
	for _, in := range n.Inputs() {
		r.walk(in)
	}
	j, ok := n.(*plan.Join)
	if !ok || j.Kind != plan.InnerJoin {
		return
	}
	if !r.reduce(j, j.Left, j.Right) {
		r.reduce(j, j.Right, j.Left)
	}
}

// reduce semi-joins the input of the Aggregate at (or under a HAVING filter at) side with
// a copy of other, if j's equalities match group columns of it with columns of other.
func (r *reducer) reduce(j *plan.Join, side, other plan.Node) bool {
	agg := groupedAggregate(side)
	if agg == nil || len(agg.Groups) == 0 {
		return false
	}
	groupOf := map[plan.ColumnID]int{}
	for i, id := range agg.GroupCols {
		groupOf[id] = i
	}
	otherCols := plan.OutputSet(other)
	type key struct {
		input plan.Expr     // the group's expression over the aggregate's input
		other plan.ColumnID // the other side's column it equals
	}
	var keys []key
	for _, c := range j.On {
		call, ok := c.(*plan.Call)
		if !ok || call.Fn != plan.FnEq {
			continue
		}
		a, aok := call.Args[0].(*plan.ColumnRef)
		b, bok := call.Args[1].(*plan.ColumnRef)
		if !aok || !bok {
			continue
		}
		if _, ok := groupOf[a.ID]; !ok {
			a, b = b, a
		}
		g, ok := groupOf[a.ID]
		if !ok || !otherCols.Has(b.ID) || !a.T.Equal(b.T) {
			continue
		}
		in, ok := agg.Groups[g].(*plan.ColumnRef)
		if !ok || !in.T.Equal(a.T) {
			continue
		}
		keys = append(keys, key{input: in, other: b.ID})
	}
	if len(keys) == 0 {
		return false
	}
	if r.est.rows(other)*reduceRatio > r.est.rows(agg) {
		return false
	}
	cl := &cloner{md: r.c.MD, ids: map[plan.ColumnID]plan.ColumnID{}}
	cp, ok := cl.node(other)
	if !ok {
		return false
	}
	semi := &plan.Join{Kind: plan.SemiJoin, Left: agg.Input, Right: cp}
	for _, k := range keys {
		semi.On = append(semi.On, plan.NewBool(plan.FnEq, k.input, r.c.MD.Ref(cl.ids[k.other])))
	}
	agg.Input = semi
	return true
}

// groupedAggregate returns the Aggregate that n is, or that is under n's filters (HAVING)
// and projections (a derived table's select list). A projection passes a group column
// through under its own ID, so the join's keys still name the group columns.
func groupedAggregate(n plan.Node) *plan.Aggregate {
	for {
		switch x := n.(type) {
		case *plan.Filter:
			n = x.Input
		case *plan.Project:
			n = x.Input
		case *plan.Aggregate:
			return x
		default:
			return nil
		}
	}
}

// cloner copies a subplan with new column IDs.
type cloner struct {
	md  *plan.Metadata
	ids map[plan.ColumnID]plan.ColumnID // old → new
}

func (c *cloner) col(id plan.ColumnID) plan.ColumnID {
	if n, ok := c.ids[id]; ok {
		return n
	}
	n := c.md.Add(*c.md.Column(id))
	c.ids[id] = n
	return n
}

func (c *cloner) cols(ids []plan.ColumnID) []plan.ColumnID {
	out := make([]plan.ColumnID, len(ids))
	for i, id := range ids {
		out[i] = c.col(id)
	}
	return out
}

// expr copies e over the new IDs; false if it holds a subquery (or an aggregate).
func (c *cloner) expr(e plan.Expr) (plan.Expr, bool) {
	if plan.HasSubquery(e) || plan.HasAgg(e) {
		return nil, false
	}
	return plan.RewriteExpr(e, func(x plan.Expr) (plan.Expr, bool) {
		if r, ok := x.(*plan.ColumnRef); ok {
			return &plan.ColumnRef{ID: c.col(r.ID), T: r.T}, true
		}
		return x, false
	}), true
}

func (c *cloner) exprs(es []plan.Expr) ([]plan.Expr, bool) {
	out := make([]plan.Expr, len(es))
	for i, e := range es {
		x, ok := c.expr(e)
		if !ok {
			return nil, false
		}
		out[i] = x
	}
	return out, true
}

// node copies n if it is made only of scans, filters, projections and inner, left, semi
// and anti joins.
func (c *cloner) node(n plan.Node) (plan.Node, bool) {
	switch x := n.(type) {
	case *plan.Scan:
		filters, ok := c.exprs(x.Filters)
		if !ok {
			return nil, false
		}
		return &plan.Scan{DB: x.DB, Table: x.Table, Alias: x.Alias, Cols: c.cols(x.Cols),
			Ordinals: append([]int(nil), x.Ordinals...), Filters: filters}, true
	case *plan.Filter:
		in, ok := c.node(x.Input)
		if !ok {
			return nil, false
		}
		conds, ok := c.exprs(x.Conds)
		if !ok {
			return nil, false
		}
		return &plan.Filter{Input: in, Conds: conds}, true
	case *plan.Project:
		in, ok := c.node(x.Input)
		if !ok {
			return nil, false
		}
		exprs, ok := c.exprs(x.Exprs)
		if !ok {
			return nil, false
		}
		return &plan.Project{Input: in, Exprs: exprs, Cols: c.cols(x.Cols)}, true
	case *plan.Join:
		switch x.Kind {
		case plan.InnerJoin, plan.LeftJoin, plan.SemiJoin, plan.AntiJoin:
		default:
			return nil, false
		}
		l, ok := c.node(x.Left)
		if !ok {
			return nil, false
		}
		r, ok := c.node(x.Right)
		if !ok {
			return nil, false
		}
		on, ok := c.exprs(x.On)
		if !ok {
			return nil, false
		}
		return &plan.Join{Kind: x.Kind, Left: l, Right: r, On: on}, true
	}
	return nil, false
}
