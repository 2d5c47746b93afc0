package ipc

import (
	"crypto/hmac"
	"errors"
	"fmt"
	"slices"
	"time"
)

// handshakeParams are what a side brings to the handshake.
type handshakeParams struct {
	name        string
	token       []byte   // shared secret for TCP peers; empty: none
	allowUIDs   []int    // unix peers allowed besides this process's uid
	unix        []string // server: unix endpoints to advertise
	instance    []byte   // server: process instance id
	compression string   // client: "", "lz4" or "zstd"
	// shm: a client's shared-memory segment size to ask for, a server's largest to offer;
	// 0: none. Only on unix sockets.
	shm uint64
}

// hsStep is what a handshaking side waits for.
type hsStep uint8

const (
	hsServerHello hsStep = iota + 1 // client
	hsServerProof                   // client, auth "token"
	hsClientHello                   // server
	hsClientProof                   // server, auth "token"
	hsShmSetup                      // server: its segments are being created (shmCreated)
)

func (s hsStep) String() string {
	switch s {
	case hsServerHello:
		return "server hello"
	case hsServerProof:
		return "server proof"
	case hsClientHello:
		return "client hello"
	case hsClientProof:
		return "client proof"
	case hsShmSetup:
		return "shared-memory set-up"
	}
	return "none"
}

// handshake is the state of a connection's handshake (PROTOCOL.md, "Handshake").
type handshake struct {
	step  hsStep
	end   time.Time // the whole handshake's deadline
	first Hello     // the peer's first hello
}

// startHandshake begins the handshake at now, to complete by end: a client checks the
// server socket's owner and queues its HELLO; a server waits for the client's.
func (c *core) startHandshake(now, end time.Time, a *actions) {
	now = c.clock(now)
	c.hs.end = end
	if !c.cfg.isClient {
		c.hs.step = hsClientHello
		return
	}
	c.hs.step = hsServerHello
	p := c.cfg.params
	if c.cfg.transport == "unix" {
		if err := c.cfg.peerCredErr; err != nil {
			c.handshakeFailed(now, fmt.Errorf("handshake: %w: %w", ErrAuth, err), a)
			return
		}
		if uid := c.cfg.peerUID; !c.uidAllowed(uid) {
			c.handshakeFailed(now, fmt.Errorf("handshake: %w: the server socket belongs to uid %d (pid %d), not this user (uid %d) or an allowed uid", ErrAuth, uid, c.cfg.peerPID, c.cfg.selfUID), a)
			return
		}
	}
	var shm uint64
	if c.cfg.transport == "unix" {
		shm = p.shm
	}
	c.queueHello(&Hello{
		Version: Version, Role: "client", Name: p.name, Nonce: c.cfg.nonce,
		MaxFrame: uint64(c.lim.MaxFrame), Window: uint64(c.lim.StreamWindow), Compression: p.compression, Shm: shm,
	})
}

func (c *core) uidAllowed(uid int) bool {
	return uid == c.cfg.selfUID || slices.Contains(c.cfg.params.allowUIDs, uid)
}

func (c *core) queueHello(h *Hello) {
	var buf [1024]byte
	c.out.frame(KindHello, 0, 0, nil, AppendHello(buf[:0], h))
}

// handshakeFailed fails a handshake with err, naming the step unless err already says
// "handshake". A server that cannot read the client's hello tells it why, as a version or
// protocol ERROR.
func (c *core) handshakeFailed(now time.Time, err error, a *actions) {
	step := c.hs.step
	if !startsWith(err.Error(), "handshake") {
		err = fmt.Errorf("handshake (%s): %w", step, err)
	}
	var tell []byte
	if step == hsClientHello {
		switch {
		case errors.Is(err, ErrVersion):
			tell = appendErrorPayload(nil, CodeVersion, fmt.Sprintf("this server speaks protocol version %d", Version))
		case errors.Is(err, ErrProtocol):
			tell = appendErrorPayload(nil, CodeProtocol, err.Error())
		}
	}
	c.refuse(now, err, tell, a)
}

// refuse fails the handshake with err, telling the peer tell (an ERROR payload) if set.
func (c *core) refuse(now time.Time, err error, tell []byte, a *actions) {
	c.fail(now, err, tell, c.hs.end.Sub(now), a)
}

