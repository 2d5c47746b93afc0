package ipc

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Buffer size classes: 4 KiB, then four classes per power of two (1.25, 1.5, 1.75, 2 times
// the previous power), so a recycled buffer wastes at most a quarter of its size.
const (
	poolMinShift = 12 // 4 KiB
	poolMaxShift = 30 // MaxFrameCap
	poolClasses  = 1 + (poolMaxShift-poolMinShift)*4
)

func poolClass(n int) int {
	if n <= 1<<poolMinShift {
		return 0
	}
	e := bits.Len(uint(n - 1)) // 2^e >= n > 2^(e-1)
	base := 1 << (e - 1)
	step := base / 4
	k := (n - base + step - 1) / step // 1..4
	return (e-1-poolMinShift)*4 + k
}

func poolClassSize(c int) int {
	if c == 0 {
		return 1 << poolMinShift
	}
	e := (c-1)/4 + poolMinShift // base exponent
	k := (c-1)%4 + 1
	base := 1 << e
	return base + k*(base/4)
}

// BufferPool recycles the byte buffers frames are read into. A fresh page costs about 13 µs
// on the machines colink measures on, so a reader that allocated a new buffer per batch
// would run at a fraction of the socket's speed. The pool keeps at most maxIdle bytes of
// idle buffers, and gives back to the garbage collector (whose scavenger returns the pages
// to the operating system) the buffers left unused for about its idle time, so that the
// memory a burst took (a bulk load: hundreds of megabytes) does not stay held for good. It
// is safe for concurrent use and implements arrow's memory.Allocator so decoded batches hand
// their buffers back when released.
type BufferPool struct {
	mu sync.Mutex
	// free holds each class's idle buffers as a stack: Get takes the newest, so the oldest
	// sit at the bottom. low is each stack's lowest height since the last sweep: the
	// buffers below it went unused the whole time.
	free     [poolClasses][][]byte
	low      [poolClasses]int
	idle     int64
	maxIdle  int64
	idleTime time.Duration
	sweeper  *time.Timer // armed while idle buffers may age out
	armed    bool
	due      time.Time // when the armed sweep is due (a stopped timer's late run is ignored)

	gets     atomic.Int64
	misses   atomic.Int64
	released atomic.Int64 // bytes given back, by Trim, SetMaxIdle or aging
}

// DefaultPoolIdle is the idle-byte bound of a pool made by NewBufferPool(0).
const DefaultPoolIdle = 512 << 20

// DefaultPoolIdleTime is how long a new pool keeps a buffer nobody uses: one unused for
// between this and twice this is released.
const DefaultPoolIdleTime = 30 * time.Second

// NewBufferPool returns a pool that keeps at most maxIdle bytes of idle buffers
// (DefaultPoolIdle if maxIdle <= 0) and releases buffers left unused for
// DefaultPoolIdleTime (see SetIdleTime).
func NewBufferPool(maxIdle int64) *BufferPool {
	if maxIdle <= 0 {
		maxIdle = DefaultPoolIdle
	}
	return &BufferPool{maxIdle: maxIdle, idleTime: DefaultPoolIdleTime}
}

// Get returns a buffer of length n; its capacity is n's size class.
func (p *BufferPool) Get(n int) []byte {
	p.gets.Add(1)
	if n > MaxFrameCap+MaxFrameCap/4 {
		p.misses.Add(1)
		return make([]byte, n)
	}
	c := poolClass(n)
	p.mu.Lock()
	if l := len(p.free[c]); l > 0 {
		b := p.free[c][l-1]
		p.free[c][l-1] = nil
		p.free[c] = p.free[c][:l-1]
		p.low[c] = min(p.low[c], l-1)
		p.idle -= int64(cap(b))
		p.mu.Unlock()
		return b[:n]
	}
	p.mu.Unlock()
	p.misses.Add(1)
	return make([]byte, n, poolClassSize(c))
}

// Put returns b to the pool. Buffers whose capacity is not a size class, or that would
// take the idle bytes over the bound, are left to the garbage collector.
func (p *BufferPool) Put(b []byte) {
	c := cap(b)
	if c == 0 || c > 1<<poolMaxShift {
		return
	}
	k := poolClass(c)
	if poolClassSize(k) != c {
		return
	}
	p.mu.Lock()
	if p.idle+int64(c) <= p.maxIdle {
		p.free[k] = append(p.free[k], b[:0])
		p.idle += int64(c)
		if !p.armed && p.idleTime > 0 {
			p.armLocked()
		}
	}
	p.mu.Unlock()
}

// armLocked starts the sweep timer; every stack's low-water mark starts at its height.
func (p *BufferPool) armLocked() {
	for k := range p.free {
		p.low[k] = len(p.free[k])
	}
	p.due = time.Now().Add(p.idleTime)
	if p.sweeper == nil {
		p.sweeper = time.AfterFunc(p.idleTime, p.sweep)
	} else {
		p.sweeper.Reset(p.idleTime)
	}
	p.armed = true
}

// sweep releases the buffers that went unused since the last sweep (those below each
// stack's low-water mark) and rearms while idle buffers remain.
func (p *BufferPool) sweep() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.armed || time.Now().Before(p.due) {
		return // the run of a timer since stopped or rearmed
	}
	p.armed = false
	for k := range p.free {
		if n := p.low[k]; n > 0 {
			p.releaseLocked(k, n)
		}
	}
	if p.idle > 0 {
		p.armLocked()
	}
}

