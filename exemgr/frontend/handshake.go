package frontend

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// The connection phase (MySQL's Protocol::Handshake): the server's greeting, the client's
// response (after an optional switch to TLS), authentication by the account's plugin, and
// the database the client names. The front end runs it itself rather than through
// go-mysql's server, which has one plugin for every account, reads its salts from a
// time-seeded math/rand, asks a caching_sha2_password client on the unix socket for an
// RSA-encrypted password it then cannot decrypt, and words a refused login unlike MySQL.

// Capabilities the server offers. The client's response says which of them it uses.
const (
	capLongPassword    = 1 << 0 // CLIENT_LONG_PASSWORD (MariaDB reads it as CLIENT_MYSQL)
	capLongFlag        = 1 << 2
	capConnectWithDB   = 1 << 3
	capLocalFiles      = 1 << 7 // LOAD DATA LOCAL INFILE
	capProtocol41      = 1 << 9
	capSSL             = 1 << 11
	capTransactions    = 1 << 13
	capSecureConn      = 1 << 15
	capMultiStatements = 1 << 16
	capMultiResults    = 1 << 17
	capPluginAuth      = 1 << 19
	capConnectAttrs    = 1 << 20
	capAuthLenEnc      = 1 << 21 // CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA

	serverCapabilities = capLongPassword | capLongFlag | capConnectWithDB | capLocalFiles |
		capProtocol41 | capTransactions | capSecureConn | capMultiStatements | capMultiResults |
		capPluginAuth | capConnectAttrs | capAuthLenEnc
)

// Bounds on the connection phase.
const (
	// maxLoginPacket bounds each packet a client sends before it is authenticated (MySQL
	// caps the handshake response, connection attributes included, at 64 KiB).
	maxLoginPacket = 64 << 10
	// saltLen is the scramble's length, MySQL's.
	saltLen = 20
)

// The AuthMoreData (0x01) statuses of caching_sha2_password.
const (
	authMoreData         = 0x01
	authSwitchRequest    = 0xfe
	sha2RequestPublicKey = 0x02 // client: send me your RSA public key
	sha2FastAuthOK       = 0x03 // server: the scramble matched the cached account
	sha2PerformFullAuth  = 0x04 // server: send the password (secure transport or RSA)
)

// login is what the connection phase agreed with the client.
type login struct {
	user       string
	database   string
	capability uint32 // the capabilities both sides have
	// password says whether the client sent a password (for "using password: YES").
	password bool
	// plugin is the plugin the login went by, and proof how the client proved its password
	// (for the log).
	plugin, proof string
}

// errLoginRefused is a login refused for its credentials (1045 sent to the client).
var errLoginRefused = errors.New("access denied")

