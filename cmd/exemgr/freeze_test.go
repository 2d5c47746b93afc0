package main

import (
	"context"
	dsql "database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/colinkdb/colink/internal/testbin"
)

// TestPrimprocFreezes stops a real primproc with SIGSTOP and resumes it with SIGCONT, over
// and over, while an exemgr over TCP and one over the primproc's unix socket run, without
// pause, a long self-join and a short one whose answer is checked, in turn. Some resumes
// are too short for exemgr to reconnect, so the next stop comes in the middle of a
// reconnection. Every query must succeed (with the right answer) or fail with an error
// naming the primproc; none may wait on the stopped primproc for longer than the heartbeat
// timeout, one interval and a slack for a loaded machine, in one freeze; and after the last
// resume both exemgrs must be up and answer correctly.
//
// The default run is 3 short cycles with a 100ms/400ms heartbeat; COLINK_FAULTS=1 runs 20
// cycles about 3 s apart with the daemons' default heartbeat (250ms/1s), as issue 18
// measured.
func TestPrimprocFreezes(t *testing.T) {
	needDaemons(t)
	cycles, interval, timeout := 3, 100*time.Millisecond, 400*time.Millisecond
	if os.Getenv("COLINK_FAULTS") != "" {
		cycles, interval, timeout = 20, 250*time.Millisecond, time.Second
	}
	// The slack absorbs a loaded 2-core machine and still fails the old behaviour, in which
	// a failed statement's cleanup waited for a redial whose handshake hung for the 2 s
	// dial timeout.
	bound := timeout + interval + time.Second
	hb := []string{"--heartbeat-interval", interval.String(), "--heartbeat-timeout", timeout.String()}

	shared.bin(t, "./cmd/primproc") // built before the clock starts
	shared.bin(t, "./cmd/exemgr")
	setup := time.Now()
	dir := shared.tempDir(t)
	name := fmt.Sprintf("freeze-%d", testbin.FreePort(t))
	port := testbin.FreePort(t)
	tcpURL := fmt.Sprintf("tcp://127.0.0.1:%d", port)
	unixURL := "unix://" + filepath.Join(dir, name+".sock")
	// Small row groups, so that a cancelled fragment stops soon (see the harness).
	pm := testbin.Start(t, shared.bin(t, "./cmd/primproc"), append([]string{"--data-dir", filepath.Join(dir, name),
		"--listen", tcpURL, "--listen", unixURL, "--row-group-rows", "512", "--segment-rows", "1024",
		"--threads", "2", "--cache-size", "256MiB"}, hb...)...)
	pm.WaitLog(t, `primproc: serving`, 30*time.Second)
	t.Cleanup(func() { _ = pm.Cmd.Process.Signal(syscall.SIGCONT) }) // before Start's kill
	if err := loadTPCH(context.Background(), []string{tcpURL}, "0.01", 1024, "lineitem"); err != nil {
		t.Fatal(err)
	}
	type front struct {
		name string
		em   *exemgrProc
		db   *dsql.DB
	}
	var fronts []front
	for _, tr := range []string{"tcp", "unix"} {
		em := shared.startExemgr(t, []string{tcpURL}, tr, hb...)
		t.Cleanup(em.Kill)
		fronts = append(fronts, front{tr, em, em.db(t, false)})
	}

	// The answers to check against after the last resume.
	const check = "select count(*), sum(a.l_quantity) from lineitem a join lineitem b on a.l_orderkey = b.l_orderkey"
	answer := func(db *dsql.DB) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var n, q string
		err := db.QueryRowContext(ctx, check).Scan(&n, &q)
		return n + " " + q, err
	}
	want, err := answer(fronts[0].db)
	if err != nil {
		t.Fatalf("before the freezes: %s", errorText(err))
	}

	var (
		mu      sync.Mutex
		freezes []span // every stop: from, and to (zero while stopped)
	)
	frozenDuring := func(from, to time.Time) time.Duration {
		mu.Lock()
		defer mu.Unlock()
		var longest time.Duration
		for _, f := range freezes {
			longest = max(longest, f.overlap(from, to))
		}
		return longest
	}
	type result struct {
		front  string
		query  string
		waited time.Duration // the longest the query spent in one freeze
		err    error
	}
	var (
		results []result
		runners sync.WaitGroup
	)
	// Stopping cancels the queries still running, which are not counted.
	stopCtx, stop := context.WithCancel(context.Background())
	defer stop()
	for _, f := range fronts {
		runners.Add(1)
		go func() {
			defer runners.Done()
			db := f.db
			for i := 0; stopCtx.Err() == nil; i++ {
				// A deadline far beyond the bound, only so that a hang fails the test instead
				// of stopping it.
				ctx, cancel := context.WithTimeout(stopCtx, 60*time.Second)
				start := time.Now()
				var err error
				q := longQuery
				if i%2 == 0 { // a long query, then a short one, whose answer is checked
					var n int64
					err = db.QueryRowContext(ctx, longQuery).Scan(&n)
				} else {
					q = check
					var n, sum string
					if err = db.QueryRowContext(ctx, check).Scan(&n, &sum); err == nil && n+" "+sum != want {
						t.Errorf("%s: %s answered %q, want %q", f.name, check, n+" "+sum, want)
					}
				}
				end := time.Now()
				cancel()
				if stopCtx.Err() != nil {
					return
				}
				r := result{front: f.name, query: q, waited: frozenDuring(start, end), err: err}
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
				if err != nil {
					time.Sleep(20 * time.Millisecond)
				}
			}
		}()
	}

	rng := rand.New(rand.NewPCG(18, 2))
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo))) }
	scaled := func(f float64) time.Duration { return time.Duration(f * float64(timeout)) }
	t.Logf("set up in %v", time.Since(setup).Round(time.Millisecond))
	time.Sleep(scaled(0.5)) // the queries are running
	for i := range cycles {
		if err := pm.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		freezes = append(freezes, span{from: time.Now()})
		mu.Unlock()
		// Stopped for longer than the bound: a wait the bound does not end shows.
		time.Sleep(bound + between(300*time.Millisecond, 750*time.Millisecond))
		if err := pm.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		freezes[len(freezes)-1].to = time.Now()
		mu.Unlock()
		switch {
		case i == cycles-1: // the wait below follows
		case i%3 == 1:
			time.Sleep(between(scaled(0.05), scaled(0.4))) // the next stop lands in a reconnection
		default:
			time.Sleep(between(scaled(0.5), scaled(1.5)))
		}
	}
	// The queries running now go on, resumed or reconnected, until the bound has passed.
	time.Sleep(bound)
	stop()
	done := make(chan struct{})
	go func() { runners.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("a query does not end 30s after its cancellation\n%s\n%s", fronts[0].em.Log(), fronts[1].em.Log())
	}

	mu.Lock()
	var slowest time.Duration
	nfail, nshort := 0, 0
	for _, r := range results {
		if r.query == check && r.err == nil {
			nshort++
		}
		slowest = max(slowest, r.waited)
		if r.err != nil {
			nfail++
			if got := errorText(r.err); !strings.Contains(got, "primproc") {
				t.Errorf("%s: a query failed with %s, want an error naming the primproc", r.front, got)
			}
		}
		if r.waited > bound {
			t.Errorf("%s: %q waited %v in one freeze (bound %v) and ended with %s", r.front, r.query, r.waited.Round(time.Millisecond), bound, errorText(r.err))
		}
	}
	t.Logf("%d freezes in %v: %d queries, %d failed, %d short ones answered right; the longest a query waited in one freeze: %v (bound %v)",
		cycles, time.Since(setup).Round(time.Millisecond), len(results), nfail, nshort, slowest.Round(time.Millisecond), bound)
	mu.Unlock()

	// Both exemgrs are up and answer correctly once they have reconnected.
	for _, f := range fronts {
		var got string
		var err error
		if !waitFor(15*time.Second, func() bool { got, err = answer(f.db); return err == nil }) {
			t.Fatalf("%s: after the last resume: %s\n%s", f.name, errorText(err), f.em.Log())
		}
		if got != want {
			t.Errorf("%s: after the last resume %q, want %q", f.name, got, want)
		}
		select {
		case <-f.em.Done():
			t.Errorf("%s: exemgr exited\n%s", f.name, f.em.Log())
		default:
		}
	}
}

