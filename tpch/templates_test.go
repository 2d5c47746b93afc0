package tpch

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var updateTemplates = flag.Bool("update-templates", false, "rewrite tpch/queries from dbt3/queries")

// templateMarks says, per query, which text of the validation query script is a parameter:
// each validation text, in its context, becomes the marks (:1 … :10, and :s for the stream
// number in Q15's view name), and must occur exactly count times.
func templateMarks() map[int][]struct {
	validation, template string
	count                int
} {
	type m = struct {
		validation, template string
		count                int
	}
	return map[int][]m{
		1:  {{"interval '90' day", "interval ':1' day", 1}},
		2:  {{"p_size = 15", "p_size = :1", 1}, {"like '%BRASS'", "like '%:2'", 1}, {"r_name = 'EUROPE'", "r_name = ':3'", 2}},
		3:  {{"c_mktsegment = 'BUILDING'", "c_mktsegment = ':1'", 1}, {"date '1995-03-15'", "date ':2'", 2}},
		4:  {{"date '1993-07-01'", "date ':1'", 2}},
		5:  {{"r_name = 'ASIA'", "r_name = ':1'", 1}, {"date '1994-01-01'", "date ':2'", 2}},
		6:  {{"date '1994-01-01'", "date ':1'", 2}, {"between .06 - 0.01 and .06 + 0.01", "between :2 - 0.01 and :2 + 0.01", 1}, {"l_quantity < 24", "l_quantity < :3", 1}},
		7:  {{"(n1.n_name = 'FRANCE' and n2.n_name = 'GERMANY')", "(n1.n_name = ':1' and n2.n_name = ':2')", 1}, {"(n1.n_name = 'GERMANY' and n2.n_name = 'FRANCE')", "(n1.n_name = ':2' and n2.n_name = ':1')", 1}},
		8:  {{"nation = 'BRAZIL'", "nation = ':1'", 1}, {"r_name = 'AMERICA'", "r_name = ':2'", 1}, {"p_type = 'ECONOMY ANODIZED STEEL'", "p_type = ':3'", 1}},
		9:  {{"like '%green%'", "like '%:1%'", 1}},
		10: {{"date '1993-10-01'", "date ':1'", 2}},
		11: {{"n_name = 'GERMANY'", "n_name = ':1'", 2}, {"* 0.0001000000", "* :2", 1}},
		12: {{"in ('MAIL', 'SHIP')", "in (':1', ':2')", 1}, {"date '1994-01-01'", "date ':3'", 2}},
		13: {{"'%special%requests%'", "'%:1%:2%'", 1}},
		14: {{"date '1995-09-01'", "date ':1'", 2}},
		15: {{"date '1996-01-01'", "date ':1'", 2}, {"revenue0", "revenue:s", 4}},
		16: {{"p_brand <> 'Brand#45'", "p_brand <> ':1'", 1}, {"not like 'MEDIUM POLISHED%'", "not like ':2%'", 1}, {"p_size in (49, 14, 23, 45, 19, 3, 36, 9)", "p_size in (:3, :4, :5, :6, :7, :8, :9, :10)", 1}},
		17: {{"p_brand = 'Brand#23'", "p_brand = ':1'", 1}, {"p_container = 'MED BOX'", "p_container = ':2'", 1}},
		18: {{"sum(l_quantity) > 300", "sum(l_quantity) > :1", 1}},
		19: {{"p_brand = 'Brand#12'", "p_brand = ':1'", 1}, {"p_brand = 'Brand#23'", "p_brand = ':2'", 1}, {"p_brand = 'Brand#34'", "p_brand = ':3'", 1}, {"l_quantity >= 1 and l_quantity <= 1 + 10", "l_quantity >= :4 and l_quantity <= :4 + 10", 1}, {"l_quantity >= 10 and l_quantity <= 10 + 10", "l_quantity >= :5 and l_quantity <= :5 + 10", 1}, {"l_quantity >= 20 and l_quantity <= 20 + 10", "l_quantity >= :6 and l_quantity <= :6 + 10", 1}},
		20: {{"like 'forest%'", "like ':1%'", 1}, {"date '1994-01-01'", "date ':2'", 2}, {"n_name = 'CANADA'", "n_name = ':3'", 1}},
		21: {{"n_name = 'SAUDI ARABIA'", "n_name = ':1'", 1}},
		22: {{"('13', '31', '23', '29', '30', '18', '17')", "(':1', ':2', ':3', ':4', ':5', ':6', ':7')", 2}},
	}
}

// TestTemplatesDerive checks that the embedded templates are the project's query scripts
// (dbt3/queries, validation parameters) with the parameters marked. When a script changes,
// `go test ./tpch -run TestTemplatesDerive -update-templates` rewrites tpch/queries.
func TestTemplatesDerive(t *testing.T) {
	root := repoRoot(t)
	src := filepath.Join(root, "dbt3", "queries")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("dbt3/queries not present yet: %v", err)
	}
	for q, marks := range templateMarks() {
		b, err := os.ReadFile(filepath.Join(src, strconv.Itoa(q)+".sql"))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if strings.Contains(text, ":") {
			t.Errorf("dbt3/queries/%d.sql contains ':', which templates reserve for parameters", q)
			continue
		}
		for _, m := range marks {
			if n := strings.Count(text, m.validation); n != m.count {
				t.Errorf("dbt3/queries/%d.sql: %q occurs %d times, want %d", q, m.validation, n, m.count)
			}
			text = strings.ReplaceAll(text, m.validation, m.template)
		}
		path := filepath.Join(root, "tpch", "queries", strconv.Itoa(q)+".sql")
		if *updateTemplates {
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		embedded, err := queryTemplate(q)
		if err != nil {
			t.Fatal(err)
		}
		if embedded != text {
			t.Errorf("tpch/queries/%d.sql is not dbt3/queries/%d.sql with its parameters marked (rerun with -update-templates):\n%s", q, q, firstDiff(embedded, text))
		}
	}
}
