package frontend

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
)

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// rawClient connects and authenticates with go-mysql's client and returns the socket, for
// writing packets by hand.
func rawClient(t *testing.T, ts *testServer) net.Conn {
	t.Helper()
	cl, err := client.Connect(ts.tcp, "root", "", "tpch")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl.Conn.Conn
}

// closedWithin reports whether the server closes nc within d (reading and discarding
// whatever it sends first), and how long that took.
func closedWithin(nc net.Conn, d time.Duration) (bool, time.Duration) {
	start := time.Now()
	_ = nc.SetReadDeadline(start.Add(d))
	_, err := io.Copy(io.Discard, nc)
	if err == nil || isReset(err) || errors.Is(err, io.EOF) {
		return true, time.Since(start)
	}
	return false, time.Since(start)
}

// comPing is a whole COM_PING packet (sequence 0).
var comPing = []byte{1, 0, 0, 0, 0x0e}

// TestReadTimeouts: a client that stalls in the middle of a packet loses its connection after
// net_read_timeout, also when the packet began in the same read as the previous command; an
// idle client loses it after wait_timeout (the session's, if it SETs one); clients that keep
// to the timeouts are unaffected, and @@variables report them.
func TestReadTimeouts(t *testing.T) {
	const netRead = 300 * time.Millisecond
	logs := &lockedBuffer{}
	ts := startServer(t, newFakeEngine(), func(c *Config) {
		c.NetReadTimeout = netRead
		c.WaitTimeout = time.Hour
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})

	t.Run("stall after the header", func(t *testing.T) {
		nc := rawClient(t, ts)
		// A COM_QUERY of 100 bytes: its header and first byte, then nothing.
		if _, err := nc.Write([]byte{100, 0, 0, 0, 0x03}); err != nil {
			t.Fatal(err)
		}
		if closed, after := closedWithin(nc, 5*time.Second); !closed || after < netRead {
			t.Fatalf("closed %v after %v, want closed after net_read_timeout (%v)", closed, after, netRead)
		}
	})

	t.Run("stall in a packet read ahead", func(t *testing.T) {
		nc := rawClient(t, ts)
		// A whole COM_PING and, in the same write, the start of the next packet.
		if _, err := nc.Write(append(append([]byte{}, comPing...), 50, 0, 0, 0)); err != nil {
			t.Fatal(err)
		}
		if closed, after := closedWithin(nc, 5*time.Second); !closed {
			t.Fatalf("still open after %v, want closed after net_read_timeout (%v), not wait_timeout", after, netRead)
		}
	})

	t.Run("stall after a command pipelined with the login", func(t *testing.T) {
		// The handshake response and a COM_PING in one write: go-mysql reads the ping
		// before the login completes. The next packet's header, then nothing.
		nc := dialGreeted(t, ts)
		const caps = 0x0200 | 0x8000 | 0x80000 // CLIENT_PROTOCOL_41, CLIENT_SECURE_CONNECTION, CLIENT_PLUGIN_AUTH
		resp := []byte{caps & 0xff, caps >> 8 & 0xff, caps >> 16, 0, 0, 0, 0, 1, 45}
		resp = append(resp, make([]byte, 23)...)
		resp = append(resp, "root\x00\x00caching_sha2_password\x00"...) // empty auth data
		login := append([]byte{byte(len(resp)), 0, 0, 1}, resp...)
		if _, err := nc.Write(append(login, comPing...)); err != nil {
			t.Fatal(err)
		}
		var answers [2][5]byte
		for i := range answers {
			if _, err := io.ReadFull(nc, answers[i][:]); err != nil || answers[i][4] != 0 {
				t.Fatalf("answer %d: %q, %v; want OK", i, answers[i], err)
			}
			if _, err := io.CopyN(io.Discard, nc, int64(answers[i][0])-1); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := nc.Write([]byte{50, 0, 0, 0}); err != nil {
			t.Fatal(err)
		}
		if closed, after := closedWithin(nc, 5*time.Second); !closed {
			t.Fatalf("still open after %v, want closed after net_read_timeout (%v), not wait_timeout", after, netRead)
		}
	})

	t.Run("slow but steady", func(t *testing.T) {
		// A server of its own with a longer net_read_timeout, so that the gaps, which must
		// be within it, stay so on a loaded machine.
		const netRead = 1500 * time.Millisecond
		ts := startServer(t, newFakeEngine(), func(c *Config) { c.NetReadTimeout = netRead; c.WaitTimeout = time.Hour })
		nc := rawClient(t, ts)
		// Each part of the packet arrives within net_read_timeout of the last.
		for _, part := range [][]byte{comPing[:2], comPing[2:4], comPing[4:]} {
			if _, err := nc.Write(part); err != nil {
				t.Fatal(err)
			}
			time.Sleep(netRead / 10)
		}
		// Idle for longer than net_read_timeout between commands: wait_timeout applies.
		time.Sleep(netRead + 300*time.Millisecond)
		if _, err := nc.Write(comPing); err != nil {
			t.Fatal(err)
		}
		_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		var answers [2][5]byte
		for i := range answers {
			if _, err := io.ReadFull(nc, answers[i][:4]); err != nil {
				t.Fatalf("answer %d: %v", i, err)
			}
			n := int(answers[i][0])
			body := make([]byte, n)
			if _, err := io.ReadFull(nc, body); err != nil || n == 0 || body[0] != 0 {
				t.Fatalf("answer %d: %q, %v; want OK", i, body, err)
			}
		}
	})

	t.Run("driver", func(t *testing.T) {
		db := open(t, ts, "tcp", "root", "", "")
		db.SetMaxOpenConns(1)
		id := ""
		for i := range 3 {
			_, rows := queryStrings(t, db, "select @@net_read_timeout, @@wait_timeout, @@session.interactive_timeout, connection_id()")
			if len(rows) != 1 || strings.Join(rows[0][:3], " ") != "1 3600 3600" {
				t.Fatalf("timeouts %v, want 1 3600 3600 (whole seconds, rounded up)", rows)
			}
			// database/sql would hide a closed connection by opening another.
			if i > 0 && rows[0][3] != id {
				t.Fatalf("connection %s after idling, want the same connection %s", rows[0][3], id)
			}
			id = rows[0][3]
			if i < 2 {
				time.Sleep(2 * netRead) // idle: within wait_timeout
			}
		}
		if _, err := db.ExecContext(context.Background(), "set wait_timeout = 0"); mysqlCode(err) != ErrWrongValueForVar {
			t.Errorf("set wait_timeout = 0: %v, want 1231", err)
		}
	})

	t.Run("session wait_timeout", func(t *testing.T) {
		nc := rawClient(t, ts)
		q := "set wait_timeout = 1"
		if _, err := nc.Write(append([]byte{byte(len(q) + 1), 0, 0, 0, 0x03}, q...)); err != nil {
			t.Fatal(err)
		}
		closed, after := closedWithin(nc, 5*time.Second)
		if !closed || after < time.Second {
			t.Fatalf("closed %v after %v, want closed after the session's wait_timeout (1s)", closed, after)
		}
	})

	if l := logs.String(); !strings.Contains(l, "timeout=net_read_timeout") || !strings.Contains(l, "timeout=wait_timeout") {
		t.Errorf("the log does not say which timeouts closed connections:\n%s", l)
	}
}

// TestWaitTimeoutZero: --wait-timeout 0 keeps an idle connection open.
func TestWaitTimeoutZero(t *testing.T) {
	ts := startServer(t, newFakeEngine(), func(c *Config) { c.NetReadTimeout = 100 * time.Millisecond; c.WaitTimeout = 0 })
	nc := rawClient(t, ts)
	if closed, _ := closedWithin(nc, 500*time.Millisecond); closed {
		t.Fatal("an idle connection was closed with wait_timeout 0")
	}
	_ = nc.SetReadDeadline(time.Time{})
	if _, err := nc.Write(comPing); err != nil {
		t.Fatal(err)
	}
	var ok [5]byte
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(nc, ok[:]); err != nil || ok[4] != 0 {
		t.Fatalf("ping after idling: %q, %v", ok, err)
	}
}

// TestWriteTimeout: a client that stops reading a result loses its connection after
// net_write_timeout, and the query is cancelled, instead of holding both forever.
func TestWriteTimeout(t *testing.T) {
	const netWrite = 300 * time.Millisecond
	logs := &lockedBuffer{}
	eng := newFakeEngine()
	eng.bigRows = 4_000_000 // ~100 MB of rows: far more than the sockets buffer
	ts := startServer(t, eng, func(c *Config) {
		c.NetWriteTimeout = netWrite
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	nc := rawClient(t, ts)
	q := "select * from big"
	start := time.Now()
	if _, err := nc.Write(append([]byte{byte(len(q) + 1), 0, 0, 0, 0x03}, q...)); err != nil {
		t.Fatal(err)
	}
	// Never read: the server's writes stall once the socket buffers fill.
	select {
	case cause := <-eng.cancelled:
		t.Logf("query cancelled after %v: %v", time.Since(start), cause)
	case <-time.After(10 * time.Second):
		t.Fatal("the query still runs 10s after its client stopped reading")
	}
	if closed, after := closedWithin(nc, 10*time.Second); !closed {
		t.Fatalf("still open after %v", after)
	}
	if l := logs.String(); !strings.Contains(l, "timeout=net_write_timeout") {
		t.Errorf("the log does not say net_write_timeout closed the connection:\n%s", l)
	}

	// Clients that read are unaffected, and the variable reports the bound.
	db := open(t, ts, "tcp", "root", "", "")
	_, rows := queryStrings(t, db, "select @@net_write_timeout")
	if len(rows) != 1 || rows[0][0] != "1" {
		t.Errorf("@@net_write_timeout = %v, want 1 (whole seconds, rounded up)", rows)
	}
	if _, err := db.ExecContext(context.Background(), "set net_write_timeout = 0"); mysqlCode(err) != ErrWrongValueForVar {
		t.Errorf("set net_write_timeout = 0: %v, want 1231", err)
	}
}
