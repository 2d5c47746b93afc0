package sql

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	ptypes "github.com/pingcap/tidb/pkg/parser/types"

	"github.com/colinkdb/colink/sql/bind"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// TableDef is a table CREATE TABLE declares: its columns with the SQL types the primprocs
// store (int, bigint, decimal(p,s) with p <= 18, double, date, datetime(fsp), char(n), varchar(n), text,
// boolean).
type TableDef struct {
	DB, Name    string
	Columns     []ColumnDef
	IfNotExists bool
}

// ColumnDef is one declared column.
type ColumnDef struct {
	Name     string
	SQLType  string
	Nullable bool
	Default  *string // the DEFAULT as vec.DefaultKey records it; nil: none
}

// maxStoredDecimal is the largest DECIMAL precision a stored column may have.
const maxStoredDecimal = 18

// CreateTable checks a CREATE TABLE and returns the table it declares. The statement must
// declare its columns (not LIKE or AS SELECT). Keys, indexes, comments, character sets,
// collations and table options such as ENGINE are accepted and ignored, as ColumnStore
// ignores them: colink keeps no indexes and enforces no keys. A column type colink does not
// compute on is 1235, naming the type and the column.
func (p *Planner) CreateTable(env Env, ct *CreateTable) (*TableDef, error) {
	s := ct.Stmt
	switch {
	case s.TemporaryKeyword != ast.TemporaryNone:
		return nil, sqlerr.Unsupported("CREATE TEMPORARY TABLE")
	case s.ReferTable != nil:
		return nil, sqlerr.Unsupported("CREATE TABLE … LIKE")
	case s.Select != nil:
		return nil, sqlerr.Unsupported("CREATE TABLE … SELECT")
	case s.Partition != nil:
		return nil, sqlerr.Unsupported("partitioned tables")
	}
	db := s.Table.Schema.O
	if db == "" {
		if db = env.Database(); db == "" {
			return nil, sqlerr.New(sqlerr.ErNoDBError, "No database selected")
		}
	}
	if _, ok := p.Catalog.Tables(db); !ok {
		return nil, sqlerr.New(sqlerr.ErBadDB, "Unknown database '%s'", db)
	}
	name := s.Table.Name.O
	if _, ok := p.Catalog.View(db, name); ok {
		return nil, sqlerr.New(sqlerr.ErTableExists, "Table '%s' already exists", name)
	}
	def := &TableDef{DB: db, Name: name, IfNotExists: s.IfNotExists}
	seen := map[string]bool{}
	for _, c := range s.Cols {
		col := c.Name.Name.O
		if seen[strings.ToLower(col)] {
			return nil, sqlerr.New(1060, "Duplicate column name '%s'", col)
		}
		seen[strings.ToLower(col)] = true
		typ, err := storedType(c.Tp)
		if tb, ok := err.(tooBigPrecision); ok {
			return nil, sqlerr.New(sqlerr.ErTooBigPrecision, "Too-big precision %d specified for '%s'. Maximum is 6.", tb.fsp, col)
		}
		if err != nil {
			return nil, sqlerr.Unsupported(fmt.Sprintf("%s for column '%s'", err.Error(), col))
		}
		cd := ColumnDef{Name: col, SQLType: typ, Nullable: true}
		var defaultExpr ast.ExprNode
		for _, o := range c.Options {
			switch o.Tp {
			case ast.ColumnOptionNotNull, ast.ColumnOptionPrimaryKey:
				cd.Nullable = false
			case ast.ColumnOptionNull, ast.ColumnOptionUniqKey, ast.ColumnOptionComment,
				ast.ColumnOptionCollate, ast.ColumnOptionColumnFormat, ast.ColumnOptionStorage:
			case ast.ColumnOptionDefaultValue:
				defaultExpr = o.Expr
			case ast.ColumnOptionOnUpdate:
				// ON UPDATE CURRENT_TIMESTAMP: colink has no UPDATE statement, so it never
				// applies; accepted for dumps of MySQL tables.
			case ast.ColumnOptionAutoIncrement:
				return nil, sqlerr.Unsupported(fmt.Sprintf("AUTO_INCREMENT for column '%s'", col))
			default:
				return nil, sqlerr.Unsupported(fmt.Sprintf("this column option for column '%s'", col))
			}
		}
		if defaultExpr != nil {
			t, ok := types.ParseSQLType(typ)
			if !ok {
				return nil, sqlerr.New(sqlerr.ErUnknown, "internal error: stored type %q", typ)
			}
			if cd.Default, err = bind.New(p.Catalog, env).ColumnDefault(defaultExpr, t, !cd.Nullable, col); err != nil {
				return nil, err
			}
		}
		def.Columns = append(def.Columns, cd)
	}
	if len(def.Columns) == 0 {
		return nil, sqlerr.New(1113, "A table must have at least 1 column")
	}
	for _, c := range s.Constraints {
		switch c.Tp {
		case ast.ConstraintPrimaryKey:
			for _, k := range c.Keys {
				if k.Column == nil {
					continue
				}
				for i := range def.Columns {
					if strings.EqualFold(def.Columns[i].Name, k.Column.Name.O) {
						def.Columns[i].Nullable = false
					}
				}
			}
		case ast.ConstraintKey, ast.ConstraintIndex, ast.ConstraintUniq, ast.ConstraintUniqKey, ast.ConstraintUniqIndex:
		default:
			return nil, sqlerr.Unsupported("this table constraint (foreign keys, checks)")
		}
	}
	return def, nil
}

