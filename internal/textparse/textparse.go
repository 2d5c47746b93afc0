// Package textparse is colink's one reader of integers, decimals, dates and datetimes written as
// text. LOAD DATA's fields (exemgr/loadtext), the SQL layer's literals and constant casts
// (sql/types), and the execution kernels' CAST of string data and their literals (exec/vec,
// exec/expr) all read through it, so that the same text means the same value wherever it
// is read the same way. Where MySQL reads text differently by context — LOAD DATA is
// strict, CAST(… AS SIGNED) takes a number's integer part, a DECIMAL literal may have an
// exponent or not — the caller says so by the function it calls and the form it passes;
// there is no second copy of the digit loops.
//
// What every reader here does:
//
//   - Blanks around the value are skipped; which bytes are blanks is the caller's Space.
//     Blanks inside the value ("1 2", "1998- 12-01") are errors.
//   - A leading '+' or '-' is a sign; only one.
//   - Digits are ASCII 0–9: no digit groups, underscores, hexadecimal, "inf" or "nan".
//   - Results are exact: an integer beyond int64, or a decimal that needs more than 38
//     digits at the asked scale, is ErrRange, never a wrapped or clamped value.
//   - Fraction digits beyond the asked scale round half away from zero (MySQL's DECIMAL
//     rounding: 1.005 at scale 2 is 1.01, -1.005 is -1.01); they are never an error.
//   - Dates are year-month-day with '-' between, proleptic Gregorian, in MySQL's DATE
//     range 0001-01-01 … 9999-12-31. Zero dates (0000-00-00, a month or day of 0) and days
//     that do not exist (1998-02-30) are ErrRange; there are no two-digit years (the
//     year's digits are read as written: 95-01-01 is the year 95, or an error with
//     DateForm.Year4) and no other separators. Datetime reads a date and an optional time of
//     day (HH:MM[:SS[.ffffff]], after ' ' or 'T').
//
// Nothing here allocates: the functions read the caller's bytes and return values, and
// errors are the package's sentinels, which the callers turn into their own messages.
package textparse

import (
	"bytes"
	"errors"
	"math"
	"math/bits"

	"github.com/colinkdb/colink/internal/civil"
)

// The errors the readers return; callers compare with ==.
var (
	// ErrSyntax: the text is not of the form asked for.
	ErrSyntax = errors.New("textparse: malformed")
	// ErrDigits: a number with more significant digits than NumberForm.MaxDigits allows.
	ErrDigits = errors.New("textparse: too many significant digits")
	// ErrRange: well formed, but no value of the result's range: an integer beyond int64,
	// a decimal beyond 38 digits, a date that does not exist or is outside MySQL's range.
	ErrRange = errors.New("textparse: out of range")
)

// Space is the set of bytes skipped around a value.
type Space uint8

const (
	// NoSpace skips nothing: the text is the value exactly (the batch text format).
	NoSpace Space = iota
	// Blanks skips ' ' (exec's CAST of a string to DATE).
	Blanks
	// BlanksTabs skips ' ' and '\t' (exec's CAST of a string to a number).
	BlanksTabs
	// UnicodeSpace skips what unicode.IsSpace calls space, as bytes.TrimSpace does: ASCII
	// '\t', '\n', '\v', '\f', '\r', ' ' and the Unicode spaces such as U+00A0 (LOAD DATA,
	// and the SQL layer's literals).
	UnicodeSpace
)

// Trim returns b without the bytes of sp at either end.
func Trim(b []byte, sp Space) []byte {
	switch sp {
	case UnicodeSpace:
		return bytes.TrimSpace(b)
	case NoSpace:
		return b
	}
	i, j := 0, len(b)
	tabs := sp == BlanksTabs
	for i < j && (b[i] == ' ' || tabs && b[i] == '\t') {
		i++
	}
	for j > i && (b[j-1] == ' ' || tabs && b[j-1] == '\t') {
		j--
	}
	return b[i:j]
}

// plain reports whether b starts and ends with a printable ASCII byte, so that no Space
// trims it (ASCII blanks are ' ' and below, every byte of a Unicode space 0x80 or above):
// the readers of single values skip Trim's call for such text, the common kind.
func plain(b []byte) bool {
	n := len(b)
	return n > 0 && b[0]-'!' <= '~'-'!' && b[n-1]-'!' <= '~'-'!'
}

// sign reads an optional '+' or '-' at the start of b.
func sign(b []byte) (neg bool, rest []byte) {
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		return b[0] == '-', b[1:]
	}
	return false, b
}

