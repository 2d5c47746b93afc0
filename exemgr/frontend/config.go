package frontend

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/internal/buildinfo"
	"github.com/colinkdb/colink/internal/daemon"
)

// Config configures the front end.
type Config struct {
	// Listen lists the addresses to accept clients on: "host:port" or "tcp://host:port" for
	// TCP, "unix:///path/to/socket" or an absolute path for a unix socket.
	Listen []string
	// Socket, if set, adds a unix socket listener at this path, as mysqld's --socket does.
	Socket string
	// UsersFile is the users file (see Users); empty means DefaultUsers.
	UsersFile string
	// Users, if non-nil, is used instead of UsersFile.
	Users Users
	// DefaultAuthPlugin is the authentication plugin of accounts that name none, and the
	// one the server's greeting offers: PluginCachingSHA2 (empty means that) or
	// PluginNativePassword.
	DefaultAuthPlugin string
	// TLSCert and TLSKey are the PEM files of the certificate (its chain) and private key
	// the server offers MySQL clients TLS with; both empty means no TLS. An RSA key also
	// serves caching_sha2_password's public-key exchange (a generated key does otherwise).
	TLSCert, TLSKey string
	// ShutdownTimeout is how long, once Serve's context ends, the running statements may
	// finish before they are cancelled; idle connections close at once. 0: cancel at once.
	ShutdownTimeout time.Duration
	// Statements, if set, is told of every client statement as it ends (the metrics
	// endpoint's counters and latency histogram).
	Statements StatementObserver
	// ServerVersion is what the handshake and @@version report.
	ServerVersion string
	// VersionComment is @@version_comment, which the mariadb client prints on connect.
	VersionComment string
	// MaxConnections bounds concurrent client connections; more are refused with 1040.
	MaxConnections int
	// MaxAllowedPacket bounds a client's packet (a query, a chunk of a LOCAL file) in bytes,
	// as mysqld's max_allowed_packet: a larger one gets ERR 1153 and the connection closes.
	MaxAllowedPacket int64
	// HandshakeTimeout bounds the connection phase, so a silent client cannot hold a slot.
	HandshakeTimeout time.Duration
	// NetReadTimeout bounds each read once a command packet has begun to arrive (or while a
	// statement reads a LOCAL file), as mysqld's net_read_timeout: a client that stalls
	// mid-packet loses its connection. Zero means no bound.
	NetReadTimeout time.Duration
	// NetWriteTimeout bounds each write to a client, as mysqld's net_write_timeout: a
	// client that stops reading a result loses its connection and the query is cancelled.
	// Zero means no bound.
	NetWriteTimeout time.Duration
	// WaitTimeout bounds how long a connection may sit idle between commands, as mysqld's
	// wait_timeout. Zero means forever.
	WaitTimeout time.Duration
	// Logger receives connection events; nil means slog.Default().
	Logger *slog.Logger
	// Ready, if set, is called once Serve accepts clients on every listener (each has
	// listened since Listen and has its accept loop running), with their addresses: the
	// moment a daemon may report itself ready.
	Ready func(addrs []net.Addr)
}

// Defaults of Config.
const (
	DefaultListen         = "127.0.0.1:4306"
	DefaultServerVersion  = "8.0.11-colink"
	DefaultVersionComment = "colink"
	// mysqld's defaults of net_read_timeout and wait_timeout.
	DefaultNetReadTimeout  = 30 * time.Second
	DefaultNetWriteTimeout = 60 * time.Second
	DefaultWaitTimeout     = 28800 * time.Second
	// DefaultShutdownTimeout is --shutdown-timeout's default.
	DefaultShutdownTimeout = 10 * time.Second
)

// StatementObserver is told of each client statement as it ends: its elapsed time, from
// its arrival to its last row (or its error), and its MySQL error code, 0 if it succeeded.
type StatementObserver interface {
	ObserveStatement(elapsed time.Duration, code uint16)
}

// ServerVersionFor is @@version (and the handshake's server version) of a build:
// DefaultServerVersion and the revision, "8.0.11-colink-0123456789ab" ("-dirty" after it for a
// tree with uncommitted changes); DefaultServerVersion alone for an unstamped build. Clients
// read the leading MySQL version number and ignore the rest.
func ServerVersionFor(in buildinfo.Info) string {
	if in.Revision == "" {
		return DefaultServerVersion
	}
	return DefaultServerVersion + "-" + strings.ReplaceAll(in.ShortRevision(), "+", "-")
}

// VersionCommentFor is @@version_comment of a build, which the mariadb client prints on
// connect: "colink v0.0.0-… rev 0123456789ab, 2026-12-01T10:00:00Z, go1.26.8".
func VersionCommentFor(in buildinfo.Info) string { return in.Line(DefaultVersionComment) }

// DefaultConfig returns the configuration the flags default to.
func DefaultConfig() Config {
	return Config{
		Listen:            []string{DefaultListen},
		ServerVersion:     DefaultServerVersion,
		VersionComment:    DefaultVersionComment,
		MaxConnections:    1000,
		MaxAllowedPacket:  DefaultMaxAllowedPacket,
		HandshakeTimeout:  10 * time.Second,
		NetReadTimeout:    DefaultNetReadTimeout,
		NetWriteTimeout:   DefaultNetWriteTimeout,
		WaitTimeout:       DefaultWaitTimeout,
		ShutdownTimeout:   DefaultShutdownTimeout,
		DefaultAuthPlugin: PluginCachingSHA2,
	}
}

