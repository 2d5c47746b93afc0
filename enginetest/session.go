package enginetest

import (
	"context"
	"fmt"

	"github.com/colinkdb/colink/dbt3/answers"
	"github.com/colinkdb/colink/sql"
	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/opt"
	"github.com/colinkdb/colink/sql/physical"
	"github.com/colinkdb/colink/sql/types"
)

// Session plans and runs SQL text in process: the statements a DBT3 script holds (queries,
// CREATE VIEW, DROP VIEW) against a catalog whose views it keeps.
type Session struct {
	// Catalog holds the tables (and receives views).
	Catalog *catalog.Memory
	// Stats feed the optimiser (e.g. catalog.TPCHStats at the loaded scale factor).
	Stats catalog.Stats
	// Runner runs fragments (a LocalRunner).
	Runner physical.Runner
	// Exec tunes exemgr's side of every query.
	Exec physical.ExecOptions
	// DB is the current database.
	DB string
	// Primprocs is the number of primprocs the Runner runs fragments on (physical.Options).
	Primprocs int
	// Pushdown is the pushdown level queries are cut at (physical.Options).
	Pushdown physical.Pushdown
}

// Output is the result of the last query of a script.
type Output struct {
	// Table is the result in the answers' psv form (NULL as ""); Display prints NULL as NULL.
	Table   *answers.Table
	Display *answers.Table
	Plan    *physical.Plan
	Stats   physical.QueryStats
}

type env struct{ db string }

func (e env) Database() string                                { return e.db }
func (e env) SystemVariable(string, bool) (types.Value, bool) { return types.Value{}, false }
func (e env) UserVariable(string) (types.Value, bool)         { return types.Value{}, false }

func (s *Session) planner() *sql.Planner {
	return &sql.Planner{Catalog: s.Catalog, Stats: s.Stats, Options: opt.Options{Primprocs: s.Primprocs}}
}

// Plan plans one query statement.
func (s *Session) Plan(ctx context.Context, text string) (*physical.Plan, error) {
	stmts, err := sql.NewParser().Parse(text)
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 {
		return nil, fmt.Errorf("enginetest: %d statements, want one query", len(stmts))
	}
	return s.plan(ctx, stmts[0])
}

func (s *Session) plan(ctx context.Context, st sql.Statement) (*physical.Plan, error) {
	if e, ok := st.(*sql.Explain); ok {
		st = e.Target
	}
	q, err := s.planner().Plan(ctx, env{s.DB}, st)
	if err != nil {
		return nil, err
	}
	return physical.Build(q, physical.Options{Catalog: s.Catalog, Primprocs: s.Primprocs, Pushdown: s.Pushdown})
}

// Run runs every statement of a script and returns the output of its last query.
func (s *Session) Run(ctx context.Context, script string) (*Output, error) {
	stmts, err := sql.NewParser().Parse(script)
	if err != nil {
		return nil, err
	}
	var out *Output
	p := s.planner()
	for _, st := range stmts {
		switch st := st.(type) {
		case *sql.CreateView:
			v, replace, err := p.CreateView(env{s.DB}, st)
			if err != nil {
				return nil, err
			}
			if err := s.Catalog.CreateView(v, replace); err != nil {
				return nil, err
			}
		case *sql.DropView:
			for _, v := range st.Views {
				db := v.DB
				if db == "" {
					db = s.DB
				}
				if !s.Catalog.DropView(db, v.Name) && !st.IfExists {
					return nil, fmt.Errorf("enginetest: unknown view %s.%s", db, v.Name)
				}
			}
		case *sql.Query:
			if out, err = s.query(ctx, st); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("enginetest: cannot run %T statements", st)
		}
	}
	if out == nil {
		return nil, fmt.Errorf("enginetest: the script has no query")
	}
	return out, nil
}

func (s *Session) query(ctx context.Context, st sql.Statement) (*Output, error) {
	pl, err := s.plan(ctx, st)
	if err != nil {
		return nil, err
	}
	res, err := pl.Execute(ctx, s.Runner, s.Exec)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	recs, err := res.ReadAll(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	tb, err := answers.FromRecords(res.Schema(), recs)
	if err != nil {
		return nil, err
	}
	disp, err := answers.FormatRecords(res.Schema(), recs, "NULL")
	if err != nil {
		return nil, err
	}
	res.Close()
	return &Output{Table: tb, Display: disp, Plan: pl, Stats: res.Stats()}, nil
}
