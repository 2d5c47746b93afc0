// Package libm owns colink's double-precision exponential, logarithm and power functions
// for SQL's EXP, LN, LOG2, LOG10 and POW. MySQL and MariaDB call the C library, whose
// exp, log and pow (glibc's) are correctly rounded for nearly every argument; Go's math
// package is accurate to within one unit in the last place only, so its Exp, Log10 and
// Pow differ from MySQL's in the last printed digit for a sixth to a half of all
// arguments. Exp, Log and Pow here evaluate in double-double arithmetic (about 100 bits)
// and round once, so they are correctly rounded and agree with glibc's wherever glibc's
// are; Log10 follows the C library's own (not correctly rounded) method and Log2 MySQL's.
// The constant folder and the execution kernels both call them, so a folded value and a
// computed one are the same double.
package libm

import "math"

// dd is an unevaluated sum hi + lo with |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

// Double-double constants: the nearest double, then the nearest double to the rest.
const (
	ln2Hi = 0x1.62e42fefa39efp-1
	ln2Lo = 0x1.abc9e3b39803fp-56
)

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

// quickTwoSum is twoSum for |a| >= |b|.
func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func add(a, b dd) dd {
	s, t := twoSum(a.hi, b.hi), twoSum(a.lo, b.lo)
	s.lo += t.hi
	s = quickTwoSum(s.hi, s.lo)
	s.lo += t.lo
	return quickTwoSum(s.hi, s.lo)
}

func mul(a, b dd) dd {
	p := twoProd(a.hi, b.hi)
	p.lo += a.hi*b.lo + a.lo*b.hi
	return quickTwoSum(p.hi, p.lo)
}

func mulF(a dd, b float64) dd {
	p := twoProd(a.hi, b)
	p.lo += a.lo * b
	return quickTwoSum(p.hi, p.lo)
}

// divF is a / b for a small integer b.
func divF(a dd, b float64) dd {
	q := a.hi / b
	p := twoProd(q, b)
	r := ((a.hi - p.hi) - p.lo + a.lo) / b
	return quickTwoSum(q, r)
}

// expm1Reduced is e^r - 1 for |r| <= 0.35 (after r is reduced by multiples of ln 2),
// with a relative error below 2^-100.
func expm1Reduced(r dd) dd {
	// e^(r/1024) - 1 by its Taylor series (|r/1024| < 3.5e-4, so nine terms leave an
	// error below 1e-33), then ten doublings: e^(2s) - 1 = (e^s - 1)(e^s - 1 + 2).
	const halvings = 10
	s := dd{math.Ldexp(r.hi, -halvings), math.Ldexp(r.lo, -halvings)}
	q := dd{1, 0}
	for n := 9.0; n >= 2; n-- {
		q = add(dd{1, 0}, divF(mul(q, s), n))
	}
	m := mul(s, q)
	for range halvings {
		m = mul(m, add(m, dd{2, 0}))
	}
	return m
}

// expm1Quick is expm1Reduced in a third of the time with a relative error below
// 2^-70 (fastRelErr covers it): the first three terms of the series in double-double, the
// rest in doubles, after only four halvings.
func expm1Quick(r dd) dd {
	const halvings = 4
	s := dd{math.Ldexp(r.hi, -halvings), math.Ldexp(r.lo, -halvings)} // |s| < 0.022
	// s^4/4! + … + s^11/11! (the next term is below 2^-90 of the sum).
	inv := [...]float64{1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320,
		1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800}
	h := s.hi
	tail := inv[len(inv)-1]
	for i := len(inv) - 2; i >= 0; i-- {
		tail = tail*h + inv[i]
	}
	h2 := h * h
	tail *= h2 * h2
	s2 := mul(s, s)
	m := add(add(s, mulF(s2, 0.5)), add(divF(mul(s2, s), 6), dd{tail, 0}))
	for range halvings {
		m = mul(m, add(m, dd{2, 0}))
	}
	return m
}

// fastRelErr bounds the relative error of a result computed with expm1Quick (2^-70, with
// room for the steps around it). A result that close to a rounding boundary is
// recomputed precisely (Ziv's strategy): it is rare, so the quick path sets the speed.
const fastRelErr = 0x1p-68

// ambiguous reports a double-double whose rounding to a double the error bound relErr
// cannot settle: within relErr of a midpoint between two doubles (or next to a power of
// two, where the spacing changes).
func ambiguous(v dd, relErr float64) bool {
	a := math.Abs(v.hi)
	if m, _ := math.Frexp(a); m == 0.5 {
		return true
	}
	half := (math.Nextafter(a, math.Inf(1)) - a) / 2
	return math.Abs(math.Abs(v.lo)-half) <= relErr*a
}

// expDD is e^x for a double-double x with |x| <= 746, as k and a double-double f: the
// value is f × 2^k, with f in [0.7, 1.5).
func expDD(x dd, precise bool) (f dd, k int) {
	kf := math.RoundToEven(x.hi / ln2Hi)
	// r = x - k ln2, exactly enough: k ln2.hi is exact in double-double.
	r := add(x, mulF(dd{-ln2Hi, -ln2Lo}, kf))
	if precise {
		return add(dd{1, 0}, expm1Reduced(r)), int(kf)
	}
	return add(dd{1, 0}, expm1Quick(r)), int(kf)
}

