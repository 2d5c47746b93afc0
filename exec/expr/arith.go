package expr

import (
	"math"
	"math/big"
	"math/bits"

	"github.com/colinkdb/colink/exec/fn"
	"github.com/colinkdb/colink/exec/vec"
)

type arithKind uint8

const (
	arithInt        arithKind = iota // int64 op int64 -> int64 (also same-scale Decimal64)
	arithFloat                       // float64
	arithDec128                      // Decimal128 op Decimal128 at the result's scale (+ - %)
	arithMul64To128                  // I64 payloads -> Decimal128
	arithMul128x64                   // Decimal128 * I64 payload -> Decimal128
	arithMul128                      // Decimal128 * Decimal128 -> Decimal128
	arithDiv                         // decimal division through 128 bits
)

// arithNode is a binary arithmetic operation.
type arithNode struct {
	src   *Expr
	op    Op
	kind  arithKind
	l, r  node
	t     vec.Type
	out   vec.Vec
	live  []int32
	shift int32 // arithDiv: the numerator is scaled up by 10^shift
	trunc bool  // arithDiv: truncate the quotient (MySQL's intermediate digits) instead of rounding
}

func (n *arithNode) typ() vec.Type    { return n.t }
func (n *arithNode) children() []node { return []node{n.l, n.r} }

// i64Payload reports whether a type's values live in Vec.I64.
func i64Payload(t vec.Type) bool { return t.ID == vec.Int64 || t.ID == vec.Decimal64 }

func (c *compiler) compileArith(e *Expr) (node, error) {
	ta, err := TypeOf(e.Args[0], c.input)
	if err != nil {
		return nil, err
	}
	tb, err := TypeOf(e.Args[1], c.input)
	if err != nil {
		return nil, err
	}
	t, err := arithType(e, e.Op, e.Args[0], e.Args[1], ta, tb)
	if err != nil {
		return nil, err
	}
	if e.Args[0].IsNullConst() || e.Args[1].IsNullConst() {
		return newConst(vec.NullDatum(t)), nil
	}
	if t.IsDecimal() && (c.keepsDigits(e.Args[0]) || c.keepsDigits(e.Args[1])) {
		n, ok, err := c.compileExact(e)
		if err != nil {
			return nil, err
		}
		if ok {
			rounded, err := c.compileArithRounded(e, ta, tb, t)
			if err != nil {
				return nil, err
			}
			return withFallback(settle(n, t, e), rounded), nil
		}
	}
	return c.compileArithRounded(e, ta, tb, t)
}

// compileArithRounded compiles e over its operands' values at their declared types.
func (c *compiler) compileArithRounded(e *Expr, ta, tb, t vec.Type) (node, error) {
	l, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	r, err := c.compile(e.Args[1])
	if err != nil {
		return nil, err
	}
	n := buildArith(e, l, r, ta, tb, t)
	if n.kind == arithDiv {
		// MySQL truncates a quotient to whole 9-digit words of s1+s2+4 places; it rounds to
		// the declared s1+4 only when that is fewer places (which is the same as rounding
		// the exact quotient), so it truncates when the two coincide.
		n.trunc = quotientScale(ta.DecimalScale(), tb.DecimalScale()) == t.Scale
	}
	return n, nil
}

