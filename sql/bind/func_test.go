package bind_test

import (
	"context"
	"testing"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/sql"
	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/lower"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

type env struct{}

func (env) Database() string                                { return "tpch" }
func (env) SystemVariable(string, bool) (types.Value, bool) { return types.Value{}, false }
func (env) UserVariable(string) (types.Value, bool)         { return types.Value{}, false }

// evalOnRow binds "select <text> from orders" and evaluates the selected expression with
// exec's kernels on one row of orders whose columns hold row's values (text; the others
// are NULL). It returns the value as text, or the error's text.
func evalOnRow(t *testing.T, text string, row map[string]string) string {
	t.Helper()
	stmts, err := sql.NewParser().Parse("select " + text + " from orders")
	if err != nil {
		t.Fatal(err)
	}
	planner := &sql.Planner{Catalog: catalog.TPCH("tpch"), Stats: catalog.TPCHStats{SF: 1}}
	q, err := planner.Plan(context.Background(), env{}, stmts[0])
	if err != nil {
		return "bind error: " + err.Error()
	}
	var proj *plan.Project
	plan.WalkPlan(q.Root, func(n plan.Node) bool {
		if p, ok := n.(*plan.Project); ok && proj == nil {
			proj = p
		}
		return proj == nil
	})
	if proj == nil {
		t.Fatalf("%s: no projection in the plan", text)
	}
	input := proj.Input.Output()
	e, err := lower.Expr(proj.Exprs[0], input)
	if err != nil {
		t.Fatal(err)
	}
	types := make([]vec.Type, len(input))
	b := &vec.Batch{N: 1}
	for i, id := range input {
		col := q.MD.Column(id)
		if types[i], err = lower.Type(col.Type); err != nil {
			t.Fatal(err)
		}
		v := vec.NewVec(types[i])
		d := vec.NullDatum(types[i])
		if s, ok := row[col.Name]; ok {
			if d, err = vec.ParseDatum(types[i], s); err != nil {
				t.Fatalf("%s: %v", col.Name, err)
			}
		}
		v.AppendDatum(d)
		b.Cols = append(b.Cols, v)
	}
	ev, err := expr.Compile(e, types)
	if err != nil {
		t.Fatalf("%s: compile %s: %v", text, e, err)
	}
	out, err := ev.Eval(b)
	if err != nil {
		if se, ok := err.(*sqlerr.Error); ok {
			return se.Error()
		}
		return "error: " + err.Error()
	}
	return out.Datum(0).String()
}

// TestIntervalColumnAmount checks that a column INTERVAL amount whose date leaves the DATE
// range gives NULL, as MySQL and the constant path do, however large the amount: scaling it
// to days or months (WEEK, QUARTER, YEAR) or negating it (DATE_SUB) must not overflow BIGINT.
func TestIntervalColumnAmount(t *testing.T) {
	for _, c := range []struct {
		text, key, want string
	}{
		{"o_orderdate + interval o_orderkey week", "3", "1996-01-23"},
		{"o_orderdate - interval o_orderkey quarter", "3", "1995-04-02"},
		{"o_orderdate + interval o_orderkey year", "3", "1999-01-02"},
		{"o_orderdate - interval o_orderkey day", "3", "1995-12-30"},
		{"o_orderdate + interval o_orderkey week", "2000000000000000000", "NULL"},
		{"o_orderdate + interval o_orderkey week", "-2000000000000000000", "NULL"},
		{"o_orderdate - interval o_orderkey week", "9223372036854775807", "NULL"},
		{"o_orderdate + interval o_orderkey quarter", "4000000000000000000", "NULL"},
		{"o_orderdate - interval o_orderkey year", "-9223372036854775808", "NULL"},
		{"o_orderdate - interval o_orderkey day", "-9223372036854775808", "NULL"},
		{"o_orderdate + interval o_orderkey day", "-9223372036854775808", "NULL"},
		{"o_orderdate + interval o_orderkey year", "4294967296", "NULL"},
		{"o_orderdate + interval o_orderkey year", "7998", "9994-01-02"},
	} {
		got := evalOnRow(t, c.text, map[string]string{"o_orderdate": "1996-01-02", "o_orderkey": c.key})
		if got != c.want {
			t.Errorf("%s with o_orderkey = %s: got %s, want %s", c.text, c.key, got, c.want)
		}
	}
}
