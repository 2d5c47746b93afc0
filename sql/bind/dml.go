package bind

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/fold"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// target resolves the stored table a DML statement writes.
func (b *Binder) target(refs *ast.TableRefsClause, what string) (*catalog.Table, string, error) {
	if refs == nil || refs.TableRefs == nil || refs.TableRefs.Right != nil {
		return nil, "", sqlerr.Unsupported(what + " on more than one table")
	}
	ts, ok := refs.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return nil, "", sqlerr.Unsupported(what + " on this kind of table")
	}
	tn, ok := ts.Source.(*ast.TableName)
	if !ok {
		return nil, "", sqlerr.Unsupported(what + " on a derived table")
	}
	db := tn.Schema.O
	if db == "" {
		if db = b.env.Database(); db == "" {
			return nil, "", sqlerr.New(sqlerr.ErNoDBError, "No database selected")
		}
	}
	if _, ok := b.cat.View(db, tn.Name.O); ok {
		return nil, "", sqlerr.New(1471, "The target table %s of the %s is not insertable-into", tn.Name.O, what)
	}
	t, ok := b.cat.Table(db, tn.Name.O)
	if !ok {
		if _, ok := b.cat.Tables(db); !ok {
			return nil, "", sqlerr.New(sqlerr.ErBadDB, "Unknown database '%s'", db)
		}
		return nil, "", sqlerr.NoSuchTable(db, tn.Name.O)
	}
	alias := ts.AsName.O
	if alias == "" {
		alias = t.Name
	}
	return t, alias, nil
}

// Insert binds INSERT INTO t [(columns)] VALUES (…), … and INSERT INTO t [(columns)]
// SELECT …: a plan.Insert whose input produces the table's columns, in order, of their
// types. A column the statement leaves out, or gives as DEFAULT, takes its DEFAULT: NULL
// if it has none, or an error when it cannot be NULL.
func (b *Binder) Insert(s *ast.InsertStmt) (*plan.Query, error) {
	switch {
	case s.IsReplace:
		return nil, sqlerr.Unsupported("REPLACE")
	case s.IgnoreErr:
		return nil, sqlerr.Unsupported("INSERT IGNORE")
	case len(s.OnDuplicate) > 0:
		return nil, sqlerr.Unsupported("INSERT … ON DUPLICATE KEY UPDATE")
	case s.Setlist:
		return nil, sqlerr.Unsupported("INSERT … SET")
	}
	t, _, err := b.target(s.Table, "INSERT")
	if err != nil {
		return nil, err
	}
	// pos[i] is the table column that value i of a row goes to.
	var pos []int
	if len(s.Columns) == 0 {
		for i := range t.Columns {
			pos = append(pos, i)
		}
	} else {
		seen := map[int]bool{}
		for _, c := range s.Columns {
			i := t.ColumnIndex(c.Name.O)
			if i < 0 {
				return nil, sqlerr.UnknownColumn(c.Name.O, "field list")
			}
			if seen[i] {
				return nil, sqlerr.New(1110, "Column '%s' specified twice", c.Name.O)
			}
			seen[i] = true
			pos = append(pos, i)
		}
	}
	given := map[int]int{} // table column → value position
	for v, i := range pos {
		given[i] = v
	}
	defaults := make([]types.Value, len(t.Columns))
	for i, c := range t.Columns {
		if defaults[i], err = b.defaultValue(c); err != nil {
			return nil, err
		}
		if _, ok := given[i]; !ok && !c.Nullable && c.Default == nil {
			return nil, sqlerr.New(1364, "Field '%s' doesn't have a default value", c.Name)
		}
	}
	var input plan.Node
	if s.Select != nil {
		q, err := b.Query(s.Select)
		if err != nil {
			return nil, err
		}
		out := q.Root.Output()
		if len(out) != len(pos) {
			return nil, sqlerr.New(sqlerr.ErWrongValueCountOnRow, "Column count doesn't match value count at row 1")
		}
		p := &plan.Project{Input: q.Root}
		for i, c := range t.Columns {
			var e plan.Expr = plan.Lit(defaults[i])
			if v, ok := given[i]; ok {
				from := b.md.Ref(out[v])
				if !assignable(from.T, c.Type) {
					return nil, sqlerr.New(1366, "Incorrect %s value for column '%s': the query gives %s", c.Type, c.Name, from.T)
				}
				e = b.castExpr(from, c.Type)
			}
			p.Exprs = append(p.Exprs, e)
			p.Cols = append(p.Cols, b.newColumn(c.Name, c.Type, c.Nullable))
		}
		input = p
	} else {
		v := &plan.Values{}
		for _, c := range t.Columns {
			v.Cols = append(v.Cols, b.newColumn(c.Name, c.Type, c.Nullable))
		}
		for r, list := range s.Lists {
			if len(list) != len(pos) {
				return nil, sqlerr.New(sqlerr.ErWrongValueCountOnRow, "Column count doesn't match value count at row %d", r+1)
			}
			row := make([]plan.Expr, len(t.Columns))
			for i := range t.Columns {
				row[i] = plan.Lit(defaults[i])
			}
			for k, astE := range list {
				i := pos[k]
				c := t.Columns[i]
				if _, isDefault := astE.(*ast.DefaultExpr); isDefault {
					if !c.Nullable && c.Default == nil {
						return nil, sqlerr.New(1364, "Field '%s' doesn't have a default value", c.Name)
					}
					continue
				}
				e, err := b.Constant(astE)
				if err != nil {
					return nil, err
				}
				val, err := fold.Eval(fold.Expr(e))
				if err != nil {
					return nil, sqlerr.Unsupported("INSERT … VALUES with a value that is not a constant")
				}
				if val.Null && !c.Nullable {
					return nil, sqlerr.New(1048, "Column '%s' cannot be null", c.Name)
				}
				if !val.Null && !assignable(val.Type, c.Type) {
					return nil, sqlerr.New(1366, "Incorrect %s value: '%s' for column '%s' at row %d", c.Type, val.Text(), c.Name, r+1)
				}
				conv, err := types.Convert(val, c.Type)
				if err != nil {
					return nil, sqlerr.New(1366, "Incorrect %s value: '%s' for column '%s' at row %d", c.Type, val.Text(), c.Name, r+1)
				}
				if !val.Null && c.Type.IsString() && c.Type.Length > 0 && len([]rune(val.Text())) > c.Type.Length {
					return nil, sqlerr.New(1406, "Data too long for column '%s' at row %d", c.Name, r+1)
				}
				row[i] = plan.Lit(conv)
			}
			v.Rows = append(v.Rows, row)
		}
		input = v
	}
	return &plan.Query{Root: &plan.Insert{DB: t.DB, Table: t.Name, Input: input}, MD: b.md}, nil
}

