package tpch

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// q15Note is the comment Q15's template carries after the official template's own.
const q15Note = `-- Not safe to run concurrently. The view it creates is database-wide, so two sessions running
-- this script at once collide (error 1050, the view exists; 1051, it is gone). dbt3
-- throughput gives stream N its own view, revenueN, as DBT3's qgen does with the stream
-- number (the revenue view's name in tpch/queries/15.sql takes the stream's number).`

// TestTemplatesAreTheOfficialOnes checks that the embedded templates, the one copy of the
// 22 query texts, are TPC-H's qgen templates (../shared/tpch/query-templates) with only
// these changes, which make them MySQL's dialect without touching the query:
//
//   - the "-- $ID$" line and the ":x", ":o" and ":n N" directive lines are dropped (the
//     other comment lines are kept, at the top; Q15's are followed by q15Note);
//   - Oracle's `interval ':1' day (3)` is written `interval ':1' day`;
//   - ":n N" with N > 0 (Oracle's rownum) becomes `limit N` on a line of its own before the
//     query's final ";";
//   - runs of blank lines become one blank line; the file ends with one newline.
//
// Q13's derived-table column list, `as c_orders (c_custkey, c_count)`, stays: colink
// accepts it (sql's derived-column handling).
func TestTemplatesAreTheOfficialOnes(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "..", "shared", "tpch", "query-templates")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("TPC-H's templates not found at %s: %v", dir, err)
	}
	directive := regexp.MustCompile(`^:[xon]( -?\d+)?$`)
	blankRuns := regexp.MustCompile(`\n\n+`)
	for q := 1; q <= QueryCount; q++ {
		b, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(q)+".sql"))
		if err != nil {
			t.Fatal(err)
		}
		var head, body []string
		limit := 0
		for _, l := range strings.Split(string(b), "\n") {
			switch {
			case strings.Contains(l, "$ID$"):
			case strings.HasPrefix(l, "--"):
				head = append(head, l)
			case strings.HasPrefix(l, ":n "):
				limit, _ = strconv.Atoi(strings.TrimPrefix(l, ":n "))
			case directive.MatchString(l):
			default:
				body = append(body, l)
			}
		}
		text := strings.TrimSpace(strings.Join(body, "\n"))
		text = strings.ReplaceAll(text, " day (3)", " day")
		text = blankRuns.ReplaceAllString(text, "\n\n")
		if limit > 0 {
			i := strings.LastIndex(text, ";")
			text = text[:i] + "\nlimit " + strconv.Itoa(limit) + text[i:]
		}
		if q == 15 {
			head = append(head, q15Note)
		}
		want := strings.Join(head, "\n") + "\n" + text + "\n"
		got, err := queryTemplate(q)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("tpch/queries/%d.sql is not TPC-H's template with the documented changes:\n%s", q, firstDiff(got, want))
		}
	}
}
