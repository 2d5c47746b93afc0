package faults

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// idleConnBytes bounds what one idle, logged-in MySQL session may cost exemgr in resident
// memory (a goroutine, its buffers and the session's state).
const idleConnBytes = 64 << 10

// slowRSSBound bounds how much exemgr may grow while one client stalls a result of millions
// of rows: the result streams under flow control, so only what is in flight is held.
const slowRSSBound = 128 << 20

// bigQuery is a result of 1.5 million rows per 0.01 of scale factor that exemgr streams
// from the primprocs without holding it (no ORDER BY).
const bigQuery = "select l_comment, l_orderkey, l_partkey from lineitem, nation"

// promptBound is how long a check query may take while a fault goes on elsewhere: three
// times its healthy time, plus the run's slack.
func (e *Env) promptBound() time.Duration { return 3*e.ref.checkTime + e.cfg.Slack }

// idleConnections: a thousand idle sessions.
func idleConnections(cfg *Config) Fault {
	n := cfg.IdleConnections
	return Fault{
		Name:    "idle-connections",
		Summary: fmt.Sprintf("%d clients log in over the transport's MySQL port and stay idle; one more runs the check query; then they all hang up", n),
		Criterion: fmt.Sprintf("every login succeeds; the check query answers right within 3× its healthy time + %v; a sample of the idle sessions answers COM_PING; "+
			"exemgr's resident size with them is within %d KiB per session + %s of its size before, and two --pool-idle intervals after they hang up within %s of it "+
			"(exemgr runs with --mysql-max-connections %d)", cfg.Slack, idleConnBytes>>10, mib(idleMargin), mib(idleMargin), cfg.maxConnections()),
		SettlesMemory: true,
		Try: func(ctx context.Context, e *Env, t *Trial) {
			if t.Try == 1 {
				e.settle(ctx) // later tries begin where the last settled
			}
			before := e.rssOf("exemgr").Now
			conns := make([]*rawMySQL, n)
			var (
				mu       sync.Mutex
				failed   int
				firstErr error
				wg       sync.WaitGroup
			)
			defer func() {
				for _, c := range conns {
					if c != nil {
						c.Close()
					}
				}
			}()
			start := time.Now()
			work := make(chan int)
			lctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			for range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := range work {
						c, err := loginMySQL(lctx, e.mysql(), "tpch", 0)
						mu.Lock()
						if err != nil {
							failed++
							if firstErr == nil {
								firstErr = err
							}
						} else {
							conns[k] = c
						}
						mu.Unlock()
					}
				}()
			}
			for k := range n {
				work <- k
			}
			close(work)
			wg.Wait()
			cancel()
			t.note("%d logins in %.2fs", n-failed, time.Since(start).Seconds())
			if failed > 0 {
				t.fail(UnclearError, "%d of %d logins failed; the first: %v", failed, n, firstErr)
			}
			with := e.rssOf("exemgr").Now
			got, took, err := e.query(ctx, checkQuery)
			switch {
			case err != nil && isHang(err):
				t.fail(Hang, "the check query did not end within %v", e.cfg.HangTimeout)
			case err != nil:
				t.errorAt(err, took, false)
				t.fail(UnclearError, "the check query failed beside %d idle sessions: %s", n, oneLine(err.Error()))
			case got != e.ref.check:
				t.fail(WrongAnswer, "the check query answered %q, want %q", got, e.ref.check)
			default:
				t.set(Right)
				t.Seconds = took.Seconds()
				if took > e.promptBound() {
					t.fail(UnclearError, "the check query took %.2fs beside %d idle sessions (bound %v)", took.Seconds(), n, e.promptBound())
				}
			}
			pinged := 0
			for k := 0; k < n; k += max(1, n/10) {
				c := conns[k]
				if c == nil {
					continue
				}
				pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				c.seq = 0
				err := c.writePacket([]byte{0x0e}) // COM_PING
				if err == nil {
					err = c.readReply(pctx)
				}
				cancel()
				if err != nil {
					t.fail(UnclearError, "idle session %d does not answer COM_PING: %v", k, err)
					break
				}
				pinged++
			}
			t.note("exemgr %s before, %s with %d idle sessions (%d of them pinged)", mib(before), mib(with), n-failed, pinged)
			if limit := before + int64(n)*idleConnBytes + idleMargin; with > limit {
				t.fail(UnclearError, "exemgr holds %s with %d idle sessions, over %s", mib(with), n, mib(limit))
			}
			for k, c := range conns {
				if c != nil {
					c.Close()
					conns[k] = nil
				}
			}
			e.settle(ctx)
			if after := e.rssOf("exemgr").Now; after > before+idleMargin {
				t.fail(UnclearError, "exemgr holds %s two --pool-idle intervals after the sessions ended, %s before", mib(after), mib(before))
			} else {
				t.note("exemgr %s after", mib(after))
			}
		},
	}
}

