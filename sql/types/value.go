package types

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/colinkdb/colink/internal/civil"
	"github.com/colinkdb/colink/internal/textparse"
)

// Value is a constant of a SQL type: a literal in a query, or what the constant folder
// computes from literals. Exactly one payload field is meaningful, chosen by Type.Kind:
// Int for Bool (0 or 1), Int32, Int64, Date (days since 1970-01-01) and Datetime
// (microseconds since 1970-01-01 00:00:00); Dec for Decimal (the
// unscaled integer: the value is Dec / 10^Type.Scale); Float for Float64; Str for Char and
// Varchar. A NULL of any type has Null set.
type Value struct {
	Type  Type
	Null  bool
	Int   int64
	Dec   *big.Int
	Float float64
	Str   string
}

// NullValue returns a NULL of type t.
func NullValue(t Type) Value { return Value{Type: t, Null: true} }

// BoolValue returns TRUE or FALSE.
func BoolValue(b bool) Value {
	v := Value{Type: BoolType}
	if b {
		v.Int = 1
	}
	return v
}

// IntValue returns a BIGINT literal typed with its own number of digits.
func IntValue(i int64) Value {
	return Value{Type: Type{Kind: Int64, Precision: digits(i)}, Int: i}
}

// Int32Value returns an INT value.
func Int32Value(i int32) Value { return Value{Type: Int32Type, Int: int64(i)} }

// StringValue returns a VARCHAR literal.
func StringValue(s string) Value {
	return Value{Type: VarcharType(len([]rune(s))), Str: s}
}

// FloatValue returns a DOUBLE.
func FloatValue(f float64) Value { return Value{Type: Float64Type, Float: f} }

// DateValue returns a DATE of the given days since 1970-01-01.
func DateValue(days int64) Value { return Value{Type: DateType, Int: days} }

// DatetimeValue returns a DATETIME(fsp) of the given microseconds since 1970-01-01
// 00:00:00, its fraction truncated to fsp digits.
func DatetimeValue(us int64, fsp int) Value {
	t := DatetimeType(fsp)
	return Value{Type: t, Int: civil.TruncateMicros(us, t.Scale)}
}

// ParseDatetime reads 'YYYY-MM-DD[ HH:MM[:SS[.ffffff]]]' (spaces around it skipped) into
// microseconds since 1970-01-01 00:00:00 and the fraction digits written (MySQL types a
// DATETIME literal by them).
func ParseDatetime(s string) (us int64, fsp int, err error) {
	us, err = textparse.Datetime([]byte(s), textparse.DateForm{Space: textparse.UnicodeSpace, Year4: true})
	switch err {
	case nil:
	case textparse.ErrRange:
		return 0, 0, fmt.Errorf("datetime '%s' is out of range", strings.TrimSpace(s))
	default:
		return 0, 0, fmt.Errorf("'%s' is not a datetime (YYYY-MM-DD HH:MM:SS[.ffffff])", strings.TrimSpace(s))
	}
	if _, frac, ok := strings.Cut(strings.TrimSpace(s), "."); ok {
		fsp = min(len(frac), 6)
	}
	return us, fsp, nil
}

// FormatDatetime spells microseconds since 1970-01-01 00:00:00 as YYYY-MM-DD HH:MM:SS with
// fsp fraction digits.
func FormatDatetime(us int64, fsp int) string { return civil.FormatDatetime(us, fsp) }

// DecimalValue returns a decimal of type t whose unscaled integer is u.
func DecimalValue(u *big.Int, t Type) Value { return Value{Type: t, Dec: new(big.Int).Set(u)} }

func digits(i int64) int {
	if i < 0 {
		if i == math.MinInt64 {
			return 19
		}
		i = -i
	}
	n := 1
	for i >= 10 {
		i /= 10
		n++
	}
	return n
}

// ParseDecimal reads a decimal literal such as "0.2", ".06", "-1.50" or "100", typed as
// MySQL types it: scale the digits after the point, precision all digits (at least one
// before the point; leading zeros before it do not count). It has no exponent, and spaces
// around it are skipped.
func ParseDecimal(s string) (Value, error) {
	n, err := textparse.ParseNumber([]byte(s), textparse.NumberForm{Space: textparse.UnicodeSpace})
	if err != nil {
		return Value{}, fmt.Errorf("%q is not a decimal number", s)
	}
	p := max(len(n.Int), 1) + len(n.Frac)
	if p > MaxPrecision {
		return Value{}, fmt.Errorf("decimal %q has more than %d digits", s, MaxPrecision)
	}
	u, err := n.Scaled(int32(len(n.Frac)))
	if err != nil { // cannot be: p <= 38
		return Value{}, fmt.Errorf("decimal %q: %v", s, err)
	}
	d := new(big.Int).Lsh(big.NewInt(u.Hi), 64)
	d.Add(d, new(big.Int).SetUint64(u.Lo))
	return Value{Type: Dec(p, len(n.Frac)), Dec: d}, nil
}

