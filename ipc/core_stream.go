package ipc

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// coreStream is one stream's protocol state (PROTOCOL.md, "Streams"): its two halves, the
// credit each side may still use, the data frames received and not yet consumed.
//
// Invariants (while err is unset and the peer's half is open):
//   - recvAvail + queued + ungranted = the window this side announced + every grant since
//     − every grant made; that is, recvAvail is the credit the peer believes it has once
//     the grants in flight arrive, minus those in flight;
//   - recvAvail ≥ −(largest frame received) and sendAvail ≥ −(largest frame sent): a data
//     frame of n bytes is sent only with min(n, window) bytes of credit;
//   - a stream is in the core's table until it is retired (completed for this side:
//     canceled, failed, ended by the server's END or ERROR on a client, the handler's
//     end on a server); a retired stream is never woken again except by its own Close.
type coreStream struct {
	id       uint32
	isClient bool
	method   string
	// h is the loop's Stream: set before the lock the stream was made under is released,
	// never changed, never used by the core.
	h *Stream
	// countsData: the stream can receive data and counts against Limits.DataStreams until
	// it is released (Close on a client, the handler's end on a server).
	countsData bool

	// The receive half.
	inq       []rxFrame
	inHead    int
	queued    int64 // bytes in inq[inHead:]
	gotSchema bool
	remoteFin bool   // the peer's half is complete (END, FIN, ERROR or CANCEL received)
	remoteEnd []byte // the peer's END payload
	remoteErr error  // the peer's ERROR
	recvAvail int64  // credit the peer may still use, as this side counts it
	ungranted int64  // bytes consumed since the last grant
	grantAt   time.Time
	noGrants  bool // released: it grants nothing more

	// The send half.
	sendAvail int64 // credit this side may still use
	localFin  bool  // this side's half is complete (END, FIN, ERROR or CANCEL sent)
	stallFrom time.Time

	err     error // local failure or cancellation; wins over queued data
	retired bool

	bytesIn, bytesOut, framesIn, framesOut, batchesIn, batchesOut, creditWaits uint64
	stall                                                                      time.Duration
}

// rxFrame is a received data frame waiting for the application: an Arrow message of size
// bytes (the credit it took), its metadata at owned[metaOff+8:][:metaLen] and its body
// after it, or, for an RBATCH, in body (a ring region, metaOff the descriptor's size).
type rxFrame struct {
	kind    Kind
	owned   []byte
	size    int64
	metaLen int
	metaOff int
	body    []byte
}

// errWouldBlock: the stream has nothing to consume yet.
var errWouldBlock = errors.New("ipc: nothing to consume")

func (c *core) newStream(id uint32, method string) *coreStream {
	return &coreStream{id: id, isClient: c.cfg.isClient, method: method,
		recvAvail: int64(c.lim.StreamWindow), sendAvail: int64(c.peer.Window)}
}

// lookup returns the live stream id, or nil; late reports that id was used before and has
// been retired, so frames for it are stale rather than illegal.
func (c *core) lookup(id uint32) (cs *coreStream, late bool) {
	cs = c.streams[id]
	return cs, cs == nil && id <= c.lastID
}

func (c *core) retire(cs *coreStream) {
	if !cs.retired {
		cs.retired = true
		if c.streams[cs.id] == cs {
			delete(c.streams, cs.id)
		}
	}
}

// freeQueue gives back the stream's unconsumed frames.
func (c *core) freeQueue(cs *coreStream) {
	for i := cs.inHead; i < len(cs.inq); i++ {
		c.freeData(cs.inq[i].owned, cs.inq[i].body)
	}
	clear(cs.inq)
	cs.inq, cs.inHead, cs.queued = nil, 0, 0
}

// freeData gives back a data frame's buffer and, for an RBATCH, its ring region.
func (c *core) freeData(owned, body []byte) {
	if owned != nil {
		c.cfg.pool.Put(owned)
	}
	if body != nil {
		c.ring.release(body)
	}
}

