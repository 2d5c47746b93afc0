package ipc

import (
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sockIO performs a connection's reads and vectored writes with raw syscalls when the
// connection is a socket, so that every read(2) and writev(2) is counted (those that return
// EAGAIN included) and a batch leaves in one writev with no intermediate copy. Other
// net.Conns (in-memory pipes in tests) use their Read and Write methods, one call counted
// as one syscall. Reads are made by one goroutine at a time, writes by one at a time.
type sockIO struct {
	nc net.Conn
	rc syscall.RawConn // nil when nc is not a socket

	reads, writes atomic.Uint64 // syscalls

	// read state, used by readFn, which is allocated once
	rbuf   []byte
	rn     int
	rerr   error
	readFn func(fd uintptr) bool

	// Descriptor passing (SCM_RIGHTS), for the shared-memory set-up in the handshake.
	// wantFDs: reads use recvmsg and keep the descriptors that arrive in fds (fdErr if
	// some were cut off); sendFDs go with the first bytes of the next Writev.
	wantFDs bool
	fds     []int
	fdErr   error
	oob     []byte
	sendFDs []int

	// write state, used by writeFn
	iov     []unix.Iovec
	iovDone int // iovecs fully written
	wn      int64
	werr    error
	writeFn func(fd uintptr) bool
}

func newSockIO(nc net.Conn) *sockIO {
	s := &sockIO{nc: nc}
	if sc, ok := nc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			s.rc = rc
		}
	}
	s.readFn = s.rawRead
	s.writeFn = s.rawWritev
	return s
}

func (s *sockIO) rawRead(fd uintptr) bool {
	s.reads.Add(1)
	if s.wantFDs {
		return s.rawRecvmsg(fd)
	}
	n, err := unix.Read(int(fd), s.rbuf)
	if err == unix.EAGAIN {
		return false
	}
	if err == unix.EINTR {
		return s.rawRead(fd)
	}
	if n < 0 {
		n = 0
	}
	s.rn, s.rerr = n, err
	return true
}

// rawRecvmsg is rawRead with recvmsg(2), keeping the descriptors passed with the bytes.
func (s *sockIO) rawRecvmsg(fd uintptr) bool {
	if s.oob == nil {
		s.oob = make([]byte, unix.CmsgSpace(4*4))
	}
	n, oobn, flags, _, err := unix.Recvmsg(int(fd), s.rbuf, s.oob, unix.MSG_CMSG_CLOEXEC)
	if err == unix.EAGAIN {
		return false
	}
	if err == unix.EINTR {
		return s.rawRecvmsg(fd)
	}
	if oobn > 0 {
		msgs, perr := unix.ParseSocketControlMessage(s.oob[:oobn])
		for _, m := range msgs {
			if fds, err := unix.ParseUnixRights(&m); err == nil {
				s.fds = append(s.fds, fds...)
			}
		}
		if perr != nil && s.fdErr == nil {
			s.fdErr = perr
		}
	}
	if flags&unix.MSG_CTRUNC != 0 && s.fdErr == nil {
		s.fdErr = errors.New("descriptors passed with the data were cut off (MSG_CTRUNC)")
	}
	if n < 0 {
		n = 0
	}
	s.rn, s.rerr = n, err
	return true
}

// takeFDs stops keeping passed descriptors and returns those received.
func (s *sockIO) takeFDs() ([]int, error) {
	fds, err := s.fds, s.fdErr
	s.wantFDs, s.fds, s.fdErr = false, nil, nil
	return fds, err
}

// Read reads at most len(p) bytes with one successful read(2).
func (s *sockIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if s.rc == nil {
		s.reads.Add(1)
		return s.nc.Read(p)
	}
	s.rbuf = p
	s.rn, s.rerr = 0, nil
	if err := s.rc.Read(s.readFn); err != nil {
		s.rbuf = nil
		return 0, err
	}
	s.rbuf = nil
	if s.rerr != nil {
		return 0, s.rerr
	}
	if s.rn == 0 {
		return 0, io.EOF
	}
	return s.rn, nil
}

// unread returns the bytes waiting in the socket's receive queue (SIOCINQ); ok is false for
// a connection that is not a socket.
func (s *sockIO) unread() (n int, ok bool) {
	if s.rc == nil {
		return 0, false
	}
	var err error
	if cerr := s.rc.Control(func(fd uintptr) { n, err = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }); cerr != nil || err != nil {
		return 0, false
	}
	return n, true
}

// peerGone looks, without reading or blocking, whether the peer has closed the socket:
// io.EOF for an orderly close with nothing left to read, the error for a reset, nil while
// the connection stands or input waits (a connection that is not a socket, too). Peeking
// takes nothing off the socket, so whoever holds the read role is not disturbed.
func (s *sockIO) peerGone() error {
	if s.rc == nil {
		return nil
	}
	var gone error
	var b [1]byte
	cerr := s.rc.Control(func(fd uintptr) {
		for {
			n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN:
			case err != nil:
				gone = err
			case n == 0:
				gone = io.EOF
			}
			return
		}
	})
	if cerr != nil {
		return cerr
	}
	return gone
}

