package ipc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/colinkdb/colink/internal/bufpool"
)

// Handler serves one stream. It reads the request with st.Args or st.DecodeArgs, may receive
// the client's batches with st.Recv, sends its answer with st.SendSchema, st.Send and
// st.CloseSend, and returns. Returning nil without CloseSend sends an END with the stream's
// counters; returning an error sends an ERROR whose code comes from a *RemoteError (see
// Errorf) or is CodeCanceled, CodeDeadlineExceeded or CodeInternal. ctx is canceled when the
// client cancels, its deadline passes, the connection fails or the server shuts down.
type Handler func(ctx context.Context, st *Stream) error

// UnaryHandler answers a request that carries no batches with an END payload (a msgpack
// map; nil sends {}). For a REQUEST with FIN it runs on the connection's reader goroutine,
// saving two goroutine hand-offs per call, so it must be quick and must not block: use
// Handler for anything that waits, streams or takes long. ctx is the server's.
type UnaryHandler func(ctx context.Context, args []byte) (end []byte, err error)

// ServerConfig configures a Server.
type ServerConfig struct {
	Name      string // for the peer's logs
	AuthToken []byte // TCP clients must prove it when set
	AllowUIDs []int  // unix clients allowed besides this process's uid
	Limits    Limits // connection limits
	// MaxShmConns bounds the connections that hold shared memory at once
	// (DefaultMaxShmConns), so that the segments (two of Limits.ShmSize a connection,
	// resident from their creation) stay within the daemon's memory plan; a unix client
	// beyond it is served over the socket alone, as if it had not asked.
	MaxShmConns int
	Pool        *bufpool.Pool // receive buffers; a new pool (DefaultPoolIdle, DefaultPoolIdleTime) if nil
	Logger      *slog.Logger  // slog.Default() if nil
}

// DefaultMaxShmConns is ServerConfig.MaxShmConns's default: four exemgrs of two
// connections each.
const DefaultMaxShmConns = 8

// ShmBytes is the most shared memory the server's connections map at once: two segments
// for each of MaxShmConns (0 if shared memory is disabled).
func (cfg ServerConfig) ShmBytes() int64 {
	n := cfg.MaxShmConns
	if n <= 0 {
		n = DefaultMaxShmConns
	}
	return int64(n) * 2 * int64(normShmSize(cfg.Limits.withDefaults().ShmSize))
}

// Server serves named handlers on any number of listeners.
type Server struct {
	cfg      ServerConfig
	log      *slog.Logger
	pool     *bufpool.Pool
	instance []byte
	handlers map[string]Handler      // written only before Serve
	unary    map[string]UnaryHandler // written only before Serve
	inline   map[string]UnaryAppendHandler

	base       context.Context
	cancelBase context.CancelCauseFunc

	mu        sync.Mutex
	conns     map[*Conn]struct{}
	listeners []net.Listener
	unix      []string
	closing   bool
	rejected  uint64                // failed handshakes
	accepted  uint64                // connections that completed the handshake
	closed    LinkTotals            // counters of connections that have ended
	closedBy  map[string]LinkTotals // the same by transport
	shmConns  int                   // connections holding (or being offered) shared memory; at most cfg.MaxShmConns
	started   time.Time

	handlersWG sync.WaitGroup
	connsWG    sync.WaitGroup
}

// NewServer returns a server with no handlers.
func NewServer(cfg ServerConfig) *Server {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	pool := cfg.Pool
	if pool == nil {
		pool = newDefaultPool()
	}
	inst := make([]byte, 16)
	_, _ = rand.Read(inst)
	cfg.Limits = cfg.Limits.withDefaults()
	if cfg.MaxShmConns <= 0 {
		cfg.MaxShmConns = DefaultMaxShmConns
	}
	s := &Server{cfg: cfg, log: log, pool: pool, instance: inst, handlers: map[string]Handler{}, unary: map[string]UnaryHandler{}, inline: map[string]UnaryAppendHandler{}, conns: map[*Conn]struct{}{}, started: time.Now()}
	s.base, s.cancelBase = context.WithCancelCause(context.Background())
	s.handlers[MethodStats] = s.serveStats
	s.inline[MethodEcho] = serveEcho
	s.unary[MethodEcho] = func(ctx context.Context, args []byte) ([]byte, error) { return serveEcho(ctx, args, nil) }
	return s
}

// Handle registers h for method. It must be called before Serve; registering a method twice
// panics.
func (s *Server) Handle(method string, h Handler) {
	checkMethodName(method)
	if _, dup := s.handlers[method]; dup {
		panic("ipc: method " + method + " registered twice")
	}
	s.handlers[method] = h
}

// HandleUnary registers a unary handler for method. A method may have both kinds: a REQUEST
// with FIN goes to the unary one, any other to the streaming one. It must be called before
// Serve; registering a method twice panics.
func (s *Server) HandleUnary(method string, h UnaryHandler) {
	checkMethodName(method)
	if _, dup := s.unary[method]; dup {
		panic("ipc: unary method " + method + " registered twice")
	}
	s.unary[method] = h
	s.inline[method] = func(ctx context.Context, args, end []byte) ([]byte, error) {
		b, err := h(ctx, args)
		return append(end, b...), err
	}
}

