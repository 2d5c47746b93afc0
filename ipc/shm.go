package ipc

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sync"
	"time"
)

// shmConn is a connection's shared memory: the ring it produces into (toward the peer)
// and the one it consumes from, each on a segment of its own. The connection holds one
// reference on each segment, dropped by close; the mappings go once the regions the
// application still holds are released too.
type shmConn struct {
	size   uint64
	tx     *ringTx
	rx     *ringRx
	txSeg  *shmSeg
	rxSeg  *shmSeg
	closed sync.Once
}

func (s *shmConn) close() {
	s.closed.Do(func() {
		s.txSeg.release()
		s.rxSeg.release()
	})
}

// newGeneration returns a random, nonzero segment generation.
func newGeneration() uint64 {
	var b [8]byte
	for {
		_, _ = rand.Read(b[:])
		if g := binary.LittleEndian.Uint64(b[:]); g != 0 {
			return g
		}
	}
}

// shmSetup is a server's segments between their creation and the handshake's end: the
// descriptors go with the hello, then are closed.
type shmSetup struct {
	fds []int // server→client, client→server
	shm *shmConn
}

func (p *shmSetup) closeFDs() {
	for _, fd := range p.fds {
		closeFD(fd)
	}
	p.fds = nil
}

// createShm (server, handshake) creates the connection's two segments of size bytes and
// arranges for their descriptors to go with the next write, the hello that offers them.
// It returns size, or 0 if they could not be made (the connection goes on without).
func (c *Conn) createShm(size uint64) uint64 {
	start := time.Now()
	s2cFD, s2c, err := createSegment(size, newGeneration())
	if err != nil {
		c.log.Warn("link: cannot create shared memory; serving this connection without it", "err", err)
		return 0
	}
	c2sFD, c2s, err := createSegment(size, newGeneration())
	if err != nil {
		closeFD(s2cFD)
		_ = unmapSegment(s2c)
		c.log.Warn("link: cannot create shared memory; serving this connection without it", "err", err)
		return 0
	}
	c.shmSetup = &shmSetup{fds: []int{s2cFD, c2sFD}, shm: newShmConn(size, s2c, c2s)}
	c.shmSetup.shm.prefault()
	c.sio.sendFDs = c.shmSetup.fds
	c.log.Debug("link: shared memory created", "bytes_per_direction", size, "took", time.Since(start).Round(time.Microsecond))
	return size
}

// prefault faults the segments' pages in, in the background. In the handshake it cost
// about 0.2 s a connection on the reference machine idle (80 ms for each 64 MiB segment on
// the server, 16 ms on the client), and with the whole test suite running, more than a
// client's 2 s dial timeout; a batch that meets a page not yet faulted only costs that
// fault. A reference keeps each mapping while it is worked on.
func (s *shmConn) prefault() {
	for _, seg := range []*shmSeg{s.txSeg, s.rxSeg} {
		if seg.acquire() {
			go func() {
				defer seg.release()
				prefaultSegment(seg.mem)
			}()
		}
	}
}

// newShmConn makes the rings over a producer's segment and a consumer's, both mapped.
func newShmConn(size uint64, txMem, rxMem []byte) *shmConn {
	s := &shmConn{size: size, txSeg: newShmSeg(txMem, unmapSegment), rxSeg: newShmSeg(rxMem, unmapSegment)}
	txGen, _ := readSegment(txMem) // written by this side: valid
	rxGen, _ := readSegment(rxMem)
	s.tx, s.rx = newRingTx(s.txSeg, txGen), newRingRx(s.rxSeg, rxGen)
	return s
}

