package expr

import (
	"bytes"
	"cmp"
	"math"
	"unicode"
	"unicode/utf8"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/libm"
)

// funcNode is a strict scalar function: a row is NULL where any argument is NULL, and the
// kernel, chosen once at compile time, computes the other rows from typed slices.
type funcNode struct {
	src    *Expr
	t      vec.Type
	args   []node
	vals   []*vec.Vec
	kernel func(n *funcNode, out *vec.Vec, live []int32, nrows int) error
	digits int64 // round and truncate: the constant number of decimal places
	out    vec.Vec
	live   []int32
}

func (n *funcNode) typ() vec.Type    { return n.t }
func (n *funcNode) children() []node { return n.args }

func (n *funcNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	for k, a := range n.args {
		v, err := a.eval(b, rows)
		if err != nil {
			return nil, err
		}
		n.vals[k] = v
	}
	out := &n.out
	out.Prepare(n.t, b.N)
	live := nullRows(out, rows, b.N, &n.live, n.vals...)
	if err := n.kernel(n, out, live, b.N); err != nil {
		return nil, err
	}
	return out, nil
}

// compileFunc compiles the functions funcNode evaluates: every argument is converted to
// the type its kernel reads (argType), and a NULL constant argument makes the whole call a
// NULL constant.
func (c *compiler) compileFunc(e *Expr) (node, error) {
	t, err := TypeOf(e, c.input)
	if err != nil {
		return nil, err
	}
	ts, err := argTypes(e, c.input)
	if err != nil {
		return nil, err
	}
	n := &funcNode{src: e, t: t}
	nargs := len(e.Args)
	if e.Op == OpRound || e.Op == OpTruncate {
		// The digits are a constant, read now; the kernel sees the number alone.
		if nargs == 2 {
			d := e.Args[1].Value
			if d.Null {
				return newConst(vec.NullDatum(t)), nil
			}
			n.digits = digitsValue(d)
		}
		nargs = 1
	}
	for _, a := range e.Args[:nargs] {
		if a.IsNullConst() {
			return newConst(vec.NullDatum(t)), nil
		}
	}
	in := argKernelType(e.Op, t, ts[:nargs])
	for k, a := range e.Args[:nargs] {
		x, err := c.compile(a)
		if err != nil {
			return nil, err
		}
		at := in
		if (e.Op == OpLeft || e.Op == OpRight) && k == 1 {
			at = vec.Int64Type // the character count
		}
		n.args = append(n.args, convert(x, at))
	}
	n.vals = make([]*vec.Vec, len(n.args))
	n.kernel = kernelOf(e.Op, in, t)
	return n, nil
}

// digitsValue reads ROUND's digits from an integer or scale-0 decimal constant, clamped to
// a range where every larger value means the same.
func digitsValue(d vec.Datum) int64 {
	v := d.Int
	if d.Type.ID == vec.Int32 || d.Type.ID == vec.Int64 || d.Type.ID == vec.Decimal64 {
		return max(min(v, 100), -100)
	}
	if d.Type.ID == vec.Decimal128 {
		w := vec.Int128{Lo: uint64(d.Int), Hi: d.Hi}
		switch {
		case w.IsInt64():
			return max(min(int64(w.Lo), 100), -100)
		case w.Sign() < 0:
			return -100
		}
		return 100
	}
	return 0
}

// argKernelType is the type the kernel of op reads its arguments in, given the result type
// t and the arguments' own types.
func argKernelType(op Op, t vec.Type, ts []vec.Type) vec.Type {
	switch op {
	case OpAbs, OpGreatest, OpLeast:
		return t
	case OpRound, OpTruncate, OpFloor, OpCeil:
		if ts[0].IsInteger() {
			return vec.Int64Type
		}
		return ts[0]
	case OpIntDiv:
		switch {
		case ts[0].ID == vec.Float64 || ts[1].ID == vec.Float64:
			return vec.Float64Type
		case ts[0].IsInteger() && ts[1].IsInteger():
			return vec.Int64Type
		}
		s := max(ts[0].DecimalScale(), ts[1].DecimalScale())
		return vec.Decimal(vec.MaxPrecision, s)
	case OpDateDiff:
		return vec.DateType
	case OpSign:
		if ts[0].IsInteger() {
			return vec.Int64Type
		}
		return ts[0]
	case OpSqrt, OpExp, OpLn, OpLog2, OpLog10, OpPow:
		return vec.Float64Type
	}
	return vec.StringType
}

