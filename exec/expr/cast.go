package expr

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"unsafe"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/civil"
	"github.com/colinkdb/colink/internal/textparse"
)

// castNode converts values to another type. Implicit casts are the exact conversions the
// compiler inserts (integer widening, decimal scale-up, to double); explicit ones are SQL
// CASTs and may round (decimals round half away from zero) or fail (out of range, bad text).
type castNode struct {
	x        node
	to       vec.Type
	implicit bool
	out      vec.Vec
	live     []int32
}

func newCast(x node, to vec.Type, implicit bool) *castNode {
	return &castNode{x: x, to: to, implicit: implicit}
}

func (n *castNode) typ() vec.Type    { return n.to }
func (n *castNode) children() []node { return []node{n.x} }

func (n *castNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	a, err := n.x.eval(b, rows)
	if err != nil {
		return nil, err
	}
	from := n.x.typ()
	if from == n.to {
		return a, nil
	}
	out := &n.out
	out.Prepare(n.to, b.N)
	if n.to.ID == vec.String {
		return out, castToString(a, from, out, rows, b.N)
	}
	live := nullRows(out, rows, b.N, &n.live, a)
	if n.fast(a, from, out, live) {
		return out, nil
	}
	return out, castSlow(a, from, n.to, out, live, b.N)
}

// fast handles the conversions arithmetic and comparisons insert, in tight loops.
func (n *castNode) fast(a *vec.Vec, from vec.Type, out *vec.Vec, rows []int32) bool {
	to := n.to
	switch {
	case from.ID == vec.Int32 && to.ID == vec.Int64:
		for _, i := range rows {
			out.I64[i] = int64(a.I32[i])
		}
		return true
	case from.IsNumeric() && from.ID != vec.Float64 && to.ID == vec.Float64:
		switch from.ID {
		case vec.Int32:
			for _, i := range rows {
				out.F64[i] = float64(a.I32[i])
			}
		case vec.Int64:
			for _, i := range rows {
				out.F64[i] = float64(a.I64[i])
			}
		case vec.Decimal64:
			for _, i := range rows {
				out.F64[i] = vec.Int128ToFloat64(vec.I128(a.I64[i]), from.Scale)
			}
		case vec.Decimal128:
			for _, i := range rows {
				out.F64[i] = vec.Int128ToFloat64(a.D128[i], from.Scale)
			}
		}
		return true
	case to.IsDecimal() && (from.IsInteger() || from.IsDecimal()) && to.Scale >= from.DecimalScale():
		k := to.Scale - from.DecimalScale()
		switch {
		case to.ID == vec.Decimal64 && from.ID == vec.Int32:
			m := vec.Pow10Int64(k)
			var bad int64
			for _, i := range rows {
				hi, lo := mulHi(int64(a.I32[i]), m)
				bad |= hi ^ int64(lo)>>63
				out.I64[i] = int64(lo)
			}
			if bad != 0 {
				return false
			}
		case to.ID == vec.Decimal64 && i64Payload(from):
			m := vec.Pow10Int64(k)
			var bad int64
			for _, i := range rows {
				hi, lo := mulHi(a.I64[i], m)
				bad |= hi ^ int64(lo)>>63
				out.I64[i] = int64(lo)
			}
			if bad != 0 {
				return false
			}
		case to.ID == vec.Decimal128 && from.ID == vec.Int32:
			m := vec.Pow10Int64(min(k, 18))
			for _, i := range rows {
				if k <= 18 {
					hi, lo := mulHi(int64(a.I32[i]), m)
					out.D128[i] = vec.Int128{Lo: lo, Hi: hi}
				} else {
					out.D128[i], _ = vec.I128(int64(a.I32[i])).Mul(vec.Pow10(k))
				}
			}
		case to.ID == vec.Decimal128 && i64Payload(from) && k <= 18:
			m := vec.Pow10Int64(k)
			for _, i := range rows {
				hi, lo := mulHi(a.I64[i], m)
				out.D128[i] = vec.Int128{Lo: lo, Hi: hi}
			}
		case to.ID == vec.Decimal128 && from.ID == vec.Decimal128:
			if k == 0 {
				vec.CopyRows(out.D128, a.D128, rows)
				return checkPrecision128(out.D128, rows, to.Precision)
			}
			m := vec.Pow10(k)
			for _, i := range rows {
				v, ok := a.D128[i].Mul(m)
				if !ok {
					return false
				}
				out.D128[i] = v
			}
		default:
			return false
		}
		if to.ID == vec.Decimal64 {
			return vec.RowsFitPrecision64(out.I64, rows, to.Precision)
		}
		return checkPrecision128(out.D128, rows, to.Precision)
	}
	return false
}

