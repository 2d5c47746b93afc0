package frontend

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// Bounds on what a client may make the front end buffer.
const (
	// DefaultMaxAllowedPacket is max_allowed_packet's default: MySQL 8.0's and MariaDB
	// 10.2+'s, the value go-sql-driver assumes, and what @@max_allowed_packet reported
	// before the front end enforced it.
	DefaultMaxAllowedPacket = 64 << 20
	// The bounds mysqld puts on max_allowed_packet.
	minMaxAllowedPacket = 1 << 10
	maxMaxAllowedPacket = 1 << 30
	// handshakeReadLimit bounds the bytes a client may send before it is authenticated: a
	// handshake response (with TLS request, auth switch and connection attributes, which
	// MySQL caps at 64 KiB) is far smaller.
	handshakeReadLimit = 1 << 20
)

// CheckMaxAllowedPacket checks a --max-allowed-packet value against mysqld's bounds.
func CheckMaxAllowedPacket(n int64) error {
	if n < minMaxAllowedPacket || n > maxMaxAllowedPacket {
		return fmt.Errorf("--max-allowed-packet %d: must be between %d (1KiB) and %d (1GiB), as mysqld's", n, minMaxAllowedPacket, maxMaxAllowedPacket)
	}
	return nil
}

// errPacketTooBig is a command packet (with its continuations) over max_allowed_packet.
var errPacketTooBig = errors.New("packet bigger than max_allowed_packet")

// packetBuffer receives one command packet's payload from go-mysql's ReadPacketTo. It
// refuses to grow beyond limit, so a client cannot make the front end buffer more than
// max_allowed_packet (ReadPacketTo copies in small chunks: the refusal comes after at most
// limit bytes). Its memory is reused from one packet to the next.
type packetBuffer struct {
	buf    []byte
	limit  int
	tooBig bool
}

func (b *packetBuffer) Write(p []byte) (int, error) {
	if len(b.buf)+len(p) > b.limit {
		b.tooBig = true
		return 0, errPacketTooBig
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// readPacket reads the client's next packet. The payload is valid until the next call.
// A packet over max_allowed_packet gets ERR 1153, as from mysqld, and errPacketTooBig,
// which ends the connection: the rest of the packet is never read.
//
// command says a statement is waiting for the packet (a LOCAL file's): net_read_timeout
// bounds each read. Otherwise the client is idle between commands until the packet begins,
// for up to wait_timeout. A read that times out closes the connection, logged.
func (c *conn) readPacket(command bool) ([]byte, error) {
	in := &c.in
	if cap(in.buf) > keepCap {
		in.buf = nil // a huge LOAD DATA chunk or query is not kept for the idle connection
	}
	in.buf, in.tooBig, in.limit = in.buf[:0], false, int(c.srv.cfg.MaxAllowedPacket)
	t := &c.pc.timeouts
	t.command, t.expired = command, ""
	t.wait = c.sessionTimeout("wait_timeout", c.srv.cfg.WaitTimeout)
	t.netRead = c.sessionTimeout("net_read_timeout", c.srv.cfg.NetReadTimeout)
	if err := c.mc.ReadPacketTo(in); err != nil {
		if t.expired != "" {
			limit := t.netRead
			if t.expired == "wait_timeout" {
				limit = t.wait
			}
			waiting := "a command"
			if command {
				waiting = "a LOCAL file"
			}
			c.srv.log.Info("client read timed out: connection closed", "id", c.sess.id, "user", c.sess.user,
				"timeout", t.expired, "limit", limit, "waiting_for", waiting)
			return nil, fmt.Errorf("%s (%v) expired: %w", t.expired, limit, os.ErrDeadlineExceeded)
		}
		if in.tooBig {
			c.srv.log.Info("client packet over max_allowed_packet: connection closed", "id", c.sess.id, "max_allowed_packet", in.limit)
			c.w.reset(c.mc.Sequence)
			c.w.errPacket(ErrNetPacketTooLarge, "08S01", "Got a packet bigger than 'max_allowed_packet' bytes")
			c.w.flush()
			return nil, errPacketTooBig
		}
		if !c.pc.hungUp() {
			// A packet out of sequence or otherwise malformed, not a client that hung up:
			// mysqld logs these as aborted connections.
			c.srv.log.Info("client protocol error: connection closed", "id", c.sess.id, "user", c.sess.user, "err", err)
		}
		return nil, err
	}
	t.packetRead(len(in.buf))
	// No deadline while the statement runs: watchPeer's wait for a hang-up obeys it too.
	_ = c.nc.SetReadDeadline(time.Time{})
	return in.buf, nil
}

// sessionTimeout is the session's value of timeout variable name (whole seconds, which SET
// checks), or the server's.
func (c *conn) sessionTimeout(name string, server time.Duration) time.Duration {
	if v, ok := c.sess.Var(name); ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	return server
}

// readBudget bounds what a client may send during the connection phase, which
// capabilityPatchConn applies: reads fail once the client has sent more than the budget,
// and as soon as a packet header announces more than is left of it. The second check is
// what bounds memory: go-mysql sizes its buffer from the header (bytes.Buffer.Grow of the
// announced length) before reading the payload, so a 4-byte header announcing 16 MiB
// would otherwise cost 16 MiB before authentication. To see each header first, the budget
// follows packet boundaries in the raw stream (no TLS or compression in this phase: the
// server offers neither).
type readBudget struct {
	left atomic.Int64 // negative: unlimited
	// header holds the first headerN bytes of a packet header split across reads;
	// payloadLeft counts the bytes of the current packet's payload still to come.
	header      [4]byte
	headerN     int
	payloadLeft int64
}

// errHandshakeTooBig ends a connection phase that sends more than handshakeReadLimit.
var errHandshakeTooBig = fmt.Errorf("client sent over %d bytes before authenticating", handshakeReadLimit)

func (b *readBudget) read(conn net.Conn, p []byte) (int, error) {
	left := b.left.Load()
	if left < 0 {
		return conn.Read(p)
	}
	if left == 0 {
		return 0, errHandshakeTooBig
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := conn.Read(p)
	if herr := b.checkHeaders(p[:n], left); herr != nil {
		// The bytes are withheld, so go-mysql never sees the header.
		b.left.Store(0)
		return 0, herr
	}
	b.left.Add(-int64(n))
	return n, err
}

// checkHeaders follows packet boundaries through data, the next bytes of the stream with
// left bytes of budget before them, and fails on a header announcing a payload bigger than
// the budget left after it.
func (b *readBudget) checkHeaders(data []byte, left int64) error {
	for i := 0; i < len(data); {
		if b.payloadLeft > 0 {
			skip := min(b.payloadLeft, int64(len(data)-i))
			b.payloadLeft -= skip
			i += int(skip)
			continue
		}
		k := copy(b.header[b.headerN:], data[i:])
		b.headerN += k
		i += k
		if b.headerN < len(b.header) {
			break
		}
		b.headerN = 0
		length := int64(b.header[0]) | int64(b.header[1])<<8 | int64(b.header[2])<<16
		if rest := left - int64(i); length > rest {
			return fmt.Errorf("client announced a %d-byte packet before authenticating, over the %d-byte limit", length, handshakeReadLimit)
		}
		b.payloadLeft = length
	}
	return nil
}
