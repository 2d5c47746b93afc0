package ipc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	arrowipc "github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/internal/bufpool"
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
	// ShmSize is the size of each shared-memory segment (one a direction) of a connection
	// over the shm transport, its header page included (DefaultShmSize; rounded up to the
	// page size, within MinShmSize..MaxShmSize). A server creates segments of the smaller
	// of the client's size and its own. Negative disables shared memory: a server never
	// offers it, a client never asks.
	ShmSize int64
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

// Defaults for the receive-buffer pool a server or client makes when given none.
const (
	// DefaultPoolIdle bounds the idle bytes the pool keeps (bufpool.Options.Retain).
	DefaultPoolIdle = 512 << 20
	// DefaultPoolIdleTime: a buffer unused for between this and twice this is released.
	DefaultPoolIdleTime = 30 * time.Second
)

func newDefaultPool() *bufpool.Pool {
	return bufpool.New(bufpool.Options{Retain: DefaultPoolIdle, IdleTime: DefaultPoolIdleTime})
}

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
	if l.ShmSize == 0 {
		l.ShmSize = DefaultShmSize
	}
	return l
}

// replyFlushBytes is how many bytes of inline replies a server connection gathers before it
// writes them even though more requests are buffered.
const replyFlushBytes = 32 << 10

// Conn is one established link connection carrying many streams. A client opens streams
// with Open; a server's connections dispatch the streams their peer opens to the server's
// handlers. A Conn is safe for concurrent use.
//
// Conn is the loop around the connection's core (see the package comment): it owns the
// socket and the goroutines, and feeds the core under mu, executing the core's actions
// after releasing it.
type Conn struct {
	id        uint64
	nc        net.Conn
	sio       *sockIO
	pool      *bufpool.Pool
	log       *slog.Logger
	baseLog   *slog.Logger
	isClient  bool
	transport string // "tcp", "unix" or the net.Addr network of an in-memory pipe
	remote    string
	lim       Limits
	peer      Hello // the peer's hello, set once the handshake completed
	peerPID   int   // a unix peer's process (SO_PEERCRED), 0 if unknown
	sendOpts  []arrowipc.Option
	onRequest func(*Stream)   // server: start a handler for a new stream
	baseCtx   context.Context // server: parent of every handler's context
	runUnary  func(h UnaryAppendHandler, method, args, dst []byte) ([]byte, error)
	started   time.Time
	shmAsk    uint64 // client: the segment size its hello asks for (0: none)

	// Shared memory (the shm transport): set during the handshake, never changed after
	// start. ringMu orders the producer's reservations with the frames describing them;
	// it is taken before mu, never under it.
	shm      *shmConn
	shmSetup *shmSetup
	ringMu   sync.Mutex

	// mu guards core, w, rr and timerAt. Nothing blocks under it: no syscall waits and no
	// user code runs while it is held.
	mu      sync.Mutex
	core    core
	w       writerState
	rr      readRole // client connections: who reads the socket (see readrole.go)
	timer   *time.Timer
	timerAt time.Time // when timer fires; zero when it is not armed
	done    chan struct{}

	waiters sync.Pool // client: *callWaiter for Call

	// Owned by whoever reads the socket: the actions of the frames it reads, and (server)
	// the inline replies encoded and not yet queued, which go out together once no further
	// complete request is buffered.
	rx       actions
	replies  []byte
	nreplies int
}

// connIDs hands out connection ids for logs; it is per process but only an identity counter.
var connIDs atomic.Uint64