// dataSize is the credit a data frame takes: its payload, or for an RBATCH the Arrow
// message it stands for (its head, after the descriptor, and the body in the ring), so
// that a batch costs the same credit whichever way it travels.
func dataSize(f inFrame) int64 {
	if f.h.Kind == KindRingBatch {
		return int64(len(f.payload)) - shmDescSize + int64(len(f.body))
	}
	return int64(f.h.Length)
}

// acceptRing checks an RBATCH's descriptor against the ring and takes its region into
// f.body. Every RBATCH is accepted in order, whatever its stream's state, so that the
// ring's accounting follows the producer's; a frame then dropped gives the region back.
func (c *core) acceptRing(f *inFrame) error {
	if c.ring == nil {
		return fmt.Errorf("%w: RBATCH on stream %d of a connection without shared memory", ErrProtocol, f.h.Stream)
	}
	d, _, err := decodeShmDesc(f.payload)
	if err == nil {
		f.body, err = c.ring.accept(d)
	}
	if err != nil {
		return fmt.Errorf("stream %d: %w", f.h.Stream, err)
	}
	return nil
}

// ---- frames in ---------------------------------------------------------------------------

// dispatch applies one frame received on an open connection. It owns f.owned: data
// frames keep it (queued for their stream) and the others give it back (a call's END
// passes it on to its callResult). An error is the peer's protocol violation.
//
// dispatch is the entry another transport's loop feeds frames through (see the package
// comment): f's payload may live anywhere as long as owned is the pool's buffer holding
// it, or nil when the payload is only valid during the event.
func (c *core) dispatch(now time.Time, f inFrame, a *actions) error {
	h := f.h
	if h.Kind == KindRingBatch {
		if err := c.acceptRing(&f); err != nil {
			c.cfg.pool.Put(f.owned)
			return err
		}
	}
	owned := f.owned
	if owned != nil && !h.Kind.isData() {
		defer func() {
			if owned != nil {
				c.cfg.pool.Put(owned)
			}
		}()
	}
	switch h.Kind {
	case KindPing:
		nonce, err := decodeUintPayload(h.Kind, f.payload)
		if err != nil {
			return err
		}
		var buf [16]byte
		if err := c.queueAsync(KindPong, 0, mpAppendUint(buf[:0], nonce)); err != nil {
			return err
		}
		a.flush = true
		return nil
	case KindPong:
		nonce, err := decodeUintPayload(h.Kind, f.payload)
		if err != nil {
			return err
		}
		c.pongsIn++
		if rtt := now.UnixNano() - int64(nonce); rtt >= 0 {
			c.rtt = time.Duration(rtt)
		}
		if !c.stalledAt.IsZero() && int64(nonce) >= c.stalledAt.UnixNano() {
			c.stalledAt = time.Time{} // the peer answered since the stall: it kept the connection
		}
		return nil
	case KindHello:
		return fmt.Errorf("%w: HELLO after the handshake", ErrProtocol)
	case KindRequest:
		return c.onRequest(f, a)
	case KindError:
		e, err := decodeErrorPayload(f.payload)
		if err != nil {
			return err
		}
		if done := c.takeCall(h.Stream); done != nil {
			a.calls = append(a.calls, callResult{id: h.Stream, done: done, err: e})
			return nil
		}
		if h.Stream == 0 {
			c.fail(now, fmt.Errorf("%w: peer closed it: %w", ErrConnClosed, e), nil, 0, a)
			return nil
		}
		if cs, late := c.lookup(h.Stream); cs != nil {
			c.onRemoteEnd(cs, nil, e, a)
		} else if !late {
			return fmt.Errorf("%w: ERROR for stream %d, which was never opened", ErrProtocol, h.Stream)
		}
		return nil
	}

	if h.Kind == KindEnd {
		if done := c.takeCall(h.Stream); done != nil {
			if err := mpValidMap(f.payload); err != nil {
				return fmt.Errorf("%w: END payload on stream %d: %w", ErrProtocol, h.Stream, err)
			}
			a.calls = append(a.calls, callResult{id: h.Stream, done: done, end: f.payload, owned: owned})
			owned = nil // the callResult gives it back
			return nil
		}
	}
	cs, late := c.lookup(h.Stream)
	if cs == nil {
		if h.Kind.isData() {
			c.freeData(owned, f.body)
		}
		if c.cfg.isClient && c.calls.has(h.Stream) {
			switch h.Kind {
			case KindSchema, KindBatch, KindRingBatch:
				// A unary call discards the server's batches; handing their credit straight
				// back keeps a server that streams on it from stalling.
				c.lateFrames++
				var buf [16]byte
				if err := c.queueAsync(KindCredit, h.Stream, mpAppendUint(buf[:0], uint64(max(dataSize(f), 1)))); err != nil {
					return err
				}
				a.flush = true
				return nil
			case KindCancel:
				reason, err := decodeCancelPayload(f.payload)
				if err != nil {
					return err
				}
				if done := c.takeCall(h.Stream); done != nil {
					a.calls = append(a.calls, callResult{id: h.Stream, done: done, err: fmt.Errorf("call %d: %w: %s", h.Stream, ErrRemoteCanceled, reason)})
				}
				return nil
			}
		}
		if late {
			c.lateFrames++
			if h.Kind.isData() || h.Kind == KindEnd || h.Kind == KindCredit || h.Kind == KindCancel {
				return nil
			}
		}
		return fmt.Errorf("%w: %v frame for stream %d, which was never opened", ErrProtocol, h.Kind, h.Stream)
	}
	switch h.Kind {
	case KindSchema, KindBatch, KindRingBatch:
		a.data = true
		return c.onData(cs, f, a)
	case KindEnd:
		if err := mpValidMap(f.payload); err != nil {
			return fmt.Errorf("%w: END payload on stream %d: %w", ErrProtocol, h.Stream, err)
		}
		c.onRemoteEnd(cs, append([]byte(nil), f.payload...), nil, a)
		return nil
	case KindCredit:
		n, err := decodeUintPayload(h.Kind, f.payload)
		if err != nil {
			return err
		}
		if n == 0 || n > MaxFrameCap {
			return fmt.Errorf("%w: CREDIT of %d bytes on stream %d", ErrProtocol, n, h.Stream)
		}
		cs.sendAvail += int64(n)
		a.wake = append(a.wake, wakeup{cs: cs, send: true})
		return nil
	case KindCancel:
		reason, err := decodeCancelPayload(f.payload)
		if err != nil {
			return err
		}
		c.onRemoteCancel(cs, reason, a)
		return nil
	}
	return fmt.Errorf("%w: unexpected %v frame", ErrProtocol, h.Kind)
}

