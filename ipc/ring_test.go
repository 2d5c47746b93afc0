package ipc

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// The rings over an in-memory segment: no sockets, no sleeps. The producer and the
// consumer share the slice as two processes share the mapping.

// testSegment returns a zeroed, 8-byte aligned segment of shmHeaderSize+capacity bytes.
func testSegment(capacity int) []byte {
	n := shmHeaderSize + capacity
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
}

// testRing is a producer and a consumer over one segment of generation gen; unmapped
// counts the segment's unmapping.
type testRing struct {
	mem      []byte
	seg      *shmSeg
	tx       *ringTx
	rx       *ringRx
	unmapped int
}

func newTestRing(t testing.TB, capacity int, gen uint64) *testRing {
	t.Helper()
	r := &testRing{mem: testSegment(capacity)}
	initSegment(r.mem, gen)
	r.seg = newShmSeg(r.mem, func([]byte) error { r.unmapped++; return nil })
	r.tx, r.rx = newRingTx(r.seg, gen), newRingRx(r.seg, gen)
	return r
}

// send reserves a region for n bytes, fills it with a pattern and accepts its descriptor
// on the consumer's side, as a frame crossing the socket would.
func (r *testRing) send(t testing.TB, n int, fill byte) (shmDesc, []byte) {
	t.Helper()
	d, region, _, ok, err := r.tx.reserve(n)
	if err != nil || !ok {
		t.Fatalf("reserve %d: ok=%v err=%v (head %d, tail %d)", n, ok, err, r.tx.head, r.rx.tail)
	}
	for i := range region {
		region[i] = fill
	}
	body, err := r.rx.accept(d)
	if err != nil {
		t.Fatalf("accept %+v: %v", d, err)
	}
	if len(body) != n || cap(body) != n || !bytes.Equal(body, bytes.Repeat([]byte{fill}, n)) {
		t.Fatalf("accepted body of %d bytes (cap %d), want %d bytes of %#x", len(body), cap(body), n, fill)
	}
	return d, body
}

func (r *testRing) publishedTail() uint64 { return atomicAt(r.mem, shmOffTail).Load() }

func TestRingWrapAround(t *testing.T) {
	r := newTestRing(t, 1024, 7)
	// 300-byte bodies take 320 bytes: three fit, the fourth would cross the end and goes
	// to the start once the first is released, the 64 bytes skipped counted as padding.
	var bodies [][]byte
	for i, want := range []uint64{0, 320, 640} {
		d, b := r.send(t, 300, byte(i+1))
		if d.pos != want {
			t.Fatalf("region %d at %d, want %d", i, d.pos, want)
		}
		bodies = append(bodies, b)
	}
	if _, _, _, ok, _ := r.tx.reserve(300); ok {
		t.Fatal("a fourth region fits a ring holding three")
	}
	r.rx.release(bodies[0])
	if got := r.publishedTail(); got != 320 {
		t.Fatalf("tail %d after the first release, want 320", got)
	}
	d, b := r.send(t, 300, 4) // over the first region's bytes, the padding counted with it
	if d.pos != 1024 || &b[0] != &r.mem[shmHeaderSize] {
		t.Fatalf("wrapped region at %d (offset %d), want 1024 at the data area's start", d.pos, uintptr(unsafe.Pointer(&b[0]))-uintptr(unsafe.Pointer(&r.mem[shmHeaderSize])))
	}
	if _, _, _, ok, _ := r.tx.reserve(64); ok {
		t.Fatal("a region fits a ring whose free bytes are all held")
	}
	if !bytes.Equal(bodies[1], bytes.Repeat([]byte{2}, 300)) || !bytes.Equal(bodies[2], bytes.Repeat([]byte{3}, 300)) {
		t.Fatal("the wrapped region overwrote a region still held")
	}
	r.rx.release(bodies[2])
	r.rx.release(bodies[1])
	r.rx.release(b)
	if got := r.publishedTail(); got != r.tx.head || got != 1024+320 {
		t.Fatalf("tail %d, head %d after every release, want both 1344", got, r.tx.head)
	}
	// Many laps: the counters keep growing, every body intact. (A body over half the ring
	// may not fit even in an empty ring: it needs room for its padding too.)
	for i := range 100 {
		_, b := r.send(t, 50+i*4, byte(i))
		r.rx.release(b)
	}
	if r.rx.outstanding() != 0 || r.publishedTail() != r.tx.head {
		t.Fatalf("after 100 laps: %d outstanding, tail %d, head %d", r.rx.outstanding(), r.publishedTail(), r.tx.head)
	}
}

