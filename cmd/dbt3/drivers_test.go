package main

import (
	"strings"
	"testing"

	"github.com/colinkdb/colink/dbt3/dbt3test"
)

// Bad input to the driver commands: exit status 2 and a message naming the problem, before
// anything starts.
func TestDriverUsage(t *testing.T) {
	missing := t.TempDir() + "/missing"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"query"}, "give exactly one of -q N, -f FILE and -e SQL"},
		{[]string{"query", "-e", "select 1", "--format", "xml"}, `--format "xml": want psv, table, csv or json`},
		{[]string{"query", "-e", "select 1", "--mysql", "localhost"}, "want host:port"},
		{[]string{"query", "-f", missing}, "no such file"},
		{[]string{"power", "--sf", "0"}, "--sf"},
		{[]string{"power", "--answers", "x"}, "add --validation"},
		{[]string{"power", "--validation", "--answers", missing}, "--answers"},
		{[]string{"power", "--pid", "exemgr"}, "want name=PID"},
		{[]string{"throughput", "--streams", "0"}, "--streams 0"},
		{[]string{"compare", "--transports", "tcp,memfd"}, `unknown transport "memfd"`},
		{[]string{"compare", "--transports", "unix,unix"}, "given twice"},
		{[]string{"compare", "--data", missing}, "the data directory does not exist"},
		{[]string{"compare", "--from", missing}, "--from"},
		{[]string{"compare", "--runs", "0"}, "--runs 0"},
		{[]string{"compare", "--primprocs", "0"}, "--primprocs 0"},
		{[]string{"compare", "--queries", "Q23"}, "--queries"},
		{[]string{"compare", "--sf", "1.5"}, "--sf"},
		{[]string{"compare", "--answers", missing}, "--answers"},
		{[]string{"compare", "--duckdb", missing}, "--duckdb"},
		{[]string{"compare", "--bin", missing}, "--bin"},
		{[]string{"bench", "--transports", "tcp,memfd"}, `unknown transport "memfd"`},
		{[]string{"bench", "--from", "x"}, "bench generates its own tables"},
		{[]string{"report"}, "give the run files"},
		{[]string{"report", missing}, "no such file"},
	}
	for _, c := range cases {
		code, out, errs := runArgs(t, c.args...)
		if code != exitUsage || !strings.Contains(out+errs, c.want) {
			t.Errorf("dbt3 %v: exit %d, output %q; want exit 2 and %q", c.args, code, out+errs, c.want)
		}
	}
}

// dbt3 query against the fake engine: the script's statements in order, the last result
// set printed as psv or as a table.
func TestQueryFormats(t *testing.T) {
	e := dbt3test.NewEngine()
	e.Set("select l_returnflag, sum(l_quantity) as sum_qty from lineitem group by l_returnflag", dbt3test.Canned{
		Columns: dbt3test.Cols("l_returnflag string", "sum_qty decimal(15,2)"),
		Rows:    [][]string{{"A", "37734107.00"}, {"N", dbt3test.Null}},
	})
	sock := dbt3test.Serve(t, e)
	script := "-- a comment\ncreate view v as select 1;\nselect l_returnflag, sum(l_quantity) as sum_qty\nfrom lineitem group by l_returnflag;\ndrop view v;\n"
	code, out, errs := runArgs(t, "query", "--mysql", sock, "-e", script)
	if code != exitOK || out != "l_returnflag|sum_qty\nA|37734107.00\nN|\n" {
		t.Errorf("psv: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, _ = runArgs(t, "query", "--mysql", "unix://"+sock, "-e", script, "--format", "table", "--stats")
	want := "| l_returnflag | sum_qty     |\n+--------------+-------------+\n| A            | 37734107.00 |\n| N            |        NULL |"
	if code != exitOK || !strings.Contains(out, want) || !strings.Contains(out, "2 rows in set") {
		t.Errorf("table: exit %d, stdout:\n%s", code, out)
	}
	code, _, errs = runArgs(t, "query", "--mysql", sock, "-e", "select nothing_canned")
	if code != exitFailure || !strings.Contains(errs, "no canned result") {
		t.Errorf("server error: exit %d, stderr %q", code, errs)
	}
}
