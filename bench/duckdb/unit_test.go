package main

import (
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/colinkdb/colink/dbt3/answers"
	"github.com/colinkdb/colink/dbt3/measure"
)

func TestParseSelection(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "1,3,CS1", want: []string{"Q1", "Q3", "CS1"}},
		{in: "q5-Q8, cs3", want: []string{"Q5", "Q6", "Q7", "Q8", "CS3"}},
		{in: "2,2,q2", want: []string{"Q2"}},
		{in: "22", want: []string{"Q22"}},
		{in: "all", want: allQueryNames()},
		{in: "", want: allQueryNames()},
		{in: "23", err: "unknown query"},
		{in: "0", err: "unknown query"},
		{in: "CS4", err: "no extra query"},
		{in: "8-5", err: "query range"},
		{in: "x", err: "unknown query"},
		{in: ",", err: "no queries"},
	} {
		got, err := parseSelection(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseSelection(%q) = %v, %v; want error containing %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("parseSelection(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if n := len(allQueryNames()); n != 25 {
		t.Errorf("allQueryNames has %d queries, want 22 + 3", n)
	}
}

func TestLoadQueries(t *testing.T) {
	qs, err := loadQueries([]string{"Q15", "CS2", "Q1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(qs[0].Statements) != 3 || !strings.HasPrefix(qs[0].Statements[0], "-- ") ||
		!strings.Contains(qs[0].Statements[0], "create view revenue0") || qs[0].Statements[2] != "drop view revenue0" {
		t.Errorf("Q15 statements = %q; want create view, select, drop view", qs[0].Statements)
	}
	wantRows := []bool{false, true, false}
	for i, s := range qs[0].Statements {
		if returnsRows(s) != wantRows[i] {
			t.Errorf("returnsRows(Q15 statement %d) = %v, want %v", i+1, !wantRows[i], wantRows[i])
		}
	}
	if qs[1].Number != 0 || qs[1].Statements[0] != "select l_comment from lineitem order by 1 limit 100" {
		t.Errorf("CS2 = %+v", qs[1])
	}
	if qs[2].Number != 1 || len(qs[2].Statements) != 1 || !returnsRows(qs[2].Statements[0]) {
		t.Errorf("Q1 = %+v", qs[2])
	}

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "3.sql"), []byte("select 3;"), 0o644)
	os.WriteFile(filepath.Join(dir, "01-q14.sql"), []byte("select 14;\n"), 0o644)
	qs, err = loadQueries([]string{"Q3", "Q14"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if qs[0].Statements[0] != "select 3" || qs[1].Statements[0] != "select 14" {
		t.Errorf("scripts from a directory: %q, %q", qs[0].Statements, qs[1].Statements)
	}
	if _, err := loadQueries([]string{"Q5"}, dir); err == nil || !strings.Contains(err.Error(), "no 5.sql") {
		t.Errorf("missing script: err = %v", err)
	}
}

func TestReturnsRows(t *testing.T) {
	for s, want := range map[string]bool{
		"select 1":                             true,
		"-- comment\n-- more\nselect 1":        true,
		"  (select 1) union (select 2)":        true,
		"with x as (select 1) select * from x": true,
		"create view v as select 1":            false,
		"drop view revenue0":                   false,
		"-- only a comment":                    false,
		"set threads = 2":                      false,
	} {
		if got := returnsRows(s); got != want {
			t.Errorf("returnsRows(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestFormatCell(t *testing.T) {
	dec := func(v int64, scale uint8) duckdb.Decimal {
		return duckdb.Decimal{Width: 38, Scale: scale, Value: big.NewInt(v)}
	}
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, ""},
		{"BUILDING", "BUILDING"},
		{int32(7), "7"},
		{int64(-12), "-12"},
		{big.NewInt(60175), "60175"},
		{dec(38045600, 2), "380456.00"},
		{dec(5058224414861, 4), "505822441.4861"},
		{dec(5, 4), "0.0005"},
		{dec(-5, 2), "-0.05"},
		{dec(0, 2), "0.00"},
		{dec(-123456, 3), "-123.456"},
		{dec(42, 0), "42"},
		{0.0, "0.0"},
		{25.575154611454693, "25.575154611454693"},
		{15.48654581228407, "15.48654581228407"},
		{348406.05428571434, "348406.05428571434"},
		{3.0, "3.0"},
		{-2.5, "-2.5"},
		{1e-5, "1e-05"},
		{1e17, "1e+17"},
		{time.Date(1995, 3, 15, 0, 0, 0, 0, time.UTC), "1995-03-15"},
		{true, "true"},
	} {
		if got := formatCell(tc.in); got != tc.want {
			t.Errorf("formatCell(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCompareResult(t *testing.T) {
	want := &table{Columns: []string{"k", "sum", "avg"}, Rows: [][]string{
		{"A", "10.50", "0.05008133906964238"},
		{"B", "3.0000", "25.575154611454693"},
	}}
	types := []string{"VARCHAR", "DECIMAL(38,2)", "DOUBLE"}
	for _, tc := range []struct {
		name string
		rows [][]string
		cols []string
		diff string // "" means equal
	}{
		{name: "same", rows: want.Rows},
		{name: "double within 1e-6", rows: [][]string{{"A", "10.50", "0.050081339069642"}, {"B", "3.0000", "25.5751546"}}},
		{name: "double beyond 1e-6", rows: [][]string{{"A", "10.50", "0.0500814"}, {"B", "3.0000", "25.575154611454693"}},
			diff: `row 1 column avg: got "0.0500814"`},
		{name: "decimal last digit", rows: [][]string{{"A", "10.51", "0.05008133906964238"}, {"B", "3.0000", "25.575154611454693"}},
			diff: `row 1 column sum: got "10.51", want "10.50"`},
		{name: "decimal scale", rows: [][]string{{"A", "10.5", "0.05008133906964238"}, {"B", "3.0000", "25.575154611454693"}},
			diff: `row 1 column sum`},
		{name: "string", rows: [][]string{{"a", "10.50", "0.05008133906964238"}, {"B", "3.0000", "25.575154611454693"}},
			diff: `row 1 column k`},
		{name: "order", rows: [][]string{want.Rows[1], want.Rows[0]}, diff: "row 1 column k"},
		{name: "missing row", rows: want.Rows[:1], diff: "1 rows, want 2"},
		{name: "null", rows: [][]string{{"A", "10.50", ""}, {"B", "3.0000", "25.575154611454693"}}, diff: "row 1 column avg"},
		{name: "columns", cols: []string{"k"}, rows: [][]string{{"A"}, {"B"}}, diff: "1 columns (k), want 3"},
	} {
		cols, typs := want.Columns, types
		if tc.cols != nil {
			cols, typs = tc.cols, types[:len(tc.cols)]
		}
		diffs := compareResult(&table{Columns: cols, Types: typs, Rows: tc.rows}, want)
		switch {
		case tc.diff == "" && len(diffs) > 0:
			t.Errorf("%s: differences %q, want none", tc.name, diffs)
		case tc.diff != "" && (len(diffs) == 0 || !strings.Contains(strings.Join(diffs, "; "), tc.diff)):
			t.Errorf("%s: differences %q, want one containing %q", tc.name, diffs, tc.diff)
		}
	}
}

func TestPSVRoundTrip(t *testing.T) {
	tb := &table{Columns: []string{"a", "b"}, Rows: [][]string{{"1", "x y"}, {"", "2.50"}}}
	path := filepath.Join(t.TempDir(), "q01.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := writePSV(f, tb); err != nil {
		t.Fatal(err)
	}
	f.Close()
	back, err := readPSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Columns, tb.Columns) || len(back.Rows) != 2 ||
		!slices.Equal(back.Rows[0], tb.Rows[0]) || !slices.Equal(back.Rows[1], tb.Rows[1]) {
		t.Errorf("read back %+v, wrote %+v", back, tb)
	}
	os.WriteFile(path, nil, 0o644)
	if _, err := readPSV(path); err == nil || !strings.Contains(err.Error(), "empty file") {
		t.Errorf("empty answer file: err = %v", err)
	}
}

func TestAnswerPath(t *testing.T) {
	dir := t.TempDir()
	q11 := &query{Name: "Q11", Number: 11, Script: "... sum(ps_supplycost * ps_availqty) * 0.0001000000 ..."}
	if got, want := answerPath(dir, q11), filepath.Join(dir, "q11.csv"); got != want {
		t.Errorf("Q11 without the fixed-fraction answer: %s, want %s", got, want)
	}
	os.WriteFile(filepath.Join(dir, "q11-fraction-0.0001.csv"), []byte("x\n"), 0o644)
	if got, want := answerPath(dir, q11), filepath.Join(dir, "q11-fraction-0.0001.csv"); got != want {
		t.Errorf("Q11 with the fixed-fraction answer: %s, want %s", got, want)
	}
	q11.Script = "... * 0.0100000000 ..."
	if got, want := answerPath(dir, q11), filepath.Join(dir, "q11.csv"); got != want {
		t.Errorf("Q11 with fraction 0.0001/SF: %s, want %s", got, want)
	}
	if got := answerPath(dir, &query{Name: "Q7", Number: 7}); got != filepath.Join(dir, "q07.csv") {
		t.Errorf("Q7: %s", got)
	}
	if got := answerPath(dir, &query{Name: "CS1"}); got != "" {
		t.Errorf("CS1 has answer %s, want none", got)
	}
}

func TestCommandLine(t *testing.T) {
	got := commandLine([]string{"--data", "/tmp/my data", "--queries", "1,3", "--check", "it's"})
	want := `cd bench/duckdb && go run . --data '/tmp/my data' --queries 1,3 --check 'it'\''s'`
	if got != want {
		t.Errorf("commandLine = %s\nwant %s", got, want)
	}
}

// TestCheckAgainstDuckDB checks the comparison of a colink result without a reference
// answer with DuckDB's: equal values pass whatever the columns are named, a different
// value fails naming the difference, and a result already checked against a reference
// answer, or one that failed, is left as it is.
func TestCheckAgainstDuckDB(t *testing.T) {
	colink := &answers.Table{Columns: []string{"count(*)", "avg"}, Rows: [][]string{{"6001215", "25.50"}}}
	same := &table{Columns: []string{"count_star()", "avg"}, Rows: [][]string{{"6001215", "25.50"}}}
	other := &table{Columns: []string{"count_star()", "avg"}, Rows: [][]string{{"6001214", "25.50"}}}

	var s measure.Sample
	if !checkAgainstDuckDB(&s, colink, same) || s.Verified != verifiedDuckDB || s.Error != "" {
		t.Fatalf("equal results: %+v", s)
	}
	s = measure.Sample{}
	if checkAgainstDuckDB(&s, colink, other) || !strings.Contains(s.Error, `got "6001215", want "6001214"`) {
		t.Fatalf("different results: %+v", s)
	}
	s = measure.Sample{Verified: "reference"}
	if !checkAgainstDuckDB(&s, colink, other) || s.Verified != "reference" || s.Error != "" {
		t.Fatalf("a result with a reference answer: %+v", s)
	}
	s = measure.Sample{Error: "timeout"}
	if !checkAgainstDuckDB(&s, nil, same) || s.Error != "timeout" {
		t.Fatalf("a failed result: %+v", s)
	}
}
