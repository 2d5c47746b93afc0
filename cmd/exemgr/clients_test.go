package main

import (
	"context"
	dsql "database/sql"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colinkdb/colink/internal/testbin"
)

// What real clients send besides queries: dump files' comments and versioned comments,
// health checks while the primprocs are away, the date and session functions, and
// statements colink does not support.

// exemgrWithoutPrimproc starts an exemgr whose one primproc is not running: nothing
// listens on its port.
func exemgrWithoutPrimproc(t *testing.T) (*exemgrProc, string) {
	t.Helper()
	needDaemons(t)
	url := fmt.Sprintf("tcp://127.0.0.1:%d", testbin.FreePort(t))
	em := shared.spawnExemgr(t, []string{url}, "tcp", "--primproc-timeout", "1s")
	t.Cleanup(em.Kill)
	return em, url
}

// needMariadb skips the test if the mariadb client is missing.
func needMariadb(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("mariadb"); err != nil {
		t.Skip("the mariadb command-line client is not installed: install mariadb-client (apt-get install -y mariadb-client) to run this test")
	}
}

// TestComments: a statement of comments only is OK, as MySQL's empty query with a comment;
// a versioned comment whose version is not above colink's (8.0.11) runs what it holds, a
// later one is a comment. Through go-sql-driver's text protocol and the mariadb client
// (which sends comments with --comments and versioned comments always).
func TestComments(t *testing.T) {
	em, _ := exemgrWithoutPrimproc(t)
	conn := em.conn(t)
	ctx := context.Background()
	for _, q := range []string{"/* just a comment */", "-- x", "# x", "/*!99999 SET @@sql_mode = 'ANSI' */", "/*M!100100 SET @@sql_mode = 'ANSI' */"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Errorf("%q: %s, want OK", q, errorText(err))
		}
	}
	sqlMode := func() string {
		t.Helper()
		var mode string
		if err := conn.QueryRowContext(ctx, "select @@sql_mode").Scan(&mode); err != nil {
			t.Fatalf("select @@sql_mode: %s", errorText(err))
		}
		return mode
	}
	if got := sqlMode(); got != "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION" {
		t.Errorf("after later versions' comments, sql_mode = %q: they ran", got)
	}
	if _, err := conn.ExecContext(ctx, "/*!40100 SET @@SQL_MODE='' */"); err != nil {
		t.Fatalf("a versioned comment: %s", errorText(err))
	}
	if got := sqlMode(); got != "" {
		t.Errorf("after /*!40100 SET @@SQL_MODE='' */, sql_mode = %q", got)
	}
	var comment string
	_, wantComment := shared.serverVersion(t)
	if err := conn.QueryRowContext(ctx, "/*!80011 select @@version_comment */").Scan(&comment); err != nil || comment != wantComment {
		t.Errorf("/*!80011 select @@version_comment */: %q, %s", comment, errorText(err))
	}
	if _, err := conn.ExecContext(ctx, "  "); err == nil || !strings.Contains(errorText(err), "1065") {
		t.Errorf("blank text: %s, want 1065 Query was empty", errorText(err))
	}

	t.Run("mariadb", func(t *testing.T) {
		needMariadb(t)
		out, _ := mariadb(t, em, "", "--comments", "-e", "/* just a comment */")
		if out != "" {
			t.Errorf("a comment: printed %q", out)
		}
		out, _ = mariadb(t, em, "", "--comments", "-e", "-- x")
		if out != "" {
			t.Errorf("-- x: printed %q", out)
		}
		// A dump file's head, as mariadb-dump writes it, then what it set.
		script := "/*!40100 SET @@SQL_MODE='' */;\n/* just a comment */;\n-- x\n/*!99999 SET @@time_zone = '+09:00' */;\nselect @@sql_mode, @@time_zone;\n"
		for _, args := range [][]string{{"--comments"}, {}} {
			out, _ = mariadb(t, em, script, args...)
			if want := "@@sql_mode\t@@time_zone\n\tSYSTEM\n"; out != want {
				t.Errorf("the script with %q: printed %q, want %q", args, out, want)
			}
		}
	})
}

