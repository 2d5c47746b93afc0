package expr

import (
	"bytes"
	"unicode/utf8"

	"github.com/colinkdb/colink/exec/vec"
)

// likeShape names the patterns selectRows tests with one library call per row.
type likeShape uint8

const (
	likeGeneral  likeShape = iota // anything else (match decides)
	likeExact                     // abc
	likePrefix                    // abc%
	likeSuffix                    // %abc
	likeContains                  // %abc%
)

// likeMatcher matches one LIKE pattern (backslash escapes the next character). The pattern
// is cut at its %s into segments of literal bytes and _s (one character each). A string
// matches when the first segment matches at its start, the last at its end, and the others
// in order in between, each at its leftmost place after the one before. Leftmost is exact
// (no backtracking needed): a segment covers a fixed number of characters, so in UTF-8
// text an earlier match also ends earlier and leaves the later segments more room.
type likeMatcher struct {
	segs  []likeSeg // (number of %s) + 1 segments; the first and last may be empty
	shape likeShape
	lit   []byte // the literal of the shapes other than likeGeneral
}

// likeSeg is the pattern between two %s.
type likeSeg struct {
	b     []byte // the bytes, with a placeholder at each _
	under []bool // under[k] when b[k] stands for a _ (nil: the segment has no _)
}

// compileLike parses a pattern with backslash as the escape character.
func compileLike(pat []byte) *likeMatcher {
	m := &likeMatcher{}
	var cur likeSeg
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch {
		case c == '\\' && i+1 < len(pat):
			i++
			cur.add(pat[i], false)
		case c == '%':
			m.segs = append(m.segs, cur)
			cur = likeSeg{}
		case c == '_':
			cur.add('_', true)
		default:
			cur.add(c, false)
		}
	}
	m.segs = append(m.segs, cur)
	// Runs of % make empty middle segments, which match anywhere.
	segs := m.segs[:1]
	for i, g := range m.segs[1:] {
		if len(g.b) > 0 || i == len(m.segs)-2 {
			segs = append(segs, g)
		}
	}
	m.segs = segs
	first, last := segs[0], segs[len(segs)-1]
	switch {
	case len(segs) == 1 && first.under == nil:
		m.shape, m.lit = likeExact, first.b
	case len(segs) == 2 && last.empty() && first.under == nil:
		m.shape, m.lit = likePrefix, first.b
	case len(segs) == 2 && first.empty() && last.under == nil:
		m.shape, m.lit = likeSuffix, last.b
	case len(segs) == 3 && first.empty() && last.empty() && segs[1].under == nil:
		m.shape, m.lit = likeContains, segs[1].b
	}
	return m
}

func (g *likeSeg) add(c byte, under bool) {
	if under && g.under == nil {
		g.under = make([]bool, len(g.b), len(g.b)+1)
	}
	g.b = append(g.b, c)
	if g.under != nil {
		g.under = append(g.under, under)
	}
}

func (g *likeSeg) empty() bool { return len(g.b) == 0 }

// prefixLen matches g at the start of s, returning the bytes it covers.
func (g *likeSeg) prefixLen(s []byte) (int, bool) {
	if g.under == nil {
		return len(g.b), bytes.HasPrefix(s, g.b)
	}
	i := 0
	for k, c := range g.b {
		switch {
		case i >= len(s):
			return 0, false
		case g.under[k]:
			_, w := utf8.DecodeRune(s[i:])
			i += w
		case s[i] != c:
			return 0, false
		default:
			i++
		}
	}
	return i, true
}

// suffixLen matches g at the end of s, returning the bytes it covers.
func (g *likeSeg) suffixLen(s []byte) (int, bool) {
	if g.under == nil {
		return len(g.b), bytes.HasSuffix(s, g.b)
	}
	j := len(s)
	for k := len(g.b) - 1; k >= 0; k-- {
		switch {
		case j == 0:
			return 0, false
		case g.under[k]:
			_, w := utf8.DecodeLastRune(s[:j])
			j -= w
		case s[j-1] != g.b[k]:
			return 0, false
		default:
			j--
		}
	}
	return len(s) - j, true
}

// indexEnd finds g's leftmost match in s and returns where it ends.
func (g *likeSeg) indexEnd(s []byte) (int, bool) {
	if g.under == nil {
		k := bytes.Index(s, g.b)
		return k + len(g.b), k >= 0
	}
	for at := 0; at < len(s); {
		if n, ok := g.prefixLen(s[at:]); ok {
			return at + n, true
		}
		if g.under[0] {
			_, w := utf8.DecodeRune(s[at:])
			at += w
			continue
		}
		// Skip to the next place the segment's first byte occurs.
		k := bytes.IndexByte(s[at+1:], g.b[0])
		if k < 0 {
			return 0, false
		}
		at += 1 + k
	}
	return 0, false
}

