package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colinkdb/colink/dbt3/queries"
)

// TestBadInput sends, on one session, statements that must fail with a MySQL error naming
// the problem (or, for a division by zero, return NULL as MySQL does), each followed by a
// query that must still work.
func TestBadInput(t *testing.T) {
	needDaemons(t)
	c := shared.cluster(t, "two-primprocs", 2, "0.01")
	conn := shared.exemgr(t, c, "tcp").conn(t)
	ctx := context.Background()
	check := func(t *testing.T) {
		t.Helper()
		var n int
		if err := conn.QueryRowContext(ctx, "select count(*) from nation").Scan(&n); err != nil || n != 25 {
			t.Fatalf("the session is not usable after the error: %d, %v", n, err)
		}
	}
	for _, tc := range []struct {
		name, sql string
		code      uint16
		msg       string // a part of the message
	}{
		{"syntax error", "selec n_name from nation", 1064, "near 'selec n_name from nation'"},
		{"syntax error at the end", "select * from nation where", 1064, "SQL syntax"},
		{"unknown table", "select * from nosuchtable", 1146, "Table 'tpch.nosuchtable' doesn't exist"},
		{"unknown database", "select * from nodb.nation", 1049, "Unknown database 'nodb'"},
		{"unknown column", "select n_nosuch from nation", 1054, "Unknown column 'n_nosuch' in 'field list'"},
		{"unknown column in where", "select n_name from nation where n_nosuch = 1", 1054, "in 'where clause'"},
		{"ambiguous column", "select n_name from nation n1, nation n2 where n1.n_nationkey = n2.n_nationkey", 1052, "Column 'n_name' in field list is ambiguous"},
		{"type error", "select o_orderdate + 1 from orders", 1210, "is date, not a number"},
		{"type error in a string", "select o_comment * 2 from orders", 1210, "not a number"},
		{"not in group by", "select l_returnflag, l_quantity from lineitem group by l_returnflag", 1055, "not in GROUP BY"},
		{"unsupported window function", "select rank() over (order by n_name) from nation", 1235, "window functions"},
		{"unknown function", "select json_extract(n_name, '$.a') from nation", 1305, "json_extract does not exist"},
		{"unsupported union", "select n_name from nation union select r_name from region", 1235, "UNION"},
		{"unsupported statement", "alter table nation add column x int", 1235, "ALTER TABLE"},
		{"unsupported column type", "create table t (a int, b time)", 1235, "TIME for column 'b'"},
		{"subquery returns more than one row", "select n_name from nation where n_nationkey = (select n_nationkey from nation where n_regionkey = 1)", 1242, "more than 1 row"},
		{"unknown view", "drop view nosuchview", 1051, "Unknown table 'tpch.nosuchview'"},
		{"drop view of a table", "drop view nation", 1347, "is not VIEW"},
		{"view over an unknown column", "create view v_bad as select nosuch from nation", 1054, "nosuch"},
		{"unknown system variable", "set colink_nosuch = 1", 1193, "Unknown system variable 'colink_nosuch'"},
		{"bad memory bound", "set colink_query_memory = 'lots'", 1210, "number of bytes"},
		{"empty statement", ";", 1065, "Query was empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := conn.QueryContext(ctx, tc.sql)
			if err == nil {
				_, err = result(rows, "NULL")
				rows.Close()
			}
			if err == nil {
				t.Fatalf("%s: no error, want %d", tc.sql, tc.code)
			}
			got := errorText(err)
			if !strings.HasPrefix(got, "ERROR "+strconv.Itoa(int(tc.code))+" ") || !strings.Contains(got, tc.msg) {
				t.Errorf("%s:\n got %s\nwant ERROR %d … %s", tc.sql, got, tc.code, tc.msg)
			}
			check(t)
		})
	}

	t.Run("division by zero is NULL", func(t *testing.T) {
		tb := queryTable(t, ctx, conn, "select n_nationkey / 0 as q, 1 / 0 as r, n_nationkey % 0 as m from nation where n_nationkey = 3")
		if len(tb.Rows) != 1 || strings.Join(tb.Rows[0], "|") != "NULL|NULL|NULL" {
			t.Errorf("got %v, want one row NULL|NULL|NULL", tb.Rows)
		}
		check(t)
	})

	t.Run("over the memory bound", func(t *testing.T) {
		// A sort of every lineitem row needs far more than 256 KiB.
		const big = "select l_orderkey, l_comment from lineitem order by l_comment"
		if _, err := conn.ExecContext(ctx, "set colink_query_memory = 262144"); err != nil {
			t.Fatal(errorText(err))
		}
		rows, err := conn.QueryContext(ctx, big)
		if err == nil {
			_, err = result(rows, "NULL")
			rows.Close()
		}
		if got := errorText(err); err == nil || !strings.HasPrefix(got, "ERROR 1041 ") || !strings.Contains(got, "memory limit") {
			t.Errorf("got %v, want ERROR 1041 naming the memory limit", got)
		}
		check(t)
		if _, err := conn.ExecContext(ctx, "set colink_query_memory = default"); err != nil {
			t.Fatal(errorText(err))
		}
		rows, err = conn.QueryContext(ctx, big)
		if err != nil {
			t.Fatalf("with the daemon's bound: %s", errorText(err))
		}
		tb, err := result(rows, "NULL")
		rows.Close()
		if err != nil || len(tb.Rows) != 60175 {
			t.Fatalf("with the daemon's bound: %d rows, %v", len(tb.Rows), err)
		}
	})

	t.Run("over the memory bound at filter and scan", func(t *testing.T) {
		// At filter and scan the join, its build side and the aggregation run in exemgr, on
		// every row that crosses the link. Under a 256 KiB bound the join must fail with 1041
		// (never the daemon), while a reduction that streams all of lineitem's rows through
		// exemgr must not: the rows in flight are bounded by the link's credit windows, not by
		// the table's size.
		const join = "select count(*) from orders, lineitem where l_orderkey = o_orderkey"
		const stream = "select count(*), sum(l_quantity) from lineitem"
		t.Cleanup(func() {
			conn.ExecContext(ctx, "set colink_query_memory = default")
			conn.ExecContext(ctx, "set colink_pushdown = default")
		})
		for _, level := range []string{"filter", "scan"} {
			if _, err := conn.ExecContext(ctx, "set colink_pushdown = '"+level+"'"); err != nil {
				t.Fatal(errorText(err))
			}
			if _, err := conn.ExecContext(ctx, "set colink_query_memory = 262144"); err != nil {
				t.Fatal(errorText(err))
			}
			var n int64
			err := conn.QueryRowContext(ctx, join).Scan(&n)
			if got := errorText(err); err == nil || !strings.HasPrefix(got, "ERROR 1041 ") || !strings.Contains(got, "memory limit") {
				t.Errorf("%s: the join under 256 KiB gave %d, %v; want ERROR 1041 naming the memory limit", level, n, got)
			}
			var q string
			if err := conn.QueryRowContext(ctx, stream).Scan(&n, &q); err != nil || n != 60175 || q != "1536127.00" {
				t.Errorf("%s: the streamed reduction under 256 KiB gave %d, %s, %v; want 60175, 1536127.00 (awk over dbgen's lineitem.tbl)", level, n, q, errorText(err))
			}
			var pushdown string
			if err := conn.QueryRowContext(ctx, "select @@colink_pushdown").Scan(&pushdown); err != nil || pushdown != level {
				t.Errorf("the session's level is %q (%v), want %s", pushdown, err, level)
			}
			if _, err := conn.ExecContext(ctx, "set colink_query_memory = default"); err != nil {
				t.Fatal(errorText(err))
			}
			if err := conn.QueryRowContext(ctx, join).Scan(&n); err != nil || n != 60175 {
				t.Errorf("%s: the join with the daemon's bound gave %d, %v; want 60175", level, n, errorText(err))
			}
			check(t)
		}
	})

	t.Run("user variables", func(t *testing.T) {
		if _, err := conn.ExecContext(ctx, "set @region = 'ASIA'"); err != nil {
			t.Fatal(errorText(err))
		}
		var n int
		if err := conn.QueryRowContext(ctx, "select count(*) from nation, region where n_regionkey = r_regionkey and r_name = @region").Scan(&n); err != nil || n != 5 {
			t.Fatalf("got %d, %v; want 5", n, err)
		}
	})
}

