package fold_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/colinkdb/colink/sql"
	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

type env struct{}

func (env) Database() string                                { return "tpch" }
func (env) SystemVariable(string, bool) (types.Value, bool) { return types.Value{}, false }
func (env) UserVariable(name string) (types.Value, bool)    { return types.Value{}, false }
func planSelect(t *testing.T, p *sql.Planner, q string) (*plan.Query, error) {
	t.Helper()
	stmts, err := sql.NewParser().Parse(q)
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 {
		t.Fatalf("%q: %d statements", q, len(stmts))
	}
	return p.Plan(context.Background(), env{}, stmts[0])
}

// TestFold runs testdata/fold: each line of a "fold" case is a SELECT planned against the
// TPC-H catalog; the output is, per result column, the folded value as the MySQL text
// protocol sends it (and its type), the expression left for the executor when it did not
// fold, or the error the client gets.
func TestFold(t *testing.T) {
	p := &sql.Planner{Catalog: catalog.TPCH("tpch"), Stats: catalog.TPCHStats{SF: 1}}
	datadriven.RunTest(t, "testdata/fold", func(t *testing.T, d *datadriven.TestData) string {
		var out []string
		for _, line := range strings.Split(d.Input, "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			q, err := planSelect(t, p, line)
			if err != nil {
				var se *sqlerr.Error
				if errors.As(err, &se) {
					out = append(out, "error: "+se.Error())
				} else {
					out = append(out, "error (not a sqlerr.Error): "+err.Error())
				}
				continue
			}
			var cols []string
			for i, e := range projectExprs(q) {
				name := q.Names[i]
				if l, ok := e.(*plan.Literal); ok {
					cols = append(cols, name+" = "+l.V.Text()+" ("+l.V.Type.String()+")")
				} else {
					cols = append(cols, name+" not folded: "+plan.FormatExpr(e, q.MD))
				}
			}
			out = append(out, strings.Join(cols, "\n"))
		}
		return strings.Join(out, "\n")
	})
}

// projectExprs returns the expressions of the plan's top Project, one per result column.
func projectExprs(q *plan.Query) []plan.Expr {
	var out []plan.Expr
	plan.WalkPlan(q.Root, func(n plan.Node) bool {
		if p, ok := n.(*plan.Project); ok {
			out = p.Exprs
			return false
		}
		return true
	})
	return out
}
