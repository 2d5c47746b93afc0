package ipc

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"time"

	arrowipc "github.com/apache/arrow-go/v18/arrow/ipc"
)

func newNonce() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}

func compressionOpts(name string) []arrowipc.Option {
	switch name {
	case "lz4":
		return []arrowipc.Option{arrowipc.WithLZ4()}
	case "zstd":
		return []arrowipc.Option{arrowipc.WithZstd()}
	}
	return nil
}

// handshake runs the connection's handshake on the calling goroutine (the core's state
// machine decides; see core_handshake.go): it writes what the core queues, reads what the
// peer sends, and ticks the core when a read times out at the core's deadline — the
// handshake's own, or on a client the silence rule's. The whole handshake is bounded by
// the handshake timeout or ctx's deadline, whichever is sooner, and ends early when ctx is
// done. On failure the core has failed the connection: its socket is closed and, for a
// server, the failure logged.
//
// Invariant: a handshake read blocks until the core's next deadline at most.
func (c *Conn) handshake(ctx context.Context, p handshakeParams) error {
	now := time.Now()
	end := now.Add(c.lim.HandshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(end) {
		end = d
	}
	c.mu.Lock()
	c.core.cfg.params = p
	if c.isClient && p.shm > 0 && c.transport == "unix" {
		c.shmAsk = p.shm
		c.sio.wantFDs = true
	}
	var a actions
	c.core.startHandshake(now, end, &a)
	c.mu.Unlock()
	_ = c.nc.SetWriteDeadline(end)
	// late is the most any read's deadline was seen to have passed when the read returned.
	var late time.Duration
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(time.Now()) })
	defer func() {
		stop()
		_ = c.nc.SetDeadline(time.Time{})
	}()
	for {
		c.mu.Lock()
		if c.core.writable() {
			c.flushQueuedLocked(c.core.out.round, &a)
		}
		c.failedLocked(&a)
		ph := c.core.phase
		dl := c.core.deadline()
		c.mu.Unlock()
		c.exec(&a)
		switch ph {
		case phaseOpen:
			c.peer = c.core.peer
			if c.isClient {
				c.sendOpts = compressionOpts(p.compression)
			} else {
				c.sendOpts = compressionOpts(c.peer.Compression)
			}
			return c.handshakeShm()
		case phaseFailed:
			c.endShmSetup()
			c.mu.Lock()
			defer c.mu.Unlock()
			if late = max(late, time.Since(end)); c.isClient && late > c.lim.HeartbeatInterval {
				// A deadline passed long before it was seen to pass: this process did not
				// run meanwhile (it was stopped, or suspended), and the failure says
				// nothing of the peer now.
				return fmt.Errorf("%w (%w: a deadline was seen %v after it passed)", c.core.err, errDialStalled, late.Round(time.Millisecond))
			}
			return c.core.err
		}
		_ = c.nc.SetReadDeadline(dl)
		var n int
		var err error
		if ctx.Err() == nil {
			// The AfterFunc above may have set its deadline before the line above replaced
			// it: a read is started only while ctx is live.
			n, err = c.sio.Read(c.core.readSpace())
		}
		now := time.Now()
		c.mu.Lock()
		c.core.received(now, n, &a)
		switch {
		case ctx.Err() != nil:
			c.core.expireHandshake(now, &a)
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded):
			if !dl.IsZero() {
				late = max(late, now.Sub(dl))
			}
			c.core.tick(now, -1, &a)
			if a.checkPeer {
				a.checkPeer = false
				c.mu.Unlock()
				state, perr := processState(c.peerPID)
				c.mu.Lock()
				c.core.peerState(now, state, perr, &a)
			}
		default:
			c.core.readFailed(now, err, &a)
		}
		if size := a.shmCreate; size > 0 && c.core.phase == phaseHandshake {
			// A server makes its segments outside the lock (mapping and pre-faulting them
			// takes milliseconds), then answers the hello that asked for them.
			a.shmCreate = 0
			c.mu.Unlock()
			got := c.createShm(size)
			c.mu.Lock()
			c.core.shmCreated(time.Now(), got)
		}
		c.mu.Unlock()
	}
}

// handshakeShm ends a successful handshake's shared-memory set-up: a server closes the
// descriptors it passed with its hello and starts using the rings; a client maps the
// segments the server passed, or fails the connection with an error wrapping errShm
// (its Client then dials again without shared memory).
func (c *Conn) handshakeShm() error {
	if !c.isClient {
		setup := c.shmSetup
		c.endShmSetup()
		if setup != nil && c.core.shmSize > 0 {
			c.useShm(setup.shm)
		}
		return nil
	}
	if c.shmAsk == 0 {
		return nil
	}
	size := c.core.shmSize
	if size == 0 {
		for _, fd := range c.takeFDs() {
			closeFD(fd) // passed unasked for: not ours to keep
		}
		return nil
	}
	s, err := c.mapShm(size)
	if err != nil {
		err = fmt.Errorf("handshake: %w", err)
		c.fail(err)
		return err
	}
	c.useShm(s)
	return nil
}

// takeFDs returns the descriptors a client's handshake reads received, and stops
// receiving them.
func (c *Conn) takeFDs() []int {
	fds, _ := c.sio.takeFDs()
	return fds
}

// endShmSetup closes the descriptors a server passed (or meant to pass) with its hello.
func (c *Conn) endShmSetup() {
	if c.shmSetup != nil {
		c.shmSetup.closeFDs()
		c.sio.sendFDs = nil
	}
	if c.isClient {
		for _, fd := range c.takeFDs() {
			closeFD(fd)
		}
	}
}
