package sql_test

import (
	"context"
	"testing"

	"github.com/colinkdb/colink/dbt3/queries"
	"github.com/colinkdb/colink/sql"
	"github.com/colinkdb/colink/sql/catalog"
)

// BenchmarkPlanTPCH measures parse + bind + optimise of the 22 TPC-H queries (Q15's
// select against an existing view), per full set.
func BenchmarkPlanTPCH(b *testing.B) {
	cat := catalog.TPCH("tpch")
	planner := &sql.Planner{Catalog: cat, Stats: catalog.TPCHMeasuredSF1()}
	env := testEnv{db: "tpch"}
	p := sql.NewParser()
	var texts []string
	for n := 1; n <= queries.Count; n++ {
		text, err := queries.Get(n)
		if err != nil {
			b.Fatal(err)
		}
		stmts := queries.Split(text)
		if n == 15 {
			s, err := p.Parse(stmts[0])
			if err != nil {
				b.Fatal(err)
			}
			v, replace, err := planner.CreateView(env, s[0].(*sql.CreateView))
			if err != nil {
				b.Fatal(err)
			}
			if err := cat.CreateView(v, replace); err != nil {
				b.Fatal(err)
			}
			texts = append(texts, stmts[1])
			continue
		}
		texts = append(texts, stmts[0])
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		for _, text := range texts {
			stmts, err := p.Parse(text)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := planner.Plan(ctx, env, stmts[0]); err != nil {
				b.Fatal(err)
			}
		}
	}
}
