package ipc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The shared-memory rings (PROTOCOL.md, "Shared memory"). A segment is one direction of a
// connection: a header page, then a data area used as a single-producer, single-consumer
// byte ring. The producer copies a batch body into a region of the ring and sends a
// descriptor of it (generation, position, length) on the socket, which stays the one
// ordered channel; the consumer checks the descriptor against its own private state,
// hands the region to the application in place, and advances the tail over the regions
// released, in order, however out of order the application releases them.
//
// Nothing here does I/O or a syscall: a segment is a []byte (a mapping in production, a
// plain slice in tests), and unmapping is a function the segment is given.

// Segment layout: all integers little-endian, offsets from the segment's start.
const (
	shmMagic        = "colkshm1" // offset 0, 8 bytes
	shmLayout       = 1          // offset 8, uint32
	shmHeaderSize   = 4096       // offset 12, uint32; the data area starts here
	shmOffGen       = 16         // uint64: the segment's generation, never 0
	shmOffCap       = 24         // uint64: bytes in the data area
	shmOffHead      = 64         // uint64: bytes the producer has allocated, ever (its own line)
	shmOffTail      = 128        // uint64: bytes the consumer has released, ever (its own line)
	shmRegionAlign  = 64         // every region starts at a multiple of this
	shmDescSize     = 24         // generation, position, length
	MinShmSize      = 64 << 10   // smallest segment (header included) a peer may announce
	MaxShmSize      = 1 << 30    // largest segment
	DefaultShmSize  = 64 << 20   // per direction, header included
	shmSizeMultiple = 4096       // a segment's size is a multiple of the page size
)

// errShm is wrapped by the errors of shared-memory set-up, so that a client can fall back
// to the plain socket.
var errShm = errors.New("shared memory")

// shmDesc describes one region of a ring: the producer's generation, the absolute position
// of the region's first byte (the producer's count of bytes allocated before it), and the
// batch body's length in bytes.
type shmDesc struct {
	gen, pos, len uint64
}

func (d shmDesc) put(b []byte) {
	_ = b[shmDescSize-1]
	binary.LittleEndian.PutUint64(b[0:], d.gen)
	binary.LittleEndian.PutUint64(b[8:], d.pos)
	binary.LittleEndian.PutUint64(b[16:], d.len)
}

// decodeShmDesc splits an RBATCH payload into its descriptor and the Arrow message head
// (continuation marker, metadata length, metadata) that follows it. It checks only the
// size: the descriptor's values are checked against the ring by ringRx.accept.
func decodeShmDesc(p []byte) (shmDesc, []byte, error) {
	if len(p) < shmDescSize {
		return shmDesc{}, nil, fmt.Errorf("%w: RBATCH payload of %d bytes, shorter than its %d-byte descriptor", ErrProtocol, len(p), shmDescSize)
	}
	return shmDesc{
		gen: binary.LittleEndian.Uint64(p[0:]),
		pos: binary.LittleEndian.Uint64(p[8:]),
		len: binary.LittleEndian.Uint64(p[16:]),
	}, p[shmDescSize:], nil
}

func alignRegion(n uint64) uint64 { return (n + shmRegionAlign - 1) &^ (shmRegionAlign - 1) }

// regionStart is where a region of need bytes goes when the producer has allocated next
// bytes: at next, or at the start of the data area if it would cross its end (the bytes
// skipped are padding, allocated and released with the region).
func regionStart(next, need, capacity uint64) uint64 {
	if off := next % capacity; off+need > capacity {
		return next + (capacity - off)
	}
	return next
}

// shmSizeOK reports whether n is a segment size a peer may announce.
func shmSizeOK(n uint64) bool {
	return n >= MinShmSize && n <= MaxShmSize && n%shmSizeMultiple == 0
}

// normShmSize rounds a configured segment size up to the page size, within the bounds.
func normShmSize(n int64) uint64 {
	if n <= 0 {
		return 0
	}
	u := (uint64(n) + shmSizeMultiple - 1) &^ (shmSizeMultiple - 1)
	return min(max(u, MinShmSize), MaxShmSize)
}

// initSegment writes a fresh header for generation gen into mem (len(mem) is the segment
// size): the producer's and consumer's counters start at zero.
func initSegment(mem []byte, gen uint64) {
	copy(mem[0:8], shmMagic)
	binary.LittleEndian.PutUint32(mem[8:], shmLayout)
	binary.LittleEndian.PutUint32(mem[12:], shmHeaderSize)
	binary.LittleEndian.PutUint64(mem[shmOffGen:], gen)
	binary.LittleEndian.PutUint64(mem[shmOffCap:], uint64(len(mem)-shmHeaderSize))
	atomicAt(mem, shmOffHead).Store(0)
	atomicAt(mem, shmOffTail).Store(0)
}

