package ipc

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// copyLimit is the largest payload part a writer copies into its arena; larger parts are
// written from the caller's memory by writev, and their caller waits until they are out.
const copyLimit = 16 << 10

// maxAsyncBacklog bounds the bytes queued by goroutines that must not block (the reader
// answering pings, reporting errors). A peer that makes the backlog exceed it is not
// reading what it asked for, and its connection is closed.
const maxAsyncBacklog = 4 << 20

// writeRound is a set of frames written together: small frames and headers copied into
// arena, large parts referenced in place. Urgent frames (PING, PONG: stream 0, so they may
// overtake the other streams' frames) are copied into urgent and go out first.
type writeRound struct {
	arena  []byte
	segs   []wseg
	urgent []byte
	iov    [][]byte
	bytes  int
	frames int
	async  int // bytes queued by writeAsync
}

type wseg struct {
	off, end int    // arena range when ext is nil
	ext      []byte // a caller's buffer, written in place
}

func (r *writeRound) reset() {
	r.arena = r.arena[:0]
	r.urgent = r.urgent[:0]
	r.async = 0
	for i := range r.segs {
		r.segs[i].ext = nil
	}
	r.segs = r.segs[:0]
	for i := range r.iov {
		r.iov[i] = nil
	}
	r.iov = r.iov[:0]
	r.bytes, r.frames = 0, 0
}

// addCopy copies p into the arena, extending the last arena segment when contiguous.
func (r *writeRound) addCopy(p []byte) {
	start := len(r.arena)
	r.arena = append(r.arena, p...)
	if n := len(r.segs); n > 0 && r.segs[n-1].ext == nil && r.segs[n-1].end == start {
		r.segs[n-1].end = len(r.arena)
	} else {
		r.segs = append(r.segs, wseg{off: start, end: len(r.arena)})
	}
	r.bytes += len(p)
}

// addCopied accounts for bytes appended to the arena from start on by the caller.
func (r *writeRound) addCopied(start int) {
	if n := len(r.segs); n > 0 && r.segs[n-1].ext == nil && r.segs[n-1].end == start {
		r.segs[n-1].end = len(r.arena)
	} else {
		r.segs = append(r.segs, wseg{off: start, end: len(r.arena)})
	}
	r.bytes += len(r.arena) - start
}

func (r *writeRound) addExt(p []byte) {
	if len(p) == 0 {
		return
	}
	r.segs = append(r.segs, wseg{ext: p})
	r.bytes += len(p)
}

func (r *writeRound) vectors() [][]byte {
	if len(r.urgent) > 0 {
		r.iov = append(r.iov, r.urgent)
	}
	for _, s := range r.segs {
		if s.ext != nil {
			r.iov = append(r.iov, s.ext)
		} else {
			r.iov = append(r.iov, r.arena[s.off:s.end])
		}
	}
	return r.iov
}

// frameWriter serialises a connection's outgoing frames with flat combining: a goroutine
// that queues frames while nobody is writing becomes the writer and writes everything
// queued, its own and others', in one writev per round; goroutines that queue while a write
// is in progress leave their frames to that writer. Uncontended, a frame costs one syscall
// in the caller's goroutine; contended, many frames share one. Goroutines that must never
// block on the socket (the reader) queue asynchronously and wake a background flusher.
type frameWriter struct {
	io *sockIO

	mu       sync.Mutex
	pend     *writeRound
	spare    *writeRound
	round    uint64 // number of the round being filled
	written  uint64 // last round fully written
	flushing bool
	// waiting are the goroutines waiting for their round to be written, in round order;
	// each is woken once, when its round is out or the writer fails (not all of them on
	// every round: many streams sending on one connection would be woken for nothing).
	waiting []roundWaiter
	sigFree []chan struct{} // recycled wake channels
	err     error
	kick    chan struct{} // wakes flushLoop

	// counters, guarded by mu
	bytesOut, framesOut, rounds uint64

	lastWrite atomic.Int64 // unix nanos of the last write that moved bytes
}

