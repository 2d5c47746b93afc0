package frontend

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
)

// The authentication plugins an account may use.
const (
	// PluginCachingSHA2 is caching_sha2_password, MySQL 8's default and the server's: the
	// first login of an account since the server started sends the password, so it needs
	// a secure transport (TLS or the unix socket) or the server's RSA public key; later
	// logins prove it by a SHA-256 scramble over any transport.
	PluginCachingSHA2 = "caching_sha2_password"
	// PluginNativePassword is mysql_native_password, for clients that know nothing newer:
	// a SHA-1 scramble on every login.
	PluginNativePassword = "mysql_native_password"
)

// CheckAuthPlugin checks an authentication plugin's name.
func CheckAuthPlugin(name string) error {
	switch name {
	case PluginCachingSHA2, PluginNativePassword:
		return nil
	}
	return fmt.Errorf("authentication plugin %q: want %s or %s", name, PluginCachingSHA2, PluginNativePassword)
}

// Account is one user's credentials.
type Account struct {
	// Password is the password in clear: the server checks both plugins' scrambles with it.
	Password string
	// Plugin is the account's authentication plugin; empty means the server's default
	// (Config.DefaultAuthPlugin).
	Plugin string
}

// Users maps user names to accounts.
//
// The users file (--users-file) holds one account per line as "user:password": the name is
// everything before the first colon, the password everything after it, to the end of the
// line (so it may contain colons and spaces; a trailing "\r" is dropped). An empty password
// is written "user:". A plugin other than the server's default is named before the user,
// separated by whitespace: "mysql_native_password legacy:secret". Blank lines and lines
// starting with "#" are ignored. Names are unique and may not contain whitespace. The file
// holds secrets: keep it mode 0600.
//
// Passwords are stored in clear because the scrambles of both plugins are computed from
// the password (mysql_native_password's from SHA1(password), caching_sha2_password's from
// SHA256(password)), and the server offers both.
//
// An account with an empty password may log in only over the unix socket or from a loopback
// address; that is also the default account set: root with no password.
type Users map[string]Account

// DefaultUsers is the account set without a users file: root with an empty password.
func DefaultUsers() Users { return Users{"root": {}} }

// LoadUsers reads a users file. It refuses one that group or others may read (as primproc
// refuses such an auth token file): the passwords in it are in clear. The mode is that of
// the file opened, so a file swapped in between the check and the read is not read.
func LoadUsers(path string) (Users, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("users file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("users file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("users file %s has mode %v; it holds passwords and must not be readable by group or others (chmod 600)", path, fi.Mode().Perm())
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("users file %s: %w", path, err)
	}
	users, err := ParseUsers(data)
	if err != nil {
		return nil, fmt.Errorf("users file %s: %w", path, err)
	}
	return users, nil
}

// ParseUsers parses the users file format (see Users).
func ParseUsers(data []byte) (Users, error) {
	users := Users{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(strings.TrimSpace(text), "#") {
			continue
		}
		name, password, ok := strings.Cut(text, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: want user:password, found no colon", line)
		}
		var plugin string
		if f := strings.Fields(name); len(f) == 2 {
			plugin, name = f[0], f[1]
			if err := CheckAuthPlugin(plugin); err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
		} else {
			name = strings.TrimSpace(name)
		}
		switch {
		case name == "":
			return nil, fmt.Errorf("line %d: empty user name", line)
		case strings.ContainsAny(name, " \t"):
			return nil, fmt.Errorf("line %d: user name %q contains whitespace", line, name)
		}
		if _, dup := users[name]; dup {
			return nil, fmt.Errorf("line %d: user %q defined twice", line, name)
		}
		users[name] = Account{Password: password, Plugin: plugin}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("no accounts")
	}
	return users, nil
}

// Credential returns the account user logs in to from remote, and false if it may not log
// in from there: the account does not exist, or its password is empty and remote is neither
// the unix socket nor a loopback address.
func (u Users) Credential(user string, remote net.Addr) (Account, bool) {
	a, ok := u[user]
	if !ok || (a.Password == "" && !IsLocalPeer(remote)) {
		return Account{}, false
	}
	return a, true
}

// hasPassword reports whether some account has a password, so it can log in remotely.
func (u Users) hasPassword() bool {
	for _, a := range u {
		if a.Password != "" {
			return true
		}
	}
	return false
}

// IsLocalPeer reports whether a client's address is on this machine: a unix socket peer or
// a loopback IP.
func IsLocalPeer(remote net.Addr) bool {
	switch a := remote.(type) {
	case *net.UnixAddr:
		return true
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	}
	return false
}
