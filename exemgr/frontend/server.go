package frontend

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Server accepts MySQL clients and runs their sessions. Make one with Listen, run it with
// Serve.
type Server struct {
	cfg       Config
	engine    Engine
	users     Users
	log       *slog.Logger
	tls       *tlsConfig // nil: no TLS for clients
	auth      *authState
	lastID    atomic.Uint32 // the last connection id given (firstConnectionID - 1 at first)
	listeners []net.Listener
	vars      map[string]sysVar // server-wide system variables, read-only after Listen
	versionID int               // ServerVersion as MySQL's number, for versioned comments
	started   time.Time
	questions atomic.Uint64 // statements received, for COM_STATISTICS and SHOW STATUS
	accepted  atomic.Uint64 // connections admitted, for SHOW STATUS's Connections

	mu       sync.Mutex
	sessions map[uint32]*Session   // guarded by mu
	conns    map[net.Conn]*Session // a connection's session, nil until its handshake ends
	closing  bool                  // Serve is shutting down: refuse new connections
	wg       sync.WaitGroup
}

// Listen validates cfg, loads the users file and opens the listeners; the server accepts no
// client until Serve.
func Listen(cfg Config, engine Engine) (*Server, error) {
	if engine == nil {
		return nil, fmt.Errorf("frontend: no engine")
	}
	def := DefaultConfig()
	if cfg.ServerVersion == "" {
		cfg.ServerVersion = def.ServerVersion
	}
	if cfg.VersionComment == "" {
		cfg.VersionComment = def.VersionComment
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = def.MaxConnections
	}
	if cfg.MaxAllowedPacket <= 0 {
		cfg.MaxAllowedPacket = def.MaxAllowedPacket
	}
	if err := CheckMaxAllowedPacket(cfg.MaxAllowedPacket); err != nil {
		return nil, err
	}
	if cfg.DefaultAuthPlugin == "" {
		cfg.DefaultAuthPlugin = def.DefaultAuthPlugin
	}
	if err := CheckAuthPlugin(cfg.DefaultAuthPlugin); err != nil {
		return nil, fmt.Errorf("--default-authentication-plugin: %w", err)
	}
	tlsCfg, err := loadTLS(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return nil, err
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = def.HandshakeTimeout
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	addrs, err := cfg.addrs()
	if err != nil {
		return nil, err
	}
	users := cfg.Users
	if users == nil && cfg.UsersFile != "" {
		if users, err = LoadUsers(cfg.UsersFile); err != nil {
			return nil, err
		}
	}
	if users == nil {
		users = DefaultUsers()
	}
	s := &Server{
		cfg:       cfg,
		engine:    engine,
		users:     users,
		log:       log,
		tls:       tlsCfg,
		auth:      newAuthState(tlsCfg),
		versionID: VersionID(cfg.ServerVersion),
		started:   time.Now(),
		sessions:  make(map[uint32]*Session),
		conns:     make(map[net.Conn]*Session),
	}
	// Connection ids start after 10000, as they did when go-mysql numbered them, so that an
	// id in a log or a KILL reads as before.
	s.lastID.Store(firstConnectionID - 1)
	for _, a := range addrs {
		l, err := listen(a)
		if err != nil {
			s.closeListeners()
			return nil, err
		}
		s.listeners = append(s.listeners, l)
	}
	s.vars = serverVars(&cfg, s.listeners)
	if !users.hasPassword() {
		for _, l := range s.listeners {
			if a, ok := l.Addr().(*net.TCPAddr); ok && !a.IP.IsLoopback() {
				log.Warn("listening beyond loopback, but every account has an empty password, which only local clients may use; give --users-file for remote clients",
					"address", a.String())
			}
		}
	}
	return s, nil
}

// listen opens one listener. A unix socket file left by a dead server is removed; one that
// still accepts connections is an error.
func listen(a listenAddr) (net.Listener, error) {
	if a.network == "unix" && a.address[0] != '@' {
		if fi, err := os.Lstat(a.address); err == nil && fi.Mode().Type() == fs.ModeSocket {
			if c, err := net.DialTimeout("unix", a.address, time.Second); err == nil {
				c.Close()
				return nil, fmt.Errorf("listen unix %s: another server is using the socket", a.address)
			}
			if err := os.Remove(a.address); err != nil {
				return nil, fmt.Errorf("remove stale socket: %w", err)
			}
		}
	}
	l, err := net.Listen(a.network, a.address)
	if err != nil {
		return nil, fmt.Errorf("listen for MySQL clients: %w", err)
	}
	return l, nil
}

// Addrs returns the listeners' addresses (useful with port 0).
func (s *Server) Addrs() []net.Addr {
	out := make([]net.Addr, len(s.listeners))
	for i, l := range s.listeners {
		out[i] = l.Addr()
	}
	return out
}

// Serve accepts clients until ctx is done, then closes the listeners. With a
// ShutdownTimeout it lets the running statements finish for that long, closing each
// connection once it is between commands (drain). Then it cancels every statement still
// running (context.Cause ErrShutdown), closes every connection and returns once every
// session has ended — which waits for engines to honour their contexts.
func (s *Server) Serve(ctx context.Context) error {
	serveCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	// Every listener has listened since Listen, so the kernel queues connections already;
	// Ready is called only once each also has its accept loop.
	var lwg, started sync.WaitGroup
	for _, l := range s.listeners {
		lwg.Add(1)
		started.Add(1)
		go func() {
			defer lwg.Done()
			started.Done()
			s.accept(serveCtx, l)
		}()
	}
	started.Wait()
	for _, a := range s.Addrs() {
		s.log.Info("accepting MySQL clients", "network", a.Network(), "address", a.String())
	}
	if s.cfg.Ready != nil {
		s.cfg.Ready(s.Addrs())
	}
	<-ctx.Done()
	if grace := s.cfg.ShutdownTimeout; grace > 0 {
		s.closeListeners()
		s.mu.Lock()
		s.closing = true
		s.mu.Unlock()
		s.drain(grace)
	}
	// Cancel first, so that queries see ErrShutdown rather than their connection closing,
	// and give them a moment to tell their clients (error 1053).
	cancel(ErrShutdown)
	s.closeListeners()
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.drain(cancelGrace)
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	lwg.Wait()
	s.wg.Wait()
	return nil
}

// cancelGrace bounds how long cancelled statements have, at shutdown, to send their
// clients the error before every connection closes.
const cancelGrace = 2 * time.Second

// drain lets the running commands finish, for at most grace: it closes every connection
// between commands (and those still in their handshake) as it finds them so, until none is
// left or grace has passed. A command that arrives as its connection is closed is answered
// with error 1053, if the connection still takes it.
func (s *Server) drain(grace time.Duration) {
	deadline := time.Now().Add(grace)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	logged := false
	for {
		busy := 0
		s.mu.Lock()
		for nc, sess := range s.conns {
			if sess == nil || sess.drainIfIdle() {
				nc.Close()
				continue
			}
			busy++
		}
		s.mu.Unlock()
		if busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			s.log.Warn("shutdown: the grace period is over: cancelling the statements still running", "statements", busy, "shutdown_timeout", grace)
			return
		}
		if !logged {
			s.log.Info("shutdown: waiting for the running statements to finish", "statements", busy, "shutdown_timeout", grace)
			logged = true
		}
		<-tick.C
	}
}

