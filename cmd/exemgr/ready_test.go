package main

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/colinkdb/colink/internal/testbin"
	"github.com/colinkdb/colink/ipc"
)

// readyDaemon is a daemon started for TestReadyLineMeansAccepting, its stderr read line by
// line as it comes, so that the test acts the moment the ready line appears (testbin's
// WaitLog polls).
type readyDaemon struct {
	cmd   *exec.Cmd
	lines chan string // stderr, closed at EOF
	log   strings.Builder
}

func startReady(t *testing.T, bin string, args ...string) *readyDaemon {
	t.Helper()
	d := &readyDaemon{cmd: exec.Command(bin, args...), lines: make(chan string, 256)}
	stderr, err := d.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(d.lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			d.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { d.cmd.Process.Kill(); d.cmd.Wait() })
	return d
}

// waitReady reads stderr until a line containing ready, and returns at once.
func (d *readyDaemon) waitReady(t *testing.T, ready string) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-d.lines:
			if !ok {
				t.Fatalf("%s exited before logging %q:\n%s", d.cmd.Path, ready, d.log.String())
			}
			d.log.WriteString(line + "\n")
			if strings.Contains(line, ready) {
				return
			}
		case <-timeout:
			t.Fatalf("%s logged no %q within 20s:\n%s", d.cmd.Path, ready, d.log.String())
		}
	}
}

// stop sends SIGTERM, drains stderr and checks the exit status is 0.
func (d *readyDaemon) stop(t *testing.T) {
	t.Helper()
	d.cmd.Process.Signal(syscall.SIGTERM)
	for line := range d.lines {
		d.log.WriteString(line + "\n")
	}
	if err := d.cmd.Wait(); err != nil {
		t.Fatalf("%s after SIGTERM: %v\n%s", d.cmd.Path, err, d.log.String())
	}
}

// TestReadyLineMeansAccepting restarts each daemon many times on the same endpoints and
// connects once, with no retry, the moment it logs its ready line ("primproc: serving",
// "exemgr: serving"): every listener must take the connection and serve its handshake. A
// ready line logged before a listener listens fails this now and then, as a first connect
// to a freshly started exemgr once did (2002).
func TestReadyLineMeansAccepting(t *testing.T) {
	needDaemons(t)
	dir := testbin.TempDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pmTCP := fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t))
	pmSock := filepath.Join(dir, "pm.sock")

	t.Run("primproc", func(t *testing.T) {
		bin := shared.bin(t, "./cmd/primproc")
		start := time.Now()
		defer func() { t.Logf("10 starts in %v", time.Since(start).Round(time.Millisecond)) }()
		for i := range 10 {
			d := startReady(t, bin, "--data-dir", filepath.Join(dir, "pm"), "--listen", "tcp://"+pmTCP, "--listen", "unix://"+pmSock, "--threads", "1")
			d.waitReady(t, "primproc: serving")
			for _, ep := range [][2]string{{"tcp", pmTCP}, {"unix", pmSock}} {
				nc, err := net.Dial(ep[0], ep[1])
				if err != nil {
					t.Fatalf("start %d: connect to %s %s right after the ready line: %v", i, ep[0], ep[1], err)
				}
				hctx, hcancel := context.WithTimeout(ctx, 5*time.Second)
				c, err := ipc.NewClientConn(hctx, nc, ipc.ClientConfig{Name: "ready test", Logger: slog.New(slog.DiscardHandler)})
				hcancel()
				if err != nil {
					t.Fatalf("start %d: link handshake over %s right after the ready line: %v", i, ep[0], err)
				}
				c.Close()
			}
			d.stop(t)
		}
	})

	t.Run("exemgr", func(t *testing.T) {
		bin := shared.bin(t, "./cmd/exemgr")
		addr := fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t))
		sock := filepath.Join(dir, "em.sock")
		start := time.Now()
		defer func() { t.Logf("20 starts in %v", time.Since(start).Round(time.Millisecond)) }()
		for i := range 20 {
			// No primproc is needed to log in and ping.
			d := startReady(t, bin, "--primproc", "tcp://"+pmTCP, "--mysql-listen", addr, "--mysql-socket", sock)
			d.waitReady(t, "exemgr: serving")
			for _, ep := range [][2]string{{"tcp", addr}, {"unix", sock}} {
				cfg := mysql.NewConfig()
				cfg.User, cfg.Net, cfg.Addr = "root", ep[0], ep[1]
				conn, err := mysql.NewConnector(cfg)
				if err != nil {
					t.Fatal(err)
				}
				// One attempt: the driver's Connect, not database/sql, which retries.
				c, err := conn.Connect(ctx)
				if err != nil {
					t.Fatalf("start %d: MySQL connect over %s right after the ready line: %v\n%s", i, ep[0], err, d.log.String())
				}
				c.Close()
			}
			d.stop(t)
		}
	})
}