// Int reads all of b, after trimming sp, as an optional sign and one or more digits: the
// strict integer of LOAD DATA and of the batch text format ("12abc", "1.0" and "" are
// ErrSyntax). A value beyond int64 is ErrRange; a narrower column checks its own range.
func Int(b []byte, sp Space) (int64, error) {
	if !plain(b) {
		b = Trim(b, sp)
	}
	neg, b := sign(b)
	if len(b) == 0 {
		return 0, ErrSyntax
	}
	var u uint64
	for i, c := range b {
		if c < '0' || c > '9' {
			return 0, ErrSyntax
		}
		if u > (math.MaxInt64+1)/10 {
			return 0, intOverflow(b[i:])
		}
		u = u*10 + uint64(c-'0')
	}
	return signed(u, neg)
}

// intOverflow is Int's error for digits beyond int64, the rest being b: ErrRange if b is
// all digits, else ErrSyntax.
func intOverflow(b []byte) error {
	for _, c := range b {
		if c < '0' || c > '9' {
			return ErrSyntax
		}
	}
	return ErrRange
}

// signed applies a sign to a magnitude read by Int or IntPrefix.
func signed(u uint64, neg bool) (int64, error) {
	switch {
	case neg && u > math.MaxInt64+1, !neg && u > math.MaxInt64:
		return 0, ErrRange
	case neg:
		return -int64(u), nil // -(1<<63) wraps to MinInt64, as wanted
	}
	return int64(u), nil
}

// IntPrefix reads the integer part of a number written at the start of b (after leading
// sp): an optional sign and the digits up to the first byte that is not one — the point,
// an exponent, anything — and 0 when there are none. It is what MySQL's CAST(… AS SIGNED)
// takes from '12.9' (12) and '1e3' (1); whether the rest of b had to be a number is the
// caller's rule. Digits beyond int64 are ErrRange.
func IntPrefix(b []byte, sp Space) (int64, error) {
	b = Trim(b, sp) // trailing space ends the digits anyway
	neg, b := sign(b)
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		if u > (math.MaxInt64+1)/10 {
			return 0, ErrRange
		}
		u = u*10 + uint64(c-'0')
	}
	return signed(u, neg)
}

// NumberForm says which decimal numbers ParseNumber accepts.
type NumberForm struct {
	Space Space
	// Exponent accepts an exponent after the digits: 1.5e3, 2E-2, 7e+1 (exec's numbers;
	// MySQL's DECIMAL literals and LOAD DATA's decimal fields have none). It is read while
	// its value is at most 1000: a digit after that is ErrSyntax.
	Exponent bool
	// MaxDigits > 0 makes a number with more significant digits ErrDigits (leading zeros do
	// not count, trailing ones do): exec's 38, so text never holds more digits than a
	// DECIMAL. 0 reads any number of digits; only the value at a scale must fit.
	MaxDigits int
}

// Number is a decimal number as written. Int and Frac are views of the parsed text.
type Number struct {
	Neg  bool
	Int  []byte // the digits before the point, without leading zeros
	Frac []byte // the digits after the point, as written (trailing zeros count)
	Exp  int32  // the exponent, 0 without one
}

// ParseNumber reads all of b, after trimming f.Space, as [sign] digits [. digits]
// [exponent] with at least one digit before or after the point ("5.", ".5"; not ".", "-"
// or "1.2.3").
func ParseNumber(b []byte, f NumberForm) (Number, error) {
	var n Number
	if !plain(b) {
		b = Trim(b, f.Space)
	}
	n.Neg, b = sign(b)
	k := 0
	for k < len(b) && b[k] >= '0' && b[k] <= '9' {
		k++
	}
	intPart := b[:k]
	for len(intPart) > 0 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	n.Int = intPart
	if k < len(b) && b[k] == '.' {
		k++
		j := k
		for k < len(b) && b[k] >= '0' && b[k] <= '9' {
			k++
		}
		n.Frac = b[j:k]
	}
	if k == 0 || k == 1 && b[0] == '.' {
		return Number{}, ErrSyntax // no digits
	}
	if f.MaxDigits > 0 && n.Digits() > f.MaxDigits {
		return Number{}, ErrDigits
	}
	if k == len(b) {
		return n, nil
	}
	if !f.Exponent || b[k] != 'e' && b[k] != 'E' {
		return Number{}, ErrSyntax
	}
	eneg, e := sign(b[k+1:])
	if len(e) == 0 {
		return Number{}, ErrSyntax
	}
	var exp int32
	for _, c := range e {
		if c < '0' || c > '9' || exp > 1000 {
			return Number{}, ErrSyntax
		}
		exp = exp*10 + int32(c-'0')
	}
	if eneg {
		exp = -exp
	}
	n.Exp = exp
	return n, nil
}

// Digits returns the number's significant digits: from its first digit that is not 0 to
// its last digit, trailing zeros included (0 for zero).
func (n Number) Digits() int {
	if len(n.Int) > 0 {
		return len(n.Int) + len(n.Frac)
	}
	f := n.Frac
	for len(f) > 0 && f[0] == '0' {
		f = f[1:]
	}
	return len(f)
}

