package physical_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/colinkdb/colink/dbt3/queries"
	"github.com/colinkdb/colink/sql"
	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/opt"
	"github.com/colinkdb/colink/sql/physical"
	"github.com/colinkdb/colink/sql/types"
)

type env struct{}

func (env) Database() string                                { return "tpch" }
func (env) SystemVariable(string, bool) (types.Value, bool) { return types.Value{}, false }
func (env) UserVariable(string) (types.Value, bool)         { return types.Value{}, false }

// explain plans a script's statements (views are created, the last query explained) for
// the given number of primprocs (0: unknown).
func explain(ctx context.Context, cat *catalog.Memory, sf float64, primprocs int, pushdown physical.Pushdown, script string) (string, error) {
	// At SF 1 the planner sees what the engine measures from dbgen's data, elsewhere TPC-H's
	// specified distributions.
	var stats catalog.Stats = catalog.TPCHStats{SF: sf}
	if sf == 1 {
		stats = catalog.TPCHMeasuredSF1()
	}
	planner := &sql.Planner{Catalog: cat, Stats: stats, Options: opt.Options{Primprocs: primprocs}}
	stmts, err := sql.NewParser().Parse(script)
	if err != nil {
		return "", err
	}
	out := ""
	for _, st := range stmts {
		switch st := st.(type) {
		case *sql.CreateView:
			v, replace, err := planner.CreateView(env{}, st)
			if err != nil {
				return "", err
			}
			if err := cat.CreateView(v, replace); err != nil {
				return "", err
			}
		case *sql.DropView:
			for _, v := range st.Views {
				cat.DropView("tpch", v.Name)
			}
		case *sql.Query:
			q, err := planner.Plan(ctx, env{}, st)
			if err != nil {
				return "", err
			}
			p, err := physical.Build(q, physical.Options{Catalog: cat, Primprocs: primprocs, Pushdown: pushdown})
			if err != nil {
				return "", err
			}
			out = p.Explain()
		}
	}
	return out, nil
}

// TestExplain prints the physical plans of testdata/explain: the 22 TPC-H queries planned
// with the statistics of SF 1 (tpch q=N [sf=F] [primprocs=N] [pushdown=L]) and other queries
// (explain [sf=F] [primprocs=N] [pushdown=L]).
func TestExplain(t *testing.T) {
	datadriven.RunTest(t, "testdata/explain", func(t *testing.T, c *datadriven.TestData) string {
		sf := 1.0
		c.MaybeScanArgs(t, "sf", &sf)
		primprocs := 0
		c.MaybeScanArgs(t, "primprocs", &primprocs)
		var pushdown physical.Pushdown
		var level string
		if c.MaybeScanArgs(t, "pushdown", &level) {
			p, err := physical.ParsePushdown(level)
			if err != nil {
				t.Fatalf("%s: %v", c.Pos, err)
			}
			pushdown = p
		}
		script := c.Input
		if c.Cmd == "tpch" {
			var n int
			c.ScanArgs(t, "q", &n)
			var err error
			if script, err = queries.Get(n); err != nil {
				t.Fatal(err)
			}
		}
		out, err := explain(context.Background(), catalog.TPCH("tpch"), sf, primprocs, pushdown, script)
		if err != nil {
			return fmt.Sprintf("error: %v\n", err)
		}
		return out
	})
}
