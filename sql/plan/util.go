package plan

import (
	"fmt"
	"strings"

	"github.com/colinkdb/colink/sql/types"
)

// Children returns an expression's direct subexpressions (a Subquery's plan is not one).
func Children(e Expr) []Expr {
	switch e := e.(type) {
	case *Call:
		return e.Args
	case *Cast:
		return []Expr{e.Arg}
	case *Case:
		var out []Expr
		for _, w := range e.Whens {
			out = append(out, w.Cond, w.Then)
		}
		if e.Else != nil {
			out = append(out, e.Else)
		}
		return out
	case *AggCall:
		if e.Arg != nil {
			return []Expr{e.Arg}
		}
	case *Subquery:
		if e.Probe != nil {
			return []Expr{e.Probe}
		}
	}
	return nil
}

// WalkExpr calls fn on e and, while fn returns true, on its subexpressions, depth first.
func WalkExpr(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	for _, c := range Children(e) {
		WalkExpr(c, fn)
	}
}

// RewriteExpr rebuilds e top-down: fn sees each expression first and returns a replacement
// and whether to stop there; otherwise the children are rewritten. Expressions that do not
// change are shared, not copied.
func RewriteExpr(e Expr, fn func(Expr) (Expr, bool)) Expr {
	if e == nil {
		return nil
	}
	if r, done := fn(e); done {
		return r
	}
	switch x := e.(type) {
	case *Call:
		var args []Expr
		for i, a := range x.Args {
			na := RewriteExpr(a, fn)
			if na != a && args == nil {
				args = append([]Expr(nil), x.Args...)
			}
			if args != nil {
				args[i] = na
			}
		}
		if args != nil {
			return &Call{Fn: x.Fn, Args: args, T: x.T}
		}
	case *Cast:
		if a := RewriteExpr(x.Arg, fn); a != x.Arg {
			return &Cast{Arg: a, T: x.T}
		}
	case *Case:
		c := &Case{T: x.T, Whens: make([]When, len(x.Whens))}
		changed := false
		for i, w := range x.Whens {
			c.Whens[i] = When{Cond: RewriteExpr(w.Cond, fn), Then: RewriteExpr(w.Then, fn)}
			changed = changed || c.Whens[i].Cond != w.Cond || c.Whens[i].Then != w.Then
		}
		c.Else = RewriteExpr(x.Else, fn)
		if changed || c.Else != x.Else {
			return c
		}
	case *AggCall:
		if x.Arg != nil {
			if a := RewriteExpr(x.Arg, fn); a != x.Arg {
				c := *x
				c.Arg = a
				return &c
			}
		}
	case *Subquery:
		if x.Probe != nil {
			if p := RewriteExpr(x.Probe, fn); p != x.Probe {
				c := *x
				c.Probe = p
				return &c
			}
		}
	}
	return e
}

// Refs returns the columns an expression reads (not counting those inside subquery plans).
func Refs(e Expr) ColSet {
	var s ColSet
	WalkExpr(e, func(x Expr) bool {
		if r, ok := x.(*ColumnRef); ok {
			s.Add(r.ID)
		}
		return true
	})
	return s
}

// RefsAll returns the columns a list of expressions reads.
func RefsAll(es []Expr) ColSet {
	var s ColSet
	for _, e := range es {
		s.UnionWith(Refs(e))
	}
	return s
}

// HasSubquery reports whether e contains a Subquery.
func HasSubquery(e Expr) bool {
	found := false
	WalkExpr(e, func(x Expr) bool {
		if _, ok := x.(*Subquery); ok {
			found = true
		}
		return !found
	})
	return found
}

// HasAgg reports whether e contains an AggCall.
func HasAgg(e Expr) bool {
	found := false
	WalkExpr(e, func(x Expr) bool {
		if _, ok := x.(*AggCall); ok {
			found = true
		}
		return !found
	})
	return found
}

