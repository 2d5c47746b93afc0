package bind

import (
	"errors"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
)

// from binds a FROM clause: its plan and its tables in order. outer is the scope enclosing
// the SELECT, which derived tables may reference.
func (b *Binder) from(n ast.ResultSetNode, outer *scope) (plan.Node, []*rel, error) {
	switch x := n.(type) {
	case *ast.Join:
		return b.join(x, outer)
	case *ast.TableSource:
		return b.tableSource(x, outer)
	}
	return nil, nil, sqlerr.Unsupported("this kind of FROM item")
}

func (b *Binder) join(j *ast.Join, outer *scope) (plan.Node, []*rel, error) {
	left, lrels, err := b.from(j.Left, outer)
	if err != nil {
		return nil, nil, err
	}
	if j.Right == nil {
		return left, lrels, nil
	}
	right, rrels, err := b.from(j.Right, outer)
	if err != nil {
		return nil, nil, err
	}
	for _, l := range lrels {
		for _, r := range rrels {
			if strings.EqualFold(l.name, r.name) {
				return nil, nil, sqlerr.New(sqlerr.ErNonUniqTable, "Not unique table/alias: '%s'", r.name)
			}
		}
	}
	rels := append(append([]*rel(nil), lrels...), rrels...)
	kind := plan.InnerJoin
	switch j.Tp {
	case ast.LeftJoin:
		kind = plan.LeftJoin
	case ast.RightJoin:
		kind = plan.LeftJoin
	}
	join := &plan.Join{Kind: kind, Left: left, Right: right}
	if j.Tp == ast.RightJoin {
		join.Left, join.Right = right, left
	}
	if j.NaturalJoin || len(j.Using) > 0 {
		if err := b.using(j, join, lrels, rrels); err != nil {
			return nil, nil, err
		}
	}
	if j.On != nil {
		sc := &scope{outer: outer, rels: rels}
		cond, err := b.condition(j.On.Expr, &exprCtx{sc: sc, clause: "on clause"})
		if err != nil {
			return nil, nil, err
		}
		join.On = append(join.On, plan.Conjuncts(cond)...)
	}
	return join, rels, nil
}

// using adds the equalities of JOIN … USING (cols) or NATURAL JOIN and hides the right-hand
// copies of the shared columns from unqualified names and SELECT *.
func (b *Binder) using(j *ast.Join, join *plan.Join, lrels, rrels []*rel) error {
	var names []string
	if j.NaturalJoin {
		for _, l := range lrels {
			for _, lc := range l.cols {
				if lc.hidden {
					continue
				}
				for _, r := range rrels {
					for _, rc := range r.cols {
						if !rc.hidden && strings.EqualFold(lc.name, rc.name) {
							names = append(names, lc.name)
						}
					}
				}
			}
		}
	} else {
		for _, u := range j.Using {
			names = append(names, u.Name.O)
		}
	}
	find := func(rels []*rel, name string) (*relCol, error) {
		var found *relCol
		for _, r := range rels {
			for i := range r.cols {
				c := &r.cols[i]
				if !c.hidden && strings.EqualFold(c.name, name) {
					if found != nil {
						return nil, sqlerr.AmbiguousColumn(name, "from clause")
					}
					found = c
				}
			}
		}
		if found == nil {
			return nil, sqlerr.UnknownColumn(name, "from clause")
		}
		return found, nil
	}
	for _, name := range names {
		l, err := find(lrels, name)
		if err != nil {
			return err
		}
		r, err := find(rrels, name)
		if err != nil {
			return err
		}
		cond, err := b.compare(plan.FnEq, b.md.Ref(l.id), b.md.Ref(r.id), name)
		if err != nil {
			return err
		}
		join.On = append(join.On, cond)
		r.hidden = true
	}
	return nil
}

func (b *Binder) tableSource(ts *ast.TableSource, outer *scope) (plan.Node, []*rel, error) {
	alias := ts.AsName.O
	switch src := ts.Source.(type) {
	case *ast.TableName:
		return b.tableName(src, alias)
	case *ast.SelectStmt, *ast.SetOprStmt:
		if alias == "" {
			return nil, nil, sqlerr.New(1248, "Every derived table must have its own alias")
		}
		if ts.Lateral {
			return nil, nil, sqlerr.Unsupported("LATERAL derived tables")
		}
		n, cols, err := b.resultSet(src.(ast.ResultSetNode), outer)
		if err != nil {
			return nil, nil, err
		}
		r, err := b.derivedRel(alias, "", cols, nil)
		if err != nil {
			return nil, nil, err
		}
		return n, []*rel{r}, nil
	case *ast.Join:
		n, rels, err := b.join(src, outer)
		return n, rels, err
	}
	return nil, nil, sqlerr.Unsupported("this kind of FROM item")
}

// derivedRel makes the rel of a derived table, view or CTE: its columns named by the query
// or by an explicit column list.
func (b *Binder) derivedRel(name, db string, cols []outCol, names []string) (*rel, error) {
	if names != nil && len(names) != len(cols) {
		return nil, sqlerr.New(1353, "In definition of view, derived table or common table expression, SELECT list and column names list have different column counts")
	}
	r := &rel{name: name, db: db}
	seen := map[string]bool{}
	for i, c := range cols {
		n := c.name
		if names != nil {
			n = names[i]
			// A computed column takes the name the list gives it, so plans print it.
			if m := b.md.Column(c.id); m.Table == "" {
				m.Name = n
			}
		}
		if seen[strings.ToLower(n)] {
			return nil, sqlerr.New(sqlerr.ErDupFieldName, "Duplicate column name '%s'", n)
		}
		seen[strings.ToLower(n)] = true
		r.cols = append(r.cols, relCol{name: n, id: c.id})
	}
	return r, nil
}