func kernelOf(op Op, in, t vec.Type) func(n *funcNode, out *vec.Vec, live []int32, nrows int) error {
	switch op {
	case OpUpper:
		return func(n *funcNode, out *vec.Vec, live []int32, nrows int) error {
			mapString(n.vals[0], out, live, nrows, appendUpper)
			return nil
		}
	case OpLower:
		return func(n *funcNode, out *vec.Vec, live []int32, nrows int) error {
			mapString(n.vals[0], out, live, nrows, appendLower)
			return nil
		}
	case OpLength:
		return lengthKernel
	case OpCharLength:
		return charLengthKernel
	case OpConcat:
		return concatKernel
	case OpTrim, OpLTrim, OpRTrim:
		return trimKernel
	case OpAbs:
		return absKernel
	case OpRound, OpTruncate:
		switch {
		case in.ID == vec.Float64:
			return roundFloatKernel
		case i64Payload(in) && i64Payload(t):
			return roundDec64Kernel
		}
		return roundDecKernel
	case OpFloor, OpCeil:
		switch {
		case in.ID == vec.Float64:
			return floorFloatKernel
		case in.ID == vec.Int64:
			return copyKernel
		}
		return floorDecKernel
	case OpIntDiv:
		switch in.ID {
		case vec.Int64:
			return intDivKernel
		case vec.Float64:
			return intDivFloatKernel
		}
		return intDivDecKernel
	case OpDateDiff:
		return dateDiffKernel
	case OpGreatest, OpLeast:
		return extremeKernel
	case OpLeft:
		return charsKernel(leftChars)
	case OpRight:
		return charsKernel(rightChars)
	case OpReplace:
		return replaceKernel
	case OpReverse:
		return func(n *funcNode, out *vec.Vec, live []int32, nrows int) error {
			mapString(n.vals[0], out, live, nrows, appendReversed)
			return nil
		}
	case OpStrcmp:
		return strcmpKernel
	case OpSign:
		return signKernel
	case OpSqrt:
		return floatKernel(math.Sqrt, func(x float64) bool { return x < 0 })
	case OpExp:
		return floatKernel(libm.Exp, nil)
	case OpLn:
		return floatKernel(libm.Log, func(x float64) bool { return x <= 0 })
	case OpLog2:
		return floatKernel(libm.Log2, func(x float64) bool { return x <= 0 })
	case OpLog10:
		return floatKernel(libm.Log10, func(x float64) bool { return x <= 0 })
	case OpPow:
		return powKernel
	}
	return nil
}

// charsKernel is LEFT(s, n) or RIGHT(s, n): the n characters pick takes from s.
func charsKernel(pick func(s []byte, n int64) []byte) func(*funcNode, *vec.Vec, []int32, int) error {
	return func(n *funcNode, out *vec.Vec, live []int32, nrows int) error {
		s, cnt := n.vals[0], n.vals[1].I64
		var w strWriter
		w.begin(out)
		for _, i := range live {
			w.put(i, pick(s.String(int(i)), cnt[i]))
		}
		w.finish(nrows)
		return nil
	}
}

// leftChars is the first n characters of UTF-8 text s (an invalid byte counts as one, as
// in CHAR_LENGTH).
func leftChars(s []byte, n int64) []byte {
	if n <= 0 {
		return s[:0]
	}
	if n >= int64(len(s)) {
		return s // no more characters than bytes
	}
	k := 0
	for ; n > 0 && k < len(s); n-- {
		if s[k] < utf8.RuneSelf {
			k++
			continue
		}
		_, w := utf8.DecodeRune(s[k:])
		k += w
	}
	return s[:k]
}