// Conjuncts splits a condition at its top-level ANDs.
func Conjuncts(e Expr) []Expr {
	if c, ok := e.(*Call); ok && c.Fn == FnAnd {
		var out []Expr
		for _, a := range c.Args {
			out = append(out, Conjuncts(a)...)
		}
		return out
	}
	return []Expr{e}
}

// And joins conditions with AND; no conditions is TRUE.
func And(es ...Expr) Expr {
	switch len(es) {
	case 0:
		return Lit(types.BoolValue(true))
	case 1:
		return es[0]
	}
	out := es[0]
	for _, e := range es[1:] {
		out = NewBool(FnAnd, out, e)
	}
	return out
}

// Key returns a canonical text of an expression: equal keys mean structurally equal
// expressions (column IDs included). Subqueries are equal only to themselves.
func Key(e Expr) string {
	var b strings.Builder
	writeKey(&b, e)
	return b.String()
}

func writeKey(b *strings.Builder, e Expr) {
	switch x := e.(type) {
	case *ColumnRef:
		fmt.Fprintf(b, "#%d", x.ID)
	case *InputRef:
		fmt.Fprintf(b, "$%d", x.Pos)
	case *Literal:
		fmt.Fprintf(b, "%s:%s", x.V.String(), x.V.Type)
	case *Call:
		fmt.Fprintf(b, "%s(", x.Fn)
		for i, a := range x.Args {
			if i > 0 {
				b.WriteByte(',')
			}
			writeKey(b, a)
		}
		b.WriteByte(')')
	case *Cast:
		b.WriteString("cast(")
		writeKey(b, x.Arg)
		fmt.Fprintf(b, ",%s)", x.T)
	case *Case:
		b.WriteString("case(")
		for _, w := range x.Whens {
			writeKey(b, w.Cond)
			b.WriteByte('?')
			writeKey(b, w.Then)
			b.WriteByte(';')
		}
		if x.Else != nil {
			writeKey(b, x.Else)
		}
		b.WriteByte(')')
	case *AggCall:
		fmt.Fprintf(b, "%s(", x.Fn)
		if x.Fn == AggCountStar {
			b.WriteByte('*')
		}
		if x.Distinct {
			b.WriteString("distinct ")
		}
		if x.Arg != nil {
			writeKey(b, x.Arg)
		}
		if x.Fn == AggGroupConcat {
			for _, k := range x.Order {
				b.WriteString(" order ")
				writeKey(b, k.Expr)
				if k.Desc {
					b.WriteString(" desc")
				}
			}
			fmt.Fprintf(b, " separator %q max %d", x.Sep, x.MaxLen)
		}
		b.WriteByte(')')
	case *Subquery:
		fmt.Fprintf(b, "subquery%p", x)
	default:
		fmt.Fprintf(b, "%T", e)
	}
}

// WalkPlan calls fn on n and its inputs, depth first, parents before children, while fn
// returns true. Subquery plans inside expressions are not visited.
func WalkPlan(n Node, fn func(Node) bool) {
	if !fn(n) {
		return
	}
	for _, c := range n.Inputs() {
		WalkPlan(c, fn)
	}
}

// NodeExprs returns the expressions a node evaluates.
func NodeExprs(n Node) []Expr {
	switch n := n.(type) {
	case *Scan:
		return n.Filters
	case *Values:
		var out []Expr
		for _, r := range n.Rows {
			out = append(out, r...)
		}
		return out
	case *Filter:
		return n.Conds
	case *Project:
		return n.Exprs
	case *Join:
		if n.MarkCond != nil {
			return append(append([]Expr(nil), n.On...), n.MarkCond)
		}
		return n.On
	case *Aggregate:
		out := append([]Expr(nil), n.Groups...)
		for _, a := range n.Aggs {
			out = append(out, a)
		}
		return out
	case *Sort:
		var out []Expr
		for _, k := range n.Keys {
			out = append(out, k.Expr)
		}
		return out
	}
	return nil
}