// unixSocketBuffer is the send buffer asked for on unix-domain stream sockets. Their
// default (net.core.wmem_default, 208 KiB) bounds what one write can queue and one read can
// return: a 5 MB batch took about 40 read(2) and writev(2) calls on each side, 2.2 times
// TCP's (whose loopback buffers autotune to megabytes), and as many wake-ups of the other
// side, each of which a busy process serves late: under CPU contention the stream rate
// fell to a fraction of TCP's. 1 MiB (the kernel doubles it, to hold its own bookkeeping)
// cuts the calls about tenfold; larger buffers cut them little more and let a batch leave
// the caches between the two copies. The kernel caps the request at net.core.wmem_max
// unless SO_SNDBUFFORCE is allowed. A unix stream socket's receive side has no buffer of
// its own: the sender's holds the queued data.
const unixSocketBuffer = 1 << 20

// tuneSocket sets the socket options the link wants on a new connection: for a unix socket,
// a larger send buffer. Failures are ignored: the defaults still work.
func tuneSocket(nc net.Conn) {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		if cur, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF); err == nil && cur >= 2*unixSocketBuffer {
			return
		}
		_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF, unixSocketBuffer)
		if cur, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF); err == nil && cur < 2*unixSocketBuffer {
			_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, unixSocketBuffer)
		}
	})
}

// iovMax is the most iovecs one writev takes on Linux.
const iovMax = 1024

func (s *sockIO) rawWritev(fd uintptr) bool {
	for s.iovDone < len(s.iov) {
		iov := s.iov[s.iovDone:]
		if len(iov) > iovMax {
			iov = iov[:iovMax]
		}
		s.writes.Add(1)
		r, _, e := unix.Syscall(unix.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
		if e != 0 {
			switch e {
			case unix.EAGAIN:
				return false
			case unix.EINTR:
				continue
			}
			s.werr = e
			return true
		}
		n := uint64(r)
		s.wn += int64(n)
		for n > 0 && s.iovDone < len(s.iov) { // consume fully written iovecs, trim a partial one
			v := &s.iov[s.iovDone]
			if n >= v.Len {
				n -= v.Len
				s.iovDone++
				continue
			}
			v.Base = (*byte)(unsafe.Add(unsafe.Pointer(v.Base), n))
			v.Len -= n
			n = 0
		}
	}
	return true
}

// Writev writes all of bufs, in order, with as few writev(2) calls as the socket allows.
func (s *sockIO) Writev(bufs [][]byte) (int64, error) {
	if s.rc == nil {
		var total int64
		for _, b := range bufs {
			if len(b) == 0 {
				continue
			}
			s.writes.Add(1)
			n, err := s.nc.Write(b)
			total += int64(n)
			if err != nil {
				return total, err
			}
		}
		return total, nil
	}
	if len(s.sendFDs) > 0 {
		return s.sendmsgRights(bufs)
	}
	s.iov = s.iov[:0]
	for _, b := range bufs {
		if len(b) == 0 {
			continue
		}
		var v unix.Iovec
		v.Base = &b[0]
		v.SetLen(len(b))
		s.iov = append(s.iov, v)
	}
	s.iovDone, s.wn, s.werr = 0, 0, nil
	err := s.rc.Write(s.writeFn)
	for i := range s.iov { // drop references to the caller's buffers
		s.iov[i].Base = nil
	}
	if err == nil {
		err = s.werr
	}
	if err != nil && errors.Is(err, unix.EPIPE) {
		err = io.ErrClosedPipe
	}
	return s.wn, err
}

// sendmsgRights writes bufs (a handshake's few hundred bytes, gathered into one buffer)
// with sendFDs passed along with their first bytes, then forgets sendFDs (the caller
// still owns and closes them).
func (s *sockIO) sendmsgRights(bufs [][]byte) (int64, error) {
	var p []byte
	for _, b := range bufs {
		p = append(p, b...)
	}
	oob := unix.UnixRights(s.sendFDs...)
	s.sendFDs = nil
	if len(p) == 0 {
		return 0, errors.New("ipc: descriptors to pass with no bytes to carry them")
	}
	var done int
	var werr error
	err := s.rc.Write(func(fd uintptr) bool {
		for done < len(p) {
			s.writes.Add(1)
			n, err := unix.SendmsgN(int(fd), p[done:], oob, nil, 0)
			if err == unix.EAGAIN {
				return false
			}
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				werr = err
				return true
			}
			done += n
			oob = nil // the descriptors went with the first bytes
		}
		return true
	})
	if err == nil {
		err = werr
	}
	if err != nil && errors.Is(err, unix.EPIPE) {
		err = io.ErrClosedPipe
	}
	return int64(done), err
}
