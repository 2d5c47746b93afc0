package opt

import (
	"github.com/colinkdb/colink/sql/plan"
)

// PushDownPredicates moves every condition as close to the data as its columns allow: WHERE
// conjuncts into the scans of the tables they read, conditions over both sides of a comma
// join into the join's condition, ON conditions over only a join's inner side into that
// side. A condition that rejects NULLs from a left join's inner side turns it into an inner
// join. Conditions pass through projections (with computed columns replaced by their
// expressions) and through aggregates when they read only grouping columns; they stop at
// LIMIT.
type PushDownPredicates struct{}

// Name implements Rule.
func (PushDownPredicates) Name() string { return "push-down-predicates" }

// Apply implements Rule.
func (PushDownPredicates) Apply(c *Context, root plan.Node) (plan.Node, error) {
	return push(root, nil), nil
}

func withFilter(n plan.Node, preds []plan.Expr) plan.Node {
	if len(preds) == 0 {
		return n
	}
	if f, ok := n.(*plan.Filter); ok {
		f.Conds = append(f.Conds, preds...)
		return f
	}
	return &plan.Filter{Input: n, Conds: preds}
}

// push returns n with preds (conjuncts over n's output) applied as low as possible.
func push(n plan.Node, preds []plan.Expr) plan.Node {
	var norm []plan.Expr
	for _, p := range conjunctsOf(preds) {
		norm = append(norm, factorOr(p)...)
	}
	preds = norm
	switch x := n.(type) {
	case *plan.Filter:
		return push(x.Input, append(preds, x.Conds...))
	case *plan.Scan:
		x.Filters = append(x.Filters, preds...)
		return x
	case *plan.Project:
		subst := map[plan.ColumnID]plan.Expr{}
		for i, e := range x.Exprs {
			if r, ok := e.(*plan.ColumnRef); !ok || r.ID != x.Cols[i] {
				subst[x.Cols[i]] = e
			}
		}
		var below []plan.Expr
		for _, p := range preds {
			below = append(below, substitute(p, subst))
		}
		x.Input = push(x.Input, below)
		return x
	case *plan.Aggregate:
		subst := map[plan.ColumnID]plan.Expr{}
		var groupCols plan.ColSet
		for i, g := range x.Groups {
			groupCols.Add(x.GroupCols[i])
			if r, ok := g.(*plan.ColumnRef); !ok || r.ID != x.GroupCols[i] {
				subst[x.GroupCols[i]] = g
			}
		}
		var below, above []plan.Expr
		for _, p := range preds {
			// With no groups the aggregate makes a row even from no input, so nothing
			// can move below it.
			if len(x.Groups) > 0 && plan.Refs(p).SubsetOf(groupCols) {
				below = append(below, substitute(p, subst))
			} else {
				above = append(above, p)
			}
		}
		x.Input = push(x.Input, below)
		return withFilter(x, above)
	case *plan.Distinct:
		x.Input = push(x.Input, preds)
		return x
	case *plan.Sort:
		x.Input = push(x.Input, preds)
		return x
	case *plan.Join:
		return pushJoin(x, preds)
	}
	// Limit, Values: nothing passes.
	for i, in := range n.Inputs() {
		n.SetInput(i, push(in, nil))
	}
	return withFilter(n, preds)
}

