package cluster

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colinkdb/colink/dbt3"
	"github.com/colinkdb/colink/internal/testbin"
)

// binaries builds primproc; exemgr is built by the test that needs it.
func binaries(t *testing.T) Binaries {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	dir := testbin.TempDir(t)
	return Binaries{PrimProc: testbin.Build(t, dir, "./cmd/primproc"), ExeMgr: filepath.Join(dir, "exemgr")}
}

func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

func waitGone(t *testing.T, pid int) {
	t.Helper()
	for i := 0; i < 100 && !gone(pid); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if !gone(pid) {
		t.Errorf("pid %d still exists", pid)
	}
}

func TestCluster(t *testing.T) {
	bins := binaries(t)
	ctx := context.Background()
	run := testbin.TempDir(t)
	data := t.TempDir()

	t.Run("start and stop", func(t *testing.T) {
		c, err := Start(ctx, Config{Binaries: bins, RunDir: run, DataDirs: []string{filepath.Join(data, "pm0"), filepath.Join(data, "pm1")}, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		pids := c.PIDs("")
		if len(pids) != 2 || len(c.LinkEndpoints()) != 2 || !strings.HasPrefix(c.LinkEndpoints()[1], "tcp://127.0.0.1:") {
			t.Fatalf("pids %v endpoints %v", pids, c.LinkEndpoints())
		}
		for _, name := range []string{"primproc0.sock", "primproc1.sock"} {
			if _, err := os.Stat(filepath.Join(run, name)); err != nil {
				t.Errorf("socket: %v", err)
			}
		}
		if err := c.Check(); err != nil {
			t.Errorf("Check: %v", err)
		}
		if err := c.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		for _, pid := range pids {
			waitGone(t, pid)
		}
		if left, _ := filepath.Glob(filepath.Join(run, "*.sock*")); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
		if log, _ := os.ReadFile(filepath.Join(run, "primproc1.log")); !strings.Contains(string(log), "primproc: stopped") {
			t.Errorf("primproc1's log:\n%s", log)
		}
	})

	t.Run("port in use", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		port := l.Addr().(*net.TCPAddr).Port
		_, err = Start(ctx, Config{Binaries: bins, RunDir: run, DataDirs: []string{filepath.Join(data, "pm0")}, BasePort: port})
		var se *StartError
		if !errors.As(err, &se) || se.Name != "primproc0" || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("err %v, want primproc0's own log line about the port", err)
		}
	})

	t.Run("socket path unusable", func(t *testing.T) {
		file := filepath.Join(run, "not-a-dir")
		os.WriteFile(file, nil, 0o644)
		_, err := Start(ctx, Config{Binaries: bins, RunDir: run, SocketDir: filepath.Join(file, "sockets"), DataDirs: []string{filepath.Join(data, "pm0")}})
		var se *StartError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "not a directory") || !strings.Contains(err.Error(), "primproc0.log") {
			t.Fatalf("err %v, want primproc0's own log line about the socket path", err)
		}
	})

	t.Run("exemgr", func(t *testing.T) {
		bins := bins
		bins.ExeMgr = testbin.Build(t, filepath.Dir(bins.ExeMgr), "./cmd/exemgr")
		c, err := Start(ctx, Config{Binaries: bins, RunDir: run, DataDirs: []string{filepath.Join(data, "pm0")}, Threads: 1, MySQLTCP: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Stop()
		eps, err := c.Serve(ctx, []string{"unix", "tcp"})
		if err != nil {
			t.Fatal(err)
		}
		// One exemgr per transport, both running, each on its own MySQL socket.
		unix, tcp := eps["unix"], eps["tcp"]
		if unix.Addr == "" || unix.Addr == tcp.Addr || unix.PIDs["exemgr"] == 0 || unix.PIDs["exemgr"] == tcp.PIDs["exemgr"] || unix.PIDs["primproc0"] != tcp.PIDs["primproc0"] {
			t.Fatalf("endpoints %+v", eps)
		}
		for tr, ep := range eps {
			conn, err := dbt3.Dial(ctx, ep.Addr, "")
			if err != nil {
				t.Fatalf("%s exemgr: %v", tr, err)
			}
			conn.Close()
		}
		// Serving again starts nothing new.
		again, err := c.Serve(ctx, []string{"tcp"})
		if err != nil || again["tcp"].PIDs["exemgr"] != tcp.PIDs["exemgr"] {
			t.Fatalf("second Serve: %+v, %v", again, err)
		}
		pids := []int{unix.PIDs["exemgr"], tcp.PIDs["exemgr"], tcp.PIDs["primproc0"]}
		// UseTransport leaves the one exemgr, which also takes MySQL clients on TCP.
		addr, err := c.UseTransport(ctx, "unix")
		if err != nil {
			t.Fatal(err)
		}
		waitGone(t, pids[0])
		waitGone(t, pids[1])
		if c.Transport() != "unix" || c.MySQLAddr("unix") != addr || c.PIDs("unix")["exemgr"] == pids[0] {
			t.Fatalf("after UseTransport: transport %q addr %q pids %v", c.Transport(), addr, c.PIDs("unix"))
		}
		conn, err := dbt3.Dial(ctx, c.MySQLAddr("tcp"), "")
		if err != nil {
			t.Fatalf("exemgr's MySQL TCP address %q: %v", c.MySQLAddr("tcp"), err)
		}
		conn.Close()
		pids = append(pids, c.PIDs("unix")["exemgr"])
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
		for _, pid := range pids {
			waitGone(t, pid)
		}
		for _, ep := range eps {
			if _, err := os.Stat(ep.Addr); !os.IsNotExist(err) {
				t.Errorf("MySQL socket %s left behind: %v", ep.Addr, err)
			}
		}
	})

	t.Run("died", func(t *testing.T) {
		c, err := Start(ctx, Config{Binaries: bins, RunDir: run, DataDirs: []string{filepath.Join(data, "pm0")}, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Stop()
		syscall.Kill(c.PIDs("")["primproc0"], syscall.SIGKILL)
		var err2 error
		for i := 0; i < 100 && err2 == nil; i++ {
			time.Sleep(20 * time.Millisecond)
			err2 = c.Check()
		}
		var de *DiedError
		if !errors.As(err2, &de) || de.Name != "primproc0" || !strings.Contains(err2.Error(), "killed") {
			t.Errorf("Check after kill -9: %v", err2)
		}
	})
}

// TestRestart: a primproc killed (or stopped) by a fault injection is reported dead, and
// comes back on the same endpoints and log.
func TestRestart(t *testing.T) {
	bins := binaries(t)
	ctx := context.Background()
	run := testbin.TempDir(t)
	c, err := Start(ctx, Config{Binaries: bins, RunDir: run, DataDirs: []string{filepath.Join(t.TempDir(), "pm0")}, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if c.Primprocs() != 1 || c.PrimprocName(0) != "primproc0" || !strings.HasPrefix(c.UnixEndpoint(0), "unix://"+run) {
		t.Fatalf("primprocs %d, name %q, unix %q", c.Primprocs(), c.PrimprocName(0), c.UnixEndpoint(0))
	}
	first := c.PIDs("")["primproc0"]
	if err := c.Signal("primproc0", syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := c.Kill("primproc0", 5*time.Second); err != nil { // a stopped process dies too
		t.Fatal(err)
	}
	var de *DiedError
	if c.Running("primproc0") || !errors.As(c.Check(), &de) {
		t.Fatalf("after Kill: running %v, Check %v", c.Running("primproc0"), c.Check())
	}
	if err := c.Signal("primproc0", syscall.SIGCONT); err == nil {
		t.Error("Signal to a dead primproc succeeded")
	}
	if err := c.RestartPrimproc(ctx, 0, "", []string{"COLINK_TEST_ENV=1"}); err != nil {
		t.Fatal(err)
	}
	if !c.Running("primproc0") || c.PIDs("")["primproc0"] == first || c.Check() != nil {
		t.Fatalf("after the restart: running %v, pids %v (first %d), Check %v", c.Running("primproc0"), c.PIDs(""), first, c.Check())
	}
	if err := c.RestartPrimproc(ctx, 0, "", nil); err == nil {
		t.Error("RestartPrimproc of a running primproc succeeded")
	}
	path, err := c.LogPath("primproc0")
	if err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(path)
	if n := strings.Count(string(log), "primproc: serving"); n != 2 {
		t.Errorf("primproc0's log has %d ready lines, want both lives':\n%s", n, log)
	}
}

func TestFindBinariesDir(t *testing.T) {
	if _, err := FindBinaries(context.Background(), t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "no executable") {
		t.Errorf("empty dir: %v", err)
	}
}
