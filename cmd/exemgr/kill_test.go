package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colinkdb/colink/internal/testbin"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
)

// longQuery keeps both primprocs busy for seconds at SF 0.01: a self-join of lineitem on a
// column with seven values counts some 650 million pairs.
const longQuery = "select count(*) from lineitem a join lineitem b on a.l_linenumber = b.l_linenumber"

// TestKillCancelsPrimprocWork checks that KILL QUERY and a client that disconnects stop the
// statement's fragments on the primprocs, not only in exemgr: the primprocs' running
// fragments drop to zero and their CPU use stops, and the session (for KILL QUERY) goes on.
func TestKillCancelsPrimprocWork(t *testing.T) {
	needDaemons(t)
	c := shared.cluster(t, "two-primprocs", 2, "0.01")
	em := shared.exemgr(t, c, "unix")
	var pms link.Cluster
	for _, p := range c.primprocs {
		pc, err := link.Dial(p.tcp, ipc.ClientConfig{Transport: ipc.TransportTCP, Name: "kill test", Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pc.Close() })
		pms = append(pms, pc)
	}
	// busy returns the fragments running on the primprocs and their total CPU so far.
	busy := func() (int64, time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		st, err := pms.Stats(ctx)
		if err != nil {
			t.Fatalf("primproc stats: %v", err)
		}
		var active int64
		var cpu time.Duration
		for _, s := range st {
			active += s.Methods["fragment"].Active
			cpu += s.Usage().CPU()
		}
		return active, cpu
	}
	// stopped checks that the primprocs have stopped working on the killed statement.
	stopped := func(t *testing.T) {
		t.Helper()
		if !waitFor(3*time.Second, func() bool { a, _ := busy(); return a == 0 }) {
			a, _ := busy()
			t.Fatalf("%d fragments still run on the primprocs 3s after the cancellation", a)
		}
		_, cpu0 := busy()
		time.Sleep(500 * time.Millisecond)
		if _, cpu1 := busy(); cpu1-cpu0 > 250*time.Millisecond {
			t.Errorf("the primprocs used %v of CPU in the 500ms after their fragments ended", cpu1-cpu0)
		}
	}
	started := func(t *testing.T, done <-chan error) {
		t.Helper()
		ok := waitFor(10*time.Second, func() bool {
			select {
			case err := <-done:
				t.Fatalf("the long query ended before it could be cancelled: %v", err)
			default:
			}
			a, _ := busy()
			return a > 0
		})
		if !ok {
			t.Fatal("the long query never reached the primprocs")
		}
		time.Sleep(200 * time.Millisecond)
	}

	t.Run("kill query", func(t *testing.T) {
		victim := em.conn(t)
		ctx := context.Background()
		var id int64
		if err := victim.QueryRowContext(ctx, "select connection_id()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			var n int64
			done <- victim.QueryRowContext(ctx, longQuery).Scan(&n)
		}()
		started(t, done)
		killer := em.conn(t)
		if _, err := killer.ExecContext(ctx, "kill query "+strconv.FormatInt(id, 10)); err != nil {
			t.Fatalf("KILL QUERY: %s", errorText(err))
		}
		select {
		case err := <-done:
			if got := errorText(err); err == nil || !strings.HasPrefix(got, "ERROR 1317 ") {
				t.Errorf("the killed query returned %v, want ERROR 1317", got)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the killed query did not return within 5s")
		}
		t.Logf("killed after %v", time.Since(start).Round(time.Millisecond))
		stopped(t)
		var n int
		if err := victim.QueryRowContext(ctx, "select count(*) from region").Scan(&n); err != nil || n != 5 {
			t.Fatalf("the session after KILL QUERY: %d, %v", n, err)
		}
	})

	t.Run("client disconnects", func(t *testing.T) {
		conn := em.conn(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			var n int64
			done <- conn.QueryRowContext(ctx, longQuery).Scan(&n)
		}()
		started(t, done)
		cancel() // go-sql-driver closes the connection of a cancelled query
		<-done
		stopped(t)
	})
}

// TestPrimprocDeathFailsQueryAtOnce: with two primprocs running a query's fragment, the
// kill -9 of one fails the query within a second, naming it, and the other stops its share.
// exemgr had waited for the survivor to finish its share of the fragment (as long as the
// query had left to run, 2.6 to 7.8 s in the fault suite) before it answered the error: the
// merge of the primprocs' streams cancelled its own context, which the survivor's stream,
// waiting under the statement's, did not see.
func TestPrimprocDeathFailsQueryAtOnce(t *testing.T) {
	needDaemons(t)
	dir := shared.tempDir(t)
	var pms []*primproc
	var urls []string
	for i := range 2 {
		name := fmt.Sprintf("death-pm%d", i)
		p := shared.startPrimproc(t, name, filepath.Join(dir, name), "0.01")
		t.Cleanup(p.Kill)
		pms, urls = append(pms, p), append(urls, p.tcp)
	}
	ctx := context.Background()
	if err := loadTPCH(ctx, urls, "0.01", 1024, "lineitem"); err != nil {
		t.Fatal(err)
	}
	survivor, err := link.Dial(pms[1].tcp, ipc.ClientConfig{Transport: ipc.TransportTCP, Name: "death test", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer survivor.Close()
	running := func() int64 {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		st, err := survivor.Stats(sctx)
		if err != nil {
			t.Fatalf("the surviving primproc's stats: %v", err)
		}
		return st.Methods[link.MethodFragment].Active
	}
	em := shared.startExemgr(t, urls, "tcp")
	t.Cleanup(em.Kill)
	conn := em.conn(t)
	done := make(chan error, 1)
	go func() {
		var n int64
		done <- conn.QueryRowContext(ctx, longQuery).Scan(&n)
	}()
	if !waitFor(10*time.Second, func() bool { return running() > 0 }) {
		t.Fatal("the long query never reached the primprocs")
	}
	time.Sleep(300 * time.Millisecond) // well into the join
	pms[0].Kill()
	killed := time.Now()
	select {
	case err := <-done:
		took := time.Since(killed)
		t.Logf("failed %v after the kill: %s", took.Round(time.Millisecond), errorText(err))
		if got := errorText(err); err == nil || !strings.Contains(got, pms[0].tcp) {
			t.Errorf("the query returned %s, want an error naming %s", got, pms[0].tcp)
		}
		if took > time.Second {
			t.Errorf("the query failed %v after its primproc's kill -9, want within 1s", took.Round(time.Millisecond))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the query did not end within 30s of its primproc's kill -9")
	}
	if !waitFor(3*time.Second, func() bool { return running() == 0 }) {
		t.Errorf("the surviving primproc still runs %d fragments 3s after the error", running())
	}
}

// TestPrimprocKill9OverShm: the kill -9 of a primproc whose query stream is open over
// shared memory fails the query within 2 s, naming the primproc; exemgr stays up; and once
// the primproc is back on the same endpoints, the next query is answered correctly, over
// shared memory again. Two kills by default; COLINK_FAULTS=1 makes them 20.
func TestPrimprocKill9OverShm(t *testing.T) {
	needDaemons(t)
	tries := 2
	if os.Getenv("COLINK_FAULTS") != "" {
		tries = 20
	}
	dir := shared.tempDir(t)
	port := testbin.FreePort(t)
	name := fmt.Sprintf("shmkill-%d", port)
	tcpURL := fmt.Sprintf("tcp://127.0.0.1:%d", port)
	unixURL := "unix://" + filepath.Join(dir, name+".sock")
	startPM := func() *testbin.Proc {
		p := shared.start(t, shared.bin(t, "./cmd/primproc"), "--data-dir", filepath.Join(dir, name),
			"--listen", tcpURL, "--listen", unixURL, "--row-group-rows", "512", "--segment-rows", "1024",
			"--threads", "2", "--cache-size", "256MiB", "--shm-size", "16MiB")
		p.WaitLog(t, `primproc: serving`, 30*time.Second)
		return p
	}
	pm := startPM()
	ctx := context.Background()
	if err := loadTPCH(ctx, []string{tcpURL}, "0.01", 1024, "lineitem"); err != nil {
		t.Fatal(err)
	}
	watch, err := link.Dial(tcpURL, ipc.ClientConfig{Transport: ipc.TransportTCP, Name: "shm kill test", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	running := func() int64 {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		st, err := watch.Stats(sctx)
		if err != nil {
			return 0
		}
		return st.Methods[link.MethodFragment].Active
	}
	em := shared.startExemgr(t, []string{tcpURL}, "shm", "--shm-size", "16MiB")
	t.Cleanup(em.Kill)
	// Both memory plans hold the segments: exemgr's two connections of two 16 MiB segments,
	// primproc's default bound of eight such connections.
	if !strings.Contains(em.Log(), "shm segments 64.0 MiB off-heap") {
		t.Errorf("exemgr's memory plan lacks its segments:\n%s", em.Log())
	}
	if !strings.Contains(pm.Log(), "shm segments 256.0 MiB off-heap") {
		t.Errorf("primproc's memory plan lacks its segments:\n%s", pm.Log())
	}
	conn := em.conn(t)
	const check = "select count(*), sum(l_quantity) from lineitem"
	answer := func() (string, error) {
		var n, q string
		err := conn.QueryRowContext(ctx, check).Scan(&n, &q)
		return n + " " + q, err
	}
	want, err := answer()
	if err != nil {
		t.Fatalf("before the kills: %s", errorText(err))
	}
	checkTransport(t, conn, "shm")
	for try := range tries {
		done := make(chan error, 1)
		go func() {
			var n int64
			done <- conn.QueryRowContext(ctx, longQuery).Scan(&n)
		}()
		if !waitFor(10*time.Second, func() bool { return running() > 0 }) {
			t.Fatalf("try %d: the long query never reached the primproc", try)
		}
		time.Sleep(200 * time.Millisecond)
		pm.Kill()
		killed := time.Now()
		select {
		case err := <-done:
			took := time.Since(killed)
			if got := errorText(err); err == nil || !strings.Contains(got, tcpURL) {
				t.Errorf("try %d: the query returned %s, want an error naming %s", try, got, tcpURL)
			}
			if took > 2*time.Second {
				t.Errorf("try %d: the query failed %v after the kill -9, want within 2s", try, took.Round(time.Millisecond))
			}
			if try == 0 {
				t.Logf("failed %v after the kill: %s", took.Round(time.Millisecond), errorText(err))
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("try %d: the query did not end within 30s of its primproc's kill -9", try)
		}
		var comment string
		if _, want := shared.serverVersion(t); conn.QueryRowContext(ctx, "select @@version_comment").Scan(&comment) != nil || comment != want {
			t.Fatalf("try %d: exemgr itself: %q", try, comment)
		}
		pm = startPM()
		var got string
		if !waitFor(10*time.Second, func() bool { got, err = answer(); return err == nil }) {
			t.Fatalf("try %d: after the restart: %s", try, errorText(err))
		}
		if got != want {
			t.Fatalf("try %d: after the restart %q, want %q", try, got, want)
		}
		checkTransport(t, conn, "shm")
	}
}
