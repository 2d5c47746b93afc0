package opt

import (
	"slices"

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
// subquery correlated anywhere else is reported as unsupported. An IN subquery's select
// item may read the enclosing query's columns ("o_orderkey IN (SELECT o_orderkey FROM
// lineitem …)"): the comparison with it then becomes a condition of the join (see
// markJoin for the NULL-aware case). A subquery that only has to have a row — no join
// condition reads its columns — is cut to one row (LIMIT 1).
type Decorrelate struct{}

// Name implements Rule.
func (Decorrelate) Name() string { return "decorrelate" }

// Apply implements Rule.
func (Decorrelate) Apply(c *Context, root plan.Node) (plan.Node, error) {
	d := &decorrelator{c: c, seen: map[*plan.Subquery]bool{}}
	return d.node(root)
}

type decorrelator struct {
	c *Context
	// done maps each subquery already turned into a join within the current filter or
	// projection to the expression that replaced it. The binder shares one Subquery among
	// the copies of an operand it expands (BETWEEN's x >= a AND x <= b, NULLIF's CASE WHEN
	// x = y THEN NULL ELSE x END), and each copy must read the one join's column: a second
	// join over the same plan nodes would put them twice in the tree.
	done map[*plan.Subquery]plan.Expr
	// seen holds every subquery decorrelated so far, to refuse one that is shared between
	// two clauses rather than plan it wrongly.
	seen map[*plan.Subquery]bool
}

// scope starts a new filter's or projection's memo of decorrelated subqueries and returns
// the function that restores the enclosing one.
func (d *decorrelator) scope() func() {
	outer := d.done
	d.done = map[*plan.Subquery]plan.Expr{}
	return func() { d.done = outer }
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
	defer d.scope()()
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
	defer d.scope()()
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
		if v, ok := d.done[sq]; ok {
			return v, true
		}
		if d.seen[sq] {
			err = sqlerr.Unsupported("the same subquery in two clauses")
			return x, true
		}
		orig := sq
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
		d.done[orig], d.seen[orig] = v, true
		return v, true
	})
	if err != nil {
		return nil, nil, err
	}
	return out, input, nil
}

// subPlan decorrelates sq's plan; for EXISTS it also strips what EXISTS ignores and pulls
// out the correlated predicates.
func (d *decorrelator) subPlan(sq *plan.Subquery) (plan.Node, []plan.Expr, error) {
	sub, err := d.node(sq.Plan)
	if err != nil || sq.Kind != plan.SubqueryExists {
		return sub, nil, err
	}
	return d.pullAll(stripForExists(sub))
}

// conjunct turns an EXISTS or IN subquery that is a whole WHERE conjunct into a semi, anti
// or mark join on input; extra are conditions to apply above the join.
func (d *decorrelator) conjunct(input plan.Node, sq *plan.Subquery) (plan.Node, []plan.Expr, error) {
	sub, preds, err := d.subPlan(sq)
	if err != nil {
		return nil, nil, err
	}
	if sq.Kind == plan.SubqueryExists {
		kind := plan.SemiJoin
		if sq.Not {
			kind = plan.AntiJoin
		}
		return &plan.Join{Kind: kind, Left: input, Right: anyRow(sub, preds), On: preds}, nil, nil
	}
	probe := sq.Probe
	if plan.HasSubquery(probe) {
		if probe, input, err = d.replace(probe, input); err != nil {
			return nil, nil, err
		}
	}
	sub, value := d.inValue(stripSort(sub), sq.Col)
	sub, preds, err = d.pullAll(sub)
	if err != nil {
		return nil, nil, err
	}
	eq := plan.NewBool(plan.FnEq, probe, value)
	on := append([]plan.Expr{eq}, preds...)
	if !sq.Not {
		return &plan.Join{Kind: plan.SemiJoin, Left: input, Right: anyRow(sub, on), On: on}, nil, nil
	}
	if plan.ExprNotNull(probe, plan.NotNull(input, d.c.MD)) && plan.ExprNotNull(value, plan.NotNull(input, d.c.MD).Union(plan.NotNull(sub, d.c.MD))) {
		return &plan.Join{Kind: plan.AntiJoin, Left: input, Right: anyRow(sub, on), On: on}, nil, nil
	}
	v, j, err := d.markJoin(input, sub, preds, probe, value)
	if err != nil {
		return nil, nil, err
	}
	return j, []plan.Expr{plan.Not(v)}, nil
}

