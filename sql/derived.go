package sql

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/colinkdb/colink/sql/sqlerr"
)

// Derived-table column lists, `(SELECT …) AS t (a, b)`, are standard SQL (MySQL 8.0 has
// them, TPC-H's Q13 uses one) but TiDB's parser rejects them. They are handled here, around
// the parser, in one place: before parsing, each list is cut from the text and the table's
// alias replaced by a marker; after parsing, the marked derived table gets its alias back
// and its select list the listed names, as if each item had been written `… AS name`.

// derivedMarker prefixes the placeholder alias of a derived table whose column list was cut.
const derivedMarker = "colink_derived_columns_"

// derivedColumns is one cut column list: the derived table's alias and the names.
type derivedColumns struct {
	alias string
	names []string
}

// sqlToken is a lexical token of the text: what liftDerivedColumns needs to tell apart.
type sqlToken struct {
	kind       byte // 'i' identifier or keyword, 'q' quoted identifier, 's' string, 'p' punctuation, 'c' comment or space
	start, end int
}

// tokenize splits text into tokens, keeping quotes and comments whole so that nothing in
// them is taken for syntax.
func tokenize(text string) []sqlToken {
	var out []sqlToken
	for i := 0; i < len(text); {
		c := text[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			for i < len(text) && strings.IndexByte(" \t\n\r", text[i]) >= 0 {
				i++
			}
			out = append(out, sqlToken{'c', start, i})
		case c == '-' && strings.HasPrefix(text[i:], "-- "), c == '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			out = append(out, sqlToken{'c', start, i})
		case c == '/' && strings.HasPrefix(text[i:], "/*") && !strings.HasPrefix(text[i:], "/*!"):
			if e := strings.Index(text[i+2:], "*/"); e >= 0 {
				i += 2 + e + 2
			} else {
				i = len(text)
			}
			out = append(out, sqlToken{'c', start, i})
		case c == '\'' || c == '"' || c == '`':
			i++
			for i < len(text) {
				if text[i] == '\\' && c != '`' {
					i += 2
					continue
				}
				if text[i] == c {
					if i+1 < len(text) && text[i+1] == c { // a doubled quote
						i += 2
						continue
					}
					i++
					break
				}
				i++
			}
			kind := byte('s')
			if c == '`' {
				kind = 'q'
			}
			out = append(out, sqlToken{kind, start, min(i, len(text))})
		case c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80:
			for i < len(text) {
				d := text[i]
				if d == '_' || d == '$' || d >= 'a' && d <= 'z' || d >= 'A' && d <= 'Z' || d >= '0' && d <= '9' || d >= 0x80 {
					i++
					continue
				}
				break
			}
			out = append(out, sqlToken{'i', start, i})
		default:
			i++
			out = append(out, sqlToken{'p', start, i})
		}
	}
	return out
}

// liftDerivedColumns cuts every `) AS alias (name, …)` column list from text, giving the
// alias a marker, and returns the rewritten text and the lists in order of their markers.
func liftDerivedColumns(text string) (string, []derivedColumns) {
	toks := tokenize(text)
	var code []int // indexes of the tokens that are not comments or space
	for i, t := range toks {
		if t.kind != 'c' {
			code = append(code, i)
		}
	}
	tok := func(k int) string { t := toks[code[k]]; return text[t.start:t.end] }
	isIdent := func(k int) bool { t := toks[code[k]]; return t.kind == 'i' || t.kind == 'q' }
	var b strings.Builder
	var lists []derivedColumns
	last := 0 // text written so far
	for k := 0; k+4 < len(code); k++ {
		if tok(k) != ")" || !strings.EqualFold(tok(k+1), "as") || !isIdent(k+2) || tok(k+3) != "(" {
			continue
		}
		var names []string
		j := k + 4
		ok := false
		for j < len(code) && isIdent(j) {
			names = append(names, unquote(tok(j)))
			j++
			if j < len(code) && tok(j) == ")" {
				ok = true
				break
			}
			if j >= len(code) || tok(j) != "," {
				break
			}
			j++
		}
		if !ok {
			continue
		}
		aliasTok := toks[code[k+2]]
		b.WriteString(text[last:aliasTok.start])
		b.WriteString(derivedMarker)
		fmt.Fprintf(&b, "%d", len(lists))
		last = toks[code[j]].end // past the list's ")"
		lists = append(lists, derivedColumns{alias: unquote(tok(k + 2)), names: names})
		k = j
	}
	if lists == nil {
		return text, nil
	}
	b.WriteString(text[last:])
	return b.String(), lists
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' {
		return strings.ReplaceAll(s[1:len(s)-1], "``", "`")
	}
	return s
}

// applyDerivedColumns gives each marked derived table of the statements its alias back and
// its select list the listed names.
func applyDerivedColumns(nodes []ast.StmtNode, lists []derivedColumns) error {
	v := &derivedVisitor{lists: lists, seen: make([]bool, len(lists))}
	for _, n := range nodes {
		n.Accept(v)
		if v.err != nil {
			return v.err
		}
	}
	for i, s := range v.seen {
		if !s {
			return sqlerr.Unsupported(fmt.Sprintf("a column list after %s that does not follow a derived table", lists[i].alias))
		}
	}
	return nil
}

type derivedVisitor struct {
	lists []derivedColumns
	seen  []bool
	err   error
}

func (v *derivedVisitor) Enter(n ast.Node) (ast.Node, bool) {
	ts, ok := n.(*ast.TableSource)
	if !ok || v.err != nil || !strings.HasPrefix(ts.AsName.L, derivedMarker) {
		return n, v.err != nil
	}
	var k int
	if _, err := fmt.Sscanf(ts.AsName.L[len(derivedMarker):], "%d", &k); err != nil || k < 0 || k >= len(v.lists) {
		return n, false
	}
	d := v.lists[k]
	v.seen[k] = true
	ts.AsName = ast.NewCIStr(d.alias)
	sel, ok := ts.Source.(*ast.SelectStmt)
	if !ok {
		v.err = sqlerr.Unsupported("a column list on a derived table that is not a plain SELECT")
		return n, true
	}
	fields := sel.Fields.Fields
	for _, f := range fields {
		if f.WildCard != nil {
			v.err = sqlerr.Unsupported("a column list on a derived table whose SELECT list has *")
			return n, true
		}
	}
	if len(fields) != len(d.names) {
		v.err = sqlerr.New(sqlerr.ErViewWrongList,
			"In definition of view, derived table or common table expression, SELECT list and column names list have different column counts")
		return n, true
	}
	for i, f := range fields {
		f.AsName = ast.NewCIStr(d.names[i])
	}
	return n, false
}

func (v *derivedVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, v.err == nil }
