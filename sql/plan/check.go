package plan

import (
	"fmt"
	"strings"
)

// Check verifies the invariants an executor relies on in an optimised plan: every
// expression reads only columns its node's inputs produce (a scan's filters, columns of its
// own table), so Resolve succeeds everywhere; no Subquery is left; aggregate calls appear
// only in Aggregates; join conditions are boolean.
func Check(q *Query) error {
	if len(q.Root.Output()) != len(q.Names) {
		if _, dml := q.Root.(*Insert); !dml {
			if _, dml := q.Root.(*Delete); !dml {
				return fmt.Errorf("plan: the root produces %d columns for %d names", len(q.Root.Output()), len(q.Names))
			}
		}
	}
	var err error
	WalkPlan(q.Root, func(n Node) bool {
		if err == nil {
			err = checkNode(n, q.MD)
		}
		return err == nil
	})
	return err
}

func checkNode(n Node, md *Metadata) error {
	var input []ColumnID
	for _, in := range n.Inputs() {
		input = append(input, in.Output()...)
	}
	name := strings.TrimPrefix(fmt.Sprintf("%T", n), "*plan.")
	check := func(e Expr, aggOK bool) error {
		var bad error
		WalkExpr(e, func(x Expr) bool {
			switch x.(type) {
			case *Subquery:
				bad = fmt.Errorf("plan: %s holds a subquery", name)
			case *AggCall:
				if !aggOK {
					bad = fmt.Errorf("plan: %s holds an aggregate call", name)
				}
			}
			return bad == nil
		})
		if bad != nil {
			return bad
		}
		if _, err := Resolve(e, input); err != nil {
			return fmt.Errorf("plan: %s: %s: %w", name, FormatExpr(e, md), err)
		}
		return nil
	}
	switch x := n.(type) {
	case *Scan:
		if len(x.Cols) != len(x.Ordinals) {
			return fmt.Errorf("plan: scan of %s has %d columns and %d ordinals", x.Table, len(x.Cols), len(x.Ordinals))
		}
		for _, f := range x.Filters {
			for _, id := range Refs(f).Ordered() {
				c := md.Column(id)
				if !strings.EqualFold(c.BaseTable, x.Table) || !strings.EqualFold(c.Table, x.Alias) {
					return fmt.Errorf("plan: the filter %s of the scan of %s reads %s", FormatExpr(f, md), x.Alias, c.Name)
				}
			}
			if HasSubquery(f) || HasAgg(f) {
				return fmt.Errorf("plan: the scan of %s has a filter with a subquery or aggregate", x.Table)
			}
		}
		return nil
	case *Aggregate:
		for _, g := range x.Groups {
			if err := check(g, false); err != nil {
				return err
			}
		}
		for _, a := range x.Aggs {
			if a.Arg != nil {
				if err := check(a.Arg, false); err != nil {
					return err
				}
			}
		}
		return nil
	case *Join:
		for _, c := range x.On {
			if c.Type().Kind != 0 && c.Type().String() != "boolean" {
				return fmt.Errorf("plan: join condition %s is %s", FormatExpr(c, md), c.Type())
			}
		}
	}
	for _, e := range NodeExprs(n) {
		if err := check(e, false); err != nil {
			return err
		}
	}
	return nil
}
