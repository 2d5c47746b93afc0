package sql

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/colinkdb/colink/sql/bind"
	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/fold"
	"github.com/colinkdb/colink/sql/opt"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// Env is the session state planning needs: the current database and variables.
type Env = bind.Env

// Planner binds and optimises statements against a catalog. It holds no per-query state
// and is safe for concurrent use if its Catalog and Stats are.
type Planner struct {
	Catalog catalog.Catalog
	Stats   catalog.Stats
	Options opt.Options
	// Rules replaces the optimiser's rules; nil means opt.DefaultRules().
	Rules []opt.Rule
}

// Bind binds a statement that has a plan — Query, Show, Insert, Delete, or an Explain's
// target — into an unoptimised plan. Insert and Delete plans have a plan.Insert or
// plan.Delete at the root and no result columns.
func (p *Planner) Bind(env Env, s Statement) (*plan.Query, error) {
	b := bind.New(p.Catalog, env)
	switch s := s.(type) {
	case *Query:
		return b.Query(s.Stmt)
	case *Show:
		return b.Show(s.Stmt)
	case *Explain:
		return p.Bind(env, s.Target)
	case *Insert:
		return b.Insert(s.Stmt)
	case *Delete:
		return b.Delete(s.Stmt)
	}
	return nil, sqlerr.New(sqlerr.ErUnknown, "statement %q has no plan", s.SQL())
}

// LoadSpec is a checked LOAD DATA statement: what the front end reads and where it goes.
type LoadSpec struct {
	Table *catalog.Table
	// Columns lists, for each field of a line, the table column it fills.
	Columns []int
	Path    string
	Local   bool // LOCAL: the client sends the file
	// FieldsTerminated, LinesTerminated and LinesStarting are the separators (MySQL's
	// defaults: tab, newline, none); Enclosed and Escaped are "" or one character.
	FieldsTerminated, Enclosed, Escaped string
	LinesTerminated, LinesStarting      string
	IgnoreLines                         uint64
}

// LoadData checks a LOAD DATA statement against the catalog.
func (p *Planner) LoadData(env Env, l *LoadData) (*LoadSpec, error) {
	s := l.Stmt
	switch {
	case s.Format != nil && !strings.EqualFold(*s.Format, "delimited data"):
		return nil, sqlerr.Unsupported("LOAD DATA … FORMAT " + *s.Format)
	case len(s.ColumnAssignments) > 0:
		return nil, sqlerr.Unsupported("LOAD DATA … SET")
	case len(s.Options) > 0:
		return nil, sqlerr.Unsupported("LOAD DATA … WITH options")
	case s.OnDuplicate == ast.OnDuplicateKeyHandlingReplace:
		// IGNORE (implied by LOCAL) changes nothing: tables have no unique keys.
		return nil, sqlerr.Unsupported("LOAD DATA … REPLACE")
	}
	t, cols, err := bind.New(p.Catalog, env).LoadTarget(s)
	if err != nil {
		return nil, err
	}
	spec := &LoadSpec{Table: t, Columns: cols, Path: s.Path, Local: s.FileLocRef == ast.FileLocClient,
		FieldsTerminated: "\t", Escaped: "\\", LinesTerminated: "\n"}
	if f := s.FieldsInfo; f != nil {
		if f.Terminated != nil {
			spec.FieldsTerminated = *f.Terminated
		}
		if f.Enclosed != nil {
			spec.Enclosed = *f.Enclosed
		}
		if f.Escaped != nil {
			spec.Escaped = *f.Escaped
		}
	}
	if li := s.LinesInfo; li != nil {
		if li.Terminated != nil {
			spec.LinesTerminated = *li.Terminated
		}
		if li.Starting != nil {
			spec.LinesStarting = *li.Starting
		}
	}
	if s.IgnoreLines != nil {
		spec.IgnoreLines = *s.IgnoreLines
	}
	return spec, nil
}

// Optimize applies the optimiser's rules to a bound query.
func (p *Planner) Optimize(ctx context.Context, q *plan.Query) (*plan.Query, error) {
	rules := p.Rules
	if rules == nil {
		rules = opt.DefaultRules()
	}
	c := &opt.Context{MD: q.MD, Stats: p.Stats, Opts: p.Options}
	return opt.Optimize(ctx, c, q, rules)
}

