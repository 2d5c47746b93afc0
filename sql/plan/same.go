package plan

import (
	"slices"
)

// SameRows reports whether plan y computes the same rows as plan x, its columns under other
// IDs: the two were bound from the same text (a subquery repeating its enclosing query's
// FROM and WHERE) and optimised alike. If so, the map takes each column y outputs to the
// column of x that holds the same values, row for row.
//
// The test is structural: the same nodes in the same shape, scans of the same table with
// the same filters, expressions equal once y's columns are renamed to x's. Where y keeps a
// column x has pruned, or the optimiser ordered a join differently, the plans are not the
// same; a false answer only costs the caller a reuse. Volatile functions (RAND()) never
// compute the same rows twice.
func SameRows(x, y Node, md *Metadata) (map[ColumnID]ColumnID, bool) {
	m := map[ColumnID]ColumnID{}
	if !sameRows(x, y, md, m) {
		return nil, false
	}
	out := map[ColumnID]ColumnID{}
	xs := OutputSet(x)
	for _, id := range y.Output() {
		xid, ok := m[id]
		if !ok || !xs.Has(xid) {
			return nil, false
		}
		out[id] = xid
	}
	return out, true
}

// sameRows matches y against x, adding to m the columns y defines.
func sameRows(x, y Node, md *Metadata, m map[ColumnID]ColumnID) bool {
	switch yn := y.(type) {
	case *Scan:
		xn, ok := x.(*Scan)
		if !ok || xn.DB != yn.DB || xn.Table != yn.Table {
			return false
		}
		// Every column y reads (output or filtered on) is the x column of the same stored
		// column that x reads too.
		base := map[string]ColumnID{}
		for _, id := range MakeColSet(xn.Cols...).Union(RefsAll(xn.Filters)).Ordered() {
			base[md.Column(id).BaseColumn] = id
		}
		for _, id := range MakeColSet(yn.Cols...).Union(RefsAll(yn.Filters)).Ordered() {
			xid, ok := base[md.Column(id).BaseColumn]
			if !ok || md.Column(id).BaseColumn == "" {
				return false
			}
			m[id] = xid
		}
		return sameConds(xn.Filters, yn.Filters, m)
	case *Filter:
		xn, ok := x.(*Filter)
		return ok && sameRows(xn.Input, yn.Input, md, m) && sameConds(xn.Conds, yn.Conds, m)
	case *Project:
		xn, ok := x.(*Project)
		if !ok || !sameRows(xn.Input, yn.Input, md, m) {
			return false
		}
		return matchExprs(xn.Exprs, xn.Cols, yn.Exprs, yn.Cols, m)
	case *Join:
		xn, ok := x.(*Join)
		if !ok || xn.Kind != yn.Kind || (xn.MarkCond == nil) != (yn.MarkCond == nil) ||
			!sameRows(xn.Left, yn.Left, md, m) || !sameRows(xn.Right, yn.Right, md, m) ||
			!sameConds(xn.On, yn.On, m) {
			return false
		}
		if yn.Kind == MarkJoin {
			if yn.MarkCond != nil && !sameExpr(xn.MarkCond, yn.MarkCond, m) {
				return false
			}
			m[yn.Mark] = xn.Mark
		}
		return true
	case *Aggregate:
		xn, ok := x.(*Aggregate)
		if !ok || len(xn.Groups) != len(yn.Groups) || !sameRows(xn.Input, yn.Input, md, m) {
			return false
		}
		// The same groups, in the same order: the grouping decides the rows.
		for i, g := range yn.Groups {
			if !sameExpr(xn.Groups[i], g, m) {
				return false
			}
		}
		for i, id := range yn.GroupCols {
			m[id] = xn.GroupCols[i]
		}
		xAggs := make([]Expr, len(xn.Aggs))
		for i, a := range xn.Aggs {
			xAggs[i] = a
		}
		yAggs := make([]Expr, len(yn.Aggs))
		for i, a := range yn.Aggs {
			yAggs[i] = a
		}
		return matchExprs(xAggs, xn.AggCols, yAggs, yn.AggCols, m)
	case *Distinct:
		xn, ok := x.(*Distinct)
		if !ok || !sameRows(xn.Input, yn.Input, md, m) {
			return false
		}
		// DISTINCT compares whole rows: y's must be x's, column for column.
		xo, yo := xn.Output(), yn.Output()
		if len(xo) != len(yo) {
			return false
		}
		for i, id := range yo {
			if m[id] != xo[i] {
				return false
			}
		}
		return true
	}
	return false
}

// matchExprs maps each of y's computed columns to an x column computed by the same
// expression; x may compute more.
func matchExprs(xExprs []Expr, xCols []ColumnID, yExprs []Expr, yCols []ColumnID, m map[ColumnID]ColumnID) bool {
	keys := map[string]ColumnID{}
	for i, e := range xExprs {
		if HasVolatile(e) {
			return false
		}
		keys[Key(e)] = xCols[i]
	}
	for i, e := range yExprs {
		xid, ok := keys[Key(Rename(e, m))]
		if !ok || HasVolatile(e) {
			return false
		}
		m[yCols[i]] = xid
	}
	return true
}

// sameConds reports whether two lists of conjuncts hold the same conditions, in any order.
func sameConds(xs, ys []Expr, m map[ColumnID]ColumnID) bool {
	if len(xs) != len(ys) {
		return false
	}
	xk := make([]string, len(xs))
	for i, e := range xs {
		if HasVolatile(e) {
			return false
		}
		xk[i] = Key(e)
	}
	yk := make([]string, len(ys))
	for i, e := range ys {
		yk[i] = Key(Rename(e, m))
	}
	slices.Sort(xk)
	slices.Sort(yk)
	return slices.Equal(xk, yk)
}

func sameExpr(x, y Expr, m map[ColumnID]ColumnID) bool {
	return !HasVolatile(x) && Key(x) == Key(Rename(y, m))
}

// rename replaces the columns m maps. A column m does not map keeps its ID, which then
// matches nothing of x's (the IDs of one query are distinct), except an outer column
// both plans read: that one is the same column in both.
func Rename(e Expr, m map[ColumnID]ColumnID) Expr {
	return RewriteExpr(e, func(e Expr) (Expr, bool) {
		if c, ok := e.(*ColumnRef); ok {
			if id, ok := m[c.ID]; ok {
				return &ColumnRef{ID: id, T: c.T}, true
			}
			return c, true
		}
		return e, false
	})
}
