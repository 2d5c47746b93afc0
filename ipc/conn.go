package ipc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	arrowipc "github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Limits are a connection's knobs. Zero fields take the defaults below.
type Limits struct {
	MaxFrame     int // largest payload this side accepts (DefaultMaxFrame)
	StreamWindow int // initial credit this side grants each stream (DefaultStreamWindow)
	MaxStreams   int // server: concurrent streams per connection (DefaultMaxStreams)
	// MaxConnBuffer bounds the data a connection may hold received and not yet consumed
	// (DefaultMaxConnBuffer). Each stream that can receive data may hold up to one window
	// (one frame, if a frame is larger than the window), so such streams are capped at
	// MaxConnBuffer/StreamWindow per connection: on a client, streams opened with Open; on
	// a server, streams whose REQUEST lacks FIN (the client may upload). Unary calls
	// (FIN, no uploads; Go discards any batches) do not count.
	MaxConnBuffer     int
	HeartbeatInterval time.Duration // ping after this long without input or output (DefaultHeartbeatInterval)
	HeartbeatTimeout  time.Duration // fail the connection after this long without input (DefaultHeartbeatTimeout)
	HandshakeTimeout  time.Duration // bound on the whole handshake (DefaultHandshakeTimeout)
}

// Defaults for Limits.
const (
	DefaultStreamWindow      = 16 << 20
	DefaultMaxStreams        = 1024
	DefaultMaxConnBuffer     = 1 << 30
	DefaultHeartbeatInterval = 250 * time.Millisecond
	DefaultHeartbeatTimeout  = time.Second
	DefaultHandshakeTimeout  = 5 * time.Second
)

// DataStreams is the number of streams that can receive data a connection allows at once:
// MaxConnBuffer/StreamWindow, at least 1.
func (l Limits) DataStreams() int {
	l = l.withDefaults()
	return max(1, l.MaxConnBuffer/l.StreamWindow)
}

