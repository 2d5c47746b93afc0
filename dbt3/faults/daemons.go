package faults

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// killBound is how soon after a daemon's kill -9 the statements it served must fail.
const killBound = 2 * time.Second

// idleMargin is how far above its idle size a daemon may stay once idle for two
// --pool-idle intervals (the link's receive buffers age out on their own; the runtime keeps
// some bookkeeping): TestIdleMemoryReturns's margin.
const idleMargin = 32 << 20

// freezeBound is how soon a stopped peer must be found: the heartbeat timeout, one
// interval, and the run's slack for a loaded machine.
func (c *Config) freezeBound() time.Duration {
	return c.HeartbeatTimeout + c.HeartbeatInterval + c.Slack
}

// await waits for a background statement's result, a little beyond its own hard timeout.
func (e *Env) await(res <-chan result) (result, bool) {
	select {
	case r := <-res:
		return r, true
	case <-time.After(e.cfg.HangTimeout + 5*time.Second):
		return result{}, false
	}
}

// judgeFailure classifies the long query's end after a fault injected at injected: it must
// fail within bound, naming a primproc if naming is set.
func (e *Env) judgeFailure(t *Trial, r result, ok bool, injected time.Time, bound time.Duration, naming bool) {
	switch {
	case !ok || (r.err != nil && isHang(r.err)):
		t.fail(Hang, "the long query did not end within %v of the fault", e.cfg.HangTimeout)
	case r.err == nil && r.answer == e.ref.long:
		t.set(Right)
		t.note("the long query finished, right, despite the fault")
	case r.err == nil:
		t.fail(WrongAnswer, "the long query answered %q under the fault, want %q", r.answer, e.ref.long)
	default:
		took := r.at.Sub(injected)
		clear := took <= bound && (!naming || namesPrimproc(r.err.Error()))
		t.errorAt(r.err, took, clear)
		if took > bound {
			t.fail(UnclearError, "the error came %.2fs after the fault (bound %v)", took.Seconds(), bound)
		}
		if naming && !namesPrimproc(r.err.Error()) {
			t.fail(UnclearError, "the error does not name the primproc")
		}
	}
}

// killPrimprocQuery: kill -9 of a primproc mid-query.
func killPrimprocQuery(cfg *Config) Fault {
	return Fault{
		Name:    "kill-primproc-query",
		Summary: "kill -9 of one primproc (in turn) while the long query runs on every primproc; then restart it",
		Criterion: fmt.Sprintf("the query fails within %v with an error naming the primproc; the other primprocs' fragments of it stop within %v; exemgr stays up; "+
			"after the restart the check query's first run answers right", killBound, killBound+time.Second),
		Try: func(ctx context.Context, e *Env, t *Trial) {
			i := (t.Try - 1) % e.cl.Primprocs()
			name := e.pmName(i)
			t.note("%s killed", name)
			res, cancel, ok := e.midQuery(ctx, t)
			defer cancel()
			if !ok {
				return
			}
			injected := time.Now()
			if !e.kill(t, name) {
				return
			}
			r, ok := e.await(res)
			e.judgeFailure(t, r, ok, injected, killBound, true)
			if took, idle := e.waitIdle(ctx, e.others(i), killBound+time.Second); !idle {
				t.fail(UnclearError, "the other primprocs still ran the query's fragments %.2fs after the kill", took.Seconds())
			}
			if !e.cl.Running("exemgr") {
				t.fail(Died, "exemgr exited after a primproc's kill -9")
				return
			}
			if e.restartPrimproc(ctx, t, i, "", nil) {
				e.verify(ctx, t, "after the restart")
			}
		},
	}
}

