package frontend

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/colinkdb/colink/internal/testbin"
)

// authServer starts a server with TLS from a fresh certificate, three accounts (alice by
// the default plugin, legacy by mysql_native_password, root without a password) and a log
// of its sessions, which say how each login proved its password.
type authServer struct {
	*testServer
	logs *lockedBuffer
	pool *x509.CertPool
	cert string
}

func startAuthServer(t *testing.T, useRSA bool, adjust func(*Config)) *authServer {
	t.Helper()
	certFile, keyFile, pool := testbin.TLSCert(t, t.TempDir(), useRSA)
	logs := &lockedBuffer{}
	ts := startServer(t, newFakeEngine(), func(c *Config) {
		c.Users = Users{"alice": {Password: "s3cret"}, "legacy": {Password: "oldpw", Plugin: PluginNativePassword}, "root": {}}
		c.TLSCert, c.TLSKey = certFile, keyFile
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		if adjust != nil {
			adjust(c)
		}
	})
	return &authServer{testServer: ts, logs: logs, pool: pool, cert: certFile}
}

// login connects with go-sql-driver and runs a query; tlsConfig nil means no TLS.
func (as *authServer) login(t *testing.T, network, user, password string, tlsConfig *tls.Config) error {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.DBName = user, password, network, "tpch"
	cfg.Addr = as.tcp
	if network == "unix" {
		cfg.Addr = as.socket
	}
	cfg.TLS = tlsConfig
	cfg.Timeout = 5 * time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	var one int
	return db.QueryRowContext(context.Background(), "SELECT 1").Scan(&one)
}

// lastProof is what the log says of the last session: its plugin and proof.
func (as *authServer) lastProof() string {
	lines := strings.Split(as.logs.String(), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], `msg="session start"`) {
			_, rest, _ := strings.Cut(lines[i], " plugin=")
			return "plugin=" + rest
		}
	}
	return ""
}

