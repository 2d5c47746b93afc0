package ipc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/colinkdb/colink/internal/bufpool"
)

// ClientConfig configures a Client.
type ClientConfig struct {
	// Transport is tcp, unix, shm or auto (DefaultTransport if empty): how to reach a peer
	// given by a tcp:// URL. A unix:// URL is always dialled as given, with shared memory
	// asked for under shm and auto. The size of its segments is Limits.ShmSize.
	Transport    Transport
	ConnsPerPeer int           // connections kept to the peer (default 2)
	Name         string        // for the peer's logs
	AuthToken    []byte        // answers a TCP server's challenge; with it, unauthenticated TCP servers are refused
	AllowUIDs    []int         // unix servers may run as these uids besides this process's
	Compression  string        // "", "lz4" or "zstd": Arrow body compression for batches both ways
	Limits       Limits        // connection limits
	DialTimeout  time.Duration // per connection attempt, handshake included (default 2s)
	BackoffMin   time.Duration // first reconnection delay (default 50ms)
	BackoffMax   time.Duration // longest reconnection delay (default 2s)
	Pool         *bufpool.Pool // receive buffers; a new pool (DefaultPoolIdle, DefaultPoolIdleTime) if nil
	Logger       *slog.Logger  // slog.Default() if nil
	// OnState, if set, is called (from the client's goroutines, serially) whenever the peer
	// goes from no live connection to one (Up) or back (down, with the reason).
	OnState func(PeerEvent)
}

// PeerEvent reports a change in a peer's reachability.
type PeerEvent struct {
	Peer      string // the peer's URL as configured
	Up        bool
	Transport string // of the connection that came up
	Endpoint  string // the endpoint that connection dialled
	Err       error  // why the peer went down
}

// Client keeps a small pool of connections to one peer, reconnecting with backoff, and
// spreads streams over them: each Open goes to the live connection with the fewest open
// streams (round robin among equals).
type Client struct {
	peer  Endpoint
	cfg   ClientConfig
	log   *slog.Logger
	pool  *bufpool.Pool
	local bool // the peer's host is this machine

	mu       sync.Mutex
	slots    []*slot
	rr       int
	closed   bool
	changed  chan struct{}         // closed and replaced on every state change
	up       int                   // live connections
	failures uint64                // failed dial attempts, ever
	closedBy map[string]LinkTotals // counters of the connections that ended, by transport
	lastErr  error
	done     chan struct{}
	wg       sync.WaitGroup
	events   chan PeerEvent
}

type slot struct {
	idx  int
	conn *Conn
	kick chan struct{}
	ep   string // endpoint of the live connection
}

// NewClient validates the configuration and starts connecting to peer (a URL) in the
// background; Open waits for a connection when none is up yet.
func NewClient(peer string, cfg ClientConfig) (*Client, error) {
	ep, err := ParseEndpoint(peer)
	if err != nil {
		return nil, err
	}
	if cfg.Transport == "" {
		cfg.Transport = DefaultTransport
	}
	if _, err := ParseTransport(string(cfg.Transport)); err != nil {
		return nil, err
	}
	if cfg.ConnsPerPeer <= 0 {
		cfg.ConnsPerPeer = 2
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 2 * time.Second
	}
	if cfg.BackoffMin <= 0 {
		cfg.BackoffMin = 50 * time.Millisecond
	}
	if cfg.BackoffMax < cfg.BackoffMin {
		cfg.BackoffMax = max(2*time.Second, cfg.BackoffMin)
	}
	if cfg.Compression != "" && cfg.Compression != "lz4" && cfg.Compression != "zstd" {
		return nil, fmt.Errorf("compression %q: want lz4 or zstd", cfg.Compression)
	}
	cfg.Limits = cfg.Limits.withDefaults()
	c := &Client{peer: ep, cfg: cfg, changed: make(chan struct{}), done: make(chan struct{}), events: make(chan PeerEvent, 64)}
	c.log = cfg.Logger
	if c.log == nil {
		c.log = slog.Default()
	}
	c.log = c.log.With("peer", ep.String())
	c.pool = cfg.Pool
	if c.pool == nil {
		c.pool = newDefaultPool()
	}
	// A unix:// URL is dialled as given whatever the transport, which decides only what to
	// do with tcp:// URLs (see PROTOCOL.md, "Choosing a transport").
	if ep.Network == "tcp" && cfg.Transport != TransportTCP {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.DialTimeout)
		c.local, err = IsLocalHost(ctx, ep.Host())
		cancel()
		if err != nil {
			c.log.Warn("link: cannot tell whether the peer is local; treating it as remote", "err", err)
		}
		if !c.local && (cfg.Transport == TransportUnix || cfg.Transport == TransportShm) {
			return nil, fmt.Errorf("peer %s is not on this host; transport %s needs a local peer (use tcp or auto)", ep, cfg.Transport)
		}
	}
	for i := range cfg.ConnsPerPeer {
		s := &slot{idx: i, kick: make(chan struct{}, 1)}
		c.slots = append(c.slots, s)
	}
	c.wg.Add(len(c.slots) + 1)
	go c.deliverEvents()
	for _, s := range c.slots {
		go c.maintain(s)
	}
	return c, nil
}

