// Package sql is colink's SQL front door: it parses a client's text (TiDB's MySQL parser),
// classifies each statement for the MySQL front end to route (queries, EXPLAIN, SHOW,
// USE, SET, KILL, CREATE/DROP VIEW, and the DML of the refresh functions), and plans
// queries: bind (package bind) → logical plan (package plan) → rules (package opt).
//
// The pipeline, for a query:
//
//	p := sql.NewParser()
//	stmts, err := p.Parse("select … ; …")          // []sql.Statement
//	planner := &sql.Planner{Catalog: cat, Stats: stats}
//	q, err := planner.Plan(ctx, env, stmts[0])     // bound and optimised *plan.Query
//	fmt.Print(plan.Format(q, plan.FormatOptions{})) // what EXPLAIN shows
//
// Every error is a *sqlerr.Error carrying a MySQL error number and SQLSTATE.
package sql

import (
	"regexp"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // the parser's value types

	"github.com/colinkdb/colink/sql/sqlerr"
)

// Statement is one parsed statement; its concrete type says how to run it.
type Statement interface {
	// SQL is the statement's text.
	SQL() string
}

type text string

func (t text) SQL() string { return string(t) }

// Query is a SELECT (with WITH, derived tables, subqueries); it returns rows.
type Query struct {
	text
	Stmt ast.ResultSetNode
}

// ReadsTables reports whether the query names a table or view anywhere (its FROM, a
// subquery's, a CTE's): one that does not (SELECT 1, SELECT NOW()) needs no catalog and no
// primproc to run.
func (q *Query) ReadsTables() bool {
	v := &tableFinder{}
	q.Stmt.Accept(v)
	return v.found
}

// tableFinder finds a table name in a statement.
type tableFinder struct{ found bool }

func (v *tableFinder) Enter(n ast.Node) (ast.Node, bool) {
	if _, ok := n.(*ast.TableName); ok {
		v.found = true
	}
	return n, v.found
}

func (v *tableFinder) Leave(n ast.Node) (ast.Node, bool) { return n, !v.found }

// Show is SHOW DATABASES, SHOW [FULL] TABLES, SHOW COLUMNS and DESCRIBE; it returns rows.
type Show struct {
	text
	Stmt *ast.ShowStmt
}

// Explain is EXPLAIN of a query; it returns the plan as rows of text.
type Explain struct {
	text
	Target Statement // a *Query or *Show
	Format string
	// Analyze: EXPLAIN ANALYZE runs the query and reports what each operator did.
	Analyze bool
}

// ShowQueryStats is colink's SHOW QUERY STATS: the statistics of the session's previous
// query (elapsed time, CPU per process, link traffic).
type ShowQueryStats struct{ text }

// Use is USE db.
type Use struct {
	text
	DB string
}

// SetKind says what a SET assignment sets.
type SetKind uint8

// The kinds of SET assignment.
const (
	SetSession SetKind = iota + 1 // SET x = …, SET @@x = …, SET SESSION x = …
	SetGlobal                     // SET GLOBAL x = …
	SetUser                       // SET @x = …
	SetNames                      // SET NAMES charset: Name is "names", Value the character set
)

// Assignment is one "name = value" of a SET statement.
type Assignment struct {
	Kind  SetKind
	Name  string // lower case
	Value ast.ExprNode
}

// Set is SET …; Planner.EvalSet computes its values.
type Set struct {
	text
	Assignments []Assignment
}

// Kill is KILL [QUERY | CONNECTION] id.
type Kill struct {
	text
	ConnectionID uint64
	QueryOnly    bool
}

// CreateView is CREATE [OR REPLACE] VIEW; Planner.CreateView checks it and makes the
// catalog entry.
type CreateView struct {
	text
	Stmt *ast.CreateViewStmt
}

// TableName is a possibly qualified table or view name.
type TableName struct {
	DB, Name string
}

// DropView is DROP VIEW [IF EXISTS] v, ….
type DropView struct {
	text
	Views    []TableName
	IfExists bool
}

// CreateTable is CREATE TABLE [IF NOT EXISTS] t (columns …); Planner.CreateTable checks
// it and gives the columns' stored types.
type CreateTable struct {
	text
	Stmt *ast.CreateTableStmt
}

