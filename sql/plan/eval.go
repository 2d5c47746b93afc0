package plan

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/colinkdb/colink/internal/civil"
	"github.com/colinkdb/colink/internal/libm"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// errNotConstant reports an expression that reads columns or subqueries.
var errNotConstant = fmt.Errorf("plan: expression is not constant")

// Eval computes a constant expression (one without columns, aggregates or subqueries), as
// the constant folder and SET statements need. The value has e's type. Inside e, decimal
// arithmetic passes MySQL's intermediate values from operator to operator (see
// types.DecimalArith): only the result is rounded to its declared scale, so 1/3*3 is
// 1.0000, as in MySQL, not 0.9999.
func Eval(e Expr) (types.Value, error) {
	v, err := eval(e)
	if err != nil {
		return types.Value{}, err
	}
	return settle(e, v)
}

// settle rounds an intermediate decimal (half away from zero) to e's declared type; a value
// the type cannot hold is MySQL's error 1690.
func settle(e Expr, v types.Value) (types.Value, error) {
	t := e.Type()
	if v.Type.Kind != types.Decimal || t.Kind != types.Decimal || v.Type.Equal(t) {
		return v, nil
	}
	r, err := types.Convert(v, t)
	if err != nil {
		if c, ok := e.(*Call); ok {
			return types.Value{}, rangeError(c, &types.OutOfRangeError{Type: "DECIMAL"})
		}
		return types.Value{}, err
	}
	return r, nil
}

// eval is Eval without the final rounding: an arithmetic operator's decimal result keeps
// the digits MySQL keeps between operators.
func eval(e Expr) (types.Value, error) {
	switch x := e.(type) {
	case *Literal:
		return x.V, nil
	case *Cast:
		v, err := eval(x.Arg)
		if err != nil {
			return types.Value{}, err
		}
		return types.Convert(v, x.T)
	case *Case:
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
	case *Call:
		if x.Fn.Volatile() {
			return types.Value{}, errNotConstant // computed by exec, row by row (SLEEP)
		}
		if x.Fn == FnCoalesce {
			// Lazy, as MySQL: the operands after the first non-NULL one are not evaluated.
			for _, a := range x.Args {
				v, err := Eval(a)
				if err != nil {
					return types.Value{}, err
				}
				if !v.Null {
					return types.Convert(v, x.T)
				}
			}
			return types.NullValue(x.T), nil
		}
		// Arithmetic takes its operands unrounded; every other function takes values of
		// their declared types.
		_, arith := arithOf[x.Fn]
		arith = arith || x.Fn == FnNeg
		args := make([]types.Value, len(x.Args))
		for i, a := range x.Args {
			var v types.Value
			var err error
			if arith {
				v, err = eval(a)
			} else {
				v, err = Eval(a)
			}
			if err != nil {
				return types.Value{}, err
			}
			args[i] = v
		}
		return evalCall(x, args)
	}
	return types.Value{}, errNotConstant
}

var arithOf = map[Func]types.ArithOp{FnAdd: types.OpAdd, FnSub: types.OpSub,
	FnMul: types.OpMul, FnDiv: types.OpDiv, FnIntDiv: types.OpIntDiv, FnMod: types.OpMod}

// truth3 is a three-valued condition: 1 true, 0 false, -1 unknown.
func truth3(v types.Value) int {
	t, known := v.Truth()
	switch {
	case !known:
		return -1
	case t:
		return 1
	}
	return 0
}

func bool3(t int) types.Value {
	if t < 0 {
		return types.NullValue(types.BoolType)
	}
	return types.BoolValue(t == 1)
}