// readSegment checks a mapped segment's header and returns its generation. It reads the
// header once: the values are copied, and the peer changing them later changes nothing.
func readSegment(mem []byte) (gen uint64, err error) {
	if len(mem) < MinShmSize || len(mem)%shmSizeMultiple != 0 {
		return 0, fmt.Errorf("%w: segment of %d bytes", errShm, len(mem))
	}
	switch {
	case string(mem[0:8]) != shmMagic:
		return 0, fmt.Errorf("%w: segment magic %q, want %q", errShm, mem[0:8], shmMagic)
	case binary.LittleEndian.Uint32(mem[8:]) != shmLayout:
		return 0, fmt.Errorf("%w: segment layout %d, want %d", errShm, binary.LittleEndian.Uint32(mem[8:]), shmLayout)
	case binary.LittleEndian.Uint32(mem[12:]) != shmHeaderSize:
		return 0, fmt.Errorf("%w: segment header of %d bytes, want %d", errShm, binary.LittleEndian.Uint32(mem[12:]), shmHeaderSize)
	case binary.LittleEndian.Uint64(mem[shmOffCap:]) != uint64(len(mem)-shmHeaderSize):
		return 0, fmt.Errorf("%w: segment says its data area is %d bytes; the mapping has %d", errShm, binary.LittleEndian.Uint64(mem[shmOffCap:]), len(mem)-shmHeaderSize)
	}
	gen = binary.LittleEndian.Uint64(mem[shmOffGen:])
	if gen == 0 {
		return 0, fmt.Errorf("%w: segment generation 0", errShm)
	}
	return gen, nil
}

// atomicAt is the 8-byte counter at mem[off:], which must be 8-byte aligned (a mapping is
// page aligned; tests use slices of uint64).
func atomicAt(mem []byte, off int) *atomic.Uint64 {
	if off < 0 || off+8 > len(mem) {
		panic("ipc: ring counter outside the segment")
	}
	return (*atomic.Uint64)(unsafe.Pointer(&mem[off]))
}

// shmSeg is one mapped segment, reference counted: the connection holds a reference, and
// so does every region the consumer has handed out and not had back (the application's
// batches point into the mapping) and every copy the producer is making into it. The
// mapping is unmapped when the last reference goes, never before.
type shmSeg struct {
	mem   []byte
	refs  atomic.Int64
	unmap func([]byte) error // nil: nothing to do (tests)
}

func newShmSeg(mem []byte, unmap func([]byte) error) *shmSeg {
	s := &shmSeg{mem: mem, unmap: unmap}
	s.refs.Store(1)
	return s
}