// assignable reports whether a value of type from may be stored in a column of type to:
// numbers into numbers, strings into anything (parsed), dates and datetimes into either
// and into strings.
func assignable(from, to types.Type) bool {
	switch {
	case from.Kind == types.Null || from.IsString():
		return true
	case from.IsNumeric():
		return to.IsNumeric() || to.IsString()
	case from.Kind == types.Date || from.Kind == types.Datetime:
		return to.Kind == types.Date || to.Kind == types.Datetime || to.IsString()
	}
	return false
}

// Delete binds DELETE FROM t [WHERE …]: a plan.Delete over a scan of t that outputs the
// identity of each row to remove. The condition may hold subqueries (WHERE o_orderkey IN
// (SELECT …)), which the optimiser turns into joins as in any query.
func (b *Binder) Delete(s *ast.DeleteStmt) (*plan.Query, error) {
	switch {
	case s.IsMultiTable:
		return nil, sqlerr.Unsupported("DELETE from several tables")
	case s.Order != nil || s.Limit != nil:
		return nil, sqlerr.Unsupported("DELETE … ORDER BY or LIMIT")
	case s.With != nil:
		return nil, sqlerr.Unsupported("DELETE with WITH")
	}
	t, alias, err := b.target(s.TableRefs, "DELETE")
	if err != nil {
		return nil, err
	}
	tn := &ast.TableName{Schema: ast.NewCIStr(t.DB), Name: ast.NewCIStr(t.Name)}
	n, rels, err := b.tableName(tn, alias)
	if err != nil {
		return nil, err
	}
	scan := n.(*plan.Scan)
	rowID := b.md.Add(plan.ColumnMeta{Name: "_rowid", Table: alias, Type: types.Int64Type})
	scan.Cols = append(scan.Cols, rowID)
	scan.Ordinals = append(scan.Ordinals, plan.RowIDOrdinal)
	var input plan.Node = scan
	if s.Where != nil {
		cond, err := b.condition(s.Where, &exprCtx{sc: &scope{rels: rels}, clause: "where clause"})
		if err != nil {
			return nil, err
		}
		input = &plan.Filter{Input: input, Conds: plan.Conjuncts(cond)}
	}
	input = &plan.Project{Input: input, Exprs: []plan.Expr{b.md.Ref(rowID)}, Cols: []plan.ColumnID{rowID}}
	return &plan.Query{Root: &plan.Delete{DB: t.DB, Table: t.Name, Input: input, RowID: rowID}, MD: b.md}, nil
}

