package main

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestExplainAnalyze runs EXPLAIN ANALYZE at SF 0.01 and checks its counts against the
// queries themselves: the top operator's rows are the query's rows, a fragment scans every
// row of its table (none is eliminated without a filter on a sorted column) and sends what
// its Gather receives, and a join's rows are the join's count.
func TestExplainAnalyze(t *testing.T) {
	needDaemons(t)
	c := shared.cluster(t, "one-primproc", 1, "0.01")
	em := shared.startExemgr(t, c.tcpURLs(), "tcp")
	conn := em.conn(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	count := func(q string) int64 {
		t.Helper()
		var n int64
		if err := conn.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %s", q, errorText(err))
		}
		return n
	}
	analyze := func(q string) []string {
		t.Helper()
		rows, err := conn.QueryContext(ctx, "explain analyze "+q)
		if err != nil {
			t.Fatalf("explain analyze %s: %s", q, errorText(err))
		}
		defer rows.Close()
		var lines []string
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		t.Logf("explain analyze %s\n%s", q, strings.Join(lines, "\n"))
		return lines
	}
	num := func(line, re string) int64 {
		t.Helper()
		m := regexp.MustCompile(re).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%q does not match %s", line, re)
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return n
	}
	lineitems := count("select count(*) from lineitem")

	q := "select l_returnflag, l_linestatus, count(*) from lineitem group by l_returnflag, l_linestatus order by 1, 2"
	lines := analyze(q)
	if got := num(lines[0], `\(rows (\d+),`); got != 4 {
		t.Errorf("the top operator returned %d rows, want the query's 4:\n%s", got, lines[0])
	}
	var frag string
	for _, l := range lines {
		if strings.Contains(l, "(fragment 1 ") {
			frag = l
		}
	}
	if frag == "" {
		t.Fatalf("no fragment line:\n%s", strings.Join(lines, "\n"))
	}
	if got := num(frag, `scanned (\d+) rows`); got != lineitems {
		t.Errorf("the fragment scanned %d rows, want lineitem's %d", got, lineitems)
	}
	if produced, received := num(frag, `produced (\d+) rows`), num(frag, `link: (\d+) rows`); produced != received || produced == 0 {
		t.Errorf("the primprocs produced %d rows, the Gather received %d", produced, received)
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "4 rows returned") {
		t.Errorf("last line %q, want the rows returned", last)
	}

	// A join computed in exemgr (pushdown filter moves joins and aggregation out of the
	// primprocs): the join's rows are the join's count.
	if _, err := conn.ExecContext(ctx, "set colink_pushdown = 'filter'"); err != nil {
		t.Fatal(err)
	}
	join := "select o_orderpriority from orders join lineitem on l_orderkey = o_orderkey where l_quantity < 5"
	want := count("select count(*) from orders join lineitem on l_orderkey = o_orderkey where l_quantity < 5")
	lines = analyze(join)
	found := false
	for _, l := range lines {
		if strings.Contains(l, "Join inner") {
			found = true
			if got := num(l, `\(rows (\d+),`); got != want {
				t.Errorf("the join produced %d rows, want %d:\n%s", got, want, l)
			}
			if !strings.Contains(l, "memory ") {
				t.Errorf("the join's line shows no memory: %s", l)
			}
		}
	}
	if !found {
		t.Errorf("no join in exemgr in the plan:\n%s", strings.Join(lines, "\n"))
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, strconv.FormatInt(want, 10)+" rows returned") {
		t.Errorf("last line %q, want %d rows returned", last, want)
	}
	// The primprocs' steps carry their own figures: lineitem's filter passed the rows
	// the count finds.
	small := count("select count(*) from lineitem where l_quantity < 5")
	if got := num(primprocStep(t, lines, "Filter", "l_quantity"), `\(rows (\d+),`); got != small {
		t.Errorf("primproc's filter produced %d rows, want %d", got, small)
	}

	// At full pushdown orders is broadcast and the join probed in the primprocs: the
	// probe step's rows are the join's count.
	if _, err := conn.ExecContext(ctx, "set colink_pushdown = 'full'"); err != nil {
		t.Fatal(err)
	}
	lines = analyze(join)
	if got := num(primprocStep(t, lines, "Join", ""), `\(rows (\d+),`); got != want {
		t.Errorf("primproc's join produced %d rows, want %d", got, want)
	}
}

// primprocStep returns the first line of a fragment's step that runs in the primprocs and
// contains kind and also.
func primprocStep(t *testing.T, lines []string, kind, also string) string {
	t.Helper()
	for _, l := range lines {
		if strings.HasPrefix(l, "primproc") && strings.Contains(l, kind) && strings.Contains(l, also) {
			return l
		}
	}
	t.Fatalf("no primproc step %s %s in:\n%s", kind, also, strings.Join(lines, "\n"))
	return ""
}
