package bind

import (
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// Show binds SHOW DATABASES, SHOW [FULL] TABLES [FROM db] [LIKE p] and SHOW COLUMNS /
// DESCRIBE as a query over literal rows taken from the catalog, so the front end runs them
// like any query.
func (b *Binder) Show(s *ast.ShowStmt) (*plan.Query, error) {
	switch s.Tp {
	case ast.ShowDatabases, ast.ShowTables, ast.ShowColumns, ast.ShowCreateTable, ast.ShowCreateView, ast.ShowTableStatus, ast.ShowTriggers,
		ast.ShowCharset, ast.ShowCollation:
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
	if s.Where != nil && (s.Tp == ast.ShowCreateTable || s.Tp == ast.ShowCreateView) {
		return nil, sqlerr.New(sqlerr.ErParse, "You have an error in your SQL syntax: SHOW CREATE takes no WHERE")
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
		db, err := b.showDB(s.DBName)
		if err != nil {
			return nil, err
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
	case ast.ShowCreateTable, ast.ShowCreateView:
		var err error
		if names, rows, err = b.showCreate(s); err != nil {
			return nil, err
		}
	case ast.ShowTableStatus:
		db, err := b.showDB(s.DBName)
		if err != nil {
			return nil, err
		}
		tables, ok := b.cat.Tables(db)
		if !ok {
			return nil, sqlerr.New(sqlerr.ErBadDB, "Unknown database '%s'", db)
		}
		names = []string{"Name", "Engine", "Version", "Row_format", "Rows", "Avg_row_length", "Data_length", "Max_data_length",
			"Index_length", "Data_free", "Auto_increment", "Create_time", "Update_time", "Check_time", "Collation", "Checksum",
			"Create_options", "Comment"}
		stats, _ := b.cat.(catalog.Stats)
		const null = "\x00"
		for _, t := range tables {
			if ok, _ := match(t); !ok {
				continue
			}
			if _, isView := b.cat.View(db, t); isView {
				rows = append(rows, []string{t, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, "VIEW"})
				continue
			}
			count := null
			if stats != nil {
				if r, ok := stats.TableRows(db, t); ok {
					count = strconv.FormatInt(int64(r), 10)
				}
			}
			rows = append(rows, []string{t, "colink", "10", "Fixed", count, null, null, null, "0", "0", null, null, null, null,
				"utf8mb4_0900_ai_ci", null, "", ""})
		}
	case ast.ShowCharset:
		// The one character set colink stores and sends text in.
		names = []string{"Charset", "Description", "Default collation", "Maxlen"}
		if ok, _ := match("utf8mb4"); ok {
			rows = append(rows, []string{"utf8mb4", "UTF-8 Unicode", "utf8mb4_0900_ai_ci", "4"})
		}
	case ast.ShowCollation:
		// colink compares text byte-wise, as utf8mb4_bin does; the others are the names
		// clients ask for, compared the same way (see the README's differences from MySQL).
		names = []string{"Collation", "Charset", "Id", "Default", "Compiled", "Sortlen", "Pad_attribute"}
		for _, c := range [][]string{
			{"utf8mb4_0900_ai_ci", "utf8mb4", "255", "Yes", "Yes", "0", "NO PAD"},
			{"utf8mb4_bin", "utf8mb4", "46", "", "Yes", "1", "PAD SPACE"},
			{"utf8mb4_general_ci", "utf8mb4", "45", "", "Yes", "1", "PAD SPACE"},
		} {
			if ok, _ := match(c[0]); ok {
				rows = append(rows, c)
			}
		}
	case ast.ShowTriggers:
		names = []string{"Trigger", "Event", "Table", "Statement", "Timing", "Created", "sql_mode", "Definer",
			"character_set_client", "collation_connection", "Database Collation"} // colink has no triggers
	case ast.ShowColumns:
		if s.Table == nil {
			return nil, sqlerr.Unsupported("SHOW COLUMNS without a table")
		}
		names = []string{"Field", "Type", "Null", "Key", "Default", "Extra"}
		q, err := b.describe(s.Table, s.DBName)
		if err != nil {
			return nil, err
		}
		defaults := map[string]string{}
		db := s.DBName
		if db == "" {
			if db = s.Table.Schema.O; db == "" {
				db = b.env.Database()
			}
		}
		for _, c := range b.tableColumns(db, s.Table.Name.O) {
			if c.Default != nil {
				defaults[c.Name] = *c.Default
			}
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
			def, ok := defaults[n]
			if !ok {
				def = "\x00" // NULL
			}
			rows = append(rows, []string{n, columnType(q.MD.Column(id).Type), null, "", def, ""})
		}
	}
	v := &plan.Values{}
	colTypes := make([]types.Type, len(names))
	for i, n := range names {
		colTypes[i] = types.VarcharType(64)
		if showNumeric[n] && s.Tp != ast.ShowColumns {
			colTypes[i] = types.Int64Type
		}
		v.Cols = append(v.Cols, b.newColumn(n, colTypes[i], false))
	}
	for _, r := range rows {
		row := make([]plan.Expr, len(r))
		for i, text := range r {
			t := colTypes[i]
			n, err := strconv.ParseInt(text, 10, 64)
			switch {
			case text == "\x00" || t.Kind == types.Int64 && err != nil:
				row[i] = plan.Lit(types.NullValue(t))
				b.md.Column(v.Cols[i]).Nullable = true
			case t.Kind == types.Int64:
				row[i] = plan.Lit(types.Value{Type: t, Int: n})
			default:
				row[i] = plan.Lit(types.Value{Type: t, Str: text})
			}
		}
		v.Rows = append(v.Rows, row)
	}
	var root plan.Node = v
	if s.Where != nil {
		// SHOW … WHERE: the condition over the result's columns, by their names.
		r := &rel{}
		for i, n := range names {
			r.cols = append(r.cols, relCol{name: n, id: v.Cols[i]})
		}
		cond, err := b.expr(s.Where, &exprCtx{sc: &scope{rels: []*rel{r}}, clause: "where clause"})
		if err != nil {
			return nil, err
		}
		root = &plan.Filter{Input: v, Conds: []plan.Expr{cond}}
	}
	return &plan.Query{Root: root, Names: names, MD: b.md}, nil
}

// showCreate answers SHOW CREATE TABLE and SHOW CREATE VIEW: a table's CREATE TABLE with
// its columns' types and NULL-ability, in the form mariadb-dump writes; a view's CREATE VIEW
// with its stored query.
func (b *Binder) showCreate(s *ast.ShowStmt) ([]string, [][]string, error) {
	db, err := b.showDB(s.Table.Schema.O)
	if err != nil {
		return nil, nil, err
	}
	name := s.Table.Name.O
	quote := func(id string) string { return "`" + strings.ReplaceAll(id, "`", "``") + "`" }
	if v, ok := b.cat.View(db, name); ok {
		text := "CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW " + quote(v.Name)
		if len(v.Columns) > 0 {
			var cs []string
			for _, c := range v.Columns {
				cs = append(cs, quote(c))
			}
			text += " (" + strings.Join(cs, ",") + ")"
		}
		text += " AS " + v.Query
		return []string{"View", "Create View", "character_set_client", "collation_connection"},
			[][]string{{v.Name, text, "utf8mb4", "utf8mb4_0900_ai_ci"}}, nil
	}
	if s.Tp == ast.ShowCreateView {
		if _, ok := b.cat.Table(db, name); ok {
			return nil, nil, sqlerr.New(1347, "'%s.%s' is not VIEW", db, name)
		}
		return nil, nil, sqlerr.NoSuchTable(db, name)
	}
	t, ok := b.cat.Table(db, name)
	if !ok {
		if _, ok := b.cat.Tables(db); !ok {
			return nil, nil, sqlerr.New(sqlerr.ErBadDB, "Unknown database '%s'", db)
		}
		return nil, nil, sqlerr.NoSuchTable(db, name)
	}
	var sb strings.Builder
	sb.WriteString("CREATE TABLE " + quote(t.Name) + " (\n")
	for i, c := range t.Columns {
		sb.WriteString("  " + quote(c.Name) + " " + columnType(c.Type))
		if !c.Nullable {
			sb.WriteString(" NOT NULL")
		}
		switch {
		case c.Default != nil && *c.Default == vec.DefaultNow && c.Type.Kind == types.Datetime:
			sb.WriteString(" DEFAULT CURRENT_TIMESTAMP")
			if c.Type.Scale > 0 {
				sb.WriteString("(" + strconv.Itoa(c.Type.Scale) + ")")
			}
		case c.Default != nil:
			// MySQL quotes every literal default, numbers too.
			sb.WriteString(" DEFAULT '" + strings.ReplaceAll(*c.Default, "'", "''") + "'")
		case c.Nullable:
			sb.WriteString(" DEFAULT NULL")
		}
		if i < len(t.Columns)-1 {
			sb.WriteString(",")
		}
		sb.WriteString("\n")
	}
	sb.WriteString(") ENGINE=colink DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci")
	return []string{"Table", "Create Table"}, [][]string{{t.Name, sb.String()}}, nil
}

// showDB is the database a SHOW names, or else the session's.
func (b *Binder) showDB(named string) (string, error) {
	if named != "" {
		return named, nil
	}
	if db := b.env.Database(); db != "" {
		return db, nil
	}
	return "", sqlerr.New(sqlerr.ErNoDBError, "No database selected")
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

// showNumeric holds the SHOW results' columns that MySQL types as numbers, so that WHERE
// compares them as numbers.
var showNumeric = map[string]bool{"Id": true, "Sortlen": true, "Maxlen": true, "Rows": true, "Version": true,
	"Avg_row_length": true, "Data_length": true, "Max_data_length": true, "Index_length": true, "Data_free": true,
	"Auto_increment": true, "Checksum": true}

// showClause holds the keywords that begin a SHOW statement's clauses rather than name it.
var showClause = map[string]bool{"FROM": true, "IN": true, "LIKE": true, "WHERE": true, "FOR": true, "LIMIT": true, "USING": true}