// LoadTarget resolves LOAD DATA's table and column list: the table, and for each field of
// a line the table column it fills.
func (b *Binder) LoadTarget(s *ast.LoadDataStmt) (*catalog.Table, []int, error) {
	refs := &ast.TableRefsClause{TableRefs: &ast.Join{Left: &ast.TableSource{Source: s.Table}}}
	t, _, err := b.target(refs, "LOAD DATA")
	if err != nil {
		return nil, nil, err
	}
	var cols []int
	if len(s.Columns) == 0 && len(s.ColumnsAndUserVars) == 0 {
		for i := range t.Columns {
			cols = append(cols, i)
		}
		return t, cols, nil
	}
	names := s.Columns
	if len(names) == 0 {
		for _, cv := range s.ColumnsAndUserVars {
			if cv.ColumnName == nil {
				return nil, nil, sqlerr.Unsupported("LOAD DATA into user variables")
			}
			names = append(names, cv.ColumnName)
		}
	}
	for _, c := range names {
		i := t.ColumnIndex(c.Name.O)
		if i < 0 {
			return nil, nil, sqlerr.UnknownColumn(c.Name.O, "field list")
		}
		cols = append(cols, i)
	}
	for i, c := range t.Columns {
		found := false
		for _, k := range cols {
			found = found || k == i
		}
		if !found && !c.Nullable && c.Default == nil {
			return nil, nil, sqlerr.New(1364, "Field '%s' doesn't have a default value", strings.ToLower(c.Name))
		}
	}
	return t, cols, nil
}

// ColumnDefault checks a column's DEFAULT expression e for a column of type t and returns
// it as vec.DefaultKey records it: the value's text in the column's type, or
// vec.DefaultNow for CURRENT_TIMESTAMP (NOW(), LOCALTIMESTAMP) on a DATETIME, which
// INSERT reads when the statement runs. DEFAULT NULL is nil. A value the column cannot
// hold is MySQL's 1067, "Invalid default value".
func (b *Binder) ColumnDefault(e ast.ExprNode, t types.Type, notNull bool, col string) (*string, error) {
	invalid := sqlerr.New(1067, "Invalid default value for '%s'", col)
	if f, ok := e.(*ast.FuncCallExpr); ok {
		switch f.FnName.L {
		case ast.CurrentTimestamp, ast.Now, ast.LocalTime, ast.LocalTimestamp:
			if t.Kind != types.Datetime {
				return nil, invalid
			}
			now := vec.DefaultNow
			return &now, nil
		}
	}
	x, err := b.Constant(e)
	if err != nil {
		return nil, err
	}
	v, err := fold.Eval(fold.Expr(x))
	if err != nil {
		return nil, sqlerr.Unsupported(fmt.Sprintf("a DEFAULT that is not a constant for column '%s'", col))
	}
	if v.Null {
		if notNull {
			return nil, invalid
		}
		return nil, nil
	}
	if !assignable(v.Type, t) {
		return nil, invalid
	}
	if t.IsString() && t.Length > 0 && len([]rune(v.Text())) > t.Length {
		return nil, invalid
	}
	c, err := types.Convert(v, t)
	if err != nil {
		return nil, invalid
	}
	text := c.Text()
	return &text, nil
}

// defaultValue is column c's DEFAULT as a constant of its type, now the statement's time:
// NULL for a column without one.
func (b *Binder) defaultValue(c catalog.Column) (types.Value, error) {
	switch {
	case c.Default == nil:
		return types.NullValue(c.Type), nil
	case *c.Default == vec.DefaultNow && c.Type.Kind == types.Datetime:
		return types.DatetimeValue(wallMicros(b.statementTime()), c.Type.Scale), nil
	}
	v, err := types.Convert(types.StringValue(*c.Default), c.Type)
	if err != nil {
		return types.Value{}, sqlerr.New(1067, "Invalid default value for '%s': %s", c.Name, *c.Default)
	}
	return v, nil
}
