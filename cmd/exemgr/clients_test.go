package main

import (
	"context"
	"fmt"
	"os/exec"
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
	if got := sqlMode(); got != "STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION" {
		t.Errorf("after later versions' comments, sql_mode = %q: they ran", got)
	}
	if _, err := conn.ExecContext(ctx, "/*!40100 SET @@SQL_MODE='' */"); err != nil {
		t.Fatalf("a versioned comment: %s", errorText(err))
	}
	if got := sqlMode(); got != "" {
		t.Errorf("after /*!40100 SET @@SQL_MODE='' */, sql_mode = %q", got)
	}
	var comment string
	if err := conn.QueryRowContext(ctx, "/*!80011 select @@version_comment */").Scan(&comment); err != nil || comment != "colink" {
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
		for _, want := range []string{"1\n1\n", "@@version\n8.0.11-colink\n", "version()\n8.0.11-colink\n", "version\t8.0.11-colink\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("mariadb printed %q, want %q in it", out, want)
			}
		}
	})
}