func TestRingFull(t *testing.T) {
	r := newTestRing(t, 4096, 7)
	var held [][]byte
	for {
		d, region, _, ok, err := r.tx.reserve(1000)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		b, err := r.rx.accept(d)
		if err != nil || len(region) != 1000 {
			t.Fatal(err)
		}
		held = append(held, b)
	}
	if len(held) != 4 { // 1024 bytes a region
		t.Fatalf("%d regions of 1000 bytes in 4096, want 4", len(held))
	}
	if _, _, _, ok, _ := r.tx.reserve(64); ok {
		t.Fatal("a full ring took another region")
	}
	if _, _, _, ok, _ := r.tx.reserve(4097); ok {
		t.Fatal("a region larger than the ring")
	}
	r.rx.release(held[0])
	if _, _, _, ok, _ := r.tx.reserve(1024); !ok {
		t.Fatal("no room after a release")
	}
}

func TestRingOutOfOrderRelease(t *testing.T) {
	r := newTestRing(t, 4096, 7)
	_, a := r.send(t, 100, 1) // [0, 128)
	_, b := r.send(t, 200, 2) // [128, 384)
	_, c := r.send(t, 64, 3)  // [384, 448)
	r.rx.release(b)
	r.rx.release(c)
	if got := r.publishedTail(); got != 0 {
		t.Fatalf("tail %d with the first region held, want 0", got)
	}
	if r.rx.release(b) {
		t.Fatal("a region released twice")
	}
	if r.rx.outstanding() != 1 {
		t.Fatalf("%d outstanding, want 1", r.rx.outstanding())
	}
	r.rx.release(a)
	if got := r.publishedTail(); got != 448 {
		t.Fatalf("tail %d after the first region's release, want 448 (over the contiguous prefix)", got)
	}
	if r.rx.release(make([]byte, 8)) {
		t.Fatal("released a slice that is no region")
	}
}

// A new segment has a new generation: a descriptor of the old one is refused.
func TestRingGenerationChange(t *testing.T) {
	r := newTestRing(t, 4096, 7)
	old, b := r.send(t, 100, 1)
	r.rx.release(b)
	initSegment(r.mem, 8) // the next connection's segment, over the same memory
	r2 := &testRing{mem: r.mem, seg: newShmSeg(r.mem, nil)}
	r2.tx, r2.rx = newRingTx(r2.seg, 8), newRingRx(r2.seg, 8)
	if _, err := r2.rx.accept(shmDesc{gen: old.gen, pos: 0, len: 100}); err == nil || !strings.Contains(err.Error(), "generation 7") {
		t.Fatalf("a descriptor of generation 7 on the new segment: %v", err)
	}
	if d, _ := r2.send(t, 100, 2); d.gen != 8 {
		t.Fatalf("new segment's descriptors carry generation %d", d.gen)
	}
}

func TestRingBadDescriptors(t *testing.T) {
	const capacity = 4096
	for _, tc := range []struct {
		name string
		d    func(r *testRing) shmDesc
		want string
	}{
		{"wrong generation", func(r *testRing) shmDesc { return shmDesc{gen: 6, pos: r.rx.next, len: 10} }, "generation 6"},
		{"empty", func(r *testRing) shmDesc { return shmDesc{gen: 7, pos: r.rx.next, len: 0} }, "empty"},
		{"longer than the ring", func(r *testRing) shmDesc { return shmDesc{gen: 7, pos: r.rx.next, len: capacity + 1} }, "in a ring of"},
		{"huge length", func(r *testRing) shmDesc { return shmDesc{gen: 7, pos: r.rx.next, len: 1<<64 - 1} }, "in a ring of"},
		{"overlapping the last region", func(r *testRing) shmDesc { return shmDesc{gen: 7, pos: r.rx.next - 64, len: 10} }, "must start at"},
		{"past the next region", func(r *testRing) shmDesc { return shmDesc{gen: 7, pos: r.rx.next + 64, len: 10} }, "must start at"},
		{"out of bounds", func(r *testRing) shmDesc { return shmDesc{gen: 7, pos: 1 << 62, len: 10} }, "must start at"},
		{"across the end", func(r *testRing) shmDesc {
			return shmDesc{gen: 7, pos: r.rx.next, len: capacity - r.rx.next%capacity + 8}
		}, "must start at"},
		{"overrunning the unreleased", func(r *testRing) shmDesc { return shmDesc{gen: 7, pos: capacity, len: 1000} }, "overruns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRing(t, capacity, 7)
			_, a := r.send(t, 300, 1)     // [0, 320), released
			_, held := r.send(t, 3000, 2) // [320, 3392), held
			r.rx.release(a)
			d := tc.d(r)
			if _, err := r.rx.accept(d); err == nil || !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("accept %+v: %v, want a protocol error saying %q", d, err, tc.want)
			}
			// Nothing changed: the producer's next region is still accepted.
			_, b := r.send(t, 100, 2)
			r.rx.release(held)
			r.rx.release(b)
			if r.publishedTail() != r.tx.head {
				t.Fatalf("tail %d, head %d", r.publishedTail(), r.tx.head)
			}
		})
	}
}