// UnaryAppendHandler is a UnaryHandler that appends its END payload (a msgpack map; nothing
// appended sends {}) to end and returns the extended slice, so a server answering a burst
// of calls builds every reply in place, with no allocation per call. end belongs to the
// connection: the handler must not keep it. The rules of UnaryHandler apply.
type UnaryAppendHandler func(ctx context.Context, args []byte, end []byte) ([]byte, error)

// HandleUnaryAppend registers h for method like HandleUnary.
func (s *Server) HandleUnaryAppend(method string, h UnaryAppendHandler) {
	checkMethodName(method)
	if _, dup := s.unary[method]; dup {
		panic("ipc: unary method " + method + " registered twice")
	}
	s.unary[method] = func(ctx context.Context, args []byte) ([]byte, error) { return h(ctx, args, nil) }
	s.inline[method] = h
}

// Methods returns the registered methods, sorted.
func (s *Server) Methods() []string {
	m := make([]string, 0, len(s.handlers)+len(s.unary))
	for k := range s.handlers {
		m = append(m, k)
	}
	for k := range s.unary {
		if _, ok := s.handlers[k]; !ok {
			m = append(m, k)
		}
	}
	sort.Strings(m)
	return m
}

// unaryFor returns the unary handler that serves a request, if any: a FIN request for a
// method with a unary handler.
func (s *Server) unaryFor(method []byte, fin bool) UnaryAppendHandler {
	if fin {
		return s.inline[string(method)] // no allocation: the conversion is only a map key
	}
	return nil
}

// runUnary calls h inline, appending its END payload to dst; on an error the returned
// slice is to be discarded.
func (s *Server) runUnary(h UnaryAppendHandler, method, args, dst []byte) (end []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("link: unary handler panicked", "method", string(method), "panic", r, "stack", string(debug.Stack()))
			end, err = nil, Errorf(CodeInternal, "handler %s panicked: %v", method, r)
		}
	}()
	n := len(dst)
	end, err = h(s.base, args, dst)
	if err != nil {
		return nil, err
	}
	if len(end) == n {
		return append(end, emptyMap...), nil
	}
	if verr := mpValidMap(end[n:]); verr != nil {
		return nil, Errorf(CodeInternal, "handler %s returned an END payload that is not a msgpack map: %v", method, verr)
	}
	return end, nil
}

// Instance returns the random id that names this server process in handshakes.
func (s *Server) Instance() []byte { return s.instance }

// Pool returns the server's buffer pool.
func (s *Server) Pool() *bufpool.Pool { return s.pool }

// Serve accepts connections on every listener until Shutdown. The unix endpoints among them
// are advertised in the server's hello before any connection is accepted, so a client that
// reached the server over TCP can find its unix socket. It returns nil after Shutdown, or
// the first listener's fatal error.
func (s *Server) Serve(lns ...net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return errors.New("ipc: Serve after Shutdown")
	}
	for _, ln := range lns {
		s.listeners = append(s.listeners, ln)
		if l, ok := ln.(*Listener); ok && l.ep.Network == "unix" && !slices.Contains(s.unix, l.ep.String()) {
			s.unix = append(s.unix, l.ep.String())
		}
	}
	s.mu.Unlock()
	errc := make(chan error, len(lns))
	for _, ln := range lns {
		go func() { errc <- s.accept(ln) }()
	}
	var first error
	for range lns {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (s *Server) accept(ln net.Listener) error {
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing || errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporaryAccept(err) {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.log.Warn("link: accept failed; retrying", "addr", ln.Addr().String(), "err", err, "retry_in", delay)
				time.Sleep(delay)
				continue
			}
			return fmt.Errorf("accept on %s: %w", ln.Addr(), err)
		}
		delay = 0
		s.connsWG.Add(1)
		go func() {
			defer s.connsWG.Done()
			s.ServeConn(nc)
		}()
	}
}

func isTemporaryAccept(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "too many open files") || strings.Contains(msg, "connection aborted")
}