// expRounded is e^x as f × 2^k, f accurate enough to round correctly.
func expRounded(x dd) (f dd, k int) {
	f, k = expDD(x, false)
	if ambiguous(f, fastRelErr) {
		f, k = expDD(x, true)
	}
	return f, k
}

// Exp is e^x rounded to the nearest double: +Inf beyond the doubles, 0 below them.
func Exp(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case x > 709.8:
		return math.Inf(1)
	case x < -745.2:
		return 0
	case x == 0:
		return 1
	}
	return scale(expRounded(dd{x, 0}))
}

// scale rounds f × 2^k to a double. A subnormal result is rounded twice (f, then its
// scaling); glibc's subnormal results are not correctly rounded either.
func scale(f dd, k int) float64 { return math.Ldexp(f.hi+f.lo, k) }

// logDD is ln x, as a double-double, for a finite x > 0: with a relative error below
// 2^-100 if precise, fastRelErr if not.
func logDD(x float64, precise bool) dd {
	m, e := math.Frexp(x) // x = m × 2^e, m in [0.5, 1)
	if m < math.Sqrt2/2 {
		m, e = m*2, e-1
	}
	// ln m, |ln m| < 0.35, refined by one Newton step from Go's: y = y0 + (m e^-y0 - 1),
	// whose error is the square of y0's (~1e-32).
	y0 := math.Log(m)
	// Only an absolute error matters here, and e^-y0 - 1 keeps its relative accuracy, so
	// the error of ln m stays relative too, even when m is near 1.
	f, k := expDD(dd{-y0, 0}, precise)
	f = dd{math.Ldexp(f.hi, k), math.Ldexp(f.lo, k)}
	t := add(mulF(f, m), dd{-1, 0})
	y := add(dd{y0, 0}, t)
	return add(mulF(dd{ln2Hi, ln2Lo}, float64(e)), y)
}

// Log is the natural logarithm of x > 0 rounded to the nearest double (NaN for x < 0,
// -Inf for 0, as math.Log).
func Log(x float64) float64 {
	if x <= 0 || math.IsInf(x, 1) || math.IsNaN(x) || x == 1 {
		return math.Log(x)
	}
	l := logDD(x, false)
	if ambiguous(l, fastRelErr) {
		l = logDD(x, true)
	}
	return l.hi + l.lo
}

// Pow is x^y rounded to the nearest double, with the special cases of C's pow (and
// math.Pow): a negative x needs an integer y; 0 to a negative power is +Inf.
func Pow(x, y float64) float64 {
	switch {
	case y == 0 || x == 1:
		return 1
	case math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) || x == 0:
		return math.Pow(x, y)
	case y == 1:
		return x
	}
	neg := false
	if x < 0 {
		if y != math.Trunc(y) {
			return math.NaN()
		}
		// An odd integer power keeps the sign (above 2^53 every double is even).
		neg = math.Abs(y) < 1<<53 && math.Mod(y, 2) != 0
		x = -x
	}
	var r float64
	for _, precise := range []bool{false, true} {
		// On the quick path y ln x has an absolute error of up to fastRelErr × |y ln x|,
		// so x^y has that much relative error.
		p := mulF(logDD(x, precise), y)
		switch {
		case p.hi > 709.8:
			r = math.Inf(1)
		case p.hi < -745.2:
			r = 0
		default:
			f, k := expDD(p, precise)
			if !precise && ambiguous(f, fastRelErr*max(1, 2*math.Abs(p.hi))) {
				continue
			}
			r = scale(f, k)
		}
		break
	}
	if neg {
		r = -r
	}
	return r
}

// Log2 is log(x) / M_LN2, as MySQL and MariaDB compute LOG2 (not C's log2): each step
// rounded, so not always the nearest double to log2(x), but MySQL's digits.
func Log2(x float64) float64 { return Log(x) / ln2Hi }

// Log10 is log10 as C libraries derived from fdlibm compute it (glibc's, which MySQL
// calls): the exponent's part in two pieces plus log(mantissa)/ln 10, each rounded. It is
// not correctly rounded (it differs from the correctly rounded value for a few percent of
// arguments), but it is what MySQL prints.
func Log10(x float64) float64 {
	if x <= 0 || math.IsInf(x, 1) || math.IsNaN(x) {
		return math.Log10(x)
	}
	const (
		ivln10    = 4.34294481903251816668e-01
		log10_2hi = 3.01029995663611771306e-01
		log10_2lo = 3.69423907715893078616e-13
	)
	m, e := math.Frexp(x) // x = m × 2^e, m in [0.5, 1): fdlibm's k is e-1
	k := e - 1
	// The mantissa in [1, 2) for k >= 0, in [0.5, 1) for k < 0, and y = k or k+1.
	y := float64(k)
	if k < 0 {
		y = float64(k + 1)
	} else {
		m *= 2
	}
	// The conversions round each product, as C does: no fused multiply-add.
	z := float64(y*log10_2lo) + float64(ivln10*Log(m))
	return z + float64(y*log10_2hi)
}