func (c *core) takeCall(id uint32) CallDone {
	if !c.cfg.isClient {
		return nil
	}
	return c.calls.take(id)
}

// onRequest opens a stream for the peer's REQUEST (a server's), or hands a unary one to
// the reading goroutine.
func (c *core) onRequest(f inFrame, a *actions) error {
	h := f.h
	if c.cfg.isClient {
		return fmt.Errorf("%w: a server may not open streams (REQUEST on stream %d)", ErrProtocol, h.Stream)
	}
	q, err := decodeRequestRaw(f.payload)
	if err != nil {
		return fmt.Errorf("stream %d: %w", h.Stream, err)
	}
	if h.Stream <= c.lastID {
		return fmt.Errorf("%w: REQUEST reuses stream id %d (last opened %d)", ErrProtocol, h.Stream, c.lastID)
	}
	c.lastID = h.Stream
	fin := h.Flags&FlagFin != 0
	if c.cfg.unaryFor != nil {
		if u := c.cfg.unaryFor(q.method, fin); u != nil {
			// Inline: no stream is registered, so frames the client may still send for this
			// id (a CANCEL racing the reply) are dropped as late.
			c.opened++
			a.inline = append(a.inline, inlineReq{id: h.Stream, method: q.method, args: q.args, handler: u})
			return nil
		}
	}
	if len(c.streams) >= c.lim.MaxStreams {
		var buf [128]byte
		msg := fmt.Sprintf("connection has %d streams open, the limit", c.lim.MaxStreams)
		return c.refuseStream(h.Stream, appendErrorPayload(buf[:0], CodeTooManyStreams, msg), a)
	}
	uploads := !fin
	if uploads && c.dataStreams >= c.lim.DataStreams() {
		var buf [256]byte
		msg := fmt.Sprintf("connection has %d streams open that may upload batches, the limit (MaxConnBuffer %d / window %d); send requests without uploads with FIN", c.dataStreams, c.lim.MaxConnBuffer, c.lim.StreamWindow)
		return c.refuseStream(h.Stream, appendErrorPayload(buf[:0], CodeTooManyStreams, msg), a)
	}
	cs := c.newStream(h.Stream, string(q.method))
	cs.remoteFin = fin
	cs.countsData = uploads
	if uploads {
		c.dataStreams++
	}
	c.streams[h.Stream] = cs
	c.opened++
	a.accept = append(a.accept, acceptReq{cs: cs, args: append([]byte(nil), q.args...), timeout: q.Timeout, fin: fin})
	return nil
}