// ServeConn runs the handshake on an accepted connection and serves it until it ends.
func (s *Server) ServeConn(nc net.Conn) {
	c := newConn(nc, false, s.pool, s.cfg.Limits, s.log)
	c.baseCtx = s.base
	c.onRequest = s.startStream
	c.core.cfg.unaryFor = s.unaryFor
	c.runUnary = s.runUnary
	s.mu.Lock()
	unix := slices.Clone(s.unix)
	// A unix connection takes one of the shared-memory places before the handshake, since
	// the segments are created during it, and gives it back when it ends or turns out not
	// to use them.
	shm := uint64(0)
	if _, isUnix := nc.(*net.UnixConn); isUnix && s.shmConns < s.cfg.MaxShmConns {
		shm = normShmSize(s.cfg.Limits.ShmSize)
		if shm != 0 {
			s.shmConns++
		}
	}
	s.mu.Unlock()
	holdsShm := shm != 0
	releaseShm := func() {
		if holdsShm {
			holdsShm = false
			s.mu.Lock()
			s.shmConns--
			s.mu.Unlock()
		}
	}
	defer releaseShm()
	err := c.handshake(s.base, handshakeParams{
		name: s.cfg.Name, token: s.cfg.AuthToken, allowUIDs: s.cfg.AllowUIDs, unix: unix, instance: s.instance,
		shm: shm,
	})
	if err != nil { // the connection has failed, and logged "link: closing connection" with the reason
		s.mu.Lock()
		s.rejected++
		s.mu.Unlock()
		return
	}
	if c.transport != "shm" {
		releaseShm()
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		c.closeWith(CodeUnavailable, "server shutting down")
		return
	}
	s.conns[c] = struct{}{}
	s.accepted++
	s.mu.Unlock()
	c.log.Debug("link: connection up", "peer", c.peer.Name)
	c.start()
	<-c.done
	st := c.Stats()
	s.mu.Lock()
	delete(s.conns, c)
	s.closed.add(&st)
	if s.closedBy == nil {
		s.closedBy = map[string]LinkTotals{}
	}
	addTo(s.closedBy, &st)
	s.mu.Unlock()
}

// startStream runs on a connection's reader goroutine for each new stream.
func (s *Server) startStream(st *Stream) {
	s.mu.Lock()
	closing := s.closing
	if !closing {
		s.handlersWG.Add(1)
	}
	s.mu.Unlock()
	if closing {
		go st.finish(Errorf(CodeUnavailable, "server shutting down"))
		return
	}
	go func() {
		defer s.handlersWG.Done()
		st.finish(s.run(st))
	}()
}

func (s *Server) run(st *Stream) (err error) {
	h := s.handlers[st.method]
	if h == nil {
		if u := s.unary[st.method]; u != nil {
			// A unary method called without FIN: its handler takes no batches, so the
			// client's half must end without any; data is refused, not silently dropped.
			switch err := st.waitReadable(); {
			case err == nil:
				return Errorf(CodeInvalidArgument, "method %q is unary: it takes no batches (send the request with FIN, as Call and Go do, or register a streaming handler)", st.method)
			case err != io.EOF:
				return err
			}
			end, err := s.runUnary(s.inline[st.method], []byte(st.method), st.args, nil)
			if err != nil {
				return err
			}
			return st.CloseSend(end)
		}
		return Errorf(CodeUnknownMethod, "unknown method %q; this server serves %s", st.method, strings.Join(s.Methods(), ", "))
	}
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("link: handler panicked", "method", st.method, "panic", r, "stack", string(debug.Stack()))
			err = Errorf(CodeInternal, "handler %s panicked: %v", st.method, r)
		}
	}()
	return h(st.ctx, st)
}

// Shutdown stops accepting (removing socket files), lets in-flight streams finish until ctx
// is done, then cancels the rest, tells every client the server is going away, and closes
// the connections.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	lns := s.listeners
	s.mu.Unlock()
	for _, ln := range lns {
		_ = ln.Close()
	}
	handlersDone := make(chan struct{})
	go func() {
		s.handlersWG.Wait()
		close(handlersDone)
	}()
	var err error
	select {
	case <-handlersDone:
	case <-ctx.Done():
		err = fmt.Errorf("shutdown: in-flight streams canceled: %w", ctx.Err())
		s.cancelBase(Errorf(CodeUnavailable, "server shutting down"))
		select {
		case <-handlersDone:
		case <-time.After(2 * time.Second):
			s.log.Warn("link: handlers still running 2s after cancellation")
		}
	}
	s.cancelBase(Errorf(CodeUnavailable, "server shutting down"))
	s.mu.Lock()
	conns := make([]*Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.closeWith(CodeUnavailable, "server shutting down")
	}
	s.connsWG.Wait()
	return err
}

// Stats returns the counters of the server and of every live connection (without
// per-stream counters; see Snapshot).
func (s *Server) Stats() ServerStats { return s.Snapshot(StatsOptions{}) }

// Snapshot returns the server's counters: totals over every connection since the server
// started, and each live connection's counters, with its open streams' if opts.Streams.
func (s *Server) Snapshot(opts StatsOptions) ServerStats {
	s.mu.Lock()
	conns := make([]*Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	st := ServerStats{
		Name: s.cfg.Name, Instance: hex.EncodeToString(s.instance), Up: time.Since(s.started),
		ConnsAccepted: s.accepted, RejectedHandshakes: s.rejected, Totals: s.closed, ByTransport: maps.Clone(s.closedBy),
	}
	s.mu.Unlock()
	if st.ByTransport == nil {
		st.ByTransport = map[string]LinkTotals{}
	}
	ps := s.pool.Stats()
	st.Pool = PoolStats{Gets: ps.Gets, Misses: ps.Misses, IdleBytes: ps.Idle, Released: ps.Released}
	st.ConnsOpen = len(conns)
	for _, c := range conns {
		cs := c.snapshot(opts)
		st.Totals.add(&cs)
		addTo(st.ByTransport, &cs)
		st.Conns = append(st.Conns, cs)
	}
	sort.Slice(st.Conns, func(i, j int) bool { return st.Conns[i].ID < st.Conns[j].ID })
	return st
}
