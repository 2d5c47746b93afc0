package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"
)

// rawMySQL is a MySQL client connection driven packet by packet, for what a driver will not
// do: log in and then send garbage, send a statement and never read its result, hold a
// thousand idle sessions cheaply. It speaks just enough of the protocol: the v10 greeting,
// a HandshakeResponse41 for a user without a password, COM_QUERY, and reading OK and ERR.
type rawMySQL struct {
	nc  net.Conn
	r   *bufio.Reader
	seq byte
	// ID is the connection id from the greeting (SHOW PROCESSLIST's and the log's "id").
	ID uint32
}

// Client capability flags the response sends.
const (
	capLongPassword     = 0x00000001
	capConnectWithDB    = 0x00000008
	capProtocol41       = 0x00000200
	capTransactions     = 0x00002000
	capSecureConnection = 0x00008000
	capPluginAuth       = 0x00080000
)

// mysqlNetwork splits a MySQL address as the cluster gives it: a host:port is TCP, anything
// else a unix socket path.
func mysqlNetwork(addr string) (network, address string) {
	if strings.HasPrefix(addr, "/") {
		return "unix", addr
	}
	return "tcp", strings.TrimPrefix(addr, "tcp://")
}

// dialMySQL connects without logging in. rcvbuf, if positive, is the socket's receive
// buffer (SO_RCVBUF, set before the connect so that TCP's window starts small).
func dialMySQL(ctx context.Context, addr string, rcvbuf int) (*rawMySQL, error) {
	network, address := mysqlNetwork(addr)
	d := net.Dialer{Timeout: 5 * time.Second}
	if rcvbuf > 0 {
		d.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf)
			})
			return errors.Join(err, serr)
		}
	}
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, fmt.Errorf("connect to exemgr at %s: %w", addr, err)
	}
	return &rawMySQL{nc: nc, r: bufio.NewReaderSize(nc, 16<<10)}, nil
}

// loginMySQL connects and logs in as root without a password into database db.
func loginMySQL(ctx context.Context, addr, db string, rcvbuf int) (*rawMySQL, error) {
	c, err := dialMySQL(ctx, addr, rcvbuf)
	if err != nil {
		return nil, err
	}
	if err := c.login(ctx, db); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close closes the connection.
func (c *rawMySQL) Close() error { return c.nc.Close() }

// deadline applies ctx's deadline, or a 10 s one, to the connection's reads and writes.
func (c *rawMySQL) deadline(ctx context.Context) {
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(10 * time.Second)
	}
	_ = c.nc.SetDeadline(dl)
}

// readPacket reads one packet's payload (a payload of 16 MiB - 1 bytes continues in the
// next packet; the server sends none so large here).
func (c *rawMySQL) readPacket() ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(c.r, h[:]); err != nil {
		return nil, err
	}
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	c.seq = h[3] + 1
	p := make([]byte, n)
	if _, err := io.ReadFull(c.r, p); err != nil {
		return nil, err
	}
	return p, nil
}

// writePacket sends payload as one packet with the next sequence number.
func (c *rawMySQL) writePacket(payload []byte) error {
	_, err := c.nc.Write(appendPacket(nil, c.seq, payload))
	c.seq++
	return err
}

// appendPacket appends a packet: a 3-byte length, the sequence number, the payload (which
// must be shorter than 16 MiB).
func appendPacket(dst []byte, seq byte, payload []byte) []byte {
	n := len(payload)
	dst = append(dst, byte(n), byte(n>>8), byte(n>>16), seq)
	return append(dst, payload...)
}

