package ipc

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestTransportChoice(t *testing.T) {
	env := startServer(t, ServerConfig{Name: "choice", Limits: Limits{ShmSize: 1 << 20}})
	ctx := context.Background()
	for _, tc := range []struct {
		url  string
		tr   Transport
		want string
	}{
		{env.tcp, TransportAuto, "shm"}, // local peer: its advertised socket, shared memory
		{env.tcp, TransportTCP, "tcp"},
		{env.tcp, TransportUnix, "unix"},
		{env.tcp, TransportShm, "shm"},
		{env.unix, TransportAuto, "shm"},
		{env.unix, TransportShm, "shm"},
	} {
		lg, lb := newTestLogger()
		cl := newTestClient(t, tc.url, ClientConfig{Transport: tc.tr, Logger: lg, Limits: Limits{ShmSize: 1 << 20}})
		if _, err := cl.Call(ctx, "echo", nil); err != nil {
			t.Fatal(err)
		}
		for _, c := range cl.Conns() {
			if c.Transport() != tc.want {
				t.Errorf("%s with %s: connection over %s, want %s", tc.url, tc.tr, c.Transport(), tc.want)
			}
		}
		if !lb.waitLog("link: connected") || !lb.waitLog("transport="+tc.want) {
			t.Errorf("%s with %s: no log of the choice:\n%s", tc.url, tc.tr, lb.String())
		}
	}
	// An explicit unix URL is dialled as unix whatever the transport, the default included;
	// with shared memory when the transport (the compiled-in default under colink_shm)
	// is shm.
	for _, tr := range []Transport{TransportTCP, ""} {
		cl := newTestClient(t, env.unix, ClientConfig{Transport: tr})
		if _, err := cl.Call(ctx, "echo", nil); err != nil {
			t.Fatalf("unix URL with transport %q: %v", tr, err)
		}
		want := "unix"
		if tr == "" && DefaultTransport == TransportShm {
			want = "shm"
		}
		for _, c := range cl.Conns() {
			if c.Transport() != want {
				t.Errorf("unix URL with transport %q: connection over %s", tr, c.Transport())
			}
		}
	}
	if _, err := NewClient("tcp://192.0.2.1:8620", ClientConfig{Transport: TransportUnix}); err == nil || !strings.Contains(err.Error(), "not on this host") {
		t.Errorf("transport unix to a remote peer: %v", err)
	}
}

func TestAutoFallsBackToTCP(t *testing.T) {
	env := startServer(t, ServerConfig{Name: "fallback"})
	waitFor(t, func() bool { // wait for Serve to advertise its socket, then replace it
		env.srv.mu.Lock()
		defer env.srv.mu.Unlock()
		return len(env.srv.unix) > 0
	})
	env.srv.mu.Lock()
	env.srv.unix = []string{"unix:///nonexistent/colink/x.sock"} // advertised but unreachable
	env.srv.mu.Unlock()
	lg, lb := newTestLogger()
	cl := newTestClient(t, env.tcp, ClientConfig{Transport: TransportAuto, Logger: lg})
	if _, err := cl.Call(context.Background(), "echo", nil); err != nil {
		t.Fatal(err)
	}
	if c := cl.Conns()[0]; c.Transport() != "tcp" || !lb.waitLog("falling back to tcp") {
		t.Fatalf("transport %s, log:\n%s", c.Transport(), lb.String())
	}
}

func TestStreamsSpreadOverConnections(t *testing.T) {
	env := startServer(t, ServerConfig{Name: "spread"})
	cl := newTestClient(t, env.tcp, ClientConfig{Transport: TransportTCP, ConnsPerPeer: 3})
	waitFor(t, func() bool { return len(cl.Conns()) == 3 })
	var streams []*Stream
	for range 30 {
		st, err := cl.Open(context.Background(), "block", nil, true)
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, st)
	}
	for _, c := range cl.Conns() {
		if n := c.ActiveStreams(); n != 10 {
			t.Errorf("connection %d carries %d of 30 streams, want 10", c.id, n)
		}
	}
	for _, st := range streams {
		st.Close()
	}
}

