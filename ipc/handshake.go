package ipc

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	arrowipc "github.com/apache/arrow-go/v18/arrow/ipc"
)

// handshakeParams are what a side brings to the handshake.
type handshakeParams struct {
	name        string
	token       []byte   // shared secret for TCP peers; empty: none
	allowUIDs   []int    // unix peers allowed besides this process's uid
	unix        []string // server: unix endpoints to advertise
	instance    []byte   // server: process instance id
	compression string   // client: "", "lz4" or "zstd"
}

func newNonce() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}

func uidAllowed(uid int, allow []int) bool {
	return uid == os.Getuid() || slices.Contains(allow, uid)
}

func (c *Conn) writeHello(h *Hello) error {
	var buf [1024]byte
	return c.fw.write(&frame{kind: KindHello, small: AppendHello(buf[:0], h)})
}

func (c *Conn) writeHandshakeError(code, msg string) {
	var buf [512]byte
	_ = c.fw.write(&frame{kind: KindError, small: appendErrorPayload(buf[:0], code, msg)})
}

// readHandshake reads the next handshake frame: a HELLO, or the peer's ERROR turned into an
// error. A header with another protocol version is read whole so the peer's own words
// (its hello or error) can be quoted.
func (c *Conn) readHandshake(ctx context.Context, step string) (Hello, error) {
	f, err := c.nextHandshakeFrame(ctx)
	if err != nil {
		switch {
		case errors.Is(err, ErrVersion):
			return Hello{}, fmt.Errorf("handshake (%s): %w%s", step, err, c.versionDetail(f.h))
		case errors.Is(err, ErrPeerSilent):
			return Hello{}, fmt.Errorf("handshake (%s): %w", step, err)
		case errors.Is(err, os.ErrDeadlineExceeded):
			return Hello{}, fmt.Errorf("handshake (%s): %w: no answer from %s %v after connecting", step, ErrProtocol, c.remote, time.Since(c.started).Round(time.Millisecond))
		case errors.Is(err, io.EOF) && c.fr.bytesIn.Load() == 0:
			return Hello{}, fmt.Errorf("handshake (%s): %w: %s closed the connection without sending anything", step, ErrConnClosed, c.remote)
		case errors.Is(err, io.EOF):
			return Hello{}, fmt.Errorf("handshake (%s): %w: %s closed the connection", step, ErrConnClosed, c.remote)
		}
		return Hello{}, fmt.Errorf("handshake (%s): %w", step, err)
	}
	switch f.h.Kind {
	case KindHello:
		h, err := DecodeHello(f.payload)
		if err != nil {
			return Hello{}, fmt.Errorf("handshake (%s): %w", step, err)
		}
		return h, nil
	case KindError:
		e, err := decodeErrorPayload(f.payload)
		if err != nil {
			return Hello{}, fmt.Errorf("handshake (%s): %w", step, err)
		}
		switch e.Code {
		case CodeAuth:
			return Hello{}, fmt.Errorf("handshake (%s): %w: %s", step, ErrAuth, e.Message)
		case CodeVersion:
			return Hello{}, fmt.Errorf("handshake (%s): %w: %s", step, ErrVersion, e.Message)
		}
		return Hello{}, fmt.Errorf("handshake (%s): peer refused: %w", step, e)
	}
	return Hello{}, fmt.Errorf("handshake (%s): %w: got a %v frame, want HELLO", step, ErrProtocol, f.h.Kind)
}

