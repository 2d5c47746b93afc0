package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// kind is the SQL type family of a generated expression. The generator only combines
// expressions whose meaning MySQL (colink) and DuckDB agree on, so a kind is what both
// engines would infer, not a full type.
type kind uint8

const (
	kInt kind = iota
	kDecimal
	kDouble
	kDate
	kString
	kBool
)

func (k kind) String() string {
	return [...]string{"int", "decimal", "double", "date", "string", "bool"}[k]
}

// numeric reports whether k is a number.
func (k kind) numeric() bool { return k == kInt || k == kDecimal || k == kDouble }

// dialect is the engine a query is rendered for.
type dialect uint8

const (
	mysqlDialect  dialect = iota // colink: MySQL's syntax and semantics
	duckdbDialect                // DuckDB
)

// expr is a node of a generated expression. Every node renders in both dialects with the
// same meaning; children lets the reducer replace a node by one of its children.
type expr interface {
	kind() kind
	render(d dialect, b *strings.Builder)
	children() []expr
	withChildren(c []expr) expr
}

// colRef is a column of a table or derived table in scope, qual.name, or (without qual) an
// output column's alias.
type colRef struct {
	qual, name string
	k          kind
}

func (c *colRef) kind() kind { return c.k }
func (c *colRef) render(_ dialect, b *strings.Builder) {
	if c.qual != "" {
		b.WriteString(c.qual)
		b.WriteByte('.')
	}
	b.WriteString(c.name)
}
func (c *colRef) children() []expr         { return nil }
func (c *colRef) withChildren([]expr) expr { return c }

// lit is a literal, written the same in both dialects (DATE 'yyyy-mm-dd', 'text', 12,
// 0.05, 2e0, NULL).
type lit struct {
	text string
	k    kind
}

func (l *lit) kind() kind                           { return l.k }
func (l *lit) render(_ dialect, b *strings.Builder) { b.WriteString(l.text) }
func (l *lit) children() []expr                     { return nil }
func (l *lit) withChildren([]expr) expr             { return l }

// op is an operator or function whose spelling may differ by dialect: fmt is a template
// with %[1]s… for the arguments, duck (if not empty) DuckDB's template.
type op struct {
	name      string // for the shape statistics and the reducer's messages
	mysql     string
	duck      string
	args      []expr
	k         kind
	aggregate bool
}

func (o *op) kind() kind { return o.k }
func (o *op) render(d dialect, b *strings.Builder) {
	tmpl := o.mysql
	if d == duckdbDialect && o.duck != "" {
		tmpl = o.duck
	}
	args := make([]any, len(o.args))
	for i, a := range o.args {
		var sb strings.Builder
		a.render(d, &sb)
		args[i] = sb.String()
	}
	fmt.Fprintf(b, tmpl, args...)
}
func (o *op) children() []expr { return o.args }
func (o *op) withChildren(c []expr) expr {
	n := *o
	n.args = c
	return &n
}

// caseExpr is CASE WHEN c1 THEN v1 … [ELSE e] END; without ELSE it is NULL when no WHEN
// holds, the NULL-producing shape of issue 16.
type caseExpr struct {
	whens []expr // conditions and values, alternating
	els   expr   // nil: no ELSE
	k     kind
}

func (c *caseExpr) kind() kind { return c.k }
func (c *caseExpr) render(d dialect, b *strings.Builder) {
	b.WriteString("case")
	for i := 0; i < len(c.whens); i += 2 {
		b.WriteString(" when ")
		c.whens[i].render(d, b)
		b.WriteString(" then ")
		c.whens[i+1].render(d, b)
	}
	if c.els != nil {
		b.WriteString(" else ")
		c.els.render(d, b)
	}
	b.WriteString(" end")
}
func (c *caseExpr) children() []expr {
	out := append([]expr(nil), c.whens...)
	if c.els != nil {
		out = append(out, c.els)
	}
	return out
}
func (c *caseExpr) withChildren(ch []expr) expr {
	n := *c
	n.whens = ch[:len(c.whens)]
	if c.els != nil {
		n.els = ch[len(c.whens)]
	}
	return &n
}

// subquery is a subquery used as an expression: EXISTS, [NOT] IN, or a scalar.
type subquery struct {
	form string // "exists", "not exists", "in", "not in", "scalar"
	lhs  expr   // the IN operand
	q    *query
	k    kind
}

func (s *subquery) kind() kind { return s.k }
func (s *subquery) render(d dialect, b *strings.Builder) {
	// Parenthesised whole: NOT binds looser than IS in MySQL, so "not exists (…) is null"
	// would be NOT ((EXISTS …) IS NULL).
	b.WriteString("(")
	switch s.form {
	case "exists", "not exists":
		b.WriteString(s.form)
		b.WriteString(" ")
	case "in", "not in":
		s.lhs.render(d, b)
		b.WriteString(" " + s.form + " ")
	}
	b.WriteString("(")
	s.q.render(d, b)
	b.WriteString("))")
}
func (s *subquery) children() []expr {
	if s.lhs != nil {
		return []expr{s.lhs}
	}
	return nil
}
func (s *subquery) withChildren(c []expr) expr {
	n := *s
	if len(c) > 0 {
		n.lhs = c[0]
	}
	return &n
}

// selectItem is one output column.
type selectItem struct {
	e     expr
	alias string
}

// orderItem orders by an output column's ordinal (1-based). MySQL sorts NULL first
// ascending and last descending; DuckDB is told so explicitly.
type orderItem struct {
	ordinal int
	desc    bool
}