// TestHealthChecksWithoutPrimproc: with its only primproc down (never started), exemgr
// still answers what needs no table: the health checks of load balancers, pools and the
// mariadb client. A query of a table still fails at once, naming the primproc.
func TestHealthChecksWithoutPrimproc(t *testing.T) {
	em, url := exemgrWithoutPrimproc(t)
	conn := em.conn(t)
	ctx := context.Background()
	for _, q := range []string{"SELECT 1", "select 1 from dual", "SELECT @@version", "SELECT VERSION()", "select 1 + 2 * 3, 'ok', null",
		"SET @x = 1", "SET NAMES utf8mb4", "SET SESSION sql_mode = 'ANSI'", "select @x", "SHOW VARIABLES", "SHOW VARIABLES LIKE 'version%'",
		"USE tpch", "select (select 1)", "SHOW WARNINGS"} {
		start := time.Now()
		rows, err := conn.QueryContext(ctx, q)
		if err == nil {
			_, err = result(rows, "NULL")
			rows.Close()
		}
		if err != nil {
			t.Errorf("%s: %s", q, errorText(err))
		} else if took := time.Since(start); took > 500*time.Millisecond {
			t.Errorf("%s took %v: it waited for the primproc", q, took)
		}
	}
	var n int
	if err := conn.QueryRowContext(ctx, "select 40 + 2").Scan(&n); err != nil || n != 42 {
		t.Errorf("select 40 + 2: %d, %s", n, errorText(err))
	}
	for _, q := range []string{"select count(*) from nation", "select (select count(*) from region)", "show tables"} {
		_, err := conn.ExecContext(ctx, q)
		if got := errorText(err); err == nil || !strings.Contains(got, url) {
			t.Errorf("%s: %s, want an error naming %s", q, got, url)
		}
	}
	t.Run("mariadb", func(t *testing.T) {
		needMariadb(t)
		out, _ := mariadb(t, em, "", "tpch", "-e", "select 1; select @@version; select version(); set @y = 2; show variables like 'version'; use tpch")
		v, _ := shared.serverVersion(t)
		for _, want := range []string{"1\n1\n", "@@version\n" + v + "\n", "version()\n" + v + "\n", "version\t" + v + "\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("mariadb printed %q, want %q in it", out, want)
			}
		}
	})
}

// TestDateAndSessionFunctions: NOW() and its spellings, CURDATE(), UNIX_TIMESTAMP(),
// DATABASE(), VERSION() and CONNECTION_ID() through a real exemgr, with their MySQL result
// types (NOW() is a DATETIME). The statement's time is one
// value for the whole statement, a SLEEP inside it notwithstanding, and the next statement
// reads its own.
func TestDateAndSessionFunctions(t *testing.T) {
	em, _ := exemgrWithoutPrimproc(t)
	conn := em.conn(t)
	ctx := context.Background()
	rows, err := conn.QueryContext(ctx, "select now(), current_timestamp, current_timestamp(), curdate(), current_date, unix_timestamp(), "+
		"unix_timestamp(date '1970-01-02') - unix_timestamp(date '1970-01-01'), database(), version(), connection_id(), connection_id() + 0, sleep(0.2), now(6)")
	if err != nil {
		t.Fatal(errorText(err))
	}
	types, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ct := range types {
		got = append(got, ct.DatabaseTypeName())
	}
	if want := "DATETIME DATETIME DATETIME DATE DATE BIGINT BIGINT VARCHAR VARCHAR BIGINT BIGINT BIGINT DATETIME"; strings.Join(got, " ") != want {
		t.Errorf("column types %s, want %s", strings.Join(got, " "), want)
	}
	tb, err := result(rows, "NULL")
	rows.Close()
	if err != nil {
		t.Fatal(errorText(err))
	}
	r := tb.Rows[0]
	now := time.Now()
	start, err := time.ParseInLocation("2006-01-02 15:04:05", r[0], time.Local)
	if err != nil || now.Sub(start) < 0 || now.Sub(start) > 5*time.Second {
		t.Errorf("now() = %q at %v", r[0], now)
	}
	if r[1] != r[0] || r[2] != r[0] || !strings.HasPrefix(r[12], r[0]+".") {
		t.Errorf("now(), current_timestamp, current_timestamp(), now(6) disagree within a statement: %q", r)
	}
	if r[3] != r[0][:10] || r[4] != r[0][:10] {
		t.Errorf("curdate() %q, current_date %q, now() %q", r[3], r[4], r[0])
	}
	if r[5] != fmt.Sprint(start.Unix()) || r[6] != "86400" {
		t.Errorf("unix_timestamp() = %s, want %d; a day apart: %s", r[5], start.Unix(), r[6])
	}
	if v, _ := shared.serverVersion(t); r[7] != "tpch" || r[8] != v || r[9] == "" || r[10] != r[9] {
		t.Errorf("database(), version(), connection_id(): %q", r[7:11])
	}
	// USER() and CURRENT_USER() in an engine query, beside other expressions.
	var n int
	var user, current string
	if err := conn.QueryRowContext(ctx, "select 1 + 1, user(), concat(current_user, '')").Scan(&n, &user, &current); err != nil ||
		n != 2 || user != "root@127.0.0.1" || current != user {
		t.Errorf("select 1 + 1, user(), current_user: %d %q %q, %s", n, user, current, errorText(err))
	}
	var later string
	if err := conn.QueryRowContext(ctx, "select now(6)").Scan(&later); err != nil || later <= r[12] {
		t.Errorf("the next statement's now(6) = %q, %s; the previous one's %q", later, errorText(err), r[12])
	}
	t.Run("mariadb", func(t *testing.T) {
		needMariadb(t)
		out, _ := mariadb(t, em, "", "tpch", "-N", "-e", "select now() = current_timestamp, curdate() = current_date, unix_timestamp() > 1700000000, database(), version(), connection_id() > 0")
		if v, _ := shared.serverVersion(t); out != "1\t1\t1\ttpch\t"+v+"\t1\n" {
			want := "1\t1\t1\ttpch\t" + v + "\t1\n"
			t.Errorf("mariadb printed %q, want %q", out, want)
		}
	})
}