// nextHandshakeFrame reads a handshake frame within the deadline handshakeDeadline set. On
// a client it also applies the heartbeat's rule before there is a heartbeat: a peer silent
// for HeartbeatTimeout since the connect or its last byte is judged by silenceVerdict (a TCP
// peer, or a unix peer whose process is stopped or gone, has failed; a running unix peer is
// given up to the handshake deadline). A stopped server's kernel still completes the connect
// (into the listen backlog), so without this a redial to a frozen peer waited out the whole
// dial timeout, and so did every caller waiting for that redial.
//
// Invariant: a client's handshake read blocks until the handshake deadline at most, and
// until the server has been silent for HeartbeatTimeout at most unless it is a running unix
// process.
func (c *Conn) nextHandshakeFrame(ctx context.Context) (inFrame, error) {
	if !c.isClient {
		return c.fr.next() // the server's bound is the handshake deadline alone
	}
	check := time.Unix(0, c.lastRead.Load()).Add(c.lim.HeartbeatTimeout) // when to judge the silence
	for {
		dl := check
		if c.handshakeEnd.Before(dl) {
			dl = c.handshakeEnd
		}
		_ = c.nc.SetReadDeadline(dl)
		if ctx.Err() != nil {
			// handshakeDeadline's AfterFunc may have set its deadline before the line above
			// replaced it: stop here rather than wait for the new one.
			return inFrame{}, os.ErrDeadlineExceeded
		}
		f, err := c.fr.next() // a timed-out read keeps a partial frame for the next call
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) || ctx.Err() != nil || !time.Now().Before(c.handshakeEnd) {
			return f, err
		}
		last := time.Unix(0, c.lastRead.Load())
		if silent := time.Since(last); silent < c.lim.HeartbeatTimeout {
			check = last.Add(c.lim.HeartbeatTimeout) // bytes came meanwhile
		} else if verr := c.silenceVerdict(silent); verr != nil {
			return inFrame{}, verr
		} else {
			check = time.Now().Add(c.lim.HeartbeatInterval) // a running unix peer: look again
		}
	}
}

// versionDetail reads the payload of a frame whose header has another version and returns
// what the peer said, if it can be decoded.
func (c *Conn) versionDetail(h Header) string {
	fr := c.fr
	if h.Length > HandshakeMaxFrame || fr.fill(HeaderSize+int(h.Length)) != nil {
		return ""
	}
	p := fr.buf[fr.r+HeaderSize : fr.r+HeaderSize+int(h.Length)]
	if h.Kind == KindError {
		if e, err := decodeErrorPayload(p); err == nil {
			return " (peer says: " + e.Message + ")"
		}
	}
	if hl, err := DecodeHello(p); err == nil && hl.Name != "" {
		return " (peer " + hl.Name + ")"
	}
	return ""
}

func (c *Conn) handshakeDeadline(ctx context.Context) func() {
	dl := time.Now().Add(c.lim.HandshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	c.handshakeEnd = dl
	_ = c.nc.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(time.Now()) })
	return func() {
		stop()
		_ = c.nc.SetDeadline(time.Time{})
	}
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

// clientHandshake runs the client's side: HELLO, the server's HELLO, and for a token the
// proof exchange. On a unix socket it first checks the server's uid with SO_PEERCRED.
func (c *Conn) clientHandshake(ctx context.Context, p handshakeParams) error {
	defer c.handshakeDeadline(ctx)()
	if c.transport == "unix" {
		uid, pid, err := peerCred(c.nc)
		if err != nil {
			return fmt.Errorf("handshake: %w: %w", ErrAuth, err)
		}
		if !uidAllowed(uid, p.allowUIDs) {
			return fmt.Errorf("handshake: %w: the server socket belongs to uid %d (pid %d), not this user (uid %d) or an allowed uid", ErrAuth, uid, pid, os.Getuid())
		}
	}
	nonce := newNonce()
	if err := c.writeHello(&Hello{
		Version: Version, Role: "client", Name: p.name, Nonce: nonce,
		MaxFrame: uint64(c.lim.MaxFrame), Window: uint64(c.lim.StreamWindow), Compression: p.compression,
	}); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	sh, err := c.readHandshake(ctx, "server hello")
	if err != nil {
		return err
	}
	switch {
	case sh.Version != Version:
		return fmt.Errorf("handshake: %w: server speaks protocol version %d, this build speaks %d", ErrVersion, sh.Version, Version)
	case sh.Role != "server" || len(sh.Nonce) == 0 || len(sh.Instance) == 0 || sh.MaxFrame == 0 || sh.Window == 0 || sh.MaxStreams == 0 || sh.Auth == "":
		return fmt.Errorf("handshake: %w: incomplete server hello %+v", ErrProtocol, sh)
	}
	switch sh.Auth {
	case AuthToken:
		if len(p.token) == 0 {
			return fmt.Errorf("handshake: %w: %s requires an auth token (--auth-token-file) and none is configured", ErrAuth, c.remote)
		}
		if err := c.writeHello(&Hello{Proof: authProof(p.token, proofLabelClient, sh.Nonce, nonce)}); err != nil {
			return fmt.Errorf("handshake: %w", err)
		}
		fin, err := c.readHandshake(ctx, "server proof")
		if err != nil {
			return err
		}
		if !hmac.Equal(fin.Proof, authProof(p.token, proofLabelServer, nonce, sh.Nonce)) {
			return fmt.Errorf("handshake: %w: %s could not prove it knows the token", ErrAuth, c.remote)
		}
	case AuthNone:
		if c.transport == "tcp" && len(p.token) > 0 {
			return fmt.Errorf("handshake: %w: %s does not authenticate, and this side has a token configured; refusing an unauthenticated server", ErrAuth, c.remote)
		}
	case AuthPeerCred:
		if c.transport != "unix" {
			return fmt.Errorf("handshake: %w: peercred auth offered on a %s connection", ErrProtocol, c.transport)
		}
	}
	c.peer = sh
	c.sendOpts = compressionOpts(p.compression)
	return nil
}