func newConn(nc net.Conn, isClient bool, pool *bufpool.Pool, lim Limits, log *slog.Logger) *Conn {
	if pool == nil {
		pool = newDefaultPool()
	}
	if log == nil {
		log = slog.Default()
	}
	tuneSocket(nc) // done already for connections from Dial and Listener
	now := time.Now()
	c := &Conn{
		id:       connIDs.Add(1),
		nc:       nc,
		sio:      newSockIO(nc),
		pool:     pool,
		isClient: isClient,
		lim:      lim.withDefaults(),
		waiters:  sync.Pool{New: newCallWaiter},
		done:     make(chan struct{}),
		started:  now,
		baseLog:  log,
	}
	c.w.kick = make(chan struct{}, 1)
	c.transport = nc.LocalAddr().Network()
	cfg := coreConfig{isClient: isClient, limits: c.lim, transport: c.transport, selfUID: os.Getuid(), pool: pool, nonce: newNonce()}
	remote := nc.RemoteAddr().String()
	if c.transport == "unix" {
		// A unix client's address is unnamed and the server's is the name it was bound
		// under; name the peer by its process instead.
		remote = "unix peer"
		uid, pid, err := peerCred(nc)
		cfg.peerUID, cfg.peerPID, cfg.peerCredErr = uid, pid, err
		if err == nil {
			remote = fmt.Sprintf("unix peer pid %d uid %d", pid, uid)
			c.peerPID = pid
		}
	}
	c.core.init(cfg, now)
	c.setRemote(remote)
	return c
}

// setRemote names the peer in errors and logs; it is called before the handshake.
func (c *Conn) setRemote(r string) {
	c.remote = r
	c.core.cfg.remote = r
	c.log = c.baseLog.With("conn", c.id, "transport", c.transport, "remote", r)
}

// start runs the connection after a successful handshake: the reader, the timer, the
// background flusher.
func (c *Conn) start() {
	c.mu.Lock()
	c.timer = time.AfterFunc(time.Hour, c.onTimer)
	c.armLocked(c.core.deadline())
	if c.isClient {
		c.rr.bgKick = make(chan struct{}, 1)
	}
	c.mu.Unlock()
	if c.isClient {
		go c.bgReader()
		signal(c.rr.bgKick)
	} else {
		go c.readLoop()
	}
	go c.flushLoop()
}

// Done is closed when the connection has failed or been closed; by then no frame can be
// queued on it any more (a later END or request fails with ErrNotSent).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended, nil while it is up.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.core.err
}

// Transport returns "tcp", "unix", or "shm" for a unix socket whose batch bodies travel
// through shared memory.
func (c *Conn) Transport() string { return c.transport }

// Remote returns the peer's address.
func (c *Conn) Remote() string { return c.remote }

// Peer returns the peer's hello.
func (c *Conn) Peer() Hello { return c.peer }

// load is what a Client balances on (core.load).
func (c *Conn) load() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.core.load()
}

// ActiveStreams returns the number of streams open on the connection.
func (c *Conn) ActiveStreams() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.core.streams)
}

// Close closes the connection; its streams fail with ErrConnClosed.
func (c *Conn) Close() error {
	c.fail(fmt.Errorf("%w: closed by this side", ErrConnClosed))
	return nil
}

// closeWith sends an ERROR on stream 0 (best effort, bounded by a short write deadline) and
// closes the connection: how a server tells its clients it is going away.
func (c *Conn) closeWith(code, msg string) {
	var a actions
	c.mu.Lock()
	c.core.closeWith(time.Now(), code, msg, &a)
	c.failedLocked(&a)
	c.mu.Unlock()
	c.exec(&a)
}

// stalledIdle reports whether failIfStalled would fail the connection now.
func (c *Conn) stalledIdle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.core.load() == 0 && c.core.stalled(time.Now()) != nil
}

// failIfStalled fails the connection if it carries no streams and this process did not
// run for longer than the heartbeat timeout (core.stalled), and reports whether it did.
func (c *Conn) failIfStalled() bool {
	var a actions
	c.mu.Lock()
	var err error
	if c.core.load() == 0 {
		err = c.core.stalled(time.Now())
	}
	if err != nil {
		c.core.fail(time.Now(), err, nil, 0, &a)
		c.failedLocked(&a)
	}
	c.mu.Unlock()
	c.exec(&a)
	return err != nil
}

