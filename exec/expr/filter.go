package expr

import (
	"context"

	"github.com/colinkdb/colink/exec/vec"
)

// Filter selects the rows of a batch for which a boolean expression is TRUE (not FALSE,
// not NULL).
type Filter struct {
	root  selector
	ident []int32
	ec    *evalContext // nil unless a volatile function uses the context (sleep)
}

// selector narrows a list of rows. sel returns the rows (a subset of rows, ascending) for
// which the predicate is TRUE; rows == nil means every row 0..b.N-1. The result is the
// selector's own buffer (or rows itself), valid until its next call.
type selector interface {
	sel(b *vec.Batch, rows []int32) ([]int32, error)
}

// CompileFilter compiles a boolean predicate for filtering.
func CompileFilter(e *Expr, input []vec.Type) (*Filter, error) {
	t, err := TypeOf(e, input)
	if err != nil {
		return nil, err
	}
	if t.ID != vec.Bool {
		return nil, errorf(e, "filter predicate is %s, not bool", t)
	}
	c := &compiler{input: input}
	s, err := c.compileSel(e, false)
	if err != nil {
		return nil, err
	}
	return &Filter{root: s, ec: c.ec}, nil
}

// Select returns the active rows of b that pass, ascending. The slice belongs to the filter
// (or is b.Sel) and stays valid until the next Select. A wait in the predicate (SLEEP) ends
// when ctx is done, failing with its cause.
func (f *Filter) Select(ctx context.Context, b *vec.Batch) ([]int32, error) {
	if b.Len() == 0 {
		return b.Sel, nil
	}
	if f.ec != nil {
		f.ec.ctx = ctx
		defer func() { f.ec.ctx = nil }()
	}
	return f.root.sel(b, b.Sel)
}

// Always reports whether the predicate folded to a constant, and whether that constant
// passes rows.
func (f *Filter) Always() (pass bool, constant bool) {
	switch f.root.(type) {
	case allSel:
		return true, true
	case noneSel:
		return false, true
	}
	return false, false
}

// compileSel compiles e (or NOT e when neg) as a selector.
func (c *compiler) compileSel(e *Expr, neg bool) (selector, error) {
	switch e.Op {
	case OpAnd, OpOr:
		// NOT (a AND b) = NOT a OR NOT b, which holds in three-valued logic too.
		isAnd := (e.Op == OpAnd) != neg
		var kids []selector
		for _, a := range e.Args {
			s, err := c.compileSel(a, neg)
			if err != nil {
				return nil, err
			}
			kids = append(kids, s)
		}
		if isAnd {
			return &andSel{kids: kids}, nil
		}
		return &orSel{kids: kids}, nil
	case OpNot:
		return c.compileSel(e.Args[0], !neg)
	case OpEq, OpNe, OpLt, OpLe, OpGt, OpGe:
		op := e.Op
		if neg {
			op = negate(op)
		}
		cmp, null, err := c.compileComparison(e, op, e.Args[0], e.Args[1])
		if err != nil {
			return nil, err
		}
		if null {
			return noneSel{}, nil
		}
		if _, lc := constOf(cmp.l); lc {
			return c.genericSel(e, neg)
		}
		return &cmpSel{cmp: cmp}, nil
	case OpBetween:
		if neg {
			// NOT (x BETWEEN lo AND hi) = x < lo OR x > hi.
			return c.compileSel(Call(OpOr, Call(OpLt, e.Args[0], e.Args[1]), Call(OpGt, e.Args[0], e.Args[2])), false)
		}
		if s, ok, err := c.rangeSel(e); err != nil || ok {
			return s, err
		}
		return c.compileSel(betweenAsAnd(e), false)
	case OpIsNull, OpIsNotNull:
		x, err := c.compile(e.Args[0])
		if err != nil {
			return nil, err
		}
		return &nullSel{x: x, wantNull: (e.Op == OpIsNull) != neg}, nil
	case OpIn:
		x, set, ok, err := c.compileInParts(e)
		if err != nil {
			return nil, err
		}
		if !ok {
			return c.compileSel(inAsOr(e), neg)
		}
		if neg && set.hasNull {
			return noneSel{}, nil // x NOT IN (..., NULL) is never TRUE
		}
		return &inSel{x: x, set: set, neg: neg}, nil
	case OpLike:
		if !e.Args[1].IsConst() {
			return c.genericSel(e, neg)
		}
		x, m, null, err := c.likeParts(e)
		if err != nil {
			return nil, err
		}
		if null {
			return noneSel{}, nil
		}
		return &likeSel{x: x, m: m, neg: neg}, nil
	}
	return c.genericSel(e, neg)
}

