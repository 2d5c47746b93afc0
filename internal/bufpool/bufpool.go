// Package bufpool owns colink's one recycling buffer pool: the link reads frames into it,
// fragments and operators take their batches, hash tables and aggregate states from it,
// and storage decodes the column cache's arrays into it.
//
// A fresh page costs about 13 µs on the machines colink measures on, so code that took new
// memory for every batch would run at a fraction of the socket's speed. A Pool keeps freed
// buffers in size classes (64 B, then four classes per power of two: 1.25, 1.5, 1.75 and
// 2 times the previous power, so a buffer wastes at most a fifth of its size) and hands
// them out again. It keeps at most Retain bytes idle, and releases the buffers left unused
// for between IdleTime and twice that, so a burst's memory does not stay held for good.
//
// With OffHeap, buffers of at least OffHeapMin bytes are mapped with mmap outside Go's
// heap, and unmapped when released. The garbage collector then neither counts them nor
// lets the heap grow by GOGC's factor over them: a column cache of 8 GiB on the Go heap
// let the heap reach twice that before a collection, while off the heap it costs its own
// size and the Go heap stays small. Such memory must be given back explicitly (Free or
// Put): an off-heap buffer that is dropped without it stays mapped until the pool closes.
// Use it only where every buffer's release is certain, as for reference-counted Arrow
// arrays.
//
// A Pool implements Arrow's memory.Allocator and is safe for concurrent use.
package bufpool

import (
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Size classes.
const (
	minShift = 6  // 64 B
	maxShift = 30 // 1 GiB: larger buffers are not pooled
	classes  = 1 + (maxShift-minShift)*4
)

// OffHeapMin is the smallest buffer an OffHeap pool maps outside the Go heap; smaller ones
// come from the heap, which recycles small objects well by itself.
const OffHeapMin = 64 << 10

// classOf returns the class of the smallest class size holding n bytes.
func classOf(n int) int {
	if n <= 1<<minShift {
		return 0
	}
	e := bits.Len(uint(n - 1)) // 2^e >= n > 2^(e-1)
	base := 1 << (e - 1)
	step := base / 4
	k := (n - base + step - 1) / step // 1..4
	return (e-1-minShift)*4 + k
}

// classSize is class c's buffer size.
func classSize(c int) int {
	if c == 0 {
		return 1 << minShift
	}
	e := (c-1)/4 + minShift
	k := (c-1)%4 + 1
	base := 1 << e
	return base + k*(base/4)
}

// SizeOf is the capacity of the buffer Get(n) returns: n's class size, or n itself above
// the largest class.
func SizeOf(n int) int {
	if n > classSize(classes-1) {
		return n
	}
	return classSize(classOf(n))
}

// Options configure a Pool.
type Options struct {
	// Retain bounds the bytes of idle buffers kept; beyond it freed buffers are released.
	// 0 means 256 MiB; negative keeps none.
	Retain int64
	// IdleTime: a buffer left unused for between IdleTime and twice that is released.
	// 0 means never by time (Trim still releases).
	IdleTime time.Duration
	// OffHeap maps buffers of at least OffHeapMin bytes outside the Go heap (see the
	// package comment).
	OffHeap bool
	// Scribble fills every freed buffer with 0xA5 bytes before keeping it, so that a test
	// reading memory after giving it back computes garbage instead of the right answer by
	// luck.
	Scribble bool
}

// Pool is a recycling buffer pool (see the package comment).
type Pool struct {
	opts Options

	mu sync.Mutex
	// free holds each class's idle buffers as a stack: Get takes the newest, so the oldest
	// sit at the bottom. low is each stack's lowest height since the last sweep: the
	// buffers below it went unused the whole time.
	free    [classes][][]byte
	low     [classes]int
	idle    int64
	retain  int64
	sweeper *time.Timer // armed while idle buffers may age out
	armed   bool
	due     time.Time // when the armed sweep is due (a stopped timer's late run is ignored)
	// mapped records every off-heap buffer by its address, with its length, so Free knows
	// which buffers to unmap and ignores foreign ones.
	mapped      map[uintptr]int
	mappedBytes int64
	mappedUsed  int64 // of mappedBytes, in buffers handed out and not yet given back
	closed      bool

	gets, misses, released atomic.Int64
}

// New returns a pool.
func New(o Options) *Pool {
	p := &Pool{opts: o}
	p.retain = retainOf(o.Retain)
	if o.OffHeap {
		p.mapped = map[uintptr]int{}
	}
	return p
}

func retainOf(n int64) int64 {
	switch {
	case n == 0:
		return 256 << 20
	case n < 0:
		return 0
	}
	return n
}

// Get returns a buffer of length n, whose contents are unspecified and whose capacity is
// n's class size.
func (p *Pool) Get(n int) []byte {
	p.gets.Add(1)
	if n > classSize(classes-1) {
		p.misses.Add(1)
		return p.fresh(n, n)
	}
	c := classOf(n)
	p.mu.Lock()
	if l := len(p.free[c]); l > 0 {
		b := p.free[c][l-1]
		p.free[c][l-1] = nil
		p.free[c] = p.free[c][:l-1]
		p.low[c] = min(p.low[c], l-1)
		p.idle -= int64(cap(b))
		p.noteMappedLocked(b, +1)
		p.mu.Unlock()
		return b[:n]
	}
	p.mu.Unlock()
	p.misses.Add(1)
	return p.fresh(n, classSize(c))
}

// fresh returns a new buffer of length n and capacity size: mapped off the heap when the
// pool says so and it is large enough (mmap's pages are zeroed), else from the Go heap.
func (p *Pool) fresh(n, size int) []byte {
	if p.opts.OffHeap && size >= OffHeapMin {
		b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err == nil {
			p.mu.Lock()
			p.mapped[addr(b)] = size
			p.mappedBytes += int64(size)
			p.mappedUsed += int64(size)
			p.mu.Unlock()
			return b[:n]
		}
		// Out of mappings (vm.max_map_count) or address space: the heap still works.
	}
	return make([]byte, n, size)
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b[:1]))) }

