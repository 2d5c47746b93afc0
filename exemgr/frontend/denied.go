package frontend

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// go-mysql words a refused login (1045) as "Access denied for user 'u'@'h:port' (using
// password: YES|NO)", naming the client's port in the host and deciding YES or NO by the
// password the server holds for the account, not by what the client sent: a client that
// gave no password for an unknown account read "using password: YES". MySQL names the host
// alone ('u'@'127.0.0.1', 'u'@'localhost' on the socket) and says YES exactly when the client
// sent a password. The connection-phase connection (capabilityPatchConn) therefore notes,
// from the client's handshake response, the user and whether it sent a password, and
// rewrites the ERR packet go-mysql writes for 1045 to MySQL's wording.

// loginSniffer reads the user and whether a password was sent from the first packet the
// client sends (Protocol::HandshakeResponse41). Used by the connection's goroutine only.
type loginSniffer struct {
	buf  []byte
	done bool
	// ok: the response was parsed; user and password say what it held.
	ok       bool
	user     string
	password bool
}

// maxLoginPacket bounds the bytes kept to parse the handshake response (a real one is a few
// hundred bytes; connection attributes may add some).
const maxLoginPacket = 64 << 10

// observe takes bytes the client sent, in order.
func (s *loginSniffer) observe(p []byte) {
	if s.done || len(p) == 0 {
		return
	}
	s.buf = append(s.buf, p...)
	if len(s.buf) < 4 {
		return
	}
	n := int(s.buf[0]) | int(s.buf[1])<<8 | int(s.buf[2])<<16
	if n > maxLoginPacket {
		s.done, s.buf = true, nil
		return
	}
	if len(s.buf) < 4+n {
		return
	}
	s.user, s.password, s.ok = parseLogin(s.buf[4 : 4+n])
	s.done, s.buf = true, nil
}

// parseLogin reads a HandshakeResponse41 payload: capability flags (4), max packet size (4),
// character set (1), filler (23), the NUL-terminated user name, then the auth response,
// length-encoded or with a one-byte length depending on the capabilities. An SSL request
// (32 bytes, no user) is not a login.
func parseLogin(p []byte) (user string, password, ok bool) {
	const fixed = 4 + 4 + 1 + 23
	if len(p) <= fixed {
		return "", false, false
	}
	capability := binary.LittleEndian.Uint32(p)
	rest := p[fixed:]
	nul := bytes.IndexByte(rest, 0)
	if nul < 0 {
		return "", false, false
	}
	user, rest = string(rest[:nul]), rest[nul+1:]
	if len(rest) == 0 {
		return user, false, true
	}
	switch {
	case capability&mysql.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA != 0:
		// A length-encoded integer: one byte below 0xfb, else a prefix and 2, 3 or 8 bytes
		// (0xfb is NULL: nothing sent). Any multi-byte length is non-zero in practice, but
		// read it rather than guess.
		switch b := rest[0]; {
		case b < 0xfb:
			password = b > 0
		case b == 0xfb:
			password = false
		default:
			width := 8 // 0xfe
			switch b {
			case 0xfc:
				width = 2
			case 0xfd:
				width = 3
			}
			if b == 0xff || len(rest) < 1+width {
				return user, false, false
			}
			var v uint64
			for i := width; i >= 1; i-- {
				v = v<<8 | uint64(rest[i])
			}
			password = v > 0
		}
	case capability&mysql.CLIENT_SECURE_CONNECTION != 0:
		password = rest[0] > 0
	default:
		password = rest[0] != 0 // NUL-terminated
	}
	return user, password, true
}

// mysqlHost is how MySQL names a client's host in messages: its address without the port,
// "localhost" for the unix socket.
func mysqlHost(a net.Addr) string {
	switch a := a.(type) {
	case *net.UnixAddr:
		return "localhost"
	case *net.TCPAddr:
		return a.IP.String()
	}
	if h, _, err := net.SplitHostPort(a.String()); err == nil {
		return h
	}
	return a.String()
}

// rewriteAccessDenied returns p, one whole packet the server writes during the connection
// phase, rewritten if it is a 1045 ERR: its message in MySQL's words for login (parsed from
// the client's response) and host. Any other packet, or a 1045 before a login was parsed, is
// left as it is (ok false).
func rewriteAccessDenied(p []byte, login *loginSniffer, host string) (out []byte, ok bool) {
	if !login.ok || len(p) < 4+3 {
		return p, false
	}
	n := int(p[0]) | int(p[1])<<8 | int(p[2])<<16
	if n != len(p)-4 || p[4] != 0xff || binary.LittleEndian.Uint16(p[5:7]) != mysql.ER_ACCESS_DENIED_ERROR {
		return p, false
	}
	body := p[4:7] // 0xff and the code
	state := []byte(nil)
	if len(p) >= 4+3+6 && p[7] == '#' {
		state = p[7:13] // '#' and the SQLSTATE
	}
	using := "NO"
	if login.password {
		using = "YES"
	}
	msg := fmt.Sprintf("Access denied for user '%s'@'%s' (using password: %s)", login.user, host, using)
	out = make([]byte, 4, 4+len(body)+len(state)+len(msg))
	out = append(append(append(out, body...), state...), msg...)
	m := len(out) - 4
	out[0], out[1], out[2], out[3] = byte(m), byte(m>>8), byte(m>>16), p[3]
	return out, true
}
