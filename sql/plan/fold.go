package plan

import (
	"errors"

	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// isTrue reports a TRUE literal.
func isTrue(e Expr) bool {
	l, ok := e.(*Literal)
	if !ok || l.V.Null {
		return false
	}
	t, known := l.V.Truth()
	return known && t
}

// IsFalseOrNull reports a FALSE or NULL literal: a condition that keeps no row.
func IsFalseOrNull(e Expr) bool {
	l, ok := e.(*Literal)
	if !ok {
		return false
	}
	t, known := l.V.Truth()
	return !known || !t
}

func boolLit(b bool) Expr { return Lit(types.BoolValue(b)) }

// Fold simplifies an expression bottom-up; subqueries' plans are folded too.
func Fold(e Expr) Expr {
	return RewriteExpr(e, func(x Expr) (Expr, bool) {
		switch x := x.(type) {
		case *Subquery:
			c := *x
			c.Plan = FoldPlan(x.Plan)
			if x.Probe != nil {
				c.Probe = Fold(x.Probe)
			}
			return &c, true
		case *Call:
			// A constant expression is evaluated whole, so that decimal arithmetic keeps
			// MySQL's intermediate digits between its operators (1/3*3 is 1.0000); folding
			// operator by operator would round each one.
			if constantTree(x) {
				if v, err := Eval(x); err == nil {
					return Lit(v), true
				}
			}
			args := make([]Expr, len(x.Args))
			for i, a := range x.Args {
				if isArith(x.Fn) && keepsDigits(a) {
					args[i] = foldKeepingDigits(a)
				} else {
					args[i] = Fold(a)
				}
			}
			return foldCall(&Call{Fn: x.Fn, Args: args, T: x.T}), true
		case *Cast:
			if constantTree(x) {
				if v, err := Eval(x); err == nil {
					return Lit(v), true
				}
			}
			arg := Fold(x.Arg)
			if l, ok := arg.(*Literal); ok {
				if v, err := types.Convert(l.V, x.T); err == nil {
					return Lit(v), true
				}
			}
			return &Cast{Arg: arg, T: x.T}, true
		case *Case:
			return foldCase(x), true
		case *AggCall:
			if x.Arg == nil {
				return x, true
			}
			return &AggCall{Fn: x.Fn, Arg: Fold(x.Arg), Distinct: x.Distinct, T: x.T}, true
		}
		return x, true
	})
}

// isArith reports the operators through which MySQL's decimal arithmetic keeps a
// quotient's intermediate digits (exec/expr computes such trees exact).
func isArith(fn Func) bool {
	switch fn {
	case FnAdd, FnSub, FnMul, FnDiv, FnMod, FnNeg:
		return true
	}
	return false
}

// keepsDigits reports decimal arithmetic with a decimal division in it (through arithmetic
// only): its value as an operand of further arithmetic has more digits than its declared
// type, so it must not become a literal rounded to that type under an operator over columns
// (o_orderkey*(1/3) is 0.6667 for 2, as 2*(1/3) is, not 2*0.3333).
func keepsDigits(e Expr) bool {
	c, ok := e.(*Call)
	if !ok || !isArith(c.Fn) || c.T.Kind != types.Decimal {
		return false
	}
	if c.Fn == FnDiv {
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
func foldKeepingDigits(e Expr) Expr {
	c := e.(*Call)
	args := make([]Expr, len(c.Args))
	for i, a := range c.Args {
		if keepsDigits(a) {
			args[i] = foldKeepingDigits(a)
		} else {
			args[i] = Fold(a)
		}
	}
	return &Call{Fn: c.Fn, Args: args, T: c.T}
}

// constantTree reports an expression of literals and functions only (no columns,
// aggregates, subqueries or CASE, which Fold simplifies on its own).
func constantTree(e Expr) bool {
	constant := true
	WalkExpr(e, func(x Expr) bool {
		switch x.(type) {
		case *Literal, *Call, *Cast:
		default:
			constant = false
		}
		return constant
	})
	return constant
}

func allLiterals(es []Expr) bool {
	for _, e := range es {
		if _, ok := e.(*Literal); !ok {
			return false
		}
	}
	return true
}

func foldCall(x *Call) Expr {
	if allLiterals(x.Args) {
		if v, err := Eval(x); err == nil {
			return Lit(v)
		}
		return x
	}
	switch x.Fn {
	case FnCoalesce:
		// The first non-NULL literal is the value when no column comes before it.
		for _, a := range x.Args {
			l, ok := a.(*Literal)
			if !ok {
				break
			}
			if !l.V.Null {
				if v, err := types.Convert(l.V, x.T); err == nil {
					return Lit(v)
				}
				break
			}
		}
	case FnAnd:
		var keep []Expr
		for _, a := range x.Args {
			for _, c := range Conjuncts(a) {
				if isTrue(c) {
					continue
				}
				if l, ok := c.(*Literal); ok && !l.V.Null {
					return boolLit(false)
				}
				keep = append(keep, c)
			}
		}
		if len(keep) == 0 {
			return boolLit(true)
		}
		return And(keep...)
	case FnOr:
		var keep []Expr
		for _, a := range x.Args {
			if isTrue(a) {
				return boolLit(true)
			}
			if l, ok := a.(*Literal); ok && !l.V.Null {
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
			out = NewBool(FnOr, out, k)
		}
		return out
	case FnEq:
		// x = x is true wherever x is not NULL (a decorrelated "o_orderkey IN (SELECT
		// o_orderkey …)" compares the outer column with itself).
		if r, ok := x.Args[0].(*ColumnRef); ok && Key(r) == Key(x.Args[1]) {
			return Not(NewBool(FnIsNull, r))
		}
	case FnNot:
		if inner, ok := x.Args[0].(*Call); ok && inner.Fn == FnNot {
			return inner.Args[0]
		}
		if s, ok := x.Args[0].(*Subquery); ok && s.Kind != SubqueryScalar {
			c := *s
			c.Not = !c.Not
			return &c
		}
	}
	return x
}

func foldCase(x *Case) Expr {
	out := &Case{T: x.T}
	for _, w := range x.Whens {
		cond, then := Fold(w.Cond), Fold(w.Then)
		if IsFalseOrNull(cond) {
			continue
		}
		if isTrue(cond) && len(out.Whens) == 0 {
			return then
		}
		out.Whens = append(out.Whens, When{Cond: cond, Then: then})
		if isTrue(cond) {
			out.Else = nil
			return out
		}
	}
	if x.Else != nil {
		out.Else = Fold(x.Else)
	}
	if len(out.Whens) == 0 {
		if out.Else == nil {
			return Lit(types.NullValue(x.T))
		}
		return out.Else
	}
	return out
}

// FoldPlan folds the expressions of every node of a plan (see Fold), dropping conditions
// that are always true and Filters left without conditions.
func FoldPlan(n Node) Node {
	for i, in := range n.Inputs() {
		n.SetInput(i, FoldPlan(in))
	}
	switch x := n.(type) {
	case *Scan:
		x.Filters = FoldConds(x.Filters)
	case *Values:
		for _, row := range x.Rows {
			for i := range row {
				row[i] = Fold(row[i])
			}
		}
	case *Filter:
		x.Conds = FoldConds(x.Conds)
		if len(x.Conds) == 0 {
			return x.Input
		}
	case *Project:
		for i := range x.Exprs {
			x.Exprs[i] = Fold(x.Exprs[i])
		}
	case *Join:
		x.On = FoldConds(x.On)
		if x.MarkCond != nil {
			x.MarkCond = Fold(x.MarkCond)
		}
	case *Aggregate:
		for i := range x.Groups {
			x.Groups[i] = Fold(x.Groups[i])
		}
		for _, a := range x.Aggs {
			if a.Arg != nil {
				a.Arg = Fold(a.Arg)
			}
		}
	case *Sort:
		for i := range x.Keys {
			x.Keys[i].Expr = Fold(x.Keys[i].Expr)
		}
	}
	return n
}

// FoldConds folds a list of conjuncts, splitting ANDs and dropping TRUE; a FALSE or NULL
// conjunct replaces the whole list.
func FoldConds(conds []Expr) []Expr {
	var out []Expr
	for _, c := range conds {
		for _, f := range Conjuncts(Fold(c)) {
			switch {
			case isTrue(f):
				continue
			case IsFalseOrNull(f):
				return []Expr{boolLit(false)}
			}
			out = append(out, f)
		}
	}
	return out
}

// ConstantError returns the first error that a constant part of the plan raises when it is
// evaluated (MySQL's error 1690 for BIGINT 9223372036854775807 + 1, say), or nil. Run it
// after FoldPlan: a constant that Fold could not turn into a literal is still in the plan,
// and without this check the executor would compute it on its own. Only parts evaluated
// whatever the data are checked — not the branches of a CASE, nor the operands of AND, OR
// and COALESCE after the first — because MySQL evaluates those only when it reaches them.
func ConstantError(n Node) error {
	var err error
	var check func(e Expr)
	check = func(e Expr) {
		if err != nil || e == nil {
			return
		}
		switch x := e.(type) {
		case *Subquery:
			if x.Probe != nil {
				check(x.Probe)
			}
			if err == nil {
				err = ConstantError(x.Plan)
			}
			return
		case *Case:
			if len(x.Whens) > 0 {
				check(x.Whens[0].Cond)
			}
			return
		case *Call:
			args := x.Args
			switch x.Fn {
			case FnAnd, FnOr, FnCoalesce:
				args = args[:min(len(args), 1)]
			}
			for _, a := range args {
				check(a)
			}
			if err == nil && allLiterals(x.Args) {
				err = definiteError(x)
			}
			return
		case *Cast:
			check(x.Arg)
			if _, ok := x.Arg.(*Literal); ok && err == nil {
				err = definiteError(x)
			}
			return
		}
		for _, c := range Children(e) {
			check(c)
		}
	}
	WalkPlan(n, func(n Node) bool {
		for _, e := range NodeExprs(n) {
			check(e)
		}
		return err == nil
	})
	return err
}

// definiteError evaluates a constant expression and returns its error if it is one to
// report to the client (a *sqlerr.Error), not merely a function the folder cannot compute.
func definiteError(e Expr) error {
	_, err := Eval(e)
	var se *sqlerr.Error
	if errors.As(err, &se) {
		return err
	}
	return nil
}