// noteMappedLocked counts a mapped buffer (b's whole capacity) going out (+1) or coming
// back (-1); heap buffers are not counted.
func (p *Pool) noteMappedLocked(b []byte, dir int64) {
	if p.mapped == nil || cap(b) < OffHeapMin {
		return
	}
	if size, ok := p.mapped[addr(b[:cap(b)])]; ok {
		p.mappedUsed += dir * int64(size)
	}
}

// Put gives b back (any slice of a buffer Get or Allocate returned, whatever its length).
// Nothing may use b afterwards. A buffer whose capacity is not a class size, or one that
// would take the idle bytes over Retain, is released.
func (p *Pool) Put(b []byte) {
	c := cap(b)
	if c == 0 {
		return
	}
	b = b[:c]
	if p.opts.Scribble {
		for i := range b {
			b[i] = 0xA5
		}
	}
	k := classOf(c)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.noteMappedLocked(b, -1)
	if c > classSize(classes-1) || classSize(k) != c || p.idle+int64(c) > p.retain || p.closed {
		p.releaseLocked(b)
		return
	}
	p.free[k] = append(p.free[k], b[:0])
	p.idle += int64(c)
	if !p.armed && p.opts.IdleTime > 0 {
		p.armLocked()
	}
}

// releaseLocked lets a buffer go: unmapped if the pool mapped it, else left to the
// garbage collector.
func (p *Pool) releaseLocked(b []byte) {
	if p.mapped == nil || cap(b) == 0 {
		return
	}
	a := addr(b[:cap(b)])
	size, ok := p.mapped[a]
	if !ok {
		return
	}
	delete(p.mapped, a)
	p.mappedBytes -= int64(size)
	if err := unix.Munmap(b[:size:size]); err != nil {
		panic(fmt.Sprintf("bufpool: munmap of a buffer it mapped: %v", err))
	}
}

// Allocate returns a zeroed buffer of size bytes (memory.Allocator).
func (p *Pool) Allocate(size int) []byte {
	b := p.Get(size)
	clear(b)
	return b
}

// Reallocate grows or shrinks b to size bytes, keeping its contents (memory.Allocator).
// A shrink to a smaller class moves the contents into a buffer of that class, so that the
// memory held matches the bytes used: Arrow's Parquet reader reserves twice the values it
// ends with and then shrinks, and a decoded column kept in the cache would otherwise hold
// double its size for as long as it stays there.
func (p *Pool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		if c := cap(b); size > 0 && c <= classSize(classes-1) && classSize(classOf(c)) == c &&
			classSize(classOf(size)) < c && c-classSize(classOf(size)) >= minShrink {
			nb := p.Get(size)
			n := copy(nb, b[:min(len(b), size)])
			clear(nb[n:])
			p.Put(b)
			return nb
		}
		old := len(b)
		b = b[:size]
		if size > old {
			clear(b[old:])
		}
		return b
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Put(b)
	return nb
}

