package ipc

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Listener is a listening endpoint. For a unix socket file it also holds the lock that
// proves a live process serves the path, and it removes the file on Close.
type Listener struct {
	net.Listener
	ep       Endpoint
	path     string   // socket file, "" for tcp and abstract sockets
	ino      uint64   // inode of the socket file we created
	lockFile *os.File // flock'ed path+".lock" while we serve path
}

// Accept waits for the next connection and sets the socket options the link wants on it (a
// larger send buffer on unix sockets; see Dial).
func (l *Listener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err == nil {
		tuneSocket(nc)
	}
	return nc, err
}

// Endpoint returns the endpoint actually bound (a tcp port 0 resolved).
func (l *Listener) Endpoint() Endpoint { return l.ep }

// Listen binds ep. A TCP address that is not loopback is refused unless haveToken is set (the
// server will then demand the shared-secret challenge). A unix socket file is created mode
// 0600 (bound under a temporary name, chmod'ed, then renamed into place), its parent
// directory is created mode 0700 when missing, and an existing socket file is replaced only
// when no live process serves it: the path+".lock" file is flock'ed by the serving process
// for its lifetime, and a connect probe must be refused as well.
func Listen(ep Endpoint, haveToken bool) (*Listener, error) {
	switch ep.Network {
	case "tcp":
		if !isLoopbackListenHost(ep.Host()) && !haveToken {
			return nil, fmt.Errorf("listen %s: refusing a non-loopback TCP address without an auth token (set --auth-token-file)", ep)
		}
		ln, err := net.Listen("tcp", ep.Address)
		if err != nil {
			return nil, fmt.Errorf("listen %s: %w", ep, err)
		}
		return &Listener{Listener: ln, ep: Endpoint{Network: "tcp", Address: ln.Addr().String()}}, nil
	case "unix":
		if ep.Abstract() {
			ln, err := net.Listen("unix", ep.Address)
			if err != nil {
				return nil, fmt.Errorf("listen %s: %w", ep, err)
			}
			return &Listener{Listener: ln, ep: ep}, nil
		}
		return listenUnixFile(ep)
	}
	return nil, fmt.Errorf("listen %s: unknown network %q", ep, ep.Network)
}

func listenUnixFile(ep Endpoint) (*Listener, error) {
	path := ep.Address
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("listen %s: %w", ep, err)
	}
	lock, err := lockSocketPath(path)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", ep, err)
	}
	fail := func(err error) (*Listener, error) {
		_ = os.Remove(path + ".lock")
		lock.Close()
		return nil, fmt.Errorf("listen %s: %w", ep, err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			return fail(fmt.Errorf("%s exists and is not a socket; refusing to replace it", path))
		}
		// We hold the lock, so no colink process serves it; make sure nothing else does.
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return fail(fmt.Errorf("%s is served by a live process that holds no colink lock; refusing to replace it", path))
		}
		if err := os.Remove(path); err != nil {
			return fail(fmt.Errorf("remove stale socket: %w", err))
		}
	}
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	_ = os.Remove(tmp)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return fail(err)
	}
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		_ = os.Remove(tmp)
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		ln.Close()
		_ = os.Remove(tmp)
		return fail(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		ln.Close()
		return fail(err)
	}
	return &Listener{Listener: ln, ep: ep, path: path, ino: st.Ino, lockFile: lock}, nil
}

// lockSocketPath takes an exclusive, non-blocking flock on path+".lock", retrying if the lock
// file was replaced between open and lock.
func lockSocketPath(path string) (*os.File, error) {
	lockPath := path + ".lock"
	for range 3 {
		f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, fmt.Errorf("%s is served by a live process (it holds %s)", path, lockPath)
			}
			return nil, fmt.Errorf("lock %s: %w", lockPath, err)
		}
		var held, now syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &held) == nil && syscall.Stat(lockPath, &now) == nil && held.Ino == now.Ino {
			_ = f.Truncate(0)
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			return f, nil
		}
		f.Close() // the file we locked was unlinked by its previous owner: try again
	}
	return nil, fmt.Errorf("lock %s: lock file keeps changing", lockPath)
}

// Close stops listening and removes the socket file and its lock if they are still ours.
func (l *Listener) Close() error {
	err := l.Listener.Close()
	if l.path != "" {
		var st syscall.Stat_t
		if syscall.Stat(l.path, &st) == nil && st.Ino == l.ino {
			_ = os.Remove(l.path)
		}
		l.path = ""
	}
	if l.lockFile != nil {
		_ = os.Remove(l.lockFile.Name())
		l.lockFile.Close()
		l.lockFile = nil
	}
	return err
}

// peerCred returns the uid and pid of the process at the other end of a unix socket.
func peerCred(nc net.Conn) (uid, pid int, err error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return 0, 0, fmt.Errorf("SO_PEERCRED: %T is not a socket", nc)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var cred *unix.Ucred
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		cred, gerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, 0, err
	}
	if gerr != nil {
		return 0, 0, fmt.Errorf("SO_PEERCRED: %w", gerr)
	}
	return int(cred.Uid), int(cred.Pid), nil
}

// processState returns the state letter of process pid from /proc/<pid>/stat (R running,
// S sleeping, D disk wait, T stopped, t traced, Z zombie, ...), or an error saying it has
// exited or cannot be read.
func processState(pid int) (byte, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		return 0, errors.New("has exited")
	}
	if err != nil {
		return 0, fmt.Errorf("cannot be inspected: %w", err)
	}
	// "pid (comm) state ...": comm may hold spaces and parentheses; the state follows the
	// last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, fmt.Errorf("cannot be inspected: unexpected /proc/%d/stat %q", pid, b)
	}
	return b[i+2], nil
}

// ReadTokenFile reads a shared secret: the file's content without surrounding whitespace,
// at least 16 bytes. A file readable by group or others is refused.
func ReadTokenFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("auth token file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("auth token file %s has mode %v; it must not be readable by group or others (chmod 600)", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth token file: %w", err)
	}
	tok := []byte(strings.TrimSpace(string(b)))
	if len(tok) < 16 {
		return nil, fmt.Errorf("auth token file %s: token of %d bytes, want at least 16", path, len(tok))
	}
	return tok, nil
}
