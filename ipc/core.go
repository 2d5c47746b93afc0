package ipc

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// core is the link protocol of one connection as a state machine (see "The core and the
// loop" in the package comment). Every method is an event: it takes the time, changes the
// state, queues frames in out, and reports what the loop must do in actions. It runs no
// goroutine, takes no lock (its caller holds the connection's) and reads no clock.
//
// Invariants:
//   - phase only moves forward (handshake, open, failed), and err is set exactly when it
//     is failed; a failed core queues nothing and keeps no streams and no calls;
//   - every stream in streams is live for this side: not retired, and its err unset;
//   - for every stream, recvAvail + queued + ungranted = the window this side granted,
//     plus what it granted since (see coreStream);
//   - dataStreams counts the streams (live or not yet released) with countsData.
type core struct {
	cfg  coreConfig
	lim  Limits // this side's, with defaults
	peer Hello  // the peer's hello, once the handshake has read it

	phase phase
	err   error

	dec decoder
	out outQueue
	hs  handshake

	// Liveness. Zero times are "never".
	now      time.Time // the latest event's time: time never runs backwards in here
	started  time.Time // the connect
	lastIn   time.Time // the last read that returned bytes
	lastOut  time.Time // the last write that moved bytes
	unreadAt time.Time // bytes were last seen waiting unread in the socket
	lastPing time.Time // the last PING queued
	judgeAt  time.Time // a running local peer's silence is judged again then
	// lastTick is the last tick, or the opening. While open the core's deadline is never
	// more than an interval away (pingDue), so a longer gap means this process did not
	// run: see stalled.
	lastTick time.Time
	// stalledAt is when a tick found such a gap (stalledFor long), until a PONG answers a
	// PING sent since: the peer is there after all. Zero otherwise.
	stalledAt  time.Time
	stalledFor time.Duration
	checking   bool // checkPeer is out: the loop will answer with peerState

	streams      map[uint32]*coreStream
	dataStreams  int
	calls        callTable // client: pending unary calls
	lastID       uint32    // client: last id allocated; server: highest id the peer opened
	maxDataFrame int64     // largest data frame received (see consume)
	grants       []*coreStream

	// Shared memory: shmSize is the segment size the handshake agreed on (0: none); ring
	// is the consumer's side of the peer's ring, set by the loop once it has mapped it.
	shmSize uint64
	ring    *ringRx

	// counters
	bytesIn, framesIn, opened, batchesIn, batchesOut, creditWaits, lateFrames uint64
	pingsSent, pongsIn                                                        uint64 // the heartbeat's PINGs and the PONGs answering them
	creditStall, rtt, maxSilence                                              time.Duration
	ringBytesIn, ringBytesOut, ringBatchesIn, ringBatchesOut, ringFallbacks   uint64
	ringWakeups                                                               uint64
}

type phase uint8

const (
	phaseHandshake phase = iota
	phaseOpen
	phaseFailed
)

// coreConfig is what a core is made with: its side, its limits, and what the socket and
// the operating system know about the peer (the loop finds it out before the first event).
type coreConfig struct {
	isClient  bool
	limits    Limits
	transport string // "tcp", "unix", or the net.Addr network of an in-memory pipe
	remote    string // names the peer in errors
	// peerUID and peerPID come from SO_PEERCRED on a unix socket (peerCredErr if it
	// failed); peerPID 0 means the peer's process is unknown and it is judged by its bytes
	// alone.
	peerUID, peerPID int
	peerCredErr      error
	selfUID          int
	pool             bufferPool
	params           handshakeParams
	nonce            []byte // this side's handshake nonce
	// unaryFor returns the inline handler of a server's REQUEST, or nil to open a stream.
	unaryFor func(method []byte, fin bool) UnaryAppendHandler
}

func newCore(cfg coreConfig, now time.Time) *core {
	c := &core{}
	c.init(cfg, now)
	return c
}

func (c *core) init(cfg coreConfig, now time.Time) {
	*c = core{cfg: cfg, lim: cfg.limits.withDefaults(), streams: make(map[uint32]*coreStream)}
	c.dec = newDecoder(cfg.pool)
	c.out = newOutQueue()
	c.now, c.started, c.lastIn = now, now, now
}

// clock moves the core's time to now, unless now is earlier (events from goroutines that
// read the clock in one order and took the lock in the other).
func (c *core) clock(now time.Time) time.Time {
	if now.After(c.now) {
		c.now = now
	}
	return c.now
}

