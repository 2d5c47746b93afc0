package fn

import (
	"bytes"
	"cmp"
	"math"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/libm"
)

// The numeric functions' kernels. Exact numbers stay exact (decimals are unscaled
// integers); a result its type cannot hold is MySQL's error 1690, never a wrapped value.

// outOfRange is error 1690 for a result of type t that does not fit.
func outOfRange(s *Site, t vec.Type) error {
	if t.IsDecimal() {
		return vec.OutOfRange("DECIMAL", s.Text())
	}
	return vec.OutOfRange("BIGINT", s.Text())
}

// unsignedKernel passes BIGINTs that BIGINT UNSIGNED holds too and refuses a negative one.
func unsignedKernel(s *Site) Kernel {
	return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
		a := args[0]
		for _, i := range live {
			v := a.I64[i]
			if v < 0 {
				return vec.OutOfRange("BIGINT UNSIGNED", s.Text())
			}
			out.I64[i] = v
		}
		return nil
	}
}

func absKernel(s *Site) Kernel {
	t := s.Sig.Result.Type
	return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
		a := args[0]
		switch t.ID {
		case vec.Int64, vec.Decimal64:
			for _, i := range live {
				v := a.I64[i]
				if v < 0 {
					if v == math.MinInt64 {
						return vec.OutOfRange("BIGINT", s.Text())
					}
					v = -v
				}
				out.I64[i] = v
			}
		case vec.Decimal128:
			for _, i := range live {
				v := a.D128[i]
				if v.Sign() < 0 {
					var ok bool
					if v, ok = v.Neg(); !ok {
						return vec.OutOfRange("DECIMAL", s.Text())
					}
				}
				out.D128[i] = v
			}
		case vec.Float64:
			for _, i := range live {
				out.F64[i] = math.Abs(a.F64[i])
			}
		}
		return nil
	}
}

// roundKernel is ROUND(x, d) (half away from zero for exact numbers, MySQL's rint — half to
// even — for doubles) or, with truncate, TRUNCATE(x, d); d is built in (0 when omitted).
func roundKernel(truncate bool) func(*Site) Kernel {
	return func(s *Site) Kernel {
		var d int64
		if len(s.Consts) > 1 {
			d = DigitsValue(s.Consts[1])
		}
		in, t := s.Sig.Args[0], s.Sig.Result.Type
		switch {
		case in.ID == vec.Float64:
			return roundFloat(d, truncate)
		case (in.ID == vec.Int64 || in.ID == vec.Decimal64) && (t.ID == vec.Int64 || t.ID == vec.Decimal64):
			return roundDec64(s, d, truncate)
		}
		return roundDec(s, d, truncate)
	}
}

// roundUnit rounds (half away from zero) or truncates v, an unscaled decimal of scale s (0
// for integers), to d places, and returns the result unscaled at scale max(d, 0), with
// ok=false on overflow. d < s.
func roundUnit(v vec.Int128, s int32, d int64, truncate bool) (vec.Int128, bool) {
	k := int64(s) - d // digits to drop, > 0
	if k > vec.MaxPrecision {
		return vec.Int128{}, true // |v| < 10^38: nothing is left
	}
	var q vec.Int128
	var ok bool
	if truncate {
		q, ok = v.QuoTrunc(vec.Pow10(int32(k)))
	} else {
		q, ok = v.QuoRound(vec.Pow10(int32(k)))
	}
	if !ok || d >= 0 {
		return q, ok
	}
	if -d > vec.MaxPrecision {
		if q.Sign() == 0 {
			return q, true
		}
		return vec.Int128{}, false
	}
	return q.Mul(vec.Pow10(int32(-d)))
}

// roundDec64 rounds Decimal64 or BIGINT values into a result of the same payload, in
// 64-bit arithmetic where the digits dropped fit.
func roundDec64(site *Site, d int64, truncate bool) Kernel {
	t := site.Sig.Result.Type
	fits := func(out *vec.Vec, live []int32) error {
		if t.IsDecimal() && !vec.RowsFitPrecision64(out.I64, live, t.Precision) {
			return outOfRange(site, t)
		}
		return nil
	}
	return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
		in := args[0]
		s := in.Type.DecimalScale()
		if d >= int64(s) {
			vec.CopyRows(out.I64, in.I64, live)
			return nil
		}
		k := int64(s) - d
		if d >= 0 && k <= 18 {
			unit := vec.Pow10Int64(int32(k))
			half := unit / 2
			for _, i := range live {
				v := in.I64[i]
				q, r := v/unit, v%unit
				if !truncate {
					if r >= half && half > 0 {
						q++
					} else if r <= -half && half > 0 {
						q--
					}
				}
				out.I64[i] = q
			}
			return fits(out, live)
		}
		for _, i := range live {
			v, ok := roundUnit(vec.I128(in.I64[i]), s, d, truncate)
			if !ok || !v.IsInt64() {
				return outOfRange(site, t)
			}
			out.I64[i] = int64(v.Lo)
		}
		return fits(out, live)
	}
}

