package ipc

import (
	"time"
)

// The loop's writer writes the core's output rounds with flat combining: a goroutine that
// queues frames while nobody is writing becomes the writer and writes everything queued,
// its own and others', in one writev per round; goroutines that queue while a write is in
// progress leave their frames to that writer. Uncontended, a frame costs one syscall in the
// caller's goroutine; contended, many frames share one. Events that must never block on
// the socket (the reader, the timer) leave their frames to a background flusher.

// writerState is the writer's bookkeeping, guarded by the connection's mu.
type writerState struct {
	flushing bool
	// waiting are the goroutines waiting for their round to be written, in round order;
	// each is woken once, when its round is out or the connection fails (not all of them
	// on every round: many streams sending on one connection would be woken for nothing).
	waiting []roundWaiter
	sigFree []chan struct{} // recycled wake channels
	kick    chan struct{}   // wakes flushLoop
}

type roundWaiter struct {
	round uint64
	sig   chan struct{}
}

// wakeWritersLocked wakes the waiters whose rounds are written (all of them once the
// connection has failed).
func (c *Conn) wakeWritersLocked() {
	failed := !c.core.writable()
	n := 0
	for _, wt := range c.w.waiting {
		if wt.round > c.core.out.written && !failed {
			break
		}
		wt.sig <- struct{}{} // buffered, and each waiter is woken once
		n++
	}
	if n > 0 {
		m := copy(c.w.waiting, c.w.waiting[n:])
		clear(c.w.waiting[m:])
		c.w.waiting = c.w.waiting[:m]
	}
}

// flushLocked writes pending rounds until round mine is written (and at most a few rounds
// more, so a caller does not end up writing for everyone forever); what remains is handed
// to the background flusher. Called with mu held and nobody flushing; mu is released
// during each write. A write error fails the connection (in a).
func (c *Conn) flushLocked(mine uint64, a *actions) {
	c.w.flushing = true
	q := &c.core.out
	for extra := 0; q.pending() && c.core.writable() && (q.written < mine || extra < 2); extra++ {
		r, n := q.take()
		c.mu.Unlock()
		moved, err := c.sio.Writev(r.vectors())
		now := time.Now()
		c.mu.Lock()
		c.core.wrote(now, r, n, moved, err, a)
		c.failedLocked(a)
		if len(c.w.waiting) > 0 {
			c.wakeWritersLocked()
		}
	}
	c.w.flushing = false
	if q.pending() && c.core.writable() {
		signal(c.w.kick)
	}
}

// sendLocked makes sure round gets written after a frame was queued in it: now by this
// goroutine if nobody is writing; else by the writer in progress, waited for if mustWait
// (the frame references the caller's memory). It returns the connection's error once the
// connection has failed.
func (c *Conn) sendLocked(round uint64, mustWait bool, a *actions) error {
	if !c.w.flushing {
		c.flushLocked(round, a)
	} else if mustWait {
		var sig chan struct{}
		if n := len(c.w.sigFree); n > 0 {
			sig = c.w.sigFree[n-1]
			c.w.sigFree = c.w.sigFree[:n-1]
		} else {
			sig = make(chan struct{}, 1)
		}
		c.w.waiting = append(c.w.waiting, roundWaiter{round: round, sig: sig})
		c.mu.Unlock()
		<-sig
		c.mu.Lock()
		c.w.sigFree = append(c.w.sigFree, sig)
	}
	return c.writeErrLocked()
}

// flushQueuedLocked makes sure round gets written: now by this goroutine if nobody is
// writing, else by the writer in progress, not waited for.
func (c *Conn) flushQueuedLocked(round uint64, a *actions) error {
	if !c.w.flushing && c.core.out.written < round && c.core.writable() {
		c.flushLocked(round, a)
	}
	return c.writeErrLocked()
}

// writeErrLocked is the error a sender gets once the connection failed.
func (c *Conn) writeErrLocked() error {
	if c.core.writable() {
		return nil
	}
	return c.core.err
}

// flushLoop is the background flusher: it writes what the reader and the timer queued and
// what a combining writer left. It returns when the connection is done.
func (c *Conn) flushLoop() {
	for {
		select {
		case <-c.done:
			return
		case <-c.w.kick:
		}
		var a actions
		c.mu.Lock()
		if !c.w.flushing && c.core.out.pending() && c.core.writable() {
			c.flushLocked(c.core.out.round, &a)
		}
		c.mu.Unlock()
		c.exec(&a)
	}
}