func evalCall(x *Call, a []types.Value) (types.Value, error) {
	if op, ok := arithOf[x.Fn]; ok {
		// DIV of decimals or doubles divides, then truncates (7.5e0 DIV 2 is 3): exec's
		// kernels do that; types.Arithmetic would make integers of the operands first.
		if x.Fn == FnIntDiv && x.T.Kind == types.Int64 && (inexact(a[0]) || inexact(a[1])) {
			return types.Value{}, errNotConstant
		}
		if x.T.Kind == types.Decimal {
			v, err := types.DecimalArith(op, a[0], a[1])
			return v, rangeError(x, err)
		}
		v, err := types.Arithmetic(op, a[0], a[1], x.T)
		return v, rangeError(x, err)
	}
	switch x.Fn {
	case FnNeg:
		if x.T.Kind == types.Float64 && !a[0].Null {
			return types.FloatValue(-a[0].Float), nil // the sign flips: -0e0 is -0, as in the kernel
		}
		zero := types.Value{Type: a[0].Type, Int: 0, Dec: zeroDec(a[0])}
		if x.T.Kind == types.Decimal {
			v, err := types.DecimalArith(types.OpSub, zero, a[0])
			return v, rangeError(x, err)
		}
		v, err := types.Arithmetic(types.OpSub, zero, a[0], x.T)
		return v, rangeError(x, err)
	case FnAnd:
		r := 1
		for _, v := range a {
			switch truth3(v) {
			case 0:
				return types.BoolValue(false), nil
			case -1:
				r = -1
			}
		}
		return bool3(r), nil
	case FnOr:
		r := 0
		for _, v := range a {
			switch truth3(v) {
			case 1:
				return types.BoolValue(true), nil
			case -1:
				r = -1
			}
		}
		return bool3(r), nil
	case FnXor:
		l, r := truth3(a[0]), truth3(a[1])
		if l < 0 || r < 0 {
			return bool3(-1), nil
		}
		return types.BoolValue(l != r), nil
	case FnNot:
		t := truth3(a[0])
		if t < 0 {
			return bool3(-1), nil
		}
		return types.BoolValue(t == 0), nil
	case FnIsNull:
		return types.BoolValue(a[0].Null), nil
	case FnIsTrue:
		return types.BoolValue(truth3(a[0]) == 1), nil
	case FnIsFalse:
		return types.BoolValue(truth3(a[0]) == 0), nil
	case FnNullSafeEq:
		if a[0].Null || a[1].Null {
			return types.BoolValue(a[0].Null && a[1].Null), nil
		}
		c, err := types.Compare(a[0], a[1])
		if err != nil {
			return types.Value{}, err
		}
		return types.BoolValue(c == 0), nil
	case FnEq, FnNe, FnLt, FnLe, FnGt, FnGe:
		if a[0].Null || a[1].Null {
			return bool3(-1), nil
		}
		c, err := types.Compare(a[0], a[1])
		if err != nil {
			return types.Value{}, err
		}
		var r bool
		switch x.Fn {
		case FnEq:
			r = c == 0
		case FnNe:
			r = c != 0
		case FnLt:
			r = c < 0
		case FnLe:
			r = c <= 0
		case FnGt:
			r = c > 0
		case FnGe:
			r = c >= 0
		}
		return types.BoolValue(r), nil
	case FnIn:
		if a[0].Null {
			return bool3(-1), nil
		}
		r := 0
		for _, v := range a[1:] {
			if v.Null {
				r = -1
				continue
			}
			c, err := types.Compare(a[0], v)
			if err != nil {
				return types.Value{}, err
			}
			if c == 0 {
				return types.BoolValue(true), nil
			}
		}
		return bool3(r), nil
	case FnLike:
		if a[0].Null || a[1].Null {
			return bool3(-1), nil
		}
		esc, _ := utf8.DecodeRuneInString(a[2].Str)
		return types.BoolValue(types.Like(a[0].Str, a[1].Str, esc)), nil
	}
	for _, v := range a {
		if v.Null && x.Fn != FnCoalesce && x.Fn != FnConcat {
			return types.NullValue(x.T), nil
		}
	}
	switch x.Fn {
	case FnAddDays, FnAddMonths:
		add := types.AddDays
		if x.Fn == FnAddMonths {
			add = types.AddMonths
		}
		// MySQL: a result outside 0001-01-01 … 9999-12-31, whatever the interval, is NULL.
		if d, ok := add(a[0].Int, a[1].Int); ok {
			return types.DateValue(d), nil
		}
		return types.NullValue(types.DateType), nil
	case FnExtractYear, FnExtractMonth, FnExtractDay:
		y, m, d := types.CivilFromDays(a[0].Int)
		n := map[Func]int{FnExtractYear: y, FnExtractMonth: int(m), FnExtractDay: d}[x.Fn]
		return types.Value{Type: x.T, Int: int64(n)}, nil
	case FnQuarter, FnYearMonth, FnWeek, FnDayOfWeek, FnWeekday, FnDayOfYear:
		return types.Value{Type: x.T, Int: int64(datePart(x.Fn, a[0].Int))}, nil
	case FnLeft, FnRight:
		r := []rune(a[0].Str)
		n := a[1].Int
		switch {
		case n <= 0:
			return types.Value{Type: x.T, Str: ""}, nil
		case n >= int64(len(r)):
			return types.Value{Type: x.T, Str: a[0].Str}, nil
		case x.Fn == FnLeft:
			return types.Value{Type: x.T, Str: string(r[:n])}, nil
		}
		return types.Value{Type: x.T, Str: string(r[int64(len(r))-n:])}, nil
	case FnReplace:
		if a[1].Str == "" {
			return types.Value{Type: x.T, Str: a[0].Str}, nil
		}
		return types.Value{Type: x.T, Str: strings.ReplaceAll(a[0].Str, a[1].Str, a[2].Str)}, nil
	case FnReverse:
		r := []rune(a[0].Str)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return types.Value{Type: x.T, Str: string(r)}, nil
	case FnStrcmp:
		return types.Value{Type: x.T, Int: int64(strings.Compare(a[0].Str, a[1].Str))}, nil
	case FnSign:
		c, err := types.Compare(a[0], types.Value{Type: a[0].Type, Dec: zeroDec(a[0])})
		if err != nil {
			return types.Value{}, err
		}
		return types.Value{Type: x.T, Int: int64(c)}, nil
	case FnSqrt, FnExp, FnLn, FnLog2, FnLog10, FnPow:
		for i := range a {
			var err error
			if a[i], err = types.Convert(a[i], types.Float64Type); err != nil {
				return types.Value{}, err
			}
		}
		f := a[0].Float
		var r float64
		switch x.Fn {
		case FnSqrt:
			if f < 0 {
				return types.NullValue(x.T), nil // MySQL: NULL, with a warning
			}
			r = math.Sqrt(f)
		case FnLn, FnLog2, FnLog10:
			if f <= 0 {
				return types.NullValue(x.T), nil
			}
			switch x.Fn {
			case FnLn:
				r = libm.Log(f)
			case FnLog2:
				r = libm.Log2(f)
			default:
				r = libm.Log10(f)
			}
		case FnExp:
			r = libm.Exp(f)
		case FnPow:
			r = libm.Pow(f, a[1].Float)
		}
		if math.IsInf(r, 0) || math.IsNaN(r) {
			return types.Value{}, rangeError(x, &types.OutOfRangeError{Type: "DOUBLE"})
		}
		return types.FloatValue(r), nil
	case FnSubstring:
		// MySQL: characters, not bytes; position 1 is the first character, a negative one
		// counts from the end, 0 (or one past either end) gives the empty string, and so
		// does a length below 1. All arithmetic stays within [0, len] so no int64 count
		// can overflow.
		r := []rune(a[0].Str)
		size := int64(len(r))
		pos := a[1].Int
		var start int64
		switch {
		case pos > 0 && pos <= size:
			start = pos - 1
		case pos < 0 && pos >= -size:
			start = size + pos
		default:
			return types.Value{Type: x.T, Str: ""}, nil
		}
		n := size - start
		if len(a) > 2 {
			if a[2].Int < 1 {
				return types.Value{Type: x.T, Str: ""}, nil
			}
			n = min(n, a[2].Int)
		}
		return types.Value{Type: x.T, Str: string(r[start : start+n])}, nil
	case FnUpper:
		return types.Value{Type: x.T, Str: strings.ToUpper(a[0].Str)}, nil
	case FnLower:
		return types.Value{Type: x.T, Str: strings.ToLower(a[0].Str)}, nil
	case FnLength:
		return types.Value{Type: x.T, Int: int64(len(a[0].Str))}, nil
	case FnCharLength:
		return types.Value{Type: x.T, Int: int64(utf8.RuneCountInString(a[0].Str))}, nil
	case FnConcat:
		var sb strings.Builder
		for _, v := range a {
			if v.Null {
				return types.NullValue(x.T), nil
			}
			sb.WriteString(v.Str)
		}
		return types.Value{Type: x.T, Str: sb.String()}, nil
	case FnCoalesce:
		for _, v := range a {
			if !v.Null {
				return types.Convert(v, x.T)
			}
		}
		return types.NullValue(x.T), nil
	case FnAbs:
		c, err := types.Compare(a[0], types.Value{Type: a[0].Type, Dec: zeroDec(a[0])})
		if err != nil {
			return types.Value{}, err
		}
		if c < 0 {
			v, err := types.Arithmetic(types.OpSub, types.Value{Type: a[0].Type, Dec: zeroDec(a[0])}, a[0], x.T)
			return v, rangeError(x, err)
		}
		return types.Convert(a[0], x.T)
	case FnRound:
		switch x.T.Kind {
		case types.Decimal:
			if a[1].Int >= 0 {
				return types.Convert(a[0], x.T) // rounds half away from zero
			}
		case types.Float64:
			// MySQL rounds doubles with rint: halves to even.
			p := math.Pow(10, float64(a[1].Int))
			return types.FloatValue(math.RoundToEven(a[0].Float*p) / p), nil
		case types.Int64:
			if a[1].Int >= 0 {
				return types.Convert(a[0], x.T)
			}
		}
	}
	return types.Value{}, errNotConstant
}

