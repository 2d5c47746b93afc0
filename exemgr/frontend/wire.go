package frontend

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"syscall"
	"time"
)

// wire is one client connection's packet layer, in both phases: it reads the client's
// packets from the transport (the socket, or the TLS session over it once the client has
// asked for one), checks their sequence numbers, refuses one over a bound before buffering
// it, and applies MySQL's read timeouts in the command phase. Writes go through out. Used
// by the connection's goroutine only.
type wire struct {
	sock net.Conn // the socket: deadlines, peer watching
	// transport is what packets travel over: sock, or a *tls.Conn over it.
	transport net.Conn
	// sockIn reads sock, each read within the armed timeout; in reads the transport.
	sockIn *timedReader
	in     *bufio.Reader
	// tls is set once the client has switched to TLS.
	tls bool
	// seq is the sequence number the next packet read must carry.
	seq uint8
	// buf receives packets; it is reused from one to the next.
	buf []byte
	// readErr and writeErr are the last read and write errors of the transport, for hungUp
	// (over TLS a client's close_notify ends the stream with no socket error).
	readErr, writeErr error
}

// wireBufSize is each connection's read buffer: a command packet usually fits.
const wireBufSize = 16 << 10

// readChunk is how much of a packet's payload is read (and buffered) at a time.
const readChunk = 64 << 10

func newWire(sock net.Conn) *wire {
	w := &wire{sock: sock, transport: sock, sockIn: &timedReader{conn: sock}}
	w.in = bufio.NewReaderSize(w.sockIn, wireBufSize)
	return w
}

// startTLS switches the transport to TLS (the client's SSLRequest has been read) and runs
// the TLS handshake. The TLS session reads the socket through the buffered reader, which may
// already hold the start of the client's hello.
func (w *wire) startTLS(cfg *tlsConfig) error {
	tc := cfg.server(bufferedConn{Conn: w.sock, in: w.in})
	if err := tc.Handshake(); err != nil {
		return fmt.Errorf("TLS handshake: %w", err)
	}
	w.transport, w.tls = tc, true
	w.in = bufio.NewReaderSize(tc, wireBufSize)
	return nil
}

// bufferedConn is a connection whose reads come through in, a buffered reader of it.
type bufferedConn struct {
	net.Conn
	in *bufio.Reader
}

func (c bufferedConn) Read(p []byte) (int, error) { return c.in.Read(p) }

// errPacketTooBig is a packet (with its continuations) over the reader's bound.
var errPacketTooBig = errors.New("packet bigger than max_allowed_packet")

// readPacket reads the client's next packet, with its continuations, and returns its
// payload, valid until the next call. A packet whose header announces more than limit
// bytes in all fails with errPacketTooBig before any of its payload is read, so a client
// cannot make the server buffer more than limit.
func (w *wire) readPacket(limit int) ([]byte, error) {
	if cap(w.buf) > keepCap {
		w.buf = nil // a huge LOAD DATA chunk or query is not kept for the idle connection
	}
	w.buf = w.buf[:0]
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(w.in, hdr[:]); err != nil {
			w.readErr = err
			return nil, fmt.Errorf("read packet header: %w", err)
		}
		n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
		if hdr[3] != w.seq {
			return nil, fmt.Errorf("packet out of order: sequence number %d, want %d", hdr[3], w.seq)
		}
		w.seq++
		if len(w.buf)+n > limit {
			return nil, errPacketTooBig
		}
		// The payload is read in chunks as it arrives, so a header that lies costs nothing.
		for left := n; left > 0; {
			chunk := min(left, readChunk)
			start := len(w.buf)
			w.buf = slices.Grow(w.buf, chunk)[:start+chunk]
			if _, err := io.ReadFull(w.in, w.buf[start:]); err != nil {
				w.readErr = err
				return nil, fmt.Errorf("read packet of %d bytes: %w", n, err)
			}
			left -= chunk
		}
		if n < maxPayload {
			return w.buf, nil
		}
	}
}

