package types

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/colinkdb/colink/internal/civil"
	"github.com/colinkdb/colink/internal/textparse"
)

// Convert casts v to type t as MySQL's CAST and implicit conversions do for the cases the
// engine supports; it fails on a value the target cannot hold (a string that is not a
// number or a date, a decimal out of the target's precision).
func Convert(v Value, t Type) (Value, error) {
	if v.Null {
		return NullValue(t), nil
	}
	from := v.Type
	if from.Equal(t) {
		v.Type = t
		return v, nil
	}
	switch t.Kind {
	case Bool:
		truth, _ := v.Truth()
		return BoolValue(truth), nil
	case Int32, Int64:
		var i int64
		switch from.Kind {
		case Bool, Int32, Int64:
			i = v.Int
		case Decimal:
			r := roundScaled(v.Dec, from.Scale, 0)
			if !r.IsInt64() {
				return Value{}, fmt.Errorf("value %s is out of range for %s", v, t)
			}
			i = r.Int64()
		case Float64:
			if math.IsNaN(v.Float) || math.Abs(v.Float) >= 9.2e18 {
				return Value{}, fmt.Errorf("value %s is out of range for %s", v, t)
			}
			// MySQL's CAST(double AS SIGNED) is rint: half to even (2.5 is 2).
			i = int64(math.RoundToEven(v.Float))
		case Char, Varchar:
			n, err := textparse.Int([]byte(v.Str), textparse.UnicodeSpace)
			if err != nil {
				// Any number MySQL reads as a double gives its integer part as written, as
				// in MySQL ('12.9' is 12, '1e3' is 1; MySQL also warns).
				if _, ferr := strconv.ParseFloat(strings.TrimSpace(v.Str), 64); ferr != nil {
					return Value{}, fmt.Errorf("truncated incorrect INTEGER value: '%s'", v.Str)
				}
				p, perr := textparse.IntPrefix([]byte(v.Str), textparse.UnicodeSpace)
				if perr != nil {
					return Value{}, fmt.Errorf("value %s is out of range for %s", v, t)
				}
				n = p
			}
			i = n
		default:
			return Value{}, fmt.Errorf("cannot convert %s to %s", from, t)
		}
		if t.Kind == Int32 && (i < math.MinInt32 || i > math.MaxInt32) {
			return Value{}, fmt.Errorf("value %d is out of range for int", i)
		}
		return Value{Type: t, Int: i}, nil
	case Decimal:
		var u *big.Int
		switch from.Kind {
		case Bool, Int32, Int64:
			u = new(big.Int).Mul(big.NewInt(v.Int), Pow10(t.Scale))
		case Decimal:
			u = roundScaled(v.Dec, from.Scale, t.Scale)
		case Float64:
			r := new(big.Float).SetFloat64(v.Float)
			r.Mul(r, new(big.Float).SetInt(Pow10(t.Scale)))
			// Round half away from zero.
			if r.Sign() >= 0 {
				r.Add(r, big.NewFloat(0.5))
			} else {
				r.Sub(r, big.NewFloat(0.5))
			}
			u, _ = r.Int(nil)
		case Char, Varchar:
			d, err := ParseDecimal(v.Str)
			if err != nil {
				return Value{}, fmt.Errorf("truncated incorrect DECIMAL value: '%s'", v.Str)
			}
			return Convert(d, t)
		default:
			return Value{}, fmt.Errorf("cannot convert %s to %s", from, t)
		}
		if new(big.Int).Abs(u).Cmp(Pow10(t.Precision)) >= 0 {
			return Value{}, fmt.Errorf("value %s is out of range for %s", v, t)
		}
		return Value{Type: t, Dec: u}, nil
	case Float64:
		switch from.Kind {
		case Bool, Int32, Int64:
			return FloatValue(float64(v.Int)), nil
		case Decimal:
			f, _ := new(big.Rat).SetFrac(v.Dec, Pow10(from.Scale)).Float64()
			return FloatValue(f), nil
		case Char, Varchar:
			f, err := strconv.ParseFloat(strings.TrimSpace(v.Str), 64)
			if err != nil {
				return Value{}, fmt.Errorf("truncated incorrect DOUBLE value: '%s'", v.Str)
			}
			return FloatValue(f), nil
		}
	case Date:
		switch from.Kind {
		case Char, Varchar:
			d, err := ParseDate(v.Str)
			if err != nil {
				// A datetime's text gives its day, as MySQL's CAST('… 10:00:00' AS DATE).
				us, _, derr := ParseDatetime(v.Str)
				if derr != nil {
					return Value{}, err
				}
				d, _ = civil.SplitMicros(us)
			}
			return DateValue(d), nil
		case Datetime:
			d, _ := civil.SplitMicros(v.Int)
			return DateValue(d), nil
		}
	case Datetime:
		switch from.Kind {
		case Char, Varchar:
			us, _, err := ParseDatetime(v.Str)
			if err != nil {
				return Value{}, err
			}
			return DatetimeValue(us, t.Scale), nil
		case Date:
			return DatetimeValue(v.Int*civil.MicrosPerDay, t.Scale), nil
		case Datetime:
			return DatetimeValue(v.Int, t.Scale), nil
		}
	case Char, Varchar:
		s := v.Text()
		if t.Length > 0 && len([]rune(s)) > t.Length {
			s = string([]rune(s)[:t.Length])
		}
		return Value{Type: t, Str: s}, nil
	}
	return Value{}, fmt.Errorf("cannot convert %s to %s", from, t)
}