// Int128 is a 128-bit two's complement integer, laid out as exec/vec.Int128 (which
// converts from it).
type Int128 struct {
	Lo uint64
	Hi int64
}

// Int64 returns v if it fits int64.
func (v Int128) Int64() (int64, bool) {
	return int64(v.Lo), v.Hi == int64(v.Lo)>>63
}

// MaxDecimalDigits is the most digits a decimal value has (MySQL's DECIMAL(38)).
const MaxDecimalDigits = 38

// pow38 is 10^38, the first magnitude of 39 digits.
var pow38 = func() (p u128) {
	p = u128{lo: 1}
	for range MaxDecimalDigits {
		p = p.mul10add(0)
	}
	return p
}()

// u128 is an unsigned magnitude of up to 38 digits.
type u128 struct{ hi, lo uint64 }

func (u u128) mul10add(d uint64) u128 {
	h, l := bits.Mul64(u.lo, 10)
	l, c := bits.Add64(l, d, 0)
	return u128{hi: u.hi*10 + h + c, lo: l}
}

func (u u128) less(v u128) bool { return u.hi < v.hi || u.hi == v.hi && u.lo < v.lo }

// Scaled returns the number's value times 10^scale as an integer, rounding the digits
// that leaves behind the point half away from zero: the unscaled value of a DECIMAL of
// that scale. ErrRange if it has more than 38 digits. It reads the digits once more and
// only those it keeps, so a long fraction costs nothing beyond the scale.
func (n Number) Scaled(scale int32) (Int128, error) {
	ni, nd := len(n.Int), len(n.Int)+len(n.Frac)
	digit := func(i int) uint64 {
		if i < ni {
			return uint64(n.Int[i] - '0')
		}
		return uint64(n.Frac[i-ni] - '0')
	}
	// The value is digits × 10^(Exp-len(Frac)); scaled, digits × 10^shift.
	shift := int64(scale) + int64(n.Exp) - int64(len(n.Frac))
	keep := int64(nd)
	if shift < 0 {
		keep += shift // the digits left of the scaled point; the next one rounds
	}
	var u u128
	sig := 0
	for i := 0; int64(i) < keep; i++ {
		d := digit(i)
		if sig == 0 && d == 0 {
			continue
		}
		sig++
		if sig > MaxDecimalDigits {
			return Int128{}, ErrRange
		}
		if u.hi == 0 && u.lo <= (math.MaxUint64-9)/10 {
			u.lo = u.lo*10 + d
		} else {
			u = u.mul10add(d)
		}
	}
	if shift < 0 && keep >= 0 && keep < int64(nd) && digit(int(keep)) >= 5 {
		u.lo++
		if u.lo == 0 {
			u.hi++
		}
		if !u.less(pow38) {
			return Int128{}, ErrRange
		}
	}
	if shift > 0 && (u.hi|u.lo) != 0 {
		if int64(sig)+shift > MaxDecimalDigits {
			return Int128{}, ErrRange
		}
		for range shift {
			u = u.mul10add(0)
		}
	}
	v := Int128{Lo: u.lo, Hi: int64(u.hi)}
	if n.Neg {
		v.Lo = -u.lo
		v.Hi = ^int64(u.hi)
		if u.lo == 0 {
			v.Hi++
		}
	}
	return v, nil
}

// Decimal reads b as a number of form f (ParseNumber) and returns its unscaled value at
// scale (Number.Scaled).
func Decimal(b []byte, f NumberForm, scale int32) (Int128, error) {
	if v, ok := decimal18(b, f, scale); ok {
		return v, nil
	}
	n, err := ParseNumber(b, f)
	if err != nil {
		return Int128{}, err
	}
	return n.Scaled(scale)
}

// decimal18 is Decimal in one pass for the common number — no exponent, its integer
// digits and the scale within 18 digits, so the result fits a uint64 with room for the
// rounding — which is most of LOAD DATA's fields. ok=false leaves any other text, good or
// bad, to the general path.
func decimal18(b []byte, f NumberForm, scale int32) (Int128, bool) {
	if scale < 0 || scale > 18 {
		return Int128{}, false
	}
	if !plain(b) {
		b = Trim(b, f.Space)
	}
	neg, b := sign(b)
	i := 0
	for i < len(b) && b[i] == '0' {
		i++
	}
	start := i
	var u uint64
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		u = u*10 + uint64(b[i]-'0') // wraps harmlessly when there are too many digits
		i++
	}
	nint, seen := i-start, i > 0
	if nint+int(scale) > 18 {
		return Int128{}, false
	}
	nfrac, up := 0, false
	if i < len(b) && b[i] == '.' {
		i++
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			switch {
			case nfrac < int(scale):
				u = u*10 + uint64(b[i]-'0')
			case nfrac == int(scale):
				up = b[i] >= '5'
			}
			nfrac++
		}
		seen = seen || nfrac > 0
	}
	if i != len(b) || !seen || f.MaxDigits > 0 && nint+nfrac > f.MaxDigits {
		return Int128{}, false
	}
	for k := nfrac; k < int(scale); k++ {
		u *= 10
	}
	if up {
		u++
	}
	v := int64(u) // at most 10^18
	if neg {
		v = -v
	}
	return Int128{Lo: uint64(v), Hi: v >> 63}, true
}