// failIfPeerGone fails a client connection that nobody is reading whose peer has closed
// it (an EOF or a reset waits in the socket), and reports whether it did. Nobody reads an
// idle client connection between the background reader's ticks, so its peer's close is
// noticed up to a heartbeat interval late; a request sent on it meanwhile is lost with it
// (ErrNotSent cannot be claimed once it left), though a redial would have served it: a
// primproc killed and restarted within the interval (TestKill9DuringLoad). The peek costs
// one non-blocking syscall, and is made only when nobody holds the read role (a reader
// would see the close itself).
func (c *Conn) failIfPeerGone() bool {
	if !c.isClient {
		return false
	}
	c.mu.Lock()
	idle := c.rr.owner == roleFree && c.core.phase == phaseOpen
	remote := c.core.cfg.remote
	c.mu.Unlock()
	if !idle {
		return false
	}
	err := c.sio.peerGone()
	switch {
	case err == nil:
		return false
	case errors.Is(err, io.EOF):
		c.fail(fmt.Errorf("%w: peer %s closed the connection", ErrConnClosed, remote))
	default:
		c.fail(fmt.Errorf("%w: read from %s: %w", ErrConnClosed, remote, err))
	}
	return true
}

// fail ends the connection with err, unless it has ended already.
func (c *Conn) fail(err error) {
	var a actions
	c.mu.Lock()
	c.core.fail(time.Now(), err, nil, 0, &a)
	c.failedLocked(&a)
	c.mu.Unlock()
	c.exec(&a)
}

// protocolError reports a peer's protocol violation: best effort (a write bounded by a short
// deadline), it tells the peer why on stream 0, then fails the connection.
func (c *Conn) protocolError(err error) {
	var a actions
	c.mu.Lock()
	c.core.protocolError(time.Now(), err, &a)
	c.failedLocked(&a)
	c.mu.Unlock()
	c.exec(&a)
}

// failedLocked does what must happen under mu the moment the core fails: Done closes (the
// core refuses new frames already) and the goroutines waiting for their rounds are woken.
func (c *Conn) failedLocked(a *actions) {
	if a.fail == nil || a.fail.applied {
		return
	}
	a.fail.applied = true
	close(c.done)
	c.wakeWritersLocked()
	if c.timer != nil {
		c.timer.Stop()
		c.timerAt = time.Time{}
	}
}

// exec carries out the actions of events that ran under mu; it runs after mu is released,
// on the goroutine that fed the events. A connection's failure comes first: the socket
// closes and the streams fail before anything is logged, since a log write can block
// (stderr on a pipe nobody drains) and nothing a waiter on the connection needs may wait
// behind it.
func (c *Conn) exec(a *actions) {
	if a.fail != nil {
		c.finalWrite(a.fail)
		c.nc.Close()
		c.closeShm()
	}
	for _, q := range a.accept {
		c.onRequest(q.cs.h)
	}
	for _, w := range a.wake {
		s := w.cs.h
		if s == nil {
			continue // not handed to the application yet: it looks at the state first
		}
		if w.cancel != nil && s.cancelCtx != nil {
			s.cancelCtx(w.cancel)
		}
		if w.recv {
			signal(s.recvSig)
		}
		if w.send {
			signal(s.creditSig)
		}
	}
	for _, r := range a.calls {
		r.done(r.end, r.err)
		if r.owned != nil {
			c.pool.Put(r.owned)
		}
	}
	for _, q := range a.inline {
		c.answerInline(q)
	}
	if a.flush {
		signal(c.w.kick)
	}
	if f := a.fail; f != nil && !(f.handshake && c.isClient) {
		// A client's failed handshake is reported by its caller.
		switch err := f.err; {
		case errors.Is(err, ErrProtocol), errors.Is(err, ErrPeerSilent), errors.Is(err, ErrVersion), errors.Is(err, ErrAuth):
			c.log.Warn("link: closing connection", "err", err)
		default:
			c.log.Debug("link: connection closed", "err", err)
		}
	}
	a.reset()
}

