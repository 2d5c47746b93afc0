package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colinkdb/colink/dbt3/answers"
	"github.com/colinkdb/colink/dbt3/queries"
)

// mariadb runs the stock mariadb client with args and stdin and a HOME whose ~/.my.cnf
// points at exemgr's unix socket as root, so that "mariadb tpch -e …" works exactly as a
// person types it. It returns stdout, and fails the test on a non-zero exit.
func mariadb(t *testing.T, em *exemgrProc, stdin string, args ...string) (string, time.Duration) {
	t.Helper()
	out, _, took := runMariadb(t, em, stdin, false, args...)
	return out, took
}

// runMariadb is mariadb that also returns stderr, and tolerates a failure if allowFail.
func runMariadb(t *testing.T, em *exemgrProc, stdin string, allowFail bool, args ...string) (string, string, time.Duration) {
	t.Helper()
	client, err := exec.LookPath("mariadb")
	if err != nil {
		t.Skip("the mariadb command-line client is not installed: install mariadb-client (apt-get install -y mariadb-client) to run this test")
	}
	home := t.TempDir()
	cnf := "[client]\nsocket=" + em.socket + "\nuser=root\n"
	if err := os.WriteFile(filepath.Join(home, ".my.cnf"), []byte(cnf), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, client, args...)
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil && !allowFail {
		t.Fatalf("mariadb %q: %v\n%s%s", args, err, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String(), time.Since(start)
}

// tabTable reads the client's batch output (tab-separated, a header line) as a table,
// NULL as "".
func tabTable(out string) *answers.Table {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	tb := &answers.Table{Columns: strings.Split(lines[0], "\t")}
	for _, l := range lines[1:] {
		row := strings.Split(l, "\t")
		for i, v := range row {
			if v == "NULL" {
				row[i] = ""
			}
		}
		tb.Rows = append(tb.Rows, row)
	}
	return tb
}

// TestMariadbClient runs statements through the real mariadb client: the seed command,
// TPC-H scripts fed on stdin (Q15's three statements among them), SHOW and DESCRIBE, and
// an error.
func TestMariadbClient(t *testing.T) {
	needDaemons(t)
	if _, err := exec.LookPath("mariadb"); err != nil {
		t.Skip("the mariadb command-line client is not installed: install mariadb-client (apt-get install -y mariadb-client) to run this test")
	}
	c := shared.cluster(t, "two-primprocs", 2, "0.01")
	em := shared.exemgr(t, c, "unix")

	t.Run("seed command", func(t *testing.T) {
		// time mariadb tpch -e 'select l_orderkey from lineitem order by 1 limit 100;'
		out, took := mariadb(t, em, "", "tpch", "-e", "select l_orderkey from lineitem order by 1 limit 100;")
		// The same through go-sql-driver: the 100 smallest order keys, in order.
		rows, err := em.conn(t).QueryContext(context.Background(), "select l_orderkey from lineitem order by 1 limit 100")
		if err != nil {
			t.Fatal(errorText(err))
		}
		want, err := result(rows, "NULL")
		rows.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := tabTable(out); len(got.Rows) != 100 || got.String() != want.String() || got.Rows[0][0] != "1" {
			t.Fatalf("mariadb printed\n%s\ngo-sql-driver got\n%s", out, want)
		}
		t.Logf("mariadb tpch -e 'select l_orderkey from lineitem order by 1 limit 100;': %v", took.Round(time.Millisecond))
	})

	needAnswers(t, "0.01")
	for _, n := range []int{1, 3, 13, 15, 22} {
		t.Run("Q"+strconv.Itoa(n), func(t *testing.T) {
			text, _ := queries.Get(n)
			out, _ := mariadb(t, em, text, "tpch")
			want, err := answers.ReadFile(expectedFile("0.01", n))
			if err != nil {
				t.Fatal(err)
			}
			if err := answers.Compare(tabTable(out), want); err != nil {
				t.Errorf("Q%d through mariadb: %v\n%s", n, err, out)
			}
		})
	}

	t.Run("show and describe", func(t *testing.T) {
		out, _ := mariadb(t, em, "", "-e", "show databases; use tpch; show tables; describe region; select @@version_comment;")
		_, comment := shared.serverVersion(t)
		for _, want := range []string{"Database\ninformation_schema\ntpch\n", "Tables_in_tpch\ncustomer\nlineitem\n", "Field\tType\tNull\tKey\tDefault\tExtra\nr_regionkey\tint\tNO\t\tNULL\t\n", "@@version_comment\n" + comment + "\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("an error, then the next statement", func(t *testing.T) {
		// --force goes on after an error, as an interactive session does.
		out, errOut, _ := runMariadb(t, em, "select nosuch from region;\nselect r_name from region where r_regionkey = 2;\n", true, "--force", "tpch")
		if !strings.Contains(errOut, "ERROR 1054 (42S22) at line 1: Unknown column 'nosuch' in 'field list'") {
			t.Errorf("the error is not MySQL's 1054: %q", errOut)
		}
		if !strings.Contains(out, "r_name\nASIA\n") {
			t.Errorf("the statement after the error did not answer:\n%s", out)
		}
	})
}
