package frontend

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
)

const testMaxPacket = 64 << 10

// TestMaxAllowedPacket: a command packet over max_allowed_packet gets ERR 1153 and its
// connection closes, without the server buffering it; other clients carry on.
func TestMaxAllowedPacket(t *testing.T) {
	ts := startServer(t, newFakeEngine(), func(c *Config) { c.MaxAllowedPacket = testMaxPacket })

	// A raw client, past the handshake, announces a 1 MiB COM_QUERY and sends it.
	cl, err := client.Connect(ts.tcp, "root", "", "tpch")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	nc := cl.Conn.Conn
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	size := 1 << 20
	go func() {
		hdr := []byte{byte(size), byte(size >> 8), byte(size >> 16), 0, 0x03} // COM_QUERY
		if _, err := nc.Write(hdr); err != nil {
			return
		}
		chunk := bytes.Repeat([]byte("x"), 4096)
		for sent := 1; sent < size; sent += len(chunk) {
			if _, err := nc.Write(chunk[:min(len(chunk), size-sent)]); err != nil {
				return // the server closed the connection, as it should
			}
		}
	}()
	var hdr [4]byte
	if _, err := io.ReadFull(nc, hdr[:]); err != nil {
		t.Fatalf("no answer to an oversized packet: %v", err)
	}
	p := make([]byte, int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)
	if _, err := io.ReadFull(nc, p); err != nil {
		t.Fatal(err)
	}
	if len(p) < 3 || p[0] != 0xff || binary.LittleEndian.Uint16(p[1:]) != ErrNetPacketTooLarge || !strings.Contains(string(p), "max_allowed_packet") {
		t.Fatalf("answer to an oversized packet: %q, want ERR 1153", p)
	}
	if _, err := io.Copy(io.Discard, nc); err != nil && !isReset(err) {
		t.Errorf("after the ERR: %v, want the connection closed", err)
	}

	// go-sql-driver, told the server takes bigger packets than it does.
	db := open(t, ts, "tcp", "root", "", "maxAllowedPacket="+strconv.Itoa(4*testMaxPacket))
	ctx := context.Background()
	big := "select '" + strings.Repeat("y", 2*testMaxPacket) + "'"
	if _, err := db.ExecContext(ctx, big); mysqlCode(err) != ErrNetPacketTooLarge {
		t.Errorf("a %d-byte query: %v, want 1153", len(big), err)
	}
	// The server closed that connection, which the driver's pool only learns on next use:
	// the rest runs on a fresh pool.
	db = open(t, ts, "tcp", "root", "", "maxAllowedPacket="+strconv.Itoa(4*testMaxPacket))
	// Just under the limit, the statement reaches the engine (which does not know it).
	fits := "select '" + strings.Repeat("y", testMaxPacket-20) + "'"
	if _, err := db.ExecContext(ctx, fits); mysqlCode(err) != ErrParse {
		t.Errorf("a %d-byte query: %v, want the fake engine's 1064", len(fits), err)
	}
	// The daemon serves others, and reports the limit.
	_, rows := queryStrings(t, db, "select @@max_allowed_packet")
	if len(rows) != 1 || rows[0][0] != strconv.Itoa(testMaxPacket) {
		t.Errorf("@@max_allowed_packet = %v, want %d", rows, testMaxPacket)
	}
	if _, err := db.ExecContext(ctx, "set max_allowed_packet = 1024"); mysqlCode(err) != 1238 {
		t.Errorf("SET max_allowed_packet: %v, want 1238 (read only)", err)
	}
}

// isReset reports whether err is the peer resetting the connection, which a server that
// closes a socket with unread data does.
func isReset(err error) bool {
	return strings.Contains(err.Error(), "reset by peer")
}