// handshake runs the connection phase on w, writing through out. It returns the login, or
// an error once the client has been told why it was refused (or the connection failed).
func (s *Server) handshake(ctx context.Context, w *wire, out *deadlineWriter, id uint32) (login, error) {
	pw := newPacketWriter(out)
	var lg login
	fail := func(code uint16, state, msg string, err error) (login, error) {
		_ = sendPacket(w, pw, func(pw *packetWriter) error { return pw.errPacket(code, state, msg) })
		return lg, err
	}
	var salt [saltLen]byte
	if err := newSalt(salt[:]); err != nil {
		return login{}, err
	}
	caps := uint32(serverCapabilities)
	if s.tls != nil {
		caps |= capSSL
	}
	w.seq = 0
	if err := sendPacket(w, pw, func(pw *packetWriter) error { return pw.raw(s.greeting(id, caps, salt[:])) }); err != nil {
		return login{}, err
	}
	p, err := w.readPacket(maxLoginPacket)
	if err != nil {
		return s.handshakeReadError(w, pw, err)
	}
	if len(p) < 32 || binary.LittleEndian.Uint32(p)&capProtocol41 == 0 {
		return fail(ErrHandshake, "08S01", "Bad handshake", fmt.Errorf("handshake response of %d bytes without CLIENT_PROTOCOL_41", len(p)))
	}
	if len(p) == 32 && binary.LittleEndian.Uint32(p)&capSSL != 0 {
		// SSLRequest: the rest of the response comes over TLS.
		if s.tls == nil {
			return fail(ErrHandshake, "08S01", "Bad handshake", errors.New("client asked for TLS, which the server does not offer"))
		}
		if err := w.startTLS(s.tls); err != nil {
			return login{}, err
		}
		if p, err = w.readPacket(maxLoginPacket); err != nil {
			return s.handshakeReadError(w, pw, err)
		}
	}
	resp, err := parseHandshakeResponse(p)
	if err != nil {
		return fail(ErrHandshake, "08S01", "Bad handshake", err)
	}
	lg = login{user: resp.user, database: resp.database, capability: resp.capability & caps, password: len(resp.auth) > 0}
	denied := func(err error) (login, error) {
		yes := "NO"
		if lg.password {
			yes = "YES"
		}
		return fail(ErrAccessDenied, "28000", fmt.Sprintf("Access denied for user '%s'@'%s' (using password: %s)",
			lg.user, mysqlHost(w.sock.RemoteAddr()), yes), fmt.Errorf("%w: %w", errLoginRefused, err))
	}
	account, known := s.users.Credential(resp.user, w.sock.RemoteAddr())
	if !known {
		// An account that does not exist, or may not log in from here, goes through the
		// same exchange with a password nobody knows, so the client cannot tell which.
		account = Account{Password: rand.Text()}
	}
	plugin := account.Plugin
	if plugin == "" {
		plugin = s.cfg.DefaultAuthPlugin
	}
	auth := resp.auth
	clientPlugin := resp.plugin
	if resp.capability&capPluginAuth == 0 {
		clientPlugin = PluginNativePassword
	}
	// A client whose plugin is the account's but not the greeting's may have sent nothing,
	// waiting for a salt meant for its plugin (libmariadb does, given --default-auth).
	if clientPlugin != plugin || (len(auth) == 0 && plugin != s.cfg.DefaultAuthPlugin) {
		// Ask the client to answer by the account's plugin, with the same salt.
		req := append(append(append([]byte{authSwitchRequest}, plugin...), 0), append(salt[:], 0)...)
		if err := sendPacket(w, pw, func(pw *packetWriter) error { return pw.raw(req) }); err != nil {
			return login{}, err
		}
		if auth, err = w.readPacket(maxLoginPacket); err != nil {
			return s.handshakeReadError(w, pw, err)
		}
		lg.password = len(auth) > 0
	}
	lg.plugin = plugin
	switch plugin {
	case PluginNativePassword:
		if !matches(mysql.CalcPassword(salt[:], []byte(account.Password)), auth) {
			return denied(errors.New("wrong mysql_native_password scramble"))
		}
		lg.proof = "scramble"
	case PluginCachingSHA2:
		proof, err := s.cachingSHA2(w, pw, resp.user, account.Password, salt[:], auth)
		if err != nil {
			if errors.Is(err, errLoginRefused) {
				return denied(err)
			}
			return login{}, err
		}
		lg.proof = proof
	}
	if account.Password == "" {
		lg.proof = "no password"
	}
	if !known {
		return denied(errors.New("no such account from this address"))
	}
	if lg.database != "" {
		if err := s.engine.CheckDatabase(ctx, lg.database); err != nil {
			code, state, msg := AsMySQL(err)
			return fail(code, state, msg, err)
		}
	}
	if err := sendPacket(w, pw, func(pw *packetWriter) error { return pw.ok(0, 0, statusAutocommit, 0, "") }); err != nil {
		return login{}, err
	}
	return lg, nil
}

// sendPacket writes one packet of the connection phase, numbered after the last one read,
// and keeps the wire's sequence in step.
func sendPacket(w *wire, pw *packetWriter, add func(*packetWriter) error) error {
	pw.reset(w.seq)
	_ = add(pw)
	err := pw.flush()
	w.seq = pw.seq
	return err
}

