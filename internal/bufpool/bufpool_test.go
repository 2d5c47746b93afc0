package bufpool

import (
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

var _ memory.Allocator = (*Pool)(nil)

func TestClasses(t *testing.T) {
	prev := 0
	for c := 0; c < classes; c++ {
		size := classSize(c)
		if size <= prev {
			t.Fatalf("class %d: size %d not above %d", c, size, prev)
		}
		if classOf(size) != c || classOf(prev+1) != c {
			t.Fatalf("class %d (%d..%d): classOf gives %d, %d", c, prev+1, size, classOf(prev+1), classOf(size))
		}
		if c > 1 && float64(size)/float64(prev) > 1.26 {
			t.Fatalf("class %d wastes more than a fifth: %d after %d", c, size, prev)
		}
		prev = size
	}
	if classSize(classes-1) != 1<<maxShift {
		t.Fatalf("largest class %d", classSize(classes-1))
	}
}

func TestReuseAndZeroing(t *testing.T) {
	for _, offHeap := range []bool{false, true} {
		p := New(Options{OffHeap: offHeap})
		b := p.Allocate(100 << 10)
		for i := range b {
			b[i] = 7
		}
		p.Free(b)
		c := p.Allocate(98 << 10) // the same class (112 KiB)
		if &c[0] != &b[0] {
			t.Errorf("offHeap=%v: a freed buffer of the class was not reused", offHeap)
		}
		for i, x := range c {
			if x != 0 {
				t.Fatalf("offHeap=%v: byte %d of a reused Allocate is %d", offHeap, i, x)
			}
		}
		st := p.Stats()
		if st.Gets != 2 || st.Misses != 1 {
			t.Errorf("offHeap=%v: stats %+v", offHeap, st)
		}
		if offHeap && (st.Mapped != int64(cap(c)) || st.MappedInUse != int64(cap(c))) {
			t.Errorf("mapped %d (%d in use), want %d", st.Mapped, st.MappedInUse, cap(c))
		}
		if !offHeap && st.Mapped != 0 {
			t.Errorf("a heap pool mapped %d bytes", st.Mapped)
		}
		p.Free(c)
		if st := p.Stats(); st.MappedInUse != 0 {
			t.Errorf("offHeap=%v: %d mapped bytes in use after every buffer came back", offHeap, st.MappedInUse)
		}
		p.Close()
		if st := p.Stats(); st.Mapped != 0 || st.Idle != 0 {
			t.Errorf("offHeap=%v: after Close %+v", offHeap, st)
		}
	}
}

func TestRetainBound(t *testing.T) {
	p := New(Options{Retain: 1 << 20, OffHeap: true})
	var bufs [][]byte
	for range 8 {
		bufs = append(bufs, p.Get(256<<10))
	}
	if st := p.Stats(); st.Mapped != 8*256<<10 {
		t.Fatalf("mapped %d", st.Mapped)
	}
	for _, b := range bufs {
		p.Put(b)
	}
	st := p.Stats()
	if st.Idle != 1<<20 || st.Mapped != 1<<20 {
		t.Errorf("after 8 puts of 256 KiB with a 1 MiB bound: %+v (the rest must be unmapped)", st)
	}
	p.SetRetain(256 << 10)
	if st := p.Stats(); st.Idle != 256<<10 || st.Mapped != 256<<10 {
		t.Errorf("after SetRetain: %+v", st)
	}
	if n := p.Trim(0); n != 256<<10 {
		t.Errorf("Trim released %d", n)
	}
	if st := p.Stats(); st.Idle != 0 || st.Mapped != 0 {
		t.Errorf("after Trim(0): %+v", st)
	}
	none := New(Options{Retain: -1})
	none.Put(none.Get(1000))
	if st := none.Stats(); st.Idle != 0 {
		t.Errorf("a pool that keeps nothing keeps %d", st.Idle)
	}
}

func TestIdleSweep(t *testing.T) {
	idle := 20 * time.Millisecond
	p := New(Options{IdleTime: idle, OffHeap: true})
	defer p.Close()
	p.Put(p.Get(128 << 10))
	deadline := time.Now().Add(5 * time.Second)
	for p.Stats().Idle != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("an unused buffer was not released within 5 s of a %v idle time: %+v", idle, p.Stats())
		}
		time.Sleep(idle)
	}
	if st := p.Stats(); st.Mapped != 0 || st.Released != int64(classSize(classOf(128<<10))) {
		t.Errorf("after the sweep: %+v", st)
	}
}