// buildArith makes the node computing "l op r" of type t for operands of types ta and tb
// (which l and r have, or are converted from).
func buildArith(e *Expr, l, r node, ta, tb, t vec.Type) *arithNode {
	n := &arithNode{src: e, op: e.Op, t: t}
	switch {
	case t.ID == vec.Float64:
		n.kind, n.l, n.r = arithFloat, convert(l, t), convert(r, t)
	case t.ID == vec.Int64:
		n.kind, n.l, n.r = arithInt, convert(l, t), convert(r, t)
	case e.Op == OpDiv:
		s1, s2 := ta.DecimalScale(), tb.DecimalScale()
		n.kind = arithDiv
		n.l, n.r = convert(l, vec.Decimal(vec.MaxPrecision, s1)), convert(r, vec.Decimal(vec.MaxPrecision, s2))
		n.shift = t.Scale - s1 + s2
	case e.Op == OpMul:
		toI64 := func(x node, tx vec.Type) node {
			if tx.ID == vec.Int32 {
				return convert(x, vec.Int64Type)
			}
			return x
		}
		if t.ID == vec.Decimal64 {
			// p1+p2 <= 18: both operands are Decimal64 (or small integers) at their scale.
			n.kind = arithInt
			n.l = convert(l, vec.Decimal(digitsOf(e.Args[0], ta), ta.DecimalScale()))
			n.r = convert(r, vec.Decimal(digitsOf(e.Args[1], tb), tb.DecimalScale()))
			break
		}
		l, r = toI64(l, ta), toI64(r, tb)
		switch {
		case i64Payload(l.typ()) && i64Payload(r.typ()):
			n.kind = arithMul64To128
		case l.typ().ID == vec.Decimal128 && i64Payload(r.typ()):
			n.kind = arithMul128x64
		case r.typ().ID == vec.Decimal128 && i64Payload(l.typ()):
			n.kind = arithMul128x64
			l, r = r, l
		default:
			n.kind = arithMul128
		}
		n.l, n.r = l, r
	default: // + - % on decimals, at the result's scale
		s := t.Scale
		if t.ID == vec.Decimal64 {
			n.kind = arithInt
			n.l = convert(l, vec.Decimal(digitsOf(e.Args[0], ta)-ta.DecimalScale()+s, s))
			n.r = convert(r, vec.Decimal(digitsOf(e.Args[1], tb)-tb.DecimalScale()+s, s))
		} else {
			n.kind = arithDec128
			n.l, n.r = convert(l, vec.Decimal(vec.MaxPrecision, s)), convert(r, vec.Decimal(vec.MaxPrecision, s))
		}
	}
	return n
}

func (n *arithNode) overflow() error {
	name := "BIGINT"
	switch n.t.ID {
	case vec.Decimal64, vec.Decimal128:
		name = "DECIMAL"
	case vec.Float64:
		name = "DOUBLE"
	}
	return vec.OutOfRange(name, n.src.errorText())
}

func (n *arithNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	a, err := n.l.eval(b, rows)
	if err != nil {
		return nil, err
	}
	c, err := n.r.eval(b, rows)
	if err != nil {
		return nil, err
	}
	out := &n.out
	out.Prepare(n.t, b.N)
	live := nullRows(out, rows, b.N, &n.live, a, c)
	ok := true
	switch n.kind {
	case arithInt:
		ok = n.intKernel(a.I64, c.I64, out, live, b.N)
	case arithFloat:
		ok = n.floatKernel(a.F64, c.F64, out, live, b.N)
	case arithDec128:
		ok = n.dec128Kernel(a.D128, c.D128, out, live, b.N)
	case arithMul64To128:
		mul64To128(a.I64, c.I64, out.D128, live, b.N)
	case arithMul128x64:
		ok = mul128x64(a.D128, c.I64, out.D128, live)
	case arithMul128:
		ok = mul128(a.D128, c.D128, out.D128, live)
	case arithDiv:
		ok = n.divKernel(a.D128, c.D128, out, live, b.N)
	}
	// Results never wrap (the kernels detect that). A result type whose precision follows
	// from its operands' (p <= 38) holds every result of operands within their precisions;
	// only where MySQL's rule was capped at 38 digits can a value exceed its type.
	if ok && n.t.ID == vec.Decimal128 && n.t.Precision >= vec.MaxPrecision && n.kind != arithDiv {
		ok = checkPrecision128(out.D128, live, n.t.Precision)
	}
	if !ok {
		return nil, n.overflow()
	}
	return out, nil
}

// mulHi returns the high 64 bits of the signed 128-bit product of a and b (the low bits
// are uint64(a)*uint64(b)).
func mulHi(a, b int64) (hi int64, lo uint64) {
	h, l := bits.Mul64(uint64(a), uint64(b))
	return int64(h) - (a>>63)&b - (b>>63)&a, l
}

