package expr

import (
	"fmt"

	"github.com/colinkdb/colink/exec/fn"
	"github.com/colinkdb/colink/exec/vec"
)

// TypeOf checks e against input columns of the given types and returns its result type.
func TypeOf(e *Expr, input []vec.Type) (vec.Type, error) {
	if d := depth(e, 0); d > MaxDepth {
		return vec.Type{}, fmt.Errorf("expr: nested more than %d levels deep", MaxDepth)
	}
	return typeOf(e, input)
}

// MaxDepth bounds an expression's nesting, so that a malformed or hostile plan is refused
// instead of exhausting the stack.
const MaxDepth = 512

func depth(e *Expr, d int) int {
	if e == nil || d > MaxDepth {
		return d
	}
	m := d
	for _, a := range e.Args {
		m = max(m, depth(a, d+1))
		if m > MaxDepth {
			break
		}
	}
	return m
}

func typeOf(e *Expr, input []vec.Type) (vec.Type, error) {
	if e == nil {
		return vec.Type{}, errorf(e, "missing expression")
	}
	t, err := typeOfNode(e, input)
	if err != nil {
		return t, err
	}
	if e.Op != OpCast && e.Op != OpConst && e.Type.ID != vec.Invalid && e.Type != t {
		return t, errorf(e, "declared type %s but computes %s", e.Type, t)
	}
	return t, nil
}