// unsafeString views bytes as a string without copying (for parsing only).
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func badValue(kind string, s []byte) error {
	return &vec.Error{Code: vec.CodeTruncatedWrongVal, SQLState: "22007",
		Msg: fmt.Sprintf("Truncated incorrect %s value: '%s'", kind, s)}
}

func castOverflow(to vec.Type) error {
	name := "DECIMAL"
	switch to.ID {
	case vec.Int32, vec.Int64:
		name = "BIGINT"
	case vec.Float64:
		name = "DOUBLE"
	}
	return vec.OutOfRange(name, "CAST to "+to.String())
}

// numberAt reads row i of a numeric, boolean, date or string vector as an unscaled decimal
// at scale `scale` (dates read as YYYYMMDD, strings are parsed), rounding half away from
// zero. ok=false means the value does not fit 128 bits.
func numberAt(a *vec.Vec, from vec.Type, i int32, scale int32) (vec.Int128, bool, error) {
	var v vec.Int128
	var sf int32
	switch from.ID {
	case vec.Bool:
		if a.Bool[i] {
			v = vec.I128(1)
		}
	case vec.Int32:
		v = vec.I128(int64(a.I32[i]))
	case vec.Int64, vec.Decimal64:
		v, sf = vec.I128(a.I64[i]), from.DecimalScale()
	case vec.Decimal128:
		v, sf = a.D128[i], from.Scale
	case vec.Date32:
		y, m, d := vec.CivilFromDays(a.I32[i])
		v = vec.I128(int64(y)*10000 + int64(m)*100 + int64(d))
	case vec.Datetime:
		// YYYYMMDDhhmmss.ffffff, as MySQL reads a DATETIME as a number.
		days, us := civil.SplitMicros(a.I64[i])
		y, m, d := civil.Date(days)
		hh, mm, ss, f := civil.Clock(us)
		whole := ((((int64(y)*100+int64(m))*100+int64(d))*100+int64(hh))*100+int64(mm))*100 + int64(ss)
		// 9999-12-31 23:59:59.999999 is 20 digits at scale 6: beyond int64.
		v, _ = vec.I128(whole).Mul(vec.I128(civil.MicrosPerSecond))
		v, _ = v.Add(vec.I128(int64(f)))
		sf = 6
	case vec.Float64:
		f := a.F64[i]
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return v, false, nil
		}
		x := f * math.Pow(10, float64(scale))
		x = math.Round(x) // half away from zero
		if math.Abs(x) < 9.2e18 {
			return vec.I128(int64(x)), true, nil
		}
		bf := new(big.Float).SetFloat64(x)
		bi, _ := bf.Int(nil)
		if bi.BitLen() > 126 {
			return v, false, nil
		}
		lo := new(big.Int).And(bi, new(big.Int).SetUint64(^uint64(0))).Uint64()
		hi := new(big.Int).Rsh(bi, 64).Int64()
		return vec.Int128{Lo: lo, Hi: hi}, true, nil
	case vec.String:
		s := a.String(int(i))
		r, err := vec.ParseDecimalScale(s, scale)
		if err != nil {
			return v, false, badValue("DECIMAL", s)
		}
		return r, true, nil
	}
	r, ok := v.Rescale(sf, scale)
	return r, ok, nil
}

// integerAt reads row i as an integer, as MySQL's CAST(x AS SIGNED) does: a double is
// rounded half to even (rint: 2.5 is 2), a string that is a number gives its integer prefix
// ('12.9' and '1e3' are 12 and 1; MySQL warns, colink does not), other types as numberAt
// at scale 0. A string that is no number at all is an error (MySQL's is 0 and a warning).
func integerAt(a *vec.Vec, from vec.Type, i int32) (vec.Int128, bool, error) {
	switch from.ID {
	case vec.Float64:
		f := math.RoundToEven(a.F64[i])
		if math.IsNaN(f) || math.Abs(f) >= 9.2e18 {
			return vec.Int128{}, false, nil
		}
		return vec.I128(int64(f)), true, nil
	case vec.String:
		s := a.String(int(i))
		if _, err := vec.ParseDecimalScale(s, 0); err != nil {
			return vec.Int128{}, false, badValue("INTEGER", s)
		}
		n, err := textparse.IntPrefix(s, textparse.BlanksTabs)
		return vec.I128(n), err == nil, nil
	}
	return numberAt(a, from, i, 0)
}