// serverHandshake runs the server's side. Every refusal is sent to the client as an ERROR
// with a code and a message before the error is returned.
func (c *Conn) serverHandshake(ctx context.Context, p handshakeParams) error {
	defer c.handshakeDeadline(ctx)()
	ch, err := c.readHandshake(ctx, "client hello")
	if err != nil {
		if errors.Is(err, ErrVersion) {
			c.writeHandshakeError(CodeVersion, fmt.Sprintf("this server speaks protocol version %d", Version))
		} else if errors.Is(err, ErrProtocol) {
			c.writeHandshakeError(CodeProtocol, err.Error())
		}
		return err
	}
	switch {
	case ch.Version != Version:
		msg := fmt.Sprintf("client speaks protocol version %d, this server speaks %d", ch.Version, Version)
		c.writeHandshakeError(CodeVersion, msg)
		return fmt.Errorf("handshake: %w: %s", ErrVersion, msg)
	case ch.Role != "client" || len(ch.Nonce) == 0 || ch.MaxFrame == 0 || ch.Window == 0:
		err := fmt.Errorf("handshake: %w: incomplete client hello", ErrProtocol)
		c.writeHandshakeError(CodeProtocol, err.Error())
		return err
	}
	auth := AuthNone
	switch {
	case c.transport == "unix":
		auth = AuthPeerCred
		uid, pid, err := peerCred(c.nc)
		if err == nil && !uidAllowed(uid, p.allowUIDs) {
			err = fmt.Errorf("uid %d (pid %d) is not allowed: only uid %d and --allow-uid %v", uid, pid, os.Getuid(), p.allowUIDs)
		}
		if err != nil {
			c.writeHandshakeError(CodeAuth, err.Error())
			return fmt.Errorf("handshake: %w: %w", ErrAuth, err)
		}
	case len(p.token) > 0:
		auth = AuthToken
	}
	nonce := newNonce()
	if err := c.writeHello(&Hello{
		Version: Version, Role: "server", Name: p.name, Instance: p.instance, Nonce: nonce, Auth: auth,
		MaxFrame: uint64(c.lim.MaxFrame), Window: uint64(c.lim.StreamWindow), MaxStreams: uint64(c.lim.MaxStreams),
		Unix: p.unix,
	}); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	if auth == AuthToken {
		pr, err := c.readHandshake(ctx, "client proof")
		if err != nil {
			return err
		}
		if !hmac.Equal(pr.Proof, authProof(p.token, proofLabelClient, nonce, ch.Nonce)) {
			c.writeHandshakeError(CodeAuth, "wrong auth token")
			return fmt.Errorf("handshake: %w: client %s sent a wrong token proof", ErrAuth, c.remote)
		}
		if err := c.writeHello(&Hello{Proof: authProof(p.token, proofLabelServer, ch.Nonce, nonce)}); err != nil {
			return fmt.Errorf("handshake: %w", err)
		}
	}
	c.peer = ch
	c.sendOpts = compressionOpts(ch.Compression)
	return nil
}
