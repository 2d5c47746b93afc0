package opt

import (
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// Decorrelate turns every subquery expression into a join, innermost first:
//
//   - EXISTS / NOT EXISTS as a WHERE conjunct: a semi / anti join whose condition is the
//     subquery's correlated predicates;
//   - IN as a conjunct: a semi join on probe = column; NOT IN: an anti join when neither
//     side can be NULL, else a mark join (NULL-aware) and a filter on NOT mark;
//   - EXISTS and IN elsewhere (under OR, in the select list): a mark join;
//   - an uncorrelated scalar subquery: a join with its single row (an inner join when the
//     subquery is an aggregate without GROUP BY, which always has one row, else a single
//     join that fails on a second row);
//   - a correlated scalar subquery over an aggregate: a left join with the aggregate
//     grouped by the correlated columns, the correlation equalities as join condition
//     (COUNT becomes COALESCE(count, 0)); predicate pushdown later makes it an inner join
//     where the comparison rejects NULLs;
//   - another correlated scalar subquery: a single join on its correlated predicates.
//
// Correlated predicates are pulled up through filters, projections and inner joins; a
// subquery correlated anywhere else is reported as unsupported.
type Decorrelate struct{}

// Name implements Rule.
func (Decorrelate) Name() string { return "decorrelate" }

// Apply implements Rule.
func (Decorrelate) Apply(c *Context, root plan.Node) (plan.Node, error) {
	d := &decorrelator{c: c}
	return d.node(root)
}

type decorrelator struct {
	c *Context
}

func unsupportedCorrelation() error {
	return sqlerr.Unsupported("a correlated subquery whose correlation is not in its WHERE clause")
}

func (d *decorrelator) node(n plan.Node) (plan.Node, error) {
	for i, in := range n.Inputs() {
		nn, err := d.node(in)
		if err != nil {
			return nil, err
		}
		n.SetInput(i, nn)
	}
	switch x := n.(type) {
	case *plan.Filter:
		return d.filter(x)
	case *plan.Project:
		return d.project(x)
	}
	for _, e := range plan.NodeExprs(n) {
		if plan.HasSubquery(e) {
			return nil, sqlerr.Unsupported("a subquery in a join condition, GROUP BY or aggregate argument")
		}
	}
	return n, nil
}

func (d *decorrelator) filter(f *plan.Filter) (plan.Node, error) {
	input := f.Input
	var rest []plan.Expr
	for _, c := range f.Conds {
		if !plan.HasSubquery(c) {
			rest = append(rest, c)
			continue
		}
		if sq, ok := c.(*plan.Subquery); ok && sq.Kind != plan.SubqueryScalar {
			in, extra, err := d.conjunct(input, sq)
			if err != nil {
				return nil, err
			}
			input = in
			rest = append(rest, extra...)
			continue
		}
		e, in, err := d.replace(c, input)
		if err != nil {
			return nil, err
		}
		input = in
		rest = append(rest, e)
	}
	if len(rest) == 0 {
		return input, nil
	}
	f.Input, f.Conds = input, rest
	return f, nil
}

func (d *decorrelator) project(p *plan.Project) (plan.Node, error) {
	for i, e := range p.Exprs {
		if !plan.HasSubquery(e) {
			continue
		}
		ne, in, err := d.replace(e, p.Input)
		if err != nil {
			return nil, err
		}
		p.Exprs[i], p.Input = ne, in
	}
	return p, nil
}

// replace rewrites the subqueries inside e into joins on input, returning e over the new
// input.
func (d *decorrelator) replace(e plan.Expr, input plan.Node) (plan.Expr, plan.Node, error) {
	var err error
	out := plan.RewriteExpr(e, func(x plan.Expr) (plan.Expr, bool) {
		sq, ok := x.(*plan.Subquery)
		if !ok || err != nil {
			return nil, err != nil
		}
		if sq.Probe != nil && plan.HasSubquery(sq.Probe) {
			c := *sq
			c.Probe, input, err = d.replace(sq.Probe, input)
			sq = &c
			if err != nil {
				return x, true
			}
		}
		var v plan.Expr
		if sq.Kind == plan.SubqueryScalar {
			v, input, err = d.scalar(input, sq)
		} else {
			v, input, err = d.mark(input, sq)
		}
		return v, true
	})
	if err != nil {
		return nil, nil, err
	}
	return out, input, nil
}

// conjunct turns an EXISTS or IN subquery that is a whole WHERE conjunct into a semi, anti
// or mark join on input; extra are conditions to apply above the join.
func (d *decorrelator) conjunct(input plan.Node, sq *plan.Subquery) (plan.Node, []plan.Expr, error) {
	sub, err := d.node(sq.Plan)
	if err != nil {
		return nil, nil, err
	}
	if sq.Kind == plan.SubqueryExists {
		sub, preds, err := d.pullAll(stripForExists(sub))
		if err != nil {
			return nil, nil, err
		}
		kind := plan.SemiJoin
		if sq.Not {
			kind = plan.AntiJoin
		}
		return &plan.Join{Kind: kind, Left: input, Right: sub, On: preds}, nil, nil
	}
	probe := sq.Probe
	if plan.HasSubquery(probe) {
		if probe, input, err = d.replace(probe, input); err != nil {
			return nil, nil, err
		}
	}
	sub, preds, err := d.pullAll(stripSort(sub))
	if err != nil {
		return nil, nil, err
	}
	eq := plan.NewBool(plan.FnEq, probe, d.c.MD.Ref(sq.Col))
	if !sq.Not {
		return &plan.Join{Kind: plan.SemiJoin, Left: input, Right: sub, On: append([]plan.Expr{eq}, preds...)}, nil, nil
	}
	if plan.ExprNotNull(probe, plan.NotNull(input, d.c.MD)) && plan.NotNull(sub, d.c.MD).Has(sq.Col) {
		return &plan.Join{Kind: plan.AntiJoin, Left: input, Right: sub, On: append([]plan.Expr{eq}, preds...)}, nil, nil
	}
	mark := d.c.MD.Add(plan.ColumnMeta{Name: "mark", Type: types.BoolType, Nullable: true})
	j := &plan.Join{Kind: plan.MarkJoin, Left: input, Right: sub, On: preds, Mark: mark, MarkCond: eq}
	return j, []plan.Expr{plan.Not(d.c.MD.Ref(mark))}, nil
}

// mark turns an EXISTS or IN subquery inside an expression into a mark join on input and
// returns the expression that replaces it.
func (d *decorrelator) mark(input plan.Node, sq *plan.Subquery) (plan.Expr, plan.Node, error) {
	sub, err := d.node(sq.Plan)
	if err != nil {
		return nil, nil, err
	}
	var cond plan.Expr
	if sq.Kind == plan.SubqueryExists {
		sub = stripForExists(sub)
	} else {
		sub = stripSort(sub)
		cond = plan.NewBool(plan.FnEq, sq.Probe, d.c.MD.Ref(sq.Col))
	}
	sub, preds, err := d.pullAll(sub)
	if err != nil {
		return nil, nil, err
	}
	mark := d.c.MD.Add(plan.ColumnMeta{Name: "mark", Type: types.BoolType, Nullable: cond != nil})
	j := &plan.Join{Kind: plan.MarkJoin, Left: input, Right: sub, On: preds, Mark: mark, MarkCond: cond}
	var v plan.Expr = d.c.MD.Ref(mark)
	if sq.Not {
		v = plan.Not(v)
	}
	return v, j, nil
}

// scalar turns a scalar subquery into a join on input and returns the expression for its
// value.
func (d *decorrelator) scalar(input plan.Node, sq *plan.Subquery) (plan.Expr, plan.Node, error) {
	sub, err := d.node(sq.Plan)
	if err != nil {
		return nil, nil, err
	}
	outer := plan.OuterRefs(sub)
	if outer.Empty() {
		kind := plan.SingleJoin
		if exactlyOneRow(sub) {
			kind = plan.InnerJoin
		}
		return d.c.MD.Ref(sq.Col), &plan.Join{Kind: kind, Left: input, Right: sub}, nil
	}
	// Project(value) over Aggregate without GROUP BY: group by the correlated columns.
	top := sub
	var proj *plan.Project
	if p, ok := top.(*plan.Project); ok && len(p.Exprs) == 1 {
		proj, top = p, p.Input
	}
	if agg, ok := top.(*plan.Aggregate); ok && len(agg.Groups) == 0 {
		inner, preds, err := d.pull(agg.Input, outer)
		if err != nil {
			return nil, nil, err
		}
		innerCols := plan.Defined(inner)
		var on []plan.Expr
		newAgg := &plan.Aggregate{Input: inner, Aggs: agg.Aggs, AggCols: agg.AggCols}
		for _, p := range preds {
			call, ok := p.(*plan.Call)
			if !ok || call.Fn != plan.FnEq {
				return nil, nil, sqlerr.Unsupported("a correlated scalar subquery with an aggregate and a correlation other than equality")
			}
			var innerSide *plan.ColumnRef
			for i, a := range call.Args {
				r, isRef := a.(*plan.ColumnRef)
				other := call.Args[1-i]
				if isRef && innerCols.Has(r.ID) && !plan.Refs(other).Intersects(innerCols) {
					innerSide = r
				}
			}
			if innerSide == nil {
				return nil, nil, sqlerr.Unsupported("a correlated scalar subquery with an aggregate whose correlation is not column = outer expression")
			}
			if !plan.MakeColSet(newAgg.GroupCols...).Has(innerSide.ID) {
				newAgg.Groups = append(newAgg.Groups, innerSide)
				newAgg.GroupCols = append(newAgg.GroupCols, innerSide.ID)
			}
			on = append(on, p)
		}
		if plan.OuterRefs(newAgg).Intersects(outer) {
			return nil, nil, unsupportedCorrelation()
		}
		var value plan.Expr = d.c.MD.Ref(sq.Col)
		if proj != nil {
			value = proj.Exprs[0]
		}
		// An empty group has COUNT 0, not the NULL a left join gives.
		counts := map[plan.ColumnID]bool{}
		for i, a := range agg.Aggs {
			if a.Fn == plan.AggCount || a.Fn == plan.AggCountStar {
				counts[agg.AggCols[i]] = true
			}
		}
		value = plan.RewriteExpr(value, func(x plan.Expr) (plan.Expr, bool) {
			if r, ok := x.(*plan.ColumnRef); ok && counts[r.ID] {
				return &plan.Call{Fn: plan.FnCoalesce, Args: []plan.Expr{r, plan.Lit(types.Value{Type: types.Int64Type})}, T: r.T}, true
			}
			return nil, false
		})
		return value, &plan.Join{Kind: plan.LeftJoin, Left: input, Right: newAgg, On: on}, nil
	}
	inner, preds, err := d.pullAll(sub)
	if err != nil {
		return nil, nil, err
	}
	return d.c.MD.Ref(sq.Col), &plan.Join{Kind: plan.SingleJoin, Left: input, Right: inner, On: preds}, nil
}

// pullAll pulls every predicate that references columns from outside n and checks that
// none is left behind.
func (d *decorrelator) pullAll(n plan.Node) (plan.Node, []plan.Expr, error) {
	outer := plan.OuterRefs(n)
	if outer.Empty() {
		return n, nil, nil
	}
	out, preds, err := d.pull(n, outer)
	if err != nil {
		return nil, nil, err
	}
	if plan.OuterRefs(out).Intersects(outer) {
		return nil, nil, unsupportedCorrelation()
	}
	return out, preds, nil
}

// pull removes the conjuncts that read outer columns from the filters, projections and
// inner joins at the top of n and returns them; a projection on the way passes through
// the columns they read.
func (d *decorrelator) pull(n plan.Node, outer plan.ColSet) (plan.Node, []plan.Expr, error) {
	split := func(conds []plan.Expr) (keep, pulled []plan.Expr) {
		for _, c := range conds {
			if plan.Refs(c).Intersects(outer) {
				pulled = append(pulled, c)
			} else {
				keep = append(keep, c)
			}
		}
		return keep, pulled
	}
	switch x := n.(type) {
	case *plan.Filter:
		in, preds, err := d.pull(x.Input, outer)
		if err != nil {
			return nil, nil, err
		}
		keep, pulled := split(x.Conds)
		preds = append(preds, pulled...)
		if len(keep) == 0 {
			return in, preds, nil
		}
		x.Input, x.Conds = in, keep
		return x, preds, nil
	case *plan.Project:
		in, preds, err := d.pull(x.Input, outer)
		if err != nil {
			return nil, nil, err
		}
		x.Input = in
		have := plan.OutputSet(x)
		for _, id := range plan.RefsAll(preds).Intersection(plan.OutputSet(in)).Difference(have).Ordered() {
			x.Exprs = append(x.Exprs, d.c.MD.Ref(id))
			x.Cols = append(x.Cols, id)
		}
		return x, preds, nil
	case *plan.Join:
		l, lp, err := d.pull(x.Left, outer)
		if err != nil {
			return nil, nil, err
		}
		x.Left = l
		if x.Kind == plan.InnerJoin {
			r, rp, err := d.pull(x.Right, outer)
			if err != nil {
				return nil, nil, err
			}
			x.Right = r
			keep, pulled := split(x.On)
			x.On = keep
			return x, append(append(lp, rp...), pulled...), nil
		}
		return x, lp, nil
	}
	return n, nil, nil
}

// stripForExists drops what cannot change whether a subquery has rows: its select list,
// ORDER BY, DISTINCT and a LIMIT of at least one row.
func stripForExists(n plan.Node) plan.Node {
	for {
		switch x := n.(type) {
		case *plan.Project:
			n = x.Input
		case *plan.Sort:
			n = x.Input
		case *plan.Distinct:
			n = x.Input
		case *plan.Limit:
			if x.Offset != 0 || x.Count == 0 {
				return n
			}
			n = x.Input
		default:
			return n
		}
	}
}

// stripSort drops an ORDER BY without LIMIT, which a subquery's result set ignores.
func stripSort(n plan.Node) plan.Node {
	switch x := n.(type) {
	case *plan.Sort:
		return x.Input
	case *plan.Project:
		if s, ok := x.Input.(*plan.Sort); ok {
			x.Input = s.Input
		}
	}
	return n
}

// exactlyOneRow reports a plan that always produces exactly one row.
func exactlyOneRow(n plan.Node) bool {
	switch x := n.(type) {
	case *plan.Aggregate:
		return len(x.Groups) == 0
	case *plan.Project:
		return exactlyOneRow(x.Input)
	case *plan.Values:
		return len(x.Rows) == 1
	}
	return false
}