// stopPrimprocQuery: SIGSTOP of a primproc mid-query.
func stopPrimprocQuery(cfg *Config) Fault {
	return Fault{
		Name:    "stop-primproc-query",
		Summary: "SIGSTOP of one primproc (in turn) while the long query runs on every primproc; SIGCONT once the query has ended",
		Criterion: fmt.Sprintf("the query fails within %v (heartbeat timeout %v + interval %v + slack %v) with an error naming the primproc; "+
			"the other primprocs' fragments of it stop within %v; after the resume the check query answers right",
			cfg.freezeBound(), cfg.HeartbeatTimeout, cfg.HeartbeatInterval, cfg.Slack, killBound+time.Second),
		Try: func(ctx context.Context, e *Env, t *Trial) {
			i := (t.Try - 1) % e.cl.Primprocs()
			name := e.pmName(i)
			t.note("%s stopped", name)
			res, cancel, ok := e.midQuery(ctx, t)
			defer cancel()
			if !ok {
				return
			}
			injected := time.Now()
			if !e.signal(t, name, syscall.SIGSTOP) {
				return
			}
			resumed := false
			resume := func() {
				if !resumed {
					resumed = true
					e.signal(t, name, syscall.SIGCONT)
				}
			}
			defer resume()
			r, ok := e.await(res)
			e.judgeFailure(t, r, ok, injected, e.cfg.freezeBound(), true)
			if took, idle := e.waitIdle(ctx, e.others(i), killBound+time.Second); !idle {
				t.fail(UnclearError, "the other primprocs still ran the query's fragments %.2fs after its error", took.Seconds())
			}
			t.note("stopped for %.2fs", time.Since(injected).Seconds())
			resume()
			e.verify(ctx, t, "after the resume")
		},
	}
}

// killExemgrQuery: kill -9 of exemgr mid-query.
func killExemgrQuery(cfg *Config) Fault {
	return Fault{
		Name:    "kill-exemgr-query",
		Summary: "kill -9 of exemgr while the long query runs on every primproc; then restart it on the same --data-dir",
		Criterion: fmt.Sprintf("the client's connection fails within %v; every primproc stays up and stops the query's fragments within %v; "+
			"after the restart the view created before answers as before and the check query answers right; "+
			"each primproc, idle for two --pool-idle intervals, is within %s of its idle size", killBound, killBound+time.Second, mib(idleMargin)),
		SettlesMemory: true,
		Setup: func(ctx context.Context, e *Env) error {
			if _, err := e.exec(ctx, "create or replace view "+viewName+" as select n_regionkey, count(*) as nations from nation group by n_regionkey"); err != nil {
				return fmt.Errorf("create the view: %w", err)
			}
			got, _, err := e.query(ctx, viewQuery)
			if err != nil {
				return fmt.Errorf("read the view: %w", err)
			}
			e.ref.view = got
			e.settle(ctx)
			e.idle = e.rss()
			return nil
		},
		Try: func(ctx context.Context, e *Env, t *Trial) {
			res, cancel, ok := e.midQuery(ctx, t)
			defer cancel()
			if !ok {
				return
			}
			injected := time.Now()
			if !e.kill(t, "exemgr") {
				return
			}
			r, ok := e.await(res)
			switch {
			case !ok || (r.err != nil && isHang(r.err)):
				t.fail(Hang, "the client's statement did not end within %v of exemgr's death", e.cfg.HangTimeout)
			case r.err == nil:
				t.fail(WrongAnswer, "the statement answered %q though exemgr was killed", r.answer)
			default:
				took := r.at.Sub(injected)
				t.errorAt(r.err, took, took <= killBound)
				if took > killBound {
					t.fail(UnclearError, "the client's error came %.2fs after the kill (bound %v)", took.Seconds(), killBound)
				}
			}
			if took, idle := e.waitIdle(ctx, e.all(), killBound+time.Second); !idle {
				t.fail(UnclearError, "the primprocs still ran the dead exemgr's fragments %.2fs after the kill", took.Seconds())
			}
			for i := range e.cl.Primprocs() {
				if !e.cl.Running(e.pmName(i)) {
					t.fail(Died, "%s exited after exemgr's kill -9", e.pmName(i))
				}
			}
			if _, err := e.cl.UseTransport(ctx, e.Transport); err != nil {
				t.fail(Died, "restart exemgr: %v", err)
				return
			}
			switch got, _, err := e.query(ctx, viewQuery); {
			case err != nil:
				t.fail(UnclearError, "the view after the restart: %s", oneLine(err.Error()))
			case got != e.ref.view:
				t.fail(WrongAnswer, "the view after the restart answered %q, want %q", got, e.ref.view)
			}
			e.verify(ctx, t, "after the restart")
			e.settle(ctx)
			now := e.rss()
			for i := range e.cl.Primprocs() {
				name := e.pmName(i)
				if now[name] > e.idle[name]+idleMargin {
					t.fail(UnclearError, "%s is at %s two --pool-idle intervals after, idle size %s", name, mib(now[name]), mib(e.idle[name]))
				}
			}
		},
	}
}