// finalWrite writes what a failing connection has left to tell its peer, within the
// failure's bound, if nobody else is writing.
func (c *Conn) finalWrite(f *failure) {
	if f.tellBy.IsZero() {
		return
	}
	c.mu.Lock()
	if c.w.flushing {
		c.mu.Unlock()
		return
	}
	r, n := c.core.out.take()
	if r == nil {
		c.mu.Unlock()
		return
	}
	c.w.flushing = true
	c.mu.Unlock()
	_ = c.nc.SetWriteDeadline(f.tellBy)
	_, _ = c.sio.Writev(r.vectors())
	c.mu.Lock()
	c.core.out.done(r, n)
	c.w.flushing = false
	c.mu.Unlock()
}

// ---- the timer ---------------------------------------------------------------------------

// armLocked makes the timer fire by d (zero: no tick wanted). A timer armed for earlier
// stays: it fires, finds nothing due, and rearms.
func (c *Conn) armLocked(d time.Time) {
	if d.IsZero() || c.timer == nil || c.core.phase == phaseFailed {
		return
	}
	if !c.timerAt.IsZero() && !d.Before(c.timerAt) {
		return
	}
	c.timerAt = d
	c.timer.Reset(time.Until(d))
}

// onTimer feeds the core its ticks. Liveness is kept apart from everything else the
// connection carries: a timer, which the Go scheduler runs promptly even when every
// processor is busy, unlike the goroutine a socket wakes (the reader), which can wait
// hundreds of milliseconds in a process busy with CPU-bound work. So the peer hears from
// this side at least every interval whatever the reader and the handlers are doing
// (PINGs and PONGs overtake queued batches), and a peer whose bytes wait unread in the
// socket counts as alive: this side's reader is behind, not the peer.
func (c *Conn) onTimer() {
	now := time.Now()
	unread := -1
	if n, ok := c.sio.unread(); ok {
		unread = n
	}
	var a actions
	c.mu.Lock()
	c.timerAt = time.Time{}
	c.core.tick(now, unread, &a)
	if a.checkPeer {
		a.checkPeer = false
		c.mu.Unlock()
		state, err := processState(c.peerPID)
		c.mu.Lock()
		c.core.peerState(now, state, err, &a)
	}
	c.failedLocked(&a)
	c.armLocked(c.core.deadline())
	c.mu.Unlock()
	c.exec(&a)
	if c.isClient {
		c.kickIdleReader()
	}
}

// ---- server reading ----------------------------------------------------------------------

// readLoop is a server connection's reader: its requests start handlers, which never wait
// on the socket, so it reads on a goroutine of its own.
func (c *Conn) readLoop() {
	c.readFrames(nil)
}

// answerInline runs a unary handler on the reading goroutine, building its reply in place
// behind the replies gathered so far: a header placeholder, then the END payload the
// handler appends (or an ERROR). Replies go out once no further complete request is
// buffered (see flushReplies), so pipelined requests share one writev, as a raw server's
// buffered replies do.
func (c *Conn) answerInline(q inlineReq) {
	start := len(c.replies)
	out, err := c.runUnary(q.handler, q.method, q.args, append(c.replies, zeroHeader...))
	kind := KindEnd
	if err != nil {
		code, msg := errorCode(err)
		if len(msg) > 4000 {
			msg = msg[:4000]
		}
		kind = KindError
		out = appendErrorPayload(append(c.replies[:start], zeroHeader...), code, msg)
	}
	PutHeader(out[start:], Header{Kind: kind, Stream: q.id, Length: uint32(len(out) - start - HeaderSize)})
	c.replies = out
	c.nreplies++
	if len(c.replies) >= replyFlushBytes {
		c.flushReplies()
	}
}