// Peer returns the peer's URL.
func (c *Client) Peer() string { return c.peer.String() }

func (c *Client) deliverEvents() {
	defer c.wg.Done()
	for {
		select {
		case ev := <-c.events:
			if c.cfg.OnState != nil {
				c.cfg.OnState(ev)
			}
		case <-c.done:
			return
		}
	}
}

func (c *Client) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *Client) emit(ev PeerEvent) {
	select {
	case c.events <- ev:
	default: // a consumer this slow loses events; the state is still readable with Up
	}
}

// maintain keeps one slot connected: dial, serve until the connection ends, back off, redial.
func (c *Client) maintain(s *slot) {
	defer c.wg.Done()
	backoff := time.Duration(0)
	for {
		if backoff > 0 {
			jitter := time.Duration(rand.Int64N(int64(backoff)/5 + 1))
			t := time.NewTimer(backoff - backoff/10 + jitter)
			select {
			case <-c.done:
				t.Stop()
				return
			case <-s.kick: // someone is waiting for a connection: try now
				t.Stop()
			case <-t.C:
			}
		}
		select {
		case <-c.done:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.DialTimeout)
		conn, ep, err := c.dial(ctx, true)
		cancel()
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			if conn != nil {
				conn.Close()
			}
			return
		}
		if err != nil && errors.Is(err, errDialStalled) {
			c.mu.Unlock()
			c.log.Info("link: redialling at once after a dial that failed while this process was stopped", "err", err)
			continue // each such dial lasted its whole budget: this loop does not spin
		}
		if err != nil {
			c.failures++
			c.lastErr = err
			c.notifyLocked()
			c.mu.Unlock()
			if backoff == 0 {
				c.log.Warn("link: cannot connect to peer", "err", err)
			} else {
				c.log.Debug("link: reconnect failed", "err", err)
			}
			backoff = min(max(2*backoff, c.cfg.BackoffMin), c.cfg.BackoffMax)
			continue
		}
		backoff = 0
		s.conn, s.ep = conn, ep
		c.up++
		if c.up == 1 {
			c.emit(PeerEvent{Peer: c.peer.String(), Up: true, Transport: conn.Transport(), Endpoint: ep})
		}
		c.notifyLocked()
		c.mu.Unlock()

		select {
		case <-conn.Done():
		case <-c.done:
			conn.Close()
			return
		}
		final := conn.Stats()
		c.mu.Lock()
		if c.closedBy == nil {
			c.closedBy = map[string]LinkTotals{}
		}
		addTo(c.closedBy, &final)
		s.conn = nil
		c.up--
		err = conn.Err()
		c.lastErr = err
		down := c.up == 0 && !c.closed
		if down {
			c.emit(PeerEvent{Peer: c.peer.String(), Err: err})
		}
		c.notifyLocked()
		c.mu.Unlock()
		if down { // not under c.mu, which every Open and Call takes: a log write can block
			c.log.Warn("link: peer down", "err", err)
		}
		// Redial at once after a connection that was up; back off if that fails too.
	}
}

