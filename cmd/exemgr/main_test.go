package main

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/colinkdb/colink/internal/testbin"
)

// The colink_unix build tag changes only the compiled-in default transport: built without
// it, exemgr given a primproc's tcp URL connects over TCP; built with it, over the unix
// socket the primproc advertises in its hello.
func TestBuildTagSetsDefaultTransport(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs binaries")
	}
	bins := t.TempDir()
	pm := testbin.Build(t, bins, "./cmd/primproc")
	dir := testbin.TempDir(t)
	port := testbin.FreePort(t)
	p := testbin.Start(t, pm, "--listen", fmt.Sprintf("tcp://127.0.0.1:%d", port), "--listen", "unix://"+filepath.Join(dir, "pm.sock"),
		"--data-dir", filepath.Join(dir, "data"))
	p.WaitLog(t, `primproc: serving`, 10*time.Second)
	for _, tc := range []struct {
		tags []string
		want string
	}{
		{nil, "tcp"},
		{[]string{"colink_unix"}, "unix"},
	} {
		bin := testbin.Build(t, bins, "./cmd/exemgr", tc.tags...)
		em := testbin.Start(t, bin, "--primproc", fmt.Sprintf("tcp://127.0.0.1:%d", port))
		got := em.WaitLog(t, `exemgr: primproc up.* transport=(\w+)`, 10*time.Second)
		if got != tc.want {
			t.Errorf("tags %v: transport %s, want %s\n%s", tc.tags, got, tc.want, em.Log())
		}
		em.Cmd.Process.Signal(syscall.SIGTERM)
		if code := em.Wait(t, 10*time.Second); code != 0 {
			t.Errorf("tags %v: exit code %d after SIGTERM\n%s", tc.tags, code, em.Log())
		}
	}
}

func TestPrimprocDeathIsReported(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs binaries")
	}
	bins := t.TempDir()
	pm := testbin.Build(t, bins, "./cmd/primproc")
	em := testbin.Build(t, bins, "./cmd/exemgr")
	port := testbin.FreePort(t)
	p := testbin.Start(t, pm, "--listen", fmt.Sprintf("tcp://127.0.0.1:%d", port), "--data-dir", filepath.Join(t.TempDir(), "data"))
	p.WaitLog(t, `primproc: serving`, 10*time.Second)
	e := testbin.Start(t, em, "--primproc", fmt.Sprintf("tcp://127.0.0.1:%d", port), "--transport", "tcp")
	e.WaitLog(t, `exemgr: primproc up`, 10*time.Second)
	p.Cmd.Process.Kill()
	e.WaitLog(t, `exemgr: primproc down`, 2*time.Second)
	if code := (func() int { e.Cmd.Process.Signal(syscall.SIGINT); return e.Wait(t, 10*time.Second) })(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}
