package frontend

import (
	"errors"
	"fmt"
	"strconv"
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
)

// CheckMaxAllowedPacket checks a --max-allowed-packet value against mysqld's bounds.
func CheckMaxAllowedPacket(n int64) error {
	if n < minMaxAllowedPacket || n > maxMaxAllowedPacket {
		return fmt.Errorf("--max-allowed-packet %d: must be between %d (1KiB) and %d (1GiB), as mysqld's", n, minMaxAllowedPacket, maxMaxAllowedPacket)
	}
	return nil
}

// readPacket reads the client's next packet. The payload is valid until the next call.
// A packet over max_allowed_packet gets ERR 1153, as from mysqld, and errPacketTooBig,
// which ends the connection: the rest of the packet is never read.
//
// command says a statement is waiting for the packet (a LOCAL file's): net_read_timeout
// bounds each read. Otherwise the client is idle between commands until the packet begins,
// for up to wait_timeout. A read that times out closes the connection, logged.
func (c *conn) readPacket(command bool) ([]byte, error) {
	limit := int(c.srv.cfg.MaxAllowedPacket)
	p, err := c.wire.readCommandPacket(limit, command,
		c.sessionTimeout("wait_timeout", c.srv.cfg.WaitTimeout),
		c.sessionTimeout("net_read_timeout", c.srv.cfg.NetReadTimeout))
	if err == nil {
		return p, nil
	}
	var timeout *readTimeoutError
	switch {
	case errors.As(err, &timeout):
		waiting := "a command"
		if command {
			waiting = "a LOCAL file"
		}
		c.srv.log.Info("client read timed out: connection closed", "id", c.sess.id, "user", c.sess.user,
			"timeout", timeout.name, "limit", timeout.limit, "waiting_for", waiting)
	case errors.Is(err, errPacketTooBig):
		c.srv.log.Info("client packet over max_allowed_packet: connection closed", "id", c.sess.id, "max_allowed_packet", limit)
		c.w.reset(c.wire.seq)
		c.w.errPacket(ErrNetPacketTooLarge, "08S01", "Got a packet bigger than 'max_allowed_packet' bytes")
		c.w.flush()
	case !c.wire.hungUp():
		// A packet out of sequence or otherwise malformed, not a client that hung up:
		// mysqld logs these as aborted connections.
		c.srv.log.Info("client protocol error: connection closed", "id", c.sess.id, "user", c.sess.user, "err", err)
	}
	return nil, err
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