// actions are what an event asks of the loop, in order of execution.
type actions struct {
	accept []acceptReq  // server: streams to start handlers for
	wake   []wakeup     // streams whose waiters must look again
	calls  []callResult // unary calls completed
	inline []inlineReq  // server: unary requests to answer on the reading goroutine
	// flush: frames were queued that nobody is waiting to write; the event's goroutine
	// must not block on the socket, so the background flusher writes them.
	flush     bool
	data      bool     // a data frame was queued for a stream
	checkPeer bool     // look at the peer's process and report with peerState
	fail      *failure // the connection failed during this event
	// shmCreate (server, handshake): create shared-memory segments of this size and
	// report with shmCreated.
	shmCreate uint64
}

func (a *actions) empty() bool {
	return len(a.accept)+len(a.wake)+len(a.calls)+len(a.inline) == 0 && !a.flush && !a.checkPeer && a.fail == nil && a.shmCreate == 0
}

func (a *actions) reset() {
	if len(a.accept) > 0 {
		clear(a.accept)
		a.accept = a.accept[:0]
	}
	if len(a.wake) > 0 {
		clear(a.wake)
		a.wake = a.wake[:0]
	}
	if len(a.calls) > 0 {
		clear(a.calls)
		a.calls = a.calls[:0]
	}
	if len(a.inline) > 0 {
		clear(a.inline)
		a.inline = a.inline[:0]
	}
	a.flush, a.data, a.checkPeer, a.fail, a.shmCreate = false, false, false, nil, 0
}

// wakeup: a stream's receiver (recv) or sender (send) must look at its state again;
// cancel, if set, is why its context is to be canceled.
type wakeup struct {
	cs         *coreStream
	recv, send bool
	cancel     error
}

// callResult completes a unary call: end (valid only during done) or err; owned, if set,
// goes back to the pool after done.
type callResult struct {
	id    uint32
	done  CallDone
	end   []byte
	err   error
	owned []byte
}

// acceptReq is a server's new stream. args is the loop's to keep.
type acceptReq struct {
	cs      *coreStream
	args    []byte
	timeout time.Duration
	fin     bool // the REQUEST had FIN
}

// inlineReq is a unary request answered by the reading goroutine. method and args alias the
// read buffer: valid until the reader reads again.
type inlineReq struct {
	id      uint32
	method  []byte
	args    []byte
	handler UnaryAppendHandler
}

// failure is how the connection ended.
type failure struct {
	err error
	// tellBy: an ERROR for the peer is queued, to be written by then if nobody is writing
	// (best effort), before the socket closes. Zero: nothing to tell.
	tellBy    time.Time
	handshake bool // it failed before the handshake completed
	applied   bool // the loop's: Done is closed
}

// localPeerSilenceFactor: a local peer process that is still running is given this many
// heartbeat timeouts of silence before it is declared unresponsive.
const localPeerSilenceFactor = 10

// creditDelay is how long a receiver whose queue has drained holds back consumed bytes below
// its grant threshold before granting them anyway (see consume).
const creditDelay = 2 * time.Millisecond

// Bounds on writing the last words of a failing connection.
const (
	protocolErrorTell = 50 * time.Millisecond
	closeTell         = 100 * time.Millisecond
)

// ---- bytes in ----------------------------------------------------------------------------

// readSpace returns where the next received bytes go; only the reader calls it.
func (c *core) readSpace() []byte { return c.dec.space() }

// received records n bytes read into the slice readSpace returned, at now, and dispatches
// every complete frame (n may be 0: the frames already buffered). The handshake's frames
// are taken only up to the one that completes it: the rest wait for the open connection's
// reader.
func (c *core) received(now time.Time, n int, a *actions) {
	c.receivedBytes(now, n)
	for c.receiveFrames(now, 1<<30, a) {
	}
}

// receivedBytes records n bytes read into the slice readSpace returned, at now.
func (c *core) receivedBytes(now time.Time, n int) {
	now = c.clock(now)
	if n > 0 && c.phase != phaseFailed {
		c.dec.filled(n)
		c.bytesIn += uint64(n)
		c.lastIn = now
	}
}

// receiveFrames dispatches up to max of the complete frames buffered; more reports that it
// stopped at max with more to do. (A loop that executes the actions of every few frames,
// releasing its lock in between, lets a burst of replies flow while the senders they
// wake queue their next requests.)
func (c *core) receiveFrames(now time.Time, max int, a *actions) (more bool) {
	now = c.clock(now)
	for i := 0; c.phase != phaseFailed; i++ {
		if i == max {
			return c.dec.mayHaveFrame()
		}
		hs := c.phase == phaseHandshake
		f, ok, err := c.dec.next()
		if err != nil {
			c.decodeFailed(now, f, err, a)
			return false
		}
		if !ok {
			return false
		}
		c.framesIn++
		if hs {
			c.handshakeFrame(now, f, a)
			if c.phase != phaseHandshake {
				return false
			}
			continue
		}
		if err := c.dispatch(now, f, a); err != nil {
			c.protocolError(now, err, a)
			return false
		}
	}
	return false
}