func (c *core) refuseStream(id uint32, payload []byte, a *actions) error {
	if err := c.queueAsync(KindError, id, payload); err != nil {
		return err
	}
	a.flush = true
	return nil
}

// onData queues a SCHEMA, BATCH or RBATCH frame for its stream; it takes f.owned (and
// f.body).
func (c *core) onData(cs *coreStream, f inFrame, a *actions) error {
	var info arrowMsgInfo
	var meta []byte
	var err error
	metaOff := 0
	if f.h.Kind == KindRingBatch {
		metaOff = shmDescSize
		info, meta, err = parseArrowHead(f.payload[shmDescSize:], len(f.body))
	} else {
		info, meta, _, err = parseArrowMessage(f.payload)
	}
	if err == nil {
		err = checkArrowKind(f.h.Kind, info)
	}
	if err != nil {
		c.freeData(f.owned, f.body)
		return fmt.Errorf("stream %d: %w", cs.id, err)
	}
	n := dataSize(f)
	c.maxDataFrame = max(c.maxDataFrame, n)
	switch {
	case cs.remoteFin:
		err = fmt.Errorf("%w: %v frame on stream %d after the peer's END", ErrProtocol, f.h.Kind, cs.id)
	case f.h.Kind == KindSchema && cs.gotSchema:
		err = fmt.Errorf("%w: second SCHEMA on stream %d", ErrProtocol, cs.id)
	case f.h.Kind != KindSchema && !cs.gotSchema:
		err = fmt.Errorf("%w: %v before SCHEMA on stream %d", ErrProtocol, f.h.Kind, cs.id)
	case cs.recvAvail < min(n, int64(c.lim.StreamWindow)):
		err = fmt.Errorf("%w: peer sent %d bytes on stream %d with only %d bytes of credit", ErrProtocol, n, cs.id, cs.recvAvail)
	}
	if err != nil {
		c.freeData(f.owned, f.body)
		return err
	}
	cs.gotSchema = true
	cs.recvAvail -= n
	if f.body != nil {
		c.ringBytesIn += uint64(len(f.body))
		c.ringBatchesIn++
	}
	if cs.err != nil { // canceled locally, not yet retired: drop
		c.freeData(f.owned, f.body)
		return nil
	}
	cs.inq = append(cs.inq, rxFrame{kind: f.h.Kind, owned: f.owned, size: n, metaLen: len(meta), metaOff: metaOff, body: f.body})
	cs.queued += n
	cs.bytesIn += uint64(n) + HeaderSize
	cs.framesIn++
	if f.h.Kind != KindSchema {
		cs.batchesIn++
		c.batchesIn++
	}
	a.wake = append(a.wake, wakeup{cs: cs, recv: true})
	return nil
}

