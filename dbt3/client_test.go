package dbt3

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/colinkdb/colink/dbt3/dbt3test"
)

func dialFake(t *testing.T, e *dbt3test.Engine) *Conn {
	t.Helper()
	sock := dbt3test.Serve(t, e)
	c, err := Dial(context.Background(), sock, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var mixedResult = dbt3test.Canned{
	Columns: dbt3test.Cols("l_returnflag string", "sum_qty decimal(15,2)", "avg_disc float64", "o_orderdate date", "count_order int64", "note string"),
	Rows: [][]string{
		{"A", "37734107.00", "0.049985295838397614", "1995-03-15", "1478493", dbt3test.Null},
		{"N", "-991417.50", "0.05", "1992-01-02", "38854", "ünïcode"},
	},
}

func TestExecFormats(t *testing.T) {
	e := dbt3test.NewEngine()
	e.Set("select mixed", mixedResult)
	c := dialFake(t, e)
	res, elapsed, err := c.Exec(context.Background(), "select mixed")
	if err != nil {
		t.Fatal(err)
	}
	if elapsed <= 0 {
		t.Errorf("elapsed %v", elapsed)
	}
	if got, want := strings.Join(res.Types, ","), "VARCHAR,DECIMAL,DOUBLE,DATE,BIGINT,VARCHAR"; got != want {
		t.Errorf("types %s, want %s", got, want)
	}
	var psv bytes.Buffer
	if err := res.WritePSV(&psv); err != nil {
		t.Fatal(err)
	}
	wantPSV := `l_returnflag|sum_qty|avg_disc|o_orderdate|count_order|note
A|37734107.00|0.049985295838397614|1995-03-15|1478493|
N|-991417.50|0.05|1992-01-02|38854|ünïcode
`
	if psv.String() != wantPSV {
		t.Errorf("psv:\n%s\nwant:\n%s", psv.String(), wantPSV)
	}
	var table bytes.Buffer
	if err := res.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	wantTable := `+--------------+-------------+----------------------+-------------+-------------+---------+
| l_returnflag | sum_qty     | avg_disc             | o_orderdate | count_order | note    |
+--------------+-------------+----------------------+-------------+-------------+---------+
| A            | 37734107.00 | 0.049985295838397614 | 1995-03-15  |     1478493 | NULL    |
| N            |  -991417.50 |                 0.05 | 1992-01-02  |       38854 | ünïcode |
+--------------+-------------+----------------------+-------------+-------------+---------+
2 rows in set
`
	if table.String() != wantTable {
		t.Errorf("table:\n%s\nwant:\n%s", table.String(), wantTable)
	}
	var csvOut bytes.Buffer
	if err := res.WriteCSV(&csvOut); err != nil {
		t.Fatal(err)
	}
	wantCSV := "l_returnflag,sum_qty,avg_disc,o_orderdate,count_order,note\nA,37734107.00,0.049985295838397614,1995-03-15,1478493,\\N\nN,-991417.50,0.05,1992-01-02,38854,ünïcode\n"
	if csvOut.String() != wantCSV {
		t.Errorf("csv:\n%s\nwant:\n%s", csvOut.String(), wantCSV)
	}
	var jsonOut bytes.Buffer
	if err := res.WriteJSON(&jsonOut); err != nil {
		t.Fatal(err)
	}
	wantJSON := `[
  {"l_returnflag": "A", "sum_qty": 37734107.00, "avg_disc": 0.049985295838397614, "o_orderdate": "1995-03-15", "count_order": 1478493, "note": null},
  {"l_returnflag": "N", "sum_qty": -991417.50, "avg_disc": 0.05, "o_orderdate": "1992-01-02", "count_order": 38854, "note": "ünïcode"}
]
`
	if jsonOut.String() != wantJSON {
		t.Errorf("json:\n%s\nwant:\n%s", jsonOut.String(), wantJSON)
	}
	if !json.Valid(jsonOut.Bytes()) {
		t.Errorf("WriteJSON wrote invalid JSON")
	}
	if !res.IsNull(0, 5) || res.IsNull(1, 5) || res.IsNull(0, 0) {
		t.Errorf("IsNull wrong: nulls %v", res.nulls)
	}
	a := res.Answers()
	if !a.Text[0] || a.Text[1] || a.Text[2] || !a.Text[3] || a.Text[4] {
		t.Errorf("answer text columns %v", a.Text)
	}
}

func TestExecErrorsAndEmpty(t *testing.T) {
	e := dbt3test.NewEngine()
	e.Set("select nothing", dbt3test.Canned{Columns: dbt3test.Cols("x int64")})
	e.Set("select broken", dbt3test.Canned{Err: "primproc0 is down"})
	c := dialFake(t, e)
	ctx := context.Background()
	res, _, err := c.Exec(ctx, "select nothing")
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	res.WriteTable(&table)
	if !strings.Contains(table.String(), "Empty set") {
		t.Errorf("empty result printed as:\n%s", table.String())
	}
	if _, _, err := c.Exec(ctx, "select broken"); err == nil || !strings.Contains(err.Error(), "primproc0 is down") {
		t.Errorf("error %v, want the server's message", err)
	}
	res, _, err = c.Exec(ctx, "create view v as select 1")
	if err != nil || len(res.Columns) != 0 {
		t.Errorf("DDL: %v, %+v", err, res)
	}
}

func TestMySQLConfig(t *testing.T) {
	cases := []struct{ addr, net, address, err string }{
		{"127.0.0.1:4306", "tcp", "127.0.0.1:4306", ""},
		{"tcp://localhost:4306", "tcp", "localhost:4306", ""},
		{"/run/exemgr.sock", "unix", "/run/exemgr.sock", ""},
		{"unix:///run/exemgr.sock", "unix", "/run/exemgr.sock", ""},
		{"unix://", "", "", "no socket path"},
		{"localhost", "", "", "want host:port"},
	}
	for _, c := range cases {
		cfg, err := MySQLConfig(c.addr, "")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.addr, err, c.err)
			}
			continue
		}
		if err != nil || cfg.Net != c.net || cfg.Addr != c.address {
			t.Errorf("%q: %v %+v", c.addr, err, cfg)
		}
	}
}