func TestForeignAndOddBuffers(t *testing.T) {
	p := New(Options{OffHeap: true})
	p.Put(make([]byte, 100<<10)) // not a class size: ignored
	p.Put(make([]byte, 0))
	p.Put(make([]byte, 128<<10)) // a class size from the heap: kept, never unmapped
	if st := p.Stats(); st.Idle != 128<<10 || st.Mapped != 0 {
		t.Errorf("%+v", st)
	}
	p.Close()
	huge := p.Get(1<<maxShift + 1)
	if len(huge) != 1<<maxShift+1 {
		t.Fatal("a buffer above the largest class has the wrong length")
	}
	p.Put(huge) // released at once: the pool is closed and the size is not a class
	if st := p.Stats(); st.Mapped != 0 {
		t.Errorf("after putting the huge buffer back: %+v", st)
	}
}

func TestScribble(t *testing.T) {
	p := New(Options{Scribble: true})
	b := p.Get(200)
	b[0] = 1
	p.Put(b[:10]) // a shorter slice of the buffer: the whole capacity is scribbled
	c := p.Get(200)
	if c[0] != 0xA5 || c[199] != 0xA5 {
		t.Errorf("scribbled buffer reads %x … %x", c[0], c[199])
	}
}

func TestConcurrent(t *testing.T) {
	p := New(Options{Retain: 4 << 20, IdleTime: time.Millisecond, OffHeap: true})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				n := 1 << (6 + (g+i)%14)
				b := p.Allocate(n)
				b[0], b[n-1] = 1, 2
				if i%3 == 0 {
					b = p.Reallocate(2*n, b)
					if b[0] != 1 || b[n-1] != 2 {
						t.Error("Reallocate lost the contents")
						return
					}
				}
				p.Free(b)
			}
		}()
	}
	wg.Wait()
	if st := p.Stats(); st.MappedInUse != 0 {
		t.Errorf("%d mapped bytes in use after every buffer came back", st.MappedInUse)
	}
	p.Close()
	if st := p.Stats(); st.Mapped != 0 || st.Idle != 0 {
		t.Errorf("after Close: %+v", st)
	}
}

// TestReallocateShrinks: shrinking to a smaller class moves the contents into a buffer of
// that class (the memory held follows the bytes used); a small shrink stays in place.
func TestReallocateShrinks(t *testing.T) {
	p := New(Options{OffHeap: true})
	b := p.Allocate(2 << 20)
	for i := range b {
		b[i] = byte(i)
	}
	s := p.Reallocate(1<<20, b)
	if cap(s) != 1<<20 || len(s) != 1<<20 {
		t.Fatalf("shrunk to len %d cap %d", len(s), cap(s))
	}
	for i := range s {
		if s[i] != byte(i) {
			t.Fatalf("byte %d lost in the move", i)
		}
	}
	if st := p.Stats(); st.MappedInUse != 1<<20 {
		t.Errorf("%d mapped bytes in use after the shrink, want 1 MiB", st.MappedInUse)
	}
	same := p.Reallocate(1<<20-100, s)
	if &same[0] != &s[0] {
		t.Error("a shrink within the class moved")
	}
	p.Free(same)
	p.Close()
}

