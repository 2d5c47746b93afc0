package frontend

import (
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// TestBadClientsAreLogged: a client dropped for what it sent (garbage instead of the
// handshake response, a packet out of sequence after login) leaves an info line saying why,
// as mysqld logs aborted connections; one that merely hangs up, before or after login,
// leaves none.
func TestBadClientsAreLogged(t *testing.T) {
	logs := &lockedBuffer{}
	ts := startServer(t, newFakeEngine(), func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	dial := func() net.Conn { return dialGreeted(t, ts) }
	// waitLine waits for a log line with msg, or checks that none comes for a while.
	waitLine := func(msg string, want bool) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Second)
		if !want {
			deadline = time.Now().Add(300 * time.Millisecond)
		}
		for time.Now().Before(deadline) && !strings.Contains(logs.String(), msg) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := strings.Contains(logs.String(), msg); got != want {
			t.Fatalf("log line %q: %v, want %v; the log:\n%s", msg, got, want, logs.String())
		}
	}

	dial().Close()           // a port probe
	rawClient(t, ts).Close() // a client that logs in and goes
	waitLine("client handshake failed", false)
	waitLine("client protocol error", false)

	nc := dial()
	if _, err := nc.Write([]byte("GET / HTTP/1.1\r\nHost: exemgr\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if closed, after := closedWithin(nc, 5*time.Second); !closed {
		t.Fatalf("an HTTP request for a handshake response: still open after %v", after)
	}
	waitLine(`msg="client handshake failed: connection closed" remote=127.0.0.1:`, true)

	nc = rawClient(t, ts)
	if _, err := nc.Write([]byte{9, 0, 0, 7, 0x03, 's', 'e', 'l', 'e', 'c', 't', ' ', '1'}); err != nil {
		t.Fatal(err)
	}
	if closed, after := closedWithin(nc, 5*time.Second); !closed {
		t.Fatalf("a packet out of sequence: still open after %v", after)
	}
	waitLine(`msg="client protocol error: connection closed"`, true)
	if !strings.Contains(logs.String(), "sequence number 7, want 0") {
		t.Errorf("the log does not say which sequence number was wrong:\n%s", logs.String())
	}
}

// dialGreeted dials the server over TCP, closed at cleanup, with a 10s deadline, and reads
// its greeting.
func dialGreeted(t *testing.T, ts *testServer) net.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", ts.tcp, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	readGreeting(t, nc)
	return nc
}
