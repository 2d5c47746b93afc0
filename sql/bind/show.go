package bind

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// Show binds SHOW DATABASES, SHOW [FULL] TABLES [FROM db] [LIKE p] and SHOW COLUMNS /
// DESCRIBE as a query over literal rows taken from the catalog, so the front end runs them
// like any query.
func (b *Binder) Show(s *ast.ShowStmt) (*plan.Query, error) {
	switch s.Tp {
	case ast.ShowDatabases, ast.ShowTables, ast.ShowColumns:
	default:
		return nil, sqlerr.Unsupported(showName(s))
	}
	var names []string
	var rows [][]string
	match := func(v string) (bool, error) { return true, nil }
	if s.Pattern != nil {
		pv, ok := s.Pattern.Pattern.(ast.ValueExpr)
		p, isStr := pv.GetValue().(string)
		if !ok || !isStr {
			return nil, sqlerr.Unsupported("SHOW … LIKE with a non-literal pattern")
		}
		match = func(v string) (bool, error) {
			return types.Like(strings.ToLower(v), strings.ToLower(p), '\\') != s.Pattern.Not, nil
		}
	}
	if s.Where != nil {
		return nil, sqlerr.Unsupported("SHOW … WHERE")
	}
	switch s.Tp {
	case ast.ShowDatabases:
		names = []string{"Database"}
		for _, db := range append([]string{InfoSchema}, b.cat.Databases()...) {
			if ok, _ := match(db); ok {
				rows = append(rows, []string{db})
			}
		}
	case ast.ShowTables:
		db := s.DBName
		if db == "" {
			db = b.env.Database()
			if db == "" {
				return nil, sqlerr.New(sqlerr.ErNoDBError, "No database selected")
			}
		}
		tables, ok := b.cat.Tables(db)
		if strings.EqualFold(db, InfoSchema) {
			tables, ok = InfoSchemaTables(), true
		}
		if !ok {
			return nil, sqlerr.New(sqlerr.ErBadDB, "Unknown database '%s'", db)
		}
		names = []string{"Tables_in_" + db}
		if s.Full {
			names = append(names, "Table_type")
		}
		for _, t := range tables {
			if ok, _ := match(t); !ok {
				continue
			}
			row := []string{t}
			if s.Full {
				kind := "BASE TABLE"
				if strings.EqualFold(db, InfoSchema) {
					kind = "SYSTEM VIEW"
				} else if _, isView := b.cat.View(db, t); isView {
					kind = "VIEW"
				}
				row = append(row, kind)
			}
			rows = append(rows, row)
		}
	case ast.ShowColumns:
		if s.Table == nil {
			return nil, sqlerr.Unsupported("SHOW COLUMNS without a table")
		}
		names = []string{"Field", "Type", "Null", "Key", "Default", "Extra"}
		q, err := b.describe(s.Table, s.DBName)
		if err != nil {
			return nil, err
		}
		for i, n := range q.Names {
			if ok, _ := match(n); !ok {
				continue
			}
			id := q.Root.Output()[i]
			null := "NO"
			if !plan.NotNull(q.Root, q.MD).Has(id) {
				null = "YES"
			}
			rows = append(rows, []string{n, q.MD.Column(id).Type.String(), null, "", "\x00", ""})
		}
	}
	v := &plan.Values{}
	for _, n := range names {
		v.Cols = append(v.Cols, b.newColumn(n, types.VarcharType(64), false))
	}
	for _, r := range rows {
		row := make([]plan.Expr, len(r))
		for i, s := range r {
			if s == "\x00" {
				row[i] = plan.Lit(types.NullValue(types.VarcharType(64)))
				b.md.Column(v.Cols[i]).Nullable = true
			} else {
				row[i] = plan.Lit(types.Value{Type: types.VarcharType(64), Str: s})
			}
		}
		v.Rows = append(v.Rows, row)
	}
	return &plan.Query{Root: v, Names: names, MD: b.md}, nil
}

// describe binds "SELECT * FROM t" to learn a table's or view's columns.
func (b *Binder) describe(t *ast.TableName, db string) (*plan.Query, error) {
	tn := *t
	if db != "" && tn.Schema.L == "" {
		tn.Schema = ast.NewCIStr(db)
	}
	n, rels, err := b.tableName(&tn, "")
	if err != nil {
		return nil, err
	}
	q := &plan.Query{MD: b.md}
	p := &plan.Project{Input: n}
	for _, c := range rels[0].cols {
		p.Exprs = append(p.Exprs, b.md.Ref(c.id))
		p.Cols = append(p.Cols, c.id)
		q.Names = append(q.Names, c.name)
	}
	q.Root = p
	return q, nil
}

// Constant binds an expression that reads no columns (the value of a SET).
func (b *Binder) Constant(e ast.ExprNode) (plan.Expr, error) {
	return b.expr(e, &exprCtx{sc: &scope{}, clause: "field list"})
}

// showName names a SHOW statement as MySQL's manual does, by its keywords: "SHOW ENGINES",
// "SHOW CREATE TABLE", "SHOW GLOBAL STATUS": the statement as the parser restores it (its
// keywords upper case, its names quoted) up to its first name, literal or clause.
func showName(s *ast.ShowStmt) string {
	var sb strings.Builder
	if err := s.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &sb)); err != nil {
		return "this SHOW statement"
	}
	var words []string
	for _, w := range strings.Fields(sb.String()) {
		if w != strings.ToUpper(w) || strings.ContainsAny(w, "`'\"()=,@.0123456789") || showClause[w] {
			break
		}
		words = append(words, w)
	}
	if len(words) < 2 {
		return "this SHOW statement"
	}
	return strings.Join(words, " ")
}

// showClause holds the keywords that begin a SHOW statement's clauses rather than name it.
var showClause = map[string]bool{"FROM": true, "IN": true, "LIKE": true, "WHERE": true, "FOR": true, "LIMIT": true, "USING": true}
