package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/colinkdb/colink/dbt3/answers"
)

// TestInformationSchema: the catalog tables BI tools and ORMs read, through a real exemgr
// (two primprocs, SF 0.01), queried with WHERE, LIKE, ORDER BY, joins and aggregates like
// any table; USE, SHOW DATABASES and SHOW TABLES know the database.
func TestInformationSchema(t *testing.T) {
	needDaemons(t)
	c := shared.cluster(t, "two-primprocs", 2, "0.01")
	em := shared.exemgr(t, c, "unix")
	conn := em.conn(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := conn.ExecContext(ctx, "create view nation_names as select n_name, n_regionkey + 1 as r from nation"); err != nil {
		t.Fatal(errorText(err))
	}
	defer conn.ExecContext(ctx, "drop view nation_names")
	for _, tc := range []struct{ query, want string }{
		{"select table_name, table_type, engine, table_rows from information_schema.tables where table_schema = 'tpch' and table_name like 'n%' order by 1",
			"nation|BASE TABLE|colink|25\nnation_names|VIEW|NULL|NULL\n"},
		{"select column_name, ordinal_position, data_type, column_type, is_nullable, numeric_precision, numeric_scale, character_maximum_length " +
			"from information_schema.columns where table_schema = 'tpch' and table_name = 'lineitem' and column_name in ('l_orderkey', 'l_quantity', 'l_shipdate', 'l_comment') order by ordinal_position",
			"l_orderkey|1|bigint|bigint|NO|19|0|NULL\nl_quantity|5|decimal|decimal(15,2)|NO|15|2|NULL\nl_shipdate|11|date|date|NO|NULL|NULL|NULL\nl_comment|16|varchar|varchar(44)|NO|NULL|NULL|44\n"},
		{"select column_name, column_type, is_nullable from information_schema.columns where table_name = 'nation_names' order by ordinal_position",
			"n_name|char(25)|NO\nr|bigint|NO\n"},
		{"select t.table_name, count(*) from information_schema.tables t join information_schema.columns c on c.table_schema = t.table_schema and c.table_name = t.table_name " +
			"where t.table_type = 'BASE TABLE' group by 1 order by 2 desc, 1 limit 2", "lineitem|16\norders|9\n"},
		{"select table_name, view_definition like '%nation%' from information_schema.views where table_schema = 'tpch'", "nation_names|1\n"},
		{"select schema_name from information_schema.schemata order by 1", "information_schema\ntpch\n"},
		{"select count(*) from information_schema.statistics", "0\n"},
		{"select engine, support from information_schema.engines", "colink|DEFAULT\n"},
		{"select count(*) from INFORMATION_SCHEMA.TABLES where TABLE_SCHEMA = 'information_schema'", "9\n"},
		{"select n_name from nation where n_nationkey = (select count(*) from information_schema.schemata)", "BRAZIL\n"},
		{"show databases", "information_schema\ntpch\n"},
	} {
		rows, err := conn.QueryContext(ctx, tc.query)
		if err != nil {
			t.Errorf("%s: %s", tc.query, errorText(err))
			continue
		}
		tb, err := result(rows, "NULL")
		rows.Close()
		got := psvRows(tb)
		if err != nil || got != tc.want {
			t.Errorf("%s:\n got %q (%v)\nwant %q", tc.query, got, err, tc.want)
		}
	}
	if _, err := conn.ExecContext(ctx, "use information_schema"); err != nil {
		t.Fatal(errorText(err))
	}
	rows, err := conn.QueryContext(ctx, "show tables")
	if err != nil {
		t.Fatal(errorText(err))
	}
	tb, _ := result(rows, "NULL")
	rows.Close()
	if got := psvRows(tb); got != "COLUMNS\nENGINES\nFILES\nPARTITIONS\nSCHEMATA\nSTATISTICS\nTABLES\nTRIGGERS\nVIEWS\n" {
		t.Errorf("show tables in information_schema: %q", psvRows(tb))
	}
	if _, err := conn.ExecContext(ctx, "select * from information_schema.nosuch"); !strings.Contains(errorText(err), "1146") {
		t.Errorf("an unknown information_schema table: %s, want 1146", errorText(err))
	}
	conn.ExecContext(ctx, "use tpch")
}

// psvRows prints a result's rows, '|' between values, a newline after each row.
func psvRows(tb *answers.Table) string {
	if tb == nil {
		return ""
	}
	var b strings.Builder
	for _, r := range tb.Rows {
		b.WriteString(strings.Join(r, "|"))
		b.WriteByte('\n')
	}
	return b.String()
}

// TestShowCreateAndDump: SHOW CREATE TABLE and VIEW, SHOW TABLE STATUS and SHOW TRIGGERS,
// and mariadb-dump of two tables (which reads information_schema, locks and unlocks the
// tables, and reads each table's CREATE TABLE and rows) through a real exemgr.
func TestShowCreateAndDump(t *testing.T) {
	needDaemons(t)
	c := shared.cluster(t, "two-primprocs", 2, "0.01")
	em := shared.exemgr(t, c, "unix")
	conn := em.conn(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var name, create string
	if err := conn.QueryRowContext(ctx, "show create table region").Scan(&name, &create); err != nil {
		t.Fatal(errorText(err))
	}
	want := "CREATE TABLE `region` (\n  `r_regionkey` int NOT NULL,\n  `r_name` char(25) NOT NULL,\n  `r_comment` varchar(152) NOT NULL\n) ENGINE=colink DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
	if name != "region" || create != want {
		t.Errorf("show create table region: %q\n%s\nwant\n%s", name, create, want)
	}
	if _, err := conn.ExecContext(ctx, "create view big_regions as select r_name from region where r_regionkey > 2"); err != nil {
		t.Fatal(errorText(err))
	}
	defer conn.ExecContext(ctx, "drop view big_regions")
	var cs, coll string
	if err := conn.QueryRowContext(ctx, "show create view big_regions").Scan(&name, &create, &cs, &coll); err != nil ||
		!strings.Contains(create, "VIEW `big_regions` AS SELECT `r_name` FROM `region` WHERE `r_regionkey`>2") {
		t.Errorf("show create view: %q %v", create, errorText(err))
	}
	rows, err := conn.QueryContext(ctx, "show table status like 'n%'")
	if err != nil {
		t.Fatal(errorText(err))
	}
	tb, _ := result(rows, "NULL")
	rows.Close()
	if len(tb.Rows) != 1 || tb.Rows[0][0] != "nation" || tb.Rows[0][1] != "colink" || tb.Rows[0][4] != "25" {
		t.Errorf("show table status like 'n%%': %q", tb.Rows)
	}
	rows, err = conn.QueryContext(ctx, "show triggers like 'nation'")
	if err != nil {
		t.Fatal(errorText(err))
	}
	if rows.Next() {
		t.Error("show triggers: rows, but colink has no triggers")
	}
	rows.Close()

	// SHOW … WHERE over the result's columns (numbers compare as numbers), SHOW CHARACTER
	// SET and SHOW COLLATION.
	for q, want := range map[string]string{
		"show collation where Charset = 'utf8mb4' and Id > 45":            "utf8mb4_0900_ai_ci|utf8mb4|255|Yes|Yes|0|NO PAD\nutf8mb4_bin|utf8mb4|46||Yes|1|PAD SPACE\n",
		"show character set like 'utf8%'":                                 "utf8mb4|UTF-8 Unicode|utf8mb4_0900_ai_ci|4\n",
		"show tables where Tables_in_tpch like 'p%'":                      "part\npartsupp\n",
		"show full tables where Table_type = 'VIEW'":                      "big_regions|VIEW\n",
		"show columns from nation where Type like 'char%'":                "n_name|char(25)|NO||NULL|\n",
		"select 1 from dual where 0":                                      "",
		"show table status where `Rows` between 20 and 30":                "nation|colink|10|Fixed|25|NULL|NULL|NULL|0|0|NULL|NULL|NULL|NULL|utf8mb4_0900_ai_ci|NULL||\n",
		"show databases where `Database` = 'information_schema' or false": "information_schema\n",
	} {
		rows, err := conn.QueryContext(ctx, q)
		if err != nil {
			t.Errorf("%s: %s", q, errorText(err))
			continue
		}
		tb, _ := result(rows, "NULL")
		rows.Close()
		if got := psvRows(tb); got != want {
			t.Errorf("%s:\n got %q\nwant %q", q, got, want)
		}
	}

	dump, err := exec.LookPath("mariadb-dump")
	if err != nil {
		t.Skip("mariadb-dump is not installed: install mariadb-client to run the rest of this test")
	}
	out, err := exec.CommandContext(ctx, dump, "-S", em.socket, "-u", "root", "tpch", "nation", "region").Output()
	if err != nil {
		t.Fatalf("mariadb-dump: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{"CREATE TABLE `nation` (\n  `n_nationkey` int NOT NULL,", "CREATE TABLE `region`", "LOCK TABLES `nation` WRITE;",
		"INSERT INTO `nation` VALUES\n(0,'ALGERIA',0,' haggle. carefully final deposits detect slyly agai'),", "(24,'UNITED STATES',1,", "(4,'MIDDLE EAST',"} {
		if !strings.Contains(text, want) {
			t.Errorf("the dump lacks %q:\n%s", want, text)
		}
	}
}