// Serve listens as cfg says and serves clients until ctx is done.
func Serve(ctx context.Context, cfg Config, engine Engine) error {
	s, err := Listen(cfg, engine)
	if err != nil {
		return err
	}
	return s.Serve(ctx)
}

func (s *Server) closeListeners() {
	for _, l := range s.listeners {
		l.Close()
	}
}

// accept runs l's accept loop until l is closed. Other accept errors (such as running out of
// file descriptors) are logged and retried with a growing pause.
func (s *Server) accept(ctx context.Context, l net.Listener) {
	backoff := 5 * time.Millisecond
	for {
		nc, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
				return
			}
			s.log.Warn("accept MySQL client", "address", l.Addr().String(), "err", err)
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		if s.admit(nc) {
			go s.handleConn(ctx, nc)
		}
	}
}

// admit registers a new connection, or refuses it with 1040 when the server is full or
// closing.
func (s *Server) admit(nc net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing || len(s.conns) >= s.cfg.MaxConnections {
		// An ERR packet in place of the handshake, without SQLSTATE as no capabilities are
		// agreed yet.
		msg := "Too many connections"
		p := []byte{byte(3 + len(msg)), 0, 0, 0, headerErr, byte(ErrConCount & 0xff), byte(ErrConCount >> 8)}
		_ = nc.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = nc.Write(append(p, msg...))
		nc.Close()
		return false
	}
	s.conns[nc] = nil
	s.accepted.Add(1)
	s.wg.Add(1)
	return true
}

