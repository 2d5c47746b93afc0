package vec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/colinkdb/colink/internal/civil"
	"github.com/colinkdb/colink/internal/textparse"
)

// Datum is one typed value: a literal in an expression, a zone-map bound, a scalar
// subquery's result. The payload field used depends on Type.ID:
//
//	Bool        Int (0 or 1)
//	Int32/Int64 Int
//	Date32      Int (days since 1970-01-01)
//	Datetime    Int (microseconds since 1970-01-01 00:00:00)
//	Decimal64   Int (unscaled)
//	Decimal128  Int (low 64 bits, two's complement) and Hi (high 64 bits)
//	Float64     Float
//	String      Str
//
// A NULL of any type has Null set and no payload.
type Datum struct {
	Type  Type    `msgpack:"t"`
	Null  bool    `msgpack:"n,omitempty"`
	Int   int64   `msgpack:"i,omitempty"`
	Hi    int64   `msgpack:"h,omitempty"`
	Float float64 `msgpack:"f,omitempty"`
	Str   string  `msgpack:"s,omitempty"`
}

// NullDatum is a NULL of type t.
func NullDatum(t Type) Datum { return Datum{Type: t, Null: true} }

// BoolDatum makes a boolean.
func BoolDatum(b bool) Datum {
	d := Datum{Type: BoolType}
	if b {
		d.Int = 1
	}
	return d
}

// Int32Datum makes an INT.
func Int32Datum(v int32) Datum { return Datum{Type: Int32Type, Int: int64(v)} }

// Int64Datum makes a BIGINT.
func Int64Datum(v int64) Datum { return Datum{Type: Int64Type, Int: v} }

// Float64Datum makes a DOUBLE.
func Float64Datum(v float64) Datum { return Datum{Type: Float64Type, Float: v} }

// StringDatum makes a string.
func StringDatum(s string) Datum { return Datum{Type: StringType, Str: s} }

// DateDatum makes a DATE from days since 1970-01-01.
func DateDatum(days int32) Datum { return Datum{Type: DateType, Int: int64(days)} }

// DecimalDatum makes a DECIMAL(p,s) from its unscaled value.
func DecimalDatum(unscaled Int128, p, s int32) Datum {
	t := Decimal(p, s)
	d := Datum{Type: t, Int: int64(unscaled.Lo)}
	if t.ID == Decimal128 {
		d.Hi = unscaled.Hi
	}
	return d
}

// MustParseDecimal parses a decimal literal with ParseDecimal; it panics on bad input and
// is meant for constants in code and tests.
func MustParseDecimal(s string) Datum {
	v, t, err := ParseDecimal(s)
	if err != nil {
		panic(err)
	}
	return DecimalDatum(v, t.Precision, t.Scale)
}

// MustParseDate parses YYYY-MM-DD; it panics on bad input and is meant for constants.
func MustParseDate(s string) Datum {
	d, err := ParseDate([]byte(s))
	if err != nil {
		panic(err)
	}
	return DateDatum(d)
}

// Decimal returns a decimal Datum's unscaled value (an integer's value for Int32/Int64).
func (d Datum) Decimal() Int128 {
	if d.Type.ID == Decimal128 {
		return Int128{Lo: uint64(d.Int), Hi: d.Hi}
	}
	return I128(d.Int)
}

// Bool returns a boolean Datum's value.
func (d Datum) Bool() bool { return d.Int != 0 }

// DatetimeDatum makes a DATETIME from microseconds since 1970-01-01 00:00:00.
func DatetimeDatum(us int64) Datum { return Datum{Type: DatetimeType, Int: us} }

