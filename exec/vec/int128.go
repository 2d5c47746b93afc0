package vec

import (
	"math/big"
	"math/bits"
)

// Int128 is a signed 128-bit two's-complement integer. Its memory layout (Lo first) is that
// of Arrow's decimal128.Num, so a []Int128 can view an Arrow Decimal128 buffer directly.
type Int128 struct {
	Lo uint64
	Hi int64
}

// I128 widens an int64.
func I128(v int64) Int128 { return Int128{Lo: uint64(v), Hi: v >> 63} }

// MaxInt128 is the largest Int128 (functions, not variables: Go has no struct constants,
// and an exported variable could be changed by any importer).
func MaxInt128() Int128 { return Int128{Lo: ^uint64(0), Hi: 1<<63 - 1} }

// MinInt128 is the smallest Int128.
func MinInt128() Int128 { return Int128{Lo: 0, Hi: minInt128Hi} }

// minInt128Hi is MinInt128's high word. The hot paths (Neg, fromMag) compare against the
// literal rather than call MinInt128, which would take fromMag over the inlining budget
// (measured: decimal division 15–20 % slower).
const minInt128Hi = -1 << 63

// IsInt64 reports whether v fits in an int64.
func (v Int128) IsInt64() bool { return v.Hi == int64(v.Lo)>>63 }

// Sign returns -1, 0 or 1.
func (v Int128) Sign() int {
	if v.Hi < 0 {
		return -1
	}
	if v.Hi == 0 && v.Lo == 0 {
		return 0
	}
	return 1
}

// Cmp compares v and w: -1, 0 or 1.
func (v Int128) Cmp(w Int128) int {
	if v.Hi != w.Hi {
		if v.Hi < w.Hi {
			return -1
		}
		return 1
	}
	if v.Lo != w.Lo {
		if v.Lo < w.Lo {
			return -1
		}
		return 1
	}
	return 0
}

// Less reports v < w.
func (v Int128) Less(w Int128) bool {
	return v.Hi < w.Hi || (v.Hi == w.Hi && v.Lo < w.Lo)
}

// Add returns v+w and whether it did not overflow.
func (v Int128) Add(w Int128) (Int128, bool) {
	lo, c := bits.Add64(v.Lo, w.Lo, 0)
	hi := v.Hi + w.Hi + int64(c)
	return Int128{Lo: lo, Hi: hi}, (v.Hi^hi)&(w.Hi^hi) >= 0
}

// AddInt64 returns v+w and whether it did not overflow.
func (v Int128) AddInt64(w int64) (Int128, bool) {
	lo, c := bits.Add64(v.Lo, uint64(w), 0)
	wh := w >> 63
	hi := v.Hi + wh + int64(c)
	return Int128{Lo: lo, Hi: hi}, (v.Hi^hi)&(wh^hi) >= 0
}

// Sub returns v-w and whether it did not overflow.
func (v Int128) Sub(w Int128) (Int128, bool) {
	lo, b := bits.Sub64(v.Lo, w.Lo, 0)
	hi := v.Hi - w.Hi - int64(b)
	return Int128{Lo: lo, Hi: hi}, (v.Hi^w.Hi)&(v.Hi^hi) >= 0
}

// Neg returns -v and whether it did not overflow (only MinInt128 overflows).
func (v Int128) Neg() (Int128, bool) {
	lo, b := bits.Sub64(0, v.Lo, 0)
	hi := -v.Hi - int64(b)
	return Int128{Lo: lo, Hi: hi}, v != Int128{Hi: minInt128Hi}
}

// uabs returns |v| as an unsigned 128-bit magnitude (hi, lo); |MinInt128| = 2^127 fits.
func (v Int128) uabs() (uint64, uint64) {
	if v.Hi >= 0 {
		return uint64(v.Hi), v.Lo
	}
	lo, b := bits.Sub64(0, v.Lo, 0)
	return uint64(-v.Hi) - b, lo
}

// fromMag applies a sign to a magnitude, reporting overflow of the signed range.
func fromMag(hi, lo uint64, neg bool) (Int128, bool) {
	if hi > 1<<63-1 {
		if neg && hi == 1<<63 && lo == 0 {
			return Int128{Hi: minInt128Hi}, true
		}
		return Int128{}, false
	}
	r := Int128{Lo: lo, Hi: int64(hi)}
	if neg {
		r, _ = r.Neg()
	}
	return r, true
}

// Mul returns v*w and whether it did not overflow.
func (v Int128) Mul(w Int128) (Int128, bool) {
	neg := (v.Hi < 0) != (w.Hi < 0)
	ah, al := v.uabs()
	bh, bl := w.uabs()
	if ah != 0 && bh != 0 {
		return Int128{}, false
	}
	hi, lo := bits.Mul64(al, bl)
	var ch, cl uint64
	if ah != 0 {
		ch, cl = bits.Mul64(ah, bl)
	} else if bh != 0 {
		ch, cl = bits.Mul64(al, bh)
	}
	if ch != 0 {
		return Int128{}, false
	}
	var c uint64
	hi, c = bits.Add64(hi, cl, 0)
	if c != 0 {
		return Int128{}, false
	}
	return fromMag(hi, lo, neg && (hi|lo) != 0)
}

// MulInt64 returns v*w and whether it did not overflow.
func (v Int128) MulInt64(w int64) (Int128, bool) { return v.Mul(I128(w)) }

// Mul64x64 multiplies two int64 exactly into an Int128 (never overflows).
func Mul64x64(a, b int64) Int128 {
	neg := (a < 0) != (b < 0)
	ua, ub := uint64(a), uint64(b)
	if a < 0 {
		ua = -ua
	}
	if b < 0 {
		ub = -ub
	}
	hi, lo := bits.Mul64(ua, ub)
	r := Int128{Lo: lo, Hi: int64(hi)}
	if neg {
		r, _ = r.Neg()
	}
	return r
}