func (c *core) onRemoteEnd(cs *coreStream, payload []byte, rerr error, a *actions) {
	if cs.remoteFin {
		c.lateFrames++ // a second end: ignore it (ERROR after CANCEL races are legal)
		return
	}
	cs.remoteFin = true
	cs.remoteEnd = payload
	cs.remoteErr = rerr
	if cs.isClient {
		c.retire(cs) // the server's END or ERROR completes the stream
	}
	a.wake = append(a.wake, wakeup{cs: cs, recv: true, send: true})
}

func (c *core) onRemoteCancel(cs *coreStream, reason string, a *actions) {
	if cs.err == nil {
		cs.err = fmt.Errorf("stream %d (%s): %w: %s", cs.id, cs.method, ErrRemoteCanceled, reason)
	}
	cs.remoteFin, cs.localFin = true, true
	c.freeQueue(cs)
	c.retire(cs)
	a.wake = append(a.wake, wakeup{cs: cs, recv: true, send: true, cancel: cs.err})
}

// failStream fails a stream because its connection ended.
func (c *core) failStream(cs *coreStream, err error, a *actions) {
	if cs.err == nil {
		cs.err = fmt.Errorf("stream %d (%s) to %s: %w", cs.id, cs.method, c.cfg.remote, err)
	}
	c.freeQueue(cs)
	cs.retired = true
	cs.grantAt = time.Time{}
	a.wake = append(a.wake, wakeup{cs: cs, recv: true, send: true, cancel: cs.err})
}

// ---- opening -----------------------------------------------------------------------------

// allocID gives the next stream id.
func (c *core) allocID() (uint32, error) {
	if c.lastID == 1<<32-1 {
		return 0, fmt.Errorf("%w: stream ids exhausted", ErrConnClosed)
	}
	c.lastID++
	return c.lastID, nil
}

// open starts a client stream calling method: its REQUEST is queued (FIN with fin: the
// client sends nothing more on it) and the round holding it returned.
func (c *core) open(method string, args []byte, timeout time.Duration, fin bool) (*coreStream, uint64, error) {
	if err := c.notOpen(); err != nil {
		return nil, 0, err
	}
	if len(c.streams) >= int(c.peer.MaxStreams) {
		return nil, 0, &RemoteError{Code: CodeTooManyStreams, Message: fmt.Sprintf("%d streams open on the connection, the peer's limit", len(c.streams))}
	}
	if c.dataStreams >= c.lim.DataStreams() {
		return nil, 0, fmt.Errorf("%w: %d streams open on the connection to %s, the limit of Limits.MaxConnBuffer (%d) / StreamWindow (%d); close finished streams or raise MaxConnBuffer", ErrTooManyStreams, c.dataStreams, c.cfg.remote, c.lim.MaxConnBuffer, c.lim.StreamWindow)
	}
	id, err := c.allocID()
	if err != nil {
		return nil, 0, err
	}
	var flags Flags
	if fin {
		flags = FlagFin
	}
	c.out.request(flags, id, method, args, timeout)
	cs := c.newStream(id, method)
	cs.localFin = fin
	cs.countsData = true
	c.dataStreams++
	c.streams[id] = cs
	c.opened++
	return cs, c.out.round, nil
}

// call starts a unary call: a REQUEST with FIN, done to be called with the reply. first
// reports that no other call was pending.
func (c *core) call(method string, args []byte, timeout time.Duration, done CallDone) (id uint32, round uint64, first bool, err error) {
	if err := c.notOpen(); err != nil {
		return 0, 0, false, err
	}
	if len(c.streams)+c.calls.pending >= int(c.peer.MaxStreams) {
		return 0, 0, false, &RemoteError{Code: CodeTooManyStreams, Message: "the peer's stream limit is reached"}
	}
	if id, err = c.allocID(); err != nil {
		return 0, 0, false, err
	}
	first = c.calls.add(id, done)
	c.out.request(FlagFin, id, method, args, timeout)
	c.opened++
	return id, c.out.round, first, nil
}

// cancelCall abandons a pending call (its caller gave up): the server is sent a CANCEL.
// It reports whether the call was still pending; if not, its callback has run or will.
func (c *core) cancelCall(id uint32, reason string) (pending, flush bool) {
	if c.calls.take(id) == nil {
		return false, false
	}
	var buf [256]byte
	return true, c.queueAsync(KindCancel, id, appendCancelPayload(buf[:0], reason)) == nil
}