// Validate checks that the payload suits the type.
func (d Datum) Validate() error {
	if err := d.Type.Validate(); err != nil {
		return err
	}
	if d.Null {
		return nil
	}
	switch d.Type.ID {
	case Bool:
		if d.Int != 0 && d.Int != 1 {
			return fmt.Errorf("vec: boolean datum holds %d", d.Int)
		}
	case Int32:
		if d.Int != int64(int32(d.Int)) {
			return fmt.Errorf("vec: int32 datum holds %d", d.Int)
		}
	case Date32:
		if d.Int < int64(MinDate) || d.Int > int64(MaxDate) {
			return fmt.Errorf("vec: date datum %d out of range", d.Int)
		}
	case Datetime:
		if !civil.MicrosInRange(d.Int) {
			return fmt.Errorf("vec: datetime datum %d out of range", d.Int)
		}
	case Decimal64:
		if !FitsPrecision64(d.Int, d.Type.Precision) {
			return fmt.Errorf("vec: %s datum %s has too many digits", d.Type, d.String())
		}
	case Decimal128:
		if !d.Decimal().FitsPrecision(d.Type.Precision) {
			return fmt.Errorf("vec: %s datum %s has too many digits", d.Type, d.String())
		}
	}
	return nil
}

// AppendText appends the value as MySQL prints it in a text result: decimals at their
// scale, dates as YYYY-MM-DD, doubles in shortest form, booleans as 1/0, NULL as "NULL".
func (d Datum) AppendText(dst []byte) []byte {
	if d.Null {
		return append(dst, "NULL"...)
	}
	switch d.Type.ID {
	case Bool, Int32, Int64:
		return strconv.AppendInt(dst, d.Int, 10)
	case Float64:
		return AppendFloat(dst, d.Float)
	case Decimal64, Decimal128:
		return d.Decimal().AppendDecimal(dst, d.Type.Scale)
	case Date32:
		return AppendDate(dst, int32(d.Int))
	case Datetime:
		return AppendDatetime(dst, d.Int, -1)
	case String:
		return append(dst, d.Str...)
	}
	return append(dst, '?')
}

// String is AppendText as a string.
func (d Datum) String() string { return string(d.AppendText(nil)) }

// AppendFloat formats a double in the shortest form that reads back exactly, as MySQL does
// (no exponent for moderate magnitudes); negative zero is "0", as MariaDB prints it.
func AppendFloat(dst []byte, f float64) []byte {
	switch {
	case f == 0:
		return append(dst, '0')
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f):
		return append(dst, "nan"...)
	}
	a := math.Abs(f)
	if a != 0 && (a < 1e-15 || a >= 1e15) {
		// MySQL writes exponents without '+' or leading zeros: 1e20, 1.5e-16.
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
		e := start
		for e < len(dst) && dst[e] != 'e' {
			e++
		}
		exp := dst[e+1:]
		neg := len(exp) > 0 && exp[0] == '-'
		digits := strings.TrimLeft(strings.TrimLeft(string(exp), "+-"), "0")
		dst = dst[:e+1]
		if neg {
			dst = append(dst, '-')
		}
		return append(dst, digits...)
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}

// ParseDatum parses a value's text form for type t ("NULL" is NULL). It is the inverse of
// AppendText and is used by the batch text format.
func ParseDatum(t Type, s string) (Datum, error) {
	if s == "NULL" {
		return NullDatum(t), nil
	}
	switch t.ID {
	case Bool:
		switch strings.ToLower(s) {
		case "1", "true":
			return BoolDatum(true), nil
		case "0", "false":
			return BoolDatum(false), nil
		}
	case Int32:
		v, err := textparse.Int([]byte(s), textparse.NoSpace)
		if err == nil && v == int64(int32(v)) {
			return Int32Datum(int32(v)), nil
		}
	case Int64:
		v, err := textparse.Int([]byte(s), textparse.NoSpace)
		if err == nil {
			return Int64Datum(v), nil
		}
	case Float64:
		v, err := strconv.ParseFloat(s, 64)
		if err == nil {
			return Float64Datum(v), nil
		}
	case Decimal64, Decimal128:
		v, err := ParseDecimalScale([]byte(s), t.Scale)
		if err == nil && v.FitsPrecision(t.Precision) {
			d := DecimalDatum(v, t.Precision, t.Scale)
			return d, nil
		}
	case Date32:
		v, err := ParseDate([]byte(s))
		if err == nil {
			return DateDatum(v), nil
		}
	case Datetime:
		v, err := ParseDatetime([]byte(s))
		if err == nil {
			return DatetimeDatum(v), nil
		}
	case String:
		return StringDatum(s), nil
	}
	return Datum{}, fmt.Errorf("vec: %q is not a valid %s", s, t)
}