// castSlow is the general per-row conversion.
func castSlow(a *vec.Vec, from, to vec.Type, out *vec.Vec, rows []int32, n int) error {
	switch to.ID {
	case vec.Bool:
		for _, i := range rows {
			switch from.ID {
			case vec.Bool:
				out.Bool[i] = a.Bool[i]
			case vec.Float64:
				out.Bool[i] = a.F64[i] != 0
			default:
				v, _, err := numberAt(a, from, i, from.DecimalScale())
				if err != nil {
					return err
				}
				out.Bool[i] = v.Sign() != 0
			}
		}
	case vec.Int32, vec.Int64, vec.Decimal64, vec.Decimal128:
		scale := to.DecimalScale()
		prec := to.Precision
		toInt := to.ID == vec.Int32 || to.ID == vec.Int64
		for _, i := range rows {
			var v vec.Int128
			var ok bool
			var err error
			if toInt {
				v, ok, err = integerAt(a, from, i)
			} else {
				v, ok, err = numberAt(a, from, i, scale)
			}
			if err != nil {
				return err
			}
			if !ok {
				return castOverflow(to)
			}
			switch to.ID {
			case vec.Int32:
				if !v.IsInt64() || int64(v.Lo) != int64(int32(int64(v.Lo))) {
					return castOverflow(to)
				}
				out.I32[i] = int32(int64(v.Lo))
			case vec.Int64:
				if !v.IsInt64() {
					return castOverflow(to)
				}
				out.I64[i] = int64(v.Lo)
			case vec.Decimal64:
				if !v.FitsPrecision(prec) {
					return castOverflow(to)
				}
				out.I64[i] = int64(v.Lo)
			case vec.Decimal128:
				if !v.FitsPrecision(prec) {
					return castOverflow(to)
				}
				out.D128[i] = v
			}
		}
	case vec.Float64:
		for _, i := range rows {
			switch from.ID {
			case vec.String:
				s := a.String(int(i))
				f, err := strconv.ParseFloat(trimSpace(unsafeString(s)), 64)
				if err != nil {
					return badValue("DOUBLE", s)
				}
				out.F64[i] = f
			case vec.Bool:
				out.F64[i] = 0
				if a.Bool[i] {
					out.F64[i] = 1
				}
			default:
				v, _, err := numberAt(a, from, i, 0)
				if err != nil {
					return err
				}
				out.F64[i] = vec.Int128ToFloat64(v, 0)
			}
		}
	case vec.Date32:
		for _, i := range rows {
			switch from.ID {
			case vec.Date32:
				out.I32[i] = a.I32[i]
			case vec.String:
				d, err := vec.ParseDate(a.String(int(i)))
				if err != nil {
					// MySQL's CAST of an invalid date string is NULL.
					out.SetNull(n, i)
					continue
				}
				out.I32[i] = d
			case vec.Datetime:
				days, _ := civil.SplitMicros(a.I64[i])
				out.I32[i] = int32(days)
			}
		}
	case vec.Datetime:
		for _, i := range rows {
			switch from.ID {
			case vec.Datetime:
				out.I64[i] = a.I64[i]
			case vec.Date32:
				out.I64[i] = int64(a.I32[i]) * civil.MicrosPerDay
			case vec.String:
				us, err := vec.ParseDatetime(a.String(int(i)))
				if err != nil {
					// MySQL's CAST of an invalid datetime string is NULL.
					out.SetNull(n, i)
					continue
				}
				out.I64[i] = us
			}
		}
	default:
		return fmt.Errorf("expr: cannot cast %s to %s", from, to)
	}
	return nil
}

func trimSpace(s string) string {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}

func castToString(a *vec.Vec, from vec.Type, out *vec.Vec, rows []int32, n int) error {
	var w vec.StringWriter
	w.Begin(out)
	if a.Nulls != nil {
		nl := out.PrepareNulls(n)
		for _, i := range rows {
			nl[i] = a.Nulls[i]
		}
	}
	for _, i := range rows {
		if a.IsNull(int(i)) {
			continue
		}
		w.Gap(int(i))
		b := out.Bytes
		switch from.ID {
		case vec.Bool:
			if a.Bool[i] {
				b = append(b, '1')
			} else {
				b = append(b, '0')
			}
		case vec.Int32:
			b = strconv.AppendInt(b, int64(a.I32[i]), 10)
		case vec.Int64:
			b = strconv.AppendInt(b, a.I64[i], 10)
		case vec.Decimal64:
			b = vec.AppendDecimal64(b, a.I64[i], from.Scale)
		case vec.Decimal128:
			b = a.D128[i].AppendDecimal(b, from.Scale)
		case vec.Float64:
			b = vec.AppendFloat(b, a.F64[i])
		case vec.Date32:
			b = vec.AppendDate(b, a.I32[i])
		case vec.Datetime:
			b = vec.AppendDatetime(b, a.I64[i], -1)
		case vec.String:
			b = append(b, a.String(int(i))...)
		}
		out.Bytes = b
		w.End(i)
	}
	w.Finish(n)
	return nil
}