// Defined returns every column that some node of the plan produces, subquery plans
// included.
func Defined(n Node) ColSet {
	var s ColSet
	var visit func(Node)
	visit = func(n Node) {
		WalkPlan(n, func(m Node) bool {
			for _, id := range m.Output() {
				s.Add(id)
			}
			if a, ok := m.(*Aggregate); ok {
				for _, id := range a.AggCols {
					s.Add(id)
				}
			}
			for _, e := range NodeExprs(m) {
				WalkExpr(e, func(x Expr) bool {
					if sq, ok := x.(*Subquery); ok {
						visit(sq.Plan)
					}
					return true
				})
			}
			return true
		})
	}
	visit(n)
	return s
}

// Used returns every column that an expression of the plan reads, subquery plans included.
func Used(n Node) ColSet {
	var s ColSet
	var visit func(Node)
	visit = func(n Node) {
		WalkPlan(n, func(m Node) bool {
			for _, e := range NodeExprs(m) {
				WalkExpr(e, func(x Expr) bool {
					switch x := x.(type) {
					case *ColumnRef:
						s.Add(x.ID)
					case *Subquery:
						visit(x.Plan)
					}
					return true
				})
			}
			return true
		})
	}
	visit(n)
	return s
}

// OuterRefs returns the columns a plan reads but does not produce: its correlation with
// enclosing queries.
func OuterRefs(n Node) ColSet { return Used(n).Difference(Defined(n)) }

// OutputSet returns a node's output columns as a set.
func OutputSet(n Node) ColSet { return MakeColSet(n.Output()...) }

// Resolve returns e with every ColumnRef replaced by an InputRef to its position in input
// (the first position if a column appears twice). A column that input does not hold is an
// error.
func Resolve(e Expr, input []ColumnID) (Expr, error) {
	pos := make(map[ColumnID]int, len(input))
	for i := len(input) - 1; i >= 0; i-- {
		pos[input[i]] = i
	}
	var err error
	out := RewriteExpr(e, func(x Expr) (Expr, bool) {
		switch x := x.(type) {
		case *ColumnRef:
			p, ok := pos[x.ID]
			if !ok {
				if err == nil {
					err = fmt.Errorf("plan: column #%d is not in the input", x.ID)
				}
				return x, true
			}
			return &InputRef{Pos: p, T: x.T}, true
		case *Subquery:
			if err == nil {
				err = fmt.Errorf("plan: a subquery cannot be resolved; decorrelate first")
			}
			return x, true
		}
		return nil, false
	})
	return out, err
}

// JoinKey is one equality of a hash join: Left over the left input, Right over the right.
type JoinKey struct {
	Left, Right Expr
}

// SplitJoin separates a join's conditions into hash keys (equalities with one side over
// each input, keys of one type) and the residual conditions evaluated on each matching
// pair.
func SplitJoin(j *Join) (keys []JoinKey, residual []Expr) {
	lcols, rcols := OutputSet(j.Left), OutputSet(j.Right)
	for _, c := range j.On {
		if call, ok := c.(*Call); ok && call.Fn == FnEq {
			a, b := call.Args[0], call.Args[1]
			ra, rb := Refs(a), Refs(b)
			switch {
			case !ra.Empty() && !rb.Empty() && ra.SubsetOf(lcols) && rb.SubsetOf(rcols):
				keys = append(keys, JoinKey{Left: a, Right: b})
				continue
			case !ra.Empty() && !rb.Empty() && ra.SubsetOf(rcols) && rb.SubsetOf(lcols):
				keys = append(keys, JoinKey{Left: b, Right: a})
				continue
			}
		}
		residual = append(residual, c)
	}
	return keys, residual
}

// IsFalseOrNull reports a FALSE or NULL literal: a condition that keeps no row.
func IsFalseOrNull(e Expr) bool {
	l, ok := e.(*Literal)
	if !ok {
		return false
	}
	t, known := l.V.Truth()
	return !known || !t
}