// rightChars is the last n characters of UTF-8 text s.
func rightChars(s []byte, n int64) []byte {
	if n <= 0 {
		return s[:0]
	}
	if n >= int64(len(s)) {
		return s
	}
	k := len(s)
	for ; n > 0 && k > 0; n-- {
		if s[k-1] < utf8.RuneSelf {
			k--
			continue
		}
		_, w := utf8.DecodeLastRune(s[:k])
		k -= w
	}
	return s[k:]
}

// replaceKernel is REPLACE(s, from, to): every occurrence of from, left to right and not
// overlapping, replaced by to, comparing bytes (MySQL's REPLACE is case-sensitive).
func replaceKernel(n *funcNode, out *vec.Vec, live []int32, nrows int) error {
	s, from, to := n.vals[0], n.vals[1], n.vals[2]
	var w strWriter
	w.begin(out)
	for _, i := range live {
		w.gap(int(i))
		v, f := s.String(int(i)), from.String(int(i))
		if len(f) > 0 {
			t := to.String(int(i))
			for {
				j := bytes.Index(v, f)
				if j < 0 {
					break
				}
				out.Bytes = append(append(out.Bytes, v[:j]...), t...)
				v = v[j+len(f):]
			}
		}
		out.Bytes = append(out.Bytes, v...)
		w.end(i)
	}
	w.finish(nrows)
	return nil
}

// appendReversed appends the characters of UTF-8 text s in reverse order; an invalid byte
// is one character.
func appendReversed(dst, s []byte) []byte {
	for k := len(s); k > 0; {
		w := 1
		if s[k-1] >= utf8.RuneSelf {
			_, w = utf8.DecodeLastRune(s[:k])
		}
		dst = append(dst, s[k-w:k]...)
		k -= w
	}
	return dst
}

func strcmpKernel(n *funcNode, out *vec.Vec, live []int32, _ int) error {
	a, b := n.vals[0], n.vals[1]
	for _, i := range live {
		out.I32[i] = int32(bytes.Compare(a.String(int(i)), b.String(int(i))))
	}
	return nil
}

