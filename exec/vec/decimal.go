package vec

import (
	"errors"
	"fmt"

	"github.com/colinkdb/colink/internal/textparse"
)

// errDecimalSyntax is wrapped by ParseDecimal's errors.
var errDecimalSyntax = errors.New("not a decimal number")

// numberForm is how exec reads a number written as text (CAST of a string, literals):
// blanks and tabs around it, an exponent allowed, at most 38 significant digits.
var numberForm = textparse.NumberForm{Space: textparse.BlanksTabs, Exponent: true, MaxDigits: MaxPrecision}

// decimalErr turns textparse's errors into this package's.
func decimalErr(err error) error {
	switch err {
	case textparse.ErrDigits:
		return fmt.Errorf("%w: more than %d significant digits", errDecimalSyntax, MaxPrecision)
	case textparse.ErrRange:
		return errOutOfRange
	}
	return errDecimalSyntax
}

// ParseDecimalScale parses text into an unscaled decimal of the given scale, rounding half
// away from zero when the text has more fraction digits; it fails on bad syntax or overflow
// of 38 digits. It does not allocate.
func ParseDecimalScale(s []byte, scale int32) (Int128, error) {
	v, err := textparse.Decimal(s, numberForm, scale)
	if err != nil {
		return Int128{}, decimalErr(err)
	}
	return Int128(v), nil
}

var errOutOfRange = errors.New("decimal value out of range")

// ParseDecimal parses a decimal literal and returns its unscaled value with the smallest
// type that holds it exactly: scale = fraction digits of the text (after the exponent),
// precision = significant digits (at least scale, at least 1).
func ParseDecimal(s string) (Int128, Type, error) {
	n, err := textparse.ParseNumber([]byte(s), numberForm)
	if err != nil {
		return Int128{}, Type{}, fmt.Errorf("vec: %q: %w", s, decimalErr(err))
	}
	scale := max(int32(len(n.Frac))-n.Exp, 0)
	if scale > MaxScale {
		return Int128{}, Type{}, fmt.Errorf("vec: %q: scale above %d", s, MaxScale)
	}
	u, err := n.Scaled(scale)
	if err != nil {
		return Int128{}, Type{}, fmt.Errorf("vec: %q: %w", s, decimalErr(err))
	}
	v := Int128(u)
	p := int32(1)
	for p < MaxPrecision && !v.FitsPrecision(p) {
		p++
	}
	if !v.FitsPrecision(p) {
		return Int128{}, Type{}, fmt.Errorf("vec: %q: more than %d digits", s, MaxPrecision)
	}
	return v, Decimal(max(p, scale), scale), nil
}
