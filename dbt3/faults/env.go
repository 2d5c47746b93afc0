package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/colinkdb/colink/dbt3"
	"github.com/colinkdb/colink/dbt3/cluster"
	"github.com/colinkdb/colink/link"
)

// Env is what a fault's Try works with: the running daemons, reached over one transport,
// the run's settings and the healthy answers to compare with.
type Env struct {
	// Transport is the kind of every local connection of the try: exemgr reaches the
	// primprocs over it, clients reach exemgr's MySQL port over it, and bad input goes to
	// the daemons' ports of that kind. shm has no port of its own: its rings are set up on
	// the unix socket, so over shm the clients and the bad input use the unix sockets.
	Transport string

	cfg   *Config
	cl    *cluster.Cluster
	stats []*link.Client // one per primproc, for their running fragments
	rng   *rand.Rand
	log   *slog.Logger
	ref   *reference
	write *writeState
	// idle is each daemon's resident size when idle, taken by a fault's Setup that
	// compares with it.
	idle map[string]int64
}

// reference holds what the healthy cluster answered, measured once before the faults.
type reference struct {
	check     string        // checkQuery's answer
	checkTime time.Duration // the slowest of its healthy runs
	long      string        // longQuery's answer
	view      string        // viewQuery's answer
}

// The statements the faults disturb and check with. Their answers are the healthy
// cluster's, taken before the first fault (the TPC-H answers themselves are checked by
// other tests).
const (
	// checkQuery touches every primproc (lineitem and orders are dealt over all of them),
	// joins and aggregates; it takes milliseconds at SF 0.01 and does not grow past a few
	// hundred at SF 1 (15,000 orders).
	checkQuery = "select l_returnflag, l_linestatus, count(*), sum(l_quantity), sum(o_totalprice) from lineitem, orders " +
		"where l_orderkey = o_orderkey and o_orderkey <= 60000 group by l_returnflag, l_linestatus order by 1, 2"
	// longQuery keeps the primprocs busy for seconds at any scale factor: a self-join of the
	// lineitems of some suppliers on a column with seven values counts some 320 million
	// pairs, in a join on the primprocs (the build side is broadcast). It selects by supplier,
	// not by order: l_suppkey <= K picks about 600·K rows at every scale factor (SF·6M rows
	// over SF·10,000 suppliers) spread over every segment, so every primproc has work, where a
	// range of the first orders lies in one primproc's first segment beyond SF 0.01 (the
	// others' zone maps pruned it at once, and the query never ran on every primproc).
	// K ≤ 100 keeps it valid from SF 0.01 (100 suppliers).
	longQuery = "select count(*) from lineitem a join lineitem b on a.l_linenumber = b.l_linenumber " +
		"where a.l_suppkey <= 50 and b.l_suppkey <= 100"
	// longAnswerQuery answers longQuery in milliseconds, another way: the pairs per
	// l_linenumber value, multiplied out.
	longAnswerQuery = "select sum(a.c * b.c) from " +
		"(select l_linenumber, count(*) c from lineitem where l_suppkey <= 50 group by l_linenumber) a join " +
		"(select l_linenumber, count(*) c from lineitem where l_suppkey <= 100 group by l_linenumber) b on a.l_linenumber = b.l_linenumber"
	// viewName is the view that must survive exemgr's kill -9 (exemgr keeps views in its
	// --data-dir).
	viewName  = "faults_view"
	viewQuery = "select * from " + viewName + " order by 1"
)

// mysql is exemgr's MySQL address for the try's transport: its TCP port for tcp, its unix
// socket for unix and shm.
func (e *Env) mysql() string { return e.cl.MySQLAddr(e.Transport) }

// answer is a result as text: rows of "|"-separated values.
func answer(r *dbt3.Result) string {
	var b strings.Builder
	for _, row := range r.Rows {
		b.WriteString(strings.Join(row, "|"))
		b.WriteByte('\n')
	}
	return b.String()
}