// genericSel evaluates the predicate's values and keeps TRUE rows (FALSE rows when neg).
func (c *compiler) genericSel(e *Expr, neg bool) (selector, error) {
	n, err := c.compile(e)
	if err != nil {
		return nil, err
	}
	if d, ok := constOf(n); ok {
		if d.Null || d.Bool() == neg {
			return noneSel{}, nil
		}
		return allSel{}, nil
	}
	return &valueSel{x: n, neg: neg}, nil
}

// rows returns rows, or the identity list for a dense batch.
func rowsOf(b *vec.Batch, rows []int32, ident *[]int32) []int32 {
	if rows != nil {
		return rows
	}
	return identity(ident, b.N)
}

// grow32 returns a non-nil slice of n elements reusing s (a nil result would mean "every
// row" to the selectors' callers).
func grow32(s []int32, n int) []int32 {
	if s != nil && cap(s) >= n {
		return s[:n]
	}
	return make([]int32, n, max(n, 2*cap(s), 16))
}

type allSel struct{}

func (allSel) sel(b *vec.Batch, rows []int32) ([]int32, error) { return rows, nil }

type noneSel struct{}

func (noneSel) sel(b *vec.Batch, rows []int32) ([]int32, error) { return []int32{}, nil }

type andSel struct {
	kids []selector
}

func (s *andSel) sel(b *vec.Batch, rows []int32) ([]int32, error) {
	var err error
	for _, k := range s.kids {
		if rows, err = k.sel(b, rows); err != nil {
			return nil, err
		}
		if rows != nil && len(rows) == 0 {
			break
		}
	}
	return rows, nil
}

// orSel keeps rows that pass any child; each child sees only the rows not yet selected.
type orSel struct {
	kids  []selector
	ident []int32
	acc   []int32
	tmp   []int32
	rest  []int32
}

func (s *orSel) sel(b *vec.Batch, rows []int32) ([]int32, error) {
	all := rowsOf(b, rows, &s.ident)
	s.acc = grow32(s.acc, 0)
	rest := append(s.rest[:0], all...)
	for _, k := range s.kids {
		if len(rest) == 0 {
			break
		}
		got, err := k.sel(b, rest)
		if err != nil {
			return nil, err
		}
		if len(got) == 0 {
			continue
		}
		// acc ∪= got; rest -= got (all three ascending).
		s.tmp = mergeUnion(s.tmp[:0], s.acc, got)
		s.acc, s.tmp = s.tmp, s.acc
		rest = subtract(rest, got)
	}
	s.rest = rest
	return s.acc, nil
}

func mergeUnion(dst, a, b []int32) []int32 {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			dst = append(dst, a[i])
			i++
		case a[i] > b[j]:
			dst = append(dst, b[j])
			j++
		default:
			dst = append(dst, a[i])
			i++
			j++
		}
	}
	dst = append(dst, a[i:]...)
	return append(dst, b[j:]...)
}

// subtract removes the members of b (a subset of a, both ascending) from a, in place.
func subtract(a, b []int32) []int32 {
	k, j := 0, 0
	for _, v := range a {
		if j < len(b) && b[j] == v {
			j++
			continue
		}
		a[k] = v
		k++
	}
	return a[:k]
}

// liveRows drops rows whose value is NULL (a NULL never passes a comparison).
func liveRows(x *vec.Vec, rows []int32, n int, ident *[]int32, buf *[]int32) []int32 {
	if x.Nulls == nil {
		return rows
	}
	all := rowsOf(&vec.Batch{N: n}, rows, ident)
	out := grow32(*buf, 0)
	for _, i := range all {
		if !x.Nulls[i] {
			out = append(out, i)
		}
	}
	*buf = out
	return out
}

// cmpSel filters on a comparison with typed loops (constant right side: one load per row).
type cmpSel struct {
	cmp   *comparison
	ident []int32
	live  []int32
	out   []int32
	vals  vec.Vec
	vn    cmpNode
}

