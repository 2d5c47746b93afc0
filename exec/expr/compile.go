package expr

import (
	"context"
	"fmt"

	"github.com/colinkdb/colink/exec/vec"
)

// node is a compiled expression. eval computes the node for rows (ascending positions, each
// < b.N) of b and returns a vector aligned with b: only the listed rows are meaningful. The
// returned vector is the node's own (or one of b's columns) and stays valid until the
// node's next eval.
type node interface {
	eval(b *vec.Batch, rows []int32) (*vec.Vec, error)
	typ() vec.Type
}

// Evaluator computes an expression over batches.
type Evaluator struct {
	root  node
	t     vec.Type
	ident []int32
	ec    *evalContext // nil unless a volatile function uses the context (sleep)
}

// Compile type-checks e against the input column types and compiles it.
func Compile(e *Expr, input []vec.Type) (*Evaluator, error) {
	t, err := TypeOf(e, input)
	if err != nil {
		return nil, err
	}
	c := &compiler{input: input}
	n, err := c.compile(e)
	if err != nil {
		return nil, err
	}
	if n.typ() != t {
		return nil, fmt.Errorf("expr %s: compiled to %s, expected %s (internal error)", e, n.typ(), t)
	}
	return &Evaluator{root: n, t: t, ec: c.ec}, nil
}

// Type is the result type.
func (ev *Evaluator) Type() vec.Type { return ev.t }

// Eval computes the expression for b's active rows. The result is aligned with b (row i of
// the result belongs to row i of b) and valid until the next Eval. A wait in the expression
// (SLEEP) ends when ctx is done, failing with its cause.
func (ev *Evaluator) Eval(ctx context.Context, b *vec.Batch) (*vec.Vec, error) {
	if ev.ec != nil {
		ev.ec.ctx = ctx
		defer func() { ev.ec.ctx = nil }()
	}
	return ev.root.eval(b, activeRows(b, &ev.ident))
}

// Constant reports whether the expression folded to a constant, and its value.
func (ev *Evaluator) Constant() (vec.Datum, bool) {
	if c, ok := ev.root.(*constNode); ok {
		return c.d, true
	}
	return vec.Datum{}, false
}

// activeRows returns b.Sel, or an identity selection 0..N-1 kept in *ident.
func activeRows(b *vec.Batch, ident *[]int32) []int32 {
	if b.Sel != nil {
		return b.Sel
	}
	return identity(ident, b.N)
}

func identity(ident *[]int32, n int) []int32 {
	if len(*ident) < n {
		s := make([]int32, max(n, 2*len(*ident)))
		for i := range s {
			s[i] = int32(i)
		}
		*ident = s
	}
	return (*ident)[:n]
}

type compiler struct {
	input []vec.Type
	ec    *evalContext // shared by the volatile functions' kernels, made by the first of them
}

func (c *compiler) compile(e *Expr) (node, error) {
	n, err := c.compileNode(e)
	if err != nil {
		return nil, err
	}
	return fold(n), nil
}

func (c *compiler) compileNode(e *Expr) (node, error) {
	switch e.Op {
	case OpCol:
		return &colNode{idx: e.Col, t: c.input[e.Col]}, nil
	case OpConst:
		return newConst(e.Value), nil
	case OpAdd, OpSub, OpMul, OpDiv, OpMod:
		return c.compileArith(e)
	case OpNeg:
		return c.compileNeg(e)
	case OpEq, OpNe, OpLt, OpLe, OpGt, OpGe:
		return c.compileCompare(e, e.Op, e.Args[0], e.Args[1])
	case OpAnd, OpOr:
		return c.compileLogic(e)
	case OpNot:
		x, err := c.compile(e.Args[0])
		if err != nil {
			return nil, err
		}
		return &notNode{boolUnary{x: x}}, nil
	case OpIsNull, OpIsNotNull:
		x, err := c.compile(e.Args[0])
		if err != nil {
			return nil, err
		}
		return &isNullNode{boolUnary: boolUnary{x: x}, not: e.Op == OpIsNotNull}, nil
	case OpIn:
		return c.compileIn(e)
	case OpLike:
		return c.compileLike(e)
	case OpBetween:
		return c.compile(betweenAsAnd(e))
	case OpCase:
		return c.compileCase(e)
	case OpCaseSimple:
		return c.compile(simpleCaseAsSearched(e))
	case OpCoalesce:
		return c.compileCoalesce(e)
	case OpDateAdd, OpDateSub:
		return c.compileDateAdd(e)
	case OpIntDiv:
		return c.compileIntDiv(e)
	case OpCast:
		// A CAST to a number takes decimal arithmetic unrounded, as MySQL's val_real and
		// val_decimal do (exact.go); a CAST to a string prints the value at its declared
		// scale, as val_str does: CAST(1/3 AS CHAR) is '0.3333'.
		rounded, err := c.compile(e.Args[0])
		if err != nil {
			return nil, err
		}
		if e.Type.ID == vec.String || !c.keepsDigits(e.Args[0]) {
			return newCast(rounded, e.Type, false), nil
		}
		x, ok, err := c.compileExact(e.Args[0])
		if err != nil {
			return nil, err
		}
		if !ok {
			return newCast(rounded, e.Type, false), nil
		}
		return withFallback(newCast(x, e.Type, false), newCast(rounded, e.Type, false)), nil
	}
	return c.compileFunc(e) // a function of the registry, or an unknown operation
}

