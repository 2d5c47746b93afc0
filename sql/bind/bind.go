// Package bind owns the binder: it turns a parsed statement (TiDB's AST) into a logical plan
// (package plan), resolving every table against the catalog and every column name against
// the tables in scope, typing every expression by MySQL's rules and inserting the casts
// where operands of different types meet. Subqueries stay as plan.Subquery expressions;
// the optimiser decorrelates them.
//
// Errors are *sqlerr.Error with MySQL's codes and wording: 1146 for an unknown table, 1054
// for an unknown column (naming the clause), 1052 for an ambiguous one, 1055 for a column
// outside GROUP BY, 1235 for SQL colink does not run.
package bind

import (
	"math"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// Env is what the binder needs from the client's session.
type Env interface {
	// Database is the current database ("" when none is selected).
	Database() string
	// SystemVariable returns @@name (@@global.name when global).
	SystemVariable(name string, global bool) (types.Value, bool)
	// UserVariable returns @name.
	UserVariable(name string) (types.Value, bool)
}

// AccountEnv is an Env of a client session, which knows its account: USER() and
// CURRENT_USER() are "user@host" of it.
type AccountEnv interface {
	Account() string
}

// maxViewDepth bounds views that refer to views, so a cycle fails instead of recursing.
const maxViewDepth = 32

// Binder binds the statements of one query; use a new Binder per statement. It is not safe
// for concurrent use.
type Binder struct {
	cat       catalog.Catalog
	env       Env
	md        *plan.Metadata
	ctes      []*cte
	viewDepth int
	parser    *parser.Parser
	now       time.Time // the statement's time, once asked (statementTime)
}

// New returns a binder resolving names in cat for the session env.
func New(cat catalog.Catalog, env Env) *Binder {
	return &Binder{cat: cat, env: env, md: plan.NewMetadata()}
}

// Metadata returns the column metadata of what the binder has bound.
func (b *Binder) Metadata() *plan.Metadata { return b.md }

// cte is a WITH clause's named query, visible to the statements after its definition.
type cte struct {
	name string
	def  *ast.CommonTableExpression
	// visible is how many entries of Binder.ctes the CTE's own body may see.
	visible int
}

// outCol is a column a SELECT produces: its result name and its ID.
type outCol struct {
	name string
	id   plan.ColumnID
}

// scope holds the tables a SELECT's expressions can name; outer is the enclosing query's
// scope, whose columns a subquery may reference (correlation).
type scope struct {
	outer *scope
	rels  []*rel
}

// rel is one table-like item of a FROM clause under its qualifier.
type rel struct {
	name string // the alias, or the table's name
	db   string // the database of a stored table or view, for db.table.column names
	cols []relCol
}

// relCol is a column of a rel. A hidden column is the right-hand copy of a USING or
// NATURAL join column: only a qualified name finds it.
type relCol struct {
	name   string
	id     plan.ColumnID
	hidden bool
}

// localCols returns the columns of the scope's own tables (not of outer scopes).
func (s *scope) localCols() plan.ColSet {
	var c plan.ColSet
	for _, r := range s.rels {
		for _, col := range r.cols {
			c.Add(col.id)
		}
	}
	return c
}

// Query binds a SELECT (or a parenthesised one) as a whole query.
func (b *Binder) Query(stmt ast.ResultSetNode) (*plan.Query, error) {
	n, cols, err := b.resultSet(stmt, nil)
	if err != nil {
		return nil, err
	}
	q := &plan.Query{Root: n, MD: b.md}
	for _, c := range cols {
		q.Names = append(q.Names, c.name)
	}
	// The root's output must be exactly the result columns.
	out := n.Output()
	if len(out) != len(cols) {
		q.Root = b.projectCols(n, cols)
	} else {
		for i, c := range cols {
			if out[i] != c.id {
				q.Root = b.projectCols(n, cols)
				break
			}
		}
	}
	return q, nil
}

// projectCols puts a Project of exactly cols on top of n.
func (b *Binder) projectCols(n plan.Node, cols []outCol) plan.Node {
	p := &plan.Project{Input: n}
	for _, c := range cols {
		p.Exprs = append(p.Exprs, b.md.Ref(c.id))
		p.Cols = append(p.Cols, c.id)
	}
	return p
}

// resultSet binds a query expression: a SELECT, or a set operation (not supported yet).
func (b *Binder) resultSet(stmt ast.ResultSetNode, outer *scope) (plan.Node, []outCol, error) {
	switch s := stmt.(type) {
	case *ast.SelectStmt:
		return b.selectStmt(s, outer)
	case *ast.SetOprStmt:
		return nil, nil, sqlerr.Unsupported("UNION, INTERSECT and EXCEPT")
	case *ast.SubqueryExpr:
		return b.resultSet(s.Query, outer)
	}
	return nil, nil, sqlerr.Unsupported("this kind of query")
}

// newColumn registers a computed column.
func (b *Binder) newColumn(name string, t types.Type, nullable bool) plan.ColumnID {
	return b.md.Add(plan.ColumnMeta{Name: name, Type: t, Nullable: nullable})
}

// nullable reports whether an expression can yield NULL, from the columns' metadata.
func (b *Binder) nullable(e plan.Expr) bool {
	switch x := e.(type) {
	case *plan.ColumnRef:
		return b.md.Column(x.ID).Nullable
	case *plan.Literal:
		return x.V.Null
	case *plan.AggCall:
		return x.Fn != plan.AggCount && x.Fn != plan.AggCountStar
	case *plan.Subquery:
		return x.Kind == plan.SubqueryScalar || x.Kind == plan.SubqueryIn
	case *plan.Case:
		if x.Else == nil {
			return true
		}
		for _, w := range x.Whens {
			if b.nullable(w.Then) {
				return true
			}
		}
		return b.nullable(x.Else)
	case *plan.Call:
		switch x.Fn {
		case plan.FnDiv, plan.FnIntDiv, plan.FnMod:
			return true // division by zero is NULL
		case plan.FnIsNull, plan.FnIsTrue, plan.FnIsFalse, plan.FnNullSafeEq:
			return false
		case plan.FnCoalesce:
			for _, a := range x.Args {
				if !b.nullable(a) {
					return false
				}
			}
			return true
		}
	}
	for _, c := range plan.Children(e) {
		if b.nullable(c) {
			return true
		}
	}
	return false
}

// selectStmt binds one SELECT … FROM … WHERE … GROUP BY … HAVING … ORDER BY … LIMIT.
// The plan it builds, bottom up: FROM, Filter (WHERE), Aggregate, Filter (HAVING),
// Project (select list and hidden ORDER BY columns), Distinct, Sort, Limit, and a Project
// that drops the hidden columns.
func (b *Binder) selectStmt(sel *ast.SelectStmt, outer *scope) (plan.Node, []outCol, error) {
	if sel.Kind != ast.SelectStmtKindSelect {
		return nil, nil, sqlerr.Unsupported("VALUES and TABLE statements")
	}
	if sel.SelectIntoOpt != nil {
		return nil, nil, sqlerr.Unsupported("SELECT … INTO")
	}
	if len(sel.WindowSpecs) > 0 {
		return nil, nil, sqlerr.Unsupported("window functions")
	}
	if sel.GroupBy != nil && sel.GroupBy.Rollup {
		return nil, nil, sqlerr.Unsupported("GROUP BY … WITH ROLLUP")
	}
	if sel.With != nil {
		mark := len(b.ctes)
		defer func() { b.ctes = b.ctes[:mark] }()
		if sel.With.IsRecursive {
			return nil, nil, sqlerr.Unsupported("recursive common table expressions")
		}
		for _, c := range sel.With.CTEs {
			for _, prev := range b.ctes[mark:] {
				if strings.EqualFold(prev.name, c.Name.O) {
					return nil, nil, sqlerr.New(sqlerr.ErNonUniqTable, "Not unique table/alias: '%s'", c.Name.O)
				}
			}
			b.ctes = append(b.ctes, &cte{name: c.Name.O, def: c, visible: len(b.ctes)})
		}
	}

	sc := &scope{outer: outer}
	var input plan.Node
	if sel.From == nil {
		input = &plan.Values{Rows: [][]plan.Expr{{}}}
	} else {
		n, rels, err := b.from(sel.From.TableRefs, outer)
		if err != nil {
			return nil, nil, err
		}
		input, sc.rels = n, rels
	}

	if sel.Where != nil {
		cond, err := b.condition(sel.Where, &exprCtx{sc: sc, clause: "where clause"})
		if err != nil {
			return nil, nil, err
		}
		input = &plan.Filter{Input: input, Conds: plan.Conjuncts(cond)}
	}

	// The select list, in its pre-aggregation form.
	items, err := b.selectItems(sel.Fields.Fields, sc)
	if err != nil {
		return nil, nil, err
	}

	groups, err := b.groupBy(sel.GroupBy, items, sc)
	if err != nil {
		return nil, nil, err
	}

	var having plan.Expr
	if sel.Having != nil {
		having, err = b.condition(sel.Having.Expr, &exprCtx{sc: sc, clause: "having clause", allowAgg: true, items: items, fromFirst: true})
		if err != nil {
			return nil, nil, err
		}
	}

	order, err := b.orderBy(sel.OrderBy, items, sc)
	if err != nil {
		return nil, nil, err
	}

	aggregating := sel.GroupBy != nil || (having != nil && plan.HasAgg(having))
	for _, it := range items {
		aggregating = aggregating || plan.HasAgg(it.expr)
	}
	for _, o := range order {
		aggregating = aggregating || (o.expr != nil && plan.HasAgg(o.expr))
	}

	if aggregating {
		agg, rw, err := b.aggregate(input, groups, items, having, order, sc)
		if err != nil {
			return nil, nil, err
		}
		input = agg
		for i := range items {
			items[i].expr = rw.items[i]
		}
		having = rw.having
		for i := range order {
			if order[i].expr != nil {
				order[i].expr = rw.order[i]
			}
		}
	}
	if having != nil {
		input = &plan.Filter{Input: input, Conds: plan.Conjuncts(having)}
	}

	// The select list, then ORDER BY expressions that are not in it (hidden columns).
	proj := &plan.Project{Input: input}
	var cols []outCol
	for _, it := range items {
		id := b.itemColumn(it)
		proj.Exprs = append(proj.Exprs, it.expr)
		proj.Cols = append(proj.Cols, id)
		cols = append(cols, outCol{name: it.name, id: id})
	}
	var keys []plan.SortKey
	hidden := false
	for _, o := range order {
		var ref plan.Expr
		switch {
		case o.item >= 0:
			ref = b.md.Ref(proj.Cols[o.item])
		default:
			// An expression equal to a select item sorts by that item.
			k := plan.Key(o.expr)
			for i, e := range proj.Exprs[:len(items)] {
				if plan.Key(e) == k {
					ref = b.md.Ref(proj.Cols[i])
					break
				}
			}
			if ref == nil {
				if sel.Distinct {
					return nil, nil, sqlerr.New(sqlerr.ErFieldNotInGroupBy,
						"Expression #%d of ORDER BY clause is not in SELECT list, references column '%s' which is not in SELECT list; this is incompatible with DISTINCT",
						o.pos+1, o.text)
				}
				id := b.itemColumn(selectItem{expr: o.expr, name: plan.FormatExpr(o.expr, b.md)})
				proj.Exprs = append(proj.Exprs, o.expr)
				proj.Cols = append(proj.Cols, id)
				ref = b.md.Ref(id)
				hidden = true
			}
		}
		keys = append(keys, plan.SortKey{Expr: ref, Desc: o.desc})
	}
	var out plan.Node = proj
	if sel.Distinct {
		out = &plan.Distinct{Input: out}
	}
	if len(keys) > 0 {
		out = &plan.Sort{Input: out, Keys: keys}
	}
	if sel.Limit != nil {
		count, offset, err := b.limit(sel.Limit)
		if err != nil {
			return nil, nil, err
		}
		out = &plan.Limit{Input: out, Count: count, Offset: offset}
	}
	if hidden {
		out = b.projectCols(out, cols)
	}
	return out, cols, nil
}

// itemColumn returns the output column of a select item: the column itself when the item
// is a plain column reference, else a new computed column named after the item.
func (b *Binder) itemColumn(it selectItem) plan.ColumnID {
	if r, ok := it.expr.(*plan.ColumnRef); ok {
		// A computed column (an aggregate, a group expression) takes the item's alias, so
		// plans print "revenue" rather than the aggregate's text.
		if c := b.md.Column(r.ID); c.Table == "" && it.alias {
			c.Name = it.name
		}
		return r.ID
	}
	return b.newColumn(it.name, it.expr.Type(), b.nullable(it.expr))
}

// limit reads LIMIT count [OFFSET offset], which must be non-negative integer literals up
// to 2^64-1, as in MySQL (LIMIT 95, 18446744073709551615 is its idiom for "from row 95 to
// the end"). No result has 2^63 rows, so the values are clamped to int64 and a count that
// reaches past row 2^63-1 means no limit (-1): offset+count never overflows an int64, which
// the operators and the partial limits pushed into fragments rely on.
func (b *Binder) limit(l *ast.Limit) (count, offset int64, err error) {
	read := func(e ast.ExprNode) (int64, error) {
		v, ok := e.(ast.ValueExpr)
		if !ok {
			return 0, sqlerr.Unsupported("LIMIT with a non-literal count")
		}
		switch x := v.GetValue().(type) {
		case int64:
			if x >= 0 {
				return x, nil
			}
		case uint64:
			return int64(min(x, math.MaxInt64)), nil
		}
		return 0, sqlerr.New(sqlerr.ErWrongArguments, "Incorrect arguments to LIMIT")
	}
	count, offset = -1, 0
	if l.Count != nil {
		if count, err = read(l.Count); err != nil {
			return 0, 0, err
		}
	}
	if l.Offset != nil {
		if offset, err = read(l.Offset); err != nil {
			return 0, 0, err
		}
	}
	if count > math.MaxInt64-offset {
		count = -1
	}
	return count, offset, nil
}