// ---- sending -----------------------------------------------------------------------------

func (c *core) sendStateErr(cs *coreStream) error {
	switch {
	case cs.err != nil:
		return cs.err
	case cs.localFin:
		return fmt.Errorf("stream %d: %w: this side already ended it", cs.id, ErrStreamClosed)
	case cs.isClient && cs.remoteFin && cs.remoteErr != nil:
		return fmt.Errorf("stream %d: %w: the server ended it: %w", cs.id, ErrStreamClosed, cs.remoteErr)
	case cs.isClient && cs.remoteFin:
		return fmt.Errorf("stream %d: %w: the server ended it", cs.id, ErrStreamClosed)
	}
	return c.notOpen()
}

// notOpen is the error of an operation that needs an open connection: why it failed, or
// that its handshake has not completed.
func (c *core) notOpen() error {
	switch c.phase {
	case phaseOpen:
		return nil
	case phaseFailed:
		return c.err
	}
	return errors.New("ipc: the connection's handshake has not completed")
}

// sendReady reports whether a sender waiting to send n bytes on cs must look again: the
// credit is there, or the stream can send nothing any more.
func (c *core) sendReady(cs *coreStream, n int) bool {
	return cs.sendAvail >= min(int64(n), int64(c.peer.Window)) || c.sendStateErr(cs) != nil
}

// sendData queues one SCHEMA or BATCH frame of n payload bytes made of parts, if the
// stream's credit allows (at least min(n, window)): ok false means wait for credit (the
// wait is counted from the first refusal to the send). mustWait: parts are referenced in
// place, so the caller must wait until round is written.
func (c *core) sendData(now time.Time, cs *coreStream, kind Kind, parts [][]byte, n int) (round uint64, mustWait, ok bool, err error) {
	if ok, err = c.sendCheck(now, cs, n); !ok {
		return 0, false, false, err
	}
	mustWait = c.out.frame(kind, 0, cs.id, parts, nil)
	c.sentData(cs, kind, n)
	return c.out.round, mustWait, true, nil
}

// sendRingData queues an RBATCH for a batch whose body is in the ring region d describes:
// the descriptor, then head (the Arrow message's prefix and metadata). n is the Arrow
// message's whole size, body included: the credit it takes, as on the socket.
func (c *core) sendRingData(now time.Time, cs *coreStream, d shmDesc, head [][]byte, n int) (round uint64, mustWait, ok bool, err error) {
	if ok, err = c.sendCheck(now, cs, n); !ok {
		return 0, false, false, err
	}
	var desc [shmDescSize]byte
	d.put(desc[:])
	var pa [4][]byte
	parts := append(append(pa[:0], desc[:]), head...)
	mustWait = c.out.frame(KindRingBatch, 0, cs.id, parts, nil)
	c.out.pend.ring++
	c.sentData(cs, KindRingBatch, n)
	c.ringBytesOut += d.len
	c.ringBatchesOut++
	return c.out.round, mustWait, true, nil
}

// sendCheck reports whether a data frame of n bytes may be sent on cs now: the stream can
// send (err otherwise) and has the credit (else the wait for it is counted from now).
func (c *core) sendCheck(now time.Time, cs *coreStream, n int) (bool, error) {
	now = c.clock(now)
	if n > int(c.peer.MaxFrame) {
		return false, fmt.Errorf("stream %d: %w: %d bytes, peer accepts %d; send smaller batches", cs.id, ErrFrameTooLarge, n, c.peer.MaxFrame)
	}
	if err := c.sendStateErr(cs); err != nil {
		c.endStall(now, cs)
		return false, err
	}
	if cs.sendAvail < min(int64(n), int64(c.peer.Window)) {
		if cs.stallFrom.IsZero() {
			cs.stallFrom = now
			cs.creditWaits++
			c.creditWaits++
		}
		return false, nil
	}
	c.endStall(now, cs)
	return true, nil
}

