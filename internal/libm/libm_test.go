package libm

import (
	"math"
	"testing"
)

// The wants are glibc's results (which MySQL and MariaDB print), for arguments where Go's
// math package gives a different last digit; for Log2, glibc's log(x)/M_LN2.
func TestMatchesGlibc(t *testing.T) {
	fns := map[string]func(x float64) float64{
		"Log": Log, "Log10": Log10, "Exp": Exp, "Log2": Log2,
		"Pow": func(x float64) float64 { return Pow(x, 1.7) },
	}
	for _, c := range []struct {
		fn      string
		x, want float64
	}{
		{"Log", 0.37, -0.9942522733438669},
		{"Log", 3, 1.0986122886681098},
		{"Log", 7.03, 1.9501867058225735},
		{"Log", 14.06, 2.643333886382519},
		{"Log", 21.83, 3.0832851705618523},
		{"Log", 30.71, 3.424588334452731},
		{"Log", 1, 0},
		{"Log2", 3, 1.5849625007211563},
		{"Log2", 10, 3.3219280948873626},
		{"Log2", 0.1, -3.321928094887362},
		{"Log2", 1e-300, -996.5784284662087},
		{"Log2", 12345.678, 13.591718448138552},
		{"Log2", 0.37, -1.434402824145775},
		{"Log2", 1.1, 0.13750352374993502},
		{"Log2", 1024, 10},
		{"Log2", 0.125, -3},
		{"Log10", 20, 1.3010299956639813},
		{"Log10", 40, 1.6020599913279625},
		{"Log10", 60, 1.7781512503836436},
		{"Log10", 4.07, 0.6095944092252201},
		{"Log10", 6.66, 0.8234742291703011},
		{"Log10", 7.77, 0.8904210188009143},
		{"Log10", 9.25, 0.9661417327390326},
		{"Log10", 9.99, 0.9995654882259823},
		{"Log10", 1000, 3},
		{"Log10", 1e-5, -5},
		{"Exp", 0.40700000000000003, 1.5023041056619504},
		{"Exp", 0.74, 2.0959355144943643},
		{"Exp", 0.8879999999999999, 2.4302642590013805},
		{"Exp", 1.036, 2.8179227498821073},
		{"Exp", 1.147, 3.1487325286275762},
		{"Exp", 1, math.E},
		{"Exp", 0, 1},
		{"Pow", 1.85, 2.8457185069141278},
		{"Pow", 2.2199999999999998, 3.8797170782631385},
		{"Pow", 2.59, 5.042078453846657},
		{"Pow", 2.96, 6.326971946184688},
		{"Pow", 3.7, 9.245766706385156},
	} {
		if got := fns[c.fn](c.x); got != c.want {
			t.Errorf("%s(%v) = %v, want %v", c.fn, c.x, got, c.want)
		}
	}
}

func TestSpecialCases(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"Pow(2, 10)", Pow(2, 10), 1024},
		{"Pow(-2, 3)", Pow(-2, 3), -8},
		{"Pow(-2, 2)", Pow(-2, 2), 4},
		{"Pow(2, -2)", Pow(2, -2), 0.25},
		{"Pow(2, 0.5)", Pow(2, 0.5), math.Sqrt2},
		{"Pow(10, -2)", Pow(10, -2), 0.01},
		{"Pow(0, 2)", Pow(0, 2), 0},
		{"Pow(0, -1)", Pow(0, -1), math.Inf(1)},
		{"Pow(5, 0)", Pow(5, 0), 1},
		{"Pow(10, 400)", Pow(10, 400), math.Inf(1)},
		{"Pow(10, -400)", Pow(10, -400), 0},
		{"Pow(1e300, 1)", Pow(1e300, 1), 1e300},
		{"Exp(1000)", Exp(1000), math.Inf(1)},
		{"Exp(-1000)", Exp(-1000), 0},
		{"Exp(709)", Exp(709), 8.218407461554972e307},
		{"Log(0)", Log(0), math.Inf(-1)},
		{"Log(1e-310)", Log(1e-310), -713.8013788281542},
		{"Log(math.MaxFloat64)", Log(math.MaxFloat64), 709.782712893384},
		{"Log10(1e308)", Log10(1e308), 308},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	for name, v := range map[string]float64{"Pow(-8, 0.5)": Pow(-8, 0.5), "Log(-1)": Log(-1), "Log10(-1)": Log10(-1)} {
		if !math.IsNaN(v) {
			t.Errorf("%s = %v, want NaN", name, v)
		}
	}
}

// TestQuickPathBound checks that the quick evaluations stay within an eighth of
// fastRelErr of the precise ones, which the rounding decision relies on.
func TestQuickPathBound(t *testing.T) {
	relDiff := func(a, b dd) float64 {
		d := add(a, dd{-b.hi, -b.lo})
		return math.Abs(d.hi) / math.Abs(b.hi)
	}
	worstExp, worstLog := 0.0, 0.0
	x := 1e-9
	for i := 0; i < 20000; i++ {
		x *= 1.0013
		for _, v := range []float64{x, -x, x * 1e-3, -x * 7.1} {
			if math.Abs(v) > 700 {
				continue
			}
			q, kq := expDD(dd{v, 0}, false)
			p, kp := expDD(dd{v, 0}, true)
			if kq != kp {
				t.Fatalf("exp(%v): k %d and %d", v, kq, kp)
			}
			worstExp = max(worstExp, relDiff(q, p))
		}
		for _, v := range []float64{x, 1 + x*1e-6, 1 - x*1e-7, x * 1e300, x * 1e-300} {
			worstLog = max(worstLog, relDiff(logDD(v, false), logDD(v, true)))
		}
	}
	t.Logf("worst relative difference: exp %g (2^%.1f), log %g (2^%.1f)", worstExp, math.Log2(worstExp), worstLog, math.Log2(worstLog))
	if worstExp > fastRelErr/8 || worstLog > fastRelErr/8 {
		t.Errorf("the quick path errs by more than fastRelErr/8")
	}
}