// storedType maps a declared column type to the SQL type the primprocs store, or says
// which type colink does not compute on. Integers narrower than INT are stored as INT, and
// INT UNSIGNED as BIGINT (its range); FLOAT and REAL as DOUBLE.
// tooBigPrecision is a DATETIME's fsp beyond 6 (MySQL's error 1426, not an unsupported type).
type tooBigPrecision struct{ fsp int }

func (e tooBigPrecision) Error() string { return fmt.Sprintf("fsp %d beyond 6", e.fsp) }

func storedType(ft *ptypes.FieldType) (string, error) {
	unsigned := mysql.HasUnsignedFlag(ft.GetFlag())
	switch ft.GetType() {
	case mysql.TypeTiny, mysql.TypeShort, mysql.TypeInt24:
		return "int", nil
	case mysql.TypeLong:
		if unsigned {
			return "bigint", nil
		}
		return "int", nil
	case mysql.TypeLonglong:
		if unsigned {
			return "", fmt.Errorf("the type BIGINT UNSIGNED")
		}
		return "bigint", nil
	case mysql.TypeNewDecimal:
		p, s := ft.GetFlen(), ft.GetDecimal()
		if p == ptypes.UnspecifiedLength {
			p = 10
		}
		if s == ptypes.UnspecifiedLength {
			s = 0
		}
		if p > maxStoredDecimal {
			return "", fmt.Errorf("the type DECIMAL(%d,%d) (stored decimals have at most %d digits)", p, s, maxStoredDecimal)
		}
		return fmt.Sprintf("decimal(%d,%d)", p, s), nil
	case mysql.TypeDouble, mysql.TypeFloat:
		return "double", nil
	case mysql.TypeDate:
		return "date", nil
	case mysql.TypeDatetime, mysql.TypeTimestamp:
		// A TIMESTAMP is stored as a DATETIME: colink keeps no time zones, and MySQL's
		// TIMESTAMP differs from DATETIME only by converting from and to the session's
		// zone, which colink's sessions do not change (time_zone is SYSTEM).
		fsp := ft.GetDecimal()
		if fsp == ptypes.UnspecifiedLength || fsp < 0 {
			fsp = 0
		}
		if fsp > 6 {
			return "", tooBigPrecision{fsp}
		}
		if fsp == 0 {
			return "datetime", nil
		}
		return fmt.Sprintf("datetime(%d)", fsp), nil
	case mysql.TypeString, mysql.TypeVarchar, mysql.TypeVarString:
		if ft.GetCharset() == "binary" {
			return "", fmt.Errorf("the type %s", strings.ToUpper(ft.CompactStr()))
		}
		n := ft.GetFlen()
		if n == ptypes.UnspecifiedLength {
			n = 1
		}
		if ft.GetType() == mysql.TypeString {
			return fmt.Sprintf("char(%d)", n), nil
		}
		return fmt.Sprintf("varchar(%d)", n), nil
	case mysql.TypeBlob, mysql.TypeTinyBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob:
		if ft.GetCharset() == "binary" {
			return "", fmt.Errorf("the type %s", strings.ToUpper(ft.CompactStr()))
		}
		return "text", nil
	}
	return "", fmt.Errorf("the type %s", strings.ToUpper(ft.CompactStr()))
}
