package ipc

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
)

// Many goroutines writing large frames through one frameWriter: every frame arrives whole
// and each writer's frames stay in order, whoever of them happened to write a round.
func TestFrameWriterCombinesConcurrentWriters(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	w := newFrameWriter(newSockIO(a))
	const writers, frames, size = 8, 40, 20 << 10
	got := make(chan error, 1)
	go func() {
		next := make([]uint32, writers+1)
		hdr := make([]byte, HeaderSize)
		payload := make([]byte, size)
		for range writers * frames {
			if _, err := io.ReadFull(b, hdr); err != nil {
				got <- err
				return
			}
			h, err := DecodeHeader(hdr, MaxFrameCap)
			if err != nil || h.Length != size {
				got <- err
				return
			}
			if _, err := io.ReadFull(b, payload); err != nil {
				got <- err
				return
			}
			seq := binary.LittleEndian.Uint32(payload)
			if seq != next[h.Stream] || !bytes.Equal(payload[4:8], payload[size-4:]) {
				t.Errorf("stream %d: frame %d, want %d", h.Stream, seq, next[h.Stream])
			}
			next[h.Stream]++
		}
		got <- nil
	}()
	var wg sync.WaitGroup
	for s := uint32(1); s <= writers; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, size)
			for i := range frames {
				binary.LittleEndian.PutUint32(buf, uint32(i))
				copy(buf[4:8], []byte{byte(s), byte(i), 7, 9})
				copy(buf[size-4:], buf[4:8])
				// The writer returns only once buf is out, so reusing it is safe.
				if err := w.write(&frame{kind: KindBatch, stream: s, parts: [][]byte{buf}}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.waiting) != 0 {
		t.Fatalf("%d waiters left", len(w.waiting))
	}
}