// Trim releases the largest idle buffers first; a lower Retain releases what is over it at
// once, and a Put over the bound keeps nothing. (From ipc's pool, which this one replaced.)
func TestTrimLargestFirstAndRetain(t *testing.T) {
	p := New(Options{})
	var bufs [][]byte
	for _, n := range []int{4 << 10, 4 << 10, 100 << 10, 1 << 20, 1 << 20, 5 << 20} {
		bufs = append(bufs, p.Get(n))
	}
	var total int64
	for _, b := range bufs {
		total += int64(cap(b))
		p.Put(b)
	}
	if got := p.Stats().Idle; got != total {
		t.Fatalf("idle %d, want %d", got, total)
	}
	rel := p.Trim(total - 1)
	if st := p.Stats(); rel != int64(SizeOf(5<<20)) || st.Idle != total-rel || st.Released != rel {
		t.Fatalf("Trim released %d, stats %+v", rel, st)
	}
	misses := p.Stats().Misses
	p.Put(p.Get(5 << 20))
	if p.Stats().Misses != misses+1 {
		t.Fatal("a trimmed buffer was handed out again")
	}
	p.SetRetain(200 << 10) // over the bound: down to the small buffers
	if st := p.Stats(); st.Idle > 200<<10 || st.Idle < 100<<10 {
		t.Fatalf("after SetRetain(200 KiB): %+v", st)
	}
	p.Put(make([]byte, 0, 1<<20)) // over the bound now: not kept
	if st := p.Stats(); st.Idle > 200<<10 {
		t.Fatalf("Put went over the bound: %+v", st)
	}
	if p.Trim(0); p.Stats().Idle != 0 {
		t.Fatalf("Trim(0) left %d idle bytes", p.Stats().Idle)
	}
}

// Buffers left unused for the idle time are released; a buffer in use every interval is
// kept; over an empty pool the sweeper stops; without an idle time nothing ages out. (From
// ipc's pool, which this one replaced.)
func TestIdleSweepKeepsWhatIsUsed(t *testing.T) {
	const idle = 40 * time.Millisecond
	p := New(Options{IdleTime: idle})
	defer p.Close()
	cold := [][]byte{p.Get(1 << 20), p.Get(1 << 20), p.Get(64 << 10)}
	hot := p.Get(1 << 20)
	for _, b := range cold {
		p.Put(b)
	}
	p.Put(hot)
	hotSize := int64(cap(hot))
	// Use one 1 MiB buffer all along: the pool keeps one, releases the rest.
	deadline := time.Now().Add(10 * time.Second)
	for p.Stats().Idle > hotSize {
		if time.Now().After(deadline) {
			t.Fatalf("cold buffers not released: %+v", p.Stats())
		}
		p.Put(p.Get(1 << 20))
		time.Sleep(idle / 8)
	}
	if st := p.Stats(); st.Idle != hotSize {
		t.Fatalf("the buffer in use was released too: %+v", st)
	}
	// Unused, the last one goes too, and the sweeper stops.
	for p.Stats().Idle > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("idle buffer not released: %+v", p.Stats())
		}
		time.Sleep(idle / 4)
	}
	time.Sleep(3 * idle)
	p.mu.Lock()
	armed := p.armed
	p.mu.Unlock()
	if armed {
		t.Fatal("the sweeper is still armed over an empty pool")
	}
	if st := p.Stats(); st.Released != 3*hotSize+int64(SizeOf(64<<10)) {
		t.Fatalf("released %d bytes, stats %+v", st.Released, st)
	}
	keep := New(Options{})
	keep.Put(keep.Get(1 << 20))
	time.Sleep(3 * idle)
	if keep.Stats().Idle != hotSize {
		t.Fatalf("with no idle time the buffer was released: %+v", keep.Stats())
	}
}

func TestSizeOf(t *testing.T) {
	for _, n := range []int{0, 1, 64, 65, 100 << 10, 1<<20 + 1} {
		if b := New(Options{}).Get(n); cap(b) != SizeOf(n) {
			t.Errorf("Get(%d) has capacity %d, SizeOf says %d", n, cap(b), SizeOf(n))
		}
	}
	if top := classSize(classes - 1); SizeOf(top) != top || SizeOf(top+1) != top+1 {
		t.Errorf("SizeOf at the largest class: %d, above it: %d", SizeOf(top), SizeOf(top+1))
	}
}