// dial makes one connection according to the transport rule; see PROTOCOL.md "Choosing a
// transport". It returns the connection and the endpoint it reached.
func (c *Client) dial(ctx context.Context, logChoice bool) (*Conn, string, error) {
	hp := clientParams(c.cfg)
	if c.peer.Network == "unix" {
		conn, note, err := c.dialUnix(ctx, c.peer, hp)
		if err == nil && logChoice {
			c.logChoice(conn, c.peer.String(), c.reason(), note)
		}
		return conn, c.peer.String(), err
	}
	if c.cfg.Transport == TransportTCP || !c.local {
		conn, err := c.dialEndpoint(ctx, c.peer, hp)
		if err == nil && logChoice {
			c.logChoice(conn, c.peer.String(), c.reason(), "")
		}
		return conn, c.peer.String(), err
	}
	// A local peer given by TCP, transport unix, shm or auto: ask it for its unix sockets.
	tc, err := c.dialEndpoint(ctx, c.peer, hp)
	if err != nil {
		return nil, "", err
	}
	var tried []string
	for _, u := range tc.peer.Unix {
		ep, err := ParseEndpoint(u)
		if err != nil || ep.Network != "unix" {
			tried = append(tried, fmt.Sprintf("%s: not a unix endpoint", u))
			continue
		}
		uc, note, err := c.dialUnix(ctx, ep, hp)
		if err != nil {
			tried = append(tried, err.Error())
			continue
		}
		if !bytes.Equal(uc.peer.Instance, tc.peer.Instance) {
			uc.Close()
			tried = append(tried, fmt.Sprintf("%s is served by another process than %s", u, c.peer))
			continue
		}
		tc.Close()
		if logChoice {
			c.logChoice(uc, u, fmt.Sprintf("transport %s: peer %s is local and advertises %s", c.cfg.Transport, c.peer, u), note)
		}
		return uc, u, nil
	}
	why := "the peer advertises no unix socket"
	if len(tried) > 0 {
		why = fmt.Sprintf("its unix sockets failed: %v", tried)
	}
	if c.cfg.Transport == TransportUnix || c.cfg.Transport == TransportShm {
		tc.Close()
		return nil, "", fmt.Errorf("transport %s: %s: %s", c.cfg.Transport, c.peer, why)
	}
	if logChoice {
		c.logChoice(tc, c.peer.String(), "transport auto: falling back to tcp: "+why, "")
	}
	return tc, c.peer.String(), nil
}

// dialUnix dials a unix endpoint, asking for shared memory if hp does. A peer that does
// not offer it gives the plain unix socket; if setting it up fails, the endpoint is
// dialled again without. note says which, for the log.
func (c *Client) dialUnix(ctx context.Context, ep Endpoint, hp handshakeParams) (*Conn, string, error) {
	conn, err := c.dialEndpoint(ctx, ep, hp)
	switch {
	case hp.shm == 0:
		return conn, "", err
	case err != nil && errors.Is(err, errShm):
		note := fmt.Sprintf("shared memory could not be set up (%v): the plain unix socket", err)
		hp.shm = 0
		conn, err = c.dialEndpoint(ctx, ep, hp)
		return conn, note, err
	case err == nil && conn.shm == nil:
		return conn, "the peer does not offer shared memory (an older peer, or one with it disabled): the plain unix socket", nil
	}
	return conn, "", err
}

// logChoice logs the transport a connection came up on and why: at Warn when transport
// shm was asked for and the connection has none.
func (c *Client) logChoice(conn *Conn, ep, reason, note string) {
	if note != "" {
		reason += "; " + note
	}
	level := slog.LevelInfo
	if c.cfg.Transport == TransportShm && conn.shm == nil {
		level = slog.LevelWarn
	}
	c.log.Log(context.Background(), level, "link: connected", "transport", conn.Transport(), "endpoint", ep, "reason", reason)
}

func (c *Client) reason() string {
	switch {
	case c.peer.Network == "unix":
		return fmt.Sprintf("the peer was given as a unix endpoint (transport %s)", c.cfg.Transport)
	case c.cfg.Transport == TransportTCP:
		return "transport tcp"
	}
	return fmt.Sprintf("transport %s: peer is not on this host", c.cfg.Transport)
}

// ShmBytes is the most shared memory a client of cfg maps to each of peers peers at
// once: two segments a connection when it asks for shared memory (transports shm and
// auto), none otherwise. The pages are resident from their creation, and shared with the
// peer, whose resident size counts them too.
func (cfg ClientConfig) ShmBytes(peers int) int64 {
	conns := cfg.ConnsPerPeer
	if conns <= 0 {
		conns = 2
	}
	return int64(peers) * int64(conns) * 2 * int64(clientParams(cfg).shm)
}

