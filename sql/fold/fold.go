// Package fold owns constant folding: it computes the constant parts of plan expressions
// with exec's kernels, on one-row batches — the kernels that compute column data, through
// the same lowering, so a constant is never computed differently from a column (one
// implementation of every operator and function) — and simplifies the expressions around
// constants (AND, OR, NOT, CASE, COALESCE, x = x) and the plans that hold them.
//
// What the planner folds is what it folded when it had its own evaluator: a function
// whose registry entry declines its arguments (fn.Func.PlanFold: TRUNCATE or FLOOR of
// non-NULL constants), a volatile one (SLEEP), and DIV of a decimal or a double into BIGINT
// are left for exec, which folds what it can when it compiles the expression; EXPLAIN shows
// them unfolded.
package fold

import (
	"errors"

	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// isTrue reports a TRUE literal.
func isTrue(e plan.Expr) bool {
	l, ok := e.(*plan.Literal)
	if !ok || l.V.Null {
		return false
	}
	t, known := l.V.Truth()
	return known && t
}

func boolLit(b bool) plan.Expr { return plan.Lit(types.BoolValue(b)) }

// Expr simplifies an expression bottom-up; subqueries' plans are folded too.
func Expr(e plan.Expr) plan.Expr {
	return plan.RewriteExpr(e, func(x plan.Expr) (plan.Expr, bool) {
		switch x := x.(type) {
		case *plan.Subquery:
			c := *x
			c.Plan = Plan(x.Plan)
			if x.Probe != nil {
				c.Probe = Expr(x.Probe)
			}
			return &c, true
		case *plan.Call:
			// A constant expression is evaluated whole, so that decimal arithmetic keeps
			// MySQL's intermediate digits between its operators (1/3*3 is 1.0000); folding
			// operator by operator would round each one.
			if constantTree(x) {
				if v, err := Eval(x); err == nil {
					return plan.Lit(v), true
				}
			}
			args := make([]plan.Expr, len(x.Args))
			for i, a := range x.Args {
				if isArith(x.Fn) && keepsDigits(a) {
					args[i] = foldKeepingDigits(a)
				} else {
					args[i] = Expr(a)
				}
			}
			return foldCall(&plan.Call{Fn: x.Fn, Args: args, T: x.T}), true
		case *plan.Cast:
			if constantTree(x) {
				if v, err := Eval(x); err == nil {
					return plan.Lit(v), true
				}
			}
			arg := Expr(x.Arg)
			if l, ok := arg.(*plan.Literal); ok {
				if v, err := types.Convert(l.V, x.T); err == nil {
					return plan.Lit(v), true
				}
			}
			return &plan.Cast{Arg: arg, T: x.T}, true
		case *plan.Case:
			return foldCase(x), true
		case *plan.AggCall:
			if x.Arg == nil {
				return x, true
			}
			c := *x
			c.Arg = Expr(x.Arg)
			return &c, true
		}
		return x, true
	})
}

// isArith reports the operators through which MySQL's decimal arithmetic keeps a
// quotient's intermediate digits (exec/expr computes such trees exact).
func isArith(fn plan.Func) bool {
	switch fn {
	case plan.FnAdd, plan.FnSub, plan.FnMul, plan.FnDiv, plan.FnMod, plan.FnNeg:
		return true
	}
	return false
}

// keepsDigits reports decimal arithmetic with a decimal division in it (through arithmetic
// only): its value as an operand of further arithmetic has more digits than its declared
// type, so it must not become a literal rounded to that type under an operator over columns
// (o_orderkey*(1/3) is 0.6667 for 2, as 2*(1/3) is, not 2*0.3333).
func keepsDigits(e plan.Expr) bool {
	c, ok := e.(*plan.Call)
	if !ok || !isArith(c.Fn) || c.T.Kind != types.Decimal {
		return false
	}
	if c.Fn == plan.FnDiv {
		return true
	}
	for _, a := range c.Args {
		if keepsDigits(a) {
			return true
		}
	}
	return false
}

// foldKeepingDigits folds e's operands but keeps e's arithmetic (see keepsDigits), for the
// kernels to compute with its intermediate digits.
func foldKeepingDigits(e plan.Expr) plan.Expr {
	c := e.(*plan.Call)
	args := make([]plan.Expr, len(c.Args))
	for i, a := range c.Args {
		if keepsDigits(a) {
			args[i] = foldKeepingDigits(a)
		} else {
			args[i] = Expr(a)
		}
	}
	return &plan.Call{Fn: c.Fn, Args: args, T: c.T}
}

// constantTree reports an expression of literals and functions only (no columns,
// aggregates, subqueries or CASE, which Expr simplifies on its own).
func constantTree(e plan.Expr) bool {
	constant := true
	plan.WalkExpr(e, func(x plan.Expr) bool {
		switch x.(type) {
		case *plan.Literal, *plan.Call, *plan.Cast:
		default:
			constant = false
		}
		return constant
	})
	return constant
}

func allLiterals(es []plan.Expr) bool {
	for _, e := range es {
		if _, ok := e.(*plan.Literal); !ok {
			return false
		}
	}
	return true
}

func foldCall(x *plan.Call) plan.Expr {
	if allLiterals(x.Args) {
		if v, err := Eval(x); err == nil {
			return plan.Lit(v)
		}
		return x
	}
	switch x.Fn {
	case plan.FnCoalesce:
		// The first non-NULL literal is the value when no column comes before it.
		for _, a := range x.Args {
			l, ok := a.(*plan.Literal)
			if !ok {
				break
			}
			if !l.V.Null {
				if v, err := types.Convert(l.V, x.T); err == nil {
					return plan.Lit(v)
				}
				break
			}
		}
	case plan.FnAnd:
		var keep []plan.Expr
		for _, a := range x.Args {
			for _, c := range plan.Conjuncts(a) {
				if isTrue(c) {
					continue
				}
				if l, ok := c.(*plan.Literal); ok && !l.V.Null {
					return boolLit(false)
				}
				keep = append(keep, c)
			}
		}
		if len(keep) == 0 {
			return boolLit(true)
		}
		return plan.And(keep...)
	case plan.FnOr:
		var keep []plan.Expr
		for _, a := range x.Args {
			if isTrue(a) {
				return boolLit(true)
			}
			if l, ok := a.(*plan.Literal); ok && !l.V.Null {
				continue // FALSE
			}
			keep = append(keep, a)
		}
		switch len(keep) {
		case 0:
			return boolLit(false)
		case 1:
			return keep[0]
		}
		out := keep[0]
		for _, k := range keep[1:] {
			out = plan.NewBool(plan.FnOr, out, k)
		}
		return out
	case plan.FnEq:
		// x = x is true wherever x is not NULL (a decorrelated "o_orderkey IN (SELECT
		// o_orderkey …)" compares the outer column with itself).
		if r, ok := x.Args[0].(*plan.ColumnRef); ok && plan.Key(r) == plan.Key(x.Args[1]) {
			return plan.Not(plan.NewBool(plan.FnIsNull, r))
		}
	case plan.FnNot:
		if inner, ok := x.Args[0].(*plan.Call); ok && inner.Fn == plan.FnNot {
			return inner.Args[0]
		}
		if s, ok := x.Args[0].(*plan.Subquery); ok && s.Kind != plan.SubqueryScalar {
			c := *s
			c.Not = !c.Not
			return &c
		}
	}
	return x
}

func foldCase(x *plan.Case) plan.Expr {
	out := &plan.Case{T: x.T}
	for _, w := range x.Whens {
		cond, then := Expr(w.Cond), Expr(w.Then)
		if plan.IsFalseOrNull(cond) {
			continue
		}
		if isTrue(cond) && len(out.Whens) == 0 {
			return then
		}
		out.Whens = append(out.Whens, plan.When{Cond: cond, Then: then})
		if isTrue(cond) {
			out.Else = nil
			return out
		}
	}
	if x.Else != nil {
		out.Else = Expr(x.Else)
	}
	if len(out.Whens) == 0 {
		if out.Else == nil {
			return plan.Lit(types.NullValue(x.T))
		}
		return out.Else
	}
	return out
}

// Plan folds the expressions of every node of a plan (see Expr), dropping conditions
// that are always true and Filters left without conditions.
func Plan(n plan.Node) plan.Node {
	for i, in := range n.Inputs() {
		n.SetInput(i, Plan(in))
	}
	switch x := n.(type) {
	case *plan.Scan:
		x.Filters = Conds(x.Filters)
	case *plan.Values:
		for _, row := range x.Rows {
			for i := range row {
				row[i] = Expr(row[i])
			}
		}
	case *plan.Filter:
		x.Conds = Conds(x.Conds)
		if len(x.Conds) == 0 {
			return x.Input
		}
	case *plan.Project:
		for i := range x.Exprs {
			x.Exprs[i] = Expr(x.Exprs[i])
		}
	case *plan.Join:
		x.On = Conds(x.On)
		if x.MarkCond != nil {
			x.MarkCond = Expr(x.MarkCond)
		}
	case *plan.Aggregate:
		for i := range x.Groups {
			x.Groups[i] = Expr(x.Groups[i])
		}
		for _, a := range x.Aggs {
			if a.Arg != nil {
				a.Arg = Expr(a.Arg)
			}
		}
	case *plan.Sort:
		for i := range x.Keys {
			x.Keys[i].Expr = Expr(x.Keys[i].Expr)
		}
	}
	return n
}

// Conds folds a list of conjuncts, splitting ANDs and dropping TRUE; a FALSE or NULL
// conjunct replaces the whole list.
func Conds(conds []plan.Expr) []plan.Expr {
	var out []plan.Expr
	for _, c := range conds {
		for _, f := range plan.Conjuncts(Expr(c)) {
			switch {
			case isTrue(f):
				continue
			case plan.IsFalseOrNull(f):
				return []plan.Expr{boolLit(false)}
			}
			out = append(out, f)
		}
	}
	return out
}

// ConstantError returns the first error that a constant part of the plan raises when it is
// evaluated (MySQL's error 1690 for BIGINT 9223372036854775807 + 1, say), or nil. Run it
// after Plan: a constant that Expr could not turn into a literal is still in the plan,
// and without this check the executor would compute it on its own. Only parts evaluated
// whatever the data are checked — not the branches of a CASE, nor the operands of AND, OR
// and COALESCE after the first — because MySQL evaluates those only when it reaches them.
func ConstantError(n plan.Node) error {
	var err error
	var check func(e plan.Expr)
	check = func(e plan.Expr) {
		if err != nil || e == nil {
			return
		}
		switch x := e.(type) {
		case *plan.Subquery:
			if x.Probe != nil {
				check(x.Probe)
			}
			if err == nil {
				err = ConstantError(x.Plan)
			}
			return
		case *plan.Case:
			if len(x.Whens) > 0 {
				check(x.Whens[0].Cond)
			}
			return
		case *plan.Call:
			args := x.Args
			switch x.Fn {
			case plan.FnAnd, plan.FnOr, plan.FnCoalesce:
				args = args[:min(len(args), 1)]
			}
			for _, a := range args {
				check(a)
			}
			if err == nil && allLiterals(x.Args) {
				err = definiteError(x)
			}
			return
		case *plan.Cast:
			check(x.Arg)
			if _, ok := x.Arg.(*plan.Literal); ok && err == nil {
				err = definiteError(x)
			}
			return
		}
		for _, c := range plan.Children(e) {
			check(c)
		}
	}
	plan.WalkPlan(n, func(n plan.Node) bool {
		for _, e := range plan.NodeExprs(n) {
			check(e)
		}
		return err == nil
	})
	return err
}

// definiteError evaluates a constant expression and returns its error if it is one to
// report to the client (a *sqlerr.Error), not merely a function the folder cannot compute.
func definiteError(e plan.Expr) error {
	_, err := Eval(e)
	var se *sqlerr.Error
	if errors.As(err, &se) {
		return err
	}
	return nil
}