func TestReconnectAfterServerRestart(t *testing.T) {
	dir := t.TempDir()
	ep := Endpoint{Network: "unix", Address: filepath.Join(dir, "r.sock")}
	start := func() (*Server, chan struct{}) {
		lg, _ := newTestLogger()
		s := NewServer(ServerConfig{Logger: lg})
		testHandlers(s)
		ln, err := Listen(ep, false)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { s.Serve(ln); close(done) }()
		return s, done
	}
	s1, d1 := start()
	events := make(chan PeerEvent, 10)
	cl := newTestClient(t, ep.String(), ClientConfig{Transport: TransportUnix, ConnsPerPeer: 1, OnState: func(e PeerEvent) { events <- e }})
	if _, err := cl.Call(context.Background(), "echo", nil); err != nil {
		t.Fatal(err)
	}
	s1.Shutdown(context.Background())
	<-d1
	deadline := time.After(10 * time.Second)
	for down := false; !down; {
		select {
		case e := <-events:
			down = !e.Up
		case <-deadline:
			t.Fatal("no down event")
		}
	}
	if _, err := cl.Call(context.Background(), "echo", nil); err == nil {
		t.Fatal("call succeeded with the server down")
	}
	s2, d2 := start()
	defer func() { s2.Shutdown(context.Background()); <-d2 }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		if _, err := cl.Call(ctx, "echo", nil); err == nil {
			break
		} else if ctx.Err() != nil {
			t.Fatalf("no reconnection: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestListenRules(t *testing.T) {
	if _, err := Listen(Endpoint{Network: "tcp", Address: "0.0.0.0:0"}, false); err == nil || !strings.Contains(err.Error(), "without an auth token") {
		t.Fatalf("non-loopback without token: %v", err)
	}
	ln, err := Listen(Endpoint{Network: "tcp", Address: "0.0.0.0:0"}, true)
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()

	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "pm.sock")
	ep := Endpoint{Network: "unix", Address: path}
	l1, err := Listen(ep, false)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v %v", fi.Mode(), err)
	}
	if _, err := Listen(ep, false); err == nil || !strings.Contains(err.Error(), "live process") {
		t.Fatalf("second listener on a live socket: %v", err)
	}
	l1.Close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("socket file left after Close: %v", err)
	}
	// A stale socket file (its process died without cleaning up) is replaced.
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()
	l2, err := Listen(ep, false)
	if err != nil {
		t.Fatalf("stale socket not replaced: %v", err)
	}
	l2.Close()
	// A regular file is never replaced.
	os.WriteFile(path, []byte("x"), 0o600)
	if _, err := Listen(ep, false); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("regular file: %v", err)
	}
}

func TestParseEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"tcp://127.0.0.1:8620": "tcp 127.0.0.1:8620",
		"tcp://[::1]:1":        "tcp [::1]:1",
		"unix:///run/x.sock":   "unix /run/x.sock",
		"unix://@colink-pm0":   "unix @colink-pm0",
	} {
		ep, err := ParseEndpoint(in)
		if err != nil || ep.Network+" "+ep.Address != want || ep.String() != in {
			t.Errorf("%s: %+v %v", in, ep, err)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:8620", "tcp://host", "unix://relative", "http://x:1", "unix://@"} {
		if _, err := ParseEndpoint(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Unix connections made by Dial and accepted by a Listener get a send buffer of at least
// unixSocketBuffer (the kernel reports twice what was set).
func TestUnixSocketBuffer(t *testing.T) {
	dir := t.TempDir()
	ep := Endpoint{Network: "unix", Address: filepath.Join(dir, "b.sock")}
	ln, err := Listen(ep, false)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- nc
	}()
	dc, err := Dial(context.Background(), ep)
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	ac, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	defer ac.Close()
	b, _ := os.ReadFile("/proc/sys/net/core/wmem_max")
	wmemMax, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for name, nc := range map[string]net.Conn{"dialled": dc, "accepted": ac} {
		got := sendBuffer(t, nc)
		if got < 2*unixSocketBuffer {
			if os.Geteuid() != 0 && wmemMax < unixSocketBuffer {
				t.Skipf("%s: SO_SNDBUF %d: net.core.wmem_max (%d) caps it and SO_SNDBUFFORCE needs CAP_NET_ADMIN", name, got, wmemMax)
			}
			t.Errorf("%s unix connection: SO_SNDBUF %d, want at least %d", name, got, 2*unixSocketBuffer)
		}
	}
}

func sendBuffer(t *testing.T, nc net.Conn) int {
	t.Helper()
	rc, err := nc.(*net.UnixConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var gerr error
	if err := rc.Control(func(fd uintptr) { n, gerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF) }); err != nil || gerr != nil {
		t.Fatal(err, gerr)
	}
	return n
}
