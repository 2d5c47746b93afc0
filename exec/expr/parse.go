package expr

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/colinkdb/colink/exec/fn"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/textparse"
)

// Parse reads the s-expression syntax that Expr.String prints. Column references are #i,
// or a name from names. It exists for tests, tools and debugging; the planner builds Exprs
// directly.
func Parse(s string, names []string) (*Expr, error) {
	p := &parser{src: s, names: names}
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.src) {
		return nil, fmt.Errorf("expr: trailing text %q", p.src[p.pos:])
	}
	return e, nil
}

// MustParse is Parse for constants in tests; it panics on error.
func MustParse(s string, names []string) *Expr {
	e, err := Parse(s, names)
	if err != nil {
		panic(err)
	}
	return e
}

type parser struct {
	src   string
	pos   int
	names []string
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) && strings.ContainsRune(" \t\n\r", rune(p.src[p.pos])) {
		p.pos++
	}
}

// atom reads a token up to whitespace or a parenthesis; a quoted part ('...', with ”
// for a quote) and a decimal(p,s) type spelling are read whole.
func (p *parser) atom() (string, error) {
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '\'':
			p.pos++
			for {
				if p.pos >= len(p.src) {
					return "", fmt.Errorf("expr: unterminated string at %d", start)
				}
				if p.src[p.pos] == '\'' {
					if p.pos+1 < len(p.src) && p.src[p.pos+1] == '\'' {
						p.pos += 2
						continue
					}
					p.pos++
					break
				}
				p.pos++
			}
		case c == '(' && strings.HasSuffix(strings.ToLower(p.src[start:p.pos]), "decimal"):
			end := strings.IndexByte(p.src[p.pos:], ')')
			if end < 0 {
				return "", fmt.Errorf("expr: unterminated type at %d", start)
			}
			p.pos += end + 1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(' || c == ')':
			return p.src[start:p.pos], nil
		default:
			p.pos++
		}
	}
	return p.src[start:p.pos], nil
}

func (p *parser) expr() (*Expr, error) {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return nil, fmt.Errorf("expr: unexpected end of input")
	}
	if p.src[p.pos] == ')' {
		return nil, fmt.Errorf("expr: unexpected ')' at %d", p.pos)
	}
	if p.src[p.pos] != '(' {
		tok, err := p.atom()
		if err != nil {
			return nil, err
		}
		return p.leaf(tok)
	}
	p.pos++
	p.skipSpace()
	opTok, err := p.atom()
	if err != nil {
		return nil, err
	}
	e := &Expr{Op: Op(strings.ToLower(opTok))}
	var toks []string // trailing bare words: units and types
	for {
		p.skipSpace()
		if p.pos >= len(p.src) {
			return nil, fmt.Errorf("expr: missing ')' for (%s", opTok)
		}
		if p.src[p.pos] == ')' {
			p.pos++
			break
		}
		// Units and cast types are bare words in fixed positions.
		save := p.pos
		if p.src[p.pos] != '(' {
			tok, err := p.atom()
			if err != nil {
				return nil, err
			}
			switch {
			case fn.IsFamily(string(e.Op)) && len(e.Args) == 0 && e.Unit == "":
				e.Unit = strings.ToLower(tok)
				continue
			case (e.Op == OpDateAdd || e.Op == OpDateSub) && len(e.Args) == 2:
				e.Unit = strings.ToLower(tok)
				continue
			case e.Op == OpCast && len(e.Args) == 1:
				t, err := vec.ParseType(tok)
				if err != nil {
					return nil, err
				}
				e.Type = t
				toks = append(toks, tok)
				continue
			}
			p.pos = save
		}
		a, err := p.expr()
		if err != nil {
			return nil, err
		}
		e.Args = append(e.Args, a)
	}
	if e.Op == OpCast && len(toks) == 0 {
		return nil, fmt.Errorf("expr: cast without a type")
	}
	return e, nil
}

func (p *parser) leaf(tok string) (*Expr, error) {
	low := strings.ToLower(tok)
	switch {
	case strings.HasPrefix(tok, "#"):
		i, err := strconv.Atoi(tok[1:])
		if err != nil || i < 0 {
			return nil, fmt.Errorf("expr: bad column reference %q", tok)
		}
		return ColRef(i), nil
	case low == "true" || low == "false":
		return Const(vec.BoolDatum(low == "true")), nil
	case strings.HasPrefix(tok, "'"):
		s, rest, err := unquote(tok)
		if err != nil {
			return nil, err
		}
		if rest != "" {
			return nil, fmt.Errorf("expr: text after string literal: %q", tok)
		}
		return Const(vec.StringDatum(s)), nil
	case strings.HasPrefix(low, "date'"):
		s, rest, err := unquote(tok[4:])
		if err != nil || rest != "" {
			return nil, fmt.Errorf("expr: bad date literal %q", tok)
		}
		d, err := vec.ParseDate([]byte(s))
		if err != nil {
			return nil, err
		}
		return Const(vec.DateDatum(d)), nil
	case strings.HasPrefix(low, "datetime'"):
		s, rest, err := unquote(tok[8:])
		if err != nil || rest != "" {
			return nil, fmt.Errorf("expr: bad datetime literal %q", tok)
		}
		us, err := vec.ParseDatetime([]byte(s))
		if err != nil {
			return nil, err
		}
		return Const(vec.DatetimeDatum(us)), nil
	}
	if val, typ, ok := strings.Cut(tok, ":"); ok {
		t, err := vec.ParseType(typ)
		if err != nil {
			return nil, err
		}
		if strings.ToLower(val) == "null" {
			return Const(vec.NullDatum(t)), nil
		}
		if t.ID == vec.String {
			s, _, err := unquote(val)
			if err != nil {
				return nil, err
			}
			val = s
		}
		d, err := vec.ParseDatum(t, val)
		if err != nil {
			return nil, err
		}
		return Const(d), nil
	}
	if c := tok[0]; c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9') {
		if !strings.ContainsAny(tok, ".eE") {
			v, err := textparse.Int([]byte(tok), textparse.NoSpace)
			if err == nil {
				return Const(vec.Int64Datum(v)), nil
			}
		}
		v, t, err := vec.ParseDecimal(tok)
		if err != nil {
			return nil, err
		}
		return Const(vec.DecimalDatum(v, t.Precision, t.Scale)), nil
	}
	for i, n := range p.names {
		if strings.EqualFold(n, tok) {
			return ColRef(i), nil
		}
	}
	return nil, fmt.Errorf("expr: unknown name %q", tok)
}

// unquote reads a '...' literal (” is a quote) at the start of s.
func unquote(s string) (string, string, error) {
	if !strings.HasPrefix(s, "'") {
		return "", "", fmt.Errorf("expr: %q is not quoted", s)
	}
	var sb strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == '\'' {
			if i+1 < len(s) && s[i+1] == '\'' {
				sb.WriteByte('\'')
				i++
				continue
			}
			return sb.String(), s[i+1:], nil
		}
		sb.WriteByte(s[i])
	}
	return "", "", fmt.Errorf("expr: unterminated string %q", s)
}
