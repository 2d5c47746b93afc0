package ipc

import (
	"time"
)

// copyLimit is the largest payload part a sender's frame may have copied into the output
// (a part of at most copyLimit/4 bytes is copied; larger ones are written from the
// caller's memory by writev, and their caller waits until they are out).
const copyLimit = 16 << 10

// maxAsyncBacklog bounds the bytes queued by events that must not block (the reader
// answering pings, reporting errors, handing back credit). A peer that makes the backlog
// exceed it is not reading what it asked for, and its connection is closed.
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
	async  int // bytes queued by events that must not block
	ring   int // RBATCH frames: the write is their wake-up
}

type wseg struct {
	off, end int    // arena range when ext is nil
	ext      []byte // a caller's buffer, written in place
}

func newWriteRound() *writeRound { return &writeRound{arena: make([]byte, 0, 64<<10)} }

func (r *writeRound) reset() {
	r.arena = r.arena[:0]
	r.urgent = r.urgent[:0]
	r.async, r.ring = 0, 0
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
	r.addCopied(start)
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

// vectors returns the round's bytes in order, for one writev.
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

// outQueue is a connection's output in numbered rounds: the round being filled (pend)
// takes every frame queued; a writer takes it whole, writes it, and gives it back. One
// round at most is out being written at a time (pend and spare then share the two rounds
// the queue keeps). A sender whose frame references its own memory waits until the round
// holding it is written.
//
// Invariant: written < round; rounds after written and before round are being written.
type outQueue struct {
	pend    *writeRound
	spare   *writeRound
	round   uint64 // number of the round being filled
	written uint64 // last round fully written

	bytesOut, framesOut, rounds uint64
}

func newOutQueue() outQueue {
	return outQueue{pend: newWriteRound(), spare: newWriteRound(), round: 1}
}

// frame queues one frame: a header, and a payload of parts (copied if small, referenced
// otherwise) or of small (copied). It reports whether the caller must wait for the round
// to be written because parts are referenced in place.
func (q *outQueue) frame(kind Kind, flags Flags, stream uint32, parts [][]byte, small []byte) (mustWait bool) {
	n := len(small)
	if parts != nil {
		n = 0
		for _, p := range parts {
			n += len(p)
		}
	}
	var hdr [HeaderSize]byte
	PutHeader(hdr[:], Header{Kind: kind, Flags: flags, Stream: stream, Length: uint32(n)})
	r := q.pend
	r.addCopy(hdr[:])
	if parts == nil {
		r.addCopy(small)
	} else {
		for _, p := range parts {
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

// request queues a REQUEST encoded straight into the pending round.
func (q *outQueue) request(flags Flags, stream uint32, method string, args []byte, timeout time.Duration) {
	r := q.pend
	start := len(r.arena)
	r.arena = appendRequest(append(r.arena, zeroHeader...), method, args, timeout)
	PutHeader(r.arena[start:], Header{Kind: KindRequest, Flags: flags, Stream: stream, Length: uint32(len(r.arena) - start - HeaderSize)})
	r.addCopied(start)
	r.frames++
}

// encoded queues n frames already encoded into b (copied).
func (q *outQueue) encoded(b []byte, n int) {
	q.pend.addCopy(b)
	q.pend.frames += n
}

// urgent queues a PING or PONG ahead of every frame of the pending round.
func (q *outQueue) urgent(kind Kind, payload []byte) {
	r := q.pend
	r.urgent = AppendFrame(r.urgent, kind, 0, 0, payload)
	r.bytes += HeaderSize + len(payload)
	r.frames++
}

// pending reports whether frames wait to be written.
func (q *outQueue) pending() bool { return q.pend.frames > 0 }

// take hands the pending round to a writer, with its number; nil if there is none or a
// round is already out.
func (q *outQueue) take() (*writeRound, uint64) {
	if q.pend.frames == 0 || q.spare == nil {
		return nil, 0
	}
	r := q.pend
	q.pend, q.spare = q.spare, nil
	n := q.round
	q.round++
	return r, n
}

// done takes back round r, number n, once written (or abandoned).
func (q *outQueue) done(r *writeRound, n uint64) {
	q.bytesOut += uint64(r.bytes)
	q.framesOut += uint64(r.frames)
	q.rounds++
	r.reset()
	q.spare = r
	q.written = n
}

// drop discards the pending round: a failed connection writes nothing more.
func (q *outQueue) drop() { q.pend.reset() }

// zeroHeader is the placeholder a frame's header is written over (HeaderSize bytes).
const zeroHeader = "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