// mapShm (client, once the handshake agreed on segments of size bytes) maps the two the
// server passed with its hello, checking each: a memfd of that size, sealed, with a valid
// header. The descriptors are closed whatever happens.
func (c *Conn) mapShm(size uint64) (*shmConn, error) {
	fds, err := c.sio.takeFDs()
	defer func() {
		for _, fd := range fds {
			closeFD(fd)
		}
	}()
	if err != nil {
		return nil, fmt.Errorf("%w: receiving the segments: %w", errShm, err)
	}
	if len(fds) != 2 {
		return nil, fmt.Errorf("%w: the server agreed to shared memory and passed %d descriptors with its hello, want 2", errShm, len(fds))
	}
	var mems [2][]byte
	for i, fd := range fds {
		m, err := mapSegment(fd, size)
		if err == nil {
			_, err = readSegment(m)
			if err != nil {
				_ = unmapSegment(m)
			}
		}
		if err != nil {
			if i == 1 {
				_ = unmapSegment(mems[0])
			}
			return nil, err
		}
		mems[i] = m
	}
	// The first segment is the server's ring toward the client, the second the client's.
	s := newShmConn(size, mems[1], mems[0])
	s.prefault()
	return s, nil
}

// useShm makes the connection carry batch bodies in s from now on (before start).
func (c *Conn) useShm(s *shmConn) {
	c.shm = s
	c.mu.Lock()
	c.core.ring = s.rx
	c.mu.Unlock()
	c.transport = "shm"
	c.log = c.baseLog.With("conn", c.id, "transport", c.transport, "remote", c.remote)
}

// closeShm drops the connection's references on its segments (the connection has ended).
func (c *Conn) closeShm() {
	if c.shmSetup != nil && c.shm == nil {
		c.shmSetup.shm.close() // the handshake failed before the rings were used
	}
	if c.shm != nil {
		c.shm.close()
	}
}

// sendRing sends a batch whose Arrow message is head (prefix, metadata, padding) and body,
// n bytes in all, with its body in the ring, once credit allows. done is false when the
// body does not fit the ring now (or is empty): the caller sends it on the socket. The
// ring lock keeps the reservations and the frames that describe them in one order: it is
// held from the reservation until the frame is queued.
func (s *Stream) sendRing(head, body [][]byte, n int) (done bool, err error) {
	c := s.c
	bodyLen := 0
	for _, b := range body {
		bodyLen += len(b)
	}
	if bodyLen == 0 {
		return false, nil
	}
	// Wait for the credit first, so that a reserved region is sent at once: only this
	// goroutine spends the stream's credit, which can then only grow.
	for {
		c.mu.Lock()
		ok, err := c.core.sendCheck(time.Now(), s.cs, n)
		c.mu.Unlock()
		if err != nil {
			return false, err
		}
		if ok {
			break
		}
		if err := s.awaitCredit(n); err != nil {
			return false, err
		}
	}
	sh := c.shm
	c.ringMu.Lock()
	// The reference keeps the mapping while this touches it (the connection may be
	// closing meanwhile).
	if !sh.txSeg.acquire() {
		c.ringMu.Unlock()
		return true, c.closedErr()
	}
	defer sh.txSeg.release()
	d, region, prev, ok, err := sh.tx.reserve(bodyLen)
	if err != nil {
		c.ringMu.Unlock()
		c.protocolError(err)
		return true, err
	}
	if !ok {
		c.ringMu.Unlock()
		c.mu.Lock()
		c.core.ringFallbacks++
		c.mu.Unlock()
		return false, nil
	}
	off := 0
	for _, b := range body {
		off += copy(region[off:], b)
	}
	var a actions
	c.mu.Lock()
	round, mustWait, ok, err := c.core.sendRingData(time.Now(), s.cs, d, head, n)
	if !ok {
		sh.tx.rollback(prev) // still the last reservation: the ring lock is held
	}
	c.ringMu.Unlock() // the frame is queued: the ring's order is the socket's
	if ok {
		err = c.sendLocked(round, mustWait, &a)
	} else if err == nil {
		err = c.writeErrLocked()
	}
	c.failedLocked(&a)
	c.mu.Unlock()
	c.exec(&a)
	return ok || err != nil, err
}

// closedErr is the error of a connection that has ended.
func (c *Conn) closedErr() error {
	if err := c.Err(); err != nil {
		return err
	}
	return fmt.Errorf("%w: closed", ErrConnClosed)
}