func newFrameWriter(sio *sockIO) *frameWriter {
	w := &frameWriter{
		io:    sio,
		pend:  &writeRound{arena: make([]byte, 0, 64<<10)},
		spare: &writeRound{arena: make([]byte, 0, 64<<10)},
		round: 1,
		kick:  make(chan struct{}, 1),
	}
	return w
}

type roundWaiter struct {
	round uint64
	sig   chan struct{}
}

// wakeLocked wakes the waiters whose rounds are written (all of them once the writer has
// failed).
func (w *frameWriter) wakeLocked() {
	n := 0
	for _, wt := range w.waiting {
		if wt.round > w.written && w.err == nil {
			break
		}
		wt.sig <- struct{}{} // buffered, and each waiter is woken once
		n++
	}
	if n > 0 {
		m := copy(w.waiting, w.waiting[n:])
		clear(w.waiting[m:])
		w.waiting = w.waiting[:m]
	}
}

// frame describes one outgoing frame: a header and up to a few payload parts.
type frame struct {
	kind   Kind
	flags  Flags
	stream uint32
	parts  [][]byte // payload parts in order
	small  []byte   // a single small payload (used when parts is nil)
}

func (f *frame) length() int {
	if f.parts == nil {
		return len(f.small)
	}
	n := 0
	for _, p := range f.parts {
		n += len(p)
	}
	return n
}

// enqueueLocked appends f to the pending round and reports whether the caller must wait for
// the round to be written (because parts are referenced in place).
func (w *frameWriter) enqueueLocked(f *frame) (mustWait bool) {
	var hdr [HeaderSize]byte
	PutHeader(hdr[:], Header{Kind: f.kind, Flags: f.flags, Stream: f.stream, Length: uint32(f.length())})
	r := w.pend
	r.addCopy(hdr[:])
	if f.parts == nil {
		r.addCopy(f.small)
	} else {
		for _, p := range f.parts {
			if len(p) <= copyLimit/4 {
				r.addCopy(p)
			} else {
				r.addExt(p)
				mustWait = true
			}
		}
	}
	r.frames++
	return mustWait
}

// write sends f. It returns once f is written if f references caller memory, or as soon as f
// is queued behind a write in progress otherwise (a later write error then fails the
// connection, and with it every stream).
func (w *frameWriter) write(f *frame) error {
	_, err := w.send(f)
	return err
}

// send is write that also reports whether f was queued: if not, no byte of it can have
// reached the peer; if so, it may have even when err is set.
func (w *frameWriter) send(f *frame) (queued bool, err error) {
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return false, err
	}
	mustWait := w.enqueueLocked(f)
	mine := w.round
	if !w.flushing {
		w.flushLocked(mine)
	} else if mustWait {
		var sig chan struct{}
		if n := len(w.sigFree); n > 0 {
			sig = w.sigFree[n-1]
			w.sigFree = w.sigFree[:n-1]
		} else {
			sig = make(chan struct{}, 1)
		}
		w.waiting = append(w.waiting, roundWaiter{round: mine, sig: sig})
		w.mu.Unlock()
		<-sig
		w.mu.Lock()
		w.sigFree = append(w.sigFree, sig)
	}
	err = w.err
	w.mu.Unlock()
	return true, err
}

// enqueueWith queues f without writing it (the caller must call flushQueued afterwards),
// after running pre under the writer's lock: pre returns
// f's stream id and may record state that must be ordered with the frame's place in the output
// (stream ids reach the peer in the order they were allocated). If pre fails, nothing is
// queued. f must not reference caller memory beyond copyLimit/4 per part.
func (w *frameWriter) enqueueWith(f *frame, pre func() (stream uint32, err error)) (uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	id, err := pre()
	if err != nil {
		return 0, err
	}
	f.stream = id
	w.enqueueLocked(f)
	return w.round, nil
}

