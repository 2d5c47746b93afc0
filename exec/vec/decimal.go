package vec

import (
	"errors"
	"fmt"
)

// errDecimalSyntax is wrapped by ParseDecimal's errors.
var errDecimalSyntax = errors.New("not a decimal number")

// scanDecimal reads [sign] digits [. digits] [(e|E) [sign] digits] from s (after trimming
// ASCII spaces) into a mantissa of at most 38 significant digits, the number of fraction
// digits in the text, and the exponent.
func scanDecimal(s []byte) (mant Int128, fracDigits int32, exp int32, err error) {
	i, j := 0, len(s)
	for i < j && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	for j > i && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	s = s[i:j]
	if len(s) == 0 {
		return mant, 0, 0, errDecimalSyntax
	}
	neg := false
	k := 0
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		k++
	}
	digits, sig := 0, 0
	seenPoint := false
	var m uint64   // low part while it fits
	var big Int128 // used once m would overflow
	useBig := false
	for ; k < len(s); k++ {
		c := s[k]
		if c == '.' {
			if seenPoint {
				return mant, 0, 0, errDecimalSyntax
			}
			seenPoint = true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		digits++
		if seenPoint {
			fracDigits++
		}
		if sig == 0 && c == '0' {
			continue
		}
		sig++
		if sig > MaxPrecision {
			return mant, 0, 0, fmt.Errorf("%w: more than %d significant digits", errDecimalSyntax, MaxPrecision)
		}
		d := uint64(c - '0')
		if !useBig && m <= (1<<63-1-9)/10 {
			m = m*10 + d
			continue
		}
		if !useBig {
			big = Int128{Lo: m}
			useBig = true
		}
		big, _ = big.MulInt64(10)
		big, _ = big.AddInt64(int64(d))
	}
	if digits == 0 {
		return mant, 0, 0, errDecimalSyntax
	}
	if k < len(s) {
		if s[k] != 'e' && s[k] != 'E' {
			return mant, 0, 0, errDecimalSyntax
		}
		k++
		eneg := false
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			eneg = s[k] == '-'
			k++
		}
		if k == len(s) {
			return mant, 0, 0, errDecimalSyntax
		}
		for ; k < len(s); k++ {
			c := s[k]
			if c < '0' || c > '9' || exp > 1000 {
				return mant, 0, 0, errDecimalSyntax
			}
			exp = exp*10 + int32(c-'0')
		}
		if eneg {
			exp = -exp
		}
	}
	if useBig {
		mant = big
	} else {
		mant = Int128{Lo: m}
	}
	if neg {
		mant, _ = mant.Neg()
	}
	return mant, fracDigits, exp, nil
}

// ParseDecimalScale parses text into an unscaled decimal of the given scale, rounding half
// away from zero when the text has more fraction digits; it fails on bad syntax or overflow
// of 38 digits. It does not allocate.
func ParseDecimalScale(s []byte, scale int32) (Int128, error) {
	mant, fd, exp, err := scanDecimal(s)
	if err != nil {
		return Int128{}, err
	}
	shift := scale - fd + exp
	switch {
	case shift > 0:
		if shift > MaxPrecision {
			if mant.Sign() == 0 {
				return mant, nil
			}
			return Int128{}, errOutOfRange
		}
		v, ok := mant.Mul(pow10[shift])
		if !ok || !v.FitsPrecision(MaxPrecision) {
			return Int128{}, errOutOfRange
		}
		return v, nil
	case shift < 0:
		if -shift > MaxPrecision {
			return Int128{}, nil
		}
		v, _ := mant.QuoRound(pow10[-shift])
		return v, nil
	}
	return mant, nil
}

var errOutOfRange = errors.New("decimal value out of range")

// ParseDecimal parses a decimal literal and returns its unscaled value with the smallest
// type that holds it exactly: scale = fraction digits of the text (after the exponent),
// precision = significant digits (at least scale, at least 1).
func ParseDecimal(s string) (Int128, Type, error) {
	_, fd, exp, err := scanDecimal([]byte(s))
	if err != nil {
		return Int128{}, Type{}, fmt.Errorf("vec: %q: %w", s, err)
	}
	scale := max(fd-exp, 0)
	if scale > MaxScale {
		return Int128{}, Type{}, fmt.Errorf("vec: %q: scale above %d", s, MaxScale)
	}
	v, err := ParseDecimalScale([]byte(s), scale)
	if err != nil {
		return Int128{}, Type{}, fmt.Errorf("vec: %q: %w", s, err)
	}
	p := int32(1)
	for p < MaxPrecision && !v.FitsPrecision(p) {
		p++
	}
	if !v.FitsPrecision(p) {
		return Int128{}, Type{}, fmt.Errorf("vec: %q: more than %d digits", s, MaxPrecision)
	}
	return v, Decimal(max(p, scale), scale), nil
}
