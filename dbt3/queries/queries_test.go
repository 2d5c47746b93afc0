package queries

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/colinkdb/colink/internal/testref"
	"github.com/colinkdb/colink/sql"
)

// wantLimit is the row limit the TPC-H specification sets per query (0: none).
var wantLimit = map[int]uint64{2: 100, 3: 10, 10: 20, 18: 100, 21: 100}

// TestParse checks that every query parses, with colink's parser (TiDB's, with derived-
// table column lists around it), into the statements DBT3 runs: one SELECT, or for Q15
// CREATE VIEW, SELECT, DROP VIEW; and that the query carries the specification's row limit
// and nothing else.
func TestParse(t *testing.T) {
	p := sql.NewParser()
	for n := 1; n <= Count; n++ {
		text, err := Get(n)
		if err != nil {
			t.Fatal(err)
		}
		stmts, err := p.Parse(text)
		if err != nil {
			t.Errorf("Q%d: %v", n, err)
			continue
		}
		var kinds []string
		var sel *ast.SelectStmt
		for _, s := range stmts {
			switch s := s.(type) {
			case *sql.Query:
				kinds = append(kinds, "select")
				sel, _ = s.Stmt.(*ast.SelectStmt)
			case *sql.CreateView:
				kinds = append(kinds, "create view "+s.Stmt.ViewName.Name.O)
			case *sql.DropView:
				kinds = append(kinds, "drop view "+s.Views[0].Name)
			default:
				kinds = append(kinds, fmt.Sprintf("%T", s))
			}
		}
		want := "select"
		if n == 15 {
			want = "create view revenue0,select,drop view revenue0"
		}
		if got := strings.Join(kinds, ","); got != want || sel == nil {
			t.Errorf("Q%d: statements %q, want %q", n, got, want)
			continue
		}
		var limit uint64
		if sel.Limit != nil {
			if sel.Limit.Offset != nil {
				t.Errorf("Q%d: unexpected OFFSET", n)
			}
			v, ok := sel.Limit.Count.(ast.ValueExpr)
			if !ok {
				t.Errorf("Q%d: limit %T is not a literal", n, sel.Limit.Count)
				continue
			}
			limit = v.GetValue().(uint64)
		}
		if limit != wantLimit[n] {
			t.Errorf("Q%d: limit %d, want %d", n, limit, wantLimit[n])
		}
		if got := len(Split(text)); got != len(stmts) {
			t.Errorf("Q%d: Split gives %d statements, parser %d", n, got, len(stmts))
		}
	}
}

// q15Note is the comment Q15's text carries after the template's: it is not safe to run in
// two sessions at once.
var q15Note = []string{
	"-- Not safe to run concurrently. The view it creates is database-wide, so two sessions running",
	"-- this script at once collide (error 1050, the view exists; 1051, it is gone). dbt3",
	"-- throughput gives stream N its own view, revenueN, as DBT3's qgen does with the stream",
	"-- number (the revenue view's name in tpch/queries/15.sql takes the stream's number).",
}

// TestMatchesReference derives each query's text from TPC-H's validation query (qgen -d's
// output) and template by the rules of tpch's TestTemplatesAreTheOfficialOnes, and compares
// byte for byte with what Get renders.
func TestMatchesReference(t *testing.T) {
	dir := testref.TPCH(t)
	directive := regexp.MustCompile(`^:[xon]( -?\d+)?$`)
	blankRuns := regexp.MustCompile(`\n\n+`)
	for n := 1; n <= Count; n++ {
		tmpl, err := os.ReadFile(filepath.Join(dir, "query-templates", fmt.Sprintf("%d.sql", n)))
		if err != nil {
			t.Fatal(err)
		}
		valid, err := os.ReadFile(filepath.Join(dir, "validation-queries", fmt.Sprintf("q%02d.sql", n)))
		if err != nil {
			t.Fatal(err)
		}
		var head []string
		limit := 0
		for _, l := range strings.Split(string(tmpl), "\n") {
			switch {
			case strings.HasPrefix(l, "--") && !strings.Contains(l, "$ID$"):
				head = append(head, l)
			case strings.HasPrefix(l, ":n "):
				limit, _ = strconv.Atoi(strings.TrimPrefix(l, ":n "))
			case directive.MatchString(l):
			}
		}
		// The validation file: "-- using default substitutions", the query, and the
		// Oracle row-limit line "where rownum <= N;".
		var body []string
		for _, l := range strings.Split(string(valid), "\n")[1:] {
			if !strings.HasPrefix(l, "where rownum") {
				body = append(body, l)
			}
		}
		text := strings.TrimSpace(strings.Join(body, "\n"))
		text = strings.ReplaceAll(text, " day (3)", " day")
		text = blankRuns.ReplaceAllString(text, "\n\n")
		if limit > 0 {
			i := strings.LastIndex(text, ";")
			if n == 15 {
				t.Fatal("Q15 has no row limit in the template")
			}
			text = text[:i] + "\nlimit " + strconv.Itoa(limit) + text[i:]
		}
		if n == 15 {
			head = append(head, q15Note...)
		}
		want := strings.Join(head, "\n") + "\n" + text + "\n"
		got, err := Get(n)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("Q%d differs from the reference derivation:\n--- got\n%s\n--- want\n%s", n, got, want)
		}
	}
}

func TestGetRange(t *testing.T) {
	for _, n := range []int{0, 23, -1} {
		if _, err := Get(n); err == nil {
			t.Errorf("Get(%d): no error", n)
		}
	}
}

func TestSplit(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"select 1;", []string{"select 1"}},
		{"select ';';\n-- c;\nselect 2", []string{"select ';'", "-- c;\nselect 2"}},
		{"-- only a comment\n", nil},
		{"select 'it''s;' ; select \"a\\\";\";", []string{"select 'it''s;'", `select "a\";"`}},
		{"select /* ; */ 1; # x;\nselect 3;", []string{"select /* ; */ 1", "# x;\nselect 3"}},
	}
	for _, c := range cases {
		got := Split(c.in)
		if strings.Join(got, "\x00") != strings.Join(c.want, "\x00") {
			t.Errorf("Split(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
