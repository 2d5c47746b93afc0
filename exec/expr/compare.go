package expr

import (
	"github.com/colinkdb/colink/exec/vec"
)

// payload classifies a type by the Vec field that holds its values.
type payload uint8

const (
	pI32 payload = iota
	pI64
	pF64
	pD128
	pStr
	pBool
)

func payloadOf(t vec.Type) payload {
	switch t.ID {
	case vec.Int32, vec.Date32:
		return pI32
	case vec.Int64, vec.Decimal64, vec.Datetime:
		return pI64
	case vec.Float64:
		return pF64
	case vec.Decimal128:
		return pD128
	case vec.String:
		return pStr
	}
	return pBool
}

// flip mirrors a comparison so that its operands can be swapped: c < x is x > c.
func flip(op Op) Op {
	switch op {
	case OpLt:
		return OpGt
	case OpLe:
		return OpGe
	case OpGt:
		return OpLt
	case OpGe:
		return OpLe
	}
	return op
}

// negate returns the comparison that is TRUE exactly when op is FALSE (NULLs stay NULL).
func negate(op Op) Op {
	switch op {
	case OpEq:
		return OpNe
	case OpNe:
		return OpEq
	case OpLt:
		return OpGe
	case OpLe:
		return OpGt
	case OpGt:
		return OpLe
	case OpGe:
		return OpLt
	}
	return op
}

// cmpTable[op][c+1] says whether a three-way comparison result c satisfies op.
func cmpHolds(op Op, c int) bool {
	switch op {
	case OpEq:
		return c == 0
	case OpNe:
		return c != 0
	case OpLt:
		return c < 0
	case OpLe:
		return c <= 0
	case OpGt:
		return c > 0
	}
	return c >= 0
}

// comparison is a compiled comparison: operands converted to one type; when r is a
// constant, its value is kept in c.
type comparison struct {
	op      Op
	l, r    node
	p       payload
	isConst bool
	c       vec.Datum
	cI32    int32
	cI64    int64
	cF64    float64
	cD128   vec.Int128
	cStr    []byte
	cBool   bool
}

// compileComparison builds the comparison of a and b; null reports that the result is
// always NULL (a NULL constant operand).
func (c *compiler) compileComparison(e *Expr, op Op, a, b *Expr) (*comparison, bool, error) {
	ta, err := TypeOf(a, c.input)
	if err != nil {
		return nil, false, err
	}
	tb, err := TypeOf(b, c.input)
	if err != nil {
		return nil, false, err
	}
	ct, err := compareType(e, a, b, ta, tb)
	if err != nil {
		return nil, false, err
	}
	if a.IsNullConst() || b.IsNullConst() {
		return nil, true, nil
	}
	l, err := c.compile(a)
	if err != nil {
		return nil, false, err
	}
	r, err := c.compile(b)
	if err != nil {
		return nil, false, err
	}
	l, r = convert(l, ct), convert(r, ct)
	if _, lc := constOf(l); lc {
		if _, rc := constOf(r); !rc {
			l, r, op = r, l, flip(op)
		}
	}
	cmp := &comparison{op: op, l: l, r: r, p: payloadOf(ct)}
	if d, ok := constOf(r); ok {
		if d.Null {
			return nil, true, nil
		}
		cmp.isConst, cmp.c = true, d
		switch cmp.p {
		case pI32:
			cmp.cI32 = int32(d.Int)
		case pI64:
			cmp.cI64 = d.Int
		case pF64:
			cmp.cF64 = d.Float
		case pD128:
			cmp.cD128 = d.Decimal()
		case pStr:
			cmp.cStr = []byte(d.Str)
		case pBool:
			cmp.cBool = d.Bool()
		}
	}
	return cmp, false, nil
}

func (c *compiler) compileCompare(e *Expr, op Op, a, b *Expr) (node, error) {
	cmp, null, err := c.compileComparison(e, op, a, b)
	if err != nil {
		return nil, err
	}
	if null {
		return newConst(vec.NullDatum(vec.BoolType)), nil
	}
	return &cmpNode{cmp: cmp}, nil
}

// cmpNode computes a comparison's boolean values.
type cmpNode struct {
	cmp  *comparison
	out  vec.Vec
	live []int32
}

func (n *cmpNode) typ() vec.Type { return vec.BoolType }
func (n *cmpNode) children() []node {
	return []node{n.cmp.l, n.cmp.r}
}

