package lower_test

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/colinkdb/colink/dbt3/queries"
	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/sql"
	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/lower"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/types"
)

type env struct{}

func (env) Database() string                                { return "tpch" }
func (env) SystemVariable(string, bool) (types.Value, bool) { return types.Value{}, false }
func (env) UserVariable(string) (types.Value, bool)         { return types.Value{}, false }

// exprsOf returns a node's expressions with the input columns each reads from.
func exprsOf(n plan.Node) (es []plan.Expr, input []plan.ColumnID) {
	for _, in := range n.Inputs() {
		input = append(input, in.Output()...)
	}
	switch x := n.(type) {
	case *plan.Scan:
		// A scan's filters read its table's columns, output or not.
		refs := plan.RefsAll(x.Filters).Union(plan.MakeColSet(x.Cols...))
		return x.Filters, refs.Ordered()
	case *plan.Aggregate:
		es = append(es, x.Groups...)
		for _, a := range x.Aggs {
			if a.Arg != nil {
				es = append(es, a.Arg)
			}
		}
		return es, input
	}
	return plan.NodeExprs(n), input
}

// TestTypesAgreeWithExec lowers every expression of the 22 optimised TPC-H queries (and a
// few more) and checks that exec's type rules give each the type the binder gave it.
func TestTypesAgreeWithExec(t *testing.T) {
	p := sql.NewParser()
	planner := &sql.Planner{Catalog: catalog.TPCH("tpch"), Stats: catalog.TPCHStats{SF: 1}}
	var scripts []string
	for n := 1; n <= queries.Count; n++ {
		text, err := queries.Get(n)
		if err != nil {
			t.Fatal(err)
		}
		if n == 15 {
			// Plan the view's query in place of the view.
			text = strings.ReplaceAll(`select s_suppkey, s_name, s_address, s_phone, total_revenue
from supplier, (select l_suppkey as supplier_no, sum(l_extendedprice * (1 - l_discount)) as total_revenue
  from lineitem where l_shipdate >= date '1996-01-01' and l_shipdate < date '1996-01-01' + interval '3' month
  group by l_suppkey) r
where s_suppkey = supplier_no and total_revenue = (select max(total_revenue) from
  (select l_suppkey, sum(l_extendedprice * (1 - l_discount)) as total_revenue from lineitem
   where l_shipdate >= date '1996-01-01' and l_shipdate < date '1996-01-01' + interval '3' month
   group by l_suppkey) r2) order by s_suppkey`, "\n", " ")
		}
		scripts = append(scripts, text)
	}
	scripts = append(scripts,
		`select o_totalprice / 3, -o_totalprice, o_shippriority + 1, extract(month from o_orderdate),
		  case when o_orderstatus = 'F' then o_totalprice else 0 end, coalesce(o_comment, 'x'),
		  o_orderdate - interval 2 week, o_orderdate + interval 1 quarter
		 from orders where o_comment like '%50!%%' escape '!' and o_orderkey in (1, 2, 3) and not o_orderkey is null`,
		`select l_quantity * l_discount + l_tax, l_quantity % 7, l_extendedprice / l_quantity, avg(l_tax) from lineitem group by 1, 2, 3`)
	checked := 0
	for i, text := range scripts {
		stmts, err := p.Parse(text)
		if err != nil {
			t.Fatalf("script %d: %v", i+1, err)
		}
		q, err := planner.Plan(context.Background(), env{}, stmts[0])
		if err != nil {
			t.Fatalf("script %d: %v", i+1, err)
		}
		plan.WalkPlan(q.Root, func(n plan.Node) bool {
			es, input := exprsOf(n)
			types := make([]vec.Type, len(input))
			for k, id := range input {
				vt, err := lower.Type(q.MD.Column(id).Type)
				if err != nil {
					t.Fatal(err)
				}
				types[k] = vt
			}
			for _, e := range es {
				x, err := lower.Expr(e, input)
				if err != nil {
					t.Errorf("script %d: lower %s: %v", i+1, plan.FormatExpr(e, q.MD), err)
					continue
				}
				got, err := expr.TypeOf(x, types)
				if err != nil {
					t.Errorf("script %d: exec rejects %s (%s): %v", i+1, plan.FormatExpr(e, q.MD), x, err)
					continue
				}
				want, _ := lower.Type(e.Type())
				if got != want {
					t.Errorf("script %d: %s: the binder says %s, exec says %s", i+1, plan.FormatExpr(e, q.MD), want, got)
				}
				checked++
			}
			return true
		})
	}
	t.Logf("%d expressions checked", checked)
	if checked < 200 {
		t.Errorf("only %d expressions checked", checked)
	}
}

