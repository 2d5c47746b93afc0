package ipc

import (
	"errors"
	"testing"
	"unsafe"
)

// FuzzShmDescriptor feeds RBATCH payloads (a descriptor, then an Arrow message head) to a
// consumer holding one region: decoding and accepting them never panics, an accepted body
// lies inside the data area with exactly the descriptor's length and no capacity beyond
// it, its head parses or is refused cleanly, and once released the tail is where the
// producer's next region would start. The seed corpus is under testdata/fuzz.
func FuzzShmDescriptor(f *testing.F) {
	head := arrowTestMessage(arrowMsgRecordBatch, 8+32+100, false)[:40]
	for _, d := range []shmDesc{{7, 320, 100}, {6, 320, 100}, {7, 256, 100}, {7, 4096, 10}, {7, 320, 0}, {7, 320, 1 << 63}} {
		p := make([]byte, shmDescSize, shmDescSize+len(head))
		d.put(p)
		f.Add(append(p, head...))
	}
	f.Add([]byte{7, 0, 0})
	f.Fuzz(func(t *testing.T, payload []byte) {
		r := newTestRing(t, 4096, 7)
		_, held := r.send(t, 300, 1)
		d, h, err := decodeShmDesc(payload)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("decode error not a protocol error: %v", err)
			}
			return
		}
		body, err := r.rx.accept(d)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("accept error not a protocol error: %v", err)
			}
			if r.rx.outstanding() != 1 || r.rx.next != 320 {
				t.Fatalf("a refused descriptor changed the ring: %d outstanding, next %d", r.rx.outstanding(), r.rx.next)
			}
			return
		}
		data := uintptr(unsafe.Pointer(&r.mem[shmHeaderSize]))
		at := uintptr(unsafe.Pointer(unsafe.SliceData(body)))
		if uint64(len(body)) != d.len || cap(body) != len(body) || at < data || at+uintptr(len(body)) > data+4096 {
			t.Fatalf("accepted %+v as %d bytes (cap %d) at offset %d of a 4096-byte ring", d, len(body), cap(body), at-data)
		}
		if _, _, err := parseArrowHead(h, len(body)); err != nil && !errors.Is(err, ErrProtocol) {
			t.Fatalf("head error not a protocol error: %v", err)
		}
		r.rx.release(held)
		if !r.rx.release(body) || r.publishedTail() != r.rx.next {
			t.Fatalf("after the releases: tail %d, next %d", r.publishedTail(), r.rx.next)
		}
	})
}
