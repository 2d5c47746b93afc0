package ipc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"
)

// rawConn is a Conn over nc past a handshake it never had (the peer takes frames of any
// size) with its background flusher and no reader: the test reads the other end itself.
func rawConn(t *testing.T, nc net.Conn) *Conn {
	t.Helper()
	lg, _ := newTestLogger()
	c := newConn(nc, false, nil, Limits{}, lg)
	c.mu.Lock()
	c.core.established(time.Now(), Hello{MaxFrame: MaxFrameCap, Window: MaxFrameCap, MaxStreams: 1 << 20})
	c.mu.Unlock()
	go c.flushLoop()
	t.Cleanup(func() { c.Close() })
	return c
}

// testWrite queues a frame referencing parts and writes it as a stream's send does,
// returning once the parts are out (credit is not the writer's business).
func (c *Conn) testWrite(kind Kind, stream uint32, parts [][]byte) error {
	var a actions
	c.mu.Lock()
	mustWait := c.core.out.frame(kind, 0, stream, parts, nil)
	err := c.sendLocked(c.core.out.round, mustWait, &a)
	c.failedLocked(&a)
	c.mu.Unlock()
	c.exec(&a)
	return err
}

// testWriteAsync queues a frame as the reader does, for the background flusher.
func (c *Conn) testWriteAsync(kind Kind, stream uint32, payload []byte) error {
	c.mu.Lock()
	err := c.core.queueAsync(kind, stream, payload)
	c.mu.Unlock()
	if err == nil {
		signal(c.w.kick)
	}
	return err
}

// Many goroutines writing large frames through one connection's writer: every frame arrives
// whole and each writer's frames stay in order, whoever of them happened to write a round.
func TestFrameWriterCombinesConcurrentWriters(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	// A writer writes its own round and at most two more, then hands what is left to the
	// background flusher, which rawConn runs: without one the test could hang with every
	// writer waiting for a round nobody writes (it did, once in a -race run).
	w := rawConn(t, a)
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
				if err := w.testWrite(KindBatch, s, [][]byte{buf}); err != nil {
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
	if len(w.w.waiting) != 0 {
		t.Fatalf("%d waiters left", len(w.w.waiting))
	}
}

// While a write is blocked, batches other goroutines queue behind it are not an async
// backlog (a PONG queued then used to close the connection as a protocol violation), and a
// PING or PONG queued after them goes out ahead of them.
func TestFrameWriterHeartbeatsOvertakeQueuedBatches(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	w := rawConn(t, a)
	big := make([]byte, maxAsyncBacklog+1)
	errc := make(chan error, 3)
	// The first batch blocks in the pipe (nobody reads yet); the second queues behind it.
	go func() { errc <- w.testWrite(KindBatch, 1, [][]byte{big}) }()
	waitFor(t, func() bool { w.mu.Lock(); defer w.mu.Unlock(); return w.w.flushing })
	go func() { errc <- w.testWrite(KindBatch, 3, [][]byte{big}) }()
	waitFor(t, func() bool { w.mu.Lock(); defer w.mu.Unlock(); return w.core.out.pend.frames == 1 })
	if err := w.testWriteAsync(KindCredit, 5, mpAppendUint(nil, 9)); err != nil {
		t.Fatalf("a credit behind queued batches: %v", err)
	}
	if err := w.testWriteAsync(KindPong, 0, mpAppendUint(nil, 7)); err != nil {
		t.Fatalf("a pong behind queued batches: %v", err)
	}
	go func() {
		var kinds []Kind
		hdr := make([]byte, HeaderSize)
		for range 4 {
			if _, err := io.ReadFull(b, hdr); err != nil {
				errc <- err
				return
			}
			h, _ := DecodeHeader(hdr, MaxFrameCap)
			kinds = append(kinds, h.Kind)
			if _, err := io.CopyN(io.Discard, b, int64(h.Length)); err != nil {
				errc <- err
				return
			}
		}
		want := []Kind{KindBatch, KindPong, KindBatch, KindCredit}
		if !slices.Equal(kinds, want) {
			errc <- fmt.Errorf("frames arrived as %v, want %v", kinds, want)
			return
		}
		errc <- nil
	}()
	for range 3 {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}