// clientParams are the handshake parameters of a client with cfg (whose Limits have
// their defaults): shared memory is asked for under transports shm and auto.
func clientParams(cfg ClientConfig) handshakeParams {
	hp := handshakeParams{name: cfg.Name, token: cfg.AuthToken, allowUIDs: cfg.AllowUIDs, compression: cfg.Compression}
	if t := cfg.Transport; t.wantsShm() || (t == "" && DefaultTransport.wantsShm()) {
		hp.shm = normShmSize(cfg.Limits.withDefaults().ShmSize)
	}
	return hp
}

func (c *Client) dialEndpoint(ctx context.Context, ep Endpoint, hp handshakeParams) (*Conn, error) {
	nc, err := Dial(ctx, ep)
	if err != nil {
		return nil, err
	}
	conn := newConn(nc, true, c.pool, c.cfg.Limits, c.log)
	conn.setRemote(ep.String())
	if err := conn.handshake(ctx, hp); err != nil {
		nc.Close()
		return nil, fmt.Errorf("%s: %w", ep, err)
	}
	conn.start()
	return conn, nil
}

// live reports whether a slot's connection is up: set, and not failed (a connection that
// has failed stays in its slot until the slot's goroutine notices, a moment later).
func (s *slot) live() bool {
	if s.conn == nil {
		return false
	}
	select {
	case <-s.conn.Done():
		return false
	default:
		return true
	}
}

// pick returns the live connection with the fewest open streams.
func (c *Client) pickLocked() *Conn {
	var best *Conn
	bestN := 0
	n := len(c.slots)
	for i := range n {
		s := c.slots[(c.rr+i)%n]
		if !s.live() {
			continue
		}
		if k := s.conn.load(); best == nil || k < bestN {
			best, bestN = s.conn, k
		}
	}
	c.rr++
	return best
}

// Open opens a stream on the least loaded live connection; see Conn.Open. With no live
// connection it asks every slot to redial now and waits for the outcome: it fails with an
// error wrapping ErrPeerDown if a dial attempt fails meanwhile, or when ctx is done.
func (c *Client) Open(ctx context.Context, method string, args []byte, fin bool) (*Stream, error) {
	for attempt := 0; ; attempt++ {
		conn, err := c.conn(ctx)
		if err != nil {
			return nil, err
		}
		st, err := conn.Open(ctx, method, args, fin)
		if err != nil && errors.Is(err, ErrConnClosed) && attempt < 3 {
			continue // the connection died under us; its slot is redialling
		}
		return st, err
	}
}

// failStalled fails the live connections that are dead by the peer's reckoning because
// this process was stopped (Conn.failIfStalled), before one is picked for a request: after
// a resume the first request would otherwise go out on a connection the peer has closed.
// Their slots redial.
func (c *Client) failStalled() {
	// The common case, nothing stalled, looks without allocating (this runs before every
	// request); conn's lock is taken under the client's, as pickLocked takes it.
	c.mu.Lock()
	stalled := false
	for _, s := range c.slots {
		if s.live() && s.conn.stalledIdle() {
			stalled = true
			break
		}
	}
	c.mu.Unlock()
	if !stalled {
		return
	}
	for _, conn := range c.Conns() {
		conn.failIfStalled()
	}
}

// conn returns the least loaded live connection, waiting for one as Open describes.
func (c *Client) conn(ctx context.Context) (*Conn, error) {
	c.failStalled()
	c.mu.Lock()
	for {
		if c.closed {
			c.mu.Unlock()
			return nil, fmt.Errorf("%w: client for %s closed", ErrConnClosed, c.peer)
		}
		conn := c.pickLocked()
		if conn == nil {
			break
		}
		c.mu.Unlock()
		if !conn.failIfPeerGone() {
			return conn, nil
		}
		c.mu.Lock() // it failed: pickLocked skips it, so this ends within len(slots) turns
	}
	f0, changed := c.failures, c.changed
	c.mu.Unlock()
	for _, s := range c.slots {
		signal(s.kick)
	}
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %s: waiting for a connection: %w", ErrPeerDown, c.peer, ctx.Err())
		case <-changed:
		}
		c.mu.Lock()
		conn := c.pickLocked()
		switch {
		case conn != nil:
			c.mu.Unlock()
			return conn, nil
		case c.failures > f0:
			err := c.lastErr
			c.mu.Unlock()
			return nil, c.downErr(err)
		case c.closed:
			c.mu.Unlock()
			return nil, fmt.Errorf("%w: client for %s closed", ErrConnClosed, c.peer)
		}
		changed = c.changed
		c.mu.Unlock()
	}
}