func signKernel(n *funcNode, out *vec.Vec, live []int32, _ int) error {
	a := n.vals[0]
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

// floatKernel applies f to a double argument; rows where isNull holds are NULL (MySQL's
// SQRT(-1), LN(0)) and a result beyond the finite doubles is an error, as MySQL's.
func floatKernel(f func(float64) float64, isNull func(float64) bool) func(n *funcNode, out *vec.Vec, live []int32, nrows int) error {
	return func(n *funcNode, out *vec.Vec, live []int32, nrows int) error {
		a := n.vals[0].F64
		for _, i := range live {
			x := a[i]
			if isNull != nil && isNull(x) {
				setNull(out, nrows, i)
				continue
			}
			r := f(x)
			if math.IsInf(r, 0) || math.IsNaN(r) {
				return vec.OutOfRange("DOUBLE", n.src.errorText())
			}
			out.F64[i] = r
		}
		return nil
	}
}

// powKernel is POW(x, y); a result that is not a finite double (POW(0, -1), POW(-8, 0.5),
// POW(10, 400)) is an error, as MySQL's.
func powKernel(n *funcNode, out *vec.Vec, live []int32, _ int) error {
	x, y := n.vals[0].F64, n.vals[1].F64
	for _, i := range live {
		r := libm.Pow(x[i], y[i])
		if math.IsInf(r, 0) || math.IsNaN(r) {
			return vec.OutOfRange("DOUBLE", n.src.errorText())
		}
		out.F64[i] = r
	}
	return nil
}

// mapString writes f(s) for every live row of a string vector.
func mapString(s, out *vec.Vec, live []int32, nrows int, f func(dst, s []byte) []byte) {
	var w strWriter
	w.begin(out)
	for _, i := range live {
		w.gap(int(i))
		out.Bytes = f(out.Bytes, s.String(int(i)))
		w.end(i)
	}
	w.finish(nrows)
}

// appendUpper appends s with every letter in upper case (Unicode simple case mapping);
// ASCII text takes a byte loop.
func appendUpper(dst, s []byte) []byte {
	for k, c := range s {
		if c >= utf8.RuneSelf {
			return appendMapped(dst, s[k:], unicode.ToUpper)
		}
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func appendLower(dst, s []byte) []byte {
	for k, c := range s {
		if c >= utf8.RuneSelf {
			return appendMapped(dst, s[k:], unicode.ToLower)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// appendMapped maps UTF-8 text rune by rune; invalid bytes are kept as they are.
func appendMapped(dst, s []byte, f func(rune) rune) []byte {
	for len(s) > 0 {
		r, w := utf8.DecodeRune(s)
		if r == utf8.RuneError && w == 1 {
			dst = append(dst, s[0])
		} else {
			dst = utf8.AppendRune(dst, f(r))
		}
		s = s[w:]
	}
	return dst
}

func lengthKernel(n *funcNode, out *vec.Vec, live []int32, _ int) error {
	offs := n.vals[0].Offsets
	for _, i := range live {
		out.I64[i] = int64(offs[i+1] - offs[i])
	}
	return nil
}

func charLengthKernel(n *funcNode, out *vec.Vec, live []int32, _ int) error {
	s := n.vals[0]
	for _, i := range live {
		out.I64[i] = int64(utf8.RuneCount(s.String(int(i))))
	}
	return nil
}

func concatKernel(n *funcNode, out *vec.Vec, live []int32, nrows int) error {
	var w strWriter
	w.begin(out)
	for _, i := range live {
		w.gap(int(i))
		for _, a := range n.vals {
			out.Bytes = append(out.Bytes, a.String(int(i))...)
		}
		w.end(i)
	}
	w.finish(nrows)
	return nil
}

// trimKernel removes leading (trim, ltrim) and trailing (trim, rtrim) spaces, or repeated
// occurrences of the second argument's string when there is one (MySQL's TRIM(... FROM)).
func trimKernel(n *funcNode, out *vec.Vec, live []int32, nrows int) error {
	s := n.vals[0]
	lead, trail := n.src.Op != OpRTrim, n.src.Op != OpLTrim
	space := []byte{' '}
	var w strWriter
	w.begin(out)
	for _, i := range live {
		v, rem := s.String(int(i)), space
		if len(n.vals) > 1 {
			rem = n.vals[1].String(int(i))
		}
		if len(rem) > 0 {
			for lead && bytes.HasPrefix(v, rem) {
				v = v[len(rem):]
			}
			for trail && bytes.HasSuffix(v, rem) {
				v = v[:len(v)-len(rem)]
			}
		}
		w.put(i, v)
	}
	w.finish(nrows)
	return nil
}

func absKernel(n *funcNode, out *vec.Vec, live []int32, _ int) error {
	a := n.vals[0]
	switch n.t.ID {
	case vec.Int64, vec.Decimal64:
		for _, i := range live {
			v := a.I64[i]
			if v < 0 {
				if v == math.MinInt64 {
					return vec.OutOfRange("BIGINT", n.src.errorText())
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
					return vec.OutOfRange("DECIMAL", n.src.errorText())
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

func copyKernel(n *funcNode, out *vec.Vec, live []int32, _ int) error {
	copyRows(out.I64, n.vals[0].I64, live)
	return nil
}

// roundType is the result type of ROUND(x, d) or TRUNCATE(x, d) for a number of type t:
// integers stay BIGINT and doubles DOUBLE; a DECIMAL(p,s) keeps min(max(d,0), s) places,
// with one more integer digit when ROUND may carry into it (MySQL).
func roundType(op Op, t vec.Type, d int64) vec.Type {
	switch {
	case t.IsInteger():
		return vec.Int64Type
	case !t.IsDecimal():
		return t
	}
	s := int32(max(min(d, int64(t.Scale)), 0))
	p := t.Precision - t.Scale + s
	if op == OpRound && d < int64(t.Scale) {
		p++
	}
	return vec.Decimal(max(p, 1), s)
}

// roundUnit rounds (ROUND: half away from zero) or truncates v, an unscaled decimal of
// scale s (0 for integers), to d places, and returns the result unscaled at scale
// max(d, 0), with ok=false on overflow. d < s.
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

// roundDec64Kernel rounds Decimal64 or BIGINT values into a result of the same payload, in
// 64-bit arithmetic where the digits dropped fit.
func roundDec64Kernel(n *funcNode, out *vec.Vec, live []int32, _ int) error {
	in := n.vals[0]
	s := in.Type.DecimalScale()
	d := n.digits
	if d >= int64(s) {
		copyRows(out.I64, in.I64, live)
		return nil
	}
	truncate := n.src.Op == OpTruncate
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
		return checkPrecision64Out(n, out, live)
	}
	for _, i := range live {
		v, ok := roundUnit(vec.I128(in.I64[i]), s, d, truncate)
		if !ok || !v.IsInt64() {
			return n.outOfRange()
		}
		out.I64[i] = int64(v.Lo)
	}
	return checkPrecision64Out(n, out, live)
}

// roundDecKernel is the general decimal path: any input payload, a Decimal64 or
// Decimal128 result.
func roundDecKernel(n *funcNode, out *vec.Vec, live []int32, _ int) error {
	in := n.vals[0]
	s := in.Type.DecimalScale()
	d := n.digits
	truncate := n.src.Op == OpTruncate
	for _, i := range live {
		v := decimalAt(in, i)
		if d < int64(s) {
			var ok bool
			if v, ok = roundUnit(v, s, d, truncate); !ok {
				return n.outOfRange()
			}
		}
		if !v.FitsPrecision(n.t.DecimalPrecision()) && n.t.IsDecimal() {
			return n.outOfRange()
		}
		if n.t.ID == vec.Decimal128 {
			out.D128[i] = v
			continue
		}
		if !v.IsInt64() {
			return n.outOfRange()
		}
		out.I64[i] = int64(v.Lo)
	}
	return nil
}

// decimalAt is row i of a decimal or BIGINT vector as a 128-bit unscaled value.
func decimalAt(v *vec.Vec, i int32) vec.Int128 {
	if v.Type.ID == vec.Decimal128 {
		return v.D128[i]
	}
	return vec.I128(v.I64[i])
}

func checkPrecision64Out(n *funcNode, out *vec.Vec, live []int32) error {
	if !n.t.IsDecimal() {
		return nil
	}
	if !checkPrecision64(out.I64, live, n.t.Precision) {
		return n.outOfRange()
	}
	return nil
}

func (n *funcNode) outOfRange() error {
	if n.t.IsDecimal() {
		return vec.OutOfRange("DECIMAL", n.src.errorText())
	}
	return vec.OutOfRange("BIGINT", n.src.errorText())
}

// roundFloatKernel rounds doubles as MySQL does (rint: halves to even) or truncates them.
func roundFloatKernel(n *funcNode, out *vec.Vec, live []int32, _ int) error {
	a := n.vals[0].F64
	d := n.digits
	f := math.RoundToEven
	if n.src.Op == OpTruncate {
		f = math.Trunc
	}
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

// floorType is FLOOR's and CEIL's result type: BIGINT for integers and for decimals whose
// integer part fits 17 digits, else DECIMAL(p-s+1, 0); DOUBLE for doubles (MySQL).
func floorType(t vec.Type) vec.Type {
	switch {
	case t.ID == vec.Float64:
		return t
	case t.IsDecimal() && t.Precision-t.Scale > 17:
		return vec.Decimal(t.Precision-t.Scale+1, 0)
	}
	return vec.Int64Type
}

func floorFloatKernel(n *funcNode, out *vec.Vec, live []int32, _ int) error {
	f := math.Floor
	if n.src.Op == OpCeil {
		f = math.Ceil
	}
	a := n.vals[0].F64
	for _, i := range live {
		out.F64[i] = f(a[i])
	}
	return nil
}

func floorDecKernel(n *funcNode, out *vec.Vec, live []int32, _ int) error {
	in := n.vals[0]
	s := in.Type.Scale
	ceil := n.src.Op == OpCeil
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
				return n.outOfRange()
			}
			out.I64[i] = int64(q.Lo)
		}
	}
	return nil
}

// intDivKernel is a DIV b on BIGINTs: the quotient truncated toward zero; b = 0 is NULL.
func intDivKernel(n *funcNode, out *vec.Vec, live []int32, nrows int) error {
	x, y := n.vals[0].I64, n.vals[1].I64
	for _, i := range live {
		switch d := y[i]; {
		case d == 0:
			setNull(out, nrows, i)
		case d == -1:
			if x[i] == math.MinInt64 {
				return vec.OutOfRange("BIGINT", n.src.errorText())
			}
			out.I64[i] = -x[i]
		default:
			out.I64[i] = x[i] / d
		}
	}
	return nil
}

// intDivDecKernel divides decimals at one scale exactly, truncating toward zero.
func intDivDecKernel(n *funcNode, out *vec.Vec, live []int32, nrows int) error {
	x, y := n.vals[0].D128, n.vals[1].D128
	for _, i := range live {
		if y[i].Sign() == 0 {
			setNull(out, nrows, i)
			continue
		}
		q, ok := x[i].QuoTrunc(y[i])
		if !ok || !q.IsInt64() {
			return vec.OutOfRange("BIGINT", n.src.errorText())
		}
		out.I64[i] = int64(q.Lo)
	}
	return nil
}

func intDivFloatKernel(n *funcNode, out *vec.Vec, live []int32, nrows int) error {
	x, y := n.vals[0].F64, n.vals[1].F64
	for _, i := range live {
		if y[i] == 0 {
			setNull(out, nrows, i)
			continue
		}
		q := math.Trunc(x[i] / y[i])
		if !(q >= -(1<<63) && q < 1<<63) {
			return vec.OutOfRange("BIGINT", n.src.errorText())
		}
		out.I64[i] = int64(q)
	}
	return nil
}

func dateDiffKernel(n *funcNode, out *vec.Vec, live []int32, _ int) error {
	a, b := n.vals[0].I32, n.vals[1].I32
	for _, i := range live {
		out.I64[i] = int64(a[i]) - int64(b[i])
	}
	return nil
}

// extremeKernel is GREATEST and LEAST over arguments converted to the result type.
func extremeKernel(n *funcNode, out *vec.Vec, live []int32, nrows int) error {
	greatest := n.src.Op == OpGreatest
	switch n.t.ID {
	case vec.Int64, vec.Decimal64:
		pickOrdered(out.I64, n.vals, func(v *vec.Vec) []int64 { return v.I64 }, live, greatest)
	case vec.Int32, vec.Date32:
		pickOrdered(out.I32, n.vals, func(v *vec.Vec) []int32 { return v.I32 }, live, greatest)
	case vec.Float64:
		pickOrdered(out.F64, n.vals, func(v *vec.Vec) []float64 { return v.F64 }, live, greatest)
	case vec.Bool:
		for _, i := range live {
			r := n.vals[0].Bool[i]
			for _, v := range n.vals[1:] {
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
			r := n.vals[0].D128[i]
			for _, v := range n.vals[1:] {
				if c := v.D128[i].Cmp(r); (c > 0) == greatest && c != 0 {
					r = v.D128[i]
				}
			}
			out.D128[i] = r
		}
	case vec.String:
		var w strWriter
		w.begin(out)
		for _, i := range live {
			r := n.vals[0].String(int(i))
			for _, v := range n.vals[1:] {
				s := v.String(int(i))
				if c := bytes.Compare(s, r); (c > 0) == greatest && c != 0 {
					r = s
				}
			}
			w.put(i, r)
		}
		w.finish(nrows)
	}
	return nil
}

func pickOrdered[T cmp.Ordered](dst []T, vals []*vec.Vec, slice func(*vec.Vec) []T, live []int32, greatest bool) {
	copyRows(dst, slice(vals[0]), live)
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