func (s *cmpSel) sel(b *vec.Batch, rows []int32) ([]int32, error) {
	c := s.cmp
	x, err := c.l.eval(b, rowsOf(b, rows, &s.ident))
	if err != nil {
		return nil, err
	}
	if c.isConst {
		r := liveRows(x, rows, b.N, &s.ident, &s.live)
		s.out = grow32(s.out, max(len(r), b.N))
		switch c.p {
		case pI32:
			return selVC(c.op, x.I32, c.cI32, r, b.N, s.out), nil
		case pI64:
			return selVC(c.op, x.I64, c.cI64, r, b.N, s.out), nil
		case pF64:
			return selVC(c.op, x.F64, c.cF64, r, b.N, s.out), nil
		case pStr:
			return selStrConst(c.op, x, c.cStr, rowsOf(b, r, &s.ident), s.out), nil
		case pD128:
			out, k := s.out, 0
			for _, i := range rowsOf(b, r, &s.ident) {
				out[k] = i
				k += b2i(cmpHolds(c.op, x.D128[i].Cmp(c.cD128)))
			}
			return out[:k], nil
		}
	} else {
		y, err := c.r.eval(b, rowsOf(b, rows, &s.ident))
		if err != nil {
			return nil, err
		}
		if x.Nulls == nil && y.Nulls == nil {
			r := rowsOf(b, rows, &s.ident)
			s.out = grow32(s.out, len(r))
			switch c.p {
			case pI32:
				return selVV(c.op, x.I32, y.I32, r, s.out), nil
			case pI64:
				return selVV(c.op, x.I64, y.I64, r, s.out), nil
			case pF64:
				return selVV(c.op, x.F64, y.F64, r, s.out), nil
			}
		}
	}
	// Other payloads (and NULL-bearing operands of column comparisons): compute the
	// comparison's values and keep TRUE rows.
	s.vn.cmp = c
	v, err := s.vn.evalWith(x, b, rowsOf(b, rows, &s.ident), &s.vals)
	if err != nil {
		return nil, err
	}
	return pickTrue(v, rowsOf(b, rows, &s.ident), false, &s.out), nil
}

// evalWith is cmpNode.eval reusing an already computed left operand and an output vector.
func (n *cmpNode) evalWith(x *vec.Vec, b *vec.Batch, rows []int32, out *vec.Vec) (*vec.Vec, error) {
	c := n.cmp
	out.Prepare(vec.BoolType, b.N)
	o := out.Bool
	var live []int32
	if c.isConst {
		live = nullRows(out, rows, b.N, &n.live, x)
		switch c.p {
		case pI32:
			cmpVC(c.op, x.I32, c.cI32, live, o)
		case pI64:
			cmpVC(c.op, x.I64, c.cI64, live, o)
		case pF64:
			cmpVC(c.op, x.F64, c.cF64, live, o)
		case pD128:
			for _, i := range live {
				o[i] = cmpHolds(c.op, x.D128[i].Cmp(c.cD128))
			}
		case pStr:
			if c.op == OpEq || c.op == OpNe {
				want := c.op == OpEq
				for _, i := range live {
					o[i] = string(x.String(int(i))) == string(c.cStr) == want
				}
			} else {
				for _, i := range live {
					o[i] = cmpHolds(c.op, compareBytes(x.String(int(i)), c.cStr))
				}
			}
		case pBool:
			for _, i := range live {
				o[i] = cmpHolds(c.op, boolCmp(x.Bool[i], c.cBool))
			}
		}
		return out, nil
	}
	y, err := c.r.eval(b, rows)
	if err != nil {
		return nil, err
	}
	live = nullRows(out, rows, b.N, &n.live, x, y)
	switch c.p {
	case pI32:
		cmpVV(c.op, x.I32, y.I32, live, o)
	case pI64:
		cmpVV(c.op, x.I64, y.I64, live, o)
	case pF64:
		cmpVV(c.op, x.F64, y.F64, live, o)
	case pD128:
		for _, i := range live {
			o[i] = cmpHolds(c.op, x.D128[i].Cmp(y.D128[i]))
		}
	case pStr:
		for _, i := range live {
			o[i] = cmpHolds(c.op, compareBytes(x.String(int(i)), y.String(int(i))))
		}
	case pBool:
		for _, i := range live {
			o[i] = cmpHolds(c.op, boolCmp(x.Bool[i], y.Bool[i]))
		}
	}
	return out, nil
}

// pickTrue keeps the rows whose boolean value is TRUE (FALSE when neg); NULLs never pass.
func pickTrue(v *vec.Vec, rows []int32, neg bool, buf *[]int32) []int32 {
	out := grow32(*buf, len(rows))
	k := 0
	want := !neg
	if v.Nulls == nil {
		for _, i := range rows {
			out[k] = i
			k += b2i(v.Bool[i] == want)
		}
	} else {
		for _, i := range rows {
			out[k] = i
			k += b2i(v.Bool[i] == want) & b2i(!v.Nulls[i])
		}
	}
	*buf = out
	return out[:k]
}

// valueSel is the general selector: evaluate, keep TRUE.
type valueSel struct {
	x     node
	neg   bool
	ident []int32
	out   []int32
}

func (s *valueSel) sel(b *vec.Batch, rows []int32) ([]int32, error) {
	r := rowsOf(b, rows, &s.ident)
	v, err := s.x.eval(b, r)
	if err != nil {
		return nil, err
	}
	return pickTrue(v, r, s.neg, &s.out), nil
}

// nullSel is IS [NOT] NULL.
type nullSel struct {
	x        node
	wantNull bool
	ident    []int32
	out      []int32
}

