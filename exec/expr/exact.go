package expr

import (
	"errors"

	"github.com/colinkdb/colink/exec/vec"
)

// MySQL's decimal arithmetic keeps intermediate digits between the operators of one
// expression and rounds only the result to its declared type: a quotient carries
// 9×⌈(s1+s2+4)/9⌉ decimal places (whole 9-digit words, truncated), not s1+4, so 1/3*3 is
// 1.0000, not 0.9999. The kernels compute so for column data and, on one-row batches, for the
// constant folder (sql/fold), which has no arithmetic of its own.
//
// A decimal + - * / % or negation with a division below it (through arithmetic only) is
// compiled "exact": every arithmetic node in that tree computes at its intermediate type
// (types below), and one settleNode rounds the root's value to its declared type. A tree
// without such a division is unaffected: + - * % are already exact at their declared
// scales, and a division whose result is the root rounds to s1+4 places, which equals
// rounding the truncated quotient (see compileArith's trunc).
//
// Intermediate types: + and - keep the larger scale with one more integer digit, * adds
// precisions and scales, % keeps the larger scale, / has the word-aligned scale above and
// (p1-s1)+s2 integer digits. Precision is capped at 38 digits (MySQL's intermediates go to
// 65). When an intermediate value of a batch needs more than 38 digits, the whole batch is
// computed again the old way, over operands rounded to their declared types (fallbackNode):
// the answers can then differ from MySQL's in the last places, but there is an answer where
// MySQL has one. Where an intermediate scale would exceed 30, that node is computed at its
// declared type.

// isArith reports the operations exact compilation passes intermediate digits through.
func isArith(op Op) bool {
	switch op {
	case OpAdd, OpSub, OpMul, OpDiv, OpMod, OpNeg:
		return true
	}
	return false
}

// keepsDigits reports whether e is decimal arithmetic with a decimal division in it (through
// arithmetic only): computing e exact can differ from its declared, rounded value.
func (c *compiler) keepsDigits(e *Expr) bool {
	if !isArith(e.Op) {
		return false
	}
	if t, err := TypeOf(e, c.input); err != nil || !t.IsDecimal() {
		return false
	}
	if e.Op == OpDiv {
		return true
	}
	for _, a := range e.Args {
		if c.keepsDigits(a) {
			return true
		}
	}
	return false
}

// quotientScale is the scale of MySQL's intermediate quotient of operands of scales s1 and
// s2: s1+s2+div_precision_increment rounded up to whole 9-digit words.
func quotientScale(s1, s2 int32) int32 {
	const word = 9
	return (s1 + s2 + 4 + word - 1) / word * word
}

// exactType is the intermediate type of "a op b" for operands of types ta and tb; false
// when it does not fit colink's decimals.
func exactType(e *Expr, ta, tb vec.Type) (vec.Type, bool) {
	p1, s1 := digitsOf(e.Args[0], ta), ta.DecimalScale()
	p2, s2 := digitsOf(e.Args[1], tb), tb.DecimalScale()
	var p, s int32
	switch e.Op {
	case OpAdd, OpSub:
		s = max(s1, s2)
		p = max(p1-s1, p2-s2) + 1 + s
	case OpMul:
		p, s = p1+p2, s1+s2
	case OpDiv:
		s = quotientScale(s1, s2)
		p = p1 - s1 + s2 + s
	case OpMod:
		s = max(s1, s2)
		p = max(p1-s1, p2-s2) + s
	default:
		return vec.Type{}, false
	}
	if s > vec.MaxScale {
		return vec.Type{}, false
	}
	// vec.Decimal caps p at 38: the kernels then check each value against 38 digits.
	return vec.Decimal(p, s), true
}

// compileExact compiles e keeping MySQL's intermediate digits: the node's type is e's
// intermediate type, not its declared one. Anything but decimal arithmetic compiles as
// usual. false means e's intermediate scale would exceed 30; the caller then computes e
// at its declared type.
func (c *compiler) compileExact(e *Expr) (node, bool, error) {
	if !isArith(e.Op) {
		n, err := c.compile(e)
		return n, err == nil, err
	}
	t, err := TypeOf(e, c.input)
	if err != nil {
		return nil, false, err
	}
	if !t.IsDecimal() || e.Args[0].IsNullConst() || len(e.Args) > 1 && e.Args[1].IsNullConst() {
		n, err := c.compile(e)
		return n, err == nil, err
	}
	args := make([]node, len(e.Args))
	for i, a := range e.Args {
		n, ok, err := c.compileExact(a)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			if n, err = c.compile(a); err != nil {
				return nil, false, err
			}
		}
		args[i] = n
	}
	if e.Op == OpNeg {
		return &negNode{src: e, x: args[0], t: args[0].typ()}, true, nil
	}
	ta, tb := args[0].typ(), args[1].typ()
	ti, ok := exactType(e, ta, tb)
	if !ok {
		return nil, false, nil
	}
	n := buildArith(e, args[0], args[1], ta, tb, ti)
	n.trunc = e.Op == OpDiv
	return fold(n), true, nil
}

// settleNode rounds an exact decimal value (half away from zero) to its expression's
// declared type; a value the type cannot hold is error 1690, naming the expression.
type settleNode struct {
	src  *Expr
	x    node
	t    vec.Type
	out  vec.Vec
	live []int32
}

// settle returns n rounded to the declared type t of the expression e it computes.
func settle(n node, t vec.Type, e *Expr) node {
	if n.typ() == t {
		return n
	}
	return fold(&settleNode{src: e, x: n, t: t})
}

func (n *settleNode) typ() vec.Type    { return n.t }
func (n *settleNode) children() []node { return []node{n.x} }

func (n *settleNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	a, err := n.x.eval(b, rows)
	if err != nil {
		return nil, err
	}
	out := &n.out
	out.Prepare(n.t, b.N)
	live := nullRows(out, rows, b.N, &n.live, a)
	from := n.x.typ()
	for _, i := range live {
		var v vec.Int128
		if from.ID == vec.Decimal64 {
			v = vec.I128(a.I64[i])
		} else {
			v = a.D128[i]
		}
		r, ok := v.Rescale(from.Scale, n.t.Scale)
		if !ok || !r.FitsPrecision(n.t.Precision) {
			return nil, vec.OutOfRange("DECIMAL", n.src.errorText())
		}
		if n.t.ID == vec.Decimal64 {
			out.I64[i] = int64(r.Lo)
		} else {
			out.D128[i] = r
		}
	}
	return out, nil
}

// fallbackNode computes exact, or, when a value of the batch is out of range there (an
// intermediate beyond 38 digits), rounded; both have the same type.
type fallbackNode struct {
	exact, rounded node
}

func withFallback(exact, rounded node) node {
	if _, ok := exact.(*constNode); ok {
		return exact
	}
	return &fallbackNode{exact: exact, rounded: rounded}
}

func (n *fallbackNode) typ() vec.Type    { return n.exact.typ() }
func (n *fallbackNode) children() []node { return []node{n.exact} }

func (n *fallbackNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	v, err := n.exact.eval(b, rows)
	var ve *vec.Error
	if err != nil && errors.As(err, &ve) && ve.Code == vec.CodeOutOfRange {
		return n.rounded.eval(b, rows)
	}
	return v, err
}
