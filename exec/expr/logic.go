package expr

import (
	"github.com/colinkdb/colink/exec/vec"
)

func (c *compiler) compileLogic(e *Expr) (node, error) {
	acc, err := c.compile(e.Args[0])
	if err != nil {
		return nil, err
	}
	for _, a := range e.Args[1:] {
		r, err := c.compile(a)
		if err != nil {
			return nil, err
		}
		acc = fold(&logicNode{or: e.Op == OpOr, l: acc, r: r})
	}
	return acc, nil
}

// logicNode is AND or OR in three-valued logic. The right side is evaluated only on rows
// the left side does not decide (AND: left not FALSE; OR: left not TRUE).
type logicNode struct {
	or   bool
	l, r node
	out  vec.Vec
	rest []int32
}

func (n *logicNode) typ() vec.Type    { return vec.BoolType }
func (n *logicNode) children() []node { return []node{n.l, n.r} }

func (n *logicNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	x, err := n.l.eval(b, rows)
	if err != nil {
		return nil, err
	}
	// decided is the left value that settles the result: FALSE for AND, TRUE for OR.
	decided := n.or
	rest := n.rest[:0]
	for _, i := range rows {
		if x.IsNull(int(i)) || x.Bool[i] != decided {
			rest = append(rest, i)
		}
	}
	n.rest = rest
	out := &n.out
	out.Prepare(vec.BoolType, b.N)
	o := out.Bool
	var y *vec.Vec
	if len(rest) > 0 {
		if y, err = n.r.eval(b, rest); err != nil {
			return nil, err
		}
	}
	for _, i := range rows {
		xn := x.IsNull(int(i))
		if !xn && x.Bool[i] == decided {
			o[i] = decided
			continue
		}
		yn := y.IsNull(int(i))
		if !yn && y.Bool[i] == decided {
			o[i] = decided
			continue
		}
		if xn || yn {
			out.SetNull(b.N, i)
			o[i] = false
			continue
		}
		o[i] = !decided
	}
	return out, nil
}

// boolUnary is the child and output of a boolean node over one child.
type boolUnary struct {
	x   node
	out vec.Vec
}

func (n *boolUnary) typ() vec.Type    { return vec.BoolType }
func (n *boolUnary) children() []node { return []node{n.x} }

// start evaluates the child over rows and readies the output for b.
func (n *boolUnary) start(b *vec.Batch, rows []int32) (x, out *vec.Vec, err error) {
	if x, err = n.x.eval(b, rows); err != nil {
		return nil, nil, err
	}
	n.out.Prepare(vec.BoolType, b.N)
	return x, &n.out, nil
}

// notNode is NOT; NULL stays NULL.
type notNode struct{ boolUnary }

func (n *notNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	x, out, err := n.start(b, rows)
	if err != nil {
		return nil, err
	}
	for _, i := range rows {
		out.Bool[i] = !x.Bool[i]
	}
	if x.Nulls != nil {
		nl := out.PrepareNulls(b.N)
		for _, i := range rows {
			nl[i] = x.Nulls[i]
		}
	}
	return out, nil
}

// isNullNode is IS NULL / IS NOT NULL (never NULL itself).
type isNullNode struct {
	boolUnary
	not bool
}

func (n *isNullNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	x, out, err := n.start(b, rows)
	if err != nil {
		return nil, err
	}
	for _, i := range rows {
		out.Bool[i] = x.IsNull(int(i)) != n.not
	}
	return out, nil
}

// branchNode is CASE or COALESCE: rows are routed to one of several result vectors, then
// gathered into the output in row order.
type branchNode struct {
	coalesce bool
	conds    []node // CASE: one per result except ELSE
	results  []node // CASE: THEN values then ELSE (if any); COALESCE: the arguments
	t        vec.Type
	out      vec.Vec
	vals     []*vec.Vec
	branch   []int16
	remA     []int32
	remB     []int32
	matched  []int32
}

func (n *branchNode) typ() vec.Type { return n.t }
func (n *branchNode) children() []node {
	return append(append([]node(nil), n.conds...), n.results...)
}

func (c *compiler) compileCase(e *Expr) (node, error) {
	t, err := TypeOf(e, c.input)
	if err != nil {
		return nil, err
	}
	n := &branchNode{t: t}
	i := 0
	for ; i+1 < len(e.Args); i += 2 {
		w, err := c.compile(e.Args[i])
		if err != nil {
			return nil, err
		}
		r, err := c.compileResult(e.Args[i+1], t)
		if err != nil {
			return nil, err
		}
		n.conds, n.results = append(n.conds, w), append(n.results, r)
	}
	if i < len(e.Args) {
		r, err := c.compileResult(e.Args[i], t)
		if err != nil {
			return nil, err
		}
		n.results = append(n.results, r)
	}
	n.vals = make([]*vec.Vec, len(n.results))
	return n, nil
}

