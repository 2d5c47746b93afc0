package vec

import "testing"

// A scribbling pool fills a freed buffer's whole capacity, even when the buffer handed back
// is shorter than it (a sliced Arrow buffer): it once indexed past len and panicked.
func TestScribbleShortBuffer(t *testing.T) {
	p := NewScribblingPool(0)
	b := p.Allocate(100)[:10]
	p.Free(b)
	full := b[:cap(b)]
	for i, c := range full {
		if c != 0xA5 {
			t.Fatalf("byte %d of %d is %#x after Free, want 0xA5", i, len(full), c)
		}
	}
}