// fromItem is a table or derived table, joined to the ones before it.
type fromItem struct {
	table   string // a base table, or "" for a derived table
	derived *query
	alias   string
	join    string // "" for the first item, "join" or "left join"
	on      expr
	cols    []colRef // the columns it brings into scope
}

// query is a generated SELECT.
type query struct {
	distinct bool
	items    []selectItem
	from     []fromItem
	where    expr
	groupBy  []int // output ordinals (1-based) that are group keys; empty: none
	grouped  bool  // GROUP BY present, or aggregates without it
	having   expr
	orderBy  []orderItem
	limit    int // 0: none
	// tlp is the top query's partitioning predicate for the TLP oracle (nil elsewhere).
	tlp expr
}

// render writes the query in dialect d.
func (q *query) render(d dialect, b *strings.Builder) {
	b.WriteString("select ")
	if q.distinct {
		b.WriteString("distinct ")
	}
	for i, it := range q.items {
		if i > 0 {
			b.WriteString(", ")
		}
		it.e.render(d, b)
		if it.alias != "" {
			b.WriteString(" as ")
			b.WriteString(it.alias)
		}
	}
	b.WriteString(" from ")
	for i, f := range q.from {
		if i > 0 {
			b.WriteString(" " + f.join + " ")
		}
		if f.derived != nil {
			b.WriteString("(")
			f.derived.render(d, b)
			b.WriteString(")")
		} else {
			b.WriteString(f.table)
		}
		b.WriteString(" as ")
		b.WriteString(f.alias)
		if f.on != nil {
			b.WriteString(" on ")
			f.on.render(d, b)
		}
	}
	if q.where != nil {
		b.WriteString(" where ")
		q.where.render(d, b)
	}
	if len(q.groupBy) > 0 {
		b.WriteString(" group by ")
		for i, g := range q.groupBy {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(g))
		}
	}
	if q.having != nil {
		b.WriteString(" having ")
		q.having.render(d, b)
	}
	if len(q.orderBy) > 0 {
		b.WriteString(" order by ")
		for i, o := range q.orderBy {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(o.ordinal))
			if o.desc {
				b.WriteString(" desc")
			}
			if d == duckdbDialect {
				if o.desc {
					b.WriteString(" nulls last")
				} else {
					b.WriteString(" nulls first")
				}
			}
		}
	}
	if q.limit > 0 {
		b.WriteString(" limit ")
		b.WriteString(strconv.Itoa(q.limit))
	}
}

// sql returns the query's text in dialect d.
func (q *query) sql(d dialect) string {
	var b strings.Builder
	q.render(d, &b)
	return b.String()
}

// nullKeysSQL renders q for DuckDB with MySQL's NULL order as explicit sort keys instead of
// NULLS FIRST and NULLS LAST: the query without its ORDER BY and LIMIT becomes a derived
// table, ordered by (k IS NOT NULL), k for an ascending key and (k IS NULL), k DESC for a
// descending one. It is the same query; DuckDB 1.5 answers it differently in one case
// (recheckReference). "" if q has no ORDER BY.
func (q *query) nullKeysSQL() string {
	if len(q.orderBy) == 0 {
		return ""
	}
	inner := q.clone()
	inner.orderBy, inner.limit = nil, 0
	inner.items = slices.Clone(q.items)
	for i := range inner.items {
		inner.items[i].alias = "k" + strconv.Itoa(i+1) // every column named, for the outer keys
	}
	var b strings.Builder
	b.WriteString("select * from (")
	inner.render(duckdbDialect, &b)
	b.WriteString(") as r order by ")
	for i, o := range q.orderBy {
		if i > 0 {
			b.WriteString(", ")
		}
		k := "r.k" + strconv.Itoa(o.ordinal)
		if o.desc {
			b.WriteString("(" + k + " is null), " + k + " desc")
		} else {
			b.WriteString("(" + k + " is not null), " + k)
		}
	}
	if q.limit > 0 {
		b.WriteString(" limit " + strconv.Itoa(q.limit))
	}
	return b.String()
}

// clone copies the query's own structure (expressions are immutable and shared).
func (q *query) clone() *query {
	n := *q
	n.items = append([]selectItem(nil), q.items...)
	n.from = append([]fromItem(nil), q.from...)
	n.groupBy = append([]int(nil), q.groupBy...)
	n.orderBy = append([]orderItem(nil), q.orderBy...)
	return &n
}

// totalOrder reports whether the ORDER BY covers every output column, so that rows that tie
// are identical and a LIMIT has one defined answer.
func (q *query) totalOrder() bool {
	seen := map[int]bool{}
	for _, o := range q.orderBy {
		seen[o.ordinal] = true
	}
	for i := range q.items {
		if !seen[i+1] {
			return false
		}
	}
	return true
}

// orderKeys returns the ORDER BY's output column indexes, most significant first, when the
// order is total (rows then compare in order), else nil (they compare as multisets).
func (q *query) orderKeys() []int {
	if len(q.orderBy) == 0 || !q.totalOrder() {
		return nil
	}
	keys := make([]int, len(q.orderBy))
	for i, o := range q.orderBy {
		keys[i] = o.ordinal - 1
	}
	return keys
}

// walk calls f on every expression node of the query, its subqueries and derived tables.
func (q *query) walk(f func(expr)) {
	var visit func(e expr)
	visit = func(e expr) {
		if e == nil {
			return
		}
		f(e)
		if s, ok := e.(*subquery); ok {
			s.q.walk(f)
		}
		for _, c := range e.children() {
			visit(c)
		}
	}
	for _, it := range q.items {
		visit(it.e)
	}
	for _, fr := range q.from {
		visit(fr.on)
		if fr.derived != nil {
			fr.derived.walk(f)
		}
	}
	visit(q.where)
	visit(q.having)
}