func (n *cmpNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	x, err := n.cmp.l.eval(b, rows)
	if err != nil {
		return nil, err
	}
	return n.evalWith(x, b, rows, &n.out)
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

type ordered interface {
	~int32 | ~int64 | ~float64
}

func cmpVC[T ordered](op Op, a []T, c T, rows []int32, o []bool) {
	switch op {
	case OpEq:
		for _, i := range rows {
			o[i] = a[i] == c
		}
	case OpNe:
		for _, i := range rows {
			o[i] = a[i] != c
		}
	case OpLt:
		for _, i := range rows {
			o[i] = a[i] < c
		}
	case OpLe:
		for _, i := range rows {
			o[i] = a[i] <= c
		}
	case OpGt:
		for _, i := range rows {
			o[i] = a[i] > c
		}
	case OpGe:
		for _, i := range rows {
			o[i] = a[i] >= c
		}
	}
}

func cmpVV[T ordered](op Op, a, b []T, rows []int32, o []bool) {
	switch op {
	case OpEq:
		for _, i := range rows {
			o[i] = a[i] == b[i]
		}
	case OpNe:
		for _, i := range rows {
			o[i] = a[i] != b[i]
		}
	case OpLt:
		for _, i := range rows {
			o[i] = a[i] < b[i]
		}
	case OpLe:
		for _, i := range rows {
			o[i] = a[i] <= b[i]
		}
	case OpGt:
		for _, i := range rows {
			o[i] = a[i] > b[i]
		}
	case OpGe:
		for _, i := range rows {
			o[i] = a[i] >= b[i]
		}
	}
}

// b2i is 1 for true; the compiler turns it into a flag move, keeping selection loops
// free of unpredictable branches.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// selVC appends to dst (capacity >= len(rows) or n) the rows where a[i] op c. rows == nil
// means the dense rows 0..n-1.
func selVC[T ordered](op Op, a []T, c T, rows []int32, n int, dst []int32) []int32 {
	k := 0
	if rows == nil {
		a = a[:n]
		dst = dst[:n]
		switch op {
		case OpEq:
			for i, v := range a {
				dst[k] = int32(i)
				k += b2i(v == c)
			}
		case OpNe:
			for i, v := range a {
				dst[k] = int32(i)
				k += b2i(v != c)
			}
		case OpLt:
			for i, v := range a {
				dst[k] = int32(i)
				k += b2i(v < c)
			}
		case OpLe:
			for i, v := range a {
				dst[k] = int32(i)
				k += b2i(v <= c)
			}
		case OpGt:
			for i, v := range a {
				dst[k] = int32(i)
				k += b2i(v > c)
			}
		case OpGe:
			for i, v := range a {
				dst[k] = int32(i)
				k += b2i(v >= c)
			}
		}
		return dst[:k]
	}
	dst = dst[:len(rows)]
	switch op {
	case OpEq:
		for _, i := range rows {
			dst[k] = i
			k += b2i(a[i] == c)
		}
	case OpNe:
		for _, i := range rows {
			dst[k] = i
			k += b2i(a[i] != c)
		}
	case OpLt:
		for _, i := range rows {
			dst[k] = i
			k += b2i(a[i] < c)
		}
	case OpLe:
		for _, i := range rows {
			dst[k] = i
			k += b2i(a[i] <= c)
		}
	case OpGt:
		for _, i := range rows {
			dst[k] = i
			k += b2i(a[i] > c)
		}
	case OpGe:
		for _, i := range rows {
			dst[k] = i
			k += b2i(a[i] >= c)
		}
	}
	return dst[:k]
}

// selRange keeps rows with lo <= a[i] <= hi (BETWEEN with constant bounds).
func selRange[T ordered](a []T, lo, hi T, rows []int32, n int, dst []int32) []int32 {
	k := 0
	if rows == nil {
		a = a[:n]
		dst = dst[:n]
		for i, v := range a {
			dst[k] = int32(i)
			k += b2i(v >= lo) & b2i(v <= hi)
		}
		return dst[:k]
	}
	dst = dst[:len(rows)]
	for _, i := range rows {
		v := a[i]
		dst[k] = i
		k += b2i(v >= lo) & b2i(v <= hi)
	}
	return dst[:k]
}

func selVV[T ordered](op Op, a, b []T, rows []int32, dst []int32) []int32 {
	dst = dst[:len(rows)]
	k := 0
	switch op {
	case OpEq:
		for _, i := range rows {
			dst[k] = i
			k += b2i(a[i] == b[i])
		}
	case OpNe:
		for _, i := range rows {
			dst[k] = i
			k += b2i(a[i] != b[i])
		}
	case OpLt:
		for _, i := range rows {
			dst[k] = i
			k += b2i(a[i] < b[i])
		}
	case OpLe:
		for _, i := range rows {
			dst[k] = i
			k += b2i(a[i] <= b[i])
		}
	case OpGt:
		for _, i := range rows {
			dst[k] = i
			k += b2i(a[i] > b[i])
		}
	case OpGe:
		for _, i := range rows {
			dst[k] = i
			k += b2i(a[i] >= b[i])
		}
	}
	return dst[:k]
}