func (l Limits) withDefaults() Limits {
	if l.MaxFrame <= 0 {
		l.MaxFrame = DefaultMaxFrame
	}
	l.MaxFrame = min(max(l.MaxFrame, MinMaxFrame), MaxFrameCap)
	if l.StreamWindow <= 0 {
		l.StreamWindow = DefaultStreamWindow
	}
	l.StreamWindow = min(max(l.StreamWindow, MinMaxFrame), MaxFrameCap)
	if l.MaxStreams <= 0 {
		l.MaxStreams = DefaultMaxStreams
	}
	if l.MaxConnBuffer <= 0 {
		l.MaxConnBuffer = DefaultMaxConnBuffer
	}
	l.MaxConnBuffer = max(l.MaxConnBuffer, l.StreamWindow)
	if l.HeartbeatInterval <= 0 {
		l.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if l.HeartbeatTimeout <= 0 {
		l.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if l.HeartbeatTimeout < 2*l.HeartbeatInterval {
		l.HeartbeatTimeout = 2 * l.HeartbeatInterval
	}
	if l.HandshakeTimeout <= 0 {
		l.HandshakeTimeout = DefaultHandshakeTimeout
	}
	return l
}

// replyFlushBytes is how many bytes of inline replies a server connection gathers before it
// writes them even though more requests are buffered.
const replyFlushBytes = 32 << 10

// Conn is one established link connection carrying many streams. A client opens streams
// with Open; a server's connections dispatch the streams their peer opens to the server's
// handlers. A Conn is safe for concurrent use.
type Conn struct {
	id        uint64
	nc        net.Conn
	sio       *sockIO
	fr        *frameReader
	fw        *frameWriter
	pool      *BufferPool
	log       *slog.Logger
	baseLog   *slog.Logger
	isClient  bool
	transport string // "tcp", "unix" or the net.Addr network of an in-memory pipe
	remote    string
	lim       Limits
	peer      Hello // the peer's hello: its limits, name, instance, unix endpoints
	sendOpts  []arrowipc.Option
	onRequest func(*Stream)   // server: start a handler for a new stream
	baseCtx   context.Context // server: parent of every handler's context
	unaryFor  func(method []byte, fin bool) UnaryAppendHandler
	runUnary  func(h UnaryAppendHandler, method, args, dst []byte) ([]byte, error)

	mu          sync.Mutex
	streams     map[uint32]*Stream
	nstreams    atomic.Int64 // len(streams), readable without mu
	dataStreams int          // streams that count against Limits.DataStreams, under mu
	err         error
	done        chan struct{}

	calls   *callTable    // client: pending Go calls
	waiters sync.Pool     // client: *callWaiter for Call
	lastID  atomic.Uint32 // client: last id allocated (under fw.mu); server: highest id the peer opened
	opened  atomic.Uint64

	// Server: inline replies encoded by the reading goroutine and not yet handed to the
	// writer; they go out together once no further complete request is buffered.
	replies  []byte
	nreplies int

	rr      readRole    // client connections: who reads the socket (see readrole.go)
	sawData atomic.Bool // a data frame was dispatched since the last look

	lastRead atomic.Int64 // unix nanos of the last read that returned data
	started  time.Time
	// handshakeEnd is the handshake's deadline (the handshake timeout or the caller's
	// deadline, whichever is sooner); used only during the handshake.
	handshakeEnd time.Time
	peerPID      int // a unix peer's process (SO_PEERCRED), 0 if unknown

	// maxDataFrame is the largest data frame received: a receiver grants at once when a
	// frame that large could not be sent with the credit its peer has (Stream.nextMessage).
	maxDataFrame atomic.Int64

	batchesIn, batchesOut   atomic.Uint64
	creditStallNs           atomic.Int64
	creditWaits, lateFrames atomic.Uint64
	rttNs                   atomic.Int64
	maxSilenceNs            atomic.Int64 // longest silence of the peer the heartbeat saw
}

// connIDs hands out connection ids for logs; it is per process but only an identity counter.
var connIDs atomic.Uint64

func newConn(nc net.Conn, isClient bool, pool *BufferPool, lim Limits, log *slog.Logger) *Conn {
	if pool == nil {
		pool = NewBufferPool(0)
	}
	if log == nil {
		log = slog.Default()
	}
	tuneSocket(nc) // done already for connections from Dial and Listener
	c := &Conn{
		id:       connIDs.Add(1),
		nc:       nc,
		sio:      newSockIO(nc),
		pool:     pool,
		isClient: isClient,
		lim:      lim.withDefaults(),
		streams:  make(map[uint32]*Stream),
		calls:    new(callTable),
		waiters:  sync.Pool{New: newCallWaiter},
		done:     make(chan struct{}),
		started:  time.Now(),
	}
	c.transport = nc.LocalAddr().Network()
	c.baseLog = log
	remote := nc.RemoteAddr().String()
	if c.transport == "unix" {
		// A unix client's address is unnamed and the server's is the name it was bound
		// under; name the peer by its process instead.
		remote = "unix peer"
		if uid, pid, err := peerCred(nc); err == nil {
			remote = fmt.Sprintf("unix peer pid %d uid %d", pid, uid)
			c.peerPID = pid
		}
	}
	c.setRemote(remote)
	c.fr = newFrameReader(c.sio, pool, &c.lastRead)
	c.fw = newFrameWriter(c.sio)
	c.lastRead.Store(time.Now().UnixNano())
	return c
}

// setRemote names the peer in errors and logs.
func (c *Conn) setRemote(r string) {
	c.remote = r
	c.log = c.baseLog.With("conn", c.id, "transport", c.transport, "remote", r)
}

// start runs the connection after a successful handshake.
func (c *Conn) start() {
	c.fr.maxFrame = uint32(c.lim.MaxFrame)
	c.lastRead.Store(time.Now().UnixNano())
	if c.isClient {
		c.rr.bgKick = make(chan struct{}, 1)
		go c.bgReader()
		signal(c.rr.bgKick)
	} else {
		go c.readLoop()
	}
	go c.heartbeatLoop()
	go c.fw.flushLoop(c.done)
}

// Done is closed when the connection has failed or been closed; by then no frame can be
// queued on it any more (a later END or request fails with ErrNotSent).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended, nil while it is up.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Transport returns "tcp" or "unix".
func (c *Conn) Transport() string { return c.transport }

// Remote returns the peer's address.
func (c *Conn) Remote() string { return c.remote }

// Peer returns the peer's hello.
func (c *Conn) Peer() Hello { return c.peer }

// load is what a Client balances on: the streams open on the connection, or, if more, the
// streams still holding a claim on its data buffer (ended by the peer, not yet closed), plus
// pending calls.
func (c *Conn) load() int {
	c.mu.Lock()
	n := max(len(c.streams), c.dataStreams)
	c.mu.Unlock()
	return n + int(c.calls.pending.Load())
}

// ActiveStreams returns the number of streams open on the connection.
func (c *Conn) ActiveStreams() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.streams)
}

// Close closes the connection; its streams fail with ErrConnClosed.
func (c *Conn) Close() error {
	c.fail(fmt.Errorf("%w: closed by this side", ErrConnClosed))
	return nil
}

// closeWith sends an ERROR on stream 0 (best effort, bounded by a short write deadline) and
// closes the connection: how a server tells its clients it is going away.
func (c *Conn) closeWith(code, msg string) {
	_ = c.nc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	var buf [256]byte
	_ = c.fw.write(&frame{kind: KindError, small: appendErrorPayload(buf[:0], code, msg)})
	c.fail(fmt.Errorf("%w: %s: %s", ErrConnClosed, code, msg))
}