// Go starts a unary call on the least loaded live connection; see Conn.Go. With no live
// connection it waits for one as Open does, for at most the client's DialTimeout; use
// GoContext to bound the wait otherwise. Once a connection is up Go does not block.
func (c *Client) Go(method string, args []byte, flush bool, done CallDone) error {
	c.failStalled()
	c.mu.Lock()
	conn := c.pickLocked()
	c.mu.Unlock()
	if conn != nil && !conn.failIfPeerGone() {
		if err := conn.Go(method, args, flush, done); err == nil || !errors.Is(err, ErrConnClosed) {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.DialTimeout)
	defer cancel()
	return c.GoContext(ctx, method, args, flush, done)
}

// GoContext is Go waiting for a connection until ctx is done.
func (c *Client) GoContext(ctx context.Context, method string, args []byte, flush bool, done CallDone) error {
	for attempt := 0; ; attempt++ {
		conn, err := c.conn(ctx)
		if err != nil {
			return err
		}
		err = conn.Go(method, args, flush, done)
		if err != nil && errors.Is(err, ErrConnClosed) && attempt < 3 {
			continue
		}
		return err
	}
}

// Call is a unary request on the least loaded connection; see Conn.Call. An error wrapping
// ErrNotSent means the request certainly never left (no connection, or it failed first);
// after any other error the server may have run it.
func (c *Client) Call(ctx context.Context, method string, args []byte) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		conn, err := c.conn(ctx)
		if err != nil {
			return nil, notSent(err)
		}
		end, err, sent := conn.call(ctx, method, args)
		if err != nil && !sent && errors.Is(err, ErrConnClosed) && attempt < 3 {
			continue // the connection died before the request left; its slot is redialling
		}
		if err != nil && !sent {
			return nil, notSent(err)
		}
		return end, err
	}
}

// WaitUp waits until at least one connection is up, or the first dial attempt after the
// call fails, or ctx is done.
func (c *Client) WaitUp(ctx context.Context) error {
	c.mu.Lock()
	f0 := c.failures
	for c.up == 0 {
		if c.closed {
			c.mu.Unlock()
			return fmt.Errorf("%w: client closed", ErrConnClosed)
		}
		if c.failures > f0 {
			err := c.lastErr
			c.mu.Unlock()
			return c.downErr(err)
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %s: %w", ErrPeerDown, c.peer, ctx.Err())
		case <-ch:
		}
		c.mu.Lock()
	}
	c.mu.Unlock()
	return nil
}

// downErr is ErrPeerDown for a dial's failure err, naming the peer once: a dial's error
// names the endpoint it dialled, which is usually the peer.
func (c *Client) downErr(err error) error {
	if strings.Contains(err.Error(), c.peer.String()) {
		return fmt.Errorf("%w: %w", ErrPeerDown, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrPeerDown, c.peer, err)
}

// Up reports whether at least one connection is live.
func (c *Client) Up() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.up > 0
}

// Conns returns the live connections.
func (c *Client) Conns() []*Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Conn
	for _, s := range c.slots {
		if s.live() {
			out = append(out, s.conn)
		}
	}
	return out
}

// Stats returns the counters of the live connections.
func (c *Client) Stats() []ConnStats {
	var out []ConnStats
	for _, conn := range c.Conns() {
		out = append(out, conn.Stats())
	}
	return out
}

// Close closes every connection and stops reconnecting; open streams fail.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.done)
	c.notifyLocked()
	var conns []*Conn
	for _, s := range c.slots {
		if s.conn != nil {
			conns = append(conns, s.conn)
		}
	}
	c.mu.Unlock()
	for _, conn := range conns {
		conn.Close()
	}
	c.wg.Wait()
	return nil
}

// NewClientConn runs the client handshake on an established nc (a socket, or an in-memory
// pipe in tests) and returns the connection, outside any Client pool.
func NewClientConn(ctx context.Context, nc net.Conn, cfg ClientConfig) (*Conn, error) {
	conn := newConn(nc, true, cfg.Pool, cfg.Limits, cfg.Logger)
	if err := conn.handshake(ctx, clientParams(cfg)); err != nil {
		nc.Close()
		return nil, err
	}
	conn.start()
	return conn, nil
}