// sentData counts a data frame of n bytes queued on cs.
func (c *core) sentData(cs *coreStream, kind Kind, n int) {
	cs.sendAvail -= int64(n)
	cs.bytesOut += uint64(n) + HeaderSize
	cs.framesOut++
	if kind != KindSchema {
		cs.batchesOut++
		c.batchesOut++
	}
}

// endStall ends a wait for credit, counting its time.
func (c *core) endStall(now time.Time, cs *coreStream) {
	if !cs.stallFrom.IsZero() {
		d := c.clock(now).Sub(cs.stallFrom)
		cs.stall += d
		c.creditStall += d
		cs.stallFrom = time.Time{}
	}
}

// closeSend ends this side's half with an END of payload end (a msgpack map). On a server
// it completes the stream. notSent reports that nothing was queued: the peer cannot see
// the END.
func (c *core) closeSend(cs *coreStream, end []byte) (round uint64, mustWait bool, err error) {
	if err := c.sendStateErr(cs); err != nil {
		return 0, false, notSent(err)
	}
	cs.localFin = true
	if len(end) <= copyLimit {
		mustWait = c.out.frame(KindEnd, 0, cs.id, nil, end)
	} else {
		mustWait = c.out.frame(KindEnd, 0, cs.id, [][]byte{end}, nil)
	}
	if !cs.isClient {
		c.retire(cs)
	}
	return c.out.round, mustWait, nil
}

// ---- receiving ---------------------------------------------------------------------------

// recvReady reports whether a receiver has something to act on: a queued frame, the
// peer's end, or a failure.
func (c *core) recvReady(cs *coreStream) bool {
	return cs.err != nil || cs.inHead < len(cs.inq) || cs.remoteFin
}

// recvState is what a receiver with nothing queued gets: io.EOF after the peer's END, its
// ERROR, the stream's failure; errWouldBlock while the peer's half is open.
func (c *core) recvState(cs *coreStream) error {
	switch {
	case cs.err != nil:
		return cs.err
	case cs.inHead < len(cs.inq):
		return nil
	case cs.remoteErr != nil:
		return cs.remoteErr
	case cs.remoteFin:
		return io.EOF
	}
	return errWouldBlock
}

// consume hands the application the next frame queued on cs, which it then owns. Consuming
// grants the bytes back to the peer: at once when a quarter window has accumulated; and,
// so that the sender can always make progress, whenever the queue drains with bytes held
// back (PROTOCOL.md, "Flow control"): at once if a frame as large as one the connection has
// already carried could not be sent with the credit the peer has, else creditDelay later
// unless the queue drains again first (the sender is then evidently sending). grantAt is
// set when a delayed grant was scheduled; flush when a CREDIT was queued.
func (c *core) consume(now time.Time, cs *coreStream) (m rxFrame, grantAt time.Time, flush bool, err error) {
	now = c.clock(now)
	if err := c.recvState(cs); err != nil {
		return rxFrame{}, time.Time{}, false, err
	}
	m = cs.inq[cs.inHead]
	cs.inq[cs.inHead] = rxFrame{}
	cs.inHead++
	drained := cs.inHead == len(cs.inq)
	if drained {
		cs.inq, cs.inHead = cs.inq[:0], 0
	}
	cs.queued -= m.size
	cs.ungranted += m.size
	switch {
	case cs.remoteFin || cs.ungranted == 0:
	case cs.ungranted >= int64(c.lim.StreamWindow)/4, drained && c.maxDataFrame > cs.recvAvail:
		c.grant(cs)
		flush = true
	case drained && !cs.noGrants:
		if cs.grantAt.IsZero() {
			c.grants = append(c.grants, cs)
		}
		cs.grantAt = now.Add(creditDelay)
		grantAt = cs.grantAt
	}
	return m, grantAt, flush, nil
}