// DateForm says which spellings of a date Date accepts. Every form is year-month-day with
// '-' between the parts.
type DateForm struct {
	Space Space
	// Year4 asks for exactly four year digits (LOAD DATA, DATE literals); else one to four
	// (exec's CAST of a string).
	Year4 bool
	// MonthDay2 asks for exactly two digits of month and of day (LOAD DATA's
	// YYYY-MM-DD); else one or two (1995-3-5).
	MonthDay2 bool
}

// Date reads all of b, after trimming f.Space, as a date and returns its days since
// 1970-01-01. ErrSyntax if it is not of the form, ErrRange if it is no day of MySQL's DATE
// range (a zero date, 1998-02-30, 0000-01-01).
func Date(b []byte, f DateForm) (int64, error) {
	if !plain(b) {
		b = Trim(b, f.Space)
	}
	if len(b) == 10 && b[4] == '-' && b[7] == '-' {
		// YYYY-MM-DD, every form's, read at fixed places.
		y, ok1 := digits(b[0:4])
		m, ok2 := digits(b[5:7])
		d, ok3 := digits(b[8:10])
		if ok1 && ok2 && ok3 {
			if !civil.Valid(y, m, d) {
				return 0, ErrRange
			}
			return civil.Days(y, m, d), nil
		}
	}
	var part [3]int
	p, nd := 0, 0
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			if nd == 4 || p > 0 && nd == 2 {
				return 0, ErrSyntax
			}
			part[p] = part[p]*10 + int(c-'0')
			nd++
		case c == '-' && nd > 0 && p < 2:
			if p == 0 && f.Year4 && nd != 4 || p == 1 && f.MonthDay2 && nd != 2 {
				return 0, ErrSyntax
			}
			p++
			nd = 0
		default:
			return 0, ErrSyntax
		}
	}
	if p != 2 || nd == 0 || f.MonthDay2 && nd != 2 {
		return 0, ErrSyntax
	}
	if !civil.Valid(part[0], part[1], part[2]) {
		return 0, ErrRange
	}
	return civil.Days(part[0], part[1], part[2]), nil
}

// digits reads a few digits (at most 4) as a number.
func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// Datetime reads all of b, after trimming f.Space, as a DATETIME: a date of form f, then
// optionally ' ' or 'T' and HH:MM[:SS[.ffffff]] (hours 0–23; one or two digits a part;
// fraction digits beyond six are dropped, as MySQL truncates them at parse). It returns
// microseconds since 1970-01-01 00:00:00. A date alone is its midnight.
func Datetime(b []byte, f DateForm) (int64, error) {
	if !plain(b) {
		b = Trim(b, f.Space)
	}
	split := bytes.IndexAny(b, " T")
	if split < 0 {
		d, err := Date(b, f)
		return d * civil.MicrosPerDay, err
	}
	d, err := Date(b[:split], DateForm{Year4: f.Year4, MonthDay2: f.MonthDay2})
	if err != nil {
		return 0, err
	}
	t := b[split+1:]
	var part [3]int
	p, nd := 0, 0
	frac, fracDigits := 0, 0
	i := 0
	for ; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= '0' && c <= '9':
			if nd == 2 {
				return 0, ErrSyntax
			}
			part[p] = part[p]*10 + int(c-'0')
			nd++
		case c == ':' && nd > 0 && p < 2:
			p++
			nd = 0
		case c == '.' && nd > 0 && p == 2:
			for i++; i < len(t); i++ {
				c := t[i]
				if c < '0' || c > '9' {
					return 0, ErrSyntax
				}
				if fracDigits < civil.MaxFsp {
					frac = frac*10 + int(c-'0')
					fracDigits++
				}
			}
			if fracDigits == 0 {
				return 0, ErrSyntax
			}
		default:
			return 0, ErrSyntax
		}
	}
	if p < 1 || nd == 0 {
		return 0, ErrSyntax
	}
	for ; fracDigits < civil.MaxFsp; fracDigits++ {
		frac *= 10
	}
	if part[0] > 23 || part[1] > 59 || part[2] > 59 {
		return 0, ErrRange
	}
	return d*civil.MicrosPerDay + int64(part[0]*3600+part[1]*60+part[2])*civil.MicrosPerSecond + int64(frac), nil
}