// Plan binds and optimises a statement that returns rows.
func (p *Planner) Plan(ctx context.Context, env Env, s Statement) (*plan.Query, error) {
	q, err := p.Bind(env, s)
	if err != nil {
		return nil, err
	}
	return p.Optimize(ctx, q)
}

// Explain plans an EXPLAIN's query and returns the plan as text, one node per line, with
// estimated rows.
func (p *Planner) Explain(ctx context.Context, env Env, e *Explain) (string, error) {
	q, err := p.Plan(ctx, env, e.Target)
	if err != nil {
		return "", err
	}
	return plan.Format(q, plan.FormatOptions{Rows: true}), nil
}

// CreateView checks a CREATE VIEW (its database, its name, and that its query binds) and
// returns the view for the catalog, and whether it may replace an existing view.
func (p *Planner) CreateView(env Env, cv *CreateView) (*catalog.View, bool, error) {
	s := cv.Stmt
	db := s.ViewName.Schema.O
	if db == "" {
		db = env.Database()
		if db == "" {
			return nil, false, sqlerr.New(sqlerr.ErNoDBError, "No database selected")
		}
	}
	if _, ok := p.Catalog.Tables(db); !ok {
		return nil, false, sqlerr.New(sqlerr.ErBadDB, "Unknown database '%s'", db)
	}
	name := s.ViewName.Name.O
	if _, ok := p.Catalog.Table(db, name); ok {
		return nil, false, sqlerr.New(sqlerr.ErTableExists, "Table '%s' already exists", name)
	}
	if _, ok := p.Catalog.View(db, name); ok && !s.OrReplace {
		return nil, false, sqlerr.New(sqlerr.ErTableExists, "Table '%s' already exists", name)
	}
	rs, ok := s.Select.(ast.ResultSetNode)
	if !ok {
		return nil, false, sqlerr.Unsupported("a view that is not a SELECT")
	}
	var sb strings.Builder
	if err := s.Select.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &sb)); err != nil {
		return nil, false, sqlerr.Wrap(err, sqlerr.ErUnknown, "cannot record the view's query: %v", err)
	}
	v := &catalog.View{DB: db, Name: name, Query: sb.String()}
	for _, c := range s.Cols {
		v.Columns = append(v.Columns, c.O)
	}
	// The view must bind now, as MySQL checks it at CREATE VIEW.
	q, err := bind.New(p.Catalog, viewEnv{Env: env, db: db}).Query(rs)
	if err != nil {
		return nil, false, err
	}
	if v.Columns != nil && len(v.Columns) != len(q.Names) {
		return nil, false, sqlerr.New(1353, "In definition of view, derived table or common table expression, SELECT list and column names list have different column counts")
	}
	names := v.Columns
	if names == nil {
		names = q.Names
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[strings.ToLower(n)] {
			return nil, false, sqlerr.New(sqlerr.ErDupFieldName, "Duplicate column name '%s'", n)
		}
		seen[strings.ToLower(n)] = true
	}
	return v, s.OrReplace, nil
}

type viewEnv struct {
	Env
	db string
}

func (e viewEnv) Database() string { return e.db }

// SetValue is one evaluated assignment of a SET statement.
type SetValue struct {
	Kind    SetKind
	Name    string
	Value   types.Value
	Default bool // SET x = DEFAULT
}

// EvalSet computes the values of a SET statement's assignments, which must be constants. A
// bare word assigned to a system variable (SET autocommit = ON, SET NAMES utf8mb4) is a
// string.
func (p *Planner) EvalSet(env Env, s *Set) ([]SetValue, error) {
	var out []SetValue
	b := bind.New(p.Catalog, env)
	for _, a := range s.Assignments {
		sv := SetValue{Kind: a.Kind, Name: a.Name}
		switch v := a.Value.(type) {
		case nil:
			sv.Default = true
		case *ast.DefaultExpr:
			sv.Default = true
		case *ast.ColumnNameExpr:
			if v.Name.Table.L != "" || a.Kind == SetUser {
				return nil, sqlerr.UnknownColumn(v.Name.String(), "field list")
			}
			sv.Value = types.StringValue(v.Name.Name.O)
		default:
			e, err := b.Constant(a.Value)
			if err != nil {
				return nil, err
			}
			val, err := fold.Eval(fold.Expr(e))
			if err != nil {
				return nil, sqlerr.New(sqlerr.ErWrongArguments, "Incorrect argument to SET %s: the value must be a constant", a.Name)
			}
			sv.Value = val
		}
		out = append(out, sv)
	}
	return out, nil
}