// intKernel runs + - * % on int64 payloads; false means overflow.
func (n *arithNode) intKernel(x, y []int64, out *vec.Vec, rows []int32, nrows int) bool {
	o := out.I64
	var bad int64 // sign bit set on overflow
	switch n.op {
	case OpAdd:
		if dense(rows, nrows) {
			o, x, y = o[:nrows], x[:nrows], y[:nrows]
			for i := range o {
				s := x[i] + y[i]
				bad |= (x[i] ^ s) & (y[i] ^ s)
				o[i] = s
			}
		} else {
			for _, i := range rows {
				s := x[i] + y[i]
				bad |= (x[i] ^ s) & (y[i] ^ s)
				o[i] = s
			}
		}
	case OpSub:
		if dense(rows, nrows) {
			o, x, y = o[:nrows], x[:nrows], y[:nrows]
			for i := range o {
				s := x[i] - y[i]
				bad |= (x[i] ^ y[i]) & (x[i] ^ s)
				o[i] = s
			}
		} else {
			for _, i := range rows {
				s := x[i] - y[i]
				bad |= (x[i] ^ y[i]) & (x[i] ^ s)
				o[i] = s
			}
		}
	case OpMul:
		if dense(rows, nrows) {
			o, x, y = o[:nrows], x[:nrows], y[:nrows]
			for i := range o {
				hi, lo := mulHi(x[i], y[i])
				bad |= hi ^ int64(lo)>>63
				o[i] = int64(lo)
			}
		} else {
			for _, i := range rows {
				hi, lo := mulHi(x[i], y[i])
				bad |= hi ^ int64(lo)>>63
				o[i] = int64(lo)
			}
		}
		// hi ^ sign(lo) is 0 when the product fits; any other value means overflow.
		return bad == 0
	case OpMod:
		for _, i := range rows {
			if y[i] == 0 {
				out.SetNull(nrows, i)
				continue
			}
			if y[i] == -1 {
				o[i] = 0
				continue
			}
			o[i] = x[i] % y[i]
		}
	}
	return bad >= 0
}

// floatKernel runs + - * / % on doubles; false means a result left the finite doubles
// (1e308 * 10), which MySQL reports as error 1690 rather than returning inf. The check is a
// few integer operations per row, without a branch.
func (n *arithNode) floatKernel(x, y []float64, out *vec.Vec, rows []int32, nrows int) bool {
	o := out.F64
	// big is the largest |result| as bits (sign cleared): the order of non-negative doubles
	// is the order of their bits, and inf and NaN are above every finite double. A max
	// (cmov) per row keeps the check cheap and branch-free.
	var big uint64
	switch n.op {
	case OpAdd:
		for _, i := range rows {
			v := x[i] + y[i]
			big = max(big, math.Float64bits(v)&^signBit)
			o[i] = v
		}
	case OpSub:
		for _, i := range rows {
			v := x[i] - y[i]
			big = max(big, math.Float64bits(v)&^signBit)
			o[i] = v
		}
	case OpMul:
		for _, i := range rows {
			v := x[i] * y[i]
			big = max(big, math.Float64bits(v)&^signBit)
			o[i] = v
		}
	case OpDiv:
		for _, i := range rows {
			if y[i] == 0 {
				out.SetNull(nrows, i)
				continue
			}
			v := x[i] / y[i]
			big = max(big, math.Float64bits(v)&^signBit)
			o[i] = v
		}
	case OpMod:
		for _, i := range rows {
			if y[i] == 0 {
				out.SetNull(nrows, i)
				continue
			}
			o[i] = math.Mod(x[i], y[i])
		}
	}
	return big < infBits
}

const (
	signBit = 1 << 63
	infBits = 0x7ff << 52 // +inf; every finite |double| has smaller bits
)

func (n *arithNode) dec128Kernel(x, y []vec.Int128, out *vec.Vec, rows []int32, nrows int) bool {
	o := out.D128
	p := n.t.Precision
	ok := true
	switch n.op {
	case OpAdd:
		for _, i := range rows {
			s, k := x[i].Add(y[i])
			ok = ok && k
			o[i] = s
		}
	case OpSub:
		for _, i := range rows {
			s, k := x[i].Sub(y[i])
			ok = ok && k
			o[i] = s
		}
	case OpMod:
		for _, i := range rows {
			if y[i].Sign() == 0 {
				out.SetNull(nrows, i)
				continue
			}
			q, _ := x[i].QuoTrunc(y[i])
			m, _ := q.Mul(y[i])
			o[i], _ = x[i].Sub(m)
		}
	}
	return ok && (p < vec.MaxPrecision || checkPrecision128(o, rows, p))
}

