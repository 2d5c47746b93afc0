package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colinkdb/colink/bench/duckdb/internal/tpchfiles"
)

// TestRecheckReference: a disagreement is rechecked on a DuckDB opened afresh from the same
// files. A long-lived DuckDB in a bad state (here its lineitem emptied, as if it had lost the
// rows of seed 4, query 966's LEFT JOIN) is replaced when the fresh one agrees with colink;
// when the fresh one agrees with the old, the finding stands and nothing is replaced.
func TestRecheckReference(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writer, _, err := openDuckDB(ctx, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	orders, lineitem := filepath.Join(dir, "orders.parquet"), filepath.Join(dir, "lineitem.parquet")
	for _, stmt := range []string{
		"copy (select * from (values (1), (2)) as t(o_orderkey)) to '" + orders + "' (format parquet)",
		"copy (select * from (values (1, date '1992-01-04'), (1, date '1992-01-05'), (2, date '1993-03-01')) as t(l_orderkey, l_receiptdate)) to '" + lineitem + "' (format parquet)",
	} {
		if _, err := writer.db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	writer.db.Close()
	tables := []tpchfiles.Table{{Name: "orders", Paths: []string{orders}}, {Name: "lineitem", Paths: []string{lineitem}}}
	stale, _, err := openDuckDB(ctx, tables, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { stale.db.Close() }()
	if _, err := stale.db.ExecContext(ctx, "delete from lineitem"); err != nil {
		t.Fatal(err)
	}
	const q = "select l_receiptdate from orders left join lineitem on o_orderkey = l_orderkey order by 1 nulls first limit 2"
	answer := func(rows ...string) *result {
		r := &result{types: []string{"DATE"}}
		for _, v := range rows {
			if v == "NULL" {
				r.rows = append(r.rows, []cell{{null: true}})
			} else {
				r.rows = append(r.rows, []cell{{s: v}})
			}
		}
		return r
	}
	cfg := &config{threads: 1, timeout: 30 * time.Second}
	s := &setup{duck: stale, tables: tables}
	o := &oracles{duck: stale}

	// colink's answer is the stale DuckDB's: the fresh one disagrees with both, the finding
	// stands.
	why, err := s.recheckReference(ctx, cfg, o, q, "", []int{0}, true, answer("NULL", "NULL"))
	if err != nil || why != "" || s.duck != stale || o.duck != stale {
		t.Fatalf("colink agreeing with the stale DuckDB: %q, err %v; the stale one replaced: %v", why, err, s.duck != stale)
	}
	// colink's answer is right: the fresh DuckDB agrees and replaces the stale one.
	why, err = s.recheckReference(ctx, cfg, o, q, "", []int{0}, true, answer("1992-01-04", "1992-01-05"))
	if err != nil || !strings.Contains(why, "afresh") {
		t.Fatalf("colink right, the stale DuckDB wrong: %q, err %v", why, err)
	}
	fresh := s.duck
	defer fresh.db.Close()
	if s.duck != fresh || fresh == stale {
		t.Fatal("the fresh DuckDB did not replace the stale one")
	}
	if err := stale.db.PingContext(ctx); err == nil {
		t.Error("the stale DuckDB is still open")
	}
	res, err := o.duck.query(ctx, q)
	if err != nil || len(res.rows) != 2 || res.rows[0][0].s != "1992-01-04" {
		t.Fatalf("the fresh DuckDB answers %v, %v", res, err)
	}

	// DuckDB's NULLS FIRST answer wrong (here: a query that cannot be right), the same
	// query with the NULL order as an explicit key right: the fault is DuckDB's, found
	// without a fresh engine.
	const wrong = "select cast(null as date) from orders limit 2"
	const alt = "select * from (select l_receiptdate as k1 from orders left join lineitem on o_orderkey = l_orderkey) as r order by (r.k1 is not null), r.k1 limit 2"
	why, err = s.recheckReference(ctx, cfg, o, wrong, alt, []int{0}, true, answer("1992-01-04", "1992-01-05"))
	if err != nil || !strings.Contains(why, "explicit sort key") || s.duck != fresh {
		t.Fatalf("DuckDB right with the explicit NULL key: %q, err %v, replaced %v", why, err, s.duck != fresh)
	}
}

// TestNullKeysSQL: the recheck's rendering orders by MySQL's NULL order as explicit keys,
// without NULLS FIRST or LAST, over the query itself as a derived table.
func TestNullKeysSQL(t *testing.T) {
	s := testSchema()
	n := 0
	for seed := uint64(1); seed <= 3; seed++ {
		for i := uint64(1); i <= 200; i++ {
			q := generate(s, seed, i)
			alt := q.nullKeysSQL()
			if len(q.orderBy) == 0 {
				if alt != "" {
					t.Fatalf("no ORDER BY, yet %q", alt)
				}
				continue
			}
			n++
			if !strings.HasPrefix(alt, "select * from (") || strings.Contains(alt, "nulls first") || strings.Contains(alt, "nulls last") ||
				!strings.Contains(alt, ") as r order by (r.k") {
				t.Fatalf("%s\nrendered as\n%s", q.sql(duckdbDialect), alt)
			}
		}
	}
	if n == 0 {
		t.Fatal("no generated query had an ORDER BY")
	}
}

// TestPartialSummary: a run that has not finished (or was interrupted) writes a summary
// that says so and counts the queries it checked.
func TestPartialSummary(t *testing.T) {
	dir := t.TempDir()
	sum := &summary{Command: "test", SF: 0.1, Seeds: []uint64{1, 2}, Queries: 100, Done: 150,
		Partial: "interrupted after 150 of 200 queries (seed 2, query 51 not run)",
		Oracles: map[string]*tally{}, Shapes: map[string]int{"join": 3}, Engines: map[string]engineTime{}}
	for _, name := range []string{"differential", "tlp", "norec"} {
		sum.Oracles[name] = &tally{Compared: 150, Agreed: 150, Skipped: map[string]int{}}
	}
	var out strings.Builder
	if err := writeSummary(dir, sum, &out); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"0 disagreements in 150 queries", "**Not a complete run: interrupted after 150 of 200 queries"} {
		if !strings.Contains(string(md), want) || !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	js, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil || !strings.Contains(string(js), `"done": 150`) || !strings.Contains(string(js), `"partial": "interrupted`) {
		t.Errorf("summary.json: %s (%v)", js, err)
	}
}