// handleConn runs one connection: the connection phase (handshake.go), then the command
// loop.
func (s *Server) handleConn(ctx context.Context, nc net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, nc)
		s.mu.Unlock()
		nc.Close()
	}()
	remote := nc.RemoteAddr()
	_ = nc.SetDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	w := newWire(nc)
	out := &deadlineWriter{wire: w}
	id := s.connectionID()
	lg, err := s.handshake(ctx, w, out, id)
	if err != nil {
		switch {
		case errors.Is(err, errLoginRefused):
			s.log.Info("login refused", "remote", remote.String(), "user", lg.user, "using_password", lg.password, "err", err)
		case w.hungUp():
			// A client that went away (a port probe, one that gave up) did nothing wrong.
			s.log.Debug("handshake failed", "remote", remote.String(), "err", err)
		default:
			// Garbage, a packet over the connection phase's bound, a silent client past the
			// handshake timeout: mysqld counts these as aborted connects.
			s.log.Info("client handshake failed: connection closed", "remote", remote.String(), "err", err)
		}
		return
	}
	_ = nc.SetDeadline(time.Time{})
	out.commandPhase = true

	sess := NewSession(id, lg.user, hostOf(remote))
	sess.server = s.vars
	sess.database = lg.database
	sess.closeConn = func() { nc.Close() }
	s.mu.Lock()
	s.sessions[sess.id] = sess
	s.conns[nc] = sess
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.sessions, sess.id)
		s.mu.Unlock()
		if ender, ok := s.engine.(SessionEnder); ok {
			ender.EndSession(sess)
		}
	}()
	s.log.Debug("session start", "id", sess.id, "user", sess.user, "remote", remote.String(), "tls", w.tls,
		"plugin", lg.plugin, "proof", lg.proof)
	c := &conn{
		srv:             s,
		wire:            w,
		capability:      lg.capability,
		sess:            sess,
		out:             out,
		w:               newPacketWriter(out),
		multiStatements: lg.capability&capMultiStatements != 0,
	}
	c.serve(ctx)
	s.log.Debug("session end", "id", sess.id)
}

// firstConnectionID is the first connection's id.
const firstConnectionID = 10001

// connectionID gives a new connection its id, never 0 (which KILL and CONNECTION_ID() do
// not name).
func (s *Server) connectionID() uint32 {
	for {
		if id := s.lastID.Add(1); id != 0 {
			return id
		}
	}
}

// session returns the live session with connection id id.
func (s *Server) session(id uint32) *Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

// snapshot returns every live session's process information, by id.
func (s *Server) snapshot() []processInfo {
	s.mu.Lock()
	out := make([]processInfo, 0, len(s.sessions))
	for _, sess := range s.sessions {
		out = append(out, sess.processInfo())
	}
	s.mu.Unlock()
	sortProcesses(out)
	return out
}

// hostOf is how SHOW PROCESSLIST and USER() name a client's address.
func hostOf(a net.Addr) string {
	if _, ok := a.(*net.UnixAddr); ok {
		return "localhost"
	}
	return a.String()
}
