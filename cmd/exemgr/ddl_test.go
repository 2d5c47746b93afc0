package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// emptyCluster starts n primprocs holding no tables and an exemgr over them (unix link).
func emptyCluster(t *testing.T, name string, n int) *exemgrProc {
	t.Helper()
	var urls []string
	for i := range n {
		pm := name + "-pm" + string(rune('0'+i))
		p := shared.startPrimproc(t, pm, filepath.Join(shared.tempDir(t), pm), "0.01")
		urls = append(urls, p.tcp)
	}
	return shared.startExemgr(t, urls, "unix")
}

// TestUserTables checks a user's own table through the real daemons, over two primprocs:
// CREATE TABLE with every type colink stores (and the ones it maps), INSERT, queries,
// DELETE, TRUNCATE, DROP, each error MySQL gives for these statements, and that a type
// colink does not compute on is refused naming the type and the column.
func TestUserTables(t *testing.T) {
	needDaemons(t)
	s := newSQLSession(t, emptyCluster(t, "user-tables", 2))
	run, query, fails := s.run, s.query, s.fails

	run("create table items (id int not null primary key, big bigint, small smallint, tiny tinyint, " +
		"price decimal(10,2), ratio double, day date, code char(3), name varchar(20), flag boolean, note text, " +
		"key by_name (name)) engine=InnoDB default charset=utf8mb4")
	if got, want := query("select count(*) from items"), "0\n"; got != want {
		t.Fatalf("a new table: count %q, want %q", got, want)
	}
	if got := query("show columns from items"); !strings.Contains(got, "id|int|NO|") || !strings.Contains(got, "price|decimal(10,2)|YES|") ||
		!strings.Contains(got, "small|int|YES|") || !strings.Contains(got, "code|char(3)|YES|") {
		t.Errorf("show columns:\n%s", got)
	}
	run("insert into items values (1, 10000000000, 5, 1, 12.34, 0.5, '2024-01-02', 'abc', 'first', true, 'a note'), " +
		"(2, null, null, null, null, null, null, null, null, null, null), (3, -7, -5, 0, -0.01, 1e5, '1999-12-31', 'xyz', 'third', false, '')")
	if got, want := query("select * from items order by id"),
		"1|10000000000|5|1|12.34|0.5|2024-01-02|abc|first|1|a note\n"+
			"2|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL\n"+
			"3|-7|-5|0|-0.01|100000|1999-12-31|xyz|third|0|\n"; got != want {
		t.Errorf("select *:\n got %q\nwant %q", got, want)
	}
	if got, want := query("select count(*), sum(price), max(day), count(distinct code) from items where id > 0"), "3|12.33|2024-01-02|2\n"; got != want {
		t.Errorf("aggregates: got %q, want %q", got, want)
	}
	run("set group_concat_max_len = 7")
	if got, want := query("select group_concat(name order by id), @@group_concat_max_len from items"), "first,t|7\n"; got != want {
		t.Errorf("group_concat cut at 7 bytes: got %q, want %q", got, want)
	}
	run("set group_concat_max_len = 1024")
	run("delete from items where id = 3")
	if got, want := query("select group_concat(id order by id) from items"), "1,2\n"; got != want {
		t.Errorf("after delete: got %q, want %q", got, want)
	}
	fails("create table items (a int)", "1050", "Table 'items' already exists")
	run("create table if not exists items (a int)")
	run("truncate table items")
	if got, want := query("select count(*) from items"), "0\n"; got != want {
		t.Errorf("after truncate: count %q, want %q", got, want)
	}
	run("insert into items (id, name) values (7, 'after truncate')")
	if got, want := query("select id, name, price from items"), "7|after truncate|NULL\n"; got != want {
		t.Errorf("insert after truncate: got %q, want %q", got, want)
	}
	run("drop table items")
	fails("select * from items", "1146", "items")
	fails("drop table items", "1051", "Unknown table 'tpch.items'")
	run("drop table if exists items")
	fails("truncate table items", "1146", "items")

	fails("create table bad (a int, b time)", "1235", "TIME for column 'b'")
	fails("create table bad (a decimal(30,2))", "1235", "DECIMAL(30,2)")
	fails("create table bad (a bigint unsigned)", "1235", "BIGINT UNSIGNED for column 'a'")
	fails("create table bad (a int auto_increment)", "1235", "AUTO_INCREMENT")
	fails("create table bad (a int, A int)", "1060", "Duplicate column name 'A'")
	fails("create table bad as select 1", "1235", "SELECT")
	fails("create table nodb.bad (a int)", "1049", "nodb")
	if got := query("show tables"); got != "" {
		t.Errorf("tables left behind: %q", got)
	}
}

// TestDumpReload dumps two TPC-H tables with mariadb-dump and reloads the dump, with the
// mariadb client, into an exemgr over primprocs that hold no tables: the reloaded tables
// give the same rows.
func TestDumpReload(t *testing.T) {
	needDaemons(t)
	dump, err := exec.LookPath("mariadb-dump")
	if err != nil {
		t.Skip("mariadb-dump is not installed: install mariadb-client to run this test")
	}
	client, err := exec.LookPath("mariadb")
	if err != nil {
		t.Skip("the mariadb client is not installed: install mariadb-client to run this test")
	}
	src := shared.exemgr(t, shared.cluster(t, "two-primprocs", 2, "0.01"), "unix")
	dst := emptyCluster(t, "dump-reload", 2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, dump, "-S", src.socket, "-u", "root", "tpch", "nation", "region").Output()
	if err != nil {
		t.Fatalf("mariadb-dump: %v\n%s", err, out)
	}
	load := exec.CommandContext(ctx, client, "-S", dst.socket, "-u", "root", "tpch")
	load.Stdin = strings.NewReader(string(out))
	if msg, err := load.CombinedOutput(); err != nil {
		t.Fatalf("mariadb < dump: %v\n%s\n%s", err, msg, dst.Log())
	}
	from, to := src.conn(t), dst.conn(t)
	for _, q := range []string{"select * from nation order by n_nationkey", "select * from region order by r_regionkey",
		"select n_name, r_name from nation join region on n_regionkey = r_regionkey order by n_name"} {
		want, got := psvRows(queryTable(t, ctx, from, q)), psvRows(queryTable(t, ctx, to, q))
		if got != want || strings.Count(want, "\n") < 5 {
			t.Errorf("%s after the reload:\n got %q\nwant %q", q, got, want)
		}
	}
}