// grant queues a CREDIT for every byte of cs consumed and not yet granted.
func (c *core) grant(cs *coreStream) {
	g := cs.ungranted
	cs.ungranted = 0
	cs.recvAvail += g
	var buf [16]byte
	c.out.frame(KindCredit, 0, cs.id, nil, mpAppendUint(buf[:0], uint64(g)))
}

// grantDue makes the delayed grants whose time has come.
func (c *core) grantDue(now time.Time, a *actions) {
	keep := c.grants[:0]
	for _, cs := range c.grants {
		if cs.grantAt.IsZero() {
			continue
		}
		if now.Before(cs.grantAt) {
			keep = append(keep, cs)
			continue
		}
		cs.grantAt = time.Time{}
		if cs.err == nil && !cs.remoteFin && !cs.noGrants && cs.ungranted > 0 {
			c.grant(cs)
			a.flush = true
		}
	}
	clear(c.grants[len(keep):])
	c.grants = keep
}

// ---- ending ------------------------------------------------------------------------------

// cancel abandons the stream (this side's cancellation, with err as its error): the peer
// is told with a CANCEL unless the stream is complete for it, and everything queued is
// dropped. It reports whether the stream was live (false: it had failed or been canceled
// already) and whether a frame was queued.
func (c *core) cancel(cs *coreStream, err error, reason string) (live, flush bool) {
	if cs.err != nil {
		return false, false
	}
	cs.err = err
	tell := !cs.localFin || !cs.remoteFin
	if !cs.isClient {
		tell = !cs.localFin
	}
	cs.localFin = true
	c.freeQueue(cs)
	if tell && c.phase == phaseOpen {
		var buf [256]byte
		flush = c.queueAsync(KindCancel, cs.id, appendCancelPayload(buf[:0], reason)) == nil
	}
	c.retire(cs)
	return true, flush
}

// closeDone reports whether a client's stream is complete, so that closing it needs no
// cancellation: the server has ended it.
func (c *core) closeDone(cs *coreStream) bool {
	return cs.remoteFin && (cs.localFin || cs.isClient)
}

// release ends the stream's claim on the connection: it grants nothing more, its queue is
// dropped, and it stops counting against Limits.DataStreams (once its queue has been
// released, not when the peer ended it, since an ended stream may still hold data).
func (c *core) release(cs *coreStream) {
	cs.noGrants = true
	cs.grantAt = time.Time{}
	c.freeQueue(cs)
	if cs.countsData {
		cs.countsData = false
		c.dataStreams--
	}
}

// finish completes a server stream whose handler returned: an END with the stream's
// counters, or (errCode set) an ERROR, unless the stream is already complete or failed;
// then it is retired (the loop releases it once its codec let go of the last message).
func (c *core) finish(cs *coreStream, errCode, errMsg string) (round uint64, queued bool) {
	already, failed := cs.localFin, cs.err != nil
	cs.localFin = true
	if !already && !failed && c.phase == phaseOpen {
		var buf [512]byte
		var p []byte
		if errCode == "" {
			p = mpAppendMapHeader(buf[:0], 3)
			p = mpAppendUint(mpAppendStr(p, "bytes_out"), cs.bytesOut)
			p = mpAppendUint(mpAppendStr(p, "batches_out"), cs.batchesOut)
			p = mpAppendUint(mpAppendStr(p, "credit_stall_ns"), uint64(cs.stall))
			c.out.frame(KindEnd, 0, cs.id, nil, p)
		} else {
			c.out.frame(KindError, 0, cs.id, nil, appendErrorPayload(buf[:0], errCode, errMsg))
		}
		queued = true
	}
	c.retire(cs)
	return c.out.round, queued
}

// streamStats returns cs's counters.
func (c *core) streamStats(cs *coreStream) StreamStats {
	return StreamStats{
		ID: cs.id, Method: cs.method,
		Traffic: Traffic{BytesIn: cs.bytesIn, BytesOut: cs.bytesOut,
			FramesIn: cs.framesIn, FramesOut: cs.framesOut,
			BatchesIn: cs.batchesIn, BatchesOut: cs.batchesOut},
		CreditStall: cs.stall, CreditWaits: cs.creditWaits,
	}
}
