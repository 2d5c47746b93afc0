package frontend

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestAccessDeniedMessage: a refused login reads as MySQL's does, with the host alone (no
// client port) and "using password: YES" exactly when the client sent one — over a real
// client connection, go-sql-driver's and (if installed) the mariadb client's.
func TestAccessDeniedMessage(t *testing.T) {
	ts := startServer(t, newFakeEngine(), func(c *Config) {
		c.Users = Users{"alice": {Password: "s3cret"}, "root": {}}
	})
	for _, tc := range []struct {
		network, user, password, want string
	}{
		{"tcp", "alice", "wrong", "Access denied for user 'alice'@'127.0.0.1' (using password: YES)"},
		{"tcp", "alice", "", "Access denied for user 'alice'@'127.0.0.1' (using password: NO)"},
		{"tcp", "mallory", "", "Access denied for user 'mallory'@'127.0.0.1' (using password: NO)"},
		{"tcp", "mallory", "x", "Access denied for user 'mallory'@'127.0.0.1' (using password: YES)"},
		// root holds an empty password: YES because the client sent one.
		{"tcp", "root", "guess", "Access denied for user 'root'@'127.0.0.1' (using password: YES)"},
		{"unix", "alice", "", "Access denied for user 'alice'@'localhost' (using password: NO)"},
		{"unix", "alice", "wrong", "Access denied for user 'alice'@'localhost' (using password: YES)"},
	} {
		err := open(t, ts, tc.network, tc.user, tc.password, "").Ping()
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != ErrAccessDenied || me.Message != tc.want || string(me.SQLState[:]) != "28000" {
			t.Errorf("%s over %s with password %q: %v, want 1045 (28000) %q", tc.user, tc.network, tc.password, err, tc.want)
		}
	}

	t.Run("mariadb client", func(t *testing.T) {
		client := mariadbClient(t)
		for _, tc := range []struct {
			password, want string
		}{
			{"", "Access denied for user 'alice'@'127.0.0.1' (using password: NO)"},
			{"wrong", "Access denied for user 'alice'@'127.0.0.1' (using password: YES)"},
		} {
			host, port, _ := strings.Cut(ts.tcp, ":")
			args := []string{"--no-defaults", "-u", "alice", "-h", host, "-P", port, "--protocol=tcp"}
			if tc.password != "" {
				args = append(args, "-p"+tc.password)
			}
			_, stderr, code := runMariadb(t, client, append(args, "-e", "select 1"), "")
			if code == 0 || !strings.Contains(stderr, "ERROR 1045 (28000): "+tc.want) {
				t.Errorf("mariadb -u alice with password %q: exit %d, stderr %q, want ERROR 1045 (28000): %s", tc.password, code, stderr, tc.want)
			}
		}
	})
}

// TestParseHandshakeResponse reads the user, the auth response, the database and the
// plugin from handshake responses in each of the auth-data encodings, and refuses truncated
// ones.
func TestParseHandshakeResponse(t *testing.T) {
	resp := func(capability uint32, user string, auth []byte, tail ...string) []byte {
		p := []byte{byte(capability), byte(capability >> 8), byte(capability >> 16), byte(capability >> 24)}
		p = append(p, make([]byte, 4+1+23)...)
		p = append(append(p, user...), 0)
		p = append(p, auth...)
		for _, s := range tail {
			p = append(append(p, s...), 0)
		}
		return p
	}
	const lenenc, secure, withDB, plugin = capAuthLenEnc, capSecureConn, capConnectWithDB, capPluginAuth
	twenty := append([]byte{20}, make([]byte, 20)...)
	for _, tc := range []struct {
		name             string
		payload          []byte
		user             string
		auth             int
		database, plugin string
		err              string
	}{
		{"lenenc, 20 bytes", resp(lenenc|secure, "alice", twenty), "alice", 20, "", "", ""},
		{"lenenc, empty", resp(lenenc|secure, "bob", []byte{0}), "bob", 0, "", "", ""},
		{"lenenc, 2-byte length", resp(lenenc|secure, "c", append([]byte{0xfc, 0x03, 0x00}, 1, 2, 3)), "c", 3, "", "", ""},
		{"lenenc longer than the packet", resp(lenenc|secure, "c", []byte{0xfc, 0x00, 0x01}), "", 0, "", "", "longer than the packet"},
		{"one-byte length", resp(secure, "d", append([]byte{8}, make([]byte, 8)...)), "d", 8, "", "", ""},
		{"one-byte length, empty", resp(secure, "e", []byte{0}), "e", 0, "", "", ""},
		{"nothing after the user", resp(secure, "f", nil), "f", 0, "", "", ""},
		{"database and plugin", resp(lenenc|secure|withDB|plugin, "g", twenty, "tpch", "caching_sha2_password"), "g", 20, "tpch", "caching_sha2_password", ""},
		{"plugin without a database", resp(lenenc|secure|plugin, "h", twenty, "mysql_native_password"), "h", 20, "", "mysql_native_password", ""},
		{"no NUL after the user", resp(secure, "g", nil)[:33], "", 0, "", "", "user name without its terminating NUL"},
		{"no NUL after the database", resp(secure|withDB, "i", []byte{0}, "tp")[:37], "", 0, "", "", "database without"},
		{"too short", make([]byte, 20), "", 0, "", "", "handshake response of 20 bytes"},
	} {
		r, err := parseHandshakeResponse(tc.payload)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || r.user != tc.user || len(r.auth) != tc.auth || r.database != tc.database || r.plugin != tc.plugin {
			t.Errorf("%s: %+v, %v; want user %q, %d auth bytes, database %q, plugin %q", tc.name, r, err, tc.user, tc.auth, tc.database, tc.plugin)
		}
	}
}