// fail ends the connection once: every stream fails with err, blocked writers and readers
// return, and the socket closes.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	streams := make([]*Stream, 0, len(c.streams))
	for _, s := range c.streams {
		streams = append(streams, s)
	}
	clear(c.streams)
	c.nstreams.Store(0)
	c.fw.fail(err) // before done closes (see Done); c.mu before the writer's lock, as in Open
	close(c.done)
	c.mu.Unlock()
	// Once the writer has failed no Go call can be added, so the drain sees them all.
	c.fw.fail(err)
	for _, done := range c.calls.drain() {
		done(nil, err)
	}
	c.nc.Close()
	for _, s := range streams {
		s.failConn(err)
	}
	// The log comes last: a log write can block (stderr on a pipe nobody drains), and
	// nothing a waiter on the connection needs may wait behind it. With the log first, a
	// stalled log kept the socket of a frozen peer open and its streams waiting, unbounded.
	switch {
	case errors.Is(err, ErrProtocol), errors.Is(err, ErrPeerSilent), errors.Is(err, ErrVersion), errors.Is(err, ErrAuth):
		c.log.Warn("link: closing connection", "err", err)
	default:
		c.log.Debug("link: connection closed", "err", err)
	}
}

// protocolError reports a peer's protocol violation: best effort (a write bounded by a short
// deadline), it tells the peer why on stream 0, then fails the connection.
func (c *Conn) protocolError(err error) {
	var buf [512]byte
	msg := err.Error()
	if len(msg) > 400 {
		msg = msg[:400]
	}
	_ = c.nc.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	_ = c.fw.write(&frame{kind: KindError, small: appendErrorPayload(buf[:0], CodeProtocol, msg)})
	c.fail(err)
}

func (c *Conn) readLoop() {
	for {
		f, err := c.fr.next()
		if err != nil {
			c.readFailed(err)
			return
		}
		if err := c.dispatch(f); err != nil {
			c.protocolError(err)
			return
		}
		// Inline replies are written together once no further complete frame is buffered:
		// pipelined requests then share one writev, as a raw server's buffered replies do.
		if c.nreplies > 0 && (len(c.replies) >= replyFlushBytes || !c.fr.hasFrame()) {
			err := c.fw.writeEncoded(c.replies, c.nreplies)
			c.replies, c.nreplies = c.replies[:0], 0
			if cap(c.replies) > 4*replyFlushBytes { // a huge END once: do not keep its buffer
				c.replies = nil
			}
			if err != nil {
				c.fail(err)
				return
			}
		}
	}
}

func (c *Conn) readFailed(err error) {
	switch {
	case errors.Is(err, ErrProtocol), errors.Is(err, ErrVersion):
		c.protocolError(err)
	case errors.Is(err, io.EOF):
		c.fail(fmt.Errorf("%w: peer %s closed the connection", ErrConnClosed, c.remote))
	default:
		c.mu.Lock()
		failed := c.err != nil
		c.mu.Unlock()
		if !failed {
			c.fail(fmt.Errorf("%w: read from %s: %w", ErrConnClosed, c.remote, err))
		}
	}
}

// lookup returns the live stream id, or nil. late reports that id was used before and has
// been retired, so frames for it are stale rather than illegal.
func (c *Conn) lookup(id uint32) (s *Stream, late bool) {
	c.mu.Lock()
	s = c.streams[id]
	c.mu.Unlock()
	return s, s == nil && id <= c.lastID.Load()
}