// roundDec is the general decimal path: any input payload, a Decimal64 or Decimal128
// result.
func roundDec(site *Site, d int64, truncate bool) Kernel {
	t := site.Sig.Result.Type
	return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
		in := args[0]
		s := in.Type.DecimalScale()
		for _, i := range live {
			v := decimalAt(in, i)
			if d < int64(s) {
				var ok bool
				if v, ok = roundUnit(v, s, d, truncate); !ok {
					return outOfRange(site, t)
				}
			}
			if !v.FitsPrecision(t.DecimalPrecision()) && t.IsDecimal() {
				return outOfRange(site, t)
			}
			if t.ID == vec.Decimal128 {
				out.D128[i] = v
				continue
			}
			if !v.IsInt64() {
				return outOfRange(site, t)
			}
			out.I64[i] = int64(v.Lo)
		}
		return nil
	}
}

// decimalAt is row i of a decimal or BIGINT vector as a 128-bit unscaled value.
func decimalAt(v *vec.Vec, i int32) vec.Int128 {
	if v.Type.ID == vec.Decimal128 {
		return v.D128[i]
	}
	return vec.I128(v.I64[i])
}

// roundFloat rounds doubles as MySQL does (rint: halves to even) or truncates them.
func roundFloat(d int64, truncate bool) Kernel {
	f := math.RoundToEven
	if truncate {
		f = math.Trunc
	}
	return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
		a := args[0].F64
		if d >= 0 {
			p := math.Pow(10, float64(d))
			for _, i := range live {
				x := a[i] * p
				if math.IsInf(x, 0) {
					out.F64[i] = a[i] // more digits than a double holds: unchanged
					continue
				}
				out.F64[i] = f(x) / p
			}
			return nil
		}
		p := math.Pow(10, float64(-d))
		for _, i := range live {
			if math.IsInf(p, 0) {
				out.F64[i] = 0
				continue
			}
			out.F64[i] = f(a[i]/p) * p
		}
		return nil
	}
}

// floorKernel is FLOOR(x) or, with ceil, CEIL(x).
func floorKernel(ceil bool) func(*Site) Kernel {
	return func(s *Site) Kernel {
		switch s.Sig.Args[0].ID {
		case vec.Float64:
			return floorFloat(ceil)
		case vec.Int64:
			return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
				vec.CopyRows(out.I64, args[0].I64, live)
				return nil
			}
		}
		return floorDec(s, ceil)
	}
}

func floorFloat(ceil bool) Kernel {
	f := math.Floor
	if ceil {
		f = math.Ceil
	}
	return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
		a := args[0].F64
		for _, i := range live {
			out.F64[i] = f(a[i])
		}
		return nil
	}
}

func floorDec(site *Site, ceil bool) Kernel {
	return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
		in := args[0]
		s := in.Type.Scale
		if in.Type.ID == vec.Decimal64 && out.Type.ID == vec.Int64 {
			unit := vec.Pow10Int64(s)
			for _, i := range live {
				v := in.I64[i]
				q, r := v/unit, v%unit
				if ceil && r > 0 {
					q++
				} else if !ceil && r < 0 {
					q--
				}
				out.I64[i] = q
			}
			return nil
		}
		unit := vec.Pow10(s)
		for _, i := range live {
			v := decimalAt(in, i)
			q, _ := v.QuoTrunc(unit)
			back, _ := q.Mul(unit)
			r, _ := v.Sub(back)
			if ceil && r.Sign() > 0 {
				q, _ = q.AddInt64(1)
			} else if !ceil && r.Sign() < 0 {
				q, _ = q.AddInt64(-1)
			}
			switch out.Type.ID {
			case vec.Decimal128:
				out.D128[i] = q
			default:
				if !q.IsInt64() {
					return outOfRange(site, out.Type)
				}
				out.I64[i] = int64(q.Lo)
			}
		}
		return nil
	}
}