// DropTable is DROP TABLE [IF EXISTS] t, ….
type DropTable struct {
	text
	Tables   []TableName
	IfExists bool
}

// TruncateTable is TRUNCATE [TABLE] t.
type TruncateTable struct {
	text
	Table TableName
}

// Ignored is a statement colink accepts and does nothing for: ALTER TABLE … DISABLE KEYS
// and ENABLE KEYS, which dumps put around their INSERTs (colink keeps no indexes).
type Ignored struct {
	text
}

// Insert is INSERT INTO t … (a refresh function).
type Insert struct {
	text
	Stmt *ast.InsertStmt
}

// Delete is DELETE FROM t WHERE … (a refresh function).
type Delete struct {
	text
	Stmt *ast.DeleteStmt
}

// LoadData is LOAD DATA [LOCAL] INFILE … INTO TABLE t.
type LoadData struct {
	text
	Stmt *ast.LoadDataStmt
}

// Parser parses SQL text. It is not safe for concurrent use; use one per session.
type Parser struct {
	p    *parser.Parser
	mode string // the sql_mode p reads by (SetSQLMode)
}

// NewParser returns a parser.
func NewParser() *Parser { return &Parser{p: parser.New()} }

// SetSQLMode makes the parser read statements as MySQL does under sql_mode mode (a
// comma-separated list of MySQL's mode names, as @@sql_mode holds it): ANSI_QUOTES makes
// "x" an identifier, PIPES_AS_CONCAT makes || concatenation, HIGH_NOT_PRECEDENCE,
// IGNORE_SPACE and NO_BACKSLASH_ESCAPES change the lexer as theirs. The other modes do not
// change how a statement parses.
func (p *Parser) SetSQLMode(mode string) error {
	if mode == p.mode {
		return nil
	}
	m, err := mysql.GetSQLMode(mysql.FormatSQLModeStr(mode))
	if err != nil {
		return sqlerr.New(1231, "Variable 'sql_mode' can't be set to the value of '%s'", mode)
	}
	p.p.SetSQLMode(m)
	p.mode = mode
	return nil
}

var showQueryStats = regexp.MustCompile(`(?is)^\s*show\s+query\s+stats\s*;?\s*$`)

