package expr

import (
	"bytes"
	"unicode/utf8"

	"github.com/colinkdb/colink/exec/vec"
)

type likeKind uint8

const (
	likeExact    likeKind = iota // no wildcard
	likePrefix                   // abc%
	likeSuffix                   // %abc
	likeContains                 // %abc%
	likeAny                      // % alone (or %%...)
	likeSeq                      // %-only pattern with several literal parts, e.g. a%b%c
	likeGeneral                  // anything with _
)

// likeMatcher matches one LIKE pattern. Patterns made only of literals and % run as
// prefix/suffix/substring searches; patterns with _ use a backtracking matcher over
// UTF-8 characters.
type likeMatcher struct {
	kind     likeKind
	lit      []byte   // exact, prefix, suffix, contains
	parts    [][]byte // seq: literal parts between %s
	anchorL  bool     // seq: pattern does not start with %
	anchorR  bool     // seq: pattern does not end with %
	tokens   []likeTok
	hasUnder bool
}

type likeTok struct {
	kind byte // 'l' literal byte, '_' one character, '%' any sequence
	b    byte
}

// compileLike parses a pattern with backslash as the escape character.
func compileLike(pat []byte) *likeMatcher {
	m := &likeMatcher{}
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch {
		case c == '\\' && i+1 < len(pat):
			i++
			m.tokens = append(m.tokens, likeTok{kind: 'l', b: pat[i]})
		case c == '%':
			if n := len(m.tokens); n == 0 || m.tokens[n-1].kind != '%' {
				m.tokens = append(m.tokens, likeTok{kind: '%'})
			}
		case c == '_':
			m.tokens = append(m.tokens, likeTok{kind: '_'})
			m.hasUnder = true
		default:
			m.tokens = append(m.tokens, likeTok{kind: 'l', b: c})
		}
	}
	if m.hasUnder {
		m.kind = likeGeneral
		return m
	}
	// Split the literal runs at %.
	var parts [][]byte
	var cur []byte
	for _, t := range m.tokens {
		if t.kind == '%' {
			parts = append(parts, cur)
			cur = nil
			continue
		}
		cur = append(cur, t.b)
	}
	parts = append(parts, cur)
	// parts has (number of %) + 1 entries; the first and last may be empty.
	switch {
	case len(parts) == 1:
		m.kind, m.lit = likeExact, parts[0]
	case len(parts) == 2 && len(parts[0]) == 0 && len(parts[1]) == 0:
		m.kind = likeAny
	case len(parts) == 2 && len(parts[1]) == 0:
		m.kind, m.lit = likePrefix, parts[0]
	case len(parts) == 2 && len(parts[0]) == 0:
		m.kind, m.lit = likeSuffix, parts[1]
	case len(parts) == 3 && len(parts[0]) == 0 && len(parts[2]) == 0:
		m.kind, m.lit = likeContains, parts[1]
	default:
		m.kind = likeSeq
		m.anchorL = len(parts[0]) > 0
		m.anchorR = len(parts[len(parts)-1]) > 0
		m.parts = parts
	}
	return m
}

func (m *likeMatcher) match(s []byte) bool {
	switch m.kind {
	case likeExact:
		return bytes.Equal(s, m.lit)
	case likePrefix:
		return bytes.HasPrefix(s, m.lit)
	case likeSuffix:
		return bytes.HasSuffix(s, m.lit)
	case likeContains:
		return bytes.Contains(s, m.lit)
	case likeAny:
		return true
	case likeSeq:
		return m.matchSeq(s)
	}
	return matchTokens(m.tokens, s)
}

// matchSeq matches lit0 % lit1 % ... % litN: greedy leftmost search is exact for patterns
// whose only wildcard is %.
func (m *likeMatcher) matchSeq(s []byte) bool {
	parts := m.parts
	if m.anchorL {
		if !bytes.HasPrefix(s, parts[0]) {
			return false
		}
		s = s[len(parts[0]):]
	}
	last := len(parts) - 1
	if m.anchorR {
		if !bytes.HasSuffix(s, parts[last]) {
			return false
		}
		s = s[:len(s)-len(parts[last])]
	}
	for _, p := range parts[1:last] {
		if len(p) == 0 {
			continue
		}
		k := bytes.Index(s, p)
		if k < 0 {
			return false
		}
		s = s[k+len(p):]
	}
	return true
}

// matchTokens is the general matcher: on a mismatch it backtracks to the last %, letting it
// absorb one more character.
func matchTokens(toks []likeTok, s []byte) bool {
	ti, si := 0, 0
	starT, starS := -1, 0
	for si < len(s) {
		if ti < len(toks) {
			switch t := toks[ti]; t.kind {
			case '%':
				starT, starS = ti, si
				ti++
				continue
			case '_':
				_, w := utf8.DecodeRune(s[si:])
				si += w
				ti++
				continue
			default:
				if s[si] == t.b {
					si++
					ti++
					continue
				}
			}
		}
		if starT < 0 {
			return false
		}
		_, w := utf8.DecodeRune(s[starS:])
		starS += w
		ti, si = starT+1, starS
	}
	for ti < len(toks) && toks[ti].kind == '%' {
		ti++
	}
	return ti == len(toks)
}