// releaseLocked drops the n oldest idle buffers of class k.
func (p *BufferPool) releaseLocked(k, n int) {
	st := p.free[k]
	size := int64(poolClassSize(k)) * int64(n)
	m := copy(st, st[n:])
	clear(st[m:])
	p.free[k] = st[:m]
	p.low[k] = max(0, p.low[k]-n)
	p.idle -= size
	p.released.Add(size)
}

// Trim releases idle buffers, the largest and then the oldest first, until at most keep
// bytes are idle, and returns the bytes released.
func (p *BufferPool) Trim(keep int64) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.trimLocked(max(keep, 0))
}

func (p *BufferPool) trimLocked(keep int64) int64 {
	before := p.idle
	for k := poolClasses - 1; k >= 0 && p.idle > keep; k-- {
		size := int64(poolClassSize(k))
		n := min(int64(len(p.free[k])), (p.idle-keep+size-1)/size)
		if n > 0 {
			p.releaseLocked(k, int(n))
		}
	}
	return before - p.idle
}

// SetMaxIdle changes the bound on idle bytes (DefaultPoolIdle if n <= 0), releasing buffers
// over a lower one at once.
func (p *BufferPool) SetMaxIdle(n int64) {
	if n <= 0 {
		n = DefaultPoolIdle
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.maxIdle = n
	p.trimLocked(n)
}

// SetIdleTime sets how long the pool keeps a buffer nobody uses: one left unused for between
// d and 2d is released. d <= 0 keeps idle buffers until Trim (up to the idle bound).
func (p *BufferPool) SetIdleTime(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idleTime = max(d, 0)
	if p.sweeper != nil {
		p.sweeper.Stop()
	}
	p.armed = false
	if p.idleTime > 0 && p.idle > 0 {
		p.armLocked()
	}
}

// PoolStats are a pool's counters.
type PoolStats struct {
	Gets      int64 `json:"gets" msgpack:"gets"`             // buffers handed out
	Misses    int64 `json:"misses" msgpack:"misses"`         // of which freshly allocated
	IdleBytes int64 `json:"idle_bytes" msgpack:"idle_bytes"` // bytes held idle now
	// Released counts the idle bytes given back to the garbage collector: aged out,
	// trimmed, or over a lowered bound.
	Released int64 `json:"released_bytes" msgpack:"released_bytes"`
}

// Stats returns the pool's counters.
func (p *BufferPool) Stats() PoolStats {
	p.mu.Lock()
	idle := p.idle
	p.mu.Unlock()
	return PoolStats{Gets: p.gets.Load(), Misses: p.misses.Load(), IdleBytes: idle, Released: p.released.Load()}
}

// Allocate implements memory.Allocator. Unlike Get it returns zeroed memory, as Arrow's
// allocators do: Arrow's IPC writer and reader allocate validity bitmaps (for example the
// all-NULL bitmap of a column without one) and rely on them starting as zeros, so a stale
// recycled buffer here would turn NULLs into values.
func (p *BufferPool) Allocate(size int) []byte {
	b := p.Get(size)
	clear(b)
	return b
}

// Reallocate implements memory.Allocator; bytes past the old length are zeroed.
func (p *BufferPool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		old := len(b)
		b = b[:size]
		if size > old {
			clear(b[old:])
		}
		return b
	}
	nb := p.Get(size)
	n := copy(nb, b)
	clear(nb[n:])
	p.Put(b)
	return nb
}

// Free implements memory.Allocator.
func (p *BufferPool) Free(b []byte) { p.Put(b) }

// frameAllocator hands received frame buffers back to their pool. The Arrow message built on
// a frame gets the payload with its capacity cut to its length, so a batch whose metadata
// points past its body fails to decode instead of reading the recycled buffer's stale
// tail; Free restores the capacity (the buffer came from Get(len), so its capacity is that
// length's size class) before returning it.
type frameAllocator struct{ p *BufferPool }

func (a frameAllocator) Allocate(size int) []byte { return a.p.Get(size) }

func (a frameAllocator) Reallocate(size int, b []byte) []byte { return a.p.Reallocate(size, b) }

func (a frameAllocator) Free(b []byte) {
	if len(b) == 0 {
		return
	}
	if cap(b) == len(b) {
		b = unsafe.Slice(&b[0], poolClassSize(poolClass(len(b))))
	}
	a.p.Put(b)
}
