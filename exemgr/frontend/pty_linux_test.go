//go:build linux

package frontend

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// terminal runs a command on a pseudo-terminal, as a person at a prompt would.
type terminal struct {
	t    *testing.T
	ptmx *os.File
	cmd  *exec.Cmd

	mu   sync.Mutex
	out  bytes.Buffer // everything the command wrote
	seen int          // how much of out expect has consumed
	eof  chan struct{}
}

// startTerminal starts name with args on a new pseudo-terminal of 50×200 characters.
func startTerminal(t *testing.T, name string, args ...string) *terminal {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(ptmx.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	if err := unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: 50, Col: 200}); err != nil {
		t.Fatalf("pty size: %v", err)
	}
	pts, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	defer pts.Close()
	cmd := exec.Command(name, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "TERM=dumb", "LANG=C.UTF-8"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		ptmx.Close()
		t.Fatal(err)
	}
	term := &terminal{t: t, ptmx: ptmx, cmd: cmd, eof: make(chan struct{})}
	go func() {
		defer close(term.eof)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		ptmx.Close()
		<-term.eof
	})
	return term
}

// send types s.
func (term *terminal) send(s string) {
	if _, err := term.ptmx.Write([]byte(s)); err != nil {
		term.t.Fatalf("write to terminal: %v", err)
	}
}

// expect waits until the output after the last match contains want, and returns the output
// up to and including it.
func (term *terminal) expect(want string) string {
	term.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		term.mu.Lock()
		rest := term.out.String()[term.seen:]
		if i := strings.Index(rest, want); i >= 0 {
			term.seen += i + len(want)
			term.mu.Unlock()
			return rest[:i+len(want)]
		}
		term.mu.Unlock()
		if time.Now().After(deadline) {
			term.t.Fatalf("terminal did not show %q; it shows:\n%s", want, rest)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestMariadbClientInteractive(t *testing.T) {
	client := mariadbClient(t)
	eng := newFakeEngine()
	ts := startServer(t, eng, nil)
	term := startTerminal(t, client, connectArgs(ts, "unix")...)

	// The prompt says MySQL, not MariaDB, because the server's version does not.
	banner := term.expect("[tpch]> ")
	for _, want := range []string{"Your MySQL connection id is ", "Server version: 8.0.11-colink colink"} {
		if !strings.Contains(banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, banner)
		}
	}
	// Without -A the client reads the catalog for tab completion at connect.
	seen := strings.Join(eng.seen(), "\n")
	if !strings.Contains(seen, "show databases") || !strings.Contains(seen, "show tables") || !strings.Contains(seen, "COM_FIELD_LIST typed") {
		t.Errorf("the client did not read the catalog for completion; the engine saw:\n%s", seen)
	}

	term.send("select * from typed;\n")
	out := term.expect("[tpch]> ")
	for _, want := range []string{
		"| i32  | i64        | price   | total                        | day        |",
		"|    1 | 9000000000 | 1234.56 | 12345678901234567890123.4567 | 1998-12-01 |",
		"3 rows in set",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("result lacks %q:\n%s", want, out)
		}
	}

	term.send("select * from nosuch;\n")
	if out := term.expect("[tpch]> "); !strings.Contains(out, "ERROR 1146 (42S02): Table 'tpch.nosuch' doesn't exist") {
		t.Errorf("error output:\n%s", out)
	}

	term.send("use other\n")
	if out := term.expect("[other]> "); !strings.Contains(out, "Database changed") {
		t.Errorf("use output:\n%s", out)
	}

	term.send("status\n")
	if out := term.expect("[other]> "); !strings.Contains(out, "Uptime:") || !strings.Contains(out, "Current database:\tother") {
		t.Errorf("status output:\n%s", out)
	}

	// Ctrl-C during a query: the client sends KILL QUERY on a second connection.
	term.send("block;\n")
	select {
	case <-eng.started:
	case <-time.After(10 * time.Second):
		t.Fatal("query did not start")
	}
	term.send("\x03")
	if out := term.expect("[other]> "); !strings.Contains(out, "ERROR 1317 (70100): Query execution was interrupted") {
		t.Errorf("Ctrl-C output:\n%s", out)
	}
	term.send("select 1;\n")
	if out := term.expect("[other]> "); !strings.Contains(out, "1 row in set") {
		t.Errorf("after Ctrl-C:\n%s", out)
	}
	if testing.Verbose() {
		t.Logf("terminal session:\n%s\nthe engine saw:\n%s", term.out.String(), strings.Join(eng.seen(), "\n"))
	}
	term.send("quit\n")
	term.expect("Bye")
}