// TestCachingSHA2 goes through caching_sha2_password as MySQL does, with go-sql-driver: the
// first login of an account sends its password, in clear only over TLS or the unix socket
// and otherwise encrypted with the server's RSA key; later logins need only the scramble;
// mysql_native_password accounts and clients keep working; wrong passwords are refused on
// every path.
func TestCachingSHA2(t *testing.T) {
	for _, useRSA := range []bool{true, false} {
		name := "ECDSA certificate (generated RSA key)"
		if useRSA {
			name = "RSA certificate"
		}
		t.Run(name, func(t *testing.T) {
			as := startAuthServer(t, useRSA, nil)
			tlsConfig := &tls.Config{RootCAs: as.pool, ServerName: "127.0.0.1"}
			steps := []struct {
				what, network, user, password string
				tls                           bool
				want                          string // proof, or "denied"
			}{
				{"wrong password first", "tcp", "alice", "nope", false, "denied"},
				{"first login over plain TCP", "tcp", "alice", "s3cret", false, `proof="RSA-encrypted password"`},
				{"second login", "tcp", "alice", "s3cret", false, `proof="fast scramble"`},
				{"wrong password, cached account", "tcp", "alice", "nope", false, "denied"},
				{"wrong password over TLS", "tcp", "alice", "nope", true, "denied"},
				{"native account", "tcp", "legacy", "oldpw", false, `plugin=mysql_native_password proof=scramble`},
				{"native account over TLS", "tcp", "legacy", "oldpw", true, `plugin=mysql_native_password proof=scramble`},
				{"native account, wrong password", "tcp", "legacy", "x", false, "denied"},
				{"root, no password, socket", "unix", "root", "", false, `proof="no password"`},
				{"root with a password", "unix", "root", "x", false, "denied"},
				{"unknown user", "tcp", "mallory", "x", false, "denied"},
			}
			for _, st := range steps {
				var tc *tls.Config
				if st.tls {
					tc = tlsConfig
				}
				err := as.login(t, st.network, st.user, st.password, tc)
				if st.want == "denied" {
					var me *mysql.MySQLError
					if !errors.As(err, &me) || me.Number != ErrAccessDenied {
						t.Errorf("%s: %v, want 1045", st.what, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", st.what, err)
					continue
				}
				if got := as.lastProof(); !strings.Contains(got, st.want) {
					t.Errorf("%s: the log says %q, want %s", st.what, got, st.want)
				}
			}
		})
	}

	// A fresh server, so the account is not cached: the first login over TLS, and over the
	// unix socket, sends the password in clear.
	as := startAuthServer(t, false, nil)
	if err := as.login(t, "tcp", "alice", "s3cret", &tls.Config{RootCAs: as.pool, ServerName: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	if got := as.lastProof(); !strings.Contains(got, `proof="password over TLS"`) || !strings.Contains(got, "caching_sha2_password") {
		t.Errorf("first login over TLS: %q", got)
	}
	as = startAuthServer(t, false, nil)
	if err := as.login(t, "unix", "alice", "s3cret", nil); err != nil {
		t.Fatal(err)
	}
	if got := as.lastProof(); !strings.Contains(got, `proof="password over the unix socket"`) {
		t.Errorf("first login over the unix socket: %q", got)
	}

	// With mysql_native_password the default, every account without a plugin uses it.
	as = startAuthServer(t, false, func(c *Config) { c.DefaultAuthPlugin = PluginNativePassword })
	if err := as.login(t, "tcp", "alice", "s3cret", nil); err != nil {
		t.Fatal(err)
	}
	if got := as.lastProof(); !strings.Contains(got, "plugin=mysql_native_password") {
		t.Errorf("native default: %q", got)
	}
}

// TestTLSConfigErrors: half a TLS configuration, an unreadable certificate and an unknown
// plugin are configuration errors naming what is wrong; a client asking for TLS from a
// server without it is refused with a clear error.
func TestTLSConfigErrors(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, _ := testbin.TLSCert(t, dir, false)
	for _, c := range []struct {
		cert, key, plugin, want string
	}{
		{certFile, "", "", "--tls-cert needs --tls-key"},
		{"", keyFile, "", "--tls-key needs --tls-cert"},
		{filepath.Join(dir, "missing.pem"), keyFile, "", "missing.pem"},
		{certFile, certFile, "", "TLS certificate"},
		{"", "", "sha256_password", `--default-authentication-plugin: authentication plugin "sha256_password"`},
	} {
		cfg := DefaultConfig()
		cfg.Listen = []string{"127.0.0.1:0"}
		cfg.TLSCert, cfg.TLSKey, cfg.DefaultAuthPlugin = c.cert, c.key, c.plugin
		s, err := Listen(cfg, newFakeEngine())
		if err == nil {
			s.closeListeners()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("cert %q key %q plugin %q: %v, want an error with %q", c.cert, c.key, c.plugin, err, c.want)
		}
	}

	ts := startServer(t, newFakeEngine(), nil)
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", ts.tcp
	cfg.TLS = &tls.Config{InsecureSkipVerify: true}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	if err := db.Ping(); err == nil || !strings.Contains(err.Error(), "TLS") && !strings.Contains(err.Error(), "SSL") {
		t.Errorf("TLS from a server without it: %v, want an error about TLS", err)
	}
}

// TestMariadbClientPlugins: the mariadb command-line client (Debian's default MySQL client)
// logs in by each plugin, over TLS (verifying the server's certificate), over plain TCP and
// over the unix socket, and its status shows the TLS cipher.
func TestMariadbClientPlugins(t *testing.T) {
	client := mariadbClient(t)
	as := startAuthServer(t, false, nil)
	host, port, _ := strings.Cut(as.tcp, ":")
	tcp := []string{"--no-defaults", "-h", host, "-P", port, "--protocol=tcp"}
	sock := []string{"--no-defaults", "-S", as.socket}
	tlsArgs := []string{"--ssl", "--ssl-ca", as.cert, "--ssl-verify-server-cert"}
	for _, c := range []struct {
		what string
		args []string
		want string
	}{
		{"caching_sha2_password over plain TCP, first login", append(append([]string{}, tcp...), "--skip-ssl", "-u", "alice", "-ps3cret"), `proof="RSA-encrypted password"`},
		{"caching_sha2_password over TLS", append(append(append([]string{}, tcp...), tlsArgs...), "-u", "alice", "-ps3cret"), `proof="fast scramble"`},
		{"caching_sha2_password over the socket", append(append([]string{}, sock...), "-u", "alice", "-ps3cret"), "plugin=caching_sha2_password"},
		{"mysql_native_password account over TLS", append(append(append([]string{}, tcp...), tlsArgs...), "-u", "legacy", "-poldpw"), "plugin=mysql_native_password"},
		{"mysql_native_password client and account", append(append([]string{}, tcp...), "--skip-ssl", "--default-auth=mysql_native_password", "-u", "legacy", "-poldpw"), "plugin=mysql_native_password"},
		{"mysql_native_password client, caching_sha2_password account", append(append([]string{}, tcp...), "--skip-ssl", "--default-auth=mysql_native_password", "-u", "alice", "-ps3cret"), "plugin=caching_sha2_password"},
	} {
		stdout, stderr, code := runMariadb(t, client, append(c.args, "-e", "status"), "")
		if code != 0 {
			t.Errorf("%s: exit %d: %s", c.what, code, stderr)
			continue
		}
		got := as.lastProof()
		t.Logf("%s: %s", c.what, got)
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: the log says %q, want %s", c.what, got, c.want)
		}
		if usesTLS := strings.Contains(strings.Join(c.args, " "), "--ssl-ca"); usesTLS && !strings.Contains(stdout, "Cipher in use") {
			t.Errorf("%s: status does not show TLS:\n%s", c.what, stdout)
		}
	}
	_, stderr, code := runMariadb(t, client, append(append(append([]string{}, tcp...), tlsArgs...), "-u", "alice", "-pwrong", "-e", "select 1"), "")
	if code == 0 || !strings.Contains(stderr, "ERROR 1045 (28000): Access denied for user 'alice'@'127.0.0.1' (using password: YES)") {
		t.Errorf("wrong password over TLS: exit %d, %s", code, stderr)
	}
}
