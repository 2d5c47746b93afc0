package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colinkdb/colink/internal/testbin"
)

// startCrashing starts a primproc built with the test hooks (tag colink_testhooks) on dir
// at p's endpoints; it kills itself with SIGKILL at the crash point given ("" for never; see
// primproc/testhook.go).
func (h *harness) startCrashing(t *testing.T, p *primproc, dir, point string) *primproc {
	t.Helper()
	var env []string
	if point != "" {
		env = []string{"COLINK_TESTHOOK_CRASH=" + point}
	}
	bin := h.bin(t, "./cmd/primproc", "colink_testhooks")
	p = &primproc{tcp: p.tcp, unix: p.unix}
	p.Proc = h.startEnv(t, env, bin, "--data-dir", dir, "--listen", p.tcp, "--listen", p.unix, "--threads", "1", "--cache-size", "64MiB")
	p.WaitLog(t, `primproc: serving`, 30*time.Second)
	t.Cleanup(p.Kill)
	return p
}

// TestCommitOutcomeUnknown kills a primproc with SIGKILL right after it made a commit
// durable and before it answered: the statement fails with 1397 saying the outcome is
// unknown (not 1105, which says nothing was applied), and after the restart the write is
// there. Killed after a prepare, before any commit request, the statement fails plainly and
// the write is nowhere.
func TestCommitOutcomeUnknown(t *testing.T) {
	needDaemons(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// cluster starts n hooked primprocs (the first crashing at point), loads nation into
	// them, and an exemgr in front.
	cluster := func(t *testing.T, n int, point string) ([]*primproc, []string, *exemgrProc) {
		var pms []*primproc
		var dirs, urls []string
		for i := range n {
			name := fmt.Sprintf("crash-%s-pm%d", point, i)
			dir := filepath.Join(shared.tempDir(t), name)
			p := &primproc{tcp: fmt.Sprintf("tcp://127.0.0.1:%d", testbin.FreePort(t)), unix: "unix://" + filepath.Join(shared.tempDir(t), name+".sock")}
			pt := ""
			if i == 0 {
				pt = point
			}
			pms = append(pms, shared.startCrashing(t, p, dir, pt))
			dirs, urls = append(dirs, dir), append(urls, p.tcp)
		}
		if err := loadTPCH(ctx, urls, "0.01", 1024, "nation"); err != nil {
			t.Fatal(err)
		}
		em := shared.startExemgr(t, urls, "tcp")
		t.Cleanup(em.Kill)
		return pms, dirs, em
	}
	// restart starts the crashed primproc again, without a crash point.
	restart := func(t *testing.T, p *primproc, dir string) {
		if code := p.Wait(t, 10*time.Second); code != -1 {
			t.Fatalf("the primproc exited with %d, want death by SIGKILL:\n%s", code, p.Log())
		}
		if !strings.Contains(p.Log(), "test hook: killing this process") {
			t.Fatalf("the primproc did not die at its crash point:\n%s", p.Log())
		}
		shared.startCrashing(t, p, dir, "")
	}
	// count counts nation's rows matching where, waiting for exemgr to reconnect.
	count := func(t *testing.T, em *exemgrProc, where string) int {
		var n int
		var err error
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			if err = em.db(t, false).QueryRowContext(ctx, "select count(*) from nation where "+where).Scan(&n); err == nil {
				return n
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("count after the restart: %s\n%s", errorText(err), em.Log())
		return 0
	}

	t.Run("one primproc, DELETE killed after its commit", func(t *testing.T) {
		pms, dirs, em := cluster(t, 1, "write-committed")
		_, err := em.conn(t).ExecContext(ctx, "delete from nation where n_nationkey < 5")
		got := errorText(err)
		t.Log(got)
		if !strings.HasPrefix(got, "ERROR 1397 (XAE03): outcome unknown: the connection to primproc "+pms[0].tcp+" was lost during commit") ||
			!strings.Contains(got, "check before retrying") {
			t.Fatalf("DELETE with its primproc killed after the commit: %s, want ERROR 1397 saying the outcome is unknown", got)
		}
		restart(t, pms[0], dirs[0])
		if n := count(t, em, "true"); n != 20 {
			t.Fatalf("%d nations after the restart, want 20 (the delete committed)", n)
		}
	})

	t.Run("two primprocs, INSERT with its decider killed after the commit", func(t *testing.T) {
		pms, dirs, em := cluster(t, 2, "resolve-committed")
		_, err := em.conn(t).ExecContext(ctx, insertNations(100, 20))
		got := errorText(err)
		t.Log(got)
		if !strings.HasPrefix(got, "ERROR 1397 (XAE03): outcome unknown: the connection to primproc "+pms[0].tcp+" was lost during commit") {
			t.Fatalf("INSERT with its decider killed after the commit: %s, want ERROR 1397", got)
		}
		restart(t, pms[0], dirs[0])
		// The other primproc still holds its part prepared; the query's recovery asks the
		// decider, which committed.
		if n := count(t, em, "n_nationkey >= 100"); n != 20 {
			t.Fatalf("%d of the 20 inserted nations after the restart, want all", n)
		}
	})

	t.Run("two primprocs, INSERT with its decider killed after the prepare", func(t *testing.T) {
		pms, dirs, em := cluster(t, 2, "write-prepared")
		_, err := em.conn(t).ExecContext(ctx, insertNations(100, 20))
		got := errorText(err)
		t.Log(got)
		if !strings.HasPrefix(got, "ERROR 1105 ") {
			t.Fatalf("INSERT with its decider killed before any commit request: %s, want a plain ERROR 1105", got)
		}
		restart(t, pms[0], dirs[0])
		if n := count(t, em, "n_nationkey >= 100"); n != 0 {
			t.Fatalf("%d of the 20 nations inserted after the restart, want none", n)
		}
	})
}

// insertNations is an INSERT of n nations with keys from first on (they spread over any
// number of primprocs).
func insertNations(first, n int) string {
	var b strings.Builder
	b.WriteString("insert into nation values ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, 'NATION %d', 0, 'inserted')", first+i, first+i)
	}
	return b.String()
}