// handshakeReadError answers a failed read of the connection phase: a packet over the bound
// gets 1043 before the connection closes; a client that went away gets nothing.
func (s *Server) handshakeReadError(w *wire, pw *packetWriter, err error) (login, error) {
	if errors.Is(err, errPacketTooBig) {
		_ = sendPacket(w, pw, func(pw *packetWriter) error { return pw.errPacket(ErrHandshake, "08S01", "Bad handshake") })
		return login{}, fmt.Errorf("handshake packet over %d bytes: %w", maxLoginPacket, err)
	}
	return login{}, err
}

// greeting is the server's first packet, Protocol::HandshakeV10.
func (s *Server) greeting(id uint32, caps uint32, salt []byte) []byte {
	p := []byte{10}
	p = append(append(p, s.cfg.ServerVersion...), 0)
	p = binary.LittleEndian.AppendUint32(p, id)
	p = append(append(p, salt[:8]...), 0)
	p = binary.LittleEndian.AppendUint16(p, uint16(caps))
	p = append(p, byte(defaultCollation))
	p = binary.LittleEndian.AppendUint16(p, statusAutocommit)
	p = binary.LittleEndian.AppendUint16(p, uint16(caps>>16))
	p = append(p, byte(len(salt)+1))
	p = append(p, make([]byte, 10)...)
	p = append(append(p, salt[8:]...), 0)
	return append(append(p, s.cfg.DefaultAuthPlugin...), 0)
}

// newSalt fills salt with random printable bytes: clients treat the scramble as a
// NUL-terminated string, so it may hold no zero byte.
func newSalt(salt []byte) error {
	if _, err := rand.Read(salt); err != nil {
		return fmt.Errorf("salt: %w", err)
	}
	for i, b := range salt {
		salt[i] = '!' + b%('~'-'!'+1)
	}
	return nil
}

// matches compares a scramble in constant time.
func matches(want, got []byte) bool {
	return len(want) == len(got) && subtle.ConstantTimeCompare(want, got) == 1
}

// handshakeResponse is the client's Protocol::HandshakeResponse41.
type handshakeResponse struct {
	capability uint32
	user       string
	auth       []byte
	database   string
	plugin     string
}

// parseHandshakeResponse reads a HandshakeResponse41 payload: capability flags (4), max
// packet size (4), character set (1), filler (23), the NUL-terminated user name, the auth
// response (length-encoded, one-byte length or NUL-terminated by the capabilities), then
// the database and the plugin name if their capabilities are set (each NUL-terminated, and
// each may be missing at the end), then connection attributes, which are ignored.
func parseHandshakeResponse(p []byte) (handshakeResponse, error) {
	const fixed = 4 + 4 + 1 + 23
	if len(p) < fixed {
		return handshakeResponse{}, fmt.Errorf("handshake response of %d bytes", len(p))
	}
	r := handshakeResponse{capability: binary.LittleEndian.Uint32(p)}
	rest := p[fixed:]
	cstring := func(what string) (string, error) {
		nul := bytes.IndexByte(rest, 0)
		if nul < 0 {
			return "", fmt.Errorf("handshake response: %s without its terminating NUL", what)
		}
		s := string(rest[:nul])
		rest = rest[nul+1:]
		return s, nil
	}
	var err error
	if r.user, err = cstring("user name"); err != nil {
		return r, err
	}
	switch {
	case r.capability&capAuthLenEnc != 0:
		n, w, ok := readLenEncInt(rest)
		if !ok || n > uint64(len(rest)-w) {
			return r, errors.New("handshake response: auth response longer than the packet")
		}
		r.auth, rest = rest[w:w+int(n)], rest[w+int(n):]
	case r.capability&capSecureConn != 0:
		if len(rest) > 0 {
			n := int(rest[0])
			if n > len(rest)-1 {
				return r, errors.New("handshake response: auth response longer than the packet")
			}
			r.auth, rest = rest[1:1+n], rest[1+n:]
		}
	default:
		s, err := cstring("auth response")
		if err != nil {
			return r, err
		}
		r.auth = []byte(s)
	}
	if r.capability&capConnectWithDB != 0 && len(rest) > 0 {
		if r.database, err = cstring("database"); err != nil {
			return r, err
		}
	}
	if r.capability&capPluginAuth != 0 && len(rest) > 0 {
		if r.plugin, err = cstring("plugin name"); err != nil {
			return r, err
		}
	}
	return r, nil
}

