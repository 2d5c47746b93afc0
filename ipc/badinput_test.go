package ipc

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// rawClient opens a TCP connection to env's server and, if hello is set, completes the
// handshake by hand so the test can then send arbitrary frames.
func rawClient(t *testing.T, env *testEnv, handshake bool) net.Conn {
	t.Helper()
	ep, _ := ParseEndpoint(env.tcp)
	nc, err := net.Dial("tcp", ep.Address)
	if err != nil {
		t.Fatal(err)
	}
	if !handshake {
		return nc
	}
	h := Hello{Version: Version, Role: "client", Name: "raw", Nonce: bytes.Repeat([]byte{1}, 32), MaxFrame: 1 << 20, Window: 1 << 20}
	if _, err := nc.Write(AppendFrame(nil, KindHello, 0, 0, AppendHello(nil, &h))); err != nil {
		t.Fatal(err)
	}
	f := readFrame(t, nc)
	if f.h.Kind != KindHello {
		t.Fatalf("server answered %v", f.h.Kind)
	}
	return nc
}

type rawFrame struct {
	h       Header
	payload []byte
}

func readFrame(t *testing.T, nc net.Conn) rawFrame {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var hb [HeaderSize]byte
	if _, err := io.ReadFull(nc, hb[:]); err != nil {
		t.Fatalf("read header: %v", err)
	}
	h, err := DecodeHeader(hb[:], MaxFrameCap)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, h.Length)
	if _, err := io.ReadFull(nc, p); err != nil {
		t.Fatal(err)
	}
	return rawFrame{h, p}
}

// expectClosed reads until the server closes the connection, returning the error message
// of an ERROR frame it sent first, if any.
func expectClosed(t *testing.T, nc net.Conn) string {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	all, err := io.ReadAll(nc)
	if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("server did not close the connection: %v", err)
	}
	for len(all) >= HeaderSize {
		h, p, n, err := DecodeFrame(all, MaxFrameCap)
		if err != nil {
			break
		}
		if h.Kind == KindError {
			if e, err := decodeErrorPayload(p); err == nil {
				return e.Message
			}
		}
		all = all[n:]
	}
	return ""
}

func TestBadInputClosesOnlyThatConnection(t *testing.T) {
	env := startServer(t, ServerConfig{Name: "bad", Limits: Limits{MaxFrame: 1 << 20, HandshakeTimeout: 300 * time.Millisecond}})
	good := newTestClient(t, env.tcp, ClientConfig{Transport: TransportTCP, ConnsPerPeer: 1})
	validBatch := arrowStreamMessages(t)
	cases := []struct {
		name      string
		handshake bool
		send      func() []byte
		log       string // expected in the server's log
	}{
		{"garbage", false, func() []byte { return []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n") }, "bad magic"},
		{"wrong magic", false, func() []byte { b := AppendFrame(nil, KindHello, 0, 0, nil); b[1] = 'X'; return b }, "bad magic"},
		{"wrong version", false, func() []byte { b := AppendFrame(nil, KindHello, 0, 0, []byte{0x80}); b[2] = 9; return b }, "version 9"},
		{"unknown kind", true, func() []byte { b := AppendFrame(nil, KindPing, 0, 0, []byte{1}); b[3] = 99; return b }, "unknown frame kind 99"},
		{"truncated frame", true, func() []byte { return AppendFrame(nil, KindPing, 0, 0, []byte{1, 2, 3})[:HeaderSize+1] }, "closed inside a PING frame"},
		{"over maximum", true, func() []byte {
			return AppendHeader(nil, Header{Kind: KindBatch, Stream: 1, Length: 2 << 20})
		}, "exceeds the maximum frame size"},
		{"malformed msgpack request", true, func() []byte { return AppendFrame(nil, KindRequest, FlagFin, 1, []byte{0x82, 0xa6, 'm'}) }, "request"},
		{"malformed msgpack credit", true, func() []byte { return AppendFrame(nil, KindPing, 0, 0, []byte{0xc1}) }, "PING payload"},
		{"malformed arrow", true, func() []byte {
			b := AppendFrame(nil, KindRequest, 0, 1, appendRequest(nil, "echo", nil, 0))
			return AppendFrame(b, KindSchema, 0, 1, []byte{0xff, 0xff, 0xff, 0xff, 8, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8})
		}, "malformed Arrow message"},
		{"arrow body does not decode", true, func() []byte {
			b := AppendFrame(nil, KindRequest, 0, 1, appendRequest(nil, "echo", nil, 0))
			b = AppendFrame(b, KindSchema, 0, 1, validBatch[0])
			return AppendFrame(b, KindBatch, 0, 1, shortenedBody(t, validBatch[1]))
		}, "malformed Arrow message: arrow"},
		{"batch before schema", true, func() []byte {
			b := AppendFrame(nil, KindRequest, 0, 1, appendRequest(nil, "echo", nil, 0))
			return AppendFrame(b, KindBatch, 0, 1, validBatch[1])
		}, "BATCH before SCHEMA"},
		{"wrong token", false, func() []byte { return nil }, ""}, // see TestHandshakeAuth
		{"silent peer", false, func() []byte { return nil }, "no answer"},
	}
	check := func(rounds int) {
		for _, tc := range cases {
			if tc.name == "wrong token" {
				continue
			}
			start := time.Now()
			n := rounds
			if tc.name == "silent peer" {
				n = min(n, 3) // each waits out the handshake timeout
			}
			for range n {
				nc := rawClient(t, env, tc.handshake)
				if b := tc.send(); len(b) > 0 {
					if _, err := nc.Write(b); err != nil {
						t.Fatalf("%s: write: %v", tc.name, err)
					}
				}
				if tc.name == "truncated frame" {
					nc.(*net.TCPConn).CloseWrite()
				}
				expectClosed(t, nc)
				nc.Close()
			}
			t.Logf("%s: %d rounds in %v", tc.name, n, time.Since(start))
			if os.Getenv("IPC_DUMP_LOG") != "" {
				os.WriteFile(os.Getenv("IPC_DUMP_LOG"), []byte(env.log.String()), 0o644)
			}
			if tc.log != "" && !env.log.waitLog(tc.log) {
				t.Errorf("%s: server log lacks %q:\n%s", tc.name, tc.log, tail(env.log.String(), 2000))
			}
			if _, err := good.Call(context.Background(), "echo", nil); err != nil {
				t.Fatalf("%s: the good connection failed: %v", tc.name, err)
			}
		}
	}
	check(1) // warm up pools and goroutine stacks
	var m0, m1 runtime.MemStats
	settle()
	runtime.ReadMemStats(&m0)
	g0 := runtime.NumGoroutine()
	check(20)
	settle()
	runtime.ReadMemStats(&m1)
	g1 := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); g1 > g0+5 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond) // the closed connections' goroutines may still be exiting
		g1 = runtime.NumGoroutine()
	}
	if grow := int64(m1.HeapInuse) - int64(m0.HeapInuse); grow > 4<<20 {
		t.Errorf("heap grew by %d bytes over %d bad connections", grow, 20*len(cases))
	}
	if g1 > g0+5 {
		t.Errorf("goroutines %d -> %d", g0, g1)
	}
	if !env.log.waitLog("link: closing connection") {
		t.Errorf("no clear log line")
	}
}

