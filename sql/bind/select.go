package bind

import (
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// selectItem is one expression of the select list.
type selectItem struct {
	expr  plan.Expr
	name  string // the result column's name
	alias bool   // name came from AS
}

func (b *Binder) selectItems(fields []*ast.SelectField, sc *scope) ([]selectItem, error) {
	var items []selectItem
	for _, f := range fields {
		if f.WildCard != nil {
			exp, err := b.expandStar(f.WildCard, sc)
			if err != nil {
				return nil, err
			}
			items = append(items, exp...)
			continue
		}
		e, err := b.expr(f.Expr, &exprCtx{sc: sc, clause: "field list", allowAgg: true})
		if err != nil {
			return nil, err
		}
		it := selectItem{expr: e, name: f.AsName.O, alias: f.AsName.O != ""}
		if !it.alias {
			it.name = itemText(f)
		}
		items = append(items, it)
	}
	return items, nil
}

// itemText is the name MySQL gives an unaliased select item: a column's name, else the
// expression as written.
func itemText(f *ast.SelectField) string {
	if c, ok := f.Expr.(*ast.ColumnNameExpr); ok {
		return c.Name.Name.O
	}
	if t := strings.TrimSpace(f.Text()); t != "" {
		return t
	}
	return exprText(f.Expr)
}

// exprText restores an AST expression as SQL text.
func exprText(e ast.Node) string {
	if t := strings.TrimSpace(e.Text()); t != "" {
		return t
	}
	var sb strings.Builder
	if err := e.Restore(newRestoreCtx(&sb)); err != nil {
		return "?"
	}
	return sb.String()
}

func (b *Binder) expandStar(w *ast.WildCardField, sc *scope) ([]selectItem, error) {
	var items []selectItem
	if len(sc.rels) == 0 {
		return nil, sqlerr.New(1096, "No tables used")
	}
	found := false
	for _, r := range sc.rels {
		if w.Table.L != "" {
			if !strings.EqualFold(r.name, w.Table.O) || w.Schema.L != "" && !strings.EqualFold(r.db, w.Schema.O) {
				continue
			}
		}
		found = true
		for _, c := range r.cols {
			if c.hidden && w.Table.L == "" {
				continue
			}
			items = append(items, selectItem{expr: b.md.Ref(c.id), name: c.name})
		}
	}
	if !found {
		return nil, sqlerr.New(sqlerr.ErBadTable, "Unknown table '%s'", w.Table.O)
	}
	return items, nil
}

// ordinal reads a positional reference (GROUP BY 2, ORDER BY 1): an integer literal.
func ordinal(e ast.ExprNode) (int, bool) {
	if p, ok := e.(*ast.PositionExpr); ok && p.P == nil {
		return p.N, true
	}
	v, ok := e.(ast.ValueExpr)
	if !ok {
		return 0, false
	}
	switch x := v.GetValue().(type) {
	case int64:
		return int(x), true
	case uint64:
		return int(min(x, 1<<31)), true
	}
	return 0, false
}

func (b *Binder) groupBy(gb *ast.GroupByClause, items []selectItem, sc *scope) ([]plan.Expr, error) {
	if gb == nil {
		return nil, nil
	}
	var groups []plan.Expr
	seen := map[string]bool{}
	for _, g := range gb.Items {
		var e plan.Expr
		if n, ok := ordinal(g.Expr); ok {
			if n < 1 || n > len(items) {
				return nil, sqlerr.UnknownColumn(strconv.Itoa(n), "group statement")
			}
			it := items[n-1]
			if plan.HasAgg(it.expr) {
				return nil, sqlerr.New(sqlerr.ErWrongGroupField, "Can't group on '%s'", it.name)
			}
			e = it.expr
		} else {
			var err error
			e, err = b.expr(g.Expr, &exprCtx{sc: sc, clause: "group statement", items: items, fromFirst: true})
			if err != nil {
				return nil, err
			}
			if plan.HasAgg(e) {
				return nil, sqlerr.New(sqlerr.ErWrongGroupField, "Can't group on '%s'", exprText(g.Expr))
			}
		}
		if k := plan.Key(e); !seen[k] {
			seen[k] = true
			groups = append(groups, e)
		}
	}
	return groups, nil
}

// orderItem is an ORDER BY item: a select item (item >= 0) or an expression.
type orderItem struct {
	item int
	expr plan.Expr
	desc bool
	text string
	pos  int
}

func (b *Binder) orderBy(ob *ast.OrderByClause, items []selectItem, sc *scope) ([]orderItem, error) {
	if ob == nil {
		return nil, nil
	}
	var out []orderItem
	for pos, o := range ob.Items {
		oi := orderItem{item: -1, desc: o.Desc, text: exprText(o.Expr), pos: pos}
		if n, ok := ordinal(o.Expr); ok {
			if n < 1 || n > len(items) {
				return nil, sqlerr.UnknownColumn(strconv.Itoa(n), "order clause")
			}
			oi.item = n - 1
			out = append(out, oi)
			continue
		}
		// An unqualified name that a select item carries sorts by that item.
		if c, ok := o.Expr.(*ast.ColumnNameExpr); ok && c.Name.Table.L == "" {
			match := -1
			for i, it := range items {
				if !strings.EqualFold(it.name, c.Name.Name.O) {
					continue
				}
				if match >= 0 && plan.Key(items[match].expr) != plan.Key(it.expr) {
					return nil, sqlerr.AmbiguousColumn(c.Name.Name.O, "order clause")
				}
				if match < 0 {
					match = i
				}
			}
			if match >= 0 {
				oi.item = match
				out = append(out, oi)
				continue
			}
		}
		e, err := b.expr(o.Expr, &exprCtx{sc: sc, clause: "order clause", allowAgg: true, items: items})
		if err != nil {
			return nil, err
		}
		if l, ok := e.(*plan.Literal); ok && !l.V.Null {
			continue // ORDER BY a constant orders nothing
		}
		oi.expr = e
		out = append(out, oi)
	}
	return out, nil
}

// rewritten holds select-list, HAVING and ORDER BY expressions rewritten over an
// Aggregate's output.
type rewritten struct {
	items  []plan.Expr
	having plan.Expr
	order  []plan.Expr
}

// aggregate builds the Aggregate for a grouped SELECT and rewrites the expressions above it
// to read its output: a group expression becomes a reference to its group column, an
// aggregate call a reference to its aggregate column. A column of the FROM clause left
// outside both is an error (MySQL's ONLY_FULL_GROUP_BY).
func (b *Binder) aggregate(input plan.Node, groups []plan.Expr, items []selectItem, having plan.Expr,
	order []orderItem, sc *scope) (*plan.Aggregate, *rewritten, error) {
	agg := &plan.Aggregate{Input: input, Groups: groups}
	groupCol := map[string]plan.ColumnID{}
	for _, g := range groups {
		var id plan.ColumnID
		if r, ok := g.(*plan.ColumnRef); ok {
			id = r.ID
		} else {
			id = b.newColumn(plan.FormatExpr(g, b.md), g.Type(), b.nullable(g))
		}
		agg.GroupCols = append(agg.GroupCols, id)
		groupCol[plan.Key(g)] = id
	}
	aggCol := map[string]plan.ColumnID{}
	collect := func(e plan.Expr) {
		plan.WalkExpr(e, func(x plan.Expr) bool {
			a, ok := x.(*plan.AggCall)
			if !ok {
				return true
			}
			k := plan.Key(a)
			if _, dup := aggCol[k]; !dup {
				id := b.newColumn(plan.FormatExpr(a, b.md), a.T, b.nullable(a))
				aggCol[k] = id
				agg.Aggs = append(agg.Aggs, a)
				agg.AggCols = append(agg.AggCols, id)
			}
			return false
		})
	}
	for _, it := range items {
		collect(it.expr)
	}
	if having != nil {
		collect(having)
	}
	for _, o := range order {
		if o.expr != nil {
			collect(o.expr)
		}
	}
	if err := sortForGroupConcat(agg); err != nil {
		return nil, nil, err
	}

	rw := func(e plan.Expr) plan.Expr {
		return plan.RewriteExpr(e, func(x plan.Expr) (plan.Expr, bool) {
			k := plan.Key(x)
			if id, ok := groupCol[k]; ok {
				return b.md.Ref(id), true
			}
			if _, ok := x.(*plan.AggCall); ok {
				return b.md.Ref(aggCol[k]), true
			}
			return nil, false
		})
	}
	produced := plan.OutputSet(agg)
	local := sc.localCols()
	// stray returns a FROM column that e reads outside the aggregate's output.
	stray := func(e plan.Expr) (plan.ColumnID, bool) {
		used := plan.Refs(e)
		plan.WalkExpr(e, func(x plan.Expr) bool {
			if s, ok := x.(*plan.Subquery); ok {
				used.UnionWith(plan.OuterRefs(s.Plan))
			}
			return true
		})
		for _, id := range used.Intersection(local).Difference(produced).Ordered() {
			return id, true
		}
		return 0, false
	}
	out := &rewritten{}
	for i, it := range items {
		e := rw(it.expr)
		if id, bad := stray(e); bad {
			if len(groups) == 0 {
				return nil, nil, sqlerr.New(1140, "In aggregated query without GROUP BY, expression #%d of SELECT list contains nonaggregated column '%s'; this is incompatible with sql_mode=only_full_group_by",
					i+1, b.fullName(id))
			}
			return nil, nil, sqlerr.New(sqlerr.ErWrongFieldWithGroup, "Expression #%d of SELECT list is not in GROUP BY clause and contains nonaggregated column '%s' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by",
				i+1, b.fullName(id))
		}
		out.items = append(out.items, e)
	}
	if having != nil {
		out.having = rw(having)
		if id, bad := stray(out.having); bad {
			return nil, nil, sqlerr.UnknownColumn(b.md.Column(id).Name, "having clause")
		}
	}
	for _, o := range order {
		if o.expr == nil {
			out.order = append(out.order, nil)
			continue
		}
		e := rw(o.expr)
		if id, bad := stray(e); bad {
			return nil, nil, sqlerr.New(sqlerr.ErWrongFieldWithGroup, "Expression #%d of ORDER BY clause is not in GROUP BY clause and contains nonaggregated column '%s' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by",
				o.pos+1, b.fullName(id))
		}
		out.order = append(out.order, e)
	}
	for _, a := range agg.Aggs {
		a.Order = nil // the Sort below holds it now; the calls are rewritten away above
	}
	return agg, out, nil
}

// sortForGroupConcat puts a Sort by GROUP_CONCAT's ORDER BY under the aggregation, which
// keeps each group's rows in the order they arrive. Every GROUP_CONCAT with an ORDER BY in
// one SELECT must then have the same one.
func sortForGroupConcat(agg *plan.Aggregate) error {
	var keys []plan.SortKey
	var first string
	for _, a := range agg.Aggs {
		if len(a.Order) == 0 {
			continue
		}
		k := sortKeysKey(a.Order)
		if keys == nil {
			keys, first = a.Order, k
		} else if k != first {
			return sqlerr.Unsupported("GROUP_CONCAT calls with different ORDER BY clauses in one SELECT")
		}
	}
	if keys != nil {
		agg.Input = &plan.Sort{Input: agg.Input, Keys: keys}
	}
	return nil
}

func sortKeysKey(keys []plan.SortKey) string {
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(plan.Key(k.Expr))
		if k.Desc {
			b.WriteString(" desc")
		}
		b.WriteByte(',')
	}
	return b.String()
}