// mul64To128 multiplies int64 payloads into exact 128-bit products (no overflow possible).
func mul64To128(x, y []int64, o []vec.Int128, rows []int32, nrows int) {
	if dense(rows, nrows) {
		o, x, y = o[:nrows], x[:nrows], y[:nrows]
		for i := range o {
			hi, lo := mulHi(x[i], y[i])
			o[i] = vec.Int128{Lo: lo, Hi: hi}
		}
		return
	}
	for _, i := range rows {
		hi, lo := mulHi(x[i], y[i])
		o[i] = vec.Int128{Lo: lo, Hi: hi}
	}
}

func mul128x64(x []vec.Int128, y []int64, o []vec.Int128, rows []int32) bool {
	ok := true
	for _, i := range rows {
		xi := x[i]
		if xi.IsInt64() {
			hi, lo := mulHi(int64(xi.Lo), y[i])
			o[i] = vec.Int128{Lo: lo, Hi: hi}
			continue
		}
		p, k := xi.MulInt64(y[i])
		ok = ok && k
		o[i] = p
	}
	return ok
}

func mul128(x, y []vec.Int128, o []vec.Int128, rows []int32) bool {
	ok := true
	for _, i := range rows {
		p, k := x[i].Mul(y[i])
		ok = ok && k
		o[i] = p
	}
	return ok
}

// checkPrecision128 reports whether every listed value has at most p digits.
func checkPrecision128(o []vec.Int128, rows []int32, p int32) bool {
	if p >= vec.MaxPrecision {
		lim := vec.Pow10(vec.MaxPrecision)
		neg, _ := lim.Neg()
		for _, i := range rows {
			if !o[i].Less(lim) || !neg.Less(o[i]) {
				return false
			}
		}
		return true
	}
	lim := vec.Pow10(p)
	neg, _ := lim.Neg()
	for _, i := range rows {
		if !o[i].Less(lim) || !neg.Less(o[i]) {
			return false
		}
	}
	return true
}

// divKernel computes round(a * 10^shift / b) (half away from zero), or its truncation when
// n.trunc; b = 0 gives NULL.
func (n *arithNode) divKernel(x, y []vec.Int128, out *vec.Vec, rows []int32, nrows int) bool {
	// A shift past 10^38 (a divisor that is itself an exact quotient, of scale 9 or more)
	// overflows 128 bits whatever the numerator: only the slow path computes it.
	fast := n.shift <= vec.MaxPrecision
	var mul vec.Int128
	if fast {
		mul = vec.Pow10(n.shift)
	}
	is64 := n.t.ID == vec.Decimal64
	round := !n.trunc
	for _, i := range rows {
		if y[i].Sign() == 0 {
			out.SetNull(nrows, i)
			continue
		}
		var q vec.Int128
		ok := false
		if fast {
			var num vec.Int128
			if num, ok = x[i].Mul(mul); ok {
				q, ok = num.Quo(y[i], round)
			}
		}
		if !ok {
			q, ok = bigQuo(x[i], n.shift, y[i], round)
			if !ok {
				return false
			}
		}
		if !q.FitsPrecision(n.t.Precision) {
			return false
		}
		if is64 {
			out.I64[i] = int64(q.Lo)
		} else {
			out.D128[i] = q
		}
	}
	return true
}

func toBigInt(v vec.Int128) *big.Int {
	b := big.NewInt(v.Hi)
	b.Lsh(b, 64)
	return b.Add(b, new(big.Int).SetUint64(v.Lo))
}

// bigQuo is the exact slow path of decimal division when a*10^shift exceeds 128 bits:
// the quotient rounded half away from zero, or truncated.
func bigQuo(a vec.Int128, shift int32, b vec.Int128, round bool) (vec.Int128, bool) {
	num := toBigInt(a)
	num.Mul(num, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(shift)), nil))
	den := toBigInt(b)
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	r.Abs(r).Lsh(r, 1)
	if round && r.Cmp(new(big.Int).Abs(den)) >= 0 {
		if num.Sign()*den.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	if q.BitLen() > 127 {
		return vec.Int128{}, false
	}
	lo := new(big.Int).And(q, new(big.Int).SetUint64(^uint64(0)))
	hi := new(big.Int).Rsh(q, 64)
	return vec.Int128{Lo: lo.Uint64(), Hi: hi.Int64()}, true
}

// negNode is unary minus.
type negNode struct {
	src  *Expr
	x    node
	t    vec.Type
	out  vec.Vec
	live []int32
}

func (n *negNode) typ() vec.Type    { return n.t }
func (n *negNode) children() []node { return []node{n.x} }

