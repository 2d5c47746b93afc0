package main

import (
	dsql "database/sql"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// TestDatetime: DATETIME(fsp) and TIMESTAMP(fsp) columns through real daemons (two
// primprocs, so the rows are dealt and merged): CREATE TABLE, INSERT of literals with and
// without fractions and times, NULL, LOAD DATA, the text and binary protocols (go-sql-driver
// with server-side prepares and parseTime), comparisons with strings and dates (which also
// prune by the zone maps), ORDER BY, GROUP BY, MIN/MAX, the time parts, CAST, interval
// arithmetic, SHOW CREATE TABLE, information_schema, and the errors for bad values.
func TestDatetime(t *testing.T) {
	needDaemons(t)
	em := emptyCluster(t, "datetime", 2)
	s := newSQLSession(t, em)
	ctx, run, check, fails := s.ctx, s.run, s.check, s.fails

	run("create table ev (id int not null, at datetime, ts timestamp(3), d date)")
	run("insert into ev values (1, '2024-01-02 10:30:00', '2024-01-02 10:30:00.123456', '2024-01-02'), " +
		"(2, '2024-01-02', '2024-01-02 23:59:59.9', '2024-01-01'), (3, null, null, null), " +
		"(4, '1999-12-31 23:59:59', '1970-01-01 00:00:00', '1999-12-31'), (5, timestamp '2024-03-01 00:00:01', now(), curdate())")
	check("select id, at, ts, d from ev where id < 5 order by id",
		"1|2024-01-02 10:30:00|2024-01-02 10:30:00.123|2024-01-02\n"+
			"2|2024-01-02 00:00:00|2024-01-02 23:59:59.900|2024-01-01\n"+
			"3|NULL|NULL|NULL\n"+
			"4|1999-12-31 23:59:59|1970-01-01 00:00:00.000|1999-12-31\n")
	check("show create table ev", "ev|CREATE TABLE `ev` (\n"+
		"  `id` int NOT NULL,\n  `at` datetime DEFAULT NULL,\n  `ts` datetime(3) DEFAULT NULL,\n  `d` date DEFAULT NULL\n) ENGINE=colink DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci\n")
	check("select column_name, data_type, column_type, datetime_precision from information_schema.columns "+
		"where table_name = 'ev' and data_type = 'datetime' order by column_name",
		"at|datetime|datetime|0\nts|datetime|datetime(3)|3\n")

	// Comparisons: a string reads as a datetime, a date as its midnight.
	check("select id from ev where at >= '2024-01-02 10:00' order by id", "1\n5\n")
	check("select id from ev where at = '2024-01-02' order by id", "2\n")
	check("select id from ev where at < date '2024-01-02' order by id", "4\n")
	check("select id from ev where at between '2024-01-01' and '2024-01-02 12:00:00' order by id", "1\n2\n")
	check("select id from ev where at > d order by id", "1\n2\n4\n")
	check("select id from ev where d < '2024-01-02 10:00' order by id", "1\n2\n4\n")
	check("select id from ev where d = '2024-01-02 00:00:00' order by id", "1\n")
	check("select id from ev where ts = '2024-01-02 10:30:00.123' order by id", "1\n")
	check("select id from ev where at in ('2024-01-02 10:30:00', '1999-12-31 23:59:59') order by id", "1\n4\n")

	// Ordering, grouping and aggregates.
	check("select id from ev order by at desc, id", "5\n1\n2\n4\n3\n")
	check("select min(at), max(at), count(distinct at), count(at) from ev", "1999-12-31 23:59:59|2024-03-01 00:00:01|4|4\n")
	check("select cast(at as date) day, count(*) from ev where at is not null group by day order by day",
		"1999-12-31|1\n2024-01-02|2\n2024-03-01|1\n")
	check("select at, count(*) from ev where id in (1, 2, 4) group by at order by at",
		"1999-12-31 23:59:59|1\n2024-01-02 00:00:00|1\n2024-01-02 10:30:00|1\n")

	// Parts, casts and interval arithmetic.
	check("select year(at), month(at), day(at), hour(at), minute(at), second(at), microsecond(ts), extract(hour from at) from ev where id = 1",
		"2024|1|2|10|30|0|123000|10\n")
	check("select hour(d), cast(at as date), cast('2024-05-06 07:08:09' as datetime), cast(d as datetime) from ev where id = 1",
		"0|2024-01-02|2024-05-06 07:08:09|2024-01-02 00:00:00\n")
	check("select at + interval 90 minute, at - interval 1 day, date_add(at, interval 1 month), d + interval 1 hour, datediff(at, d) from ev where id = 1",
		"2024-01-02 12:00:00|2024-01-01 10:30:00|2024-02-02 10:30:00|2024-01-02 01:00:00|0\n")
	check("select date_add('2024-01-31 12:00:00', interval 1 month), timestamp '2024-01-01 00:00:00' - interval 1 second",
		"2024-02-29 12:00:00|2023-12-31 23:59:59\n")
	check("select count(*) from ev where id = 5 and ts <= now() and at < now()", "1\n")

	// LOAD DATA: the fraction beyond the column's digits is dropped.
	dir := t.TempDir()
	path := filepath.Join(dir, "ev.tsv")
	if err := os.WriteFile(path, []byte("6\t2025-06-07 08:09:10\t2025-06-07 08:09:10.98765\t2025-06-07\n7\t\\N\t2025-01-01\t\\N\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mysql.RegisterLocalFile(path)
	run("load data local infile '" + path + "' into table ev")
	check("select id, at, ts, d from ev where id > 5 order by id", "6|2025-06-07 08:09:10|2025-06-07 08:09:10.987|2025-06-07\n7|NULL|2025-01-01 00:00:00.000|NULL\n")

	// Bad values and types.
	fails("insert into ev (id, at) values (8, '2024-13-01 00:00:00')", "1366", "for column 'at'")
	fails("insert into ev (id, at) values (8, '2024-01-01 24:00:00')", "1366", "for column 'at'")
	fails("create table bad (a datetime(7))", "1426", "Too-big precision 7 specified for 'a'")
	if err := os.WriteFile(path, []byte("9\t2024-01-01 10:61:00\t\\N\t\\N\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fails("load data local infile '"+path+"' into table ev", "1292", "Incorrect datetime value: '2024-01-01 10:61:00' for column 'at'")
	check("select count(*) from ev", "7\n")

	// The binary protocol: go-sql-driver prepares statements with arguments, and with
	// parseTime scans DATETIME into time.Time.
	cfg := mysql.NewConfig()
	cfg.User, cfg.DBName, cfg.Net, cfg.Addr, cfg.ParseTime = "root", "tpch", "tcp", em.addr, true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := dsql.OpenDB(connector)
	defer db.Close()
	var at, ts time.Time
	var id int
	err = db.QueryRowContext(ctx, "select id, at, ts from ev where at > ? and id < ? order by at limit 1",
		time.Date(2024, 1, 2, 10, 0, 0, 0, time.UTC), 5).Scan(&id, &at, &ts)
	if err != nil {
		t.Fatal(errorText(err))
	}
	if want := time.Date(2024, 1, 2, 10, 30, 0, 0, time.UTC); id != 1 || !at.Equal(want) || !ts.Equal(want.Add(123*time.Millisecond)) {
		t.Errorf("binary protocol: %d %s %s", id, at, ts)
	}
	if _, err := db.ExecContext(ctx, "insert into ev (id, at) values (?, ?)", 10, time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)); err != nil {
		t.Fatal(errorText(err))
	}
	check("select at from ev where id = 10", "2030-05-06 07:08:09\n")

	// A value of more fraction digits stored in, or cast to, fewer keeps those it has room for.
	run("insert into ev (id, at, ts) select 11, ts + interval 1 microsecond, ts + interval 1 microsecond from ev where id = 1")
	check("select at, ts, cast(ts as datetime), at = '2024-01-02 10:30:00' from ev where id = 11",
		"2024-01-02 10:30:00|2024-01-02 10:30:00.123|2024-01-02 10:30:00|1\n")
	run("delete from ev where id = 11")

	// Joins and semi-joins on DATETIME keys, and a GROUP BY of a DATETIME with a DATE.
	check("select count(*) from ev a join ev b on a.at = b.at", "6\n")
	check("select id from ev where at in (select at from ev where id < 3) order by id", "1\n2\n")
	check("select at, d, count(*) from ev where id in (1, 2) group by at, d order by at", "2024-01-02 00:00:00|2024-01-01|1\n2024-01-02 10:30:00|2024-01-02|1\n")

	// mariadb-dump writes the table, with its DATETIME(3), and the stock client reloads it.
	out := s.dumpReload(em, "ev", "select id, at, ts, d from ev order by id")
	if !strings.Contains(out, "`ts` datetime(3)") || !strings.Contains(out, "'2024-01-02 10:30:00.123'") {
		t.Errorf("the dump does not hold the DATETIME(3) column and its values:\n%s", out)
	}
}

// TestColumnDefaults: a column's DEFAULT (a literal of its type, or CURRENT_TIMESTAMP for a
// DATETIME) is kept with the table on every primproc, shown by SHOW CREATE TABLE, SHOW
// COLUMNS and information_schema, survives TRUNCATE, and fills a column that an INSERT
// leaves out or gives as DEFAULT, and that a LOAD DATA column list leaves out. A value the
// column cannot hold is 1067; a NOT NULL column without a default that is left out, 1364.
func TestColumnDefaults(t *testing.T) {
	needDaemons(t)
	em := emptyCluster(t, "defaults", 2)
	s := newSQLSession(t, em)
	conn, ctx, run, check, fails := s.conn, s.ctx, s.run, s.check, s.fails
	run("create table acct (id int not null, qty int not null default 5, price decimal(8,2) default -1.5, " +
		"name varchar(10) default 'it''s', day date default '2024-02-29', " +
		"made timestamp not null default current_timestamp on update current_timestamp, note text)")
	check("show create table acct", "acct|CREATE TABLE `acct` (\n"+
		"  `id` int NOT NULL,\n  `qty` int NOT NULL DEFAULT '5',\n  `price` decimal(8,2) DEFAULT '-1.50',\n"+
		"  `name` varchar(10) DEFAULT 'it''s',\n  `day` date DEFAULT '2024-02-29',\n"+
		"  `made` datetime NOT NULL DEFAULT CURRENT_TIMESTAMP,\n  `note` text DEFAULT NULL\n"+
		") ENGINE=colink DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci\n")
	check("select column_name, column_default from information_schema.columns where table_name = 'acct' order by ordinal_position",
		"id|NULL\nqty|5\nprice|-1.50\nname|it's\nday|2024-02-29\nmade|CURRENT_TIMESTAMP\nnote|NULL\n")
	if got := s.query("show columns from acct"); !strings.Contains(got, "qty|int|NO||5|") ||
		!strings.Contains(got, "made|datetime|NO||CURRENT_TIMESTAMP|") || !strings.Contains(got, "note|text|YES||NULL|") {
		t.Errorf("show columns:\n%s", got)
	}

	before := time.Now().Add(-time.Second)
	run("insert into acct (id) values (1)")
	run("insert into acct values (2, default, 9.99, default, null, default, 'x')")
	run("insert into acct (id, qty, made) select 3, 7, timestamp '2001-02-03 04:05:06'")
	run("truncate table acct") // keeps the defaults
	run("insert into acct (id) values (1)")
	run("insert into acct values (2, default, 9.99, default, null, default, 'x')")
	run("insert into acct (id, qty, made) select 3, 7, timestamp '2001-02-03 04:05:06'")
	check("select id, qty, price, name, day, note from acct order by id",
		"1|5|-1.50|it's|2024-02-29|NULL\n2|5|9.99|it's|NULL|x\n3|7|-1.50|it's|2024-02-29|NULL\n")
	var made time.Time
	var ok bool
	row := conn.QueryRowContext(ctx, "select made, made = (select made from acct where id = 2) from acct where id = 1")
	var madeText string
	if err := row.Scan(&madeText, &ok); err != nil {
		t.Fatal(errorText(err))
	}
	made, err := time.ParseInLocation("2006-01-02 15:04:05", madeText, time.Local)
	if err != nil || made.Before(before.Truncate(time.Second)) || made.After(time.Now()) {
		t.Errorf("DEFAULT CURRENT_TIMESTAMP gave %q (%v), want the statement's time", madeText, err)
	}
	check("select made from acct where id = 3", "2001-02-03 04:05:06\n")

	// LOAD DATA: the columns its list leaves out take their defaults.
	path := filepath.Join(t.TempDir(), "acct.tsv")
	if err := os.WriteFile(path, []byte("4\tfour\n5\t\\N\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mysql.RegisterLocalFile(path)
	run("load data local infile '" + path + "' into table acct (id, name)")
	check("select id, qty, price, name, day, made is not null from acct where id > 3 order by id",
		"4|5|-1.50|four|2024-02-29|1\n5|5|-1.50|NULL|2024-02-29|1\n")

	fails("create table bad (a int default 'x')", "1067", "Invalid default value for 'a'")
	fails("create table bad (a varchar(2) default 'abc')", "1067", "Invalid default value for 'a'")
	fails("create table bad (a int not null default null)", "1067", "Invalid default value for 'a'")
	fails("create table bad (a date default current_timestamp)", "1067", "Invalid default value for 'a'")
	run("create table strict (a int, b int not null)")
	fails("insert into strict (a) values (1)", "1364", "Field 'b' doesn't have a default value")

	// A dump keeps the defaults: mariadb-dump's CREATE TABLE reloads as the same table.
	s.dumpReload(em, "acct", "show create table acct", "select * from acct order by id")
}

// dumpReload dumps table with mariadb-dump and reloads the dump into em through the mariadb
// client (which drops and recreates the table), checking that each query gives the same
// rows after as before; it returns the dump. Without the clients it skips the test.
func (s *sqlSession) dumpReload(em *exemgrProc, table string, queries ...string) string {
	t := s.t
	t.Helper()
	dump, err := osexec.LookPath("mariadb-dump")
	if err != nil {
		t.Skip("mariadb-dump is not installed: install mariadb-client to run the dump round trip")
	}
	client, err := osexec.LookPath("mariadb")
	if err != nil {
		t.Skip("the mariadb client is not installed: install mariadb-client to run the dump round trip")
	}
	var before []string
	for _, q := range queries {
		before = append(before, s.query(q))
	}
	out, err := osexec.CommandContext(s.ctx, dump, "-S", em.socket, "-u", "root", "tpch", table).Output()
	if err != nil {
		t.Fatalf("mariadb-dump: %v\n%s", err, out)
	}
	load := osexec.CommandContext(s.ctx, client, "-S", em.socket, "-u", "root", "tpch")
	load.Stdin = strings.NewReader(string(out))
	if msg, err := load.CombinedOutput(); err != nil {
		t.Fatalf("mariadb < dump: %v\n%s\n%s", err, msg, em.Log())
	}
	for i, q := range queries {
		if got := s.query(q); got != before[i] {
			t.Errorf("%s after the reload:\n got %q\nwant %q", q, got, before[i])
		}
	}
	return string(out)
}