// readLenEncInt reads a length-encoded integer: its value, its width, and false if p is too
// short or holds NULL (0xfb) or an ERR marker (0xff).
func readLenEncInt(p []byte) (uint64, int, bool) {
	if len(p) == 0 {
		return 0, 0, false
	}
	width := 0
	switch p[0] {
	case 0xfb, 0xff:
		return 0, 0, false
	case 0xfc:
		width = 2
	case 0xfd:
		width = 3
	case 0xfe:
		width = 8
	default:
		return uint64(p[0]), 1, true
	}
	if len(p) < 1+width {
		return 0, 0, false
	}
	var v uint64
	for i := width; i >= 1; i-- {
		v = v<<8 | uint64(p[i])
	}
	return v, 1 + width, true
}

// cachingSHA2 authenticates by caching_sha2_password, MySQL's way: an account that has
// logged in since the server started (its cache entry) proves the password by the fast
// scramble; otherwise the client must send the password itself, in clear over TLS or the
// unix socket, or encrypted with the server's RSA public key (which it may ask for), and
// the account is cached once it has. An empty password is an empty response. It returns
// how the client proved the password: "fast scramble", "password over TLS", "password over
// the unix socket" or "RSA-encrypted password".
func (s *Server) cachingSHA2(w *wire, pw *packetWriter, user, password string, salt, auth []byte) (string, error) {
	if password == "" || len(auth) == 0 {
		if password == "" && len(auth) == 0 {
			return "", nil
		}
		return "", fmt.Errorf("%w: empty password or response", errLoginRefused)
	}
	more := func(b ...byte) error {
		return sendPacket(w, pw, func(pw *packetWriter) error { return pw.raw(append([]byte{authMoreData}, b...)) })
	}
	if s.auth.sha2Cached(user) {
		if !matches(mysql.CalcCachingSha2Password(salt, password), auth) {
			return "", fmt.Errorf("%w: wrong caching_sha2_password scramble", errLoginRefused)
		}
		return "fast scramble", more(sha2FastAuthOK)
	}
	if err := more(sha2PerformFullAuth); err != nil {
		return "", err
	}
	p, err := w.readPacket(maxLoginPacket)
	if err != nil {
		return "", err
	}
	proof := "RSA-encrypted password"
	_, unixSocket := w.sock.RemoteAddr().(*net.UnixAddr)
	var sent []byte
	if (w.tls || unixSocket) && !(len(p) == 1 && p[0] == sha2RequestPublicKey) {
		sent = bytes.TrimSuffix(p, []byte{0})
		proof = "password over the unix socket"
		if w.tls {
			proof = "password over TLS"
		}
	} else {
		key, err := s.auth.rsaKey()
		if err != nil {
			return "", err
		}
		if len(p) == 1 && p[0] == sha2RequestPublicKey {
			pub, err := publicKeyPEM(key)
			if err != nil {
				return "", err
			}
			if err := more(pub...); err != nil {
				return "", err
			}
			if p, err = w.readPacket(maxLoginPacket); err != nil {
				return "", err
			}
		}
		plain, err := rsa.DecryptOAEP(sha1.New(), nil, key, p, nil)
		if err != nil {
			return "", fmt.Errorf("%w: the RSA-encrypted password does not decrypt: %w", errLoginRefused, err)
		}
		for i := range plain {
			plain[i] ^= salt[i%len(salt)]
		}
		sent = bytes.TrimSuffix(plain, []byte{0})
	}
	if !matches([]byte(password), sent) {
		return "", fmt.Errorf("%w: wrong password in caching_sha2_password's full authentication", errLoginRefused)
	}
	s.auth.sha2Remember(user)
	return proof, nil
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
