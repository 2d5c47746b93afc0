package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mariadbJDBCJar is where Debian's libmariadb-java puts MariaDB Connector/J.
const mariadbJDBCJar = "/usr/share/java/mariadb-java-client.jar"

// TestOtherClients drives exemgr with the drivers of two other ecosystems, unchanged:
// MariaDB Connector/J (JDBC, server-side prepared statements) and Node.js's mysql2 (text
// queries and execute's binary protocol). Each prints what it read; the lines must be what
// go-sql-driver reads from the same statements (the expected rows are computed, not
// written down), and an unknown table must be error 1146 with SQLSTATE 42S02 naming it.
// Each skips, saying what to install, when its runtime or driver is missing; .ci/run
// installs both.
func TestOtherClients(t *testing.T) {
	needDaemons(t)
	c := shared.cluster(t, "one-primproc", 1, "0.01")
	em := shared.exemgr(t, c, "unix")
	db := em.db(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// rows reads a query through go-sql-driver as the clients print it: columns joined by |.
	rows := func(q string, args ...any) []string {
		t.Helper()
		rs, err := db.QueryContext(ctx, q, args...)
		if err != nil {
			t.Fatalf("%s: %s", q, errorText(err))
		}
		defer rs.Close()
		cols, _ := rs.Columns()
		var out []string
		for rs.Next() {
			vals := make([]*string, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rs.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			parts := make([]string, len(vals))
			for i, v := range vals {
				parts[i] = "null"
				if v != nil {
					parts[i] = *v
				}
			}
			out = append(out, strings.Join(parts, "|"))
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	between := "select n_name, n_regionkey from nation where n_nationkey between ? and ? order by n_nationkey"
	typed := "select max(o_orderdate), sum(o_totalprice), count(*) from orders where o_orderkey < ? and o_orderdate >= ?"
	sections := [][]string{
		append([]string{"# text"}, rows("select n_nationkey, n_name, n_regionkey from nation where n_regionkey = 2 order by 1")...),
		append(append([]string{"# prepared"}, rows(between, 3, 5)...), rows(between, 24, 30)...),
		append([]string{"# types"}, rows(typed, 100, "1990-01-01")...),
	}
	var common []string
	for _, s := range sections {
		common = append(common, s...)
	}
	errLine := "1146 42S02 names the table"
	dir, err := filepath.Abs(filepath.Join("testdata", "clients"))
	if err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, out []byte, want []string) {
		t.Helper()
		got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("the client printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}

	t.Run("jdbc-mariadb-connector-j", func(t *testing.T) {
		java, err := exec.LookPath("java")
		if err != nil {
			t.Skip("no java: apt-get install -y default-jdk-headless libmariadb-java to run this test")
		}
		if _, err := os.Stat(mariadbJDBCJar); err != nil {
			t.Skip("no MariaDB Connector/J at " + mariadbJDBCJar + ": apt-get install -y libmariadb-java to run this test")
		}
		url := "jdbc:mariadb://" + em.addr + "/tpch?user=root&useServerPrepStmts=true"
		cmd := exec.CommandContext(ctx, java, "-cp", mariadbJDBCJar, filepath.Join(dir, "ColinkJDBC.java"), url)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("java: %v\n%s", err, out)
		}
		// DatabaseMetaData's product and version, from the handshake, region's columns from
		// getColumns' information_schema query (CASE, LOCATE, CONVERT(… , UNSIGNED
		// INTEGER), …), the tables from getTables, and no keys or indexes (colink keeps none).
		meta := []string{"# metadata", "MySQL 8", "r_regionkey INT 10", "r_name CHAR 25", "r_comment VARCHAR 152",
			"tables customer lineitem nation orders part partsupp region supplier", "primary key columns 0", "indexes 0"}
		check(t, out, append(append(append([]string{}, common...), meta...), "# error", errLine))
	})

	t.Run("node-mysql2", func(t *testing.T) {
		node, err := exec.LookPath("node")
		if err != nil {
			t.Skip("no node: apt-get install -y nodejs, and npm install mysql2 into a directory named by NODE_PATH, to run this test")
		}
		probe := exec.CommandContext(ctx, node, "-e", "require.resolve('mysql2')")
		if out, err := probe.CombinedOutput(); err != nil {
			t.Skipf("Node.js cannot find mysql2 (npm install mysql2, and NODE_PATH=DIR/node_modules): %v\n%s", err, out)
		}
		host, port, _ := strings.Cut(em.addr, ":")
		out, err := exec.CommandContext(ctx, node, filepath.Join(dir, "mysql2.js"), host, port).CombinedOutput()
		if err != nil {
			t.Fatalf("node: %v\n%s", err, out)
		}
		check(t, out, append(append([]string{}, common...), "# error", errLine))
	})
}

// TestSetToAnExpression: the front end's variables set to an expression, as MariaDB
// Connector/J does at connect (SET autocommit=1, sql_mode = concat(@@sql_mode, …)), are
// evaluated by the engine and checked and kept by the front end, as a literal SET is.
func TestSetToAnExpression(t *testing.T) {
	needDaemons(t)
	em, _ := exemgrWithoutPrimproc(t)
	conn := em.conn(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := conn.ExecContext(ctx, "set autocommit=1, sql_mode = concat(@@sql_mode, ',ANSI_QUOTES'), net_write_timeout = 30 * 2"); err != nil {
		t.Fatal(errorText(err))
	}
	var mode string
	var timeout int64
	if err := conn.QueryRowContext(ctx, "select @@sql_mode, @@net_write_timeout").Scan(&mode, &timeout); err != nil {
		t.Fatal(errorText(err))
	}
	if !strings.HasSuffix(mode, ",ANSI_QUOTES") || !strings.Contains(mode, "ONLY_FULL_GROUP_BY") || timeout != 60 {
		t.Errorf("after SET: sql_mode %q, net_write_timeout %d", mode, timeout)
	}
	for stmt, code := range map[string]string{
		"set net_write_timeout = 1 - 5":        "1231", // out of range, as the literal is
		"set sql_mode = null":                  "1231",
		"set @@version = concat('x', 'y')":     "1238", // read only
		"set global sql_mode = concat('', '')": "1235",
		"set no_such_variable = 1 + 1":         "1193",
	} {
		if _, err := conn.ExecContext(ctx, stmt); !strings.Contains(errorText(err), code) {
			t.Errorf("%s: %s, want error %s", stmt, errorText(err), code)
		}
	}
}