// QuoRound returns v/w rounded half away from zero (MySQL's rounding of decimal division)
// and ok=false if w is zero or the quotient overflows.
func (v Int128) QuoRound(w Int128) (Int128, bool) { return v.quo(w, true) }

// QuoTrunc returns v/w truncated toward zero and ok=false if w is zero or on overflow.
func (v Int128) QuoTrunc(w Int128) (Int128, bool) { return v.quo(w, false) }

// Quo is QuoRound when round is set, else QuoTrunc.
func (v Int128) Quo(w Int128, round bool) (Int128, bool) { return v.quo(w, round) }

// quo divides the magnitudes, rounding half away from zero when round is set, and signs
// the quotient.
func (v Int128) quo(w Int128, round bool) (Int128, bool) {
	if w.Hi == 0 && w.Lo == 0 {
		return Int128{}, false
	}
	neg := (v.Hi < 0) != (w.Hi < 0)
	ah, al := v.uabs()
	bh, bl := w.uabs()
	if bh == 0 {
		qh := ah / bl
		r := ah % bl
		ql, r := bits.Div64(r, al, bl)
		// Round half away from zero: r >= bl - r  <=>  2r >= bl, without overflowing 2r.
		if round && r >= bl-r {
			var c uint64
			ql, c = bits.Add64(ql, 1, 0)
			qh += c
		}
		return fromMag(qh, ql, neg && (qh|ql) != 0)
	}
	// Divisor wider than 64 bits: rare (both operands huge); exact via math/big.
	a := new(big.Int).SetUint64(ah)
	a.Lsh(a, 64).Or(a, new(big.Int).SetUint64(al))
	b := new(big.Int).SetUint64(bh)
	b.Lsh(b, 64).Or(b, new(big.Int).SetUint64(bl))
	q, r := new(big.Int).QuoRem(a, b, new(big.Int))
	if round && r.Lsh(r, 1).Cmp(b) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if q.BitLen() > 128 {
		return Int128{}, false
	}
	lo := q.Uint64()
	hi := new(big.Int).Rsh(q, 64).Uint64()
	return fromMag(hi, lo, neg && q.Sign() != 0)
}

// pow10 holds 10^0 .. 10^38 as Int128 values; it is read-only after package initialisation.
var pow10 = func() [MaxPrecision + 1]Int128 {
	var t [MaxPrecision + 1]Int128
	t[0] = I128(1)
	for i := 1; i <= MaxPrecision; i++ {
		t[i], _ = t[i-1].MulInt64(10)
	}
	return t
}()

// Pow10 returns 10^k for 0 <= k <= 38.
func Pow10(k int32) Int128 { return pow10[k] }

// Pow10Int64 returns 10^k for 0 <= k <= 18.
func Pow10Int64(k int32) int64 { return int64(pow10[k].Lo) }

// FitsPrecision reports whether |v| < 10^p (v has at most p digits).
func (v Int128) FitsPrecision(p int32) bool {
	if p >= MaxPrecision+1 {
		return true
	}
	lim := pow10[p]
	if v.Hi < 0 {
		n, ok := v.Neg()
		if !ok {
			return false
		}
		v = n
	}
	return v.Less(lim)
}

// FitsPrecision64 reports whether |v| < 10^p for p <= 18.
func FitsPrecision64(v int64, p int32) bool {
	lim := int64(pow10[p].Lo)
	return v < lim && v > -lim
}

// Rescale changes the scale of an unscaled decimal from `from` to `to` digits, rounding half
// away from zero when digits are dropped; ok=false on overflow.
func (v Int128) Rescale(from, to int32) (Int128, bool) {
	switch {
	case to > from:
		return v.Mul(pow10[to-from])
	case to < from:
		return v.QuoRound(pow10[from-to])
	}
	return v, true
}

// AppendDecimal appends v / 10^scale in plain notation ("-12.50") to dst.
func (v Int128) AppendDecimal(dst []byte, scale int32) []byte {
	hi, lo := v.uabs()
	var digits [40]byte
	n := len(digits)
	for hi != 0 || lo != 0 {
		// Divide the 128-bit magnitude by 10^19 and emit the remainder's 19 digits.
		const d = 10_000_000_000_000_000_000
		qh := hi / d
		r := hi % d
		ql, rem := bits.Div64(r, lo, d)
		hi, lo = qh, ql
		for k := 0; k < 19; k++ {
			n--
			digits[n] = byte('0' + rem%10)
			rem /= 10
			if hi == 0 && lo == 0 && rem == 0 {
				break
			}
		}
	}
	ds := digits[n:]
	if v.Hi < 0 {
		dst = append(dst, '-')
	}
	if int(scale) >= len(ds) {
		dst = append(dst, '0')
		if scale > 0 {
			dst = append(dst, '.')
			for i := len(ds); i < int(scale); i++ {
				dst = append(dst, '0')
			}
			dst = append(dst, ds...)
		}
		return dst
	}
	ip := len(ds) - int(scale)
	dst = append(dst, ds[:ip]...)
	if scale > 0 {
		dst = append(dst, '.')
		dst = append(dst, ds[ip:]...)
	}
	return dst
}

// String formats v as an integer.
func (v Int128) String() string { return string(v.AppendDecimal(nil, 0)) }

// AppendDecimal64 appends v / 10^scale in plain notation to dst.
func AppendDecimal64(dst []byte, v int64, scale int32) []byte {
	return I128(v).AppendDecimal(dst, scale)
}
