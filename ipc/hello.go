package ipc

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
)

// Auth modes a server announces in its hello.
const (
	AuthNone     = "none"     // loopback TCP without a token
	AuthToken    = "token"    // TCP: shared-secret challenge
	AuthPeerCred = "peercred" // unix socket: SO_PEERCRED uid check
)

// Hello is the payload of a HELLO frame. The same map type carries every handshake step;
// each step sets the fields PROTOCOL.md lists for it and a receiver ignores unknown keys.
type Hello struct {
	Version     uint64   // "version": the protocol version the sender speaks
	Role        string   // "role": "client" or "server"
	Name        string   // "name": free text for logs, e.g. "primproc@host pid 123"
	Instance    []byte   // "instance": server only, 16 random bytes naming the process
	Nonce       []byte   // "nonce": 32 random bytes
	Auth        string   // "auth": server only: none, token or peercred
	MaxFrame    uint64   // "max_frame": largest payload the sender accepts
	Window      uint64   // "window": initial per-stream credit the sender grants
	MaxStreams  uint64   // "max_streams": server only: concurrent streams per connection
	Unix        []string // "unix": server only: unix endpoints (URLs) the process serves
	Compression string   // "compression": client only: "", "lz4" or "zstd" for server→client batches
	Proof       []byte   // "proof": steps 3 and 4, HMAC-SHA256 of the challenge
	// Shm ("shm"), on a unix socket: the client's asks for shared memory with segments of
	// this many bytes a direction; the server's agrees, with the size it created (at most
	// the client's), and passes the two segments along with its hello.
	Shm uint64
}

// AppendHello encodes h as a msgpack map, omitting empty fields.
func AppendHello(dst []byte, h *Hello) []byte {
	n := 0
	count := func(ok bool) {
		if ok {
			n++
		}
	}
	count(h.Version != 0)
	count(h.Role != "")
	count(h.Name != "")
	count(len(h.Instance) > 0)
	count(len(h.Nonce) > 0)
	count(h.Auth != "")
	count(h.MaxFrame != 0)
	count(h.Window != 0)
	count(h.MaxStreams != 0)
	count(len(h.Unix) > 0)
	count(h.Compression != "")
	count(len(h.Proof) > 0)
	count(h.Shm != 0)
	dst = mpAppendMapHeader(dst, n)
	if h.Version != 0 {
		dst = mpAppendUint(mpAppendStr(dst, "version"), h.Version)
	}
	if h.Role != "" {
		dst = mpAppendStr(mpAppendStr(dst, "role"), h.Role)
	}
	if h.Name != "" {
		dst = mpAppendStr(mpAppendStr(dst, "name"), h.Name)
	}
	if len(h.Instance) > 0 {
		dst = mpAppendBin(mpAppendStr(dst, "instance"), h.Instance)
	}
	if len(h.Nonce) > 0 {
		dst = mpAppendBin(mpAppendStr(dst, "nonce"), h.Nonce)
	}
	if h.Auth != "" {
		dst = mpAppendStr(mpAppendStr(dst, "auth"), h.Auth)
	}
	if h.MaxFrame != 0 {
		dst = mpAppendUint(mpAppendStr(dst, "max_frame"), h.MaxFrame)
	}
	if h.Window != 0 {
		dst = mpAppendUint(mpAppendStr(dst, "window"), h.Window)
	}
	if h.MaxStreams != 0 {
		dst = mpAppendUint(mpAppendStr(dst, "max_streams"), h.MaxStreams)
	}
	if len(h.Unix) > 0 {
		dst = mpAppendArrayHeader(mpAppendStr(dst, "unix"), len(h.Unix))
		for _, u := range h.Unix {
			dst = mpAppendStr(dst, u)
		}
	}
	if h.Compression != "" {
		dst = mpAppendStr(mpAppendStr(dst, "compression"), h.Compression)
	}
	if len(h.Proof) > 0 {
		dst = mpAppendBin(mpAppendStr(dst, "proof"), h.Proof)
	}
	if h.Shm != 0 {
		dst = mpAppendUint(mpAppendStr(dst, "shm"), h.Shm)
	}
	return dst
}

// maxHelloList bounds the "unix" list so a hostile hello cannot make us allocate much.
const maxHelloList = 64

