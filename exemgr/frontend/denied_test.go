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
		c.Users = Users{"alice": "s3cret", "root": ""}
	})
	for _, tc := range []struct {
		network, user, password, want string
	}{
		{"tcp", "alice", "wrong", "Access denied for user 'alice'@'127.0.0.1' (using password: YES)"},
		{"tcp", "alice", "", "Access denied for user 'alice'@'127.0.0.1' (using password: NO)"},
		{"tcp", "mallory", "", "Access denied for user 'mallory'@'127.0.0.1' (using password: NO)"},
		{"tcp", "mallory", "x", "Access denied for user 'mallory'@'127.0.0.1' (using password: YES)"},
		// root holds an empty password: go-mysql said NO whatever the client sent.
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

// TestParseLogin reads the user and whether a password was sent from handshake responses in
// each of the auth-data encodings.
func TestParseLogin(t *testing.T) {
	resp := func(capability uint32, user string, auth []byte) []byte {
		p := []byte{byte(capability), byte(capability >> 8), byte(capability >> 16), byte(capability >> 24)}
		p = append(p, make([]byte, 4+1+23)...)
		p = append(append(p, user...), 0)
		return append(p, auth...)
	}
	const lenenc, secure = 1 << 21, 1 << 15
	for _, tc := range []struct {
		name     string
		payload  []byte
		user     string
		password bool
		ok       bool
	}{
		{"lenenc, 20 bytes", resp(lenenc|secure, "alice", append([]byte{20}, make([]byte, 20)...)), "alice", true, true},
		{"lenenc, empty", resp(lenenc|secure, "bob", []byte{0}), "bob", false, true},
		{"lenenc, 2-byte length", resp(lenenc|secure, "c", []byte{0xfc, 0x00, 0x01}), "c", true, true},
		{"one-byte length", resp(secure, "d", append([]byte{8}, make([]byte, 8)...)), "d", true, true},
		{"one-byte length, empty", resp(secure, "e", []byte{0}), "e", false, true},
		{"nothing after the user", resp(secure, "f", nil), "f", false, true},
		{"SSL request", make([]byte, 32), "", false, false},
		{"no NUL after the user", resp(secure, "g", nil)[:33], "", false, false},
	} {
		user, password, ok := parseLogin(tc.payload)
		if user != tc.user || password != tc.password || ok != tc.ok {
			t.Errorf("%s: parseLogin = %q, %v, %v; want %q, %v, %v", tc.name, user, password, ok, tc.user, tc.password, tc.ok)
		}
	}
}