// decodeFailed ends the connection over a byte stream that broke the framing.
func (c *core) decodeFailed(now time.Time, f inFrame, err error, a *actions) {
	if c.phase == phaseHandshake {
		if errors.Is(err, ErrVersion) {
			err = fmt.Errorf("%w%s", err, versionDetail(f))
		}
		c.handshakeFailed(now, err, a)
		return
	}
	c.protocolError(now, err, a)
}

// versionDetail returns what a peer of another version said in f's payload, if it decodes.
func versionDetail(f inFrame) string {
	if f.payload == nil {
		return ""
	}
	if f.h.Kind == KindError {
		if e, err := decodeErrorPayload(f.payload); err == nil {
			return " (peer says: " + e.Message + ")"
		}
	}
	if hl, err := DecodeHello(f.payload); err == nil && hl.Name != "" {
		return " (peer " + hl.Name + ")"
	}
	return ""
}

// readFailed reports that the byte stream ended (io.EOF) or broke (a read error).
func (c *core) readFailed(now time.Time, err error, a *actions) {
	now = c.clock(now)
	if c.phase == phaseFailed {
		return
	}
	trunc := c.dec.truncated()
	if c.phase == phaseHandshake {
		switch {
		case trunc != nil && errors.Is(err, io.EOF):
			err = trunc
		case errors.Is(err, io.EOF) && c.bytesIn == 0:
			err = fmt.Errorf("%w: %s closed the connection without sending anything", ErrConnClosed, c.cfg.remote)
		case errors.Is(err, io.EOF):
			err = fmt.Errorf("%w: %s closed the connection", ErrConnClosed, c.cfg.remote)
		}
		c.handshakeFailed(now, err, a)
		return
	}
	switch {
	case trunc != nil && errors.Is(err, io.EOF):
		c.protocolError(now, trunc, a)
	case errors.Is(err, io.EOF):
		c.fail(now, fmt.Errorf("%w: peer %s closed the connection", ErrConnClosed, c.cfg.remote), nil, 0, a)
	default:
		c.fail(now, fmt.Errorf("%w: read from %s: %w", ErrConnClosed, c.cfg.remote, err), nil, 0, a)
	}
}

// ---- time --------------------------------------------------------------------------------

// deadline is the earliest time the core wants a tick at; zero for none. A tick that comes
// early finds nothing due and is harmless, so a loop's timer set for a deadline the core
// has since moved later need not be reset.
func (c *core) deadline() time.Time {
	switch c.phase {
	case phaseHandshake:
		d := c.hs.end
		if c.cfg.isClient && !c.checking {
			d = earliest(d, c.silenceDue())
		}
		return d
	case phaseOpen:
		d := c.pingDue()
		if !c.checking {
			d = earliest(d, c.silenceDue())
		}
		for _, cs := range c.grants {
			d = earliest(d, cs.grantAt)
		}
		return d
	}
	return time.Time{}
}

// heardAt is when the peer last showed a sign of life: a byte read, or bytes seen
// waiting unread in the socket (this side's reader was behind, not the peer).
func (c *core) heardAt() time.Time { return latest(c.lastIn, c.unreadAt) }

// silenceDue is when the peer's silence is to be judged next.
func (c *core) silenceDue() time.Time {
	return latest(c.heardAt().Add(c.lim.HeartbeatTimeout), c.judgeAt)
}

// pingDue is when a PING is due: nothing written, or nothing received, for an interval,
// and at most one every half interval.
func (c *core) pingDue() time.Time {
	iv := c.lim.HeartbeatInterval
	return latest(earliest(c.lastOut, c.heardAt()).Add(iv), c.lastPing.Add(iv/2))
}

// tick is the timer's event. unread is the bytes waiting unread in the socket, or -1 if the
// loop cannot tell.
func (c *core) tick(now time.Time, unread int, a *actions) {
	now = c.clock(now)
	switch c.phase {
	case phaseHandshake:
		if !now.Before(c.hs.end) {
			c.handshakeFailed(now, fmt.Errorf("%w: no answer from %s %v after connecting", ErrProtocol, c.cfg.remote, now.Sub(c.started).Round(time.Millisecond)), a)
			return
		}
		if c.cfg.isClient {
			c.judgeSilence(now, -1, a)
		}
	case phaseOpen:
		if gap := now.Sub(c.lastTick); gap > c.lim.HeartbeatTimeout {
			c.stalledAt, c.stalledFor = now, gap
		}
		c.lastTick = now
		c.judgeSilence(now, unread, a)
		if c.phase != phaseOpen {
			return
		}
		c.grantDue(now, a)
		if !now.Before(c.pingDue()) {
			c.lastPing = now
			var buf [16]byte
			if c.queueAsync(KindPing, 0, mpAppendUint(buf[:0], uint64(now.UnixNano()))) == nil {
				c.pingsSent++
				a.flush = true
			}
		}
	}
}