func pushJoin(x *plan.Join, preds []plan.Expr) plan.Node {
	lcols, rcols := plan.OutputSet(x.Left), plan.OutputSet(x.Right)
	if x.Kind == plan.LeftJoin {
		for _, p := range preds {
			if plan.NullRejected(p).Intersects(rcols) {
				// A row with NULLs for the inner side could not pass: an inner join.
				x.Kind = plan.InnerJoin
				break
			}
		}
	}
	var lp, rp, on, above []plan.Expr
	switch x.Kind {
	case plan.InnerJoin:
		var all []plan.Expr
		for _, c := range append(preds, x.On...) {
			all = append(all, factorOr(c)...)
		}
		for _, c := range all {
			switch refs := plan.Refs(c); {
			case refs.SubsetOf(lcols):
				lp = append(lp, c)
			case refs.SubsetOf(rcols):
				rp = append(rp, c)
			default:
				on = append(on, c)
				// A disjunction over both sides implies one over each side alone.
				if d, ok := deriveSide(c, lcols); ok {
					lp = append(lp, d)
				}
				if d, ok := deriveSide(c, rcols); ok {
					rp = append(rp, d)
				}
			}
		}
	default:
		for _, p := range preds {
			if plan.Refs(p).SubsetOf(lcols) {
				lp = append(lp, p)
			} else {
				above = append(above, p)
			}
		}
		for _, c := range x.On {
			switch refs := plan.Refs(c); {
			case refs.SubsetOf(rcols) && !refs.Empty():
				rp = append(rp, c)
			case x.Kind == plan.SemiJoin && refs.SubsetOf(lcols):
				lp = append(lp, c)
			default:
				on = append(on, c)
			}
		}
	}
	x.On = on
	x.Left = push(x.Left, lp)
	x.Right = push(x.Right, rp)
	return withFilter(x, above)
}

// substitute replaces references to the columns in subst by their expressions.
func substitute(e plan.Expr, subst map[plan.ColumnID]plan.Expr) plan.Expr {
	if len(subst) == 0 {
		return e
	}
	return plan.RewriteExpr(e, func(x plan.Expr) (plan.Expr, bool) {
		if r, ok := x.(*plan.ColumnRef); ok {
			if s, ok := subst[r.ID]; ok {
				return s, true
			}
			return r, true
		}
		return nil, false
	})
}

// disjuncts splits a condition at its top-level ORs.
func disjuncts(e plan.Expr) []plan.Expr {
	if c, ok := e.(*plan.Call); ok && c.Fn == plan.FnOr {
		var out []plan.Expr
		for _, a := range c.Args {
			out = append(out, disjuncts(a)...)
		}
		return out
	}
	return []plan.Expr{e}
}

func or(es []plan.Expr) plan.Expr {
	out := es[0]
	for _, e := range es[1:] {
		out = plan.NewBool(plan.FnOr, out, e)
	}
	return out
}

// factorOr takes the conjuncts common to every branch of a disjunction out of it:
// (a AND b) OR (a AND c) becomes a, b OR c. It returns the resulting conjuncts.
func factorOr(e plan.Expr) []plan.Expr {
	branches := disjuncts(e)
	if len(branches) < 2 {
		return []plan.Expr{e}
	}
	conj := make([][]plan.Expr, len(branches))
	count := map[string]int{}
	for i, b := range branches {
		seen := map[string]bool{}
		for _, c := range plan.Conjuncts(b) {
			conj[i] = append(conj[i], c)
			if k := plan.Key(c); !seen[k] {
				seen[k] = true
				count[k]++
			}
		}
	}
	var common []plan.Expr
	isCommon := map[string]bool{}
	for _, c := range conj[0] {
		if k := plan.Key(c); count[k] == len(branches) && !isCommon[k] {
			isCommon[k] = true
			common = append(common, c)
		}
	}
	if len(common) == 0 {
		return []plan.Expr{e}
	}
	var rest []plan.Expr
	for _, cs := range conj {
		var keep []plan.Expr
		for _, c := range cs {
			if !isCommon[plan.Key(c)] {
				keep = append(keep, c)
			}
		}
		if len(keep) == 0 {
			// This branch is just the common part: the disjunction adds nothing.
			return common
		}
		rest = append(rest, plan.And(keep...))
	}
	return append(common, or(rest))
}

// deriveSide returns the condition on cols alone that a disjunction implies: the OR of
// each branch's conjuncts over cols, if every branch has some.
func deriveSide(e plan.Expr, cols plan.ColSet) (plan.Expr, bool) {
	branches := disjuncts(e)
	if len(branches) < 2 {
		return nil, false
	}
	var out []plan.Expr
	for _, b := range branches {
		var mine []plan.Expr
		for _, c := range plan.Conjuncts(b) {
			if r := plan.Refs(c); !r.Empty() && r.SubsetOf(cols) {
				mine = append(mine, c)
			}
		}
		if len(mine) == 0 {
			return nil, false
		}
		out = append(out, plan.And(mine...))
	}
	return or(out), true
}