// flushReplies queues the inline replies gathered and writes them now, unless a write is in
// progress (whose writer then takes them).
func (c *Conn) flushReplies() {
	if c.nreplies == 0 {
		return
	}
	var a actions
	c.mu.Lock()
	if err := c.core.queueEncoded(c.replies, c.nreplies); err == nil && !c.w.flushing {
		c.flushLocked(c.core.out.round, &a)
	}
	c.failedLocked(&a)
	c.mu.Unlock()
	c.replies, c.nreplies = c.replies[:0], 0
	if cap(c.replies) > 4*replyFlushBytes { // a huge END once: do not keep its buffer
		c.replies = nil
	}
	c.exec(&a)
}

// ---- client operations -------------------------------------------------------------------

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
	var timeout time.Duration
	if dl, ok := ctx.Deadline(); ok {
		if timeout = time.Until(dl); timeout <= 0 {
			return nil, context.DeadlineExceeded
		}
	}
	var a actions
	c.mu.Lock()
	// The id is allocated and the REQUEST queued under mu, so ids reach the peer in
	// increasing order and the stream is registered before the reader can see the reply.
	cs, round, err := c.core.open(method, args, timeout, fin)
	if err != nil {
		c.mu.Unlock()
		return nil, err
	}
	s := newStream(c, cs, method, nil)
	s.ctx = ctx
	cs.h = s
	err = c.flushQueuedLocked(round, &a)
	c.mu.Unlock()
	c.exec(&a)
	if err != nil {
		c.mu.Lock()
		c.core.retire(cs)
		c.mu.Unlock()
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
	var a actions
	c.mu.Lock()
	id, round, first, err := c.core.call(method, args, timeout, done)
	if err != nil {
		c.mu.Unlock()
		return 0, err
	}
	if first && wake {
		// Replies need a reader; while calls are pending, whoever stops reading hands the
		// role on (releaseRead), so only the first pending call must wake one.
		c.kickIdleReaderLocked()
	}
	if flush {
		err = c.flushQueuedLocked(round, &a)
	}
	c.mu.Unlock()
	c.exec(&a)
	return id, err
}

// Flush writes every queued frame.
func (c *Conn) Flush() error {
	var a actions
	c.mu.Lock()
	err := c.flushQueuedLocked(c.core.out.round, &a)
	c.mu.Unlock()
	c.exec(&a)
	return err
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
	if err != nil && (id == 0 || c.takeCall(id)) {
		return nil, err, id != 0 // the callback will not run
	}
	if err := c.waitFor(ctx, w.sig, w.isFin); err != nil {
		cause := context.Cause(ctx)
		reason := cause.Error()
		if len(reason) > 200 {
			reason = reason[:200]
		}
		c.mu.Lock()
		pending, flush := c.core.cancelCall(id, reason)
		c.mu.Unlock()
		if flush {
			signal(c.w.kick)
		}
		if pending {
			return nil, fmt.Errorf("call %d (%s): %w: %w", id, method, ErrCanceled, cause), true
		}
	}
	for !w.fin.Load() { // the reply is being delivered
		<-w.sig
	}
	return w.end, w.err, true
}