// minShrink is the least memory a shrinking Reallocate must save to move the contents.
const minShrink = 16 << 10

// Free gives b back (memory.Allocator); it is Put.
func (p *Pool) Free(b []byte) { p.Put(b) }

// armLocked starts the sweep timer; every stack's low-water mark starts at its height.
func (p *Pool) armLocked() {
	for k := range p.free {
		p.low[k] = len(p.free[k])
	}
	p.due = time.Now().Add(p.opts.IdleTime)
	if p.sweeper == nil {
		p.sweeper = time.AfterFunc(p.opts.IdleTime, p.sweep)
	} else {
		p.sweeper.Reset(p.opts.IdleTime)
	}
	p.armed = true
}

// sweep is the idle timer's run: Sweep, and rearm while idle buffers remain.
func (p *Pool) sweep() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.armed || time.Now().Before(p.due) {
		return // the run of a timer since stopped or rearmed
	}
	p.armed = false
	p.sweepLocked()
	if p.idle > 0 && !p.closed {
		p.armLocked()
	}
}

// Sweep releases the idle buffers that no Get has wanted since the previous Sweep (or the
// idle timer's last run) and returns their bytes. Called every interval T, it keeps what a
// steady load reuses and lets memory idle for T to 2T go; a pool with an IdleTime does it
// by itself.
func (p *Pool) Sweep() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sweepLocked()
}

// sweepLocked releases the buffers below each stack's low-water mark and restarts the
// marks at the stacks' heights.
func (p *Pool) sweepLocked() int64 {
	before := p.idle
	for k := range p.free {
		if n := p.low[k]; n > 0 {
			p.dropLocked(k, n)
		}
		p.low[k] = len(p.free[k])
	}
	return before - p.idle
}

// dropLocked releases the n oldest idle buffers of class k.
func (p *Pool) dropLocked(k, n int) {
	st := p.free[k]
	for _, b := range st[:n] {
		p.releaseLocked(b)
	}
	size := int64(classSize(k)) * int64(n)
	m := copy(st, st[n:])
	clear(st[m:])
	p.free[k] = st[:m]
	p.low[k] = max(0, p.low[k]-n)
	p.idle -= size
	p.released.Add(size)
}

// Trim releases idle buffers, the largest and then the oldest first, until at most keep
// bytes are idle, and returns the bytes released.
func (p *Pool) Trim(keep int64) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.trimLocked(max(keep, 0))
}

func (p *Pool) trimLocked(keep int64) int64 {
	before := p.idle
	for k := classes - 1; k >= 0 && p.idle > keep; k-- {
		size := int64(classSize(k))
		n := min(int64(len(p.free[k])), (p.idle-keep+size-1)/size)
		if n > 0 {
			p.dropLocked(k, int(n))
		}
	}
	return before - p.idle
}

// SetRetain changes the bound on idle bytes (as Options.Retain), releasing buffers over a
// lower one at once.
func (p *Pool) SetRetain(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.retain = retainOf(n)
	p.trimLocked(p.retain)
}

// Close releases every idle buffer and stops the idle timer. Buffers in use stay valid;
// given back later, they are released at once.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.trimLocked(0)
	if p.sweeper != nil {
		p.sweeper.Stop()
	}
	p.armed = false
}

// Stats are a pool's counters.
type Stats struct {
	Gets     int64 // buffers asked for
	Misses   int64 // of them, new memory (heap or mapped) rather than an idle buffer
	Idle     int64 // bytes of idle buffers now
	Released int64 // idle bytes let go so far, by age, Trim or SetRetain
	Mapped   int64 // bytes mapped off the heap now, in use or idle
	// MappedInUse is the part of Mapped handed out and not yet given back: with nothing in
	// use it is 0, and a larger figure after every user let go is a leak.
	MappedInUse int64
}

// Stats returns the pool's counters.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	idle, mapped, used := p.idle, p.mappedBytes, p.mappedUsed
	p.mu.Unlock()
	return Stats{Gets: p.gets.Load(), Misses: p.misses.Load(), Idle: idle, Released: p.released.Load(),
		Mapped: mapped, MappedInUse: used}
}
