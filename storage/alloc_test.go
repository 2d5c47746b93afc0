package storage

import (
	"testing"
	"time"
)

// TestRecyclingPoolBounded frees more than the pool's limit: it keeps at most limit bytes,
// and later allocations of those sizes reuse them.
func TestRecyclingPoolBounded(t *testing.T) {
	const limit = 1 << 20
	a := newRecyclingAllocator(limit, time.Hour)
	defer a.trim()
	var bufs [][]byte
	for i := range 40 {
		bufs = append(bufs, a.Allocate(minRecycled<<(i%3)))
	}
	for _, b := range bufs {
		a.Free(b)
	}
	if got := a.pooledBytes(); got > limit || got == 0 {
		t.Fatalf("pool holds %d bytes after freeing %d buffers, want 1..%d", got, len(bufs), limit)
	}
	// The pool now holds 64 KiB ×4, 128 KiB ×2 and 256 KiB ×2.
	for i := range 6 {
		b := a.Allocate(minRecycled << (i % 3))
		for _, v := range b {
			if v != 0 {
				t.Fatal("a recycled buffer was not zeroed")
			}
		}
	}
	if a.reused.Load() != 6 {
		t.Errorf("%d of 6 allocations reused pooled buffers", a.reused.Load())
	}
}

// TestRecyclingPoolTrimmedWhenIdle checks the pool keeps what is freed and empties once unused
// for its idle time. The pool is checked right after each Free; a check that finds it empty
// fails only if less than the idle time has passed since that Free (a test descheduled for
// longer under load sees a legitimate trim, not a defect).
func TestRecyclingPoolTrimmedWhenIdle(t *testing.T) {
	const idle = 50 * time.Millisecond
	a := newRecyclingAllocator(8<<20, idle)
	fill := func(n int) {
		t.Helper()
		for i := range n {
			b := a.Allocate(1 << 20)
			freed := time.Now()
			a.Free(b)
			if a.pooledBytes() == 0 && time.Since(freed) < idle {
				t.Fatalf("nothing pooled right after free %d", i+1)
			}
		}
	}
	waitEmpty := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); a.pooledBytes() != 0; {
			if time.Now().After(deadline) {
				t.Fatalf("%s: pool still holds %d bytes 5 s after its last use (idle time %v)", what, a.pooledBytes(), idle)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	fill(4)
	waitEmpty("first fill")
	// It fills and empties again.
	fill(1)
	waitEmpty("second fill")
}

// TestStoreCloseTrimsPool: the decode buffers a cache drop hands to the store's pool are
// dropped when the store closes.
func TestStoreCloseTrimsPool(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{RowGroupRows: 20000, SegmentRows: 40000, CacheSize: 64 << 20})
	loadTable(t, s, "t", allKindsSchema(), 1, 40000, 20000)
	checkTable(t, s, "t", 1, 40000)
	if err := s.DropCache(false); err != nil {
		t.Fatal(err)
	}
	a := s.opts.Allocator.(*recyclingAllocator)
	if a.pooledBytes() == 0 {
		t.Fatal("the cache drop pooled nothing")
	}
	s.Close()
	if got := a.pooledBytes(); got != 0 {
		t.Fatalf("pool holds %d bytes after Close", got)
	}
}
