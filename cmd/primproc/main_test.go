package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/internal/testbin"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/primproc"
)

// binDir holds the primproc binary the tests share: built once, by the first test that
// needs it, and removed by TestMain.
var binDir struct {
	once sync.Once
	dir  string
	bin  string
	err  string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir.dir != "" {
		os.RemoveAll(binDir.dir)
	}
	os.Exit(code)
}

func buildPrimproc(t *testing.T) string {
	if testing.Short() {
		t.Skip("builds and runs the primproc binary")
	}
	binDir.once.Do(func() {
		dir, err := os.MkdirTemp("", "colink-primproc-test")
		if err != nil {
			binDir.err = err.Error()
			return
		}
		binDir.dir = dir
		binDir.bin = testbin.Build(t, dir, "./cmd/primproc")
	})
	if binDir.bin == "" {
		t.Fatalf("primproc was not built: %s", binDir.err)
	}
	return binDir.bin
}

func startPrimproc(t *testing.T, bin string, port int, sock string) *testbin.Proc {
	p := testbin.Start(t, bin, "--listen", fmt.Sprintf("tcp://127.0.0.1:%d", port), "--listen", "unix://"+sock, "--log-level", "debug",
		"--data-dir", filepath.Join(filepath.Dir(sock), "data"))
	p.WaitLog(t, `primproc: serving`, 10*time.Second)
	return p
}

func synthArgs(t *testing.T, a link.SynthArgs) []byte {
	b, err := msgpack.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPrimprocOverTCPAndUnix(t *testing.T) {
	bin := buildPrimproc(t)
	dir := testbin.TempDir(t)
	port := testbin.FreePort(t)
	sock := filepath.Join(dir, "pm.sock")
	p := startPrimproc(t, bin, port, sock)
	checkLazyFree(t, p.Cmd.Process.Pid)
	for _, tc := range []struct{ url, tr string }{
		{fmt.Sprintf("tcp://127.0.0.1:%d", port), "tcp"},
		{"unix://" + sock, "unix"},
	} {
		cl, err := ipc.NewClient(tc.url, ipc.ClientConfig{Transport: ipc.Transport(tc.tr)})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if _, err := cl.Call(ctx, "echo", []byte{0xa2, 'h', 'i'}); err != nil {
			t.Fatalf("%s: echo: %v", tc.tr, err)
		}
		st, err := cl.Open(ctx, "synth", synthArgs(t, link.SynthArgs{Batches: 20, Rows: 4096}), true)
		if err != nil {
			t.Fatal(err)
		}
		rows := 0
		for {
			rec, err := st.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.tr, err)
			}
			rows += int(rec.NumRows())
			rec.Release()
		}
		st.Close()
		if rows != 20*4096 {
			t.Fatalf("%s: %d rows", tc.tr, rows)
		}
		var end map[string]any
		if err := msgpack.Unmarshal(st.End(), &end); err != nil || fmt.Sprint(end["batches"]) != "20" {
			t.Fatalf("%s: end %v %v", tc.tr, end, err)
		}
		if c := cl.Conns(); len(c) == 0 || c[0].Transport() != tc.tr {
			t.Fatalf("%s: connections %v", tc.tr, c)
		}
		var stats primproc.StatsReply
		raw, err := cl.Call(ctx, "stats", nil)
		if err != nil || msgpack.Unmarshal(raw, &stats) != nil || stats.PID != p.Cmd.Process.Pid || len(stats.Link.Conns) == 0 {
			t.Fatalf("%s: stats %+v %v", tc.tr, stats, err)
		}
		cancel()
		cl.Close()
	}
	// SIGTERM: a clean exit, the socket file removed.
	if code := p.Terminate(t, 10*time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM:\n%s", code, p.Log())
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket file left behind: %v", err)
	}
}

func TestKill9MidStream(t *testing.T) {
	bin := buildPrimproc(t)
	dir := testbin.TempDir(t)
	port := testbin.FreePort(t)
	sock := filepath.Join(dir, "pm.sock")
	for _, tr := range []string{"tcp", "unix", "shm"} {
		t.Run(tr, func(t *testing.T) {
			p := startPrimproc(t, bin, port, sock)
			url := fmt.Sprintf("tcp://127.0.0.1:%d", port)
			if tr != "tcp" {
				url = "unix://" + sock
			}
			cl, err := ipc.NewClient(url, ipc.ClientConfig{Transport: ipc.Transport(tr), BackoffMax: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			ctx := context.Background()
			st, err := cl.Open(ctx, "synth", synthArgs(t, link.SynthArgs{Batches: 1000, Rows: 1024, DelayMS: 20}), true)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for range 3 {
				rec, err := st.Recv()
				if err != nil {
					t.Fatal(err)
				}
				rec.Release()
			}
			if c := cl.Conns(); len(c) == 0 || c[0].Transport() != tr {
				t.Fatalf("the stream runs over %v, want %s", c, tr)
			}
			p.Cmd.Process.Kill()
			killed := time.Now()
			for {
				rec, err := st.Recv()
				if err == nil {
					rec.Release()
					continue
				}
				if !errors.Is(err, ipc.ErrConnClosed) && !errors.Is(err, ipc.ErrPeerSilent) {
					t.Fatalf("stream error %v, want a closed connection", err)
				}
				if d := time.Since(killed); d > 2*time.Second {
					t.Fatalf("stream failed %v after kill -9", d)
				}
				t.Logf("stream failed %v after kill -9: %v", time.Since(killed).Round(time.Millisecond), err)
				break
			}
			p.Wait(t, 5*time.Second)
			// Back on the same endpoints (the dead process's socket file is stale, and
			// replaced), a later call succeeds through the client's reconnection.
			startPrimproc(t, bin, port, sock)
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			for {
				_, err := cl.Call(cctx, "echo", nil)
				if err == nil {
					break
				}
				if cctx.Err() != nil {
					t.Fatalf("no successful call after restart: %v", err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			for _, c := range cl.Conns() {
				if c.Transport() != tr {
					t.Errorf("after the restart: a connection over %s, want %s", c.Transport(), tr)
				}
			}
		})
	}
}

func TestBadFlagsExitCode2(t *testing.T) {
	bin := buildPrimproc(t)
	for _, args := range [][]string{
		{"--no-such-flag"},
		{"--listen", "http://x"},
		{"--listen", "tcp://0.0.0.0:0"}, // non-loopback without a token
	} {
		p := testbin.Start(t, bin, append(args, "--data-dir", filepath.Join(t.TempDir(), "data"))...)
		if code := p.Wait(t, 10*time.Second); code != 2 {
			t.Errorf("%v: exit code %d, want 2\n%s", args, code, p.Log())
		}
		if !strings.Contains(p.Log(), "primproc") {
			t.Errorf("%v: no message: %s", args, p.Log())
		}
	}
}

// checkLazyFree checks that the daemon re-executed itself, in place (the PID it was
// started as now serves), with the runtime's lazy page release (daemon.LazyFree).
func checkLazyFree(t *testing.T, pid int) {
	t.Helper()
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Skipf("no /proc to read the environment from: %v", err)
	}
	if !slices.Contains(strings.Split(string(env), "\x00"), "GODEBUG=madvdontneed=0") {
		t.Errorf("primproc (pid %d) runs without GODEBUG=madvdontneed=0", pid)
	}
}