// query runs stmt on a new session, bounded by the hang timeout, and returns its answer and
// how long it took.
func (e *Env) query(ctx context.Context, stmt string) (string, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.HangTimeout)
	defer cancel()
	start := time.Now()
	c, err := dbt3.Dial(ctx, e.mysql(), dbt3.DefaultDatabase)
	if err != nil {
		return "", time.Since(start), err
	}
	defer c.Close()
	res, _, err := c.Exec(ctx, stmt)
	if err != nil {
		return "", time.Since(start), err
	}
	return answer(res), time.Since(start), nil
}

// exec runs a statement without a result set on a new session, bounded by the hang timeout.
func (e *Env) exec(ctx context.Context, stmt string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.HangTimeout)
	defer cancel()
	c, err := dbt3.Dial(ctx, e.mysql(), dbt3.DefaultDatabase)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	n, _, err := c.ExecCount(ctx, stmt)
	return n, err
}

// result is what a statement run in the background got, and when.
type result struct {
	answer string
	err    error
	at     time.Time
}

// start runs stmt on a new session in the background; its result arrives on the channel
// (bounded by the hang timeout). The session is open before start returns, so that the
// statement's clock starts with it.
func (e *Env) start(ctx context.Context, stmt string) (<-chan result, error) {
	dctx, cancel := context.WithTimeout(ctx, e.cfg.HangTimeout)
	c, err := dbt3.Dial(dctx, e.mysql(), dbt3.DefaultDatabase)
	cancel()
	if err != nil {
		return nil, err
	}
	out := make(chan result, 1)
	go func() {
		defer c.Close()
		qctx, cancel := context.WithTimeout(ctx, e.cfg.HangTimeout)
		defer cancel()
		res, _, err := c.Exec(qctx, stmt)
		r := result{err: err, at: time.Now()}
		if err == nil {
			r.answer = answer(res)
		}
		out <- r
	}()
	return out, nil
}

// isHang reports whether err is a statement's hard timeout.
func isHang(err error) bool { return errors.Is(err, context.DeadlineExceeded) }

// checkLinks runs the check query on a new session, bounded by the hang timeout, then SHOW
// QUERY STATS on that session, and returns the query's answer, how long it took, and the
// transport exemgr's link to each primproc was on for it, by the names SHOW QUERY STATS
// gives the primprocs (primproc0, … in the order of exemgr's --primproc flags, which is
// the cluster's, so they are the cluster's names too). An error of SHOW
// QUERY STATS is returned with the answer.
func (e *Env) checkLinks(ctx context.Context) (string, time.Duration, map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.HangTimeout)
	defer cancel()
	start := time.Now()
	c, err := dbt3.Dial(ctx, e.mysql(), dbt3.DefaultDatabase)
	if err != nil {
		return "", time.Since(start), nil, err
	}
	defer c.Close()
	res, _, err := c.Exec(ctx, checkQuery)
	took := time.Since(start)
	if err != nil {
		return "", took, nil, err
	}
	got := answer(res)
	st, _, err := c.Exec(ctx, "show query stats")
	if err != nil {
		return got, took, nil, fmt.Errorf("show query stats: %w", err)
	}
	proc, tr := slices.Index(st.Columns, "process"), slices.Index(st.Columns, "transport")
	if proc < 0 || tr < 0 {
		return got, took, nil, fmt.Errorf("show query stats: no process or transport column in %q", st.Columns)
	}
	links := map[string]string{}
	for _, row := range st.Rows {
		if row[proc] != "exemgr" {
			links[row[proc]] = row[tr]
		}
	}
	return got, took, links, nil
}

