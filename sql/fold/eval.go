package fold

import (
	"context"
	"errors"
	"fmt"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/sql/lower"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// ErrNotConstant reports an expression the planner does not fold: it reads columns,
// aggregates or subqueries, or reaches a call the planner leaves for exec.
var ErrNotConstant = errors.New("fold: expression is not constant")

// Eval computes a constant expression, as the constant folder, SET and INSERT … VALUES
// need; the value has e's type. Decimal arithmetic keeps MySQL's intermediate digits
// between operators, as the kernels do (1/3*3 is 1.0000). An error MySQL reports for the
// constant (1690: a value out of its type's range) is a *sqlerr.Error; ErrNotConstant, or an
// error wrapping the kernel's, otherwise. A CASE is its taken branch's value.
func Eval(e plan.Expr) (types.Value, error) {
	switch x := e.(type) {
	case *plan.Literal:
		return x.V, nil
	case *plan.Case:
		for _, w := range x.Whens {
			c, err := Eval(w.Cond)
			if err != nil {
				return types.Value{}, err
			}
			if t, known := c.Truth(); known && t {
				return Eval(w.Then)
			}
		}
		if x.Else == nil {
			return types.NullValue(x.T), nil
		}
		return Eval(x.Else)
	}
	if err := foldable(e); err != nil {
		return types.Value{}, err
	}
	return run(e)
}

// foldable returns ErrNotConstant if e is not a constant or reaches a call the planner
// leaves for exec: a volatile function, DIV of a decimal or a double into BIGINT, or a
// function whose entry declines its arguments (fn.Func.PlanFold, which sees literals only:
// over anything else the call is left, and Expr retries it once its arguments are
// literals). It does not look past the first non-NULL literal argument of COALESCE, which
// is never reached. The walk computes nothing but the CASEs it meets, so it is linear.
func foldable(e plan.Expr) error {
	switch x := e.(type) {
	case *plan.Literal:
		return nil
	case *plan.Cast:
		return foldable(x.Arg)
	case *plan.Case:
		_, err := Eval(x)
		return err
	case *plan.Call:
		if x.Fn == plan.FnCoalesce {
			for _, a := range x.Args {
				if l, ok := a.(*plan.Literal); ok && !l.V.Null {
					return nil
				}
				if err := foldable(a); err != nil {
					return err
				}
			}
			return nil
		}
		for _, a := range x.Args {
			if err := foldable(a); err != nil {
				return err
			}
		}
		if x.Fn == plan.FnIntDiv && x.T.Kind == types.Int64 && (inexact(x.Args[0]) || inexact(x.Args[1])) {
			// DIV of decimals or doubles divides, then truncates (7.5e0 DIV 2 is 3); the
			// planner has always left it to exec.
			return ErrNotConstant
		}
		f := x.Fn.Def()
		switch {
		case f == nil:
			return nil
		case f.Volatile:
			return ErrNotConstant // computed by exec, row by row (SLEEP)
		case f.PlanFold == nil:
			return nil
		}
		args := make([]vec.Datum, len(x.Args))
		for i, a := range x.Args {
			l, ok := a.(*plan.Literal)
			if !ok {
				return ErrNotConstant
			}
			d, err := lower.Datum(l.V)
			if err != nil {
				return fmt.Errorf("fold: %w", err)
			}
			args[i] = d
		}
		if !f.Folds(args) {
			return ErrNotConstant
		}
		return nil
	}
	return ErrNotConstant
}

// run computes e with the kernels on a one-row batch. An out-of-range error names the
// expression as MySQL prints it, which the lowering writes into the nodes that can fail so
// only when there is an error to name: the text of every such node is quadratic in the
// depth of a deep expression.
func run(e plan.Expr) (types.Value, error) {
	v, err := compute(e, nil)
	var ve *vec.Error
	if errors.As(err, &ve) && ve.Code == vec.CodeOutOfRange {
		if _, err = compute(e, plan.ConstantText); errors.As(err, &ve) {
			return types.Value{}, sqlerr.Wrap(err, sqlerr.ErDataOutOfRange, "%s", ve.Msg)
		}
	}
	if err != nil {
		return types.Value{}, fmt.Errorf("fold: %w", err)
	}
	return v, nil
}

// compute lowers e (with text naming the nodes that can overflow, if set) and evaluates it.
func compute(e plan.Expr, text func(plan.Expr) string) (types.Value, error) {
	x, err := lower.ExprText(e, nil, nil, text)
	if err != nil {
		return types.Value{}, err
	}
	ev, err := expr.Compile(x, nil)
	if err != nil {
		return types.Value{}, err
	}
	v, err := ev.Eval(context.Background(), &vec.Batch{N: 1})
	if err != nil {
		return types.Value{}, err
	}
	return lower.Value(v.Datum(0), e.Type())
}

// inexact reports a decimal or double operand (one DIV must divide, not first round).
func inexact(e plan.Expr) bool {
	k := e.Type().Kind
	return k == types.Decimal || k == types.Float64
}
