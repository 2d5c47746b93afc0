//go:build linux

package ipc

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// createSegment makes a shared-memory segment of size bytes for generation gen: an
// anonymous memfd, sized, mapped, its header written, and sealed so that neither side can
// shrink or grow it (a shrunk mapping would fault the peer with SIGBUS) nor change the
// seals. The caller passes fd to the peer and closes it; the mapping stays. It is
// pre-faulted by prefaultSegment, off the handshake's path.
func createSegment(size, gen uint64) (fd int, mem []byte, err error) {
	fd, err = unix.MemfdCreate("colink-link", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return -1, nil, fmt.Errorf("%w: memfd_create: %w", errShm, err)
	}
	fail := func(what string, err error) (int, []byte, error) {
		if mem != nil {
			_ = unix.Munmap(mem)
		}
		unix.Close(fd)
		return -1, nil, fmt.Errorf("%w: %s: %w", errShm, what, err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		return fail(fmt.Sprintf("ftruncate to %d bytes", size), err)
	}
	if mem, err = unix.Mmap(fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err != nil {
		return fail(fmt.Sprintf("mmap of %d bytes", size), err)
	}
	initSegment(mem, gen)
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL); err != nil {
		return fail("seal", err)
	}
	return fd, mem, nil
}

// mapSegment maps a segment the peer passed: a regular file of exactly size bytes, sealed
// against shrinking and growing, mapped shared (and pre-faulted later, by
// prefaultSegment). The caller closes fd.
func mapSegment(fd int, size uint64) ([]byte, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("%w: fstat: %w", errShm, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || uint64(st.Size) != size {
		return nil, fmt.Errorf("%w: the peer passed a file of mode %#o and %d bytes, want a %d-byte memfd", errShm, st.Mode, st.Size, size)
	}
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: F_GET_SEALS: %w", errShm, err)
	}
	if need := unix.F_SEAL_SHRINK | unix.F_SEAL_GROW; seals&need != need {
		return nil, fmt.Errorf("%w: the peer's segment is not sealed against resizing (seals %#x)", errShm, seals)
	}
	mem, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%w: mmap of %d bytes: %w", errShm, size, err)
	}
	return mem, nil
}

// prefaultSegment faults every page of a mapping in, writable, without changing its
// contents (MADV_POPULATE_WRITE, as MAP_POPULATE would at mmap): a first-touch fault in
// the data path costs more than the copy it serves. On a kernel without it (before 5.14)
// the pages fault in on first use.
func prefaultSegment(mem []byte) { _ = unix.Madvise(mem, unix.MADV_POPULATE_WRITE) }

// unmapSegment unmaps a segment.
func unmapSegment(mem []byte) error { return unix.Munmap(mem) }

// closeFD closes a descriptor.
func closeFD(fd int) { _ = unix.Close(fd) }
