package expr

import (
	"slices"

	"github.com/colinkdb/colink/exec/vec"
)

// inSet is a constant IN list converted to the probe's type.
type inSet struct {
	p       payload
	hasNull bool
	i32     []int32
	i64     []int64
	m32     map[int32]struct{}
	m64     map[int64]struct{}
	mf      map[float64]struct{}
	m128    map[vec.Int128]struct{}
	mstr    map[string]struct{}
	bools   [2]bool
}

// smallIn is the list length up to which a linear scan beats a map lookup.
const smallIn = 8

// compileInParts compiles x IN (list): the probe converted to the common type and the set,
// or, when some list element is not a constant, ok=false (the caller rewrites to ORs).
func (c *compiler) compileInParts(e *Expr) (x node, set *inSet, ok bool, err error) {
	if _, err := TypeOf(e, c.input); err != nil {
		return nil, nil, false, err
	}
	for _, a := range e.Args[1:] {
		if !a.IsConst() {
			return nil, nil, false, nil
		}
	}
	tx, _ := TypeOf(e.Args[0], c.input)
	ct := tx
	for _, a := range e.Args[1:] {
		if a.IsNullConst() {
			continue
		}
		t, err := compareType(e, e.Args[0], a, ct, a.Value.Type)
		if err != nil {
			return nil, nil, false, err
		}
		ct = t
	}
	px, err := c.compile(e.Args[0])
	if err != nil {
		return nil, nil, false, err
	}
	x = convert(px, ct)
	set = &inSet{p: payloadOf(ct)}
	for _, a := range e.Args[1:] {
		if a.IsNullConst() {
			set.hasNull = true
			continue
		}
		d, okc := constOf(convert(newConst(a.Value), ct))
		if !okc {
			return nil, nil, false, errorf(e, "list value %s does not convert to %s", FormatLiteral(a.Value), ct)
		}
		if d.Null {
			set.hasNull = true
			continue
		}
		set.add(d)
	}
	set.finish()
	return x, set, true, nil
}

func (s *inSet) add(d vec.Datum) {
	switch s.p {
	case pI32:
		s.i32 = append(s.i32, int32(d.Int))
	case pI64:
		s.i64 = append(s.i64, d.Int)
	case pF64:
		if s.mf == nil {
			s.mf = map[float64]struct{}{}
		}
		s.mf[d.Float] = struct{}{}
	case pD128:
		if s.m128 == nil {
			s.m128 = map[vec.Int128]struct{}{}
		}
		s.m128[d.Decimal()] = struct{}{}
	case pStr:
		if s.mstr == nil {
			s.mstr = map[string]struct{}{}
		}
		s.mstr[d.Str] = struct{}{}
	case pBool:
		s.bools[d.Int] = true
	}
}

func (s *inSet) finish() {
	s.i32 = slices.Compact(slices.Sorted(slices.Values(s.i32)))
	s.i64 = slices.Compact(slices.Sorted(slices.Values(s.i64)))
	if len(s.i32) > smallIn {
		s.m32 = make(map[int32]struct{}, len(s.i32))
		for _, v := range s.i32 {
			s.m32[v] = struct{}{}
		}
	}
	if len(s.i64) > smallIn {
		s.m64 = make(map[int64]struct{}, len(s.i64))
		for _, v := range s.i64 {
			s.m64[v] = struct{}{}
		}
	}
}

// member writes, for each row, whether x's value is in the set (rows must be non-NULL).
func (s *inSet) member(x *vec.Vec, rows []int32, o []bool) {
	switch s.p {
	case pI32:
		if s.m32 != nil {
			for _, i := range rows {
				_, o[i] = s.m32[x.I32[i]]
			}
			return
		}
		for _, i := range rows {
			v, hit := x.I32[i], false
			for _, c := range s.i32 {
				hit = hit || v == c
			}
			o[i] = hit
		}
	case pI64:
		if s.m64 != nil {
			for _, i := range rows {
				_, o[i] = s.m64[x.I64[i]]
			}
			return
		}
		for _, i := range rows {
			v, hit := x.I64[i], false
			for _, c := range s.i64 {
				hit = hit || v == c
			}
			o[i] = hit
		}
	case pF64:
		for _, i := range rows {
			_, o[i] = s.mf[x.F64[i]]
		}
	case pD128:
		for _, i := range rows {
			_, o[i] = s.m128[x.D128[i]]
		}
	case pStr:
		for _, i := range rows {
			// The string conversion in a map index does not allocate.
			_, o[i] = s.mstr[string(x.String(int(i)))]
		}
	case pBool:
		for _, i := range rows {
			o[i] = s.bools[b2i(x.Bool[i])]
		}
	}
}

// inAsOr rewrites x IN (a, b, ...) as x = a OR x = b OR ... (for non-constant lists).
func inAsOr(e *Expr) *Expr {
	if len(e.Args) == 2 {
		return Call(OpEq, e.Args[0], e.Args[1])
	}
	or := &Expr{Op: OpOr}
	for _, a := range e.Args[1:] {
		or.Args = append(or.Args, Call(OpEq, e.Args[0], a))
	}
	return or
}

func (c *compiler) compileIn(e *Expr) (node, error) {
	x, set, ok, err := c.compileInParts(e)
	if err != nil {
		return nil, err
	}
	if !ok {
		return c.compile(inAsOr(e))
	}
	return &inNode{boolUnary: boolUnary{x: x}, set: set}, nil
}

// inNode is x IN (constants).
type inNode struct {
	boolUnary
	set  *inSet
	live []int32
}

func (n *inNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	x, out, err := n.start(b, rows)
	if err != nil {
		return nil, err
	}
	live := nullRows(out, rows, b.N, &n.live, x)
	n.set.member(x, live, out.Bool)
	if n.set.hasNull {
		for _, i := range live {
			if !out.Bool[i] {
				out.SetNull(b.N, i)
			}
		}
	}
	return out, nil
}