func (m *likeMatcher) match(s []byte) bool {
	segs := m.segs
	if first := &segs[0]; len(first.b) > 0 || len(segs) == 1 {
		n, ok := first.prefixLen(s)
		if !ok {
			return false
		}
		if len(segs) == 1 {
			return n == len(s)
		}
		s = s[n:]
	}
	last := len(segs) - 1
	if g := &segs[last]; len(g.b) > 0 {
		n, ok := g.suffixLen(s)
		if !ok {
			return false
		}
		s = s[:len(s)-n]
	}
	for k := 1; k < last; k++ {
		g := &segs[k]
		if g.under == nil { // the common case, inline
			at := bytes.Index(s, g.b)
			if at < 0 {
				return false
			}
			s = s[at+len(g.b):]
			continue
		}
		end, ok := g.indexEnd(s)
		if !ok {
			return false
		}
		s = s[end:]
	}
	return true
}

// likeParts compiles x LIKE pattern; null reports a NULL pattern (always NULL).
func (c *compiler) likeParts(e *Expr) (node, *likeMatcher, bool, error) {
	if _, err := TypeOf(e, c.input); err != nil {
		return nil, nil, false, err
	}
	if !e.Args[1].IsConst() {
		return nil, nil, false, errorf(e, "the pattern of like is not a constant")
	}
	pat := e.Args[1].Value
	if pat.Null {
		return nil, nil, true, nil
	}
	x, err := c.compile(e.Args[0])
	if err != nil {
		return nil, nil, false, err
	}
	return x, compileLike([]byte(pat.Str)), false, nil
}

func (c *compiler) compileLike(e *Expr) (node, error) {
	if !e.Args[1].IsConst() {
		if _, err := TypeOf(e, c.input); err != nil {
			return nil, err
		}
		x, err := c.compile(e.Args[0])
		if err != nil {
			return nil, err
		}
		pat, err := c.compile(e.Args[1])
		if err != nil {
			return nil, err
		}
		return &likeRowsNode{x: x, pat: pat}, nil
	}
	x, m, null, err := c.likeParts(e)
	if err != nil {
		return nil, err
	}
	if null {
		return newConst(vec.NullDatum(vec.BoolType)), nil
	}
	return &likeNode{boolUnary: boolUnary{x: x}, m: m}, nil
}

// likeNode is x LIKE constant.
type likeNode struct {
	boolUnary
	m    *likeMatcher
	live []int32
}

func (n *likeNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	x, out, err := n.start(b, rows)
	if err != nil {
		return nil, err
	}
	live := nullRows(out, rows, b.N, &n.live, x)
	for _, i := range live {
		out.Bool[i] = n.m.match(x.Bytes[x.Offsets[i]:x.Offsets[i+1]])
	}
	return out, nil
}

// likeRowsNode is x LIKE pattern with a pattern that varies by row (n_name LIKE
// concat(n_name, '%')). A row's pattern is compiled unless it equals the previous row's.
type likeRowsNode struct {
	x, pat node
	m      *likeMatcher
	last   []byte // the pattern m was compiled from
	out    vec.Vec
	live   []int32
}

func (n *likeRowsNode) typ() vec.Type    { return vec.BoolType }
func (n *likeRowsNode) children() []node { return []node{n.x, n.pat} }

func (n *likeRowsNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	x, err := n.x.eval(b, rows)
	if err != nil {
		return nil, err
	}
	pat, err := n.pat.eval(b, rows)
	if err != nil {
		return nil, err
	}
	out := &n.out
	out.Prepare(vec.BoolType, b.N)
	live := nullRows(out, rows, b.N, &n.live, x, pat)
	for _, i := range live {
		p := pat.Bytes[pat.Offsets[i]:pat.Offsets[i+1]]
		if n.m == nil || !bytes.Equal(p, n.last) {
			n.m = compileLike(p)
			n.last = append(n.last[:0], p...)
		}
		out.Bool[i] = n.m.match(x.Bytes[x.Offsets[i]:x.Offsets[i+1]])
	}
	return out, nil
}

// selectRows appends to dst the rows whose string matches (or, with neg, does not match).
func (m *likeMatcher) selectRows(x *vec.Vec, rows []int32, neg bool, dst []int32) []int32 {
	dst = dst[:len(rows)]
	k := 0
	want := !neg
	offs, data := x.Offsets, x.Bytes
	switch m.shape {
	case likeExact:
		for _, i := range rows {
			dst[k] = i
			k += b2i(bytes.Equal(data[offs[i]:offs[i+1]], m.lit) == want)
		}
	case likePrefix:
		for _, i := range rows {
			dst[k] = i
			k += b2i(bytes.HasPrefix(data[offs[i]:offs[i+1]], m.lit) == want)
		}
	case likeSuffix:
		for _, i := range rows {
			dst[k] = i
			k += b2i(bytes.HasSuffix(data[offs[i]:offs[i+1]], m.lit) == want)
		}
	case likeContains:
		for _, i := range rows {
			dst[k] = i
			k += b2i(bytes.Contains(data[offs[i]:offs[i+1]], m.lit) == want)
		}
	default:
		for _, i := range rows {
			dst[k] = i
			k += b2i(m.match(data[offs[i]:offs[i+1]]) == want)
		}
	}
	return dst[:k]
}
