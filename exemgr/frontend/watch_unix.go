//go:build unix

package frontend

import (
	"errors"
	"net"
	"os"
	"syscall"
	"time"
)

// watchPeer calls gone once if conn's peer closes or resets the connection before stop is
// called. It peeks (MSG_PEEK) rather than reads, so a command the client pipelines stays in
// the socket for the command loop; seeing such data ends the watch without calling gone.
// The MySQL protocol has the client silent while a query runs, so a readable socket with
// nothing in it means the client went away.
func watchPeer(conn net.Conn, gone func()) (stop func()) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return func() {}
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var b [1]byte
		peerGone := false
		err := raw.Read(func(fd uintptr) bool {
			n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			switch {
			case errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR):
				return false // nothing yet: wait for readability
			case err != nil || n == 0:
				peerGone = true
			}
			return true
		})
		if peerGone || (err != nil && !errors.Is(err, os.ErrDeadlineExceeded)) {
			gone()
		}
	}()
	return func() {
		// A read deadline in the past wakes the watcher's wait; then clear it for the
		// command loop.
		_ = conn.SetReadDeadline(time.Unix(1, 0))
		<-done
		_ = conn.SetReadDeadline(time.Time{})
	}
}