// likeParts compiles x LIKE pattern; null reports a NULL pattern (always NULL).
func (c *compiler) likeParts(e *Expr) (node, *likeMatcher, bool, error) {
	if _, err := TypeOf(e, c.input); err != nil {
		return nil, nil, false, err
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
	x, m, null, err := c.likeParts(e)
	if err != nil {
		return nil, err
	}
	if null {
		return newConst(vec.NullDatum(vec.BoolType)), nil
	}
	return &likeNode{x: x, m: m}, nil
}

// likeNode is x LIKE constant.
type likeNode struct {
	x    node
	m    *likeMatcher
	out  vec.Vec
	live []int32
}

func (n *likeNode) typ() vec.Type    { return vec.BoolType }
func (n *likeNode) children() []node { return []node{n.x} }

func (n *likeNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	x, err := n.x.eval(b, rows)
	if err != nil {
		return nil, err
	}
	out := &n.out
	out.Prepare(vec.BoolType, b.N)
	live := nullRows(out, rows, b.N, &n.live, x)
	for _, i := range live {
		out.Bool[i] = n.m.match(x.Bytes[x.Offsets[i]:x.Offsets[i+1]])
	}
	return out, nil
}

// selectLike appends to dst the rows whose string matches (or, with neg, does not match).
func (m *likeMatcher) selectRows(x *vec.Vec, rows []int32, neg bool, dst []int32) []int32 {
	dst = dst[:len(rows)]
	k := 0
	want := !neg
	offs, data := x.Offsets, x.Bytes
	switch m.kind {
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

// substrNode is SUBSTRING(s, pos[, len]) with MySQL's rules: positions count characters
// from 1; a negative pos counts from the end; pos 0, a position past the end or len < 1
// give ”.
type substrNode struct {
	s, pos, ln node
	out        vec.Vec
	live       []int32
}

func (n *substrNode) typ() vec.Type { return vec.StringType }
func (n *substrNode) children() []node {
	if n.ln == nil {
		return []node{n.s, n.pos}
	}
	return []node{n.s, n.pos, n.ln}
}

func (c *compiler) compileSubstring(e *Expr) (node, error) {
	if _, err := TypeOf(e, c.input); err != nil {
		return nil, err
	}
	n := &substrNode{}
	var err error
	if n.s, err = c.compile(e.Args[0]); err != nil {
		return nil, err
	}
	if n.pos, err = c.compile(e.Args[1]); err != nil {
		return nil, err
	}
	n.pos = convert(n.pos, vec.Int64Type)
	if len(e.Args) == 3 {
		if n.ln, err = c.compile(e.Args[2]); err != nil {
			return nil, err
		}
		n.ln = convert(n.ln, vec.Int64Type)
	}
	return n, nil
}

func (n *substrNode) eval(b *vec.Batch, rows []int32) (*vec.Vec, error) {
	s, err := n.s.eval(b, rows)
	if err != nil {
		return nil, err
	}
	p, err := n.pos.eval(b, rows)
	if err != nil {
		return nil, err
	}
	ins := []*vec.Vec{s, p}
	var l *vec.Vec
	if n.ln != nil {
		if l, err = n.ln.eval(b, rows); err != nil {
			return nil, err
		}
		ins = append(ins, l)
	}
	out := &n.out
	out.Prepare(vec.StringType, b.N)
	live := nullRows(out, rows, b.N, &n.live, ins...)
	var w strWriter
	w.begin(out)
	for _, i := range live {
		str := s.String(int(i))
		length := int64(-1) // no length: to the end
		if l != nil {
			if length = l.I64[i]; length < 1 {
				w.put(i, nil)
				continue
			}
		}
		w.put(i, substring(str, p.I64[i], length))
	}
	w.finish(b.N)
	return out, nil
}

// substring applies MySQL's SUBSTRING to UTF-8 text; length < 0 means "to the end".
// pos and length may be any int64: 0 <= start < n holds before anything is added to start.
func substring(s []byte, pos, length int64) []byte {
	if pos == 0 || length == 0 {
		return nil
	}
	ascii := true
	for _, c := range s {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		n := int64(len(s))
		start := pos - 1
		if pos < 0 {
			start = n + pos
		}
		if start < 0 || start >= n {
			return nil
		}
		end := n
		if length >= 0 && length < n-start { // not start+length: it may overflow
			end = start + length
		}
		return s[start:end]
	}
	n := int64(utf8.RuneCount(s))
	start := pos - 1
	if pos < 0 {
		start = n + pos
	}
	if start < 0 || start >= n {
		return nil
	}
	count := n - start
	if length >= 0 && length < count {
		count = length
	}
	// Skip start characters, then take count.
	b := 0
	for k := int64(0); k < start; k++ {
		_, w := utf8.DecodeRune(s[b:])
		b += w
	}
	e := b
	for k := int64(0); k < count; k++ {
		_, w := utf8.DecodeRune(s[e:])
		e += w
	}
	return s[b:e]
}
