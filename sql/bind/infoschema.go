package bind

import (
	"slices"
	"strings"

	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// InfoSchema is the name of the read-only database of catalog tables that BI tools and
// ORMs read before they query: SCHEMATA, TABLES, COLUMNS, VIEWS, STATISTICS (empty: colink
// has no indexes) and ENGINES, with MySQL's column names. A reference to one binds as
// literal rows taken from the catalog when the statement is bound, so WHERE, LIKE, joins
// and subqueries over it work as over any table.
const InfoSchema = "information_schema"

// infoSchemaTables lists the tables of InfoSchema, sorted, in upper case as MySQL names
// them.
var infoSchemaTables = []string{"COLUMNS", "ENGINES", "FILES", "PARTITIONS", "SCHEMATA", "STATISTICS", "TABLES", "TRIGGERS", "VIEWS"}

// InfoSchemaTables returns the names of InfoSchema's tables.
func InfoSchemaTables() []string { return slices.Clone(infoSchemaTables) }

// isCol is one column of an information_schema table.
type isCol struct {
	name string
	t    types.Type
}

// infoSchemaTable binds information_schema.name as literal rows.
func (b *Binder) infoSchemaTable(name, alias string) (plan.Node, []*rel, error) {
	str := func(n string) isCol { return isCol{n, types.VarcharType(64)} }
	long := func(n string) isCol { return isCol{n, types.VarcharType(65535)} }
	num := func(n string) isCol { return isCol{n, types.Int64Type} }
	var cols []isCol
	var rows [][]types.Value
	s := func(v string) types.Value { return types.Value{Type: types.VarcharType(64), Str: v} }
	n := func(v int64) types.Value { return types.Value{Type: types.Int64Type, Int: v} }
	null := types.NullValue(types.VarcharType(64))
	nullNum := types.NullValue(types.Int64Type)
	const charset, collation = "utf8mb4", "utf8mb4_0900_ai_ci"

	dbs := b.cat.Databases()
	switch strings.ToUpper(name) {
	case "SCHEMATA":
		cols = []isCol{str("CATALOG_NAME"), str("SCHEMA_NAME"), str("DEFAULT_CHARACTER_SET_NAME"), str("DEFAULT_COLLATION_NAME"),
			str("SQL_PATH"), str("DEFAULT_ENCRYPTION")}
		for _, db := range append([]string{InfoSchema}, dbs...) {
			rows = append(rows, []types.Value{s("def"), s(db), s(charset), s(collation), null, s("NO")})
		}
	case "TABLES":
		cols = []isCol{str("TABLE_CATALOG"), str("TABLE_SCHEMA"), str("TABLE_NAME"), str("TABLE_TYPE"), str("ENGINE"),
			num("VERSION"), str("ROW_FORMAT"), num("TABLE_ROWS"), num("AVG_ROW_LENGTH"), num("DATA_LENGTH"),
			num("MAX_DATA_LENGTH"), num("INDEX_LENGTH"), num("DATA_FREE"), num("AUTO_INCREMENT"), str("CREATE_TIME"),
			str("UPDATE_TIME"), str("CHECK_TIME"), str("TABLE_COLLATION"), num("CHECKSUM"), str("CREATE_OPTIONS"),
			long("TABLE_COMMENT")}
		for _, t := range infoSchemaTables {
			rows = append(rows, []types.Value{s("def"), s(InfoSchema), s(t), s("SYSTEM VIEW"), null, n(10), null, nullNum,
				nullNum, nullNum, nullNum, nullNum, nullNum, nullNum, null, null, null, s(collation), nullNum, s(""), s("")})
		}
		stats, _ := b.cat.(catalog.Stats)
		for _, db := range dbs {
			names, _ := b.cat.Tables(db)
			for _, t := range names {
				if _, isView := b.cat.View(db, t); isView {
					rows = append(rows, []types.Value{s("def"), s(db), s(t), s("VIEW"), null, nullNum, null, nullNum,
						nullNum, nullNum, nullNum, nullNum, nullNum, nullNum, null, null, null, null, nullNum, null, s("VIEW")})
					continue
				}
				tableRows := nullNum
				if stats != nil {
					if r, ok := stats.TableRows(db, t); ok {
						tableRows = n(int64(r))
					}
				}
				rows = append(rows, []types.Value{s("def"), s(db), s(t), s("BASE TABLE"), s("colink"), n(10), s("Fixed"), tableRows,
					nullNum, nullNum, nullNum, n(0), n(0), nullNum, null, null, null, s(collation), nullNum, s(""), s("")})
			}
		}
	case "COLUMNS":
		cols = []isCol{str("TABLE_CATALOG"), str("TABLE_SCHEMA"), str("TABLE_NAME"), str("COLUMN_NAME"), num("ORDINAL_POSITION"),
			long("COLUMN_DEFAULT"), str("IS_NULLABLE"), str("DATA_TYPE"), num("CHARACTER_MAXIMUM_LENGTH"),
			num("CHARACTER_OCTET_LENGTH"), num("NUMERIC_PRECISION"), num("NUMERIC_SCALE"), num("DATETIME_PRECISION"),
			str("CHARACTER_SET_NAME"), str("COLLATION_NAME"), long("COLUMN_TYPE"), str("COLUMN_KEY"), str("EXTRA"),
			str("PRIVILEGES"), long("COLUMN_COMMENT"), long("GENERATION_EXPRESSION"), num("SRS_ID")}
		for _, db := range dbs {
			names, _ := b.cat.Tables(db)
			for _, t := range names {
				for i, c := range b.tableColumns(db, t) {
					nullable := "NO"
					if c.Nullable {
						nullable = "YES"
					}
					charLen, octets, prec, scale, cs, coll := nullNum, nullNum, nullNum, nullNum, null, null
					dateNull := nullNum
					switch c.Type.Kind {
					case types.Char, types.Varchar:
						charLen, octets, cs, coll = n(int64(c.Type.Length)), n(4*int64(c.Type.Length)), s(charset), s(collation)
					case types.Int32:
						prec, scale = n(10), n(0)
					case types.Int64:
						prec, scale = n(19), n(0)
					case types.Bool:
						prec, scale = n(3), n(0)
					case types.Decimal:
						prec, scale = n(int64(c.Type.Precision)), n(int64(c.Type.Scale))
					case types.Float64:
						prec = n(22)
					case types.Date:
						dateNull = nullNum
					case types.Datetime:
						dateNull = n(int64(c.Type.Scale))
					}
					def := null
					if c.Default != nil {
						def = s(*c.Default)
					}
					rows = append(rows, []types.Value{s("def"), s(db), s(t), s(c.Name), n(int64(i + 1)), def, s(nullable),
						s(dataType(c.Type)), charLen, octets, prec, scale, dateNull, cs, coll, s(columnType(c.Type)), s(""), s(""),
						s("select,insert"), s(""), s(""), nullNum})
				}
			}
		}
	case "VIEWS":
		cols = []isCol{str("TABLE_CATALOG"), str("TABLE_SCHEMA"), str("TABLE_NAME"), long("VIEW_DEFINITION"), str("CHECK_OPTION"),
			str("IS_UPDATABLE"), str("DEFINER"), str("SECURITY_TYPE"), str("CHARACTER_SET_CLIENT"), str("COLLATION_CONNECTION")}
		for _, db := range dbs {
			names, _ := b.cat.Tables(db)
			for _, t := range names {
				if v, ok := b.cat.View(db, t); ok {
					rows = append(rows, []types.Value{s("def"), s(db), s(t), {Type: types.VarcharType(65535), Str: v.Query}, s("NONE"),
						s("NO"), s("root@localhost"), s("DEFINER"), s(charset), s(collation)})
				}
			}
		}
	case "STATISTICS":
		cols = []isCol{str("TABLE_CATALOG"), str("TABLE_SCHEMA"), str("TABLE_NAME"), num("NON_UNIQUE"), str("INDEX_SCHEMA"),
			str("INDEX_NAME"), num("SEQ_IN_INDEX"), str("COLUMN_NAME"), str("COLLATION"), num("CARDINALITY"), num("SUB_PART"),
			str("PACKED"), str("NULLABLE"), str("INDEX_TYPE"), str("COMMENT"), str("INDEX_COMMENT"), str("IS_VISIBLE"),
			long("EXPRESSION")}
	case "FILES":
		cols = []isCol{num("FILE_ID"), str("FILE_NAME"), str("FILE_TYPE"), str("TABLESPACE_NAME"), str("TABLE_CATALOG"),
			str("TABLE_SCHEMA"), str("TABLE_NAME"), str("LOGFILE_GROUP_NAME"), num("LOGFILE_GROUP_NUMBER"), str("ENGINE"),
			str("FULLTEXT_KEYS"), num("DELETED_ROWS"), num("UPDATE_COUNT"), num("FREE_EXTENTS"), num("TOTAL_EXTENTS"),
			num("EXTENT_SIZE"), num("INITIAL_SIZE"), num("MAXIMUM_SIZE"), num("AUTOEXTEND_SIZE"), str("CREATION_TIME"),
			str("LAST_UPDATE_TIME"), str("LAST_ACCESS_TIME"), num("RECOVER_TIME"), num("TRANSACTION_COUNTER"), num("VERSION"),
			str("ROW_FORMAT"), num("TABLE_ROWS"), num("AVG_ROW_LENGTH"), num("DATA_LENGTH"), num("MAX_DATA_LENGTH"),
			num("INDEX_LENGTH"), num("DATA_FREE"), str("CREATE_TIME"), str("UPDATE_TIME"), str("CHECK_TIME"), num("CHECKSUM"),
			str("STATUS"), str("EXTRA")}
	case "PARTITIONS":
		cols = []isCol{str("TABLE_CATALOG"), str("TABLE_SCHEMA"), str("TABLE_NAME"), str("PARTITION_NAME"), str("SUBPARTITION_NAME"),
			num("PARTITION_ORDINAL_POSITION"), num("SUBPARTITION_ORDINAL_POSITION"), str("PARTITION_METHOD"), str("SUBPARTITION_METHOD"),
			long("PARTITION_EXPRESSION"), long("SUBPARTITION_EXPRESSION"), long("PARTITION_DESCRIPTION"), num("TABLE_ROWS"),
			num("AVG_ROW_LENGTH"), num("DATA_LENGTH"), num("MAX_DATA_LENGTH"), num("INDEX_LENGTH"), num("DATA_FREE"),
			str("CREATE_TIME"), str("UPDATE_TIME"), str("CHECK_TIME"), num("CHECKSUM"), str("PARTITION_COMMENT"), str("NODEGROUP"),
			str("TABLESPACE_NAME")}
	case "TRIGGERS":
		cols = []isCol{str("TRIGGER_CATALOG"), str("TRIGGER_SCHEMA"), str("TRIGGER_NAME"), str("EVENT_MANIPULATION"),
			str("EVENT_OBJECT_CATALOG"), str("EVENT_OBJECT_SCHEMA"), str("EVENT_OBJECT_TABLE"), num("ACTION_ORDER"),
			long("ACTION_CONDITION"), long("ACTION_STATEMENT"), str("ACTION_ORIENTATION"), str("ACTION_TIMING"),
			str("ACTION_REFERENCE_OLD_TABLE"), str("ACTION_REFERENCE_NEW_TABLE"), str("ACTION_REFERENCE_OLD_ROW"),
			str("ACTION_REFERENCE_NEW_ROW"), str("CREATED"), str("SQL_MODE"), str("DEFINER"), str("CHARACTER_SET_CLIENT"),
			str("COLLATION_CONNECTION"), str("DATABASE_COLLATION")}
	case "ENGINES":
		cols = []isCol{str("ENGINE"), str("SUPPORT"), long("COMMENT"), str("TRANSACTIONS"), str("XA"), str("SAVEPOINTS")}
		rows = [][]types.Value{{s("colink"), s("DEFAULT"), {Type: types.VarcharType(65535), Str: "columnar storage in primprocs, queried through exemgr"},
			s("NO"), s("NO"), s("NO")}}
	default:
		return nil, nil, sqlerr.NoSuchTable(InfoSchema, name)
	}

	v := &plan.Values{}
	r := &rel{name: alias, db: InfoSchema}
	nullable := make([]bool, len(cols))
	for _, row := range rows {
		for i, val := range row {
			nullable[i] = nullable[i] || val.Null
		}
	}
	for i, c := range cols {
		id := b.md.Add(plan.ColumnMeta{Name: c.name, Table: alias, Type: c.t, Nullable: nullable[i] || len(rows) == 0,
			DB: InfoSchema, BaseTable: strings.ToUpper(name), BaseColumn: c.name})
		v.Cols = append(v.Cols, id)
		r.cols = append(r.cols, relCol{name: c.name, id: id})
	}
	for _, row := range rows {
		exprs := make([]plan.Expr, len(row))
		for i, val := range row {
			val.Type = cols[i].t
			exprs[i] = plan.Lit(val)
		}
		v.Rows = append(v.Rows, exprs)
	}
	return v, []*rel{r}, nil
}

// tableColumns returns a table's or view's columns (a view's by binding its query; nil if
// it does not bind).
func (b *Binder) tableColumns(db, name string) []catalog.Column {
	if t, ok := b.cat.Table(db, name); ok {
		return t.Columns
	}
	v, ok := b.cat.View(db, name)
	if !ok {
		return nil
	}
	sub := New(b.cat, b.env)
	sub.viewDepth = b.viewDepth
	n, rels, err := sub.view(v.DB, v.Name, v.Query, v.Columns, name)
	if err != nil || len(rels) == 0 {
		return nil
	}
	nn := plan.NotNull(n, sub.md)
	var out []catalog.Column
	for _, c := range rels[0].cols {
		out = append(out, catalog.Column{Name: c.name, Type: sub.md.Column(c.id).Type, Nullable: !nn.Has(c.id)})
	}
	return out
}

// dataType is information_schema's DATA_TYPE of t: the type's name without its
// parameters.
func dataType(t types.Type) string {
	s := columnType(t)
	if i := strings.IndexByte(s, '('); i >= 0 {
		s = s[:i]
	}
	return s
}

// columnType is information_schema's COLUMN_TYPE of t, as SHOW COLUMNS and SHOW CREATE
// TABLE print it: a boolean is MySQL's tinyint(1), a VARCHAR without a length (TEXT,
// stored so) text.
func columnType(t types.Type) string {
	switch {
	case t.Kind == types.Bool:
		return "tinyint(1)"
	case t.Kind == types.Varchar && t.Length == 0:
		return "text"
	}
	return t.String()
}