// ParseDate reads 'YYYY-MM-DD' (month and day may have one digit; spaces around it are
// skipped) into days since 1970-01-01, rejecting dates outside MySQL's range
// 0001-01-01 … 9999-12-31 and days that do not exist.
func ParseDate(s string) (int64, error) {
	d, err := textparse.Date([]byte(s), textparse.DateForm{Space: textparse.UnicodeSpace, Year4: true})
	if err != nil {
		return 0, fmt.Errorf("incorrect DATE value: '%s'", s)
	}
	return d, nil
}

// DaysFromCivil converts a calendar date to days since 1970-01-01.
func DaysFromCivil(y int, m time.Month, d int) int64 { return civil.Days(y, int(m), d) }

// CivilFromDays converts days since 1970-01-01 to a calendar date.
func CivilFromDays(days int64) (int, time.Month, int) {
	y, m, d := civil.Date(days)
	return y, time.Month(m), d
}

// FormatDate spells days since 1970-01-01 as YYYY-MM-DD.
func FormatDate(days int64) string { return civil.Format(days) }

// AddDays adds n days to a date as MySQL's DATE_ADD does; false (MySQL's NULL) when the
// result leaves 0001-01-01 … 9999-12-31.
func AddDays(days, n int64) (int64, bool) { return civil.AddDays(days, n) }

// AddMonths adds n months to a date as MySQL's DATE_ADD does: the day is clamped to the end
// of the resulting month (2020-01-31 + 1 month = 2020-02-29); false (MySQL's NULL) when the
// result leaves 0001-01-01 … 9999-12-31.
func AddMonths(days, n int64) (int64, bool) { return civil.AddMonths(days, n) }

// Pow10 returns 10^n.
func Pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// FormatDecimal spells an unscaled integer at a scale, e.g. (12345, 2) → "123.45".
func FormatDecimal(u *big.Int, scale int) string {
	s := new(big.Int).Abs(u).String()
	neg := u.Sign() < 0
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// String renders the value as SQL text that reads back as the same value and type:
// 42, 0.05, 'BUILDING', date '1995-03-15', NULL, TRUE.
func (v Value) String() string {
	if v.Null {
		return "NULL"
	}
	switch v.Type.Kind {
	case Bool:
		if v.Int != 0 {
			return "TRUE"
		}
		return "FALSE"
	case Int32, Int64:
		return strconv.FormatInt(v.Int, 10)
	case Decimal:
		return FormatDecimal(v.Dec, v.Type.Scale)
	case Float64:
		s := strconv.FormatFloat(v.Float, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += "e0"
		}
		return s
	case Date:
		return "date '" + FormatDate(v.Int) + "'"
	case Datetime:
		return "timestamp '" + FormatDatetime(v.Int, v.Type.Scale) + "'"
	case Char, Varchar:
		return "'" + strings.ReplaceAll(v.Str, "'", "''") + "'"
	}
	return "?"
}

// Text renders the value as the MySQL text protocol sends it: no quotes, dates as
// YYYY-MM-DD, decimals at their scale, NULL as "NULL".
func (v Value) Text() string {
	if v.Null {
		return "NULL"
	}
	switch v.Type.Kind {
	case Bool:
		return strconv.FormatInt(v.Int, 10)
	case Date:
		return FormatDate(v.Int)
	case Datetime:
		return FormatDatetime(v.Int, v.Type.Scale)
	case Char, Varchar:
		return v.Str
	case Float64:
		return formatDouble(v.Float)
	}
	return v.String()
}

// formatDouble writes a double as MySQL does, and as exec's kernels do (vec.AppendFloat):
// the shortest form that reads back exactly, without an exponent for magnitudes from 1e-15
// to 1e15, otherwise with one that has no '+' and no leading zeros (1e20, 1.5e-16); negative
// zero is "0", as MariaDB prints it.
func formatDouble(f float64) string {
	if f == 0 {
		return "0"
	}
	a := math.Abs(f)
	if a == 0 || a >= 1e-15 && a < 1e15 || math.IsInf(f, 0) || math.IsNaN(f) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	neg := strings.HasPrefix(exp, "-")
	exp = strings.TrimLeft(strings.TrimLeft(exp, "+-"), "0")
	if neg {
		exp = "-" + exp
	}
	return mant + "e" + exp
}

// Truth returns the value as a condition: true, false, or unknown (NULL).
func (v Value) Truth() (truth, known bool) {
	if v.Null {
		return false, false
	}
	switch v.Type.Kind {
	case Bool, Int32, Int64:
		return v.Int != 0, true
	case Decimal:
		return v.Dec.Sign() != 0, true
	case Float64:
		return v.Float != 0, true
	case Char, Varchar:
		f, err := strconv.ParseFloat(strings.TrimSpace(v.Str), 64)
		return err == nil && f != 0, true
	case Date, Datetime:
		return true, true
	}
	return false, false
}