// A consumer's tail that no correct peer could write fails the producer's connection; it
// never makes the producer write outside its ring.
func TestRingImpossibleTail(t *testing.T) {
	r := newTestRing(t, 4096, 7)
	r.send(t, 100, 1)
	for _, tail := range []uint64{r.tx.head + 1, 1 << 40} {
		atomicAt(r.mem, shmOffTail).Store(tail)
		if _, _, _, ok, err := r.tx.reserve(100); ok || !errors.Is(err, ErrProtocol) {
			t.Fatalf("tail %d: ok=%v err=%v", tail, ok, err)
		}
	}
}

// The mapping goes only when the connection's reference and every region's are gone.
func TestRingSegmentReferences(t *testing.T) {
	r := newTestRing(t, 4096, 7)
	_, a := r.send(t, 100, 1)
	_, b := r.send(t, 100, 2)
	r.seg.release() // the connection closed
	if r.unmapped != 0 {
		t.Fatal("unmapped while the application holds regions")
	}
	if !bytes.Equal(a, bytes.Repeat([]byte{1}, 100)) {
		t.Fatal("a held region changed")
	}
	r.rx.release(b)
	if r.unmapped != 0 {
		t.Fatal("unmapped with a region held")
	}
	r.rx.release(a)
	if r.unmapped != 1 {
		t.Fatalf("unmapped %d times after the last release, want once", r.unmapped)
	}
	if _, err := r.rx.accept(shmDesc{gen: 7, pos: r.rx.next, len: 10}); err == nil {
		t.Fatal("a region accepted on an unmapped segment")
	}
	if r.seg.acquire() {
		t.Fatal("acquired an unmapped segment")
	}
}

func TestReadSegment(t *testing.T) {
	mem := testSegment(MinShmSize - shmHeaderSize)
	initSegment(mem, 42)
	if gen, err := readSegment(mem); err != nil || gen != 42 {
		t.Fatalf("readSegment: %d, %v", gen, err)
	}
	for _, tc := range []struct {
		name  string
		spoil func(m []byte)
	}{
		{"magic", func(m []byte) { m[0] = 'x' }},
		{"layout", func(m []byte) { m[8] = 9 }},
		{"header size", func(m []byte) { m[12] = 1 }},
		{"capacity", func(m []byte) { m[shmOffCap] ^= 0x40 }},
		{"generation 0", func(m []byte) { clear(m[shmOffGen : shmOffGen+8]) }},
	} {
		m := append([]byte(nil), mem...)
		tc.spoil(m)
		if _, err := readSegment(m); err == nil || !errors.Is(err, errShm) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// A producer and a consumer on two goroutines, the consumer releasing in a shuffled order:
// every body arrives intact (run with -race).
func TestRingConcurrent(t *testing.T) {
	r := newTestRing(t, 16<<10, 7)
	descs := make(chan shmDesc, 64)
	var wg sync.WaitGroup
	wg.Add(1)
	errc := make(chan error, 1)
	go func() { // the consumer: holds up to four bodies, releases the oldest-but-one first
		defer wg.Done()
		var held [][]byte
		i := 0
		for d := range descs {
			b, err := r.rx.accept(d)
			if err != nil {
				errc <- err
				return
			}
			for _, x := range b {
				if x != byte(i) {
					errc <- errors.New("a body changed under its consumer")
					return
				}
			}
			i++
			held = append(held, b)
			if len(held) == 4 {
				r.rx.release(held[1])
				r.rx.release(held[0])
				held = held[2:]
			}
		}
		for _, b := range held {
			r.rx.release(b)
		}
		errc <- nil
	}()
	for i := 0; i < 500; {
		d, region, _, ok, err := r.tx.reserve(500 + i%700)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			runtime.Gosched() // full: the consumer will release
			continue
		}
		for k := range region {
			region[k] = byte(i)
		}
		descs <- d
		i++
	}
	close(descs)
	wg.Wait()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if r.publishedTail() != r.tx.head {
		t.Fatalf("tail %d, head %d at the end", r.publishedTail(), r.tx.head)
	}
}
