package bind

import (
	"github.com/colinkdb/colink/sql/fold"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// sameCarrier reports whether values of type from need no conversion to be read as type
// to: equal types, two string types, or two integers of one width.
func sameCarrier(from, to types.Type) bool {
	switch {
	case from.Equal(to):
		return true
	case from.IsString() && to.IsString():
		return true
	}
	return false
}

// castTo converts e to type t: a literal is converted now (failing as MySQL does on a value
// the type cannot hold), any other expression gets a Cast.
func (b *Binder) castTo(e plan.Expr, t types.Type, text string) (plan.Expr, error) {
	if sameCarrier(e.Type(), t) {
		return e, nil
	}
	if l, ok := e.(*plan.Literal); ok {
		v, err := types.Convert(l.V, t)
		if err != nil {
			switch t.Kind {
			case types.Date:
				return nil, sqlerr.New(sqlerr.ErWrongValue, "Incorrect DATE value: '%s'", l.V.Text())
			case types.Datetime:
				return nil, sqlerr.New(sqlerr.ErWrongValue, "Incorrect DATETIME value: '%s'", l.V.Text())
			}
			return nil, sqlerr.New(sqlerr.ErTruncatedWrongValue, "Truncated incorrect %s value: '%s' in '%s'", t, l.V.Text(), text)
		}
		return plan.Lit(v), nil
	}
	return &plan.Cast{Arg: e, T: t}, nil
}

// castExpr is castTo for conversions that cannot fail.
func (b *Binder) castExpr(e plan.Expr, t types.Type) plan.Expr {
	c, err := b.castTo(e, t, "")
	if err != nil {
		return &plan.Cast{Arg: e, T: t}
	}
	return c
}

// commonForCompare is the type two operands are compared in. A literal takes the other
// operand's type when it converts to it without loss, so "p_size = 15" compares INTs and
// "o_orderdate < '1995-03-15'" compares DATEs; otherwise both meet in types.Common.
func (b *Binder) commonForCompare(l, r plan.Expr) (types.Type, bool) {
	ll, lok := l.(*plan.Literal)
	rl, rok := r.(*plan.Literal)
	if lok != rok {
		lit, other := ll, r
		if rok {
			lit, other = rl, l
		}
		if t := other.Type(); !lit.V.Null && t.Kind != types.Null && lossless(lit.V, t) {
			return t, true
		}
		if fsp, ok := datetimeFsp(lit); ok && other.Type().Kind == types.Date {
			// A DATE compared with a time of day is its midnight, as in MySQL:
			// d < '1995-03-15 10:00' holds for 1995-03-15.
			return types.DatetimeType(fsp), true
		}
	}
	return types.Common(l.Type(), r.Type())
}

// resultType is the type two values of a result merge into, by MySQL's aggregation of
// result types (not its comparison rules, types.Common): NULL takes the other type,
// numbers widen (integers to BIGINT, integers and decimals to a decimal wide enough for
// both, anything with a DOUBLE to DOUBLE), strings meet as VARCHAR, two dates stay a DATE,
// and a string or date mixed with anything else makes a VARCHAR long enough for the other
// value's text (CASE WHEN … THEN 1 ELSE 'a' END is '1' or 'a'; a date with a number too).
func resultType(a, b types.Type) (types.Type, bool) {
	switch {
	case a.Kind == types.Null:
		return b, true
	case b.Kind == types.Null:
		return a, true
	case a.IsNumeric() && b.IsNumeric(), a.IsString() && b.IsString(),
		(a.Kind == types.Date || a.Kind == types.Datetime) && (b.Kind == types.Date || b.Kind == types.Datetime):
		return types.Common(a, b)
	}
	wa, oka := textWidth(a)
	wb, okb := textWidth(b)
	if !oka || !okb {
		return types.Type{}, false
	}
	return types.VarcharType(max(wa, wb)), true
}

// textWidth is the longest text of a value of type t, false for types without a text form.
func textWidth(t types.Type) (int, bool) {
	switch t.Kind {
	case types.Char, types.Varchar:
		return t.Length, true
	case types.Bool:
		return 1, true
	case types.Int32:
		return 11, true
	case types.Int64:
		return 20, true
	case types.Decimal:
		return t.Precision + 2, true
	case types.Float64:
		return 23, true
	case types.Date:
		return 10, true
	case types.Datetime:
		if t.Scale > 0 {
			return 20 + t.Scale, true
		}
		return 19, true
	}
	return 0, false
}

// lossless reports whether v converts to t and back to the same value.
func lossless(v types.Value, t types.Type) bool {
	if v.Type.IsString() && t.IsString() {
		return true
	}
	c, err := types.Convert(v, t)
	if err != nil {
		return false
	}
	back, err := types.Convert(c, v.Type)
	if err != nil {
		return false
	}
	cmp, err := types.Compare(back, v)
	return err == nil && cmp == 0
}

// constant folds an expression that reads no columns into a literal (1 + 10 becomes 11),
// so comparisons type it as a literal.
func constant(e plan.Expr) plan.Expr {
	if _, ok := e.(*plan.Literal); ok {
		return e
	}
	pure := true
	plan.WalkExpr(e, func(x plan.Expr) bool {
		switch x.(type) {
		case *plan.ColumnRef, *plan.AggCall, *plan.Subquery, *plan.InputRef:
			pure = false
		}
		return pure
	})
	if !pure {
		return e
	}
	if v, err := fold.Eval(e); err == nil {
		return plan.Lit(v)
	}
	return e
}

// compare builds "l fn r" with both operands in their comparison type.
func (b *Binder) compare(fn plan.Func, l, r plan.Expr, text string) (plan.Expr, error) {
	l, r = constant(l), constant(r)
	t, ok := b.commonForCompare(l, r)
	if !ok {
		return nil, sqlerr.New(sqlerr.ErWrongArguments, "Incorrect arguments to comparison: cannot compare %s with %s in '%s'", l.Type(), r.Type(), text)
	}
	if t.Kind == types.Null {
		// Both sides are NULL: any comparison is NULL, but NULL <=> NULL is true.
		if fn == plan.FnNullSafeEq {
			return plan.Lit(types.BoolValue(true)), nil
		}
		return plan.Lit(types.NullValue(types.BoolType)), nil
	}
	l, err := b.castTo(l, t, text)
	if err != nil {
		return nil, err
	}
	if r, err = b.castTo(r, t, text); err != nil {
		return nil, err
	}
	return plan.NewBool(fn, l, r), nil
}

// numeric makes an arithmetic operand of e: numbers as they are, a string literal read as
// a number (as MySQL reads it), anything else an error.
func (b *Binder) numeric(e plan.Expr, op, text string) (plan.Expr, error) {
	t := e.Type()
	if t.IsNumeric() || t.Kind == types.Null {
		return e, nil
	}
	if l, ok := e.(*plan.Literal); ok && t.IsString() {
		if d, err := types.ParseDecimal(l.V.Str); err == nil {
			return plan.Lit(d), nil
		}
		return nil, sqlerr.New(sqlerr.ErTruncatedWrongValue, "Truncated incorrect DECIMAL value: '%s'", l.V.Str)
	}
	hint := ""
	if t.Kind == types.Date || t.Kind == types.Datetime {
		hint = " (use INTERVAL for date arithmetic)"
	}
	return nil, sqlerr.New(sqlerr.ErWrongArguments, "Incorrect arguments to %s: '%s' is %s, not a number%s", op, text, t, hint)
}

var arithNames = map[plan.Func]string{plan.FnAdd: "+", plan.FnSub: "-", plan.FnMul: "*",
	plan.FnDiv: "/", plan.FnIntDiv: "DIV", plan.FnMod: "%"}

// arith builds "l fn r" typed by MySQL's rules, with operands converted so a kernel sees
// one representation: BIGINT or DOUBLE operands for those results; for a decimal result,
// decimal operands, at the result's scale for + - and %.
func (b *Binder) arith(fn plan.Func, op types.ArithOp, l, r plan.Expr, text string) (plan.Expr, error) {
	name := arithNames[fn]
	l, err := b.numeric(l, name, text)
	if err != nil {
		return nil, err
	}
	if r, err = b.numeric(r, name, text); err != nil {
		return nil, err
	}
	t, err := types.Arith(op, l.Type(), r.Type())
	if err != nil {
		return nil, sqlerr.New(sqlerr.ErWrongArguments, "Incorrect arguments to %s in '%s': %v", name, text, err)
	}
	operand := func(e plan.Expr) (plan.Expr, error) {
		et := e.Type()
		switch t.Kind {
		case types.Int64, types.Float64:
			if op == types.OpIntDiv && !et.IsInteger() {
				return e, nil // DIV of decimals (and doubles) divides, then truncates
			}
			return b.castTo(e, types.Type{Kind: t.Kind}, text)
		case types.Decimal:
			p, s := types.DecimalView(et)
			if et.Kind == types.Null {
				return b.castTo(e, t, text)
			}
			switch op {
			case types.OpAdd, types.OpSub, types.OpMod:
				return b.castTo(e, types.Dec(p-s+t.Scale, t.Scale), text)
			}
			if et.Kind != types.Decimal {
				return b.castTo(e, types.Dec(p, s), text)
			}
		}
		return e, nil
	}
	if l, err = operand(l); err != nil {
		return nil, err
	}
	if r, err = operand(r); err != nil {
		return nil, err
	}
	return &plan.Call{Fn: fn, Args: []plan.Expr{l, r}, T: t}, nil
}

// toString makes a string operand of e (LIKE, string functions): strings as they are,
// other values cast to VARCHAR.
func (b *Binder) toString(e plan.Expr, text string) (plan.Expr, error) {
	t := e.Type()
	switch {
	case t.IsString():
		return e, nil
	case t.Kind == types.Null:
		return plan.Lit(types.NullValue(types.VarcharType(0))), nil
	case t.Kind == types.Bool:
		return nil, sqlerr.New(sqlerr.ErWrongArguments, "Incorrect arguments to a string function: '%s' is a condition", text)
	}
	n := 20
	if t.Kind == types.Decimal {
		n = t.Precision + 2
	} else if w, ok := textWidth(t); ok && (t.Kind == types.Date || t.Kind == types.Datetime) {
		n = w
	}
	return b.castTo(e, types.VarcharType(n), text)
}
