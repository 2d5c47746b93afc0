package ipc

import (
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/colinkdb/colink/internal/rusage"
)

// The wake-up mechanisms a shared-memory ring could use, timed as a ping-pong between two
// OS threads (a round trip is two wake-ups): the unix socket through Go's poller (what the
// shm transport uses: an RBATCH descriptor on the socket is the wake-up), the same socket
// with blocking read(2) and write(2), an eventfd pair, and a futex on a shared word.
// results/ipcbench-shm.md records a run of
//
//	go test ./ipc -run '^$' -bench BenchmarkWakeup -benchtime 200000x -count 5
//
// The ring's producer never wakes a consumer that is awake: descriptors queued while one
// write is in progress go out together in the next, one wake-up for all of them (the
// ring_wakeups counter against ring_batches_out shows the share saved).
func BenchmarkWakeup(b *testing.B) {
	b.Run("socket-poller", func(b *testing.B) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			b.Fatal(err)
		}
		a, c := fdConn(b, fds[0]), fdConn(b, fds[1])
		pingPong(b, func() { writeByte(b, a) }, func() { readByte(b, a) }, func() { readByte(b, c) }, func() { writeByte(b, c) })
	})
	b.Run("socket-blocking", func(b *testing.B) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
		one := []byte{1}
		buf := make([]byte, 1)
		pingPong(b, func() { rawWrite(b, fds[0], one) }, func() { rawRead(b, fds[0], buf) },
			func() { rawRead(b, fds[1], buf) }, func() { rawWrite(b, fds[1], one) })
	})
	b.Run("eventfd", func(b *testing.B) {
		ping, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
		if err != nil {
			b.Fatal(err)
		}
		pong, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { unix.Close(ping); unix.Close(pong) })
		one := []byte{1, 0, 0, 0, 0, 0, 0, 0}
		buf := make([]byte, 8)
		pingPong(b, func() { rawWrite(b, ping, one) }, func() { rawRead(b, pong, buf) },
			func() { rawRead(b, ping, buf) }, func() { rawWrite(b, pong, one) })
	})
	b.Run("futex", func(b *testing.B) {
		// The word as it would sit in a segment: 0 the ball is with the pinger, 1 with
		// the ponger.
		mem, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANONYMOUS)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = unix.Munmap(mem) })
		word := (*atomic.Uint32)(unsafe.Pointer(&mem[0]))
		pingPong(b,
			func() { word.Store(1); futexWake(word) },
			func() { futexWaitWhile(word, 1) },
			func() { futexWaitWhile(word, 0) },
			func() { word.Store(0); futexWake(word) })
	})
}

// pingPong runs b.N round trips: the pinger sends and awaits the answer, the ponger, on
// its own locked thread, awaits and answers.
func pingPong(b *testing.B, send, await, recv, answer func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		for range b.N {
			recv()
			answer()
		}
	}()
	runtime.LockOSThread()
	ru0, _ := rusage.Self()
	b.ResetTimer()
	for range b.N {
		send()
		await()
	}
	b.StopTimer()
	<-done
	ru1, _ := rusage.Self()
	d := ru1.Sub(ru0)
	b.ReportMetric(float64(d.CPU().Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(d.Voluntary+d.Involuntary)/float64(b.N), "cs/op")
	runtime.UnlockOSThread()
}

func fdConn(b *testing.B, fd int) net.Conn {
	f := os.NewFile(uintptr(fd), "socketpair")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

func writeByte(b *testing.B, c net.Conn) {
	if _, err := c.Write([]byte{1}); err != nil {
		b.Error(err)
	}
}

func readByte(b *testing.B, c net.Conn) {
	var buf [1]byte
	if _, err := c.Read(buf[:]); err != nil {
		b.Error(err)
	}
}

func rawWrite(b *testing.B, fd int, p []byte) {
	if _, err := unix.Write(fd, p); err != nil {
		b.Error(err)
	}
}

func rawRead(b *testing.B, fd int, p []byte) {
	for {
		_, err := unix.Read(fd, p)
		if err != unix.EINTR {
			if err != nil {
				b.Error(err)
			}
			return
		}
	}
}

// futex(2) operations (linux/futex.h), which x/sys does not name.
const (
	futexOpWait = 0
	futexOpWake = 1
)

func futexWake(w *atomic.Uint32) {
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexOpWake, 1, 0, 0, 0)
}

// futexWaitWhile sleeps while *w holds v (a FUTEX_WAIT that finds another value returns at
// once).
func futexWaitWhile(w *atomic.Uint32, v uint32) {
	for w.Load() == v {
		_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexOpWait, uintptr(v), 0, 0, 0)
	}
}