// TestHandshakeReadLimit: before authenticating, a client may not make the server buffer
// more than one packet of the connection phase (64 KiB).
func TestHandshakeReadLimit(t *testing.T) {
	ts := startServer(t, newFakeEngine(), nil)
	nc, err := net.DialTimeout("tcp", ts.tcp, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	var hdr [4]byte
	if _, err := io.ReadFull(nc, hdr[:]); err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(io.Discard, nc, int64(int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)); err != nil {
		t.Fatal(err)
	}
	// A handshake response announcing 16 MiB - 1 bytes, then data until the server hangs up.
	go func() {
		if _, err := nc.Write([]byte{0xff, 0xff, 0xff, 1}); err != nil {
			return
		}
		chunk := make([]byte, 64<<10)
		for range (16 << 20) / len(chunk) {
			if _, err := nc.Write(chunk); err != nil {
				return
			}
		}
	}()
	start := time.Now()
	n, err := io.Copy(io.Discard, nc)
	if err != nil && !isReset(err) {
		t.Fatalf("want the connection closed: %v", err)
	}
	t.Logf("closed after %v (%d bytes back)", time.Since(start), n)
	if time.Since(start) > 5*time.Second {
		t.Errorf("the server took %v to hang up", time.Since(start))
	}
}

func TestCheckMaxAllowedPacket(t *testing.T) {
	for n, ok := range map[int64]bool{1023: false, 1024: true, DefaultMaxAllowedPacket: true, 1 << 30: true, 1<<30 + 1: false} {
		if err := CheckMaxAllowedPacket(n); (err == nil) != ok {
			t.Errorf("%d: %v", n, err)
		}
	}
	cfg := DefaultConfig()
	cfg.Listen = []string{"127.0.0.1:0"}
	cfg.MaxAllowedPacket = 100
	if _, err := Listen(cfg, newFakeEngine()); err == nil || !strings.Contains(err.Error(), "--max-allowed-packet") {
		t.Errorf("Listen with max_allowed_packet 100: %v", err)
	}
}

// readGreeting reads the server's initial handshake packet from a raw connection.
func readGreeting(t *testing.T, nc net.Conn) {
	t.Helper()
	var hdr [4]byte
	if _, err := io.ReadFull(nc, hdr[:]); err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(io.Discard, nc, int64(int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)); err != nil {
		t.Fatal(err)
	}
}

// heapInuse is the process's HeapInuse after a collection.
func heapInuse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestHandshakeHeaderLie: before authenticating, a packet header that announces more than
// the connection phase's budget ends the connection at once, before go-mysql allocates a
// buffer of the announced size (it sizes one from the header). 20 clients each announcing
// 16 MiB - 1 bytes would otherwise make the server hold 320 MiB.
func TestHandshakeHeaderLie(t *testing.T) {
	ts := startServer(t, newFakeEngine(), nil)
	const clients = 20
	before := heapInuse()
	conns := make([]net.Conn, clients)
	for i := range conns {
		nc, err := net.DialTimeout("tcp", ts.tcp, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		readGreeting(t, nc)
		if _, err := nc.Write([]byte{0xff, 0xff, 0xff, 1}); err != nil {
			t.Fatal(err)
		}
		conns[i] = nc
	}
	// Give the server time to act on every header (it blocks reading the payload if it
	// accepted the header).
	time.Sleep(500 * time.Millisecond)
	after := heapInuse()
	grew := int64(after) - int64(before)
	t.Logf("HeapInuse %d MiB -> %d MiB", before>>20, after>>20)
	if grew > 64<<20 {
		t.Errorf("%d clients each announcing a 16 MiB handshake packet grew the heap by %d MiB", clients, grew>>20)
	}
	for i, nc := range conns {
		if closed, after := closedWithin(nc, 5*time.Second); !closed {
			t.Errorf("client %d: still open after %v", i, after)
		}
	}
	// Clients that behave are served.
	cl, err := client.Connect(ts.tcp, "root", "", "tpch")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.Ping(); err != nil {
		t.Fatal(err)
	}
}

// TestCommandHeaderLie: after authentication, a header announcing a big packet costs no
// memory until its bytes arrive: command packets go to packetBuffer, not to a buffer go-mysql
// sizes from the header, and packetBuffer grows only with the data (up to
// max_allowed_packet).
func TestCommandHeaderLie(t *testing.T) {
	ts := startServer(t, newFakeEngine(), nil) // max_allowed_packet 64 MiB
	const clients = 20
	before := heapInuse()
	for range clients {
		nc := rawClient(t, ts)
		if _, err := nc.Write([]byte{0xff, 0xff, 0xff, 0, 0x03}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	after := heapInuse()
	t.Logf("HeapInuse %d MiB -> %d MiB", before>>20, after>>20)
	if grew := int64(after) - int64(before); grew > 64<<20 {
		t.Errorf("%d clients each announcing a 16 MiB command grew the heap by %d MiB", clients, grew>>20)
	}
}
