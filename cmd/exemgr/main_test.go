package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colinkdb/colink/internal/testbin"
)

// The colink_unix and colink_shm build tags change only the compiled-in default transport:
// built without them, exemgr given a primproc's tcp URL connects over TCP; with colink_unix,
// over the unix socket the primproc advertises in its hello; with colink_shm, over that
// socket with shared memory.
func TestBuildTagSetsDefaultTransport(t *testing.T) {
	needDaemons(t)
	dir := testbin.TempDir(t)
	port := testbin.FreePort(t)
	p := shared.start(t, shared.bin(t, "./cmd/primproc"), "--data-dir", filepath.Join(dir, "pm"),
		"--listen", fmt.Sprintf("tcp://127.0.0.1:%d", port), "--listen", "unix://"+filepath.Join(dir, "pm.sock"))
	p.WaitLog(t, `primproc: serving`, 10*time.Second)
	for _, tc := range []struct {
		tags []string
		want string
	}{
		{nil, "tcp"},
		{[]string{"colink_unix"}, "unix"},
		{[]string{"colink_shm"}, "shm"},
	} {
		bin := shared.bin(t, "./cmd/exemgr", tc.tags...)
		em := shared.start(t, bin, "--primproc", fmt.Sprintf("tcp://127.0.0.1:%d", port),
			"--mysql-listen", fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t)))
		got := em.WaitLog(t, `exemgr: primproc up.* transport=(\w+)`, 10*time.Second)
		if got != tc.want {
			t.Errorf("tags %v: transport %s, want %s\n%s", tc.tags, got, tc.want, em.Log())
		}
		if code := em.Terminate(t, 10*time.Second); code != 0 {
			t.Errorf("tags %v: exit code %d after SIGTERM\n%s", tc.tags, code, em.Log())
		}
	}
}

// TestPrimprocDown checks that exemgr sees tables loaded while it runs; that a statement
// fails fast, with an error naming the primproc, when a primproc is down; that exemgr stays
// up meanwhile; and that statements work again once the primproc is back.
func TestPrimprocDown(t *testing.T) {
	needDaemons(t)
	dir := testbin.TempDir(t)
	port := testbin.FreePort(t)
	url := fmt.Sprintf("tcp://127.0.0.1:%d", port)
	startPM := func() *testbin.Proc {
		p := shared.start(t, shared.bin(t, "./cmd/primproc"), "--data-dir", filepath.Join(dir, "pm"), "--listen", url)
		p.WaitLog(t, `primproc: serving`, 10*time.Second)
		return p
	}
	pm := startPM()
	em := shared.startExemgr(t, []string{url}, "tcp")
	conn := em.conn(t)
	ctx := context.Background()
	if _, err := conn.ExecContext(ctx, "show tables"); err != nil {
		t.Fatalf("with the primproc up: %s", errorText(err))
	}
	// A load while exemgr runs changes the primproc's catalog version; the next statement
	// sees the new tables.
	if err := loadTPCH(ctx, []string{url}, "0.01", 1024, "nation", "region"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRowContext(ctx, "select count(*) from nation, region where n_regionkey = r_regionkey").Scan(&n); err != nil || n != 25 {
		t.Fatalf("after a load: %d, %v", n, err)
	}
	pm.Kill()
	em.WaitLog(t, `exemgr: primproc down`, 5*time.Second)
	start := time.Now()
	_, err := conn.ExecContext(ctx, "show tables")
	took := time.Since(start)
	if got := errorText(err); err == nil || !strings.Contains(got, url) || !strings.Contains(got, "down") {
		t.Errorf("with the primproc down: %v, want an error naming %s", got, url)
	}
	t.Logf("with the primproc down, after %v: %s", took.Round(time.Millisecond), errorText(err))
	if took > 3*time.Second {
		t.Errorf("the failure took %v", took)
	}
	var comment string
	if _, want := shared.serverVersion(t); conn.QueryRowContext(ctx, "select @@version_comment").Scan(&comment) != nil || comment != want {
		t.Fatalf("exemgr itself: %q, %v", comment, err)
	}
	startPM()
	em.WaitLog(t, `(?s)primproc down.*exemgr: primproc up`, 10*time.Second)
	if !waitFor(5*time.Second, func() bool { _, err := conn.ExecContext(ctx, "show tables"); return err == nil }) {
		_, err := conn.ExecContext(ctx, "show tables")
		t.Fatalf("with the primproc back: %s", errorText(err))
	}
}

// TestShutdownDuringQuery checks a clean shutdown: SIGTERM while a query runs cancels it,
// closes the sessions and exits 0.
func TestShutdownDuringQuery(t *testing.T) {
	needDaemons(t)
	c := shared.cluster(t, "one-primproc", 1, "0.01")
	for _, tc := range []struct {
		name, grace string
		finishes    bool // the statement running at SIGTERM finishes within the grace
	}{
		{"grace", "30s", true},
		{"no grace", "0s", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			em := shared.startExemgr(t, c.tcpURLs(), "tcp", "--shutdown-timeout", tc.grace)
			conn := em.conn(t)
			done := make(chan error, 1)
			go func() {
				var n int64
				done <- conn.QueryRowContext(context.Background(), longQuery).Scan(&n)
			}()
			time.Sleep(300 * time.Millisecond)
			em.Cmd.Process.Signal(syscall.SIGTERM)
			select {
			case err := <-done:
				switch {
				case tc.finishes && err != nil:
					t.Errorf("the statement running at SIGTERM failed within the grace: %s", errorText(err))
				case !tc.finishes && err == nil:
					t.Error("the query survived the shutdown")
				case !tc.finishes && !strings.Contains(errorText(err), "1053"):
					t.Errorf("the shutdown ended the query with %s, want error 1053", errorText(err))
				}
			case <-time.After(25 * time.Second):
				t.Fatal("the query did not end within 25s of SIGTERM")
			}
			if code := em.Wait(t, 10*time.Second); code != 0 {
				t.Errorf("exit code %d after SIGTERM\n%s", code, em.Log())
			}
		})
	}
}

// TestUsersFileMode: exemgr refuses a users file that group or others may read, as primproc
// refuses such a token file: exit 2, naming the file and its mode. The same file at 0600
// starts it.
func TestUsersFileMode(t *testing.T) {
	needDaemons(t)
	dir := testbin.TempDir(t)
	path := filepath.Join(dir, "users")
	if err := os.WriteFile(path, []byte("alice:s3cret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil { // whatever the umask made of it
		t.Fatal(err)
	}
	bin := shared.bin(t, "./cmd/exemgr")
	args := []string{"--users-file", path, "--primproc", fmt.Sprintf("tcp://127.0.0.1:%d", testbin.FreePort(t)),
		"--mysql-listen", fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t))}
	em := testbin.Start(t, bin, args...)
	if code := em.Wait(t, 10*time.Second); code != 2 {
		t.Fatalf("exemgr with a 0644 users file: exit %d, want 2\n%s", code, em.Log())
	}
	if log := em.Log(); !strings.Contains(log, path) || !strings.Contains(log, "-rw-r--r--") {
		t.Errorf("the error does not name the file and its mode:\n%s", log)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	em = testbin.Start(t, bin, args...)
	em.WaitLog(t, `exemgr: serving`, 10*time.Second)
	if code := em.Terminate(t, 10*time.Second); code != 0 {
		t.Errorf("exit %d after SIGTERM\n%s", code, em.Log())
	}
}