// rangeError turns an arithmetic result out of its type's range into MySQL's error 1690,
// which names the expression as MySQL prints it: "BIGINT value is out of range in
// '(9223372036854775807 + 1)'". Other errors pass unchanged.
func rangeError(x *Call, err error) error {
	var oor *types.OutOfRangeError
	if !errors.As(err, &oor) {
		return err
	}
	return sqlerr.Wrap(err, sqlerr.ErDataOutOfRange, "%s value is out of range in '%s'", oor.Type, mysqlText(x))
}

// mysqlText prints a constant arithmetic expression as MySQL's error messages do: every
// binary operation in parentheses, a negation as -(x).
func mysqlText(e Expr) string {
	return errorText(e, func(e Expr) string { return FormatExpr(e, nil) })
}

// MySQLText prints e as MySQL's out-of-range errors (1690) name an expression, as the
// folder prints a constant one ("(9223372036854775807 + 1)"), with columns named as EXPLAIN
// names them ("(o_orderkey + 1)"). The lowering to exec attaches it to the nodes whose
// kernels can raise that error, so that both name the expression alike.
func (n *Namer) MySQLText(e Expr) string { return errorText(e, n.Expr) }

// errorText prints arithmetic and negation as MySQL's error messages do and everything else
// with format. A numeric operand converted to DOUBLE or DECIMAL prints as the operand: the
// binder adds such casts to mix types, and MySQL's text shows the expression as written
// ("(o_totalprice * 1e308)"); an explicit CAST of a number is left out too (a deviation, in
// an error message only).
func errorText(e Expr, format func(Expr) string) string {
	if c, ok := e.(*Cast); ok && c.Arg.Type().IsNumeric() && (c.T.Kind == types.Float64 || c.T.Kind == types.Decimal) {
		return errorText(c.Arg, format)
	}
	if l, ok := e.(*Literal); ok && !l.V.Null && l.V.Type.Kind == types.Float64 {
		return strings.Replace(strconv.FormatFloat(l.V.Float, 'g', -1, 64), "e+", "e", 1) // 1e308
	}
	x, ok := e.(*Call)
	if !ok {
		return format(e)
	}
	if x.Fn == FnNeg && len(x.Args) == 1 {
		return "-(" + errorText(x.Args[0], format) + ")"
	}
	if _, arith := arithOf[x.Fn]; arith && len(x.Args) == 2 {
		op := funcs[x.Fn].infix
		if x.Fn == FnIntDiv {
			op = "DIV"
		}
		return "(" + errorText(x.Args[0], format) + " " + op + " " + errorText(x.Args[1], format) + ")"
	}
	switch x.Fn {
	case FnAbs, FnRound, FnTruncate, FnFloor, FnCeil, FnSqrt, FnPow, FnExp, FnLn, FnLog10, FnLog2:
		// The numeric functions that can overflow print as name(args), the arguments as
		// this function prints them: exp((o_orderkey * 1000)), as MySQL.
		args := make([]string, len(x.Args))
		for i, a := range x.Args {
			args[i] = errorText(a, format)
		}
		return x.Fn.String() + "(" + strings.Join(args, ", ") + ")"
	}
	return format(e)
}

// inexact reports a decimal or double value (an operand DIV must divide, not first round).
func inexact(v types.Value) bool {
	return v.Type.Kind == types.Decimal || v.Type.Kind == types.Float64
}

// zeroDec is a zero unscaled decimal when v is a decimal (nil otherwise).
func zeroDec(v types.Value) *big.Int {
	if v.Type.Kind == types.Decimal {
		return new(big.Int)
	}
	return nil
}

// datePart is QUARTER, EXTRACT(YEAR_MONTH), WEEK (mode 0), DAYOFWEEK, WEEKDAY or DAYOFYEAR
// of a DATE (days since 1970-01-01), as exec's extract kernels compute them.
func datePart(fn Func, days int64) int {
	switch fn {
	case FnQuarter, FnYearMonth:
		y, m, _ := civil.Date(days)
		if fn == FnYearMonth {
			return y*100 + m
		}
		return (m + 2) / 3
	case FnWeek:
		return civil.WeekSundayFirst(days)
	case FnDayOfWeek:
		return (civil.Weekday(days)+1)%7 + 1
	case FnWeekday:
		return civil.Weekday(days)
	}
	return civil.DayOfYear(days)
}