// DecodeHello parses a HELLO payload. It is a pure function of its input: it checks types and
// bounds, skips unknown keys, and copies what it keeps. It does not check that a step has the
// fields it needs; the handshake does.
func DecodeHello(payload []byte) (Hello, error) {
	var h Hello
	r := mpReader{b: payload}
	n, err := r.readMapHeader()
	if err != nil {
		return h, fmt.Errorf("%w: hello: %w", ErrProtocol, err)
	}
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		kb, err := r.readStrBytes()
		if err != nil {
			return h, fmt.Errorf("%w: hello key: %w", ErrProtocol, err)
		}
		key := string(kb)
		if seen[key] {
			return h, fmt.Errorf("%w: hello repeats key %q", ErrProtocol, key)
		}
		seen[key] = true
		var b []byte
		switch key {
		case "version":
			h.Version, err = r.readUint()
		case "role":
			h.Role, err = r.readString()
			if err == nil && h.Role != "client" && h.Role != "server" {
				err = fmt.Errorf("role %q is neither client nor server", h.Role)
			}
		case "name":
			h.Name, err = r.readString()
		case "instance":
			if b, err = r.readStrBytes(); err == nil {
				h.Instance = append([]byte(nil), b...)
			}
		case "nonce":
			if b, err = r.readStrBytes(); err == nil {
				if len(b) < 16 || len(b) > 64 {
					err = fmt.Errorf("nonce of %d bytes, want 16..64", len(b))
				}
				h.Nonce = append([]byte(nil), b...)
			}
		case "auth":
			h.Auth, err = r.readString()
			if err == nil && h.Auth != AuthNone && h.Auth != AuthToken && h.Auth != AuthPeerCred {
				err = fmt.Errorf("unknown auth mode %q", h.Auth)
			}
		case "max_frame":
			h.MaxFrame, err = r.readUint()
			if err == nil && (h.MaxFrame < MinMaxFrame || h.MaxFrame > MaxFrameCap) {
				err = fmt.Errorf("max_frame %d outside %d..%d", h.MaxFrame, MinMaxFrame, MaxFrameCap)
			}
		case "window":
			h.Window, err = r.readUint()
			if err == nil && (h.Window < MinMaxFrame || h.Window > MaxFrameCap) {
				err = fmt.Errorf("window %d outside %d..%d", h.Window, MinMaxFrame, MaxFrameCap)
			}
		case "max_streams":
			h.MaxStreams, err = r.readUint()
			if err == nil && (h.MaxStreams == 0 || h.MaxStreams > 1<<20) {
				err = fmt.Errorf("max_streams %d outside 1..%d", h.MaxStreams, 1<<20)
			}
		case "unix":
			var m int
			if m, err = r.readArrayHeader(); err == nil {
				if m > maxHelloList {
					err = fmt.Errorf("unix list of %d entries, at most %d", m, maxHelloList)
				}
				for j := 0; j < m && err == nil; j++ {
					var s string
					if s, err = r.readString(); err == nil {
						h.Unix = append(h.Unix, s)
					}
				}
			}
		case "compression":
			h.Compression, err = r.readString()
			if err == nil && h.Compression != "" && h.Compression != "lz4" && h.Compression != "zstd" {
				err = fmt.Errorf("unknown compression %q", h.Compression)
			}
		case "proof":
			if b, err = r.readStrBytes(); err == nil {
				if len(b) != sha256.Size {
					err = fmt.Errorf("proof of %d bytes, want %d", len(b), sha256.Size)
				}
				h.Proof = append([]byte(nil), b...)
			}
		case "shm":
			h.Shm, err = r.readUint()
			if err == nil && !shmSizeOK(h.Shm) {
				err = fmt.Errorf("shm segment size %d: want a multiple of %d in %d..%d", h.Shm, shmSizeMultiple, MinShmSize, MaxShmSize)
			}
		default:
			err = r.skip()
		}
		if err != nil {
			return h, fmt.Errorf("%w: hello field %q: %w", ErrProtocol, key, err)
		}
	}
	if !r.done() {
		return h, fmt.Errorf("%w: hello: %d trailing bytes", ErrProtocol, len(payload)-r.off)
	}
	return h, nil
}

// authProof computes HMAC-SHA256(token, label || first || second): the client proves with
// label "colink/1 client", first the server's nonce and second its own; the server answers
// with label "colink/1 server" and the nonces swapped.
func authProof(token []byte, label string, first, second []byte) []byte {
	m := hmac.New(sha256.New, token)
	m.Write([]byte(label))
	m.Write(first)
	m.Write(second)
	return m.Sum(nil)
}

const (
	proofLabelClient = "colink/1 client"
	proofLabelServer = "colink/1 server"
)