// TestUnsupportedNamed: a statement colink does not support is 1235 naming the feature in
// MySQL's words — which SHOW, not "this SHOW statement".
func TestUnsupportedNamed(t *testing.T) {
	needDaemons(t)
	url := fmt.Sprintf("tcp://127.0.0.1:%d", testbin.FreePort(t))
	pm := shared.start(t, shared.bin(t, "./cmd/primproc"), "--data-dir", filepath.Join(testbin.TempDir(t), "pm"), "--listen", url, "--threads", "1")
	t.Cleanup(pm.Kill)
	pm.WaitLog(t, `primproc: serving`, 10*time.Second)
	em := shared.startExemgr(t, []string{url}, "tcp")
	t.Cleanup(em.Kill)
	conn := em.conn(t)
	for q, want := range map[string]string{
		"show engines": "SHOW ENGINES",
		"show plugins": "SHOW PLUGINS",
	} {
		_, err := conn.ExecContext(context.Background(), q)
		if got := errorText(err); got != "ERROR 1235 (42000): This version of colink doesn't yet support '"+want+"'" {
			t.Errorf("%s: %s, want 1235 naming %s", q, got, want)
		}
	}
	t.Run("mariadb", func(t *testing.T) {
		needMariadb(t)
		_, stderr, _ := runMariadb(t, em, "", true, "-e", "show engines")
		if want := "ERROR 1235 (42000) at line 1: This version of colink doesn't yet support 'SHOW ENGINES'\n"; !strings.HasSuffix(stderr, want) {
			t.Errorf("mariadb printed %q, want it to end in %q", stderr, want)
		}
	})
}

// TestSQLMode: a session's sql_mode changes how its statements parse, as in MySQL:
// ANSI_QUOTES makes "x" an identifier and PIPES_AS_CONCAT makes || concatenation (ANSI sets
// both); back at the default, "x" is a string and || is OR. SET to an expression is
// checked the same. A mode MySQL does not know is
// error 1231, and the session's mode stays as it was.
func TestSQLMode(t *testing.T) {
	em, _ := exemgrWithoutPrimproc(t)
	conn := em.conn(t)
	ctx := context.Background()
	one := func(q string) (string, error) {
		var v dsql.NullString
		err := conn.QueryRowContext(ctx, q).Scan(&v)
		return v.String, err
	}
	for _, c := range []struct{ stmt, query, want, wantErr string }{
		{"", `select "x"`, "x", ""},
		{"", `select 1 || 0`, "1", ""},
		{"SET sql_mode = 'ANSI'", `select 1 || 0`, "10", ""},
		{"", `select "x"`, "", "1054"},
		{"SET SESSION sql_mode = 'pipes_as_concat'", `select "x" || 'y'`, "xy", ""},
		{"SET sql_mode = 'ANSI_QUOTES,NOT_A_MODE'", `select "x" || 'y'`, "xy", ""},
		{"SET sql_mode = DEFAULT", `select 1 || 0`, "1", ""},
		{"SET @@sql_mode = concat('ANSI_QUOTES', '')", `select "x"`, "", "1054"},
	} {
		if c.stmt != "" {
			_, err := conn.ExecContext(ctx, c.stmt)
			if strings.Contains(c.stmt, "NOT_A_MODE") {
				if got := errorText(err); !strings.Contains(got, "1231") || !strings.Contains(got, "NOT_A_MODE") {
					t.Errorf("%s: %s, want error 1231 naming the value", c.stmt, got)
				}
			} else if err != nil {
				t.Fatalf("%s: %s", c.stmt, errorText(err))
			}
		}
		got, err := one(c.query)
		switch {
		case c.wantErr != "":
			if !strings.Contains(errorText(err), c.wantErr) {
				t.Errorf("after %q, %s: %q, %s; want error %s", c.stmt, c.query, got, errorText(err), c.wantErr)
			}
		case err != nil || got != c.want:
			t.Errorf("after %q, %s: %q, %s; want %q", c.stmt, c.query, got, errorText(err), c.want)
		}
	}
}
