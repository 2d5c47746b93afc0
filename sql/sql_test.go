package sql_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/colinkdb/colink/dbt3/queries"
	"github.com/colinkdb/colink/sql"
	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/opt"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// testEnv is a session with database tpch selected and a few variables.
type testEnv struct {
	db string
}

func (e testEnv) Database() string { return e.db }

func (e testEnv) SystemVariable(name string, global bool) (types.Value, bool) {
	switch name {
	case "version_comment":
		return types.StringValue("colink"), true
	case "version":
		return types.StringValue("8.0.36-colink"), true
	case "max_allowed_packet":
		return types.IntValue(67108864), true
	case "autocommit":
		return types.IntValue(1), true
	}
	return types.Value{}, false
}

func (e testEnv) UserVariable(name string) (types.Value, bool) {
	if name == "x" {
		return types.IntValue(42), true
	}
	return types.Value{}, false
}

// harness runs the commands of the data-driven tests against a fresh TPC-H catalog:
//
//	bind                 the bound, unoptimised plan
//	opt [rules=a,b,…]    the plan after the rules (default: all), [rows] [types] [sf=N]
//	tpch q=N [rows]      the optimised plan of dbt3/queries/N.sql
//	… names              prints the result columns and their types instead of the plan
//	parse                the statements' kinds
//	set                  the values of a SET statement
//	load                 the checked LOAD DATA statement
//	exec                 runs CREATE VIEW / DROP VIEW statements against the catalog
//
// db=name sets the session's current database for one case (db= for none).
type harness struct {
	cat *catalog.Memory
	env testEnv
	p   *sql.Parser
}

func newHarness() *harness {
	return &harness{cat: catalog.TPCH("tpch"), env: testEnv{db: "tpch"}, p: sql.NewParser()}
}

func errText(err error) string {
	var se *sqlerr.Error
	if errors.As(err, &se) {
		return "error: " + se.Error()
	}
	return "error (not a sqlerr.Error): " + err.Error()
}

func (h *harness) planner(t *testing.T, c *datadriven.TestData) (*sql.Planner, plan.FormatOptions, error) {
	sf := 1.0
	c.MaybeScanArgs(t, "sf", &sf)
	// At SF 1 the planner sees what the engine measures from dbgen's data; stats=spec, or
	// another scale factor, takes TPC-H's specified distributions.
	var stats catalog.Stats = catalog.TPCHStats{SF: sf}
	statsKind := "measured"
	c.MaybeScanArgs(t, "stats", &statsKind)
	if sf == 1 && statsKind == "measured" {
		stats = catalog.TPCHMeasuredSF1()
	}
	p := &sql.Planner{Catalog: h.cat, Stats: stats}
	c.MaybeScanArgs(t, "pmmax", &p.Options.PmMaxMemorySmallSide)
	var rules string
	if c.MaybeScanArgs(t, "rules", &rules) {
		p.Rules = []opt.Rule{}
		for _, name := range strings.Split(rules, ",") {
			if name == "" {
				continue
			}
			r, ok := opt.RuleByName(name)
			if !ok {
				return nil, plan.FormatOptions{}, fmt.Errorf("unknown rule %q", name)
			}
			p.Rules = append(p.Rules, r)
		}
	}
	return p, plan.FormatOptions{Rows: c.HasArg("rows"), Types: c.HasArg("types")}, nil
}

// run executes a script's statements: DDL against the catalog, and returns the plan of
// the last statement that returns rows.
func (h *harness) run(t *testing.T, c *datadriven.TestData, text string, optimize bool) string {
	p, fo, err := h.planner(t, c)
	if err != nil {
		return "test error: " + err.Error()
	}
	stmts, err := h.p.Parse(text)
	if err != nil {
		return errText(err)
	}
	var out string
	for _, s := range stmts {
		switch s := s.(type) {
		case *sql.CreateView:
			v, replace, err := p.CreateView(h.env, s)
			if err != nil {
				return errText(err)
			}
			if err := h.cat.CreateView(v, replace); err != nil {
				return "error: " + err.Error()
			}
		case *sql.DropView:
			for _, v := range s.Views {
				db := v.DB
				if db == "" {
					db = h.env.db
				}
				if !h.cat.DropView(db, v.Name) && !s.IfExists {
					return "error: unknown view " + v.Name
				}
			}
		default:
			var q *plan.Query
			if optimize {
				q, err = p.Plan(context.Background(), h.env, s)
			} else {
				q, err = p.Bind(h.env, s)
			}
			if err != nil {
				return errText(err)
			}
			if optimize && !c.HasArg("rules") {
				// A fully optimised plan must be executable as it stands.
				if err := plan.Check(q); err != nil {
					return "invalid plan: " + err.Error() + "\n" + plan.Format(q, fo)
				}
			}
			out = plan.Format(q, fo)
			if c.HasArg("names") {
				var names []string
				for i, n := range q.Names {
					names = append(names, n+" "+q.MD.Column(q.Root.Output()[i]).Type.String())
				}
				out = strings.Join(names, "\n")
			}
		}
	}
	return out
}