func argTypes(e *Expr, input []vec.Type) ([]vec.Type, error) {
	ts := make([]vec.Type, len(e.Args))
	for i, a := range e.Args {
		t, err := typeOf(a, input)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	return ts, nil
}

func wantArgs(e *Expr, lo, hi int) error {
	if len(e.Args) < lo || (hi >= 0 && len(e.Args) > hi) {
		if lo == hi {
			return errorf(e, "%s takes %d arguments, has %d", e.Op, lo, len(e.Args))
		}
		return errorf(e, "%s takes %d or more arguments, has %d", e.Op, lo, len(e.Args))
	}
	return nil
}

func typeOfNode(e *Expr, input []vec.Type) (vec.Type, error) {
	switch e.Op {
	case OpCol:
		if e.Col < 0 || e.Col >= len(input) {
			return vec.Type{}, errorf(e, "column #%d does not exist (input has %d columns)", e.Col, len(input))
		}
		return input[e.Col], nil
	case OpConst:
		if err := e.Value.Validate(); err != nil {
			return vec.Type{}, errorf(e, "%v", err)
		}
		return e.Value.Type, nil
	}
	ts, err := argTypes(e, input)
	if err != nil {
		return vec.Type{}, err
	}
	switch e.Op {
	case OpAdd, OpSub, OpMul, OpDiv, OpMod:
		if err := wantArgs(e, 2, 2); err != nil {
			return vec.Type{}, err
		}
		return arithType(e, e.Op, e.Args[0], e.Args[1], ts[0], ts[1])
	case OpNeg:
		if err := wantArgs(e, 1, 1); err != nil {
			return vec.Type{}, err
		}
		switch {
		case ts[0].IsInteger():
			return vec.Int64Type, nil
		case ts[0].IsNumeric():
			return ts[0], nil
		}
		return vec.Type{}, errorf(e, "cannot negate %s", ts[0])
	case OpEq, OpNe, OpLt, OpLe, OpGt, OpGe:
		if err := wantArgs(e, 2, 2); err != nil {
			return vec.Type{}, err
		}
		if _, err := compareType(e, e.Args[0], e.Args[1], ts[0], ts[1]); err != nil {
			return vec.Type{}, err
		}
		return vec.BoolType, nil
	case OpAnd, OpOr:
		if err := wantArgs(e, 2, -1); err != nil {
			return vec.Type{}, err
		}
		for i, t := range ts {
			if t.ID != vec.Bool {
				return vec.Type{}, errorf(e, "argument %d of %s is %s, not bool", i+1, e.Op, t)
			}
		}
		return vec.BoolType, nil
	case OpNot:
		if err := wantArgs(e, 1, 1); err != nil {
			return vec.Type{}, err
		}
		if ts[0].ID != vec.Bool {
			return vec.Type{}, errorf(e, "not of %s", ts[0])
		}
		return vec.BoolType, nil
	case OpIsNull, OpIsNotNull:
		if err := wantArgs(e, 1, 1); err != nil {
			return vec.Type{}, err
		}
		return vec.BoolType, nil
	case OpIn:
		if err := wantArgs(e, 2, -1); err != nil {
			return vec.Type{}, err
		}
		for i := 1; i < len(ts); i++ {
			if _, err := compareType(e, e.Args[0], e.Args[i], ts[0], ts[i]); err != nil {
				return vec.Type{}, err
			}
		}
		return vec.BoolType, nil
	case OpLike:
		if err := wantArgs(e, 2, 2); err != nil {
			return vec.Type{}, err
		}
		if ts[0].ID != vec.String || ts[1].ID != vec.String {
			return vec.Type{}, errorf(e, "like needs strings, has %s and %s", ts[0], ts[1])
		}
		return vec.BoolType, nil
	case OpBetween:
		if err := wantArgs(e, 3, 3); err != nil {
			return vec.Type{}, err
		}
		for i := 1; i < 3; i++ {
			if _, err := compareType(e, e.Args[0], e.Args[i], ts[0], ts[i]); err != nil {
				return vec.Type{}, err
			}
		}
		return vec.BoolType, nil
	case OpCase:
		if err := wantArgs(e, 2, -1); err != nil {
			return vec.Type{}, err
		}
		var results []*Expr
		var rts []vec.Type
		for i := 0; i+1 < len(e.Args); i += 2 {
			if ts[i].ID != vec.Bool {
				return vec.Type{}, errorf(e, "when condition %d is %s, not bool", i/2+1, ts[i])
			}
			results, rts = append(results, e.Args[i+1]), append(rts, ts[i+1])
		}
		if len(e.Args)%2 == 1 {
			results, rts = append(results, e.Args[len(e.Args)-1]), append(rts, ts[len(ts)-1])
		}
		return commonType(e, results, rts)
	case OpCaseSimple:
		if err := wantArgs(e, 3, -1); err != nil {
			return vec.Type{}, err
		}
		var results []*Expr
		var rts []vec.Type
		for i := 1; i+1 < len(e.Args); i += 2 {
			if _, err := compareType(e, e.Args[0], e.Args[i], ts[0], ts[i]); err != nil {
				return vec.Type{}, err
			}
			results, rts = append(results, e.Args[i+1]), append(rts, ts[i+1])
		}
		if len(e.Args)%2 == 0 {
			results, rts = append(results, e.Args[len(e.Args)-1]), append(rts, ts[len(ts)-1])
		}
		return commonType(e, results, rts)
	case OpCoalesce:
		if err := wantArgs(e, 1, -1); err != nil {
			return vec.Type{}, err
		}
		return commonType(e, e.Args, ts)
	case OpDateAdd, OpDateSub:
		if err := wantArgs(e, 2, 2); err != nil {
			return vec.Type{}, err
		}
		if ts[0].ID != vec.Date32 && ts[0].ID != vec.Datetime {
			return vec.Type{}, errorf(e, "%s on %s, not a date or datetime", e.Op, ts[0])
		}
		if !isIntegral(ts[1]) {
			return vec.Type{}, errorf(e, "interval count is %s, not an integer", ts[1])
		}
		switch e.Unit {
		case UnitYear, UnitMonth, UnitDay:
			return ts[0], nil
		case UnitHour, UnitMinute, UnitSecond, UnitMicrosecond:
			return vec.DatetimeType, nil
		}
		return vec.Type{}, errorf(e, "interval unit %q is not year, month, day, hour, minute, second or microsecond", e.Unit)
	case OpIntDiv:
		if err := wantArgs(e, 2, 2); err != nil {
			return vec.Type{}, err
		}
		ta, tb := ts[0], ts[1]
		if !ta.IsNumeric() || !tb.IsNumeric() {
			ta, tb = adoptNull(e.Args[0], e.Args[1], ta, tb)
		}
		if (!ta.IsNumeric() && !e.Args[0].IsNullConst()) || (!tb.IsNumeric() && !e.Args[1].IsNullConst()) {
			return vec.Type{}, errorf(e, "div of %s and %s", ts[0], ts[1])
		}
		return vec.Int64Type, nil
	case OpCast:
		if err := wantArgs(e, 1, 1); err != nil {
			return vec.Type{}, err
		}
		if err := e.Type.Validate(); err != nil {
			return vec.Type{}, errorf(e, "cast target: %v", err)
		}
		if !castable(ts[0], e.Type) {
			return vec.Type{}, errorf(e, "cannot cast %s to %s", ts[0], e.Type)
		}
		return e.Type, nil
	}
	_, sig, err := funcOf(e, ts)
	if err != nil {
		return vec.Type{}, err
	}
	return sig.Result.Type, nil
}

// isIntegral accepts integers and scale-0 decimals.
func isIntegral(t vec.Type) bool {
	return t.IsInteger() || (t.IsDecimal() && t.Scale == 0)
}

// argOf describes operand e, of type t, to the type rules operators share with functions
// (package fn); e may be nil for a type that is no operand's own.
func argOf(e *Expr, t vec.Type) fn.Arg {
	a := fn.Arg{Type: fn.Type{Type: t}}
	if e != nil && e.IsConst() {
		a.Const = &e.Value
	}
	return a
}

// digitsOf is the precision an operand contributes to decimal arithmetic (fn.Digits).
func digitsOf(e *Expr, t vec.Type) int32 { return fn.Digits(argOf(e, t)) }

// adoptNull gives a NULL constant the other operand's type (used when the NULL's own type
// does not suit the operation).
func adoptNull(a, b *Expr, ta, tb vec.Type) (vec.Type, vec.Type) {
	if a != nil && a.IsNullConst() && (b == nil || !b.IsNullConst()) {
		ta = tb
	} else if b != nil && b.IsNullConst() && (a == nil || !a.IsNullConst()) {
		tb = ta
	}
	return ta, tb
}

func arithType(e *Expr, op Op, a, b *Expr, ta, tb vec.Type) (vec.Type, error) {
	if !ta.IsNumeric() || !tb.IsNumeric() {
		ta, tb = adoptNull(a, b, ta, tb)
	}
	if !ta.IsNumeric() || !tb.IsNumeric() {
		return vec.Type{}, errorf(e, "arithmetic %s on %s and %s", op, ta, tb)
	}
	if ta.ID == vec.Float64 || tb.ID == vec.Float64 {
		return vec.Float64Type, nil
	}
	if ta.IsInteger() && tb.IsInteger() && op != OpDiv {
		return vec.Int64Type, nil
	}
	p1, s1 := digitsOf(a, ta), ta.DecimalScale()
	p2, s2 := digitsOf(b, tb), tb.DecimalScale()
	switch op {
	case OpAdd, OpSub:
		s := max(s1, s2)
		return vec.Decimal(max(p1-s1, p2-s2)+s+1, s), nil
	case OpMul:
		return vec.Decimal(p1+p2, s1+s2), nil
	case OpDiv:
		s := min(s1+4, vec.MaxScale)
		return vec.Decimal(p1+s2+4, s), nil
	case OpMod:
		s := max(s1, s2)
		return vec.Decimal(max(p1-s1, p2-s2)+s, s), nil
	}
	return vec.Type{}, errorf(e, "unknown arithmetic %s", op)
}

// compareType returns the type both sides of a comparison are converted to.
func compareType(e *Expr, a, b *Expr, ta, tb vec.Type) (vec.Type, error) {
	t, err := compareTypeStrict(e, a, b, ta, tb)
	if err != nil && (a.IsNullConst() || b.IsNullConst()) {
		ta, tb = adoptNull(a, b, ta, tb)
		return compareTypeStrict(e, a, b, ta, tb)
	}
	return t, err
}

func compareTypeStrict(e *Expr, a, b *Expr, ta, tb vec.Type) (vec.Type, error) {
	switch {
	case ta.ID == vec.String && tb.ID == vec.String:
		return vec.StringType, nil
	case ta.ID == vec.Date32 && tb.ID == vec.Date32:
		return vec.DateType, nil
	case ta.ID == vec.Datetime && (tb.ID == vec.Datetime || tb.ID == vec.Date32),
		tb.ID == vec.Datetime && ta.ID == vec.Date32:
		return vec.DatetimeType, nil // a DATE is its midnight
	case ta.ID == vec.Datetime && tb.ID == vec.String && b.IsConst(),
		tb.ID == vec.Datetime && ta.ID == vec.String && a.IsConst():
		return vec.DatetimeType, nil
	case ta.ID == vec.Date32 && tb.ID == vec.String && b.IsConst(),
		tb.ID == vec.Date32 && ta.ID == vec.String && a.IsConst():
		return vec.DateType, nil
	case ta.ID == vec.Bool && tb.ID == vec.Bool:
		return vec.BoolType, nil
	case ta.IsNumeric() && tb.IsNumeric():
		return numericCommon(a, b, ta, tb), nil
	}
	return vec.Type{}, errorf(e, "cannot compare %s with %s", ta, tb)
}

// numericCommon is the type two numbers are compared (or unified) in (fn.NumericCommon).
func numericCommon(a, b *Expr, ta, tb vec.Type) vec.Type {
	return fn.NumericCommon(argOf(a, ta), argOf(b, tb))
}

// commonType unifies the types of CASE results or COALESCE arguments (fn.Common).
func commonType(e *Expr, args []*Expr, ts []vec.Type) (vec.Type, error) {
	as := make([]fn.Arg, len(args))
	for i, a := range args {
		as[i] = argOf(a, ts[i])
	}
	t, err := fn.Common(string(e.Op), as)
	if err != nil {
		return vec.Type{}, errorf(e, "%v", err)
	}
	return t.Type, nil
}

// castable reports whether CAST(from AS to) is supported.
func castable(from, to vec.Type) bool {
	if from == to {
		return true
	}
	switch to.ID {
	case vec.Bool:
		return from.IsNumeric() || from.ID == vec.Bool
	case vec.Int32, vec.Int64, vec.Float64, vec.Decimal64, vec.Decimal128:
		return from.IsNumeric() || from.ID == vec.String || from.ID == vec.Bool || ((from.ID == vec.Date32 || from.ID == vec.Datetime) && to.ID != vec.Float64)
	case vec.Date32, vec.Datetime:
		return from.ID == vec.String || from.ID == vec.Date32 || from.ID == vec.Datetime
	case vec.String:
		return true
	}
	return false
}