// login reads the greeting and answers it; the server's last word must be OK.
func (c *rawMySQL) login(ctx context.Context, db string) error {
	c.deadline(ctx)
	defer c.nc.SetDeadline(time.Time{})
	g, err := c.readPacket()
	if err != nil {
		return fmt.Errorf("read the greeting: %w", err)
	}
	if len(g) > 0 && g[0] == 0xff {
		return parseERR(g)
	}
	if len(g) < 1 || g[0] != 10 {
		return fmt.Errorf("greeting: protocol %x, want 10", g[:min(len(g), 1)])
	}
	end := bytes.IndexByte(g[1:], 0)
	if end < 0 || 1+end+1+4 > len(g) {
		return errors.New("greeting: truncated")
	}
	c.ID = binary.LittleEndian.Uint32(g[1+end+1:])
	caps := uint32(capLongPassword | capProtocol41 | capTransactions | capSecureConnection | capPluginAuth)
	if db != "" {
		caps |= capConnectWithDB
	}
	resp := binary.LittleEndian.AppendUint32(nil, caps)
	resp = binary.LittleEndian.AppendUint32(resp, 1<<24) // max packet
	resp = append(resp, 45)                              // utf8mb4_general_ci
	resp = append(resp, make([]byte, 23)...)
	resp = append(resp, "root\x00"...)
	resp = append(resp, 0) // an empty auth response
	if db != "" {
		resp = append(resp, db+"\x00"...)
	}
	resp = append(resp, "mysql_native_password\x00"...)
	if err := c.writePacket(resp); err != nil {
		return fmt.Errorf("send the handshake response: %w", err)
	}
	for range 3 { // OK, or an auth switch (answered with an empty password) then OK
		p, err := c.readPacket()
		if err != nil {
			return fmt.Errorf("read the login's answer: %w", err)
		}
		switch {
		case len(p) > 0 && p[0] == 0x00:
			return nil
		case len(p) > 0 && p[0] == 0xff:
			return parseERR(p)
		case len(p) > 0 && p[0] == 0xfe:
			if err := c.writePacket(nil); err != nil {
				return err
			}
		default:
			return fmt.Errorf("login: unexpected packet %x", p[:min(len(p), 8)])
		}
	}
	return errors.New("login: no OK after three packets")
}

// sendQuery sends COM_QUERY without reading anything back.
func (c *rawMySQL) sendQuery(stmt string) error {
	c.seq = 0
	return c.writePacket(append([]byte{0x03}, stmt...))
}

// readReply reads packets until an OK, an ERR or the end of a result set, for statements
// whose result is small. It returns the ERR as an error.
func (c *rawMySQL) readReply(ctx context.Context) error {
	c.deadline(ctx)
	defer c.nc.SetDeadline(time.Time{})
	p, err := c.readPacket()
	if err != nil {
		return err
	}
	if len(p) == 0 {
		return errors.New("an empty packet")
	}
	switch p[0] {
	case 0x00:
		return nil
	case 0xff:
		return parseERR(p)
	}
	// A result set: column definitions, EOF, rows, EOF (no CLIENT_DEPRECATE_EOF).
	for eofs := 0; eofs < 2; {
		if p, err = c.readPacket(); err != nil {
			return err
		}
		switch {
		case len(p) == 0:
		case p[0] == 0xff:
			return parseERR(p)
		case p[0] == 0xfe && len(p) < 9:
			eofs++
		}
	}
	return nil
}

// mysqlError is an ERR packet.
type mysqlError struct {
	Code     uint16
	SQLState string
	Message  string
}

func (e *mysqlError) Error() string {
	if e.SQLState == "" {
		return fmt.Sprintf("ERROR %d: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("ERROR %d (%s): %s", e.Code, e.SQLState, e.Message)
}

// parseERR decodes an ERR packet's payload (0xff, code, optional '#' and SQLSTATE, text).
func parseERR(p []byte) error {
	if len(p) < 3 || p[0] != 0xff {
		return fmt.Errorf("not an ERR packet: %x", p[:min(len(p), 8)])
	}
	e := &mysqlError{Code: binary.LittleEndian.Uint16(p[1:])}
	rest := p[3:]
	if len(rest) >= 6 && rest[0] == '#' {
		e.SQLState, rest = string(rest[1:6]), rest[6:]
	}
	e.Message = string(rest)
	return e
}

// readUntilClosed reads whatever the server sends until it closes the connection or the
// deadline passes. It returns the first ERR packet's error found in what arrived (nil if
// none), whether the server closed, and how long that took.
func readUntilClosed(nc net.Conn, deadline time.Time) (serverErr error, closed bool, took time.Duration) {
	start := time.Now()
	_ = nc.SetReadDeadline(deadline)
	var all []byte
	buf := make([]byte, 32<<10)
	for {
		n, err := nc.Read(buf)
		if len(all) < 1<<20 {
			all = append(all, buf[:n]...)
		}
		if err != nil {
			var ne net.Error
			closed = !(errors.As(err, &ne) && ne.Timeout())
			break
		}
	}
	took = time.Since(start)
	// Find an ERR packet: a packet whose payload starts with 0xff and is long enough.
	for len(all) >= 4 {
		n := int(all[0]) | int(all[1])<<8 | int(all[2])<<16
		if 4+n > len(all) {
			break
		}
		if p := all[4 : 4+n]; len(p) >= 3 && p[0] == 0xff {
			return parseERR(p), closed, took
		}
		all = all[4+n:]
	}
	return nil, closed, took
}