// stopExemgrQuery: SIGSTOP of exemgr mid-query.
func stopExemgrQuery(cfg *Config) Fault {
	return Fault{
		Name:    "stop-exemgr-query",
		Summary: "SIGSTOP of exemgr while the long query runs on every primproc; SIGCONT once the primprocs have given up on it (or the bound has passed)",
		Criterion: fmt.Sprintf("every primproc stops the frozen exemgr's fragments within %v (heartbeat timeout + interval + slack); "+
			"after the resume the client's statement ends within %v, with an error naming a primproc (or the right answer), "+
			"and the check query answers right", cfg.freezeBound(), killBound+cfg.Slack),
		Try: func(ctx context.Context, e *Env, t *Trial) {
			res, cancel, ok := e.midQuery(ctx, t)
			defer cancel()
			if !ok {
				return
			}
			if !e.signal(t, "exemgr", syscall.SIGSTOP) {
				return
			}
			resumed := false
			resume := func() {
				if !resumed {
					resumed = true
					e.signal(t, "exemgr", syscall.SIGCONT)
				}
			}
			defer resume()
			took, idle := e.waitIdle(ctx, e.all(), e.cfg.freezeBound())
			if idle {
				t.note("the primprocs dropped the frozen exemgr's fragments in %.2fs", took.Seconds())
			} else {
				t.fail(UnclearError, "the primprocs still ran the frozen exemgr's fragments %.2fs after the stop (bound %v)", took.Seconds(), e.cfg.freezeBound())
			}
			resumedAt := time.Now()
			resume()
			r, ok := e.await(res)
			bound := killBound + e.cfg.Slack
			switch {
			case !ok || (r.err != nil && isHang(r.err)):
				t.fail(Hang, "the client's statement did not end within %v of the resume", e.cfg.HangTimeout)
			case r.err == nil && r.answer == e.ref.long:
				t.set(Right)
			case r.err == nil:
				t.fail(WrongAnswer, "the long query answered %q, want %q", r.answer, e.ref.long)
			default:
				took := r.at.Sub(resumedAt)
				t.errorAt(r.err, took, took <= bound && namesPrimproc(r.err.Error()))
				if took > bound {
					t.fail(UnclearError, "the error came %.2fs after the resume (bound %v)", took.Seconds(), bound)
				}
				if !namesPrimproc(r.err.Error()) {
					t.fail(UnclearError, "the error does not name a primproc")
				}
			}
			e.verify(ctx, t, "after the resume")
		},
	}
}

// midQuery starts the long query on a session of its own, waits until its fragments run
// on every primproc, and pauses up to 300 ms more: the moment to inject a fault. It
// returns the query's outcome channel and what cancels the query; ok is false, with t
// failed, if the query could not be brought there.
func (e *Env) midQuery(ctx context.Context, t *Trial) (<-chan result, context.CancelFunc, bool) {
	qctx, cancel := context.WithCancel(ctx)
	res, err := e.start(qctx, longQuery)
	if err != nil {
		t.fail(UnclearError, "open a session: %v", err)
		return nil, cancel, false
	}
	if !e.waitRunning(ctx, t, res) {
		return nil, cancel, false
	}
	sleep(ctx, e.jitter(0, 300*time.Millisecond))
	return res, cancel, true
}