// shortenedBody returns a batch message whose body lost its last 8 bytes, with the
// metadata's bodyLength patched to match: the framing is valid, the buffers it describes
// run past the body.
func shortenedBody(t *testing.T, m []byte) []byte {
	metaLen := int(binary.LittleEndian.Uint32(m[4:]))
	info, err := parseArrowMeta(m[8 : 8+metaLen])
	if err != nil {
		t.Fatal(err)
	}
	out := bytes.Clone(m[:len(m)-8])
	var old, repl [8]byte
	binary.LittleEndian.PutUint64(old[:], uint64(info.bodyLength))
	binary.LittleEndian.PutUint64(repl[:], uint64(info.bodyLength-8))
	i := bytes.Index(out[8:8+metaLen], old[:])
	if i < 0 {
		t.Fatal("bodyLength not found in the metadata")
	}
	copy(out[8+i:], repl[:])
	if _, _, _, err := parseArrowMessage(out); err != nil {
		t.Fatalf("shortened message should frame correctly: %v", err)
	}
	return out
}

func settle() {
	for range 3 {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func TestHandshakeAuthAndVersion(t *testing.T) {
	token := []byte("0123456789abcdef-secret")
	env := startServer(t, ServerConfig{Name: "auth", AuthToken: token})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	dial := func(tok []byte) error {
		ep, _ := ParseEndpoint(env.tcp)
		nc, err := Dial(ctx, ep)
		if err != nil {
			return err
		}
		c, err := NewClientConn(ctx, nc, ClientConfig{AuthToken: tok})
		if err == nil {
			_, err = c.Call(ctx, "echo", nil)
			c.Close()
		}
		return err
	}
	if err := dial(token); err != nil {
		t.Fatalf("right token: %v", err)
	}
	err := dial([]byte("0123456789abcdef-wrong"))
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "wrong auth token") {
		t.Fatalf("wrong token: %v", err)
	}
	if !env.log.waitLog("wrong token proof") {
		t.Fatalf("server log lacks the auth failure:\n%s", env.log.String())
	}
	if err := dial(nil); !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "requires an auth token") {
		t.Fatalf("no token: %v", err)
	}
	// The unix socket authenticates by uid instead, without the token.
	cl := newTestClient(t, env.unix, ClientConfig{Transport: TransportUnix})
	if _, err := cl.Call(ctx, "echo", nil); err != nil {
		t.Fatalf("unix without token: %v", err)
	}

	// A client speaking version 2: both sides name the mismatch.
	ep, _ := ParseEndpoint(env.tcp)
	nc, err := Dial(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	b := AppendFrame(nil, KindHello, 0, 0, AppendHello(nil, &Hello{Version: 2, Role: "client", Nonce: make([]byte, 32), MaxFrame: 1 << 20, Window: 1 << 20}))
	b[2] = 2
	nc.Write(b)
	msg := expectClosed(t, nc)
	if !strings.Contains(msg, "speaks protocol version 1") {
		t.Fatalf("server's answer to version 2: %q", msg)
	}
	if !env.log.waitLog("peer speaks protocol version 2") {
		t.Fatalf("server log lacks the version mismatch")
	}
}

func TestClientSeesVersionMismatch(t *testing.T) {
	// A fake server answering with a version-2 header.
	a, b := net.Pipe()
	go func() {
		var hb [HeaderSize]byte
		io.ReadFull(b, hb[:])
		h, _ := DecodeHeader(hb[:], MaxFrameCap)
		io.CopyN(io.Discard, b, int64(h.Length))
		f := AppendFrame(nil, KindError, 0, 0, appendErrorPayload(nil, CodeVersion, "this server speaks protocol version 2"))
		f[2] = 2
		b.Write(f)
		b.Close()
	}()
	_, err := NewClientConn(context.Background(), a, ClientConfig{})
	if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "this server speaks protocol version 2") {
		t.Fatalf("%v", err)
	}
}
