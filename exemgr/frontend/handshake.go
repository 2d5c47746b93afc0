package frontend

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// Capabilities the command phase supports beyond those go-mysql's Server advertises, which
// it keeps in an unexported field with no option to extend. go-sql-driver (since 1.8) drops
// any capability the server does not advertise, so without these its multiStatements=true
// would be silently ignored.
const (
	capLocalFiles      = 1 << 7  // CLIENT_LOCAL_FILES: LOAD DATA LOCAL INFILE
	capMultiStatements = 1 << 16 // CLIENT_MULTI_STATEMENTS
	capMultiResults    = 1 << 17 // CLIENT_MULTI_RESULTS
	extraCapabilities  = capLocalFiles | capMultiStatements | capMultiResults
)

// capabilityPatchConn is the connection handed to go-mysql for the connection phase. It
// ORs extraCapabilities into the capability flags of the first packet the server writes, the
// initial handshake (Protocol::HandshakeV10), and bounds what the client may send before the
// command phase (budget), which go-mysql would otherwise buffer whole.
type capabilityPatchConn struct {
	net.Conn
	once     sync.Once
	budget   readBudget
	timeouts readTimeouts
	// login is what the client's handshake response says, and authed is set once the
	// connection phase is over; both serve rewriteAccessDenied (denied.go), in the
	// connection's goroutine.
	login  loginSniffer
	authed bool
	// ioErr is the socket's last read or write error, to tell a client that hung up
	// from one that sent what the protocol does not allow (hungUp).
	ioErr error
}

func newCapabilityPatchConn(nc net.Conn) *capabilityPatchConn {
	c := &capabilityPatchConn{Conn: nc}
	c.budget.left.Store(handshakeReadLimit)
	return c
}

// Read is the connection's Read, within the budget and, in the command phase, within the
// read deadline that applies (see readTimeouts).
func (c *capabilityPatchConn) Read(p []byte) (int, error) {
	if c.timeouts.on {
		if err := c.timeouts.arm(c.Conn); err != nil {
			return 0, err
		}
	}
	n, err := c.budget.read(c.Conn, p)
	if err != nil {
		c.ioErr = err
	}
	if !c.authed {
		c.login.observe(p[:n])
	}
	if c.timeouts.on {
		if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
			c.timeouts.expired = c.timeouts.which()
		}
		c.timeouts.read += int64(n)
	}
	return n, err
}

// authenticated lifts the budget (command packets are bounded by max_allowed_packet) and
// starts the command phase's read deadlines.
func (c *capabilityPatchConn) authenticated() {
	c.budget.left.Store(-1)
	c.timeouts.on = true
	c.authed = true
}

func (c *capabilityPatchConn) Write(p []byte) (int, error) {
	c.once.Do(func() { patchHandshakeCapabilities(p) })
	if !c.authed {
		if q, ok := rewriteAccessDenied(p, &c.login, mysqlHost(c.Conn.RemoteAddr())); ok {
			if _, err := c.Conn.Write(q); err != nil {
				c.ioErr = err
				return 0, err
			}
			return len(p), nil // the caller wrote p, as far as it knows
		}
	}
	n, err := c.Conn.Write(p)
	if err != nil {
		c.ioErr = err
	}
	return n, err
}

// hungUp reports whether the connection's last socket error was the client going away
// (end of stream, a reset, a broken pipe) or the server closing it, rather than something
// the client sent: go-mysql reports both alike (ErrBadConn with the cause as text), and only
// the second is worth a line in the log. Not safe for concurrent use with Read and Write.
func (c *capabilityPatchConn) hungUp() bool {
	err := c.ioErr
	return err != nil && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed))
}

// patchHandshakeCapabilities adds extraCapabilities to a HandshakeV10 packet (with its
// 4-byte header) in place. A packet of another shape is left alone.
func patchHandshakeCapabilities(p []byte) {
	// header(4) protocol_version(1)=10 server_version(NUL-terminated) connection_id(4)
	// auth_plugin_data_part_1(8) filler(1) capability_flags_lower(2) character_set(1)
	// status_flags(2) capability_flags_upper(2) …
	if len(p) < 5 || p[4] != 10 {
		return
	}
	nul := bytes.IndexByte(p[5:], 0)
	if nul < 0 {
		return
	}
	lower := 5 + nul + 1 + 4 + 8 + 1
	upper := lower + 2 + 1 + 2
	if upper+2 > len(p) {
		return
	}
	p[lower] |= byte(extraCapabilities & 0xff)
	p[lower+1] |= byte(extraCapabilities >> 8 & 0xff)
	p[upper] |= byte(extraCapabilities >> 16)
	p[upper+1] |= byte(extraCapabilities >> 24)
}

// readTimeouts are the command phase's read deadlines, MySQL's: while the server waits for
// a command, the client may stay silent for wait (0: forever); once a packet has begun to
// arrive (or while a statement reads a LOCAL file from the client), each read must bring
// data within netRead, so a client that sends a header and stalls cannot hold its
// connection and buffer. Reads are counted to tell a packet that has begun: go-mysql reads
// ahead into its buffer, so bytes of the next packet may be in hand before it is asked for.
// Used by the connection's goroutine only.
type readTimeouts struct {
	on            bool
	wait, netRead time.Duration
	// read counts bytes read from the socket, consumed those of the packets read whole
	// (headers included); read > consumed means the next packet has begun.
	read, consumed int64
	// command is set while a statement waits for data it asked for (a LOCAL file).
	command bool
	// expired names the timeout that ended a read ("wait_timeout" or "net_read_timeout").
	expired string
}

// which names the timeout the next read is under.
func (t *readTimeouts) which() string {
	if t.command || t.read > t.consumed {
		return "net_read_timeout"
	}
	return "wait_timeout"
}

// arm sets conn's read deadline for the next read.
func (t *readTimeouts) arm(conn net.Conn) error {
	d := t.netRead
	if t.which() == "wait_timeout" {
		d = t.wait
	}
	var deadline time.Time
	if d > 0 {
		deadline = time.Now().Add(d)
	}
	return conn.SetReadDeadline(deadline)
}

// packetRead records a packet of n payload bytes read whole: its headers (one per 16 MiB
// - 1 of payload, and one more) and payload are consumed.
func (t *readTimeouts) packetRead(n int) {
	const maxPayload = 1<<24 - 1
	t.consumed += int64(n) + 4*int64(n/maxPayload+1)
	// Bytes go-mysql buffered before authentication (a client that pipelines a command
	// with its login) were never counted in read: without the clamp, consumed would stay
	// ahead of read and the next packet, once begun, would be judged not begun.
	t.consumed = min(t.consumed, t.read)
}

// deadlineWriter is the command phase's writer to the client: each write must complete
// within timeout (net_write_timeout, MySQL's), so a client that stops reading a result
// cannot hold its connection, and the query's memory, forever. A write that times out
// fails, which ends the statement (cancelling its query) and the connection. Used by the
// connection's goroutine only.
type deadlineWriter struct {
	conn    net.Conn
	timeout time.Duration // 0: no bound
	// expired says a write timed out.
	expired bool
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	var deadline time.Time
	if w.timeout > 0 {
		deadline = time.Now().Add(w.timeout)
	}
	if err := w.conn.SetWriteDeadline(deadline); err != nil {
		return 0, err
	}
	n, err := w.conn.Write(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		w.expired = true
		return n, fmt.Errorf("net_write_timeout (%v) expired: %w", w.timeout, err)
	}
	return n, err
}