// betweenAsAnd rewrites x BETWEEN lo AND hi as x >= lo AND x <= hi.
func betweenAsAnd(e *Expr) *Expr {
	return Call(OpAnd, Call(OpGe, e.Args[0], e.Args[1]), Call(OpLe, e.Args[0], e.Args[2]))
}

// simpleCaseAsSearched rewrites CASE x WHEN v THEN r ... as CASE WHEN x = v THEN r ....
func simpleCaseAsSearched(e *Expr) *Expr {
	out := &Expr{Op: OpCase}
	i := 1
	for ; i+1 < len(e.Args); i += 2 {
		out.Args = append(out.Args, Call(OpEq, e.Args[0], e.Args[i]), e.Args[i+1])
	}
	if i < len(e.Args) {
		out.Args = append(out.Args, e.Args[i])
	}
	return out
}

// convert returns n converted to type t (an exact, implicit conversion).
func convert(n node, t vec.Type) node {
	if n.typ() == t {
		return n
	}
	return fold(newCast(n, t, true))
}

// fold evaluates a node whose inputs are all constants once, and replaces it by the
// constant. Nodes whose evaluation fails stay as they are, so that the error surfaces
// only if rows reach them.
func fold(n node) node {
	if _, ok := n.(*constNode); ok {
		return n
	}
	ch, ok := n.(interface{ children() []node })
	if !ok {
		return n
	}
	kids := ch.children()
	if len(kids) == 0 {
		return n
	}
	for _, k := range kids {
		if _, ok := k.(*constNode); !ok {
			return n
		}
	}
	b := &vec.Batch{N: 1}
	v, err := n.eval(b, []int32{0})
	if err != nil {
		return n
	}
	return newConst(v.Datum(0))
}

// colNode reads an input column.
type colNode struct {
	idx int
	t   vec.Type
}

func (n *colNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	return b.Cols[n.idx], nil
}
func (n *colNode) typ() vec.Type { return n.t }

// constNode yields a vector filled with one value (refilled only when batches grow).
type constNode struct {
	d      vec.Datum
	out    vec.Vec
	filled int
}

func newConst(d vec.Datum) *constNode { return &constNode{d: d} }

func (n *constNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	if n.filled < b.N || n.filled == 0 {
		size := max(b.N, 1)
		n.out.Fill(n.d, size)
		n.filled = size
	}
	return &n.out, nil
}
func (n *constNode) typ() vec.Type { return n.d.Type }

// constOf returns a node's constant value, if it is one.
func constOf(n node) (vec.Datum, bool) {
	if c, ok := n.(*constNode); ok {
		return c.d, true
	}
	return vec.Datum{}, false
}

// nullRows computes the union of the inputs' NULLs over rows into out (allocating out's
// Nulls only if some row is NULL) and returns the rows where no input is NULL, using
// scratch for the list when needed.
func nullRows(out *vec.Vec, rows []int32, n int, scratch *[]int32, ins ...*vec.Vec) []int32 {
	any := false
	for _, in := range ins {
		if in.Nulls != nil {
			any = true
			break
		}
	}
	if !any {
		return rows
	}
	nl := out.PrepareNulls(n)
	live := (*scratch)[:0]
	for _, i := range rows {
		isNull := false
		for _, in := range ins {
			if in.Nulls != nil && in.Nulls[i] {
				isNull = true
				break
			}
		}
		if isNull {
			nl[i] = true
		} else {
			live = append(live, i)
		}
	}
	*scratch = live
	if len(live) == len(rows) {
		out.Nulls = nil
	}
	return live
}

// dense reports whether rows is every row 0..n-1 (rows is ascending and distinct).
func dense(rows []int32, n int) bool { return len(rows) == n }
