package ipc

import (
	"testing"
	"time"
)

func TestPoolTrimAndMaxIdle(t *testing.T) {
	p := NewBufferPool(0)
	p.SetIdleTime(0) // no aging in this test
	var bufs [][]byte
	for _, n := range []int{4 << 10, 4 << 10, 100 << 10, 1 << 20, 1 << 20, 5 << 20} {
		bufs = append(bufs, p.Get(n))
	}
	var total int64
	for _, b := range bufs {
		total += int64(cap(b))
		p.Put(b)
	}
	if got := p.Stats().IdleBytes; got != total {
		t.Fatalf("idle %d, want %d", got, total)
	}
	// Trim releases the largest first: the 5 MiB buffer goes, the rest stays.
	rel := p.Trim(total - 1)
	if st := p.Stats(); rel != int64(poolClassSize(poolClass(5<<20))) || st.IdleBytes != total-rel || st.Released != rel {
		t.Fatalf("Trim released %d, stats %+v", rel, st)
	}
	misses := p.Stats().Misses
	p.Put(p.Get(5 << 20))
	if p.Stats().Misses != misses+1 {
		t.Fatal("a trimmed buffer was handed out again")
	}
	p.SetMaxIdle(200 << 10) // over the bound: down to the small buffers
	if st := p.Stats(); st.IdleBytes > 200<<10 || st.IdleBytes < 100<<10 {
		t.Fatalf("after SetMaxIdle(200 KiB): %+v", st)
	}
	p.Put(make([]byte, 0, 1<<20)) // over the bound now: not kept
	if st := p.Stats(); st.IdleBytes > 200<<10 {
		t.Fatalf("Put went over the bound: %+v", st)
	}
	if p.Trim(0); p.Stats().IdleBytes != 0 {
		t.Fatalf("Trim(0) left %d idle bytes", p.Stats().IdleBytes)
	}
}

// Buffers left unused for the idle time are released; a buffer in use every interval is
// kept; by default a pool ages its buffers out after DefaultPoolIdleTime.
func TestPoolReleasesIdleBuffers(t *testing.T) {
	if p := NewBufferPool(0); p.idleTime != DefaultPoolIdleTime {
		t.Fatalf("a new pool's idle time is %v, want %v", p.idleTime, DefaultPoolIdleTime)
	}
	const idle = 40 * time.Millisecond
	p := NewBufferPool(0)
	p.SetIdleTime(idle)
	cold := [][]byte{p.Get(1 << 20), p.Get(1 << 20), p.Get(64 << 10)}
	hot := p.Get(1 << 20)
	for _, b := range cold {
		p.Put(b)
	}
	p.Put(hot)
	hotSize := int64(cap(hot))
	// Use one 1 MiB buffer all along: the pool keeps one, releases the rest.
	deadline := time.Now().Add(10 * time.Second)
	for p.Stats().IdleBytes > hotSize {
		if time.Now().After(deadline) {
			t.Fatalf("cold buffers not released: %+v", p.Stats())
		}
		p.Put(p.Get(1 << 20))
		time.Sleep(idle / 8)
	}
	if st := p.Stats(); st.IdleBytes != hotSize {
		t.Fatalf("the buffer in use was released too: %+v", st)
	}
	// Unused, the last one goes too, and the sweeper stops.
	for p.Stats().IdleBytes > 0 {
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
	if st := p.Stats(); st.Released != 3*hotSize+int64(poolClassSize(poolClass(64<<10))) {
		t.Fatalf("released %d bytes, stats %+v", st.Released, st)
	}
	// SetIdleTime(0) keeps buffers.
	p.SetIdleTime(0)
	p.Put(p.Get(1 << 20))
	time.Sleep(3 * idle)
	if p.Stats().IdleBytes != hotSize {
		t.Fatalf("with no idle time the buffer was released: %+v", p.Stats())
	}
}