// stalled is the error an open connection is to fail with when this process did not run
// for longer than the heartbeat timeout (it was stopped, or suspended), so that the peer,
// which heard nothing for that long, will have dropped it, though its close may not have
// been read yet: a request sent on it now would be lost with it. Conn.failIfStalled asks
// before a client picks a connection for a request, and only for a connection carrying
// no streams, which costs nothing but a redial to replace: a process merely starved that
// long (a collector at its limit, a loaded machine) may find its peer still there, and
// its running streams are left to the silence rule. nil otherwise.
func (c *core) stalled(now time.Time) error {
	if c.phase != phaseOpen {
		return nil
	}
	gap := now.Sub(c.lastTick)
	if gap <= c.lim.HeartbeatTimeout {
		if c.stalledAt.IsZero() {
			return nil
		}
		gap = c.stalledFor
	}
	return fmt.Errorf("%w: this process did not run for %v, over the heartbeat timeout %v: %s will have given up on the connection",
		ErrConnClosed, gap.Round(time.Millisecond), c.lim.HeartbeatTimeout, c.cfg.remote)
}

// expireHandshake ends a handshake at once, as its deadline would (the caller gave up).
func (c *core) expireHandshake(now time.Time, a *actions) {
	if c.phase == phaseHandshake {
		c.hs.end = c.clock(now)
		c.tick(now, -1, a)
	}
}

// judgeSilence applies the silence rule: a peer silent for HeartbeatTimeout has failed if
// its process is unknown; a local one is asked about (checkPeer).
func (c *core) judgeSilence(now time.Time, unread int, a *actions) {
	silent := now.Sub(c.heardAt())
	if silent >= c.lim.HeartbeatInterval && unread > 0 {
		c.unreadAt, silent = now, 0
	}
	c.maxSilence = max(c.maxSilence, silent)
	if silent < c.lim.HeartbeatTimeout || c.checking || now.Before(c.judgeAt) {
		return
	}
	if c.cfg.peerPID <= 0 {
		c.silenceFailed(now, fmt.Errorf("%w: %s", ErrPeerSilent, c.silenceText(silent)), a)
		return
	}
	c.checking = true
	a.checkPeer = true
}

func (c *core) silenceText(silent time.Duration) string {
	return fmt.Sprintf("nothing received from %s for %v", c.cfg.remote, silent.Round(time.Millisecond))
}

// peerState answers checkPeer: the peer process's state letter (/proc/<pid>/stat), or err
// if it cannot be read (it has exited). Gone, a zombie or stopped (SIGSTOP, a debugger),
// the silent peer has failed; running, its silence is its runtime's or the machine's (a
// process can sit for over a second behind a stop-the-world pause that waits for a long
// copy into fresh pages, on a machine with a load of 10 on 2 cores), and it is given
// localPeerSilenceFactor timeouts.
func (c *core) peerState(now time.Time, state byte, err error, a *actions) {
	now = c.clock(now)
	if !c.checking {
		return
	}
	c.checking = false
	if c.phase == phaseFailed {
		return
	}
	silent := now.Sub(c.heardAt())
	if silent < c.lim.HeartbeatTimeout {
		return // bytes came meanwhile
	}
	what, pid := c.silenceText(silent), c.cfg.peerPID
	switch {
	case err != nil:
		err = fmt.Errorf("%w: %s, and its process %d: %w", ErrPeerSilent, what, pid, err)
	case state == 'T' || state == 't':
		err = fmt.Errorf("%w: %s, whose process %d is stopped", ErrPeerSilent, what, pid)
	case state == 'Z' || state == 'X' || state == 'x':
		err = fmt.Errorf("%w: %s, whose process %d has exited", ErrPeerSilent, what, pid)
	case silent > localPeerSilenceFactor*c.lim.HeartbeatTimeout:
		err = fmt.Errorf("%w: %s, though its process %d is running (state %c)", ErrPeerSilent, what, pid, state)
	default:
		c.judgeAt = now.Add(c.lim.HeartbeatInterval / 2)
		return
	}
	c.silenceFailed(now, err, a)
}