// compileResult compiles a branch result converted to the common type t (a NULL constant
// becomes a NULL of t).
func (c *compiler) compileResult(e *Expr, t vec.Type) (node, error) {
	if e.IsNullConst() {
		return newConst(vec.NullDatum(t)), nil
	}
	r, err := c.compile(e)
	if err != nil {
		return nil, err
	}
	return convert(r, t), nil
}

func (c *compiler) compileCoalesce(e *Expr) (node, error) {
	t, err := TypeOf(e, c.input)
	if err != nil {
		return nil, err
	}
	n := &branchNode{coalesce: true, t: t}
	for _, a := range e.Args {
		r, err := c.compileResult(a, t)
		if err != nil {
			return nil, err
		}
		n.results = append(n.results, r)
	}
	n.vals = make([]*vec.Vec, len(n.results))
	return n, nil
}

func (n *branchNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	if cap(n.branch) < b.N {
		n.branch = make([]int16, b.N, max(b.N, 2*cap(n.branch)))
	}
	branch := n.branch[:b.N]
	for _, i := range rows {
		branch[i] = -1
	}
	rem := append(n.remA[:0], rows...)
	n.remA = rem
	next := n.remB[:0]
	for k := range n.results {
		if len(rem) == 0 {
			break
		}
		if n.coalesce {
			v, err := n.results[k].eval(b, rem)
			if err != nil {
				return nil, err
			}
			n.vals[k] = v
			next = next[:0]
			for _, i := range rem {
				if v.IsNull(int(i)) {
					next = append(next, i)
				} else {
					branch[i] = int16(k)
				}
			}
		} else if k < len(n.conds) {
			w, err := n.conds[k].eval(b, rem)
			if err != nil {
				return nil, err
			}
			matched := n.matched[:0]
			next = next[:0]
			for _, i := range rem {
				if !w.IsNull(int(i)) && w.Bool[i] {
					matched = append(matched, i)
				} else {
					next = append(next, i)
				}
			}
			n.matched = matched
			if len(matched) > 0 {
				v, err := n.results[k].eval(b, matched)
				if err != nil {
					return nil, err
				}
				n.vals[k] = v
				for _, i := range matched {
					branch[i] = int16(k)
				}
			}
		} else { // ELSE
			v, err := n.results[k].eval(b, rem)
			if err != nil {
				return nil, err
			}
			n.vals[k] = v
			for _, i := range rem {
				branch[i] = int16(k)
			}
			next = next[:0]
		}
		rem, next = next, rem
	}
	n.remA, n.remB = rem, next
	return n.gather(b.N, rows, branch), nil
}

// pickBranch sets dst[i], for the rows that are not NULL, from the payload (col) of the
// vector of the branch that produced row i.
func pickBranch[T any](dst []T, vals []*vec.Vec, col func(*vec.Vec) []T, branch []int16, rows []int32, isNull func(int32) bool) {
	for _, i := range rows {
		if !isNull(i) {
			dst[i] = col(vals[branch[i]])[i]
		}
	}
}

// gather copies each row's value from the vector of the branch that produced it.
func (n *branchNode) gather(nrows int, rows []int32, branch []int16) *vec.Vec {
	out := &n.out
	out.Prepare(n.t, nrows)
	vals := n.vals
	isNull := func(i int32) bool {
		k := branch[i]
		if k < 0 || vals[k].IsNull(int(i)) {
			out.SetNull(nrows, i)
			return true
		}
		return false
	}
	switch payloadOf(n.t) {
	case pI32:
		pickBranch(out.I32, vals, func(v *vec.Vec) []int32 { return v.I32 }, branch, rows, isNull)
	case pI64:
		pickBranch(out.I64, vals, func(v *vec.Vec) []int64 { return v.I64 }, branch, rows, isNull)
	case pF64:
		pickBranch(out.F64, vals, func(v *vec.Vec) []float64 { return v.F64 }, branch, rows, isNull)
	case pD128:
		pickBranch(out.D128, vals, func(v *vec.Vec) []vec.Int128 { return v.D128 }, branch, rows, isNull)
	case pBool:
		pickBranch(out.Bool, vals, func(v *vec.Vec) []bool { return v.Bool }, branch, rows, isNull)
	case pStr:
		var w vec.StringWriter
		w.Begin(out)
		for _, i := range rows {
			if !isNull(i) {
				w.Put(i, vals[branch[i]].String(int(i)))
			}
		}
		w.Finish(nrows)
	}
	for k := range vals {
		vals[k] = nil
	}
	return out
}