// roundScaled rescales an unscaled integer from scale `from` to scale `to`, rounding half
// away from zero when digits are dropped.
func roundScaled(u *big.Int, from, to int) *big.Int {
	switch {
	case to == from:
		return new(big.Int).Set(u)
	case to > from:
		return new(big.Int).Mul(u, Pow10(to-from))
	}
	div := Pow10(from - to)
	q, r := new(big.Int).QuoRem(u, div, new(big.Int))
	// |r|*2 >= div rounds away from zero.
	r2 := new(big.Int).Abs(r)
	r2.Lsh(r2, 1)
	if r2.Cmp(div) >= 0 {
		if u.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// Compare orders two non-NULL values of the same kind: -1, 0 or 1. Strings compare
// byte-wise with trailing spaces significant: colink's one collation is binary
// (utf8mb4_bin-like without PAD SPACE), the same in the constant folder and in the
// execution kernels, so 'a' = 'a ' is false and 'B' < 'a'. MySQL's default collation
// would ignore case and trailing spaces; colink deliberately does not.
func Compare(a, b Value) (int, error) {
	if a.Type.Kind != b.Type.Kind {
		if a.Type.IsString() && b.Type.IsString() {
			return strings.Compare(a.Str, b.Str), nil
		}
		// A DATE compares with a DATETIME as its midnight, as in MySQL.
		if a.Type.Kind == Date && b.Type.Kind == Datetime {
			return cmpInt(a.Int*civil.MicrosPerDay, b.Int), nil
		}
		if a.Type.Kind == Datetime && b.Type.Kind == Date {
			return cmpInt(a.Int, b.Int*civil.MicrosPerDay), nil
		}
		return 0, fmt.Errorf("cannot compare %s with %s", a.Type, b.Type)
	}
	switch a.Type.Kind {
	case Bool, Int32, Int64, Date, Datetime:
		return cmpInt(a.Int, b.Int), nil
	case Decimal:
		s := max(a.Type.Scale, b.Type.Scale)
		return roundScaled(a.Dec, a.Type.Scale, s).Cmp(roundScaled(b.Dec, b.Type.Scale, s)), nil
	case Float64:
		switch {
		case a.Float < b.Float:
			return -1, nil
		case a.Float > b.Float:
			return 1, nil
		}
		return 0, nil
	case Char, Varchar:
		return strings.Compare(a.Str, b.Str), nil
	}
	return 0, fmt.Errorf("cannot compare values of type %s", a.Type)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// OutOfRangeError reports an arithmetic result its type cannot hold: a BIGINT past 64 bits,
// a DECIMAL past its precision (at most 38 digits), a DOUBLE past ±1.8e308. MySQL reports
// it as error 1690, naming the expression; the caller, which has the expression, does so.
type OutOfRangeError struct {
	Type string // "BIGINT", "DECIMAL" or "DOUBLE", as MySQL's message names it
}

func (e *OutOfRangeError) Error() string { return e.Type + " value is out of range" }

// Arithmetic computes "a op b" into result type t (as Arith gives it). Division by zero is
// NULL, as in MySQL. Operands are converted to t's kind first. A result that t cannot hold
// is an *OutOfRangeError, never a wrapped value.
func Arithmetic(op ArithOp, a, b Value, t Type) (Value, error) {
	if a.Null || b.Null {
		return NullValue(t), nil
	}
	switch t.Kind {
	case Int64:
		x, err := Convert(a, Int64Type)
		if err != nil {
			return Value{}, err
		}
		y, err := Convert(b, Int64Type)
		if err != nil {
			return Value{}, err
		}
		var r int64
		ok := true
		switch op {
		case OpAdd:
			r = x.Int + y.Int
			ok = (r > x.Int) == (y.Int > 0)
		case OpSub:
			r = x.Int - y.Int
			ok = (r < x.Int) == (y.Int > 0)
		case OpMul:
			r = x.Int * y.Int
			ok = x.Int == 0 || r/x.Int == y.Int && !(x.Int == -1 && y.Int == math.MinInt64)
		case OpIntDiv, OpDiv:
			if y.Int == 0 {
				return NullValue(t), nil
			}
			r = x.Int / y.Int
			ok = !(x.Int == math.MinInt64 && y.Int == -1)
		case OpMod:
			if y.Int == 0 {
				return NullValue(t), nil
			}
			r = x.Int % y.Int
		}
		if !ok {
			return Value{}, &OutOfRangeError{Type: "BIGINT"}
		}
		return Value{Type: t, Int: r}, nil
	case Float64:
		x, err := Convert(a, Float64Type)
		if err != nil {
			return Value{}, err
		}
		y, err := Convert(b, Float64Type)
		if err != nil {
			return Value{}, err
		}
		var r float64
		switch op {
		case OpAdd:
			r = x.Float + y.Float
		case OpSub:
			r = x.Float - y.Float
		case OpMul:
			r = x.Float * y.Float
		case OpDiv:
			if y.Float == 0 {
				return NullValue(t), nil
			}
			r = x.Float / y.Float
		case OpIntDiv, OpMod:
			if y.Float == 0 {
				return NullValue(t), nil
			}
			if op == OpMod {
				r = math.Mod(x.Float, y.Float)
			} else {
				r = math.Trunc(x.Float / y.Float)
			}
		}
		if math.IsInf(r, 0) || math.IsNaN(r) {
			return Value{}, &OutOfRangeError{Type: "DOUBLE"}
		}
		return FloatValue(r), nil
	case Decimal:
		// MySQL's digits (DecimalArith), then the one rounding to the declared type.
		v, err := DecimalArith(op, a, b)
		if err != nil {
			return Value{}, err
		}
		if v.Null {
			return NullValue(t), nil
		}
		u := roundScaled(v.Dec, v.Type.Scale, t.Scale)
		if new(big.Int).Abs(u).Cmp(Pow10(t.Precision)) >= 0 {
			return Value{}, &OutOfRangeError{Type: "DECIMAL"}
		}
		return Value{Type: t, Dec: u}, nil
	}
	return Value{}, fmt.Errorf("arithmetic into %s", t)
}

// exact returns a numeric value as an unscaled integer and its scale.
func exact(v Value) (*big.Int, int, error) {
	switch v.Type.Kind {
	case Bool, Int32, Int64:
		return big.NewInt(v.Int), 0, nil
	case Decimal:
		return v.Dec, v.Type.Scale, nil
	}
	return nil, 0, fmt.Errorf("%s is not an exact number", v.Type)
}

// Limits of the decimals DecimalArith passes between the operators of one expression.
const (
	// decimalWordDigits is the digits of one word of MySQL's decimal arithmetic: a
	// quotient's scale is a whole number of words.
	decimalWordDigits = 9
	// maxIntermediateDigits is the most integer digits an intermediate result may have
	// (MySQL's 65-digit decimals); the final result must still fit its type.
	maxIntermediateDigits = 65
)

// DecimalArith computes "a op b" for integer and decimal operands as MySQL does between the
// operators of one expression, before the result is rounded to its declared type: +, - and
// * are exact, % keeps the larger scale, and / truncates its quotient to
// 9×⌈(s1+s2+div_precision_increment)/9⌉ decimal places (whole 9-digit words), not to
// s1+4. That is why MySQL gives 1.0000 for 1/3*3: the quotient carries 0.333333333, and only
// the final result is rounded to 4 places. The result's type is a decimal whose scale is
// the value's own; the caller rounds it to the declared type (Convert). Division by zero is
// NULL.
func DecimalArith(op ArithOp, a, b Value) (Value, error) {
	if a.Null || b.Null {
		return NullValue(Dec(MaxPrecision, 0)), nil
	}
	x, sx, err := exact(a)
	if err != nil {
		return Value{}, err
	}
	y, sy, err := exact(b)
	if err != nil {
		return Value{}, err
	}
	var u *big.Int
	var s int
	switch op {
	case OpAdd, OpSub, OpMod:
		s = max(sx, sy)
		x, y = roundScaled(x, sx, s), roundScaled(y, sy, s)
		switch op {
		case OpAdd:
			u = new(big.Int).Add(x, y)
		case OpSub:
			u = new(big.Int).Sub(x, y)
		default:
			if y.Sign() == 0 {
				return NullValue(Dec(MaxPrecision, s)), nil
			}
			u = new(big.Int).Rem(x, y)
		}
	case OpMul:
		u, s = new(big.Int).Mul(x, y), sx+sy
	case OpDiv:
		if y.Sign() == 0 {
			return NullValue(Dec(MaxPrecision, sx+DivPrecisionIncrement)), nil
		}
		words := (sx + sy + DivPrecisionIncrement + decimalWordDigits - 1) / decimalWordDigits
		s = words * decimalWordDigits
		// x/10^sx ÷ y/10^sy = x·10^(s+sy-sx) / y at scale s; s >= sx so the shift is >= 0.
		u = new(big.Int).Quo(new(big.Int).Mul(x, Pow10(s+sy-sx)), y) // truncates, as MySQL
	default:
		return Value{}, fmt.Errorf("decimal arithmetic: unknown operator %d", op)
	}
	n := len(new(big.Int).Abs(u).String())
	if n-s > maxIntermediateDigits {
		return Value{}, &OutOfRangeError{Type: "DECIMAL"}
	}
	return Value{Type: Type{Kind: Decimal, Precision: max(n, s, 1), Scale: s}, Dec: u}, nil
}