// CompareDatums orders two non-NULL datums of comparable types (numbers with numbers,
// dates with dates, strings with strings, booleans with booleans).
func CompareDatums(a, b Datum) (int, error) {
	if a.Null || b.Null {
		return 0, fmt.Errorf("vec: comparing NULL")
	}
	at, bt := a.Type, b.Type
	switch {
	case at.ID == String && bt.ID == String:
		return strings.Compare(a.Str, b.Str), nil
	case at.ID == Date32 && bt.ID == Date32, at.ID == Bool && bt.ID == Bool, at.ID == Datetime && bt.ID == Datetime:
		return cmpInt64(a.Int, b.Int), nil
	case at.ID == Date32 && bt.ID == Datetime: // a DATE is its midnight
		return cmpInt64(a.Int*civil.MicrosPerDay, b.Int), nil
	case at.ID == Datetime && bt.ID == Date32:
		return cmpInt64(a.Int, b.Int*civil.MicrosPerDay), nil
	case at.ID == Float64 || bt.ID == Float64:
		if !at.IsNumeric() || !bt.IsNumeric() {
			break
		}
		x, y := a.ToFloat64(), b.ToFloat64()
		switch {
		case x < y:
			return -1, nil
		case x > y:
			return 1, nil
		}
		return 0, nil
	case at.IsNumeric() && bt.IsNumeric():
		s := max(at.DecimalScale(), bt.DecimalScale())
		x, ok1 := a.Decimal().Rescale(at.DecimalScale(), s)
		y, ok2 := b.Decimal().Rescale(bt.DecimalScale(), s)
		if !ok1 || !ok2 {
			return 0, fmt.Errorf("vec: comparing %s with %s overflows", a, b)
		}
		return x.Cmp(y), nil
	}
	return 0, fmt.Errorf("vec: cannot compare %s with %s", at, bt)
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ToFloat64 converts a numeric datum to a double (for mixed double arithmetic only).
func (d Datum) ToFloat64() float64 {
	switch d.Type.ID {
	case Float64:
		return d.Float
	case Decimal64, Decimal128:
		return Int128ToFloat64(d.Decimal(), d.Type.Scale)
	}
	return float64(d.Int)
}

// Int128ToFloat64 converts an unscaled decimal to the nearest double (used only where SQL
// asks for a double: mixed double arithmetic and CAST AS DOUBLE), as MySQL reads a decimal's
// digits. An unscaled value of at most 2^53 and a power of ten of at most 10^22 are exact
// doubles, so their quotient is rounded once; past them a float quotient rounds twice or
// three times and can miss the nearest double by one (-100.9999999 at scale 18 came out
// -100.99999989999999), so the digits are read instead.
func Int128ToFloat64(v Int128, scale int32) float64 {
	if v.IsInt64() && scale <= 22 {
		if i := int64(v.Lo); i <= 1<<53 && i >= -(1<<53) {
			return float64(i) / pow10Float[scale]
		}
	}
	var buf [48]byte
	b := v.AppendDecimal(buf[:0], scale)
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(b), len(b)), 64) // not kept
	if err != nil {
		// Only a value beyond the doubles fails (it cannot: |v| < 2^127); keep its sign.
		return math.Copysign(math.Inf(1), float64(v.Hi))
	}
	return f
}

// pow10Float holds the exactly representable powers of ten 10^0..10^22.
var pow10Float = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}