func (s *nullSel) sel(b *vec.Batch, rows []int32) ([]int32, error) {
	r := rowsOf(b, rows, &s.ident)
	v, err := s.x.eval(b, r)
	if err != nil {
		return nil, err
	}
	if v.Nulls == nil {
		if s.wantNull {
			return []int32{}, nil
		}
		return rows, nil
	}
	out := grow32(s.out, len(r))
	k := 0
	for _, i := range r {
		out[k] = i
		k += b2i(v.Nulls[i] == s.wantNull)
	}
	s.out = out
	return out[:k], nil
}

// inSel is x [NOT] IN (constants).
type inSel struct {
	x     node
	set   *inSet
	neg   bool
	ident []int32
	live  []int32
	out   []int32
	hit   []bool
}

func (s *inSel) sel(b *vec.Batch, rows []int32) ([]int32, error) {
	x, err := s.x.eval(b, rowsOf(b, rows, &s.ident))
	if err != nil {
		return nil, err
	}
	r := rowsOf(b, liveRows(x, rows, b.N, &s.ident, &s.live), &s.ident)
	if cap(s.hit) < b.N {
		s.hit = make([]bool, b.N, max(b.N, 2*cap(s.hit)))
	}
	hit := s.hit[:b.N]
	s.set.member(x, r, hit)
	out := grow32(s.out, len(r))
	k := 0
	want := !s.neg
	for _, i := range r {
		out[k] = i
		k += b2i(hit[i] == want)
	}
	s.out = out
	return out[:k], nil
}

// likeSel is x [NOT] LIKE pattern.
type likeSel struct {
	x     node
	m     *likeMatcher
	neg   bool
	ident []int32
	live  []int32
	out   []int32
}

func (s *likeSel) sel(b *vec.Batch, rows []int32) ([]int32, error) {
	x, err := s.x.eval(b, rowsOf(b, rows, &s.ident))
	if err != nil {
		return nil, err
	}
	r := rowsOf(b, liveRows(x, rows, b.N, &s.ident, &s.live), &s.ident)
	s.out = grow32(s.out, len(r))
	return s.m.selectRows(x, r, s.neg, s.out), nil
}

// rangeSelector is lo <= x <= hi with constant bounds, in one pass.
type rangeSelector struct {
	x      node
	p      payload
	lo, hi vec.Datum
	ident  []int32
	live   []int32
	out    []int32
}

// rangeSel compiles BETWEEN with constant bounds of a fixed-width type.
func (c *compiler) rangeSel(e *Expr) (selector, bool, error) {
	if !e.Args[1].IsConst() || !e.Args[2].IsConst() || e.Args[1].IsNullConst() || e.Args[2].IsNullConst() {
		return nil, false, nil
	}
	lo, null, err := c.compileComparison(e, OpGe, e.Args[0], e.Args[1])
	if err != nil || null {
		return nil, false, err
	}
	hi, null, err := c.compileComparison(e, OpLe, e.Args[0], e.Args[2])
	if err != nil || null {
		return nil, false, err
	}
	if !lo.isConst || !hi.isConst || lo.l.typ() != hi.l.typ() || lo.op != OpGe || hi.op != OpLe {
		return nil, false, nil
	}
	switch lo.p {
	case pI32, pI64, pF64:
	default:
		return nil, false, nil
	}
	return &rangeSelector{x: lo.l, p: lo.p, lo: lo.c, hi: hi.c}, true, nil
}

func (s *rangeSelector) sel(b *vec.Batch, rows []int32) ([]int32, error) {
	x, err := s.x.eval(b, rowsOf(b, rows, &s.ident))
	if err != nil {
		return nil, err
	}
	r := liveRows(x, rows, b.N, &s.ident, &s.live)
	s.out = grow32(s.out, max(len(r), b.N))
	switch s.p {
	case pI32:
		return selRange(x.I32, int32(s.lo.Int), int32(s.hi.Int), r, b.N, s.out), nil
	case pI64:
		return selRange(x.I64, s.lo.Int, s.hi.Int, r, b.N, s.out), nil
	}
	return selRange(x.F64, s.lo.Float, s.hi.Float, r, b.N, s.out), nil
}

func compareBytes(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return cmpInt(len(a), len(b))
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// selStrConst keeps rows whose string compares to c as op says.
func selStrConst(op Op, x *vec.Vec, c []byte, rows []int32, out []int32) []int32 {
	out = out[:len(rows)]
	k := 0
	offs, data := x.Offsets, x.Bytes
	switch op {
	case OpEq, OpNe:
		want := op == OpEq
		for _, i := range rows {
			out[k] = i
			k += b2i((string(data[offs[i]:offs[i+1]]) == string(c)) == want)
		}
	default:
		for _, i := range rows {
			out[k] = i
			k += b2i(cmpHolds(op, compareBytes(data[offs[i]:offs[i+1]], c)))
		}
	}
	return out[:k]
}