// span is a stretch of time; a zero to is open.
type span struct{ from, to time.Time }

// overlap is how long s and [from, to] have in common.
func (s span) overlap(from, to time.Time) time.Duration {
	if !s.to.IsZero() && s.to.Before(to) {
		to = s.to
	}
	if s.from.After(from) {
		from = s.from
	}
	return max(0, to.Sub(from))
}

// TestFirstStatementAfterFreeze: an exemgr stopped for longer than the heartbeat timeout
// finds, once resumed, that its primproc has dropped its connections; the first statement
// it answers must not fail on them. Its first call to the primproc (the statement's stats)
// went out on a connection the primproc had closed (EPIPE: "link connection closed: write:
// io: read/write on closed pipe", 1 freeze in 40 in the fault suite) and failed the
// statement, though a redial would have served it.
func TestFirstStatementAfterFreeze(t *testing.T) {
	needDaemons(t)
	// A timeout of 2 s, not the 400 ms the other freeze tests use: the redial after each
	// resume must finish its handshake within it, and with the whole suite running on 2
	// cores a primproc once took over a second to answer a hello.
	hb := []string{"--heartbeat-interval", "250ms", "--heartbeat-timeout", "2s"}
	dir := shared.tempDir(t)
	port := testbin.FreePort(t)
	url := fmt.Sprintf("tcp://127.0.0.1:%d", port)
	pm := testbin.Start(t, shared.bin(t, "./cmd/primproc"), append([]string{"--data-dir", filepath.Join(dir, "first-after-freeze"),
		"--listen", url, "--threads", "1", "--cache-size", "64MiB"}, hb...)...)
	pm.WaitLog(t, `primproc: serving`, 30*time.Second)
	if err := loadTPCH(context.Background(), []string{url}, "0.01", 1024, "region"); err != nil {
		t.Fatal(err)
	}
	em := shared.startExemgr(t, []string{url}, "tcp", hb...)
	t.Cleanup(func() { _ = em.Cmd.Process.Signal(syscall.SIGCONT); em.Kill() })
	conn := em.conn(t)
	for i := range 6 {
		if err := em.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		// The statement waits in the stopped exemgr's socket, so that on the resume it
		// runs at once, beside the news of the dropped connections.
		done := make(chan error, 1)
		var n int
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			done <- conn.QueryRowContext(ctx, "select count(*) from region").Scan(&n)
		}()
		time.Sleep(3 * time.Second) // the primproc drops the silent exemgr after 2s
		if err := em.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil || n != 5 {
			t.Fatalf("freeze %d: the first statement after the resume: %d, %s\n%s", i, n, errorText(err), em.Log())
		}
	}
}