// slowConsumer: a client that sends a large query and never reads.
func slowConsumer(cfg *Config) Fault {
	return Fault{
		Name: "slow-consumer",
		Summary: fmt.Sprintf("a client sends %q (1.5 million rows per 0.01 of SF) over the transport's MySQL port with a 4 KiB receive buffer and never reads; "+
			"two others run the check query meanwhile, again and again (exemgr runs with --net-write-timeout %v)", bigQuery, cfg.NetWriteTimeout),
		Criterion: fmt.Sprintf("exemgr drops the stalled client (its log says the write timed out, SHOW PROCESSLIST no longer lists it) within --net-write-timeout + %v of the query; "+
			"the primprocs stop its fragments; every other query meanwhile answers right within 3× its healthy time + %v; exemgr's peak resident size stays within %s of its size before, "+
			"and two --pool-idle intervals after, within %s", time.Second+cfg.Slack, cfg.Slack, mib(slowRSSBound), mib(idleMargin)),
		SettlesMemory: true,
		Try: func(ctx context.Context, e *Env, t *Trial) {
			before := e.rssOf("exemgr").Now
			e.resetPeak("exemgr")
			mark := e.mark("exemgr")
			c, err := loginMySQL(ctx, e.mysql(), "tpch", 4096)
			if err != nil {
				t.fail(UnclearError, "log in: %v", err)
				return
			}
			defer c.Close()
			if err := c.sendQuery(bigQuery); err != nil {
				t.fail(UnclearError, "send the query: %v", err)
				return
			}
			sent := time.Now()
			// The others query until the stalled client is dropped, and a little longer.
			octx, stopOthers := context.WithCancel(ctx)
			defer stopOthers()
			type answered struct {
				took time.Duration
				err  error
				ok   bool
			}
			var (
				mu      sync.Mutex
				answers []answered
				wg      sync.WaitGroup
			)
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for octx.Err() == nil {
						got, took, err := e.query(octx, checkQuery)
						if octx.Err() != nil {
							return
						}
						mu.Lock()
						answers = append(answers, answered{took, err, err == nil && got == e.ref.check})
						mu.Unlock()
					}
				}()
			}
			bound := e.cfg.NetWriteTimeout + time.Second + e.cfg.Slack
			line, dropped := mark.waitLog(ctx, bound, "client write timed out: connection closed", "id="+strconv.FormatUint(uint64(c.ID), 10)+" ")
			took := time.Since(sent)
			if dropped {
				t.errorAt(fmt.Errorf("%s", logMessage(line)), took, true)
			} else {
				t.fail(Hang, "exemgr had not dropped the stalled client %v after its query (no 'client write timed out' line for id %d)", bound, c.ID)
			}
			sleep(ctx, 500*time.Millisecond)
			stopOthers()
			wg.Wait()
			if dropped {
				if listed, err := e.processListed(ctx, c.ID); err != nil {
					t.fail(UnclearError, "SHOW PROCESSLIST: %s", oneLine(err.Error()))
				} else if listed {
					t.fail(UnclearError, "SHOW PROCESSLIST still lists the dropped client %d", c.ID)
				}
			}
			if took, idle := e.waitIdle(ctx, e.all(), killBound+time.Second); !idle {
				t.fail(UnclearError, "the primprocs still ran the stalled query's fragments %.2fs after the drop", took.Seconds())
			}
			var slowest time.Duration
			wrong, failed := 0, 0
			for _, a := range answers {
				slowest = max(slowest, a.took)
				switch {
				case a.err != nil:
					failed++
					t.fail(UnclearError, "another client's check query failed: %s", oneLine(a.err.Error()))
				case !a.ok:
					wrong++
				}
			}
			if wrong > 0 {
				t.fail(WrongAnswer, "%d of the other clients' check queries answered wrongly", wrong)
			}
			if len(answers) < 2 {
				t.fail(UnclearError, "the other clients got only %d answers while the client stalled", len(answers))
			}
			if slowest > e.promptBound() {
				t.fail(UnclearError, "another client's check query took %.2fs (bound %v)", slowest.Seconds(), e.promptBound())
			}
			peak := e.rssOf("exemgr").Peak
			t.note("%d other queries answered, the slowest in %.3fs; exemgr %s before, peak %s", len(answers), slowest.Seconds(), mib(before), mib(peak))
			if peak > before+slowRSSBound {
				t.fail(UnclearError, "exemgr's resident size peaked at %s, over %s before + %s", mib(peak), mib(before), mib(slowRSSBound))
			}
			c.Close()
			e.settle(ctx)
			if after := e.rssOf("exemgr").Now; after > before+idleMargin {
				t.fail(UnclearError, "exemgr holds %s two --pool-idle intervals after, %s before", mib(after), mib(before))
			}
		},
	}
}

// processListed reports whether SHOW PROCESSLIST lists connection id.
func (e *Env) processListed(ctx context.Context, id uint32) (bool, error) {
	got, _, err := e.query(ctx, "show processlist")
	if err != nil {
		return false, err
	}
	for _, row := range strings.Split(got, "\n") {
		if f := strings.SplitN(row, "|", 2); f[0] == strconv.FormatUint(uint64(id), 10) {
			return true, nil
		}
	}
	return false, nil
}