// Parse parses text into its statements. A syntax error is MySQL's 1064 with the parser's
// message; a statement colink does not run is 1235.
func (p *Parser) Parse(sqlText string) ([]Statement, error) {
	if strings.TrimSpace(strings.TrimRight(strings.TrimSpace(sqlText), ";")) == "" {
		return nil, sqlerr.New(sqlerr.ErEmptyQuery, "Query was empty")
	}
	if showQueryStats.MatchString(sqlText) {
		return []Statement{&ShowQueryStats{text: text(strings.TrimSpace(sqlText))}}, nil
	}
	lifted, lists := liftDerivedColumns(sqlText)
	nodes, _, err := p.p.Parse(lifted, "", "")
	if err != nil {
		if lists != nil { // word the error after the text the client sent
			_, _, err = p.p.Parse(sqlText, "", "")
		}
		return nil, syntaxError(err)
	}
	if err := applyDerivedColumns(nodes, lists); err != nil {
		return nil, err
	}
	if lists != nil && len(nodes) == 1 {
		nodes[0].SetText(nil, sqlText) // the statement's text is what the client sent
	}
	out := make([]Statement, 0, len(nodes))
	for _, n := range nodes {
		s, err := classify(n)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// syntaxError words a parser error as MySQL's 1064.
func syntaxError(err error) error {
	msg := err.Error()
	// TiDB's parser says `line 1 column 10 near "query stats" `; MySQL says
	// "… right syntax to use near 'query stats' at line 1".
	if m := nearRE.FindStringSubmatch(msg); m != nil {
		return sqlerr.Wrap(err, sqlerr.ErParse,
			"You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '%s' at line %s",
			truncate(m[3], 80), m[1])
	}
	return sqlerr.Wrap(err, sqlerr.ErParse, "You have an error in your SQL syntax: %s", strings.TrimSpace(msg))
}

var nearRE = regexp.MustCompile(`(?s)line (\d+) column (\d+) near "(.*)"`)

func truncate(s string, n int) string {
	s = strings.TrimRight(s, " \n\t")
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

func classify(n ast.StmtNode) (Statement, error) {
	t := text(strings.TrimSpace(n.Text()))
	switch s := n.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		return &Query{text: t, Stmt: s.(ast.ResultSetNode)}, nil
	case *ast.ShowStmt:
		return &Show{text: t, Stmt: s}, nil
	case *ast.ExplainStmt:
		if sh, ok := s.Stmt.(*ast.ShowStmt); ok {
			// DESCRIBE t arrives as EXPLAIN of SHOW COLUMNS.
			return &Show{text: t, Stmt: sh}, nil
		}
		target, err := classify(s.Stmt)
		if err != nil {
			return nil, err
		}
		if _, ok := target.(*Query); !ok {
			return nil, sqlerr.Unsupported("EXPLAIN of this statement")
		}
		return &Explain{text: t, Target: target, Format: strings.ToLower(s.Format), Analyze: s.Analyze}, nil
	case *ast.UseStmt:
		return &Use{text: t, DB: s.DBName}, nil
	case *ast.SetStmt:
		set := &Set{text: t}
		for _, v := range s.Variables {
			a := Assignment{Name: strings.ToLower(v.Name), Value: v.Value}
			switch {
			case v.Name == ast.SetNames || v.Name == ast.SetCharset:
				a.Kind = SetNames
				a.Name = "names"
			case v.IsSystem && v.IsGlobal:
				a.Kind = SetGlobal
			case v.IsSystem:
				a.Kind = SetSession
			default:
				a.Kind = SetUser
			}
			set.Assignments = append(set.Assignments, a)
		}
		return set, nil
	case *ast.KillStmt:
		if s.Expr != nil {
			return nil, sqlerr.Unsupported("KILL with an expression")
		}
		return &Kill{text: t, ConnectionID: s.ConnectionID, QueryOnly: s.Query}, nil
	case *ast.CreateViewStmt:
		return &CreateView{text: t, Stmt: s}, nil
	case *ast.CreateTableStmt:
		return &CreateTable{text: t, Stmt: s}, nil
	case *ast.TruncateTableStmt:
		return &TruncateTable{text: t, Table: TableName{DB: s.Table.Schema.O, Name: s.Table.Name.O}}, nil
	case *ast.AlterTableStmt:
		for _, spec := range s.Specs {
			if spec.Tp != ast.AlterTableDisableKeys && spec.Tp != ast.AlterTableEnableKeys {
				return nil, sqlerr.Unsupported("ALTER TABLE other than DISABLE KEYS and ENABLE KEYS")
			}
		}
		return &Ignored{text: t}, nil
	case *ast.DropTableStmt:
		if !s.IsView {
			if s.TemporaryKeyword != ast.TemporaryNone {
				return nil, sqlerr.Unsupported("DROP TEMPORARY TABLE")
			}
			d := &DropTable{text: t, IfExists: s.IfExists}
			for _, tn := range s.Tables {
				d.Tables = append(d.Tables, TableName{DB: tn.Schema.O, Name: tn.Name.O})
			}
			return d, nil
		}
		d := &DropView{text: t, IfExists: s.IfExists}
		for _, tn := range s.Tables {
			d.Views = append(d.Views, TableName{DB: tn.Schema.O, Name: tn.Name.O})
		}
		return d, nil
	case *ast.InsertStmt:
		return &Insert{text: t, Stmt: s}, nil
	case *ast.DeleteStmt:
		return &Delete{text: t, Stmt: s}, nil
	case *ast.LoadDataStmt:
		return &LoadData{text: t, Stmt: s}, nil
	}
	return nil, sqlerr.Unsupported(statementName(n))
}

// statementName names a statement kind for messages, from its leading words.
func statementName(n ast.StmtNode) string {
	f := strings.Fields(n.Text())
	if len(f) > 2 {
		f = f[:2]
	}
	return strings.ToUpper(strings.Join(f, " "))
}
