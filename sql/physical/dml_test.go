package physical_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/colinkdb/colink/sql"
	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/physical"
)

// TestDML prints the physical plans of INSERT and DELETE statements (testdata/dml), planned
// with the statistics of SF 1: the statement, then the plan of the rows it writes.
func TestDML(t *testing.T) {
	datadriven.RunTest(t, "testdata/dml", func(t *testing.T, c *datadriven.TestData) string {
		cat := catalog.TPCH("tpch")
		planner := &sql.Planner{Catalog: cat, Stats: catalog.TPCHMeasuredSF1()}
		stmts, err := sql.NewParser().Parse(c.Input)
		if err != nil {
			return fmt.Sprintf("error: %v\n", err)
		}
		q, err := planner.Plan(context.Background(), env{}, stmts[0])
		if err != nil {
			return fmt.Sprintf("error: %v\n", err)
		}
		d, err := physical.BuildDML(q, physical.Options{Catalog: cat})
		if err != nil {
			return fmt.Sprintf("error: %v\n", err)
		}
		out := d.Explain()
		for _, f := range d.Input.Schema.Fields() {
			out += fmt.Sprintf("column %s %s\n", f.Name, f.Type)
		}
		return out
	})
}