// TestViews checks that a view is shared by sessions and outlives the one that made it,
// and that CREATE OR REPLACE and DROP VIEW IF EXISTS behave as MySQL's.
func TestViews(t *testing.T) {
	needDaemons(t)
	c := shared.cluster(t, "one-primproc", 1, "0.01")
	em := shared.exemgr(t, c, "tcp")
	ctx := context.Background()
	a, b := em.conn(t), em.conn(t)
	t.Cleanup(func() { a.ExecContext(ctx, "drop view if exists asia") })
	if _, err := a.ExecContext(ctx, "create view asia (nation) as select n_name from nation, region where n_regionkey = r_regionkey and r_name = 'ASIA'"); err != nil {
		t.Fatal(errorText(err))
	}
	var n int
	if err := b.QueryRowContext(ctx, "select count(*) from asia where nation like 'I%'").Scan(&n); err != nil || n != 2 {
		t.Fatalf("the view from another session: %d, %v; want 2 (INDIA, INDONESIA)", n, err)
	}
	if _, err := b.ExecContext(ctx, "create view asia as select 1 as x"); err == nil || !strings.HasPrefix(errorText(err), "ERROR 1050 ") {
		t.Fatalf("creating an existing view: %v, want 1050", err)
	}
	if _, err := b.ExecContext(ctx, "create or replace view asia as select n_name from nation where n_regionkey = 2"); err != nil {
		t.Fatal(errorText(err))
	}
	rows, err := a.QueryContext(ctx, "show full tables like 'as%'")
	if err != nil {
		t.Fatal(errorText(err))
	}
	tb, err := result(rows, "NULL")
	rows.Close()
	if err != nil || len(tb.Rows) != 1 || strings.Join(tb.Rows[0], "|") != "asia|VIEW" {
		t.Fatalf("SHOW FULL TABLES: %v, %v", tb, err)
	}
	if _, err := a.ExecContext(ctx, "drop view asia"); err != nil {
		t.Fatal(errorText(err))
	}
	if _, err := a.ExecContext(ctx, "drop view if exists asia"); err != nil {
		t.Fatalf("DROP VIEW IF EXISTS of a dropped view: %s", errorText(err))
	}
	if err := b.QueryRowContext(ctx, "select count(*) from asia").Scan(&n); err == nil || !strings.HasPrefix(errorText(err), "ERROR 1146 ") {
		t.Fatalf("a dropped view: %v, want 1146", err)
	}
}