// dispatch routes one frame. It runs on the reader goroutine and never blocks on the peer.
// It owns f.owned: data frames hand it to their stream, other frames return it to the pool.
func (c *Conn) dispatch(f inFrame) error {
	h := f.h
	if f.owned != nil && !h.Kind.isData() {
		defer c.pool.Put(f.owned)
	}
	switch h.Kind {
	case KindPing:
		nonce, err := decodeUintPayload(h.Kind, f.payload)
		if err != nil {
			return err
		}
		var buf [16]byte
		return c.fw.writeAsync(&frame{kind: KindPong, small: mpAppendUint(buf[:0], nonce)})
	case KindPong:
		nonce, err := decodeUintPayload(h.Kind, f.payload)
		if err != nil {
			return err
		}
		if rtt := time.Now().UnixNano() - int64(nonce); rtt >= 0 {
			c.rttNs.Store(rtt)
		}
		return nil
	case KindHello:
		return fmt.Errorf("%w: HELLO after the handshake", ErrProtocol)
	case KindRequest:
		return c.onRequestFrame(f)
	case KindError:
		e, err := decodeErrorPayload(f.payload)
		if err != nil {
			return err
		}
		if done := c.takeCall(h.Stream); done != nil {
			done(nil, e)
			return nil
		}
		if h.Stream == 0 {
			c.fail(fmt.Errorf("%w: peer closed it: %w", ErrConnClosed, e))
			return nil
		}
		if s, late := c.lookup(h.Stream); s != nil {
			s.onRemoteEnd(nil, e)
		} else if !late {
			return fmt.Errorf("%w: ERROR for stream %d, which was never opened", ErrProtocol, h.Stream)
		}
		return nil
	}

	if h.Kind == KindEnd {
		if done := c.takeCall(h.Stream); done != nil {
			if err := mpValidMap(f.payload); err != nil {
				return fmt.Errorf("%w: END payload on stream %d: %w", ErrProtocol, h.Stream, err)
			}
			done(f.payload, nil)
			return nil
		}
	}
	s, late := c.lookup(h.Stream)
	if s == nil {
		if f.owned != nil && h.Kind.isData() {
			c.pool.Put(f.owned)
		}
		if c.isClient && c.calls.has(h.Stream) {
			switch h.Kind {
			case KindSchema, KindBatch:
				// A unary call discards the server's batches; handing their credit straight
				// back keeps a server that streams on it from stalling.
				c.lateFrames.Add(1)
				var buf [16]byte
				return c.fw.writeAsync(&frame{kind: KindCredit, stream: h.Stream, small: mpAppendUint(buf[:0], uint64(max(h.Length, 1)))})
			case KindCancel:
				reason, err := decodeCancelPayload(f.payload)
				if err != nil {
					return err
				}
				if done := c.takeCall(h.Stream); done != nil {
					done(nil, fmt.Errorf("call %d: %w: %s", h.Stream, ErrRemoteCanceled, reason))
				}
				return nil
			}
		}
		if late {
			c.lateFrames.Add(1)
			if h.Kind.isData() || h.Kind == KindEnd || h.Kind == KindCredit || h.Kind == KindCancel {
				return nil
			}
		}
		return fmt.Errorf("%w: %v frame for stream %d, which was never opened", ErrProtocol, h.Kind, h.Stream)
	}
	switch h.Kind {
	case KindSchema, KindBatch:
		c.sawData.Store(true)
		return s.onData(f)
	case KindEnd:
		if err := mpValidMap(f.payload); err != nil {
			return fmt.Errorf("%w: END payload on stream %d: %w", ErrProtocol, h.Stream, err)
		}
		s.onRemoteEnd(append([]byte(nil), f.payload...), nil)
		return nil
	case KindCredit:
		n, err := decodeUintPayload(h.Kind, f.payload)
		if err != nil {
			return err
		}
		if n == 0 || n > MaxFrameCap {
			return fmt.Errorf("%w: CREDIT of %d bytes on stream %d", ErrProtocol, n, h.Stream)
		}
		s.onCredit(int64(n))
		return nil
	case KindCancel:
		reason, err := decodeCancelPayload(f.payload)
		if err != nil {
			return err
		}
		s.onRemoteCancel(reason)
		return nil
	}
	return fmt.Errorf("%w: unexpected %v frame", ErrProtocol, h.Kind)
}

