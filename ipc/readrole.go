package ipc

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"time"
)

// A client connection has no goroutine that owns its socket's read side. Whoever waits for
// input reads: a goroutine waiting for its stream's reply takes the read role if it is
// free, reads and dispatches frames (its own and other streams') until its own wait is
// over, then passes the role to another waiter. The reply thus reaches the goroutine that
// wants it without a hand-off through the scheduler, which on these machines costs more
// than the syscalls of a round trip. When nobody waits, a background reader takes the role
// at the next heartbeat tick (to answer pings and notice a dead peer) and gives it up when a
// waiter preempts it with an immediate read deadline. Server connections keep a dedicated
// reader goroutine: their requests start handlers, which never wait on the socket.

const (
	roleFree = iota
	roleBG   // the background reader
	roleFG   // a waiting goroutine
)

type readRole struct {
	mu      sync.Mutex
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
	c.rr.mu.Lock()
	if c.rr.owner != roleFree {
		c.preemptLocked()
	}
	c.rr.mu.Unlock()
}

// takePreempt reports whether a timed-out read was a preemption, and clears it.
func (c *Conn) takePreempt() bool {
	c.rr.mu.Lock()
	defer c.rr.mu.Unlock()
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
	c.rr.mu.Lock()
	c.rr.owner = roleFree
	if len(c.rr.waiting) > 0 {
		signal(c.rr.waiting[0])
	} else if c.calls.pending.Load() > 0 {
		signal(c.rr.bgKick)
	}
	c.rr.mu.Unlock()
}

func (c *Conn) unregisterWaiter(sig chan struct{}) {
	c.rr.mu.Lock()
	if i := slices.Index(c.rr.waiting, sig); i >= 0 {
		c.rr.waiting = slices.Delete(c.rr.waiting, i, i+1)
	}
	if c.rr.owner == roleFree && len(c.rr.waiting) > 0 {
		signal(c.rr.waiting[0])
	}
	c.rr.mu.Unlock()
}

// readFrames reads and dispatches frames until done() holds (nil: until preempted) or the
// connection fails.
func (c *Conn) readFrames(done func() bool) {
	for done == nil || !done() {
		f, err := c.fr.next()
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) && c.takePreempt() {
				return
			}
			c.readFailed(err)
			return
		}
		if err := c.dispatch(f); err != nil {
			c.protocolError(err)
			return
		}
		select {
		case <-c.done:
			return
		default:
		}
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
		c.rr.mu.Lock()
		if c.rr.owner != roleFree || len(c.rr.waiting) > 0 {
			c.rr.mu.Unlock()
			continue
		}
		c.rr.owner = roleBG
		c.rr.mu.Unlock()
		c.readFrames(nil)
		c.releaseRead()
	}
}

// kickIdleReader starts the background reader if nobody reads or waits.
func (c *Conn) kickIdleReader() {
	c.rr.mu.Lock()
	idle := c.rr.owner == roleFree && len(c.rr.waiting) == 0
	c.rr.mu.Unlock()
	if idle {
		signal(c.rr.bgKick)
	}
}

// waitFor blocks until done() holds. sig is signalled when the state done() looks at may
// have changed. It returns ctx's error if ctx ends first. On a client connection the waiting
// goroutine reads the socket itself when no one else does (see above).
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
		c.rr.mu.Lock()
		if c.rr.owner == roleFree {
			c.rr.owner = roleFG
			if registered {
				if i := slices.Index(c.rr.waiting, sig); i >= 0 {
					c.rr.waiting = slices.Delete(c.rr.waiting, i, i+1)
				}
				registered = false
			}
			c.rr.mu.Unlock()
			if stop == nil && ctx.Done() != nil {
				stop = context.AfterFunc(ctx, c.preemptReader)
			}
			c.readFrames(done)
			c.releaseRead()
			if c.sawData.Swap(false) {
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
		c.rr.mu.Unlock()
		select {
		case <-sig:
		case <-ctx.Done():
		case <-c.done:
		}
	}
}