// wrongLinks describes the links of checkLinks not on the try's transport, "" if none
// is: exemgr may fall back from shm to the plain unix socket (with a warning) when setting
// up the rings fails, and a try over shm that ran over unix tested nothing of shm.
func (e *Env) wrongLinks(links map[string]string) string {
	var bad []string
	for i := range e.cl.Primprocs() {
		name := e.pmName(i)
		if got := links[name]; got != e.Transport {
			bad = append(bad, fmt.Sprintf("%s over %q", name, got))
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return fmt.Sprintf("exemgr reached %s, not over %s", strings.Join(bad, " and "), e.Transport)
}

// verify runs the check query and records a failure unless it answers right, with exemgr's
// links to every primproc on the try's transport; when says after what (for the message).
// It reports whether the answer was right.
func (e *Env) verify(ctx context.Context, t *Trial, when string) bool {
	got, took, links, err := e.checkLinks(ctx)
	switch {
	case err != nil && got == e.ref.check:
		t.fail(UnclearError, "%s: the check query answered right, but %s", when, oneLine(err.Error()))
		return true
	case err != nil && isHang(err):
		t.fail(Hang, "%s: the check query did not end within %v", when, e.cfg.HangTimeout)
	case err != nil:
		t.fail(UnclearError, "%s: the check query failed after %.2fs: %s", when, took.Seconds(), oneLine(err.Error()))
	case got != e.ref.check:
		t.fail(WrongAnswer, "%s: the check query answered %q, want %q", when, got, e.ref.check)
	default:
		if bad := e.wrongLinks(links); bad != "" {
			t.fail(UnclearError, "%s: %s", when, bad)
		}
		return true
	}
	return false
}

// waitRunning waits until the long query's fragments run on every primproc, so that what
// follows lands mid-query. It fails the try if they never do.
func (e *Env) waitRunning(ctx context.Context, t *Trial, res <-chan result) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case r := <-res:
			t.fail(UnclearError, "the long query ended before the fault (%v)", r.err)
			return false
		default:
		}
		all := true
		for i := range e.stats {
			if n, err := e.fragments(ctx, i); err != nil || n == 0 {
				all = false
				break
			}
		}
		if all {
			return true
		}
		if !sleep(ctx, 20*time.Millisecond) {
			return false
		}
	}
	t.fail(UnclearError, "the long query's fragments did not start on every primproc within 10s")
	return false
}

// fragments returns the fragments running on primproc i.
func (e *Env) fragments(ctx context.Context, i int) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := e.stats[i].Stats(ctx)
	if err != nil {
		return 0, err
	}
	return st.Methods[link.MethodFragment].Active, nil
}

// waitIdle waits up to timeout until none of the given primprocs runs a fragment, and
// returns how long that took; ok is false if they still do.
func (e *Env) waitIdle(ctx context.Context, primprocs []int, timeout time.Duration) (time.Duration, bool) {
	start := time.Now()
	for {
		busy := false
		for _, i := range primprocs {
			if n, err := e.fragments(ctx, i); err != nil || n > 0 {
				busy = true
				break
			}
		}
		if !busy {
			return time.Since(start), true
		}
		if time.Since(start) > timeout || !sleep(ctx, 20*time.Millisecond) {
			return time.Since(start), false
		}
	}
}

// others are the primprocs other than i.
func (e *Env) others(i int) []int {
	var out []int
	for j := range e.stats {
		if j != i {
			out = append(out, j)
		}
	}
	return out
}

// all are every primproc's positions.
func (e *Env) all() []int { return e.others(-1) }

// pmName is primproc i's name.
func (e *Env) pmName(i int) string { return e.cl.PrimprocName(i) }

// restartPrimproc waits for primproc i to have died (it was killed) and starts it again on
// the normal binary; a failure is the try's.
func (e *Env) restartPrimproc(ctx context.Context, t *Trial, i int, bin string, env []string) bool {
	name := e.pmName(i)
	if err := e.cl.WaitExit(name, 10*time.Second); err != nil {
		t.fail(Hang, "%v", err)
		return false
	}
	if err := e.cl.RestartPrimproc(ctx, i, bin, env); err != nil {
		t.fail(Died, "restart %s: %v", name, err)
		return false
	}
	return true
}