func (c *Conn) onRequestFrame(f inFrame) error {
	h := f.h
	if c.isClient {
		return fmt.Errorf("%w: a server may not open streams (REQUEST on stream %d)", ErrProtocol, h.Stream)
	}
	q, err := decodeRequestRaw(f.payload)
	if err != nil {
		return fmt.Errorf("stream %d: %w", h.Stream, err)
	}
	// Only this goroutine writes a server connection's lastID.
	if last := c.lastID.Load(); h.Stream <= last {
		return fmt.Errorf("%w: REQUEST reuses stream id %d (last opened %d)", ErrProtocol, h.Stream, last)
	}
	c.lastID.Store(h.Stream)
	if u := c.unaryFor(q.method, h.Flags&FlagFin != 0); u != nil {
		// Inline: no stream is registered, so frames the client may still send for this id
		// (a CANCEL racing the reply) are dropped as late.
		c.opened.Add(1)
		// The reply is built in place: a header placeholder, then the handler appends the
		// END payload behind it.
		start := len(c.replies)
		out, err := c.runUnary(u, q.method, q.args, append(c.replies, zeroHeader...))
		kind := KindEnd
		if err != nil {
			code, msg := errorCode(err)
			if len(msg) > 4000 {
				msg = msg[:4000]
			}
			kind = KindError
			out = appendErrorPayload(append(c.replies[:start], zeroHeader...), code, msg)
		}
		PutHeader(out[start:], Header{Kind: kind, Stream: h.Stream, Length: uint32(len(out) - start - HeaderSize)})
		c.replies = out
		c.nreplies++
		return nil
	}
	method := string(q.method)
	c.mu.Lock()
	if len(c.streams) >= c.lim.MaxStreams {
		c.mu.Unlock()
		var buf [128]byte
		msg := fmt.Sprintf("connection has %d streams open, the limit", c.lim.MaxStreams)
		return c.fw.writeAsync(&frame{kind: KindError, stream: h.Stream, small: appendErrorPayload(buf[:0], CodeTooManyStreams, msg)})
	}
	uploads := h.Flags&FlagFin == 0
	if uploads && c.dataStreams >= c.lim.DataStreams() {
		c.mu.Unlock()
		var buf [256]byte
		msg := fmt.Sprintf("connection has %d streams open that may upload batches, the limit (MaxConnBuffer %d / window %d); send requests without uploads with FIN", c.dataStreams, c.lim.MaxConnBuffer, c.lim.StreamWindow)
		return c.fw.writeAsync(&frame{kind: KindError, stream: h.Stream, small: appendErrorPayload(buf[:0], CodeTooManyStreams, msg)})
	}
	s := newStream(c, h.Stream, false, method, append([]byte(nil), q.args...))
	s.timeout = q.Timeout
	s.ctx, s.cancelCtx = context.WithCancelCause(c.baseCtx)
	if q.Timeout > 0 {
		var stop context.CancelFunc
		s.ctx, stop = context.WithTimeout(s.ctx, q.Timeout)
		parent := s.cancelCtx
		s.cancelCtx = func(err error) { stop(); parent(err) }
	}
	if h.Flags&FlagFin != 0 {
		s.remoteFin = true
	}
	s.countsData = uploads
	if uploads {
		c.dataStreams++
	}
	c.streams[h.Stream] = s
	c.nstreams.Add(1)
	c.opened.Add(1)
	c.mu.Unlock()
	c.onRequest(s)
	return nil
}

// noteDataFrame records a received data frame's length in maxDataFrame.
func (c *Conn) noteDataFrame(n int64) {
	for {
		m := c.maxDataFrame.Load()
		if n <= m || c.maxDataFrame.CompareAndSwap(m, n) {
			return
		}
	}
}

// zeroHeader is the placeholder a reply's header is written over (HeaderSize bytes).
const zeroHeader = "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// releaseData ends s's claim on the connection's data buffer: once its queue has been
// released (Close on a client, the handler's end on a server), not when the peer ends it,
// since ended streams may still hold data.
func (c *Conn) releaseData(s *Stream) {
	c.mu.Lock()
	if s.countsData {
		s.countsData = false
		c.dataStreams--
	}
	c.mu.Unlock()
}

func (c *Conn) retire(s *Stream) {
	c.mu.Lock()
	if c.streams[s.id] == s {
		delete(c.streams, s.id)
		c.nstreams.Add(-1)
	}
	c.mu.Unlock()
}

// heartbeatLoop keeps the connection's liveness apart from everything else it carries. It
// runs on a timer, which the Go scheduler runs promptly even when every processor is busy,
// unlike the goroutine a socket wakes (the reader), which can wait hundreds of
// milliseconds in a process busy with CPU-bound work. So:
//   - the peer hears from this side at least every interval: a PING goes out when nothing
//     was written, or nothing received, for an interval (and PINGs and PONGs overtake
//     queued batches), whatever the reader and the handlers are doing;
//   - the peer counts as alive while bytes arrive, read or not: while bytes wait unread in
//     the socket's receive queue, this side's own reader is behind, and any silence is its
//     doing (the peer may even be blocked writing to it), not the peer's;
//   - a unix peer silent for HeartbeatTimeout is declared dead if its process is gone or
//     stopped, and given longer if it is running (silenceVerdict).
//
// A stopped or dead peer sends nothing and is declared dead after HeartbeatTimeout.
func (c *Conn) heartbeatLoop() {
	t := time.NewTicker(c.lim.HeartbeatInterval / 2)
	defer t.Stop()
	var buf [16]byte
	var unreadAt int64 // when bytes were last seen waiting unread in the socket
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
		}
		now := time.Now().UnixNano()
		silent := time.Duration(now - max(c.lastRead.Load(), unreadAt))
		if silent >= c.lim.HeartbeatInterval {
			if n, ok := c.sio.unread(); ok && n > 0 {
				unreadAt, silent = now, 0
			}
		}
		c.noteSilence(silent)
		if silent > c.lim.HeartbeatTimeout {
			if err := c.silenceVerdict(silent); err != nil {
				c.fail(err)
				return
			}
		}
		if c.isClient {
			c.kickIdleReader()
		}
		quiet := time.Duration(now - c.fw.lastWrite.Load())
		if silent >= c.lim.HeartbeatInterval || quiet >= c.lim.HeartbeatInterval {
			_ = c.fw.writeAsync(&frame{kind: KindPing, small: mpAppendUint(buf[:0], uint64(now))})
		}
	}
}