// signKernel is SIGN(x): -1, 0 or 1.
func signKernel(*Site) Kernel {
	return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
		a := args[0]
		switch a.Type.ID {
		case vec.Int64, vec.Decimal64:
			for _, i := range live {
				out.I64[i] = int64(cmp.Compare(a.I64[i], 0))
			}
		case vec.Decimal128:
			for _, i := range live {
				out.I64[i] = int64(a.D128[i].Sign())
			}
		case vec.Float64:
			for _, i := range live {
				out.I64[i] = int64(cmp.Compare(a.F64[i], 0))
			}
		}
		return nil
	}
}

// floatKernel applies f to a double argument; rows where isNull holds are NULL (MySQL's
// SQRT(-1), LN(0)) and a result beyond the finite doubles is an error, as MySQL's.
func floatKernel(f func(float64) float64, isNull func(float64) bool) func(*Site) Kernel {
	return func(s *Site) Kernel {
		return func(args []*vec.Vec, out *vec.Vec, live []int32, nrows int) error {
			a := args[0].F64
			for _, i := range live {
				x := a[i]
				if isNull != nil && isNull(x) {
					out.SetNull(nrows, i)
					continue
				}
				r := f(x)
				if math.IsInf(r, 0) || math.IsNaN(r) {
					return vec.OutOfRange("DOUBLE", s.Text())
				}
				out.F64[i] = r
			}
			return nil
		}
	}
}

// notPositive is the domain where a logarithm is NULL.
func notPositive(x float64) bool { return x <= 0 }

// powKernel is POW(x, y); a result that is not a finite double (POW(0, -1), POW(-8, 0.5),
// POW(10, 400)) is an error, as MySQL's.
func powKernel(s *Site) Kernel {
	return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
		x, y := args[0].F64, args[1].F64
		for _, i := range live {
			r := libm.Pow(x[i], y[i])
			if math.IsInf(r, 0) || math.IsNaN(r) {
				return vec.OutOfRange("DOUBLE", s.Text())
			}
			out.F64[i] = r
		}
		return nil
	}
}

// extremeKernel is GREATEST (greatest) or LEAST over arguments converted to the result
// type.
func extremeKernel(greatest bool) func(*Site) Kernel {
	return func(s *Site) Kernel {
		t := s.Sig.Result.Type
		return func(args []*vec.Vec, out *vec.Vec, live []int32, nrows int) error {
			switch t.ID {
			case vec.Int64, vec.Decimal64, vec.Datetime:
				pickOrdered(out.I64, args, func(v *vec.Vec) []int64 { return v.I64 }, live, greatest)
			case vec.Int32, vec.Date32:
				pickOrdered(out.I32, args, func(v *vec.Vec) []int32 { return v.I32 }, live, greatest)
			case vec.Float64:
				pickOrdered(out.F64, args, func(v *vec.Vec) []float64 { return v.F64 }, live, greatest)
			case vec.Bool:
				for _, i := range live {
					r := args[0].Bool[i]
					for _, v := range args[1:] {
						if greatest {
							r = r || v.Bool[i]
						} else {
							r = r && v.Bool[i]
						}
					}
					out.Bool[i] = r
				}
			case vec.Decimal128:
				for _, i := range live {
					r := args[0].D128[i]
					for _, v := range args[1:] {
						if c := v.D128[i].Cmp(r); (c > 0) == greatest && c != 0 {
							r = v.D128[i]
						}
					}
					out.D128[i] = r
				}
			case vec.String:
				var w vec.StringWriter
				w.Begin(out)
				for _, i := range live {
					r := args[0].String(int(i))
					for _, v := range args[1:] {
						s := v.String(int(i))
						if c := bytes.Compare(s, r); (c > 0) == greatest && c != 0 {
							r = s
						}
					}
					w.Put(i, r)
				}
				w.Finish(nrows)
			}
			return nil
		}
	}
}

func pickOrdered[T cmp.Ordered](dst []T, vals []*vec.Vec, slice func(*vec.Vec) []T, live []int32, greatest bool) {
	vec.CopyRows(dst, slice(vals[0]), live)
	for _, v := range vals[1:] {
		src := slice(v)
		if greatest {
			for _, i := range live {
				dst[i] = max(dst[i], src[i])
			}
		} else {
			for _, i := range live {
				dst[i] = min(dst[i], src[i])
			}
		}
	}
}
