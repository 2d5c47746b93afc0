package ipc

import (
	"context"
	"errors"
	"os"
	"slices"
	"time"
)

// A client connection has no goroutine that owns its socket's read side. Whoever waits for
// input reads: a goroutine waiting for its stream's reply takes the read role if it is
// free, reads and feeds the core frames (its own and other streams') until its own wait is
// over, then passes the role to another waiter. The reply thus reaches the goroutine that
// wants it without a hand-off through the scheduler, which on these machines costs more
// than the syscalls of a round trip. When nobody waits, a background reader takes the role
// at the next tick (to answer pings and notice a dead peer) and gives it up when a waiter
// preempts it with an immediate read deadline. Server connections keep a dedicated reader
// goroutine: their requests start handlers, which never wait on the socket.
//
// The role holder owns the core's decoder and the connection's rx actions; the role itself
// changes hands under the connection's mu.

const (
	roleFree = iota
	roleBG   // the background reader
	roleFG   // a waiting goroutine
)

// readRole is guarded by the connection's mu.
type readRole struct {
	owner   int
	waiting []chan struct{} // signal channels of goroutines waiting while another reads
	preempt bool            // a read deadline was set to make the reader give up the role
	bgKick  chan struct{}
}

// preemptLocked makes the current reader's blocked read return at once.
func (c *Conn) preemptLocked() {
	c.rr.preempt = true
	_ = c.nc.SetReadDeadline(time.Now())
}

// preemptReader interrupts whoever reads (a context was canceled, a stream canceled).
func (c *Conn) preemptReader() {
	if !c.isClient {
		return
	}
	c.mu.Lock()
	if c.rr.owner != roleFree {
		c.preemptLocked()
	}
	c.mu.Unlock()
}

// takePreemptLocked reports whether a timed-out read was a preemption, and clears it.
func (c *Conn) takePreemptLocked() bool {
	if !c.rr.preempt {
		return false
	}
	c.rr.preempt = false
	_ = c.nc.SetReadDeadline(time.Time{})
	return true
}

// releaseRead frees the read role and wakes a waiter to take it, or the background reader
// when Go calls still wait for replies and nobody else will read.
func (c *Conn) releaseRead() {
	c.mu.Lock()
	c.rr.owner = roleFree
	if len(c.rr.waiting) > 0 {
		signal(c.rr.waiting[0])
	} else if c.core.calls.pending > 0 {
		signal(c.rr.bgKick)
	}
	c.mu.Unlock()
}

func (c *Conn) unregisterWaiter(sig chan struct{}) {
	c.mu.Lock()
	if i := slices.Index(c.rr.waiting, sig); i >= 0 {
		c.rr.waiting = slices.Delete(c.rr.waiting, i, i+1)
	}
	if c.rr.owner == roleFree && len(c.rr.waiting) > 0 {
		signal(c.rr.waiting[0])
	}
	c.mu.Unlock()
}

// readBurst is how many frames a reader dispatches under mu before it releases it to
// execute their actions: a burst of replies then wakes its callers while the rest is
// dispatched, and their next requests need not wait for the whole burst.
const readBurst = 8

// readFrames reads the socket and feeds the core until done() holds (nil: until preempted),
// or the connection fails. It returns whether a data frame was delivered. The first pass
// reads nothing: it feeds the frames already buffered.
func (c *Conn) readFrames(done func() bool) (sawData bool) {
	a := &c.rx
	n, err := 0, error(nil)
	now := time.Now()
	for {
		c.mu.Lock()
		c.core.receivedBytes(now, n)
		for c.core.receiveFrames(now, readBurst, a) {
			c.acceptLocked(a)
			c.failedLocked(a)
			c.mu.Unlock()
			sawData = sawData || a.data
			c.exec(a)
			c.mu.Lock()
		}
		stop := false
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) && c.takePreemptLocked() {
				stop = true
			} else {
				c.core.readFailed(now, err, a)
			}
		}
		c.acceptLocked(a)
		c.failedLocked(a)
		failed := !c.core.writable()
		c.mu.Unlock()
		sawData = sawData || a.data
		c.exec(a)
		if !c.isClient {
			c.flushReplies()
		}
		if failed || (err != nil && !stop) {
			c.core.dec.release() // the reader's to give back: nobody reads a failed connection again
			return sawData
		}
		if stop {
			return sawData
		}
		if done != nil && done() {
			return sawData
		}
		n, err = c.sio.Read(c.core.readSpace())
		now = time.Now()
	}
}

// acceptLocked makes the Streams of a server's new streams (under mu, so that every action
// that refers to them finds them).
func (c *Conn) acceptLocked(a *actions) {
	for _, q := range a.accept {
		s := newStream(c, q.cs, q.cs.method, q.args)
		s.timeout = q.timeout
		s.ctx, s.cancelCtx = context.WithCancelCause(c.baseCtx)
		if q.timeout > 0 {
			var stop context.CancelFunc
			s.ctx, stop = context.WithTimeout(s.ctx, q.timeout)
			parent := s.cancelCtx
			s.cancelCtx = func(err error) { stop(); parent(err) }
		}
		q.cs.h = s
	}
}

// bgReader reads for a client connection while nobody else does.
func (c *Conn) bgReader() {
	for {
		select {
		case <-c.done:
			return
		case <-c.rr.bgKick:
		}
		c.mu.Lock()
		if c.rr.owner != roleFree || len(c.rr.waiting) > 0 {
			c.mu.Unlock()
			continue
		}
		c.rr.owner = roleBG
		c.mu.Unlock()
		c.readFrames(nil)
		c.releaseRead()
	}
}

// kickIdleReader starts the background reader if nobody reads or waits.
func (c *Conn) kickIdleReader() {
	c.mu.Lock()
	c.kickIdleReaderLocked()
	c.mu.Unlock()
}

func (c *Conn) kickIdleReaderLocked() {
	if c.rr.owner == roleFree && len(c.rr.waiting) == 0 {
		signal(c.rr.bgKick)
	}
}

// waitFor blocks until done() holds; done takes mu itself if it needs it. sig is
// signalled when the state done() looks at may have changed. It returns ctx's error if ctx
// ends first. On a client connection the waiting goroutine reads the socket itself when no
// one else does (see above).
func (c *Conn) waitFor(ctx context.Context, sig chan struct{}, done func() bool) error {
	if !c.isClient {
		for !done() {
			select {
			case <-sig:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	registered := false
	var stop func() bool
	defer func() {
		if registered {
			c.unregisterWaiter(sig)
		}
		if stop != nil {
			stop()
		}
	}()
	for {
		if done() {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		c.mu.Lock()
		if c.rr.owner == roleFree {
			c.rr.owner = roleFG
			if registered {
				if i := slices.Index(c.rr.waiting, sig); i >= 0 {
					c.rr.waiting = slices.Delete(c.rr.waiting, i, i+1)
				}
				registered = false
			}
			c.mu.Unlock()
			if stop == nil && ctx.Done() != nil {
				stop = context.AfterFunc(ctx, c.preemptReader)
			}
			sawData := c.readFrames(done)
			c.releaseRead()
			if sawData {
				// A stream is delivering batches: keep reading ahead while its consumer
				// works on this one, so the sender is not held up by a full socket.
				c.kickIdleReader()
			}
			continue
		}
		if c.rr.owner == roleBG && !c.rr.preempt {
			c.preemptLocked()
		}
		if !registered {
			c.rr.waiting = append(c.rr.waiting, sig)
			registered = true
		}
		c.mu.Unlock()
		select {
		case <-sig:
		case <-ctx.Done():
		case <-c.done:
		}
	}
}
