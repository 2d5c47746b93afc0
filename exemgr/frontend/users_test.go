package frontend

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseUsers(t *testing.T) {
	users, err := ParseUsers([]byte("# accounts\n\nroot:\nalice:s3cret\r\nbob:pass:with:colons and spaces \n  # indented comment\n" +
		"mysql_native_password legacy:old pw\ncaching_sha2_password\tcarol:c:1\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Users{"root": {}, "alice": {Password: "s3cret"}, "bob": {Password: "pass:with:colons and spaces "},
		"legacy": {Password: "old pw", Plugin: PluginNativePassword}, "carol": {Password: "c:1", Plugin: PluginCachingSHA2}}
	if len(users) != len(want) {
		t.Fatalf("users = %q, want %q", users, want)
	}
	for u, p := range want {
		if users[u] != p {
			t.Errorf("account %s = %+v, want %+v", u, users[u], p)
		}
	}
	for _, c := range []struct{ file, err string }{
		{"alice\n", "line 1: want user:password, found no colon"},
		{"ok:1\n:pw\n", "line 2: empty user name"},
		{"a b:pw\n", `line 1: authentication plugin "a": want caching_sha2_password or mysql_native_password`},
		{"sha256_password bob:pw\n", `line 1: authentication plugin "sha256_password": want caching_sha2_password or mysql_native_password`},
		{"a b c:pw\n", `line 1: user name "a b c" contains whitespace`},
		{"a:1\na:2\n", `line 2: user "a" defined twice`},
		{"# nothing\n", "no accounts"},
	} {
		if _, err := ParseUsers([]byte(c.file)); err == nil || err.Error() != c.err {
			t.Errorf("ParseUsers(%q) error = %v, want %q", c.file, err, c.err)
		}
	}
	path := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(path, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadUsers(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("LoadUsers error %v does not name the file", err)
	}
	// A file others may read is refused, whatever it holds.
	if err := os.WriteFile(path, []byte("alice:pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadUsers(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "-rw-r-----") {
		t.Errorf("LoadUsers of a 0640 file: %v, want an error naming it and its mode", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if u, err := LoadUsers(path); err != nil || u["alice"].Password != "pw" {
		t.Errorf("LoadUsers of a 0600 file: %v, %v", u, err)
	}
}

// TestCredentialDecision: who may log in from where. Accounts with an empty password —
// the default root — only from this machine.
func TestCredentialDecision(t *testing.T) {
	users := Users{"root": {}, "alice": {Password: "pw"}}
	tcp := func(ip string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000} }
	for _, c := range []struct {
		user   string
		remote net.Addr
		ok     bool
	}{
		{"root", tcp("127.0.0.1"), true},
		{"root", tcp("127.8.9.10"), true},
		{"root", tcp("::1"), true},
		{"root", &net.UnixAddr{Name: "@", Net: "unix"}, true},
		{"root", tcp("10.1.2.3"), false},
		{"root", tcp("192.168.0.7"), false},
		{"root", tcp("::ffff:10.0.0.1"), false},
		{"alice", tcp("10.1.2.3"), true},
		{"alice", tcp("127.0.0.1"), true},
		{"mallory", tcp("127.0.0.1"), false},
	} {
		if _, ok := users.Credential(c.user, c.remote); ok != c.ok {
			t.Errorf("Credential(%s from %s) = %v, want %v", c.user, c.remote, ok, c.ok)
		}
	}
}

func TestParseListenAddr(t *testing.T) {
	for _, c := range []struct{ in, network, address, err string }{
		{"127.0.0.1:4306", "tcp", "127.0.0.1:4306", ""},
		{"tcp://[::1]:4306", "tcp", "[::1]:4306", ""},
		{":4306", "tcp", ":4306", ""},
		{"unix:///run/colink/mysql.sock", "unix", "/run/colink/mysql.sock", ""},
		{"/tmp/x.sock", "unix", "/tmp/x.sock", ""},
		{"localhost", "", "", `listen address "localhost": want host:port, tcp://host:port, unix:///path or /path`},
		{"http://x:1", "", "", `listen address "http://x:1": scheme must be tcp:// or unix://`},
		{"unix://", "", "", `listen address "unix://": no socket path`},
	} {
		a, err := parseListenAddr(c.in)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("parseListenAddr(%q) error = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || a.network != c.network || a.address != c.address {
			t.Errorf("parseListenAddr(%q) = %v, %v", c.in, a, err)
		}
	}
}