// tableName binds a named FROM item: a CTE, a view or a stored table, in that order.
func (b *Binder) tableName(tn *ast.TableName, alias string) (plan.Node, []*rel, error) {
	name := tn.Name.O
	if alias == "" {
		alias = name
	}
	if tn.Schema.L == "" {
		for i := len(b.ctes) - 1; i >= 0; i-- {
			c := b.ctes[i]
			if strings.EqualFold(c.name, name) {
				return b.cteRef(c, i, alias)
			}
		}
	}
	db := tn.Schema.O
	if db == "" {
		db = b.env.Database()
		if db == "" {
			return nil, nil, sqlerr.New(sqlerr.ErNoDBError, "No database selected")
		}
	}
	if strings.EqualFold(db, InfoSchema) {
		return b.infoSchemaTable(name, alias)
	}
	if v, ok := b.cat.View(db, name); ok {
		return b.view(v.DB, v.Name, v.Query, v.Columns, alias)
	}
	t, ok := b.cat.Table(db, name)
	if !ok {
		if _, ok := b.cat.Tables(db); !ok {
			return nil, nil, sqlerr.New(sqlerr.ErBadDB, "Unknown database '%s'", db)
		}
		return nil, nil, sqlerr.NoSuchTable(db, name)
	}
	scan := &plan.Scan{DB: t.DB, Table: t.Name, Alias: alias}
	r := &rel{name: alias, db: t.DB}
	for i, c := range t.Columns {
		id := b.md.Add(plan.ColumnMeta{Name: c.Name, Table: alias, Type: c.Type, Nullable: c.Nullable,
			DB: t.DB, BaseTable: t.Name, BaseColumn: c.Name})
		scan.Cols = append(scan.Cols, id)
		scan.Ordinals = append(scan.Ordinals, i)
		r.cols = append(r.cols, relCol{name: c.Name, id: id})
	}
	return scan, []*rel{r}, nil
}

// cteRef binds a reference to a WITH query; each reference binds the query afresh, so two
// references are two independent inputs.
func (b *Binder) cteRef(c *cte, index int, alias string) (plan.Node, []*rel, error) {
	saved := b.ctes
	b.ctes = b.ctes[:c.visible]
	defer func() { b.ctes = saved }()
	_ = index
	n, cols, err := b.resultSet(c.def.Query.Query, nil)
	if err != nil {
		return nil, nil, err
	}
	var names []string
	for _, cn := range c.def.ColNameList {
		names = append(names, cn.O)
	}
	r, err := b.derivedRel(alias, "", cols, names)
	if err != nil {
		return nil, nil, err
	}
	return n, []*rel{r}, nil
}

// view binds a stored view's query as a derived table.
func (b *Binder) view(db, name, query string, colNames []string, alias string) (plan.Node, []*rel, error) {
	if b.viewDepth >= maxViewDepth {
		return nil, nil, sqlerr.New(sqlerr.ErViewRecursive, "`%s`.`%s` contains view recursion", db, name)
	}
	if b.parser == nil {
		b.parser = parser.New()
	}
	stmts, _, err := b.parser.Parse(query, "", "")
	if err != nil {
		return nil, nil, sqlerr.Wrap(err, sqlerr.ErWrongObject, "View '%s.%s' cannot be parsed: %v", db, name, err)
	}
	if len(stmts) != 1 {
		return nil, nil, sqlerr.New(sqlerr.ErWrongObject, "View '%s.%s' is not a single SELECT", db, name)
	}
	rs, ok := stmts[0].(ast.ResultSetNode)
	if !ok {
		return nil, nil, sqlerr.New(sqlerr.ErWrongObject, "View '%s.%s' is not a SELECT", db, name)
	}
	// A view sees the catalog, not the CTEs of the query that uses it, and resolves
	// unqualified tables in its own database.
	savedCTEs, savedEnv := b.ctes, b.env
	b.ctes, b.env = nil, dbEnv{Env: b.env, db: db}
	b.viewDepth++
	defer func() { b.ctes, b.env = savedCTEs, savedEnv; b.viewDepth-- }()
	n, cols, err := b.resultSet(rs, nil)
	if err != nil {
		// As MySQL: a view whose tables or columns have gone is the view's error (1356),
		// not the missing object's, which the user of the view may never have named.
		var se *sqlerr.Error
		if errors.As(err, &se) && (se.Code == sqlerr.ErNoSuchTable || se.Code == sqlerr.ErBadField || se.Code == sqlerr.ErNonUniq) {
			return nil, nil, sqlerr.Wrap(err, sqlerr.ErViewInvalid, "View '%s.%s' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them", db, name)
		}
		return nil, nil, err
	}
	r, err := b.derivedRel(alias, db, cols, colNames)
	if err != nil {
		return nil, nil, err
	}
	return n, []*rel{r}, nil
}

// dbEnv overrides the current database.
type dbEnv struct {
	Env
	db string
}

func (e dbEnv) Database() string { return e.db }