// markJoin joins input with an IN subquery's rows, sub (its correlated predicates pulled
// out as preds), and returns the IN's value: TRUE when probe = value holds for some row
// of sub, else NULL when it is NULL for some row, else FALSE. When probe reads only input
// and value only sub, that is one mark join comparing them. Otherwise (value reads the
// enclosing query's columns, as in "o_orderkey IN (SELECT o_orderkey + l_linenumber …)")
// the comparison becomes a condition of an EXISTS mark join, and when it can be NULL a
// second EXISTS mark join over a copy of sub looks for a row where it is NULL.
func (d *decorrelator) markJoin(input, sub plan.Node, preds []plan.Expr, probe, value plan.Expr) (plan.Expr, plan.Node, error) {
	eq := plan.NewBool(plan.FnEq, probe, value)
	inner := plan.Defined(sub)
	if !plan.Refs(probe).Intersects(inner) && plan.Refs(value).SubsetOf(inner) {
		mark := d.c.MD.Add(plan.ColumnMeta{Name: "mark", Type: types.BoolType, Nullable: true})
		j := &plan.Join{Kind: plan.MarkJoin, Left: input, Right: sub, On: preds, Mark: mark, MarkCond: eq}
		return d.c.MD.Ref(mark), j, nil
	}
	notNull := plan.NotNull(input, d.c.MD).Union(plan.NotNull(sub, d.c.MD))
	nullable := !plan.ExprNotNull(eq, notNull)
	var copyOf *cloner
	var sub2 plan.Node
	var on2 []plan.Expr
	if nullable {
		// Copy sub before the first join owns it; columns from outside keep their IDs.
		copyOf = &cloner{md: d.c.MD, ids: map[plan.ColumnID]plan.ColumnID{}}
		for _, id := range plan.RefsAll(append([]plan.Expr{eq}, preds...)).Difference(inner).Ordered() {
			copyOf.ids[id] = id
		}
		var ok bool
		if sub2, ok = copyOf.node(sub); ok {
			on2, ok = copyOf.exprs(append([]plan.Expr{plan.NewBool(plan.FnIsNull, eq)}, preds...))
		}
		if !ok {
			return nil, nil, sqlerr.Unsupported("an IN subquery whose select list reads the enclosing query's columns, over joins other than inner, left, semi or anti")
		}
	}
	on := append([]plan.Expr{eq}, preds...)
	found := d.c.MD.Add(plan.ColumnMeta{Name: "exists", Type: types.BoolType})
	var j plan.Node = &plan.Join{Kind: plan.MarkJoin, Left: input, Right: anyRow(sub, on), On: on, Mark: found}
	if !nullable {
		return d.c.MD.Ref(found), j, nil
	}
	unknown := d.c.MD.Add(plan.ColumnMeta{Name: "exists", Type: types.BoolType})
	j = &plan.Join{Kind: plan.MarkJoin, Left: j, Right: anyRow(sub2, on2), On: on2, Mark: unknown}
	v := &plan.Case{Whens: []plan.When{
		{Cond: d.c.MD.Ref(found), Then: plan.Lit(types.BoolValue(true))},
		{Cond: d.c.MD.Ref(unknown), Then: plan.Lit(types.NullValue(types.BoolType))},
	}, Else: plan.Lit(types.BoolValue(false)), T: types.BoolType}
	return v, j, nil
}

// anyRow returns the right side of an EXISTS-like join (semi, anti, or mark without a
// comparison) with conditions on: when none of them reads sub's columns, whether sub has a
// row is all that matters, so sub is cut to one row instead of being paired with every row
// of the other side.
func anyRow(sub plan.Node, on []plan.Expr) plan.Node {
	if plan.RefsAll(on).Intersects(plan.Defined(sub)) {
		return sub
	}
	return &plan.Limit{Input: sub, Count: 1}
}

// mark turns an EXISTS or IN subquery inside an expression into a mark join on input and
// returns the expression that replaces it.
func (d *decorrelator) mark(input plan.Node, sq *plan.Subquery) (plan.Expr, plan.Node, error) {
	sub, preds, err := d.subPlan(sq)
	if err != nil {
		return nil, nil, err
	}
	if sq.Kind == plan.SubqueryExists {
		mark := d.c.MD.Add(plan.ColumnMeta{Name: "mark", Type: types.BoolType})
		j := &plan.Join{Kind: plan.MarkJoin, Left: input, Right: anyRow(sub, preds), On: preds, Mark: mark}
		var v plan.Expr = d.c.MD.Ref(mark)
		if sq.Not {
			v = plan.Not(v)
		}
		return v, j, nil
	}
	sub, value := d.inValue(stripSort(sub), sq.Col)
	sub, preds, err = d.pullAll(sub)
	if err != nil {
		return nil, nil, err
	}
	v, j, err := d.markJoin(input, sub, preds, sq.Probe, value)
	if err != nil {
		return nil, nil, err
	}
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

// inValue returns what an IN subquery's rows compare with: the column col of its select
// list, or, when the select item reads columns of the enclosing query ("o_orderkey IN
// (SELECT o_orderkey FROM lineitem …)", correlated through its select list), the item's
// expression itself, which the join condition evaluates over both sides; the subquery then
// no longer computes it and passes through the columns of its own that the expression
// reads. A DISTINCT under the select list goes too: IN does not count matches.
func (d *decorrelator) inValue(sub plan.Node, col plan.ColumnID) (plan.Node, plan.Expr) {
	ref := d.c.MD.Ref(col)
	top := sub
	if dn, ok := top.(*plan.Distinct); ok {
		top = dn.Input
	}
	p, ok := top.(*plan.Project)
	if !ok {
		return sub, ref
	}
	i := slices.Index(p.Cols, col)
	if i < 0 {
		return sub, ref
	}
	e := p.Exprs[i]
	reads := plan.Refs(e)
	if reads.SubsetOf(plan.Defined(p.Input)) {
		return sub, ref
	}
	p.Exprs = slices.Delete(p.Exprs, i, i+1)
	p.Cols = slices.Delete(p.Cols, i, i+1)
	have := plan.OutputSet(p)
	for _, id := range reads.Intersection(plan.OutputSet(p.Input)).Difference(have).Ordered() {
		p.Exprs = append(p.Exprs, d.c.MD.Ref(id))
		p.Cols = append(p.Cols, id)
	}
	if len(p.Cols) == 0 {
		return p.Input, e
	}
	return p, e
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
