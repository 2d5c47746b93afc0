package frontend

import (
	"math"
	"math/bits"
	"strconv"

	"github.com/colinkdb/colink/internal/civil"
)

// This file formats values as MySQL's text protocol spells them. Every function appends to
// dst and allocates nothing beyond dst's growth.

// appendDecimal64 appends v / 10^scale with exactly scale digits after the point.
func appendDecimal64(dst []byte, v int64, scale int32) []byte {
	neg := v < 0
	u := uint64(v)
	if neg {
		u = -u // two's complement negation is right for math.MinInt64 too
	}
	var digits [20]byte
	return appendScaled(dst, neg, strconv.AppendUint(digits[:0], u, 10), scale)
}

// appendDecimal128 appends the 128-bit two's complement integer hi:lo divided by 10^scale,
// with exactly scale digits after the point.
func appendDecimal128(dst []byte, hi int64, lo uint64, scale int32) []byte {
	if (hi == 0 && lo < 1<<63) || (hi == -1 && lo >= 1<<63) { // fits in an int64
		return appendDecimal64(dst, int64(lo), scale)
	}
	neg := hi < 0
	uhi := uint64(hi)
	if neg {
		var borrow uint64
		lo, borrow = bits.Sub64(0, lo, 0)
		uhi, _ = bits.Sub64(0, uhi, borrow)
	}
	// Split the magnitude into base-10^19 limbs, least significant first: at most 3 for 2^128.
	const base = 1e19
	var limbs [3]uint64
	n := 0
	for uhi != 0 || lo != 0 {
		var rem uint64
		uhi, rem = uhi/base, uhi%base
		lo, rem = bits.Div64(rem, lo, base)
		limbs[n] = rem
		n++
	}
	var digits [60]byte
	d := strconv.AppendUint(digits[:0], limbs[n-1], 10)
	for i := n - 2; i >= 0; i-- {
		// Lower limbs are written as exactly 19 digits, zero-padded.
		var limb [19]byte
		v := limbs[i]
		for j := 18; j >= 0; j-- {
			limb[j] = byte('0' + v%10)
			v /= 10
		}
		d = append(d, limb[:]...)
	}
	return appendScaled(dst, neg, d, scale)
}

// appendScaled appends the unsigned integer whose decimal digits are digits, divided by
// 10^scale, with a leading "0" before the point when there is no integer part.
func appendScaled(dst []byte, neg bool, digits []byte, scale int32) []byte {
	if neg {
		dst = append(dst, '-')
	}
	if scale <= 0 {
		dst = append(dst, digits...)
		for ; scale < 0; scale++ {
			dst = append(dst, '0')
		}
		return dst
	}
	s := int(scale)
	if len(digits) <= s {
		dst = append(dst, '0', '.')
		for i := len(digits); i < s; i++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	intLen := len(digits) - s
	dst = append(dst, digits[:intLen]...)
	dst = append(dst, '.')
	return append(dst, digits[intLen:]...)
}

// appendDate appends days since 1970-01-01 as YYYY-MM-DD (proleptic Gregorian calendar).
func appendDate(dst []byte, days int32) []byte { return civil.AppendDate(dst, int64(days)) }

// appendDouble appends f as MySQL prints a DOUBLE it has no scale for: the shortest digits
// that read back as f, in fixed notation unless the number is below 1e-15 in magnitude or
// an integer of more than 15 digits, in which case as d.ddde[-]N (MySQL's my_gcvt with a wide
// field); negative zero is "0", as MariaDB prints it (10.11.19; MySQL 8 prints "-0"). MySQL has no infinities or NaN; they print as "inf",
// "-inf" and "nan".
func appendDouble(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case f == 0:
		return append(dst, '0') // negative zero too
	}
	// 'e' with precision -1 gives the shortest digits: "-d.ddde±XX".
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, bitSize)
	neg := e[0] == '-'
	if neg {
		e = e[1:]
	}
	var digits [24]byte
	nd := 0
	i := 0
	for ; e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	exp := 0
	for _, c := range e[i+2:] { // e[i+1] is the exponent's sign
		exp = exp*10 + int(c-'0')
	}
	if e[i+1] == '-' {
		exp = -exp
	}
	decpt := exp + 1        // digits before the point
	const maxDecptForF = 15 // DBL_DIG
	if neg {
		dst = append(dst, '-')
	}
	if decpt >= -maxDecptForF+1 && (decpt <= maxDecptForF || nd > decpt) {
		switch {
		case decpt <= 0:
			dst = append(dst, '0', '.')
			for j := decpt; j < 0; j++ {
				dst = append(dst, '0')
			}
			dst = append(dst, digits[:nd]...)
		case decpt < nd:
			dst = append(dst, digits[:decpt]...)
			dst = append(dst, '.')
			dst = append(dst, digits[decpt:nd]...)
		default:
			dst = append(dst, digits[:nd]...)
			for j := nd; j < decpt; j++ {
				dst = append(dst, '0')
			}
		}
		return dst
	}
	dst = append(dst, digits[0])
	if nd > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:nd]...)
	}
	dst = append(dst, 'e')
	return strconv.AppendInt(dst, int64(exp), 10)
}
