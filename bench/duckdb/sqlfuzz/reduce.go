package main

import (
	"context"
	"time"
)

// rewriter visits every expression node of a query in one fixed pre-order (select items,
// each from item's ON and derived table, WHERE, HAVING, the TLP predicate; a node before
// its children; a subquery's operand before its query) and may replace the target'th.
type rewriter struct {
	n      int
	target int
	repl   func(expr) expr
	visit  func(idx int, e expr)
}

func (w *rewriter) query(q *query) *query {
	c := q.clone()
	for i := range c.items {
		c.items[i].e = w.expr(c.items[i].e)
	}
	for i := range c.from {
		c.from[i].on = w.expr(c.from[i].on)
		if c.from[i].derived != nil {
			c.from[i].derived = w.query(c.from[i].derived)
		}
	}
	c.where = w.expr(c.where)
	c.having = w.expr(c.having)
	c.tlp = w.expr(c.tlp)
	return c
}

func (w *rewriter) expr(e expr) expr {
	if e == nil {
		return nil
	}
	idx := w.n
	w.n++
	if w.visit != nil {
		w.visit(idx, e)
	}
	if idx == w.target {
		return w.repl(e)
	}
	ch := e.children()
	var out []expr
	for i, c := range ch {
		nc := w.expr(c)
		if nc != c && out == nil {
			out = append([]expr(nil), ch...)
		}
		if out != nil {
			out[i] = nc
		}
	}
	if s, ok := e.(*subquery); ok {
		n := *s
		if out != nil {
			n.lhs = out[0]
		}
		n.q = w.query(s.q)
		return &n
	}
	if out != nil {
		return e.withChildren(out)
	}
	return e
}

// simplest is a small literal of kind k that a reduced query may hold in place of an
// expression.
func simplest(k kind) expr {
	return &lit{text: [...]string{"1", "1.00", "1e0", "date '1995-01-01'", "'A'", "true"}[k], k: k}
}

// candidates lists smaller variants of q, the structural ones first.
func candidates(q *query) []*query {
	var out []*query
	with := func(f func(c *query)) {
		c := q.clone()
		f(c)
		out = append(out, c)
	}
	if q.limit > 0 {
		with(func(c *query) { c.limit = 0 })
	}
	if len(q.orderBy) > 0 {
		with(func(c *query) { c.orderBy = nil })
	}
	if q.distinct {
		with(func(c *query) { c.distinct = false })
	}
	if q.having != nil {
		with(func(c *query) { c.having = nil })
	}
	if q.where != nil {
		with(func(c *query) { c.where = nil })
	}
	for i := range q.from {
		if i == 0 {
			continue
		}
		with(func(c *query) {
			c.from = append(c.from[:i:i], q.from[i+1:]...)
		})
	}
	if len(q.items) > 1 {
		for i := range q.items {
			with(func(c *query) { dropItem(c, i) })
		}
	}
	for i, f := range q.from {
		d := f.derived
		if d == nil {
			continue
		}
		// A derived table's columns after its key, and its WHERE.
		for j := 1; j < len(d.items); j++ {
			with(func(c *query) {
				nd := d.clone()
				dropItem(nd, j)
				c.from[i].derived = nd
				c.from[i].cols = append(f.cols[:j:j], f.cols[j+1:]...)
			})
		}
		if d.where != nil {
			with(func(c *query) {
				nd := d.clone()
				nd.where = nil
				c.from[i].derived = nd
			})
		}
	}
	// Expression nodes: each replaced by a child of its kind, or by a literal.
	var nodes []expr
	(&rewriter{target: -1, visit: func(_ int, e expr) { nodes = append(nodes, e) }}).query(q)
	for idx, e := range nodes {
		for _, ch := range e.children() {
			if ch.kind() == e.kind() {
				out = append(out, (&rewriter{target: idx, repl: func(expr) expr { return ch }}).query(q))
			}
		}
		if _, isLit := e.(*lit); !isLit {
			out = append(out, (&rewriter{target: idx, repl: func(e expr) expr { return simplest(e.kind()) }}).query(q))
		}
	}
	return out
}

// dropItem removes output column i, renumbering GROUP BY and ORDER BY ordinals.
func dropItem(c *query, i int) {
	c.items = append(c.items[:i:i], c.items[i+1:]...)
	var gb []int
	for _, g := range c.groupBy {
		switch {
		case g == i+1:
		case g > i+1:
			gb = append(gb, g-1)
		default:
			gb = append(gb, g)
		}
	}
	c.groupBy = gb
	var ob []orderItem
	for _, o := range c.orderBy {
		switch {
		case o.ordinal == i+1:
		case o.ordinal > i+1:
			ob = append(ob, orderItem{o.ordinal - 1, o.desc})
		default:
			ob = append(ob, o)
		}
	}
	c.orderBy = ob
}

// size is a query's node count, which reduction only lowers.
func size(q *query) int {
	n := len(q.items) + len(q.from) + len(q.orderBy)
	q.walk(func(expr) { n++ })
	if q.tlp != nil {
		(&rewriter{target: -1, visit: func(int, expr) { n++ }}).expr(q.tlp)
	}
	return n
}

// reduce shrinks q while check still finds it wrong, greedily: the first smaller variant
// that still fails replaces q, until none does or the budget of checks or time runs out.
func reduce(ctx context.Context, q *query, check func(*query) bool, maxChecks int, maxTime time.Duration) (*query, int) {
	deadline := time.Now().Add(maxTime)
	checks := 0
	for {
		progressed := false
		cur := size(q)
		for _, c := range candidates(q) {
			if checks >= maxChecks || time.Now().After(deadline) || ctx.Err() != nil {
				return q, checks
			}
			if size(c) >= cur {
				continue
			}
			checks++
			if check(c) {
				q, progressed = c, true
				break
			}
		}
		if !progressed {
			return q, checks
		}
	}
}