// readCommandPacket reads a packet in the command phase under MySQL's read timeouts: while
// the server waits for a command (command false), the client may stay silent for wait
// (0: forever); once the packet has begun to arrive, or while a statement waits for data
// it asked for (a LOCAL file: command true), each read must bring data within netRead. A
// read that times out fails with an error naming the timeout (readTimeoutError).
func (w *wire) readCommandPacket(limit int, command bool, wait, netRead time.Duration) ([]byte, error) {
	r := w.sockIn
	r.armed, r.expired = true, ""
	defer func() { r.armed = false }()
	if !command && w.in.Buffered() == 0 {
		// Idle until the first byte: a partial packet in hand means the packet has begun.
		r.timeout, r.name = wait, "wait_timeout"
		if _, err := w.in.Peek(1); err != nil {
			w.readErr = err
			return nil, w.timedOut(err)
		}
	}
	r.timeout, r.name = netRead, "net_read_timeout"
	p, err := w.readPacket(limit)
	if err != nil {
		return nil, w.timedOut(err)
	}
	// No deadline while the statement runs: watchPeer's wait for a hang-up obeys it too.
	_ = w.sock.SetReadDeadline(time.Time{})
	return p, nil
}

// readTimeoutError is a command-phase read that timed out.
type readTimeoutError struct {
	name  string // wait_timeout or net_read_timeout
	limit time.Duration
}

func (e *readTimeoutError) Error() string {
	return fmt.Sprintf("%s (%v) expired", e.name, e.limit)
}

func (e *readTimeoutError) Unwrap() error { return os.ErrDeadlineExceeded }

func (w *wire) timedOut(err error) error {
	if r := w.sockIn; r.expired != "" && errors.Is(err, os.ErrDeadlineExceeded) {
		return &readTimeoutError{name: r.expired, limit: r.expiredAfter}
	}
	return err
}

// hungUp reports whether the connection's last socket error was the client going away
// (end of stream, a reset, a broken pipe) or the server closing it, rather than something
// the client sent that the protocol does not allow: only the second is worth a line in the
// log.
func (w *wire) hungUp() bool {
	for _, err := range []error{w.sockIn.err, w.readErr, w.writeErr} {
		if err != nil && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) ||
			errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)) {
			return true
		}
	}
	return false
}

// timedReader reads a socket; while armed, each read must bring data within timeout
// (0: no bound), as MySQL's read timeouts count per read. It keeps the last read error.
type timedReader struct {
	conn  net.Conn
	armed bool
	// timeout and name are the timeout that applies while armed; expired and expiredAfter
	// say which one ended a read.
	timeout      time.Duration
	name         string
	expired      string
	expiredAfter time.Duration
	err          error
}

func (r *timedReader) Read(p []byte) (int, error) {
	if r.armed {
		var deadline time.Time
		if r.timeout > 0 {
			deadline = time.Now().Add(r.timeout)
		}
		if err := r.conn.SetReadDeadline(deadline); err != nil {
			return 0, err
		}
	}
	n, err := r.conn.Read(p)
	if err != nil {
		r.err = err
		if r.armed && errors.Is(err, os.ErrDeadlineExceeded) {
			r.expired, r.expiredAfter = r.name, r.timeout
		}
	}
	return n, err
}

// deadlineWriter is the writer to the client: in the command phase each write must
// complete within timeout (net_write_timeout, MySQL's), so a client that stops reading a
// result cannot hold its connection, and the query's memory, forever. A write that times
// out fails, which ends the statement (cancelling its query) and the connection. In the
// connection phase (commandPhase false) the handshake's deadline bounds the writes instead.
// Used by the connection's goroutine only.
type deadlineWriter struct {
	wire         *wire
	commandPhase bool
	timeout      time.Duration // 0: no bound
	// expired says a write timed out.
	expired bool
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	conn := w.wire.transport
	if w.commandPhase {
		var deadline time.Time
		if w.timeout > 0 {
			deadline = time.Now().Add(w.timeout)
		}
		if err := conn.SetWriteDeadline(deadline); err != nil {
			return 0, err
		}
	}
	n, err := conn.Write(p)
	if err != nil {
		w.wire.writeErr = err
		if errors.Is(err, os.ErrDeadlineExceeded) && w.commandPhase {
			w.expired = true
			return n, fmt.Errorf("net_write_timeout (%v) expired: %w", w.timeout, err)
		}
	}
	return n, err
}
