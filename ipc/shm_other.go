//go:build !linux

package ipc

import (
	"fmt"
	"os"
)

// The shm transport needs Linux's memfd; elsewhere a server never offers it and a client
// that asks falls back to the plain unix socket.

func createSegment(size, gen uint64) (int, []byte, error) {
	return -1, nil, fmt.Errorf("%w: the shm transport needs Linux (memfd_create)", errShm)
}

func mapSegment(fd int, size uint64) ([]byte, error) {
	return nil, fmt.Errorf("%w: the shm transport needs Linux (memfd_create)", errShm)
}

func unmapSegment(mem []byte) error { return nil }

func prefaultSegment(mem []byte) {}

func closeFD(fd int) { _ = os.NewFile(uintptr(fd), "fd").Close() }