// TestShowStatements checks SHOW DATABASES, SHOW TABLES, DESCRIBE and SHOW COLUMNS.
func TestShowStatements(t *testing.T) {
	needDaemons(t)
	c := shared.cluster(t, "one-primproc", 1, "0.01")
	conn := shared.exemgr(t, c, "tcp").conn(t)
	for _, tc := range []struct{ sql, want string }{
		{"show databases", "Database\ninformation_schema\ntpch"},
		{"show tables", "Tables_in_tpch\ncustomer\nlineitem\nnation\norders\npart\npartsupp\nregion\nsupplier"},
		{"describe nation", "Field|Type|Null|Key|Default|Extra\nn_nationkey|int|NO||NULL|\nn_name|char(25)|NO||NULL|\nn_regionkey|int|NO||NULL|\nn_comment|varchar(152)|NO||NULL|"},
		{"show columns from region like 'r_n%'", "Field|Type|Null|Key|Default|Extra\nr_name|char(25)|NO||NULL|"},
	} {
		rows, err := conn.QueryContext(context.Background(), tc.sql)
		if err != nil {
			t.Errorf("%s: %s", tc.sql, errorText(err))
			continue
		}
		tb, err := result(rows, "NULL")
		rows.Close()
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		if got := strings.TrimSpace(tb.String()); got != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.sql, got, tc.want)
		}
	}
}

// TestQueryStats checks SHOW QUERY STATS after Q1 and Q6: one row per process, the
// primprocs' CPU and link traffic non-zero, the rows the client got, row groups eliminated
// by zone maps for Q6's date range.
func TestQueryStats(t *testing.T) {
	needDaemons(t)
	c := shared.cluster(t, "two-primprocs", 2, "0.01")
	for _, transport := range []string{"tcp", "unix"} {
		t.Run(transport, func(t *testing.T) {
			conn := shared.exemgr(t, c, transport).conn(t)
			ctx := context.Background()
			// A new session has no statistics yet: the columns, no rows.
			if rows, err := conn.QueryContext(ctx, "show query stats"); err != nil {
				t.Fatal(errorText(err))
			} else {
				tb, err := result(rows, "NULL")
				rows.Close()
				if err != nil || len(tb.Rows) != 0 || len(tb.Columns) < 21 {
					t.Fatalf("SHOW QUERY STATS of a new session: %v, %v", tb, err)
				}
			}
			q1, _ := queries.Get(1)
			if _, err := runScript(ctx, conn, q1, ""); err != nil {
				t.Fatal(errorText(err))
			}
			stats := queryStats(t, conn)
			if len(stats) != 3 {
				t.Fatalf("%d rows, want exemgr and two primprocs: %v", len(stats), stats)
			}
			num := func(row map[string]string, col string) int64 {
				n, err := strconv.ParseInt(row[col], 10, 64)
				if err != nil {
					t.Fatalf("%s of %s: %q is not an integer", col, row["process"], row[col])
				}
				return n
			}
			em := stats[0]
			if num(em, "rows") != 4 || num(em, "elapsed_us") <= 0 || num(em, "user_us")+num(em, "sys_us") <= 0 {
				t.Errorf("exemgr row: %v", em)
			}
			for i, pm := range stats[1:] {
				if pm["peer"] != c.primprocs[i].tcp || pm["transport"] != transport {
					t.Errorf("%s: peer %q transport %q, want %q %q", pm["process"], pm["peer"], pm["transport"], c.primprocs[i].tcp, transport)
				}
				for _, col := range []string{"bytes_in", "bytes_out", "batches_in", "frames", "syscalls", "fragments", "rows_scanned", "row_groups_total"} {
					if num(pm, col) <= 0 {
						t.Errorf("%s: %s = %s, want > 0", pm["process"], col, pm[col])
					}
				}
				if num(pm, "user_us")+num(pm, "sys_us") <= 0 {
					t.Errorf("%s: no CPU: %v", pm["process"], pm)
				}
				if num(pm, "elapsed_us") != num(em, "elapsed_us") {
					t.Errorf("%s: elapsed %s, exemgr's %s", pm["process"], pm["elapsed_us"], em["elapsed_us"])
				}
			}
			if got, want := num(em, "bytes_in"), num(stats[1], "bytes_in")+num(stats[2], "bytes_in"); got != want {
				t.Errorf("exemgr's bytes_in %d is not the primprocs' total %d", got, want)
			}
			// SHOW QUERY STATS describes the previous statement, not itself.
			if again := queryStats(t, conn); again[0]["statement"] != em["statement"] || again[0]["elapsed_us"] != em["elapsed_us"] {
				t.Errorf("a second SHOW QUERY STATS changed the figures: %v then %v", em, again[0])
			}
			q6, _ := queries.Get(6)
			if _, err := runScript(ctx, conn, q6, ""); err != nil {
				t.Fatal(errorText(err))
			}
			stats = queryStats(t, conn)
			if num(stats[0], "row_groups_eliminated") <= 0 {
				t.Errorf("Q6 eliminated no row groups: %v", stats[0])
			}
		})
	}
}

