package frontend

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
)

// Users maps user names to plain-text passwords.
//
// The users file (--users-file) holds one account per line as "user:password": the name is
// everything before the first colon, the password everything after it, to the end of the
// line (so it may contain colons and spaces; a trailing "\r" is dropped). An empty password
// is written "user:". Blank lines and lines starting with "#" are ignored. Names are unique
// and may not contain whitespace. The file holds secrets: keep it mode 0600.
//
// Passwords are stored in clear because mysql_native_password's check needs SHA1(password)
// on the server side and go-mysql's server takes the password itself.
//
// An account with an empty password may log in only over the unix socket or from a loopback
// address; that is also the default account set: root with no password.
type Users map[string]string

// DefaultUsers is the account set without a users file: root with an empty password.
func DefaultUsers() Users { return Users{"root": ""} }

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
		switch {
		case !ok:
			return nil, fmt.Errorf("line %d: want user:password, found no colon", line)
		case name == "":
			return nil, fmt.Errorf("line %d: empty user name", line)
		case strings.ContainsAny(name, " \t"):
			return nil, fmt.Errorf("line %d: user name %q contains whitespace", line, name)
		}
		if _, dup := users[name]; dup {
			return nil, fmt.Errorf("line %d: user %q defined twice", line, name)
		}
		users[name] = password
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("no accounts")
	}
	return users, nil
}

// Credential returns the password user must present when connecting from remote, and false
// if the account may not log in from there: it does not exist, or its password is empty and
// remote is neither the unix socket nor a loopback address.
func (u Users) Credential(user string, remote net.Addr) (password string, ok bool) {
	password, ok = u[user]
	if !ok {
		return "", false
	}
	if password == "" && !IsLocalPeer(remote) {
		return "", false
	}
	return password, true
}

// hasPassword reports whether some account has a password, so it can log in remotely.
func (u Users) hasPassword() bool {
	for _, p := range u {
		if p != "" {
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

// credentialProvider answers go-mysql's password look-ups for one connection. An account
// that may not log in from the connection's address gets a random password nobody can know,
// so the client sees the ordinary "Access denied" (1045) rather than a different error that
// would tell which accounts exist.
type credentialProvider struct {
	users  Users
	remote net.Addr
}

func (p credentialProvider) CheckUsername(user string) (bool, error) {
	_, ok := p.users.Credential(user, p.remote)
	return ok, nil
}

func (p credentialProvider) GetCredential(user string) (string, bool, error) {
	if password, ok := p.users.Credential(user, p.remote); ok {
		return password, true, nil
	}
	var secret [16]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return "", false, err
	}
	return hex.EncodeToString(secret[:]), true, nil
}