func (c *compiler) compileNeg(e *Expr) (node, error) {
	t, err := TypeOf(e, c.input)
	if err != nil {
		return nil, err
	}
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	return &negNode{src: e, x: convert(x, t), t: t}, nil
}

func (n *negNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	a, err := n.x.eval(b, rows)
	if err != nil {
		return nil, err
	}
	out := &n.out
	out.Prepare(n.t, b.N)
	live := nullRows(out, rows, b.N, &n.live, a)
	switch n.t.ID {
	case vec.Int64, vec.Decimal64:
		for _, i := range live {
			if a.I64[i] == math.MinInt64 {
				return nil, vec.OutOfRange("BIGINT", n.src.errorText())
			}
			out.I64[i] = -a.I64[i]
		}
	case vec.Decimal128:
		for _, i := range live {
			v, ok := a.D128[i].Neg()
			if !ok {
				return nil, vec.OutOfRange("DECIMAL", n.src.errorText())
			}
			out.D128[i] = v
		}
	case vec.Float64:
		for _, i := range live {
			out.F64[i] = -a.F64[i]
		}
	}
	return out, nil
}

// compileIntDiv compiles a DIV b: BIGINT operands divide as BIGINTs, a double makes both
// doubles, and decimals are brought to one scale and divided exactly; the quotient is
// truncated toward zero.
func (c *compiler) compileIntDiv(e *Expr) (node, error) {
	t, err := TypeOf(e, c.input)
	if err != nil {
		return nil, err
	}
	ts, err := argTypes(e, c.input)
	if err != nil {
		return nil, err
	}
	for _, a := range e.Args {
		if a.IsNullConst() {
			return newConst(vec.NullDatum(t)), nil
		}
	}
	var in vec.Type
	var kernel func(text func() string) fn.Kernel
	switch {
	case ts[0].ID == vec.Float64 || ts[1].ID == vec.Float64:
		in, kernel = vec.Float64Type, intDivFloatKernel
	case ts[0].IsInteger() && ts[1].IsInteger():
		in, kernel = vec.Int64Type, intDivKernel
	default:
		in, kernel = vec.Decimal(vec.MaxPrecision, max(ts[0].DecimalScale(), ts[1].DecimalScale())), intDivDecKernel
	}
	n := &funcNode{t: t, strict: true}
	for _, a := range e.Args {
		x, err := c.compile(a)
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, convert(x, in))
	}
	n.vals = make([]*vec.Vec, len(n.args))
	n.kernel = kernel(e.errorText)
	return n, nil
}

// intDivKernel is a DIV b on BIGINTs: the quotient truncated toward zero; b = 0 is NULL.
func intDivKernel(text func() string) fn.Kernel {
	return func(args []*vec.Vec, out *vec.Vec, live []int32, nrows int) error {
		x, y := args[0].I64, args[1].I64
		for _, i := range live {
			switch d := y[i]; {
			case d == 0:
				out.SetNull(nrows, i)
			case d == -1:
				if x[i] == math.MinInt64 {
					return vec.OutOfRange("BIGINT", text())
				}
				out.I64[i] = -x[i]
			default:
				out.I64[i] = x[i] / d
			}
		}
		return nil
	}
}

// intDivDecKernel divides decimals at one scale exactly, truncating toward zero.
func intDivDecKernel(text func() string) fn.Kernel {
	return func(args []*vec.Vec, out *vec.Vec, live []int32, nrows int) error {
		x, y := args[0].D128, args[1].D128
		for _, i := range live {
			if y[i].Sign() == 0 {
				out.SetNull(nrows, i)
				continue
			}
			q, ok := x[i].QuoTrunc(y[i])
			if !ok || !q.IsInt64() {
				return vec.OutOfRange("BIGINT", text())
			}
			out.I64[i] = int64(q.Lo)
		}
		return nil
	}
}

func intDivFloatKernel(text func() string) fn.Kernel {
	return func(args []*vec.Vec, out *vec.Vec, live []int32, nrows int) error {
		x, y := args[0].F64, args[1].F64
		for _, i := range live {
			if y[i] == 0 {
				out.SetNull(nrows, i)
				continue
			}
			q := math.Trunc(x[i] / y[i])
			if !(q >= -(1<<63) && q < 1<<63) {
				return vec.OutOfRange("BIGINT", text())
			}
			out.I64[i] = int64(q)
		}
		return nil
	}
}