// TestFlushCache checks ColumnStore's cache flush statement: it answers 0, and the next
// query reads from disk.
func TestFlushCache(t *testing.T) {
	needDaemons(t)
	c := shared.cluster(t, "two-primprocs", 2, "0.01")
	conn := shared.exemgr(t, c, "tcp").conn(t)
	ctx := context.Background()
	var n int64
	if err := conn.QueryRowContext(ctx, "select calFlushCache()").Scan(&n); err != nil || n != 0 {
		t.Fatalf("select calFlushCache(): %d, %v", n, err)
	}
	if err := conn.QueryRowContext(ctx, "select sum(l_quantity) from lineitem").Scan(new(string)); err != nil {
		t.Fatal(errorText(err))
	}
	stats := queryStats(t, conn)
	if stats[0]["disk_bytes"] == "0" {
		t.Errorf("the query after a cache flush read nothing from disk: %v", stats[0])
	}
	if err := conn.QueryRowContext(ctx, "select sum(l_quantity) from lineitem").Scan(new(string)); err != nil {
		t.Fatal(errorText(err))
	}
	if stats := queryStats(t, conn); stats[0]["cache_bytes"] == "0" {
		t.Errorf("the same query again read nothing from the cache: %v", stats[0])
	}
}

// TestExplainQ3 checks that EXPLAIN shows what runs where: Q3's three fragments on the
// primprocs, chained by broadcasts exemgr computes, and the final aggregate and top-N in
// exemgr.
func TestExplainQ3(t *testing.T) {
	needDaemons(t)
	// Over two primprocs, so that the aggregate is split between them and exemgr (with one,
	// the primproc finishes it).
	c := shared.cluster(t, "two-primprocs", 2, "0.01")
	conn := shared.exemgr(t, c, "unix").conn(t)
	q3, _ := queries.Get(3)
	tb := queryTable(t, context.Background(), conn, "explain "+strings.TrimSuffix(strings.TrimSpace(q3), ";"))
	text := ""
	for _, r := range tb.Rows {
		text += r[0] + "\n"
	}
	for _, want := range []struct{ where, op string }{
		{"exemgr", "TopN 10"},
		{"exemgr", "Aggregate final"},
		{"exemgr", "Gather fragment"},
		{"primproc", "Aggregate partial"},
		{"primproc", "Join inner PM"},
		{"exemgr", "Broadcast"},
		{"primproc", "Scan lineitem"},
		{"primproc", "Scan orders"},
		{"primproc", "Scan customer"},
	} {
		found := false
		for _, line := range tb.Rows {
			where, op, _ := strings.Cut(line[0], " ")
			if where == want.where && strings.HasPrefix(strings.TrimSpace(op), want.op) {
				found = true
			}
		}
		if !found {
			t.Errorf("EXPLAIN of Q3 has no %s line %q:\n%s", want.where, want.op, text)
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("EXPLAIN of Q3:\n%s", text)
	}
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}
