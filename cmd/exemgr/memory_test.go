package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/colinkdb/colink/dbt3"
	"github.com/colinkdb/colink/internal/testbin"
)

// rssOf is a process's resident size in bytes, less the pages it has freed lazily
// (dbt3.ReadRSS).
func rssOf(t testing.TB, pid int) int64 {
	t.Helper()
	r, err := dbt3.ReadRSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	return r.Now
}

// idleMargin is how far above its idle size a daemon may stay once idle for two
// --pool-idle intervals after a query: the link's receive buffers (which age out on their
// own, in 30 s) and the runtime's bookkeeping.
const idleMargin = 32 << 20

// TestIdleMemoryReturns: after a query that makes both daemons hold hundreds of megabytes,
// and after a client that vanishes in the middle of such a result, primproc and exemgr,
// idle for twice --pool-idle, are back within idleMargin of their idle sizes.
func TestIdleMemoryReturns(t *testing.T) {
	needDaemons(t)
	dir := shared.tempDir(t)
	port := testbin.FreePort(t)
	tcp := fmt.Sprintf("tcp://127.0.0.1:%d", port)
	pm := shared.start(t, shared.bin(t, "./cmd/primproc"), "--data-dir", filepath.Join(dir, "pm"), "--listen", tcp,
		"--listen", "unix://"+filepath.Join(dir, "pm.sock"), "--row-group-rows", "512", "--segment-rows", "1024",
		"--threads", "2", "--cache-size", "256MiB", "--pool-idle", "1s")
	pm.WaitLog(t, `primproc: serving`, 30*time.Second)
	if err := loadTPCH(context.Background(), []string{tcp}, "0.01", 1024, "lineitem", "nation"); err != nil {
		t.Fatal(err)
	}
	em := shared.startExemgr(t, []string{tcp}, "unix", "--pool-idle", "1s")
	db := em.db(t, false)
	defer db.Close()
	ctx := context.Background()
	// Warm the cache with the columns the big queries read: the idle size includes it.
	if _, err := db.ExecContext(ctx, "select count(l_comment), count(l_orderkey) from lineitem"); err != nil {
		t.Fatal(err)
	}
	settle := func() { time.Sleep(2*time.Second + 500*time.Millisecond) }
	settle()
	pmIdle, emIdle := rssOf(t, pm.Cmd.Process.Pid), rssOf(t, em.Cmd.Process.Pid)
	t.Logf("idle: primproc %d MiB, exemgr %d MiB", pmIdle>>20, emIdle>>20)

	// 1.5 million rows sorted in exemgr, read to the end.
	const big = "select l_comment, n_name, l_orderkey from lineitem, nation order by 1, 2, 3"
	rows, err := db.QueryContext(ctx, big)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil || n != 60175*25 {
		t.Fatalf("%d rows, %v", n, err)
	}
	rows.Close()
	emPeak := rssOf(t, em.Cmd.Process.Pid)
	settle()
	pmAfter, emAfter := rssOf(t, pm.Cmd.Process.Pid), rssOf(t, em.Cmd.Process.Pid)
	t.Logf("after a finished query: primproc %d MiB, exemgr %d MiB (exemgr %d MiB at its end)", pmAfter>>20, emAfter>>20, emPeak>>20)
	if emPeak < emIdle+64<<20 {
		t.Fatalf("the query did not make exemgr hold memory (%d MiB at its end, %d idle): the test measures nothing", emPeak>>20, emIdle>>20)
	}
	if pmAfter > pmIdle+idleMargin || emAfter > emIdle+idleMargin {
		t.Errorf("after a finished query, idle for 2×--pool-idle: primproc %d MiB (idle %d), exemgr %d MiB (idle %d); margin %d MiB",
			pmAfter>>20, pmIdle>>20, emAfter>>20, emIdle>>20, idleMargin>>20)
	}

	// A client that vanishes mid-result: it reads a few rows and drops its connection
	// (go-sql-driver closes the socket when the query's context ends).
	qctx, cancel := context.WithCancel(ctx)
	rows, err = db.QueryContext(qctx, big)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000 && rows.Next(); i++ {
	}
	cancel()
	rows.Close()
	settle()
	settle() // the statement's cancellation reaches exemgr's operators, then two intervals
	pmGone, emGone := rssOf(t, pm.Cmd.Process.Pid), rssOf(t, em.Cmd.Process.Pid)
	t.Logf("after a vanished client: primproc %d MiB, exemgr %d MiB", pmGone>>20, emGone>>20)
	if pmGone > pmIdle+idleMargin || emGone > emIdle+idleMargin {
		t.Errorf("after a vanished client, idle for 2×--pool-idle: primproc %d MiB (idle %d), exemgr %d MiB (idle %d); margin %d MiB",
			pmGone>>20, pmIdle>>20, emGone>>20, emIdle>>20, idleMargin>>20)
	}
}