func startsWith(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

// handshakeFrame takes one frame received during the handshake: the peer's HELLO, or its
// ERROR refusing.
func (c *core) handshakeFrame(now time.Time, f inFrame, a *actions) {
	if f.owned != nil {
		defer c.cfg.pool.Put(f.owned)
	}
	switch f.h.Kind {
	case KindHello:
		h, err := DecodeHello(f.payload)
		if err != nil {
			c.handshakeFailed(now, err, a)
			return
		}
		switch c.hs.step {
		case hsServerHello:
			c.onServerHello(now, h, a)
		case hsServerProof:
			c.onServerProof(now, h, a)
		case hsClientHello:
			c.onClientHello(now, h, a)
		case hsClientProof:
			c.onClientProof(now, h, a)
		}
	case KindError:
		e, err := decodeErrorPayload(f.payload)
		switch {
		case err != nil:
		case e.Code == CodeAuth:
			err = fmt.Errorf("%w: %s", ErrAuth, e.Message)
		case e.Code == CodeVersion:
			err = fmt.Errorf("%w: %s", ErrVersion, e.Message)
		default:
			err = fmt.Errorf("peer refused: %w", e)
		}
		c.handshakeFailed(now, err, a)
	default:
		c.handshakeFailed(now, fmt.Errorf("%w: got a %v frame, want HELLO", ErrProtocol, f.h.Kind), a)
	}
}

func (c *core) onServerHello(now time.Time, sh Hello, a *actions) {
	p := c.cfg.params
	switch {
	case sh.Version != Version:
		c.refuse(now, fmt.Errorf("handshake: %w: server speaks protocol version %d, this build speaks %d", ErrVersion, sh.Version, Version), nil, a)
		return
	case sh.Role != "server" || len(sh.Nonce) == 0 || len(sh.Instance) == 0 || sh.MaxFrame == 0 || sh.Window == 0 || sh.MaxStreams == 0 || sh.Auth == "":
		c.refuse(now, fmt.Errorf("handshake: %w: incomplete server hello %+v", ErrProtocol, sh), nil, a)
		return
	}
	switch sh.Auth {
	case AuthToken:
		if len(p.token) == 0 {
			c.refuse(now, fmt.Errorf("handshake: %w: %s requires an auth token (--auth-token-file) and none is configured", ErrAuth, c.cfg.remote), nil, a)
			return
		}
		c.hs.first = sh
		c.hs.step = hsServerProof
		c.queueHello(&Hello{Proof: authProof(p.token, proofLabelClient, sh.Nonce, c.cfg.nonce)})
		return
	case AuthNone:
		if c.cfg.transport == "tcp" && len(p.token) > 0 {
			c.refuse(now, fmt.Errorf("handshake: %w: %s does not authenticate, and this side has a token configured; refusing an unauthenticated server", ErrAuth, c.cfg.remote), nil, a)
			return
		}
	case AuthPeerCred:
		if c.cfg.transport != "unix" {
			c.refuse(now, fmt.Errorf("handshake: %w: peercred auth offered on a %s connection", ErrProtocol, c.cfg.transport), nil, a)
			return
		}
	}
	if sh.Shm != 0 {
		// Only asked for, only on a unix socket, and no larger than asked.
		asked := p.shm
		if c.cfg.transport != "unix" {
			asked = 0
		}
		if sh.Shm > asked {
			c.refuse(now, fmt.Errorf("handshake: %w: the server offers shared memory of %d bytes a direction on a %s connection; this side asked for %d", ErrProtocol, sh.Shm, c.cfg.transport, asked), nil, a)
			return
		}
		c.shmSize = sh.Shm
	}
	c.established(now, sh)
}

func (c *core) onServerProof(now time.Time, fin Hello, a *actions) {
	sh := c.hs.first
	if !hmac.Equal(fin.Proof, authProof(c.cfg.params.token, proofLabelServer, c.cfg.nonce, sh.Nonce)) {
		c.refuse(now, fmt.Errorf("handshake: %w: %s could not prove it knows the token", ErrAuth, c.cfg.remote), nil, a)
		return
	}
	c.established(now, sh)
}

func (c *core) onClientHello(now time.Time, ch Hello, a *actions) {
	p := c.cfg.params
	switch {
	case ch.Version != Version:
		msg := fmt.Sprintf("client speaks protocol version %d, this server speaks %d", ch.Version, Version)
		c.refuse(now, fmt.Errorf("handshake: %w: %s", ErrVersion, msg), appendErrorPayload(nil, CodeVersion, msg), a)
		return
	case ch.Role != "client" || len(ch.Nonce) == 0 || ch.MaxFrame == 0 || ch.Window == 0:
		err := fmt.Errorf("handshake: %w: incomplete client hello", ErrProtocol)
		c.refuse(now, err, appendErrorPayload(nil, CodeProtocol, err.Error()), a)
		return
	}
	auth := AuthNone
	switch {
	case c.cfg.transport == "unix":
		auth = AuthPeerCred
		err := c.cfg.peerCredErr
		if uid := c.cfg.peerUID; err == nil && !c.uidAllowed(uid) {
			err = fmt.Errorf("uid %d (pid %d) is not allowed: only uid %d and --allow-uid %v", uid, c.cfg.peerPID, c.cfg.selfUID, p.allowUIDs)
		}
		if err != nil {
			c.refuse(now, fmt.Errorf("handshake: %w: %w", ErrAuth, err), appendErrorPayload(nil, CodeAuth, err.Error()), a)
			return
		}
	case len(p.token) > 0:
		auth = AuthToken
	}
	if ch.Shm != 0 && p.shm != 0 && auth == AuthPeerCred {
		// The loop creates the segments, then shmCreated answers the hello.
		c.hs.first = ch
		c.hs.step = hsShmSetup
		a.shmCreate = min(ch.Shm, p.shm)
		return
	}
	c.serverHello(now, ch, auth, 0)
}

// serverHello answers the client's hello ch, offering shared memory of shm bytes a
// direction if nonzero.
func (c *core) serverHello(now time.Time, ch Hello, auth string, shm uint64) {
	p := c.cfg.params
	c.queueHello(&Hello{
		Version: Version, Role: "server", Name: p.name, Instance: p.instance, Nonce: c.cfg.nonce, Auth: auth,
		MaxFrame: uint64(c.lim.MaxFrame), Window: uint64(c.lim.StreamWindow), MaxStreams: uint64(c.lim.MaxStreams),
		Unix: p.unix, Shm: shm,
	})
	if auth == AuthToken {
		c.hs.first = ch
		c.hs.step = hsClientProof
		return
	}
	c.established(now, ch)
}

// shmCreated answers shmCreate: the server's segments of size bytes exist (0: creating
// them failed, and the connection goes on without shared memory). The hello that offers
// them goes out now; the loop passes their descriptors along with it.
func (c *core) shmCreated(now time.Time, size uint64) {
	now = c.clock(now)
	if c.phase != phaseHandshake || c.hs.step != hsShmSetup {
		return
	}
	c.shmSize = size
	c.serverHello(now, c.hs.first, AuthPeerCred, size)
}

func (c *core) onClientProof(now time.Time, pr Hello, a *actions) {
	ch, p := c.hs.first, c.cfg.params
	if !hmac.Equal(pr.Proof, authProof(p.token, proofLabelClient, c.cfg.nonce, ch.Nonce)) {
		c.refuse(now, fmt.Errorf("handshake: %w: client %s sent a wrong token proof", ErrAuth, c.cfg.remote), appendErrorPayload(nil, CodeAuth, "wrong auth token"), a)
		return
	}
	c.queueHello(&Hello{Proof: authProof(p.token, proofLabelServer, ch.Nonce, c.cfg.nonce)})
	c.established(now, ch)
}

// established opens the connection with the peer's hello: frames up to this side's maximum
// are accepted from now on, and the heartbeat's clocks start.
func (c *core) established(now time.Time, peer Hello) {
	c.peer = peer
	c.phase = phaseOpen
	c.dec.maxFrame = uint32(c.lim.MaxFrame)
	c.dec.quoteVersion = false
	c.lastIn, c.lastTick = now, now
	c.judgeAt, c.checking = time.Time{}, false
}