// localPeerSilenceFactor: a local peer process that is still running is given this many
// heartbeat timeouts of silence before it is declared unresponsive.
const localPeerSilenceFactor = 10

// silenceVerdict decides about a peer silent for longer than the heartbeat timeout: the
// error to fail the connection with, or nil to wait. A peer of unknown process (TCP) has
// failed. A unix peer's process is looked at: gone, stopped (SIGSTOP, a debugger) or a
// zombie, it has failed; running, its silence is the Go runtime's or the machine's (a
// process can sit for over a second behind a stop-the-world pause that waits for a long
// copy into fresh pages, on a machine with a load of 10 on 2 cores), and it is given
// localPeerSilenceFactor timeouts before it is declared unresponsive.
func (c *Conn) silenceVerdict(silent time.Duration) error {
	what := fmt.Sprintf("nothing received from %s for %v", c.remote, silent.Round(time.Millisecond))
	if c.peerPID <= 0 {
		return fmt.Errorf("%w: %s", ErrPeerSilent, what)
	}
	state, err := processState(c.peerPID)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %s, and its process %d: %w", ErrPeerSilent, what, c.peerPID, err)
	case state == 'T' || state == 't':
		return fmt.Errorf("%w: %s, whose process %d is stopped", ErrPeerSilent, what, c.peerPID)
	case state == 'Z' || state == 'X' || state == 'x':
		return fmt.Errorf("%w: %s, whose process %d has exited", ErrPeerSilent, what, c.peerPID)
	case silent > localPeerSilenceFactor*c.lim.HeartbeatTimeout:
		return fmt.Errorf("%w: %s, though its process %d is running (state %c)", ErrPeerSilent, what, c.peerPID, state)
	}
	return nil
}

// noteSilence records the longest silence of the peer seen by the heartbeat.
func (c *Conn) noteSilence(d time.Duration) {
	if int64(d) > c.maxSilenceNs.Load() {
		c.maxSilenceNs.Store(int64(d))
	}
}