func TestDialFails(t *testing.T) {
	_, err := Dial(context.Background(), t.TempDir()+"/none.sock", "")
	if err == nil || !strings.Contains(err.Error(), "exemgr at") {
		t.Errorf("err %v", err)
	}
}

func TestQueryStats(t *testing.T) {
	e := dbt3test.NewEngine()
	e.Set("select 1", dbt3test.Canned{Columns: dbt3test.Cols("1 int64"), Rows: [][]string{{"1"}}})
	c := dialFake(t, e)
	ctx := context.Background()
	if _, _, err := c.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	stats, err := c.QueryStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 2 || stats[0].Process != "exemgr" || stats[1].Process != "primproc0" || !stats[1].IsPrimProc() {
		t.Fatalf("stats %+v", stats)
	}
	p := stats[1]
	if p.Transport != "tcp" || p.UserUS != 200 || p.SysUS != 20 || p.BytesIn != 4096 || p.BatchesIn != 3 || p.Peer != "tcp://127.0.0.1:8620" {
		t.Errorf("primproc0 %+v", p)
	}
	if u := p.Usage(); u.User != 0.0002 || u.Sys != 0.00002 || u.Voluntary != 2 || u.Involuntary != 2 {
		t.Errorf("usage %+v", u)
	}
}

func TestParseQueryStatsBad(t *testing.T) {
	cases := []struct {
		res  Result
		want string
	}{
		{Result{Columns: []string{"process", "user_us"}}, `no "sys_us" column`},
		{Result{Columns: []string{"process", "user_us", "sys_us"}}, "no rows"},
		{Result{Columns: []string{"process", "user_us", "sys_us"}, Rows: [][]string{{"exemgr", "x", "1"}}}, "not an integer"},
		{Result{Columns: []string{"process", "user_us", "sys_us"}, Rows: [][]string{{"exemgr", "1", "1"}, {"exemgr", "1", "1"}}}, "twice"},
		{Result{Columns: []string{"process", "user_us", "sys_us"}, Rows: [][]string{{"", "1", "1"}}}, "names no process"},
	}
	for _, c := range cases {
		if _, err := ParseQueryStats(&c.res); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", c.res, err, c.want)
		}
	}
	// Unknown columns are ignored, column names are matched without regard to case.
	st, err := ParseQueryStats(&Result{Columns: []string{"PROCESS", "User_us", "sys_us", "future_column"}, Rows: [][]string{{"exemgr", "5", "6", "x"}}})
	if err != nil || st[0].UserUS != 5 || st[0].SysUS != 6 {
		t.Errorf("%+v %v", st, err)
	}
}