// fullName names a column as MySQL's messages do: db.table.column for a stored column.
func (b *Binder) fullName(id plan.ColumnID) string {
	c := b.md.Column(id)
	if c.BaseColumn != "" {
		return c.DB + "." + c.BaseTable + "." + c.BaseColumn
	}
	return c.Name
}

// condition binds a boolean expression (WHERE, HAVING, ON).
func (b *Binder) condition(e ast.ExprNode, ctx *exprCtx) (plan.Expr, error) {
	x, err := b.expr(e, ctx)
	if err != nil {
		return nil, err
	}
	return b.toBool(x, exprText(e))
}

// toBool makes a condition of an expression: booleans as they are, numbers as "<> 0"
// (MySQL's truth), anything else an error.
func (b *Binder) toBool(e plan.Expr, text string) (plan.Expr, error) {
	t := e.Type()
	switch {
	case t.Kind == types.Bool:
		return e, nil
	case t.Kind == types.Null:
		return plan.Lit(types.NullValue(types.BoolType)), nil
	case t.IsNumeric():
		zero, err := b.castTo(plan.Lit(types.IntValue(0)), t, text)
		if err != nil {
			return nil, err
		}
		return plan.NewBool(plan.FnNe, e, zero), nil
	}
	return nil, sqlerr.New(sqlerr.ErWrongArguments, "Incorrect arguments to condition: '%s' is %s, not a boolean", text, t)
}