// RegisterFlags adds the front end's flags to fs, defaulting to c's current values:
// --mysql-listen, --mysql-socket, --users-file, --default-authentication-plugin,
// --tls-cert, --tls-key, --mysql-max-connections, --max-allowed-packet, --net-read-timeout,
// --net-write-timeout, --wait-timeout and --shutdown-timeout.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&c.Listen, "mysql-listen", c.Listen,
		"addresses for MySQL clients, comma-separated: host:port, tcp://host:port, unix:///path or /path (a unix socket)")
	fs.StringVar(&c.Socket, "mysql-socket", c.Socket, "also listen on this unix socket, like mysqld --socket")
	fs.StringVar(&c.UsersFile, "users-file", c.UsersFile,
		"file of user:password lines (mode 0600), each optionally after its plugin (\"mysql_native_password legacy:secret\"); default: root with no password, from loopback and the unix socket only")
	fs.StringVar(&c.DefaultAuthPlugin, "default-authentication-plugin", c.DefaultAuthPlugin,
		"authentication plugin of accounts that name none: caching_sha2_password (whose first login after a start needs TLS, the unix socket or the client asking for the server's RSA key) or mysql_native_password, like mysqld's")
	fs.StringVar(&c.TLSCert, "tls-cert", c.TLSCert, "PEM certificate (chain) to offer MySQL clients TLS with; needs --tls-key")
	fs.StringVar(&c.TLSKey, "tls-key", c.TLSKey, "PEM private key of --tls-cert")
	fs.IntVar(&c.MaxConnections, "mysql-max-connections", c.MaxConnections, "maximum concurrent client connections")
	daemon.ByteSizeVar(fs, &c.MaxAllowedPacket, "max-allowed-packet", c.MaxAllowedPacket, "",
		"largest statement (or LOCAL file chunk) a client may send, like mysqld's max_allowed_packet (1KiB to 1GiB); a larger one gets error 1153 and its connection closes")
	fs.DurationVar(&c.NetReadTimeout, "net-read-timeout", c.NetReadTimeout,
		"once a client's packet has begun (or while LOAD DATA LOCAL reads its file), each read must bring data within this long or the connection closes, like mysqld's net_read_timeout (0 = no bound)")
	fs.DurationVar(&c.NetWriteTimeout, "net-write-timeout", c.NetWriteTimeout,
		"each write of a result to a client must complete within this long or the connection closes and the query is cancelled, like mysqld's net_write_timeout (0 = no bound)")
	fs.DurationVar(&c.WaitTimeout, "wait-timeout", c.WaitTimeout,
		"close a client connection idle this long between statements, like mysqld's wait_timeout (0 = never)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout,
		"on SIGTERM, how long running statements may finish before they are cancelled (error 1053 to their clients); idle connections close at once (0 = cancel at once)")
}

// CheckTimeouts checks the --net-read-timeout, --net-write-timeout and --wait-timeout
// values.
func (c *Config) CheckTimeouts() error {
	if c.NetReadTimeout < 0 {
		return fmt.Errorf("--net-read-timeout %v: must not be negative", c.NetReadTimeout)
	}
	if c.NetWriteTimeout < 0 {
		return fmt.Errorf("--net-write-timeout %v: must not be negative", c.NetWriteTimeout)
	}
	if c.WaitTimeout < 0 {
		return fmt.Errorf("--wait-timeout %v: must not be negative", c.WaitTimeout)
	}
	if c.ShutdownTimeout < 0 {
		return fmt.Errorf("--shutdown-timeout %v: must not be negative", c.ShutdownTimeout)
	}
	return nil
}

// timeoutSeconds is a timeout as the @@variable reports it: whole seconds, rounded up (a
// sub-second timeout is not 0, which would read as "no timeout").
func timeoutSeconds(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}

// listenAddr is a parsed listen address.
type listenAddr struct {
	network string // "tcp" or "unix"
	address string
}

// parseListenAddr parses one --mysql-listen entry.
func parseListenAddr(s string) (listenAddr, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return listenAddr{}, fmt.Errorf("empty listen address")
	case strings.HasPrefix(s, "unix://"):
		path := strings.TrimPrefix(s, "unix://")
		if path == "" {
			return listenAddr{}, fmt.Errorf("listen address %q: no socket path", s)
		}
		return listenAddr{"unix", path}, nil
	case strings.HasPrefix(s, "/"):
		return listenAddr{"unix", s}, nil
	case strings.HasPrefix(s, "tcp://"):
		s = strings.TrimPrefix(s, "tcp://")
	case strings.Contains(s, "://"):
		return listenAddr{}, fmt.Errorf("listen address %q: scheme must be tcp:// or unix://", s)
	}
	if _, port, err := net.SplitHostPort(s); err != nil || port == "" {
		return listenAddr{}, fmt.Errorf("listen address %q: want host:port, tcp://host:port, unix:///path or /path", s)
	}
	return listenAddr{"tcp", s}, nil
}

// addrs returns the parsed listen addresses of c, the socket last.
func (c *Config) addrs() ([]listenAddr, error) {
	var out []listenAddr
	for _, s := range c.Listen {
		a, err := parseListenAddr(s)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if c.Socket != "" {
		out = append(out, listenAddr{"unix", c.Socket})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no listen address: set --mysql-listen or --mysql-socket")
	}
	return out, nil
}