func TestDatum(t *testing.T) {
	for _, s := range []string{"0.05", "-1.50", "123456789012345678901234.5678", "-99999999999999999999999999999999.999999"} {
		v, err := types.ParseDecimal(s)
		if err != nil {
			t.Fatal(err)
		}
		d, err := lower.Datum(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.String(); got != s {
			t.Errorf("Datum(%s) = %s (%s)", s, got, d.Type)
		}
	}
	big38, _ := new(big.Int).SetString(strings.Repeat("9", 38), 10)
	if _, err := lower.Datum(types.DecimalValue(big38, types.Dec(38, 0))); err != nil {
		t.Errorf("38 nines: %v", err)
	}
	d, _ := lower.Datum(types.DateValue(9131))
	if d.String() != "1995-01-01" {
		t.Errorf("date: %s", d)
	}
}

func TestLikeEscape(t *testing.T) {
	md := plan.NewMetadata()
	c := md.Add(plan.ColumnMeta{Name: "c", Type: types.VarcharType(10)})
	e := plan.NewBool(plan.FnLike, md.Ref(c), plan.Lit(types.StringValue(`50!%\x`)), plan.Lit(types.StringValue("!")))
	x, err := lower.Expr(e, []plan.ColumnID{c})
	if err != nil {
		t.Fatal(err)
	}
	if got := x.Args[1].Value.Str; got != `50\%\\x` {
		t.Errorf("pattern %q", got)
	}
}

// TestParams checks that a parameter lowers to the caller's shared constant node, so that
// setting its value later changes every expression that reads it.
func TestParams(t *testing.T) {
	md := plan.NewMetadata()
	c := md.Add(plan.ColumnMeta{Name: "c", Type: types.Int64Type})
	p := md.Add(plan.ColumnMeta{Name: "p", Type: types.Int64Type})
	e := plan.NewBool(plan.FnGt, md.Ref(c), md.Ref(p))
	slot := expr.Const(vec.NullDatum(vec.Int64Type))
	x, err := lower.ExprParams(e, []plan.ColumnID{c}, map[plan.ColumnID]*expr.Expr{p: slot})
	if err != nil {
		t.Fatal(err)
	}
	if x.Args[1] != slot {
		t.Fatalf("parameter lowered to %v, not the shared slot", x.Args[1])
	}
	if _, err := lower.Expr(e, []plan.ColumnID{c}); err == nil {
		t.Fatal("a column outside the input lowered without parameters")
	}
}

// TestExprTextOnlyWhereErrorsName lowers select-list expressions with a text function and
// checks that exactly the nodes whose kernels can raise error 1690 carry Text (it travels in
// every fragment), printed as MySQL's error messages print the expression.
func TestExprTextOnlyWhereErrorsName(t *testing.T) {
	planner := &sql.Planner{Catalog: catalog.TPCH("tpch"), Stats: catalog.TPCHStats{SF: 1}}
	for _, c := range []struct{ text, want string }{
		{"o_orderkey + 1", "[(+ #0 1) | (o_orderkey + 1)]"},
		{"-(o_orderkey * 2) < 3", "(< [(neg [(* #0 2) | (o_orderkey * 2)]) | -((o_orderkey * 2))] 3)"},
		{"abs(o_totalprice) = 1", "(= [(abs #0) | abs(o_totalprice)] 1.00:decimal(15,2))"},
		{"exp(o_totalprice * 2)", "[(exp (cast [(* #0 2) | (o_totalprice * 2)] double)) | exp((o_totalprice * 2))]"},
		{"upper(o_comment)", "(upper #0)"},
	} {
		stmts, err := sql.NewParser().Parse("select " + c.text + " from orders")
		if err != nil {
			t.Fatal(err)
		}
		q, err := planner.Plan(context.Background(), env{}, stmts[0])
		if err != nil {
			t.Fatal(err)
		}
		var proj *plan.Project
		plan.WalkPlan(q.Root, func(n plan.Node) bool {
			if p, ok := n.(*plan.Project); ok && proj == nil {
				proj = p
			}
			return proj == nil
		})
		if proj == nil {
			t.Fatalf("%s: no projection", c.text)
		}
		e, err := lower.ExprText(proj.Exprs[0], proj.Input.Output(), nil, plan.NewNamer(q.Root, q.MD).MySQLText)
		if err != nil {
			t.Fatal(err)
		}
		if got := withText(e); got != c.want {
			t.Errorf("%s: got %s, want %s", c.text, got, c.want)
		}
	}
}

// withText prints e in the IR form with each node's Text: [node | text].
func withText(e *expr.Expr) string {
	s := e.String()
	if len(e.Args) > 0 {
		var b strings.Builder
		b.WriteString("(" + string(e.Op))
		for _, a := range e.Args {
			b.WriteString(" " + withText(a))
		}
		if e.Op == expr.OpCast {
			b.WriteString(" " + e.Type.String())
		}
		s = b.String() + ")"
	}
	if e.Text != "" {
		return "[" + s + " | " + e.Text + "]"
	}
	return s
}