// acquire takes a reference unless the segment is already gone.
func (s *shmSeg) acquire() bool {
	for {
		n := s.refs.Load()
		if n <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release drops a reference, unmapping the segment with the last.
func (s *shmSeg) release() {
	if s.refs.Add(-1) == 0 && s.unmap != nil {
		_ = s.unmap(s.mem)
	}
}

// ringTx is the producer's side of a ring. It belongs to whoever holds the connection's
// ring lock (one sender at a time).
//
// Invariant: tail (as last read) ≤ head ≤ tail + capacity; head only grows.
type ringTx struct {
	seg  *shmSeg
	data []byte
	cap  uint64
	gen  uint64
	head uint64
}

func newRingTx(seg *shmSeg, gen uint64) *ringTx {
	return &ringTx{seg: seg, data: seg.mem[shmHeaderSize:], cap: uint64(len(seg.mem) - shmHeaderSize), gen: gen}
}

// reserve allocates a region for a body of n bytes. ok is false when it does not fit now
// (the ring is full, or n is larger than the ring): the caller sends the body on the
// socket instead. An error means the consumer's tail is impossible (the peer wrote
// garbage into the header): the connection must fail. prev is the head to roll back to.
func (r *ringTx) reserve(n int) (d shmDesc, region []byte, prev uint64, ok bool, err error) {
	need := alignRegion(uint64(n))
	if n <= 0 || need > r.cap {
		return shmDesc{}, nil, 0, false, nil
	}
	tail := atomicAt(r.seg.mem, shmOffTail).Load()
	if tail > r.head || r.head-tail > r.cap {
		return shmDesc{}, nil, 0, false, fmt.Errorf("%w: the peer's ring tail %d is impossible with head %d and %d bytes of ring", ErrProtocol, tail, r.head, r.cap)
	}
	pos := regionStart(r.head, need, r.cap)
	if pos+need-tail > r.cap {
		return shmDesc{}, nil, 0, false, nil
	}
	prev = r.head
	r.head = pos + need
	atomicAt(r.seg.mem, shmOffHead).Store(r.head)
	off := pos % r.cap
	return shmDesc{gen: r.gen, pos: pos, len: uint64(n)}, r.data[off : off+uint64(n) : off+uint64(n)], prev, true, nil
}

// rollback undoes the last reservation (its frame could not be sent).
func (r *ringTx) rollback(prev uint64) {
	r.head = prev
	atomicAt(r.seg.mem, shmOffHead).Store(prev)
}

// ringRx is the consumer's side of a ring. accept runs on the connection's reader (under
// the connection's lock); release runs on whatever goroutine lets go of a batch, so the
// bookkeeping has a lock of its own, taken inside the connection's and never around it.
//
// Invariants (under mu): tail ≤ every outstanding region's start; the outstanding regions
// are in position order, contiguous from tail to next (each one's start is the previous
// one's end), and span at most the ring's capacity; the published tail is tail.
type ringRx struct {
	seg  *shmSeg
	data []byte
	cap  uint64
	gen  uint64

	mu   sync.Mutex
	next uint64     // end of the last region accepted
	tail uint64     // end of the released prefix
	out  []rxRegion // accepted regions, out[head:] outstanding
	head int
}

// rxRegion is an accepted region: from start (the previous region's end: padding
// included) to end, its body at pos.
type rxRegion struct {
	start, pos, end uint64
	released        bool
}

func newRingRx(seg *shmSeg, gen uint64) *ringRx {
	return &ringRx{seg: seg, data: seg.mem[shmHeaderSize:], cap: uint64(len(seg.mem) - shmHeaderSize), gen: gen}
}

// accept checks a descriptor against the ring, never trusting it: the generation must be
// this segment's, the region must start exactly where the producer's next one must (after
// the previous one, or at the start of the data area if it would cross its end), and it
// must fit in the space the consumer has released. It returns the body, which aliases the
// mapping with its capacity cut to its length, and holds a reference on the segment until
// release. An error names the problem; the connection must fail.
func (r *ringRx) accept(d shmDesc) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case d.gen != r.gen:
		return nil, fmt.Errorf("%w: RBATCH descriptor of generation %d, the segment's is %d", ErrProtocol, d.gen, r.gen)
	case d.len == 0:
		return nil, fmt.Errorf("%w: RBATCH descriptor of an empty region", ErrProtocol)
	case d.len > r.cap:
		return nil, fmt.Errorf("%w: RBATCH region of %d bytes in a ring of %d", ErrProtocol, d.len, r.cap)
	}
	need := alignRegion(d.len)
	want := regionStart(r.next, need, r.cap)
	if d.pos != want {
		return nil, fmt.Errorf("%w: RBATCH region at ring position %d, the next region must start at %d (overlapping, out of order or out of bounds)", ErrProtocol, d.pos, want)
	}
	if d.pos+need-r.tail > r.cap {
		return nil, fmt.Errorf("%w: RBATCH region [%d, %d) overruns the %d bytes released (tail %d, ring %d bytes)", ErrProtocol, d.pos, d.pos+need, r.tail+r.cap-d.pos, r.tail, r.cap)
	}
	if !r.seg.acquire() {
		return nil, fmt.Errorf("%w: ring segment already unmapped", ErrConnClosed)
	}
	if r.head > 0 && r.head == len(r.out) {
		r.out, r.head = r.out[:0], 0
	}
	r.out = append(r.out, rxRegion{start: r.next, pos: d.pos, end: d.pos + need})
	r.next = d.pos + need
	off := d.pos % r.cap
	return r.data[off : off+d.len : off+d.len], nil
}

// release gives back the region whose body is b (as accept returned it), advancing the
// tail over the released prefix. It reports false for a slice that is no outstanding
// region's body.
func (r *ringRx) release(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	off := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(r.data))))
	r.mu.Lock()
	found := false
	for i := r.head; i < len(r.out); i++ {
		if g := &r.out[i]; !g.released && g.pos%r.cap == off {
			g.released, found = true, true
			break
		}
	}
	if !found {
		r.mu.Unlock()
		return false
	}
	moved := false
	for r.head < len(r.out) && r.out[r.head].released {
		r.tail = r.out[r.head].end
		r.out[r.head] = rxRegion{}
		r.head++
		moved = true
	}
	if moved {
		atomicAt(r.seg.mem, shmOffTail).Store(r.tail)
	}
	if r.head > 64 && r.head*2 > len(r.out) {
		n := copy(r.out, r.out[r.head:])
		clear(r.out[n:])
		r.out, r.head = r.out[:n], 0
	}
	r.mu.Unlock()
	r.seg.release()
	return true
}

// outstanding returns the regions accepted and not yet released.
func (r *ringRx) outstanding() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for i := r.head; i < len(r.out); i++ {
		if !r.out[i].released {
			n++
		}
	}
	return n
}

// Allocate, Reallocate and Free make the ring a memory.Allocator for the Arrow buffers
// built on its regions: Free is the release of a region when the last array over it goes.
// The ring never allocates.
func (r *ringRx) Allocate(int) []byte { panic("ipc: a ring region cannot be allocated") }

func (r *ringRx) Reallocate(int, []byte) []byte { panic("ipc: a ring region cannot be resized") }

func (r *ringRx) Free(b []byte) { r.release(b) }
