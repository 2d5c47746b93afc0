package bind_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/sql"
	"github.com/colinkdb/colink/sql/bind"
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
	q, proj, err := planProjection(t, env{}, "select "+text+" from orders")
	if err != nil {
		return errorText(err)
	}
	input := proj.Input.Output()
	e, err := lower.ExprText(proj.Exprs[0], input, nil, plan.NewNamer(q.Root, q.MD).MySQLText)
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
	out, err := ev.Eval(context.Background(), b)
	if err != nil {
		return errorText(err)
	}
	return out.Datum(0).String()
}

// planProjection plans query for the session e and returns the plan and its first
// projection, or the planner's error.
func planProjection(t *testing.T, e bind.Env, query string) (*plan.Query, *plan.Project, error) {
	t.Helper()
	stmts, err := sql.NewParser().Parse(query)
	if err != nil {
		t.Fatal(err)
	}
	planner := &sql.Planner{Catalog: catalog.TPCH("tpch"), Stats: catalog.TPCHStats{SF: 1}}
	q, err := planner.Plan(context.Background(), e, stmts[0])
	if err != nil {
		return nil, nil, err
	}
	var proj *plan.Project
	plan.WalkPlan(q.Root, func(n plan.Node) bool {
		if p, ok := n.(*plan.Project); ok && proj == nil {
			proj = p
		}
		return proj == nil
	})
	if proj == nil {
		t.Fatalf("%s: no projection in the plan", query)
	}
	return q, proj, nil
}

