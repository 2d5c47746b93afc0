package frontend

import (
	"bytes"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mariadbClient returns the path of the stock mariadb command-line client, skipping the test
// when it is not installed.
func mariadbClient(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"mariadb", "mysql"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skip("the mariadb command-line client is not installed: install mariadb-client (apt-get install -y mariadb-client) to run this test")
	return ""
}

// connectArgs are the client's arguments to reach ts over network, as root, in database tpch.
func connectArgs(ts *testServer, network string) []string {
	args := []string{"--no-defaults", "-u", "root"}
	if network == "unix" {
		args = append(args, "-S", ts.socket)
	} else {
		host, port, _ := strings.Cut(ts.tcp, ":")
		args = append(args, "-h", host, "-P", port, "--protocol=tcp")
	}
	return append(args, "tpch")
}

// runMariadb runs the client with args and stdin, and returns its stdout, stderr and exit code.
func runMariadb(t *testing.T, client string, args []string, stdin string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(client, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("mariadb %v did not finish; output so far:\n%s\n%s", args, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

// The client's batch output (-e, or statements on a stdin that is not a terminal) of
// "select * from typed": tab-separated, with the client's escapes for tabs.
const typedBatch = "i32\ti64\tprice\ttotal\tday\tname\tcomment\tratio\tok\n" +
	"1\t9000000000\t1234.56\t12345678901234567890123.4567\t1998-12-01\tCustomer#000000001\ta comment\t0.1\t1\n" +
	"-7\t-1\t-0.05\t-0.0001\t1970-01-01\t\ttab\\there\t1e20\t0\n" +
	"NULL\t0\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\n"

// The same in table form (-t): numbers right-aligned, as the client does for numeric types.
const typedTable = `+------+------------+---------+------------------------------+------------+--------------------+-----------+-------+------+
| i32  | i64        | price   | total                        | day        | name               | comment   | ratio | ok   |
+------+------------+---------+------------------------------+------------+--------------------+-----------+-------+------+
|    1 | 9000000000 | 1234.56 | 12345678901234567890123.4567 | 1998-12-01 | Customer#000000001 | a comment |   0.1 |    1 |
|   -7 |         -1 |   -0.05 |                      -0.0001 | 1970-01-01 |                    | tab	here  |  1e20 |    0 |
| NULL |          0 |    NULL |                         NULL | NULL       | NULL               | NULL      |  NULL | NULL |
+------+------------+---------+------------------------------+------------+--------------------+-----------+-------+------+
`

func TestMariadbClientExecute(t *testing.T) {
	client := mariadbClient(t)
	eng := newFakeEngine()
	ts := startServer(t, eng, nil)
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			args := connectArgs(ts, network)
			out, errOut, code := runMariadb(t, client, append(args, "-e", "select * from typed"), "")
			if code != 0 || out != typedBatch {
				t.Errorf("-e: exit %d, stderr %q, output:\n%s\nwant:\n%s", code, errOut, out, typedBatch)
			}
			out, errOut, code = runMariadb(t, client, append(args, "-t", "-e", "select * from typed;"), "")
			if code != 0 || out != typedTable {
				t.Errorf("-t -e: exit %d, stderr %q, output:\n%s\nwant:\n%s", code, errOut, out, typedTable)
			}
			// The client splits statements itself.
			out, _, code = runMariadb(t, client, append(args, "-N", "-e", "select 1; select 2; select database(), @@version_comment"), "")
			if want := "1\n2\ntpch\tcolink\n"; code != 0 || out != want {
				t.Errorf("three statements: exit %d, output %q, want %q", code, out, want)
			}
			// An error: its code, SQLSTATE and message, and exit status 1.
			// (In batch mode the client echoes the failed statement before the error.)
			_, errOut, code = runMariadb(t, client, append(args, "-e", "select * from nosuch"), "")
			if want := "ERROR 1146 (42S02) at line 1: Table 'tpch.nosuch' doesn't exist\n"; code != 1 || !strings.HasSuffix(errOut, want) {
				t.Errorf("error: exit %d, stderr %q, want %q", code, errOut, want)
			}
		})
	}
}

func TestMariadbClientStdin(t *testing.T) {
	client := mariadbClient(t)
	eng := newFakeEngine()
	ts := startServer(t, eng, nil)
	args := connectArgs(ts, "tcp")
	// --force goes on after an error, like a person at the prompt (and then exits 0).
	script := "use other;\nselect database();\nselec 1;\nuse tpch\nselect * from typed;\nwarn;\nshow warnings;\n" +
		"create view revenue0 as select 1;\nselect 2;\ndrop view revenue0;\n"
	out, errOut, code := runMariadb(t, client, append(args, "--force"), script)
	want := "database()\nother\n" + typedBatch + "Level\tCode\tMessage\nWarning\t1292\tTruncated incorrect DOUBLE value: 'x'\n" + "2\n2\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	if wantErr := "ERROR 1064 (42000) at line 3: You have an error in your SQL syntax near 'selec 1'\n"; !strings.HasSuffix(errOut, wantErr) || code != 0 {
		t.Errorf("exit %d, stderr %q, want %q", code, errOut, wantErr)
	}
}

func TestMariadbClientKilledByAnother(t *testing.T) {
	// Ctrl-C at the prompt is exercised in the pty test; here a second client kills the query.
	client := mariadbClient(t)
	eng := newFakeEngine()
	ts := startServer(t, eng, nil)
	args := connectArgs(ts, "unix")
	done := make(chan string, 1)
	go func() {
		_, errOut, _ := runMariadb(t, client, append(args, "-e", "block"), "")
		done <- errOut
	}()
	var sess *Session
	select {
	case sess = <-eng.started:
	case <-time.After(10 * time.Second):
		t.Fatal("query did not start")
	}
	if out, errOut, code := runMariadb(t, client, append(args, "-e", "kill query "+strconv.Itoa(int(sess.ID()))), ""); code != 0 {
		t.Fatalf("kill: exit %d %s %s", code, out, errOut)
	}
	if errOut := <-done; !strings.HasSuffix(errOut, "ERROR 1317 (70100) at line 1: Query execution was interrupted\n") {
		t.Errorf("killed client's stderr = %q", errOut)
	}
}