// enqueueRequest queues a REQUEST frame encoded straight into the pending round, after pre
// (as for enqueueWith) has given it its stream id.
func (w *frameWriter) enqueueRequest(flags Flags, method string, args []byte, timeout time.Duration, pre func() (stream uint32, err error)) (stream uint32, round uint64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, 0, w.err
	}
	if stream, err = pre(); err != nil {
		return 0, 0, err
	}
	r := w.pend
	start := len(r.arena)
	r.arena = appendRequest(append(r.arena, zeroHeader...), method, args, timeout)
	PutHeader(r.arena[start:], Header{Kind: KindRequest, Flags: flags, Stream: stream, Length: uint32(len(r.arena) - start - HeaderSize)})
	r.addCopied(start)
	r.frames++
	return stream, w.round, nil
}

// writeEncoded queues frames already encoded into b (n of them) and writes them now unless a
// write is in progress, whose writer then takes them. b is copied.
func (w *frameWriter) writeEncoded(b []byte, n int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.pend.addCopy(b)
	w.pend.frames += n
	if !w.flushing {
		w.flushLocked(w.round)
	}
	return w.err
}

// flushQueued makes sure the round holding a frame queued by enqueue gets written: now by
// this goroutine if nobody is writing, else by the writer in progress.
func (w *frameWriter) flushQueued(round uint64) error {
	w.mu.Lock()
	if !w.flushing && w.written < round && w.err == nil {
		w.flushLocked(round)
	}
	err := w.err
	w.mu.Unlock()
	return err
}

// writeAsync queues f without ever blocking on the socket; f must not reference caller
// memory (its payload is copied). PING and PONG go ahead of every frame not yet being
// written, so a heartbeat is never queued behind other streams' batches.
func (w *frameWriter) writeAsync(f *frame) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	// Only what asynchronous writers queued counts: batches that other goroutines queued
	// behind a slow write are bounded by flow control and are not a peer's doing.
	if w.pend.async > maxAsyncBacklog {
		return fmt.Errorf("%w: %d bytes of replies queued: the peer is not reading", ErrProtocol, w.pend.async)
	}
	f.parts = nil
	n := w.pend.bytes
	if f.kind == KindPing && len(w.pend.urgent) > 0 {
		return nil // a heartbeat still waiting to go out says the same
	}
	if f.kind == KindPing || f.kind == KindPong {
		r := w.pend
		r.urgent = AppendFrame(r.urgent, f.kind, f.flags, f.stream, f.small)
		r.bytes += HeaderSize + len(f.small)
		r.frames++
	} else {
		w.enqueueLocked(f)
	}
	w.pend.async += w.pend.bytes - n
	if !w.flushing {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

// flushLocked writes pending rounds until round mine is written (and at most a few rounds
// more, so a caller does not end up writing for everyone forever); what remains is handed
// to the background flusher. Called with mu held and flushing false.
func (w *frameWriter) flushLocked(mine uint64) {
	w.flushing = true
	for extra := 0; w.pend.frames > 0 && w.err == nil && (w.written < mine || extra < 2); extra++ {
		r := w.pend
		w.pend, w.spare = w.spare, nil
		n := w.round
		w.round++
		w.mu.Unlock()
		moved, err := w.io.Writev(r.vectors())
		if moved > 0 {
			w.lastWrite.Store(time.Now().UnixNano())
		}
		w.mu.Lock()
		w.bytesOut += uint64(r.bytes)
		w.framesOut += uint64(r.frames)
		w.rounds++
		r.reset()
		w.spare = r
		w.written = n
		if err != nil {
			w.err = fmt.Errorf("%w: write: %w", ErrConnClosed, err)
		}
		if len(w.waiting) > 0 {
			w.wakeLocked()
		}
	}
	w.flushing = false
	if w.pend.frames > 0 && w.err == nil {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}

// flushLoop is the background flusher: it writes what asynchronous callers queued and what a
// combining writer left. It returns when done is closed.
func (w *frameWriter) flushLoop(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-w.kick:
		}
		w.mu.Lock()
		if !w.flushing && w.pend.frames > 0 && w.err == nil {
			w.flushLocked(w.round)
		}
		w.mu.Unlock()
	}
}

// fail makes every later write return err and wakes waiters.
func (w *frameWriter) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.wakeLocked()
	w.mu.Unlock()
}

func (w *frameWriter) counters() (bytes, frames, rounds uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bytesOut, w.framesOut, w.rounds
}