// errorText prints a planner's or an executor's error as "ERROR code (state): message".
func errorText(err error) string {
	var se *sqlerr.Error
	if errors.As(err, &se) {
		return fmt.Sprintf("ERROR %d (%s): %s", se.Code, se.State, se.Message)
	}
	var ve *vec.Error
	if errors.As(err, &ve) {
		return fmt.Sprintf("ERROR %d (%s): %s", ve.Code, ve.SQLState, ve.Msg)
	}
	if err == nil {
		return "no error"
	}
	return "error: " + err.Error()
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

// TestKernelsAgreeWithFolding checks that an expression gives the same answer whether its
// operand is a constant (folded by the planner) or a column value (computed by exec's
// kernels): decimal arithmetic keeps MySQL's intermediate digits both ways, and a double
// that overflows is error 1690 both ways.
func TestKernelsAgreeWithFolding(t *testing.T) {
	for _, c := range []struct {
		text, col, value string
		// foldsInner: the folder computes an inner operation first and names the outer one
		// over its value ('(1e308 * 10)'), the kernel names the expression as written
		// ('((o_orderkey * 1e308) * 10)'): compare errors up to the expression.
		foldsInner bool
	}{
		{"?/3*3", "o_orderkey", "1", false},
		{"?/3*3", "o_orderkey", "2", false},
		{"?/3 + ?/3 + ?/3", "o_orderkey", "1", false},
		{"(?/3)*(?/3)*9", "o_orderkey", "1", false},
		{"?/7*7", "o_totalprice", "1.50", false},
		{"-(?/3)*3", "o_orderkey", "1", false},
		{"?/3/7*21", "o_orderkey", "1", false},
		{"?/3*3 - 1", "o_orderkey", "1", false},
		{"?/3", "o_orderkey", "2", false},
		{"?/3", "o_totalprice", "-2.00", false},
		{"? * 1.00000 / 3", "o_orderkey", "2", false},
		{"cast(?/3*3 as decimal(10,2))", "o_orderkey", "1", false},
		{"round(?/3*3, 2)", "o_orderkey", "1", false},
		{"(?/3*3) % 2", "o_orderkey", "3", false},
		{"?/0*3", "o_orderkey", "1", false},
		{"? * 1e308 * 10", "o_orderkey", "1", true},
		{"? * 1e308", "o_orderkey", "10", false},
		{"? + 9223372036854775807", "o_orderkey", "1", false},
		{"-(? - 9223372036854775807 - 10)", "o_orderkey", "1", true},
		{"? * 1e308 - 1e308 * 3", "o_orderkey", "1", false},
		{"? / 1e-300 / 1e-10", "o_orderkey", "1", true},
	} {
		folded := evalOnRow(t, strings.ReplaceAll(c.text, "?", c.value), nil)
		kernel := evalOnRow(t, strings.ReplaceAll(c.text, "?", c.col), map[string]string{c.col: c.value})
		// An error names the expression alike both ways, but with the column's name where
		// the folder has its value.
		kernel = strings.ReplaceAll(kernel, c.col, c.value)
		if c.foldsInner {
			folded, _, _ = strings.Cut(folded, " in '")
			kernel, _, _ = strings.Cut(kernel, " in '")
		}
		if folded != kernel {
			t.Errorf("%s with ? = %s: folded %s, on column %s: %s", c.text, c.value, folded, c.col, kernel)
		}
	}
}

// sessionEnv is a session whose statement began at @@timestamp ts, on connection 42.
type sessionEnv struct {
	env
	ts float64
}

func (e sessionEnv) SystemVariable(name string, _ bool) (types.Value, bool) {
	switch name {
	case "timestamp":
		return types.FloatValue(e.ts), true
	case "pseudo_thread_id":
		return types.IntValue(42), true
	}
	return types.Value{}, false
}

// TestStatementTime: NOW(), CURRENT_TIMESTAMP, CURDATE(), UNIX_TIMESTAMP() read the
// statement's @@timestamp, bound once as literals (every row agrees), with MySQL's text and
// types; NOW(fsp) truncates; CONNECTION_ID() is the session's.
func TestStatementTime(t *testing.T) {
	ts := time.Date(2024, 2, 29, 13, 4, 5, 987654000, time.Local)
	q := "select now(), current_timestamp, current_timestamp(), localtimestamp, now(3), now(6), curdate(), current_date, " +
		"unix_timestamp(), connection_id(), unix_timestamp(date '1970-01-02') - unix_timestamp(date '1970-01-01') from orders"
	p, proj, err := planProjection(t, sessionEnv{ts: float64(ts.UnixMicro()) / 1e6}, q)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"timestamp '2024-02-29 13:04:05' datetime", "timestamp '2024-02-29 13:04:05' datetime", "timestamp '2024-02-29 13:04:05' datetime",
		"timestamp '2024-02-29 13:04:05' datetime", "timestamp '2024-02-29 13:04:05.987' datetime(3)", "timestamp '2024-02-29 13:04:05.987654' datetime(6)",
		"date '2024-02-29' date", "date '2024-02-29' date", fmt.Sprintf("%d bigint", ts.Unix()), "42 bigint", "86400 bigint"}
	if len(proj.Exprs) != len(want) {
		t.Fatalf("no projection of %d expressions in %s", len(want), plan.Format(p, plan.FormatOptions{}))
	}
	for i, e := range proj.Exprs {
		l, ok := e.(*plan.Literal)
		if !ok {
			t.Errorf("expression %d is %T, not a literal", i, e)
			continue
		}
		if got := l.V.String() + " " + l.V.Type.String(); got != want[i] {
			t.Errorf("expression %d: %s, want %s", i, got, want[i])
		}
	}
	// UNIX_TIMESTAMP(d) folded and on a column agree; 0 outside TIMESTAMP's range.
	for _, d := range []string{"1996-01-02", "1969-12-31", "2040-01-01"} {
		folded := evalOnRow(t, "unix_timestamp(date '"+d+"')", nil)
		kernel := evalOnRow(t, "unix_timestamp(o_orderdate)", map[string]string{"o_orderdate": d})
		want := "0"
		if d == "1996-01-02" {
			want = fmt.Sprint(time.Date(1996, 1, 2, 0, 0, 0, 0, time.Local).Unix())
		}
		if folded != want || kernel != want {
			t.Errorf("unix_timestamp of %s: folded %s, on a column %s, want %s", d, folded, kernel, want)
		}
	}
	for _, bad := range []string{"select now(7)", "select now(1, 2)", "select curdate(1)"} {
		stmts, err := sql.NewParser().Parse(bad)
		if err == nil {
			planner := &sql.Planner{Catalog: catalog.TPCH("tpch"), Stats: catalog.TPCHStats{SF: 1}}
			_, err = planner.Plan(context.Background(), sessionEnv{}, stmts[0])
		}
		if err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