func (c *core) silenceFailed(now time.Time, err error, a *actions) {
	if c.phase == phaseHandshake {
		c.handshakeFailed(now, err, a)
		return
	}
	c.fail(now, err, nil, 0, a)
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// ---- output ------------------------------------------------------------------------------

// queueAsync queues a frame for an event that must not block (the reader, the timer, a
// context's cancellation). Only such frames count against maxAsyncBacklog: batches queued
// behind a slow write are bounded by flow control and are not the peer's doing. PING and
// PONG take the urgent lane, and a PING still waiting to go out makes another redundant.
func (c *core) queueAsync(kind Kind, stream uint32, payload []byte) error {
	if c.phase == phaseFailed {
		return c.err
	}
	r := c.out.pend
	if r.async > maxAsyncBacklog {
		return fmt.Errorf("%w: %d bytes of replies queued: the peer is not reading", ErrProtocol, r.async)
	}
	n := r.bytes
	switch {
	case kind == KindPing && len(r.urgent) > 0:
		return nil
	case kind == KindPing || kind == KindPong:
		c.out.urgent(kind, payload)
	default:
		c.out.frame(kind, 0, stream, nil, payload)
	}
	r.async += r.bytes - n
	return nil
}

// writable reports whether rounds may be written: the connection has not failed.
func (c *core) writable() bool { return c.phase != phaseFailed }

// wrote takes back round r (number n) after a write that moved moved bytes and ended with
// err; a write error fails the connection (a frame may have been cut short).
func (c *core) wrote(now time.Time, r *writeRound, n uint64, moved int64, err error, a *actions) {
	now = c.clock(now)
	if moved > 0 {
		c.lastOut = now
	}
	if r.ring > 0 {
		c.ringWakeups++ // one write, one wake-up of the peer, for the RBATCHes it carried
	}
	c.out.done(r, n)
	if err != nil && c.phase != phaseFailed {
		err = fmt.Errorf("%w: write: %w", ErrConnClosed, err)
		if c.phase == phaseHandshake {
			c.handshakeFailed(now, fmt.Errorf("handshake: %w", err), a)
			return
		}
		c.fail(now, err, nil, 0, a)
	}
}

// queueEncoded queues n frames already encoded into b (a server's inline replies).
func (c *core) queueEncoded(b []byte, n int) error {
	if c.phase == phaseFailed {
		return c.err
	}
	c.out.encoded(b, n)
	return nil
}

// ---- failure -----------------------------------------------------------------------------

// fail ends the connection once: every stream fails with err and is woken, every pending
// call completes with err, and nothing more is queued. With tell (an ERROR payload of
// code) the pending round is kept, ERROR appended, for the loop to write by now+within if
// it can; without, the pending round is dropped.
func (c *core) fail(now time.Time, err error, tell []byte, within time.Duration, a *actions) {
	if c.phase == phaseFailed {
		return
	}
	f := &failure{err: err, handshake: c.phase == phaseHandshake}
	if tell != nil {
		c.out.frame(KindError, 0, 0, nil, tell)
		f.tellBy = now.Add(within)
	} else {
		c.out.drop()
	}
	c.phase, c.err = phaseFailed, err
	for _, cs := range c.streams {
		c.failStream(cs, err, a)
	}
	clear(c.streams)
	c.calls.drain(func(id uint32, done CallDone) {
		a.calls = append(a.calls, callResult{id: id, done: done, err: err})
	})
	clear(c.grants)
	c.grants = c.grants[:0]
	c.checking = false
	a.fail = f
}

// protocolError fails the connection over the peer's violation, telling it why on stream 0.
func (c *core) protocolError(now time.Time, err error, a *actions) {
	msg := err.Error()
	if len(msg) > 400 {
		msg = msg[:400]
	}
	c.fail(now, err, appendErrorPayload(nil, CodeProtocol, msg), protocolErrorTell, a)
}

// closeWith fails the connection telling the peer code and msg on stream 0: how a server
// tells its clients it is going away.
func (c *core) closeWith(now time.Time, code, msg string, a *actions) {
	c.fail(c.clock(now), fmt.Errorf("%w: %s: %s", ErrConnClosed, code, msg), appendErrorPayload(nil, code, msg), closeTell, a)
}

// ---- counters ----------------------------------------------------------------------------

// load is what a Client balances on: the streams open, or, if more, the streams still
// holding a claim on the data buffer (ended by the peer, not yet closed), plus pending
// calls.
func (c *core) load() int { return max(len(c.streams), c.dataStreams) + c.calls.pending }