// takeCall removes a pending call, reporting whether it was pending.
func (c *Conn) takeCall(id uint32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.core.calls.take(id) != nil
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

// ---- counters ----------------------------------------------------------------------------

// ConnStats are one connection's counters.
type ConnStats struct {
	ID        uint64        `json:"id" msgpack:"id"`
	Role      string        `json:"role" msgpack:"role"` // "client" or "server": this side's
	Transport string        `json:"transport" msgpack:"transport"`
	Remote    string        `json:"remote" msgpack:"remote"`
	PeerName  string        `json:"peer_name" msgpack:"peer_name"`
	Up        time.Duration `json:"up_ns" msgpack:"up_ns"`
	Traffic
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
	// saw it when it looked: how close the connection came to its HeartbeatTimeout.
	MaxSilence   time.Duration `json:"max_silence_ns" msgpack:"max_silence_ns"`
	CallsPending int64         `json:"calls_pending" msgpack:"calls_pending"` // client: Go calls awaiting replies
	// SocketBytesIn and SocketBytesOut are the bytes that crossed the socket; BytesIn and
	// BytesOut add the batch bodies that crossed in shared memory (the Ring counters).
	SocketBytesIn  uint64 `json:"socket_bytes_in" msgpack:"socket_bytes_in"`
	SocketBytesOut uint64 `json:"socket_bytes_out" msgpack:"socket_bytes_out"`
	// Shared memory (transport shm; zero otherwise).
	ShmSize        uint64 `json:"shm_size,omitempty" msgpack:"shm_size,omitempty"` // bytes per direction
	RingBytesIn    uint64 `json:"ring_bytes_in" msgpack:"ring_bytes_in"`           // batch bodies received through the ring
	RingBytesOut   uint64 `json:"ring_bytes_out" msgpack:"ring_bytes_out"`         // batch bodies sent through the ring
	RingBatchesIn  uint64 `json:"ring_batches_in" msgpack:"ring_batches_in"`       // RBATCH frames received
	RingBatchesOut uint64 `json:"ring_batches_out" msgpack:"ring_batches_out"`     // RBATCH frames sent
	RingFallbacks  uint64 `json:"ring_fallbacks" msgpack:"ring_fallbacks"`         // batches sent on the socket for want of ring space (the slot waits: nothing waits)
	RingWakeups    uint64 `json:"ring_wakeups" msgpack:"ring_wakeups"`             // socket writes that carried RBATCH frames: the peer's wake-ups
	// PingsSent counts the heartbeat's PINGs this side sent, PongsIn the PONGs it received.
	PingsSent uint64 `json:"pings_sent" msgpack:"pings_sent"`
	PongsIn   uint64 `json:"pongs_in" msgpack:"pongs_in"`
	// Streams are the open streams' counters, in snapshots that ask for them.
	Streams []StreamStats `json:"streams,omitempty" msgpack:"streams,omitempty"`
}

// Stats returns the connection's counters.
func (c *Conn) Stats() ConnStats {
	role := "server"
	if c.isClient {
		role = "client"
	}
	st := ConnStats{ID: c.id, Role: role, Transport: c.transport, Remote: c.remote, PeerName: c.peer.Name,
		Up: time.Since(c.started), ReadSyscalls: c.sio.reads.Load(), WriteSyscalls: c.sio.writes.Load()}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := &c.core
	st.SocketBytesIn, st.SocketBytesOut = k.bytesIn, k.out.bytesOut
	st.BytesIn, st.BytesOut = k.bytesIn+k.ringBytesIn, k.out.bytesOut+k.ringBytesOut
	st.FramesIn, st.FramesOut, st.WriteRounds = k.framesIn, k.out.framesOut, k.out.rounds
	st.BatchesIn, st.BatchesOut = k.batchesIn, k.batchesOut
	st.CreditStall, st.CreditWaits = k.creditStall, k.creditWaits
	st.StreamsOpened, st.StreamsActive, st.LateFrames = k.opened, len(k.streams), k.lateFrames
	st.RTT, st.MaxSilence, st.CallsPending = k.rtt, k.maxSilence, int64(k.calls.pending)
	st.ShmSize = k.shmSize
	st.RingBytesIn, st.RingBytesOut, st.RingBatchesIn, st.RingBatchesOut = k.ringBytesIn, k.ringBytesOut, k.ringBatchesIn, k.ringBatchesOut
	st.RingFallbacks, st.RingWakeups = k.ringFallbacks, k.ringWakeups
	st.PingsSent, st.PongsIn = k.pingsSent, k.pongsIn
	return st
}

// allocator returns the pool as an arrow allocator.
func (c *Conn) allocator() memory.Allocator { return c.pool }