func (h *harness) cmd(t *testing.T, c *datadriven.TestData) string {
	saved := h.env
	defer func() { h.env = saved }()
	c.MaybeScanArgs(t, "db", &h.env.db)
	switch c.Cmd {
	case "bind":
		return h.run(t, c, c.Input, false)
	case "opt":
		return h.run(t, c, c.Input, true)
	case "exec":
		out := h.run(t, c, c.Input, true)
		if out == "" {
			return "ok"
		}
		return out
	case "tpch":
		var n int
		c.ScanArgs(t, "q", &n)
		text, err := queries.Get(n)
		if err != nil {
			t.Fatal(err)
		}
		return h.run(t, c, text, true)
	case "parse":
		stmts, err := h.p.Parse(c.Input)
		if err != nil {
			return errText(err)
		}
		var lines []string
		for _, s := range stmts {
			line := fmt.Sprintf("%T", s)
			switch s := s.(type) {
			case *sql.Use:
				line += " db=" + s.DB
			case *sql.Kill:
				line += fmt.Sprintf(" id=%d query=%v", s.ConnectionID, s.QueryOnly)
			case *sql.Explain:
				line += fmt.Sprintf(" target=%T", s.Target)
			case *sql.DropView:
				line += fmt.Sprintf(" views=%v ifexists=%v", s.Views, s.IfExists)
			}
			lines = append(lines, line)
		}
		return strings.Join(lines, "\n")
	case "load":
		stmts, err := h.p.Parse(c.Input)
		if err != nil {
			return errText(err)
		}
		l, ok := stmts[0].(*sql.LoadData)
		if !ok {
			return fmt.Sprintf("not LOAD DATA: %T", stmts[0])
		}
		p, _, _ := h.planner(t, c)
		spec, err := p.LoadData(h.env, l)
		if err != nil {
			return errText(err)
		}
		return fmt.Sprintf("table=%s.%s columns=%v path=%s local=%v fields=%q enclosed=%q escaped=%q lines=%q starting=%q ignore=%d",
			spec.Table.DB, spec.Table.Name, spec.Columns, spec.Path, spec.Local, spec.FieldsTerminated,
			spec.Enclosed, spec.Escaped, spec.LinesTerminated, spec.LinesStarting, spec.IgnoreLines)
	case "set":
		stmts, err := h.p.Parse(c.Input)
		if err != nil {
			return errText(err)
		}
		set, ok := stmts[0].(*sql.Set)
		if !ok {
			return fmt.Sprintf("not a SET: %T", stmts[0])
		}
		p, _, _ := h.planner(t, c)
		vals, err := p.EvalSet(h.env, set)
		if err != nil {
			return errText(err)
		}
		var lines []string
		for _, v := range vals {
			val := v.Value.String()
			if v.Default {
				val = "DEFAULT"
			}
			lines = append(lines, fmt.Sprintf("kind=%d %s = %s", v.Kind, v.Name, val))
		}
		return strings.Join(lines, "\n")
	}
	t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
	return ""
}

func TestDataDriven(t *testing.T) {
	files, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			h := newHarness()
			datadriven.RunTest(t, f, h.cmd)
		})
	}
}

func TestQueryReadsTables(t *testing.T) {
	for q, want := range map[string]bool{
		"select 1":                                             false,
		"select 1 from dual":                                   false,
		"select now(), @@version, (select 2)":                  false,
		"select 1 where exists (select 1)":                     false,
		"select * from nation":                                 true,
		"select (select count(*) from region)":                 true,
		"select 1 where 1 in (select n_nationkey from nation)": true,
		"with t as (select 1 as a) select a from t":            true, // a CTE's name reads as a table: the safe side
	} {
		stmts, err := sql.NewParser().Parse(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got := stmts[0].(*sql.Query).ReadsTables(); got != want {
			t.Errorf("%s: ReadsTables() = %v, want %v", q, got, want)
		}
	}
}