// Open starts a stream calling method with args (one msgpack value, nil for none). With fin
// the client sends nothing more on the stream (no batches, no END). The stream lives until
// the server ends it, ctx is done, or Cancel or Close is called; the caller must Close it.
func (c *Conn) Open(ctx context.Context, method string, args []byte, fin bool) (*Stream, error) {
	if !c.isClient {
		return nil, errors.New("ipc: Open on a server-side connection")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	if len(c.streams) >= int(c.peer.MaxStreams) {
		c.mu.Unlock()
		return nil, &RemoteError{Code: CodeTooManyStreams, Message: fmt.Sprintf("%d streams open on the connection, the peer's limit", len(c.streams))}
	}
	if c.dataStreams >= c.lim.DataStreams() {
		n := c.dataStreams
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: %d streams open on the connection to %s, the limit of Limits.MaxConnBuffer (%d) / StreamWindow (%d); close finished streams or raise MaxConnBuffer", ErrTooManyStreams, n, c.remote, c.lim.MaxConnBuffer, c.lim.StreamWindow)
	}
	var timeout time.Duration
	if dl, ok := ctx.Deadline(); ok {
		if timeout = time.Until(dl); timeout <= 0 {
			c.mu.Unlock()
			return nil, context.DeadlineExceeded
		}
	}
	var flags Flags
	if fin {
		flags = FlagFin
	}
	var buf [512]byte
	req := frame{kind: KindRequest, flags: flags, small: appendRequest(buf[:0], method, args, timeout)}
	// The id is allocated and the REQUEST queued under the writer's lock so ids reach the
	// peer in increasing order, and the stream is registered before c.mu is released, so
	// the reader cannot see the reply first; the write itself happens after.
	round, err := c.fw.enqueueWith(&req, c.allocID)
	if err != nil {
		c.mu.Unlock()
		return nil, err
	}
	s := newStream(c, req.stream, true, method, nil)
	s.localFin = fin
	s.ctx = ctx
	s.countsData = true
	c.dataStreams++
	c.streams[s.id] = s
	c.nstreams.Add(1)
	c.opened.Add(1)
	c.mu.Unlock()
	if err := c.fw.flushQueued(round); err != nil {
		c.retire(s)
		return nil, err
	}
	if ctx.Done() != nil {
		s.stopAfter = context.AfterFunc(ctx, func() { s.cancel(context.Cause(ctx)) })
	}
	return s, nil
}

// CallDone receives the outcome of a call made with Go: the server's END payload (valid
// only during the callback) or an error. It runs on the goroutine reading the connection,
// so it must be quick and must not block; it may call Go.
type CallDone func(end []byte, err error)

// Go starts a unary call without waiting for it: done is called with the reply. With flush
// the request is written now (combined with others being written); without, it waits for
// the next Flush or write on the connection, so a caller can queue many and write them with
// one syscall. Batches the server may send on the call are discarded (their credit is
// granted back at once, so the server is never held up).
func (c *Conn) Go(method string, args []byte, flush bool, done CallDone) error {
	_, err := c.goCall(method, args, 0, flush, done, true)
	return err
}

// goCall is Go with a deadline budget for the server; it returns the call's stream id.
// Without wake, the caller is about to wait for the reply and read the socket itself, so no
// other reader is woken.
func (c *Conn) goCall(method string, args []byte, timeout time.Duration, flush bool, done CallDone, wake bool) (uint32, error) {
	if !c.isClient {
		return 0, errors.New("ipc: Go on a server-side connection")
	}
	if done == nil {
		return 0, errors.New("ipc: Go without a callback")
	}
	first := false
	id, round, err := c.fw.enqueueRequest(FlagFin, method, args, timeout, func() (uint32, error) {
		if c.nstreams.Load()+c.calls.pending.Load() >= int64(c.peer.MaxStreams) {
			return 0, &RemoteError{Code: CodeTooManyStreams, Message: "the peer's stream limit is reached"}
		}
		id, err := c.allocID()
		if err == nil {
			first = c.calls.add(id, done)
		}
		return id, err
	})
	if err != nil {
		return 0, err
	}
	c.opened.Add(1)
	if first && wake {
		// Replies need a reader; while calls are pending, whoever stops reading hands the
		// role on (releaseRead), so only the first pending call must wake one.
		c.kickIdleReader()
	}
	if flush {
		return id, c.fw.flushQueued(round)
	}
	return id, nil
}

// Flush writes every queued frame.
func (c *Conn) Flush() error {
	c.fw.mu.Lock()
	round := c.fw.round
	c.fw.mu.Unlock()
	return c.fw.flushQueued(round)
}

func (c *Conn) takeCall(id uint32) CallDone {
	if !c.isClient || id == 0 {
		return nil
	}
	return c.calls.take(id)
}

// allocID gives f the next stream id. It runs under the frame writer's lock, which
// serialises every allocation.
func (c *Conn) allocID() (uint32, error) {
	id := c.lastID.Load()
	if id == 1<<32-1 {
		return 0, fmt.Errorf("%w: stream ids exhausted", ErrConnClosed)
	}
	c.lastID.Store(id + 1)
	return id + 1, nil
}

// Call is a unary request: a REQUEST with FIN (carrying ctx's deadline), whose END payload (a
// msgpack map) it returns; batches the server sends are discarded. It runs as a Go call the
// caller waits for, reading the socket itself while nobody else does, so the reply reaches
// it without a hand-off and without the bookkeeping of a Stream. If ctx ends first the
// server is sent a CANCEL.
func (c *Conn) Call(ctx context.Context, method string, args []byte) ([]byte, error) {
	end, err, _ := c.call(ctx, method, args)
	return end, err
}

// call is Call; sent reports whether the request was queued (it may have run).
func (c *Conn) call(ctx context.Context, method string, args []byte) (end []byte, err error, sent bool) {
	if err := ctx.Err(); err != nil {
		return nil, err, false
	}
	var timeout time.Duration
	if dl, ok := ctx.Deadline(); ok {
		if timeout = time.Until(dl); timeout <= 0 {
			return nil, context.DeadlineExceeded, false
		}
	}
	w := c.waiters.Get().(*callWaiter)
	defer c.putWaiter(w)
	id, err := c.goCall(method, args, timeout, true, w.done, false)
	if err != nil && (id == 0 || c.calls.take(id) != nil) {
		return nil, err, id != 0 // the callback will not run
	}
	if err := c.waitFor(ctx, w.sig, w.isFin); err != nil && c.calls.take(id) != nil {
		cause := context.Cause(ctx)
		reason := cause.Error()
		if len(reason) > 200 {
			reason = reason[:200]
		}
		var buf [256]byte
		_ = c.fw.writeAsync(&frame{kind: KindCancel, stream: id, small: appendCancelPayload(buf[:0], reason)})
		return nil, fmt.Errorf("call %d (%s): %w: %w", id, method, ErrCanceled, cause), true
	}
	for !w.fin.Load() { // the reply is being delivered
		<-w.sig
	}
	return w.end, w.err, true
}

// callWaiter is what Call waits on; Conn keeps a pool of them.
type callWaiter struct {
	sig   chan struct{}
	fin   atomic.Bool // set after end and err, by done
	end   []byte
	err   error
	done  CallDone    // complete, bound once
	isFin func() bool // fin.Load, bound once
}

func newCallWaiter() any {
	w := &callWaiter{sig: make(chan struct{}, 1)}
	w.done = w.complete
	w.isFin = w.fin.Load
	return w
}

func (w *callWaiter) complete(end []byte, err error) {
	if err == nil {
		w.end = append([]byte(nil), end...) // the caller's to keep
	}
	w.err = err
	w.fin.Store(true)
	signal(w.sig)
}

func (c *Conn) putWaiter(w *callWaiter) {
	w.fin.Store(false)
	w.end, w.err = nil, nil
	select {
	case <-w.sig:
	default:
	}
	c.waiters.Put(w)
}

// ConnStats are one connection's counters.
type ConnStats struct {
	ID            uint64        `json:"id" msgpack:"id"`
	Role          string        `json:"role" msgpack:"role"` // "client" or "server": this side's
	Transport     string        `json:"transport" msgpack:"transport"`
	Remote        string        `json:"remote" msgpack:"remote"`
	PeerName      string        `json:"peer_name" msgpack:"peer_name"`
	Up            time.Duration `json:"up_ns" msgpack:"up_ns"`
	BytesIn       uint64        `json:"bytes_in" msgpack:"bytes_in"`
	BytesOut      uint64        `json:"bytes_out" msgpack:"bytes_out"`
	FramesIn      uint64        `json:"frames_in" msgpack:"frames_in"`
	FramesOut     uint64        `json:"frames_out" msgpack:"frames_out"`
	BatchesIn     uint64        `json:"batches_in" msgpack:"batches_in"`
	BatchesOut    uint64        `json:"batches_out" msgpack:"batches_out"`
	ReadSyscalls  uint64        `json:"read_syscalls" msgpack:"read_syscalls"`
	WriteSyscalls uint64        `json:"write_syscalls" msgpack:"write_syscalls"`
	WriteRounds   uint64        `json:"write_rounds" msgpack:"write_rounds"`
	CreditStall   time.Duration `json:"credit_stall_ns" msgpack:"credit_stall_ns"`
	CreditWaits   uint64        `json:"credit_waits" msgpack:"credit_waits"`
	StreamsOpened uint64        `json:"streams_opened" msgpack:"streams_opened"`
	StreamsActive int           `json:"streams_active" msgpack:"streams_active"`
	LateFrames    uint64        `json:"late_frames" msgpack:"late_frames"`
	RTT           time.Duration `json:"rtt_ns" msgpack:"rtt_ns"`
	// MaxSilence is the longest the peer went without a sign of life, as the heartbeat
	// (which looks every half interval) saw it: how close the connection came to its
	// HeartbeatTimeout.
	MaxSilence   time.Duration `json:"max_silence_ns" msgpack:"max_silence_ns"`
	CallsPending int64         `json:"calls_pending" msgpack:"calls_pending"` // client: Go calls awaiting replies
	// Streams are the open streams' counters, in snapshots that ask for them.
	Streams []StreamStats `json:"streams,omitempty" msgpack:"streams,omitempty"`
}

// Stats returns the connection's counters.
func (c *Conn) Stats() ConnStats {
	bytesOut, framesOut, rounds := c.fw.counters()
	opened, active := c.opened.Load(), int(c.nstreams.Load())
	role := "server"
	if c.isClient {
		role = "client"
	}
	return ConnStats{
		ID: c.id, Role: role, Transport: c.transport, Remote: c.remote, PeerName: c.peer.Name,
		Up:      time.Since(c.started),
		BytesIn: c.fr.bytesIn.Load(), BytesOut: bytesOut,
		FramesIn: c.fr.framesIn.Load(), FramesOut: framesOut,
		BatchesIn: c.batchesIn.Load(), BatchesOut: c.batchesOut.Load(),
		ReadSyscalls: c.sio.reads.Load(), WriteSyscalls: c.sio.writes.Load(), WriteRounds: rounds,
		CreditStall: time.Duration(c.creditStallNs.Load()), CreditWaits: c.creditWaits.Load(),
		StreamsOpened: opened, StreamsActive: active, LateFrames: c.lateFrames.Load(),
		RTT: time.Duration(c.rttNs.Load()), MaxSilence: time.Duration(c.maxSilenceNs.Load()),
		CallsPending: c.calls.pending.Load(),
	}
}

// allocator returns the pool as an arrow allocator.
func (c *Conn) allocator() memory.Allocator { return c.pool }