// awaitUp waits until a statement that touches every primproc succeeds, for exemgr to have
// found a restarted primproc (up to 15 s); a failure is the try's.
func (e *Env) awaitUp(ctx context.Context, t *Trial) bool {
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, _, err := e.query(ctx, "select count(*) from region")
		if err == nil {
			return true
		}
		if time.Now().After(deadline) || !sleep(ctx, 50*time.Millisecond) {
			t.fail(UnclearError, "exemgr does not answer a query 15s after a primproc's restart: %s", oneLine(err.Error()))
			return false
		}
	}
}

// kill kills a daemon with SIGKILL, waiting until it is gone.
func (e *Env) kill(t *Trial, name string) bool {
	if err := e.cl.Kill(name, 10*time.Second); err != nil {
		t.fail(Hang, "%v", err)
		return false
	}
	return true
}

// rss returns each running daemon's resident size in bytes.
func (e *Env) rss() map[string]int64 {
	out := map[string]int64{}
	for name, pid := range e.cl.PIDs(e.cl.Transport()) {
		if !e.cl.Running(name) {
			continue
		}
		if r, err := dbt3.ReadRSS(pid); err == nil {
			out[name] = r.Now
		}
	}
	return out
}

// rssOf returns one daemon's resident size and its peak since the last resetPeak.
func (e *Env) rssOf(name string) dbt3.RSS {
	r, _ := dbt3.ReadRSS(e.cl.PIDs(e.cl.Transport())[name])
	return r
}

// resetPeak restarts the kernel's count of the daemon's peak resident size.
func (e *Env) resetPeak(name string) { _ = dbt3.ResetPeakRSS(e.cl.PIDs(e.cl.Transport())[name]) }

// settle waits two --pool-idle intervals and a half second more: long enough for an idle
// daemon to have given its free memory back.
func (e *Env) settle(ctx context.Context) {
	sleep(ctx, 2*e.cfg.PoolIdle+500*time.Millisecond)
}

// logMark is a position in a daemon's log file.
type logMark struct {
	path string
	off  int64
}

// mark returns the end of the daemon's log so far.
func (e *Env) mark(name string) logMark {
	path, err := e.cl.LogPath(name)
	if err != nil {
		return logMark{}
	}
	st, err := os.Stat(path)
	if err != nil {
		return logMark{path: path}
	}
	return logMark{path: path, off: st.Size()}
}

// since returns the log written after the mark.
func (m logMark) since() string {
	f, err := os.Open(m.path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(m.off, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, 4<<20))
	return string(b)
}

// waitLog waits up to timeout for a line after the mark containing every one of parts, and
// returns it.
func (m logMark) waitLog(ctx context.Context, timeout time.Duration, parts ...string) (string, bool) {
	deadline := time.Now().Add(timeout)
	for {
		for _, line := range strings.Split(m.since(), "\n") {
			if containsAll(line, parts) {
				return line, true
			}
		}
		if time.Now().After(deadline) || !sleep(ctx, 20*time.Millisecond) {
			return "", false
		}
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// sleep waits d or until ctx is done, and reports whether it waited the whole d.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// jitter is a random duration in [lo, hi).
func (e *Env) jitter(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(e.rng.Int64N(int64(hi-lo)))
}

// signal sends sig to a daemon; a failure is the try's.
func (e *Env) signal(t *Trial, name string, sig syscall.Signal) bool {
	if err := e.cl.Signal(name, sig); err != nil {
		t.fail(UnclearError, "%v", err)
		return false
	}
	return true
}

// namesPrimproc reports whether an error message says which primproc failed: its name or
// URL, or at least the word.
func namesPrimproc(msg string) bool { return strings.Contains(msg, "primproc") }

// mib formats bytes as MiB.
func mib(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }
