package opt

import (
	"github.com/colinkdb/colink/sql/plan"
)

// PruneColumns removes columns nothing above reads: scans read only the columns the query
// needs (plus their filters' columns), projections and aggregates drop unused outputs, and
// Values drop unused columns. The root's output is kept as it is.
type PruneColumns struct{}

// Name implements Rule.
func (PruneColumns) Name() string { return "prune-columns" }

// Apply implements Rule.
func (PruneColumns) Apply(c *Context, root plan.Node) (plan.Node, error) {
	prune(root, plan.OutputSet(root))
	return dropIdentityProjects(root), nil
}

// dropIdentityProjects removes projections that pass their input through unchanged.
func dropIdentityProjects(n plan.Node) plan.Node {
	for i, in := range n.Inputs() {
		n.SetInput(i, dropIdentityProjects(in))
	}
	p, ok := n.(*plan.Project)
	if !ok {
		return n
	}
	in := p.Input.Output()
	if len(in) != len(p.Cols) {
		return n
	}
	for i, e := range p.Exprs {
		r, ok := e.(*plan.ColumnRef)
		if !ok || r.ID != p.Cols[i] || in[i] != p.Cols[i] {
			return n
		}
	}
	return p.Input
}

// prune narrows n to what req needs and n itself reads.
func prune(n plan.Node, req plan.ColSet) {
	switch x := n.(type) {
	case *plan.Scan:
		var cols []plan.ColumnID
		var ords []int
		for i, id := range x.Cols {
			if req.Has(id) {
				cols = append(cols, id)
				ords = append(ords, x.Ordinals[i])
			}
		}
		x.Cols, x.Ordinals = cols, ords
	case *plan.Values:
		var keep []int
		for i, id := range x.Cols {
			if req.Has(id) {
				keep = append(keep, i)
			}
		}
		cols := make([]plan.ColumnID, len(keep))
		for i, k := range keep {
			cols[i] = x.Cols[k]
		}
		for r, row := range x.Rows {
			nr := make([]plan.Expr, len(keep))
			for i, k := range keep {
				nr[i] = row[k]
			}
			x.Rows[r] = nr
		}
		x.Cols = cols
	case *plan.Filter:
		prune(x.Input, req.Union(plan.RefsAll(x.Conds)))
	case *plan.Project:
		var exprs []plan.Expr
		var cols []plan.ColumnID
		for i, id := range x.Cols {
			if req.Has(id) {
				exprs = append(exprs, x.Exprs[i])
				cols = append(cols, id)
			}
		}
		x.Exprs, x.Cols = exprs, cols
		prune(x.Input, plan.RefsAll(exprs))
	case *plan.Join:
		need := req.Union(plan.RefsAll(x.On))
		if x.MarkCond != nil {
			need.UnionWith(plan.Refs(x.MarkCond))
		}
		prune(x.Left, need.Intersection(plan.OutputSet(x.Left)))
		prune(x.Right, need.Intersection(plan.OutputSet(x.Right)))
	case *plan.Aggregate:
		var aggs []*plan.AggCall
		var cols []plan.ColumnID
		for i, id := range x.AggCols {
			if req.Has(id) {
				aggs = append(aggs, x.Aggs[i])
				cols = append(cols, id)
			}
		}
		x.Aggs, x.AggCols = aggs, cols
		need := plan.RefsAll(x.Groups)
		for _, a := range aggs {
			if a.Arg != nil {
				need.UnionWith(plan.Refs(a.Arg))
			}
		}
		prune(x.Input, need)
	case *plan.Distinct:
		prune(x.Input, plan.OutputSet(x.Input))
	case *plan.Sort:
		need := req.Copy()
		for _, k := range x.Keys {
			need.UnionWith(plan.Refs(k.Expr))
		}
		prune(x.Input, need)
	case *plan.Limit:
		prune(x.Input, req)
	case *plan.Insert:
		prune(x.Input, plan.OutputSet(x.Input))
	case *plan.Delete:
		prune(x.Input, plan.MakeColSet(x.RowID))
	}
}
