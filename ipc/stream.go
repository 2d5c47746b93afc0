package ipc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	arrowipc "github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/vmihailenco/msgpack/v5"
)

// Stream is one request and its two half-streams: the client's (REQUEST, then optionally a
// schema, batches and END) and the server's (optionally a schema and batches, then END or
// ERROR). Either side may CANCEL. Data frames on each half are flow controlled: the receiver
// grants credit in bytes, and a sender with too little credit waits, so a stalled consumer
// bounds the memory its producer can make the link hold to about one window.
//
// A Stream is used by at most one sending and one receiving goroutine at a time.
type Stream struct {
	c        *Conn
	id       uint32
	isClient bool
	method   string
	args     []byte
	timeout  time.Duration // server: the client's deadline budget
	// countsData: the stream can receive data and counts against Limits.DataStreams
	// (guarded by c.mu).
	countsData bool
	ctx        context.Context
	cancelCtx  context.CancelCauseFunc // server: cancels the handler's context
	stopAfter  func() bool             // client: detaches the ctx watcher

	recvSig   chan struct{} // signalled when the receive state changes
	creditSig chan struct{} // signalled when the send state changes

	mu        sync.Mutex
	inq       []inMsg
	inHead    int
	gotSchema bool
	remoteFin bool   // the peer's half is complete (END, FIN, ERROR or CANCEL received)
	remoteEnd []byte // the peer's END payload
	remoteErr error  // the peer's ERROR
	err       error  // local failure or cancellation; wins over queued data
	recvAvail int64  // credit the peer may still use (receiver's view)
	ungranted int64  // bytes consumed since the last grant
	sendAvail int64  // credit this side may still use
	localFin  bool   // this side's half is complete (END, FIN, ERROR or CANCEL sent)
	// grantTimer grants what was consumed and held back, creditDelay after the queue
	// drained (see nextMessage); noGrants stops it for good once the stream is released.
	grantTimer *time.Timer
	noGrants   bool

	// Arrow codec state: the writer belongs to the sending goroutine, the reader to the
	// receiving one.
	aw         *arrowipc.Writer
	pw         payloadWriter
	ar         *arrowipc.Reader
	mr         msgReader
	dec        decodeAllocator
	schemaSent bool

	bytesIn, bytesOut, framesIn, framesOut, batchesIn, batchesOut atomic.Uint64
	stallNs                                                       atomic.Int64
	creditWaits                                                   atomic.Uint64
}

type inMsg struct {
	msg  *arrowipc.Message
	size int64
}

func newStream(c *Conn, id uint32, isClient bool, method string, args []byte) *Stream {
	s := &Stream{
		c: c, id: id, isClient: isClient, method: method, args: args,
		recvSig:   make(chan struct{}, 1),
		creditSig: make(chan struct{}, 1),
		recvAvail: int64(c.lim.StreamWindow),
		sendAvail: int64(c.peer.Window),
		ctx:       context.Background(),
	}
	s.pw.s = s
	s.mr.s = s
	return s
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// ID returns the stream id.
func (s *Stream) ID() uint32 { return s.id }

// Method returns the requested method.
func (s *Stream) Method() string { return s.method }

// Args returns the request's args as one raw msgpack value (msgpack nil if none were given).
func (s *Stream) Args() []byte { return s.args }

// DecodeArgs unmarshals the request's args into v.
func (s *Stream) DecodeArgs(v any) error {
	if len(s.args) == 0 {
		return nil
	}
	if err := msgpack.Unmarshal(s.args, v); err != nil {
		return Errorf(CodeInvalidArgument, "%s: args: %v", s.method, err)
	}
	return nil
}

// Context returns the stream's context: the caller's on the client, the handler's on the
// server (canceled when the client cancels, the deadline passes or the server shuts down).
func (s *Stream) Context() context.Context { return s.ctx }

// Conn returns the connection the stream runs on.
func (s *Stream) Conn() *Conn { return s.c }

// ---- receive side -------------------------------------------------------------------------

// onData queues a SCHEMA or BATCH frame; it runs on the reader goroutine and takes f.owned.
func (s *Stream) onData(f inFrame) error {
	info, meta, body, err := parseArrowMessage(f.payload)
	if err == nil {
		err = checkArrowKind(f.h.Kind, info)
	}
	if err != nil {
		s.c.pool.Put(f.owned)
		return fmt.Errorf("stream %d: %w", s.id, err)
	}
	n := int64(f.h.Length)
	s.c.noteDataFrame(n)
	s.mu.Lock()
	switch {
	case s.remoteFin:
		err = fmt.Errorf("%w: %v frame on stream %d after the peer's END", ErrProtocol, f.h.Kind, s.id)
	case f.h.Kind == KindSchema && s.gotSchema:
		err = fmt.Errorf("%w: second SCHEMA on stream %d", ErrProtocol, s.id)
	case f.h.Kind == KindBatch && !s.gotSchema:
		err = fmt.Errorf("%w: BATCH before SCHEMA on stream %d", ErrProtocol, s.id)
	case s.recvAvail < min(n, int64(s.c.lim.StreamWindow)):
		err = fmt.Errorf("%w: peer sent %d bytes on stream %d with only %d bytes of credit", ErrProtocol, n, s.id, s.recvAvail)
	}
	if err != nil {
		s.mu.Unlock()
		s.c.pool.Put(f.owned)
		return err
	}
	s.gotSchema = true
	s.recvAvail -= n
	if s.err != nil { // canceled locally, not yet retired: drop
		s.mu.Unlock()
		s.c.pool.Put(f.owned)
		return nil
	}
	np := len(f.payload)
	s.inq = append(s.inq, inMsg{msg: newArrowMessage(f.owned[:np:np], frameAllocator{s.c.pool}, meta, body), size: n})
	s.mu.Unlock()
	s.bytesIn.Add(uint64(n) + HeaderSize)
	s.framesIn.Add(1)
	if f.h.Kind == KindBatch {
		s.batchesIn.Add(1)
		s.c.batchesIn.Add(1)
	}
	signal(s.recvSig)
	return nil
}

// newArrowMessage wraps a pooled frame payload as an Arrow message whose metadata and body
// slice it; the pool gets the buffer back when the message and every array built on its body
// are released.
func newArrowMessage(payload []byte, pool memory.Allocator, meta, body []byte) *arrowipc.Message {
	parent := memory.NewBufferWithAllocator(payload, pool)
	metaOff := 8
	bodyOff := 8 + len(meta)
	mb := memory.SliceBuffer(parent, metaOff, len(meta))
	bb := memory.SliceBuffer(parent, bodyOff, len(body))
	msg := arrowipc.NewMessage(mb, bb)
	mb.Release()
	bb.Release()
	parent.Release()
	return msg
}

func (s *Stream) onRemoteEnd(payload []byte, rerr error) {
	s.mu.Lock()
	if s.remoteFin {
		s.mu.Unlock()
		s.c.lateFrames.Add(1) // a second end: ignore it (ERROR after CANCEL races are legal)
		return
	}
	s.remoteFin = true
	s.remoteEnd = payload
	s.remoteErr = rerr
	s.mu.Unlock()
	if s.isClient {
		s.c.retire(s) // the server's END or ERROR completes the stream
	}
	signal(s.recvSig)
	signal(s.creditSig)
}

func (s *Stream) onCredit(n int64) {
	s.mu.Lock()
	s.sendAvail += n
	s.mu.Unlock()
	signal(s.creditSig)
}

func (s *Stream) onRemoteCancel(reason string) {
	s.mu.Lock()
	if s.err == nil {
		s.err = fmt.Errorf("stream %d (%s): %w: %s", s.id, s.method, ErrRemoteCanceled, reason)
	}
	s.remoteFin, s.localFin = true, true
	q := s.takeQueueLocked()
	err := s.err
	s.mu.Unlock()
	releaseQueue(q)
	if s.cancelCtx != nil {
		s.cancelCtx(err)
	}
	s.c.retire(s)
	signal(s.recvSig)
	signal(s.creditSig)
}

// failConn fails the stream because its connection ended.
func (s *Stream) failConn(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = fmt.Errorf("stream %d (%s) to %s: %w", s.id, s.method, s.c.remote, err)
	}
	q := s.takeQueueLocked()
	err = s.err
	s.mu.Unlock()
	releaseQueue(q)
	if s.cancelCtx != nil {
		s.cancelCtx(err)
	}
	signal(s.recvSig)
	signal(s.creditSig)
}

func (s *Stream) takeQueueLocked() []inMsg {
	q := s.inq[s.inHead:]
	s.inq, s.inHead = nil, 0
	return q
}

func releaseQueue(q []inMsg) {
	for _, m := range q {
		m.msg.Release()
	}
}

// waitCtx returns the error for a done context: on the client the stream is canceled (the
// server is told); on the server the handler gets the cause and reports it by returning.
func (s *Stream) waitCtx() error {
	cause := context.Cause(s.ctx)
	if s.isClient {
		s.cancel(cause)
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.err
	}
	return cause
}

// recvDone reports whether a receiver has something to act on: a queued message, the
// peer's end, or a failure.
func (s *Stream) recvDone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err != nil || s.inHead < len(s.inq) || s.remoteFin
}

// creditDelay is how long a receiver whose queue has drained holds back consumed bytes below
// its grant threshold before granting them anyway (see nextMessage).
const creditDelay = 2 * time.Millisecond

// nextMessage returns the next queued Arrow message, waiting for one; io.EOF after the peer's
// END. Consuming grants the bytes back to the peer: at once when a quarter window has
// accumulated; and, so that the sender can always make progress, whenever the queue drains
// with bytes held back (PROTOCOL.md, "Flow control"): at once if a frame as large as one the
// connection has already carried could not be sent with the credit the peer has, else after
// creditDelay unless the queue drains again first (the sender is then evidently sending).
func (s *Stream) nextMessage() (*arrowipc.Message, error) {
	if err := s.waitReadable(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return nil, err
	}
	m := s.inq[s.inHead]
	s.inq[s.inHead] = inMsg{}
	s.inHead++
	drained := s.inHead == len(s.inq)
	if drained {
		s.inq, s.inHead = s.inq[:0], 0
	}
	s.ungranted += m.size
	var grant int64
	switch {
	case s.remoteFin || s.ungranted == 0:
	case s.ungranted >= int64(s.c.lim.StreamWindow)/4, drained && s.c.maxDataFrame.Load() > s.recvAvail:
		grant, s.ungranted = s.ungranted, 0
		s.recvAvail += grant
	case drained && !s.noGrants:
		if s.grantTimer == nil {
			s.grantTimer = time.AfterFunc(creditDelay, s.lateGrant)
		} else {
			s.grantTimer.Reset(creditDelay)
		}
	}
	s.mu.Unlock()
	if grant > 0 {
		var buf [16]byte
		if err := s.c.fw.write(&frame{kind: KindCredit, stream: s.id, small: mpAppendUint(buf[:0], uint64(grant))}); err != nil {
			m.msg.Release()
			return nil, err
		}
	}
	return m.msg, nil
}

// lateGrant grants the consumed bytes still held back, creditDelay after the queue drained.
func (s *Stream) lateGrant() {
	s.mu.Lock()
	if s.err != nil || s.remoteFin || s.noGrants || s.ungranted == 0 {
		s.mu.Unlock()
		return
	}
	grant := s.ungranted
	s.ungranted = 0
	s.recvAvail += grant
	s.mu.Unlock()
	var buf [16]byte
	_ = s.c.fw.write(&frame{kind: KindCredit, stream: s.id, small: mpAppendUint(buf[:0], uint64(grant))})
}

// stopGrants ends the stream's late grants: it no longer receives.
func (s *Stream) stopGrants() {
	s.mu.Lock()
	s.noGrants = true
	if s.grantTimer != nil {
		s.grantTimer.Stop()
	}
	s.mu.Unlock()
}

// waitReadable waits until a message is queued (nil) or the peer's half ended (io.EOF, its
// ERROR, or a failure).
func (s *Stream) waitReadable() error {
	if err := s.c.waitFor(s.ctx, s.recvSig, s.recvDone); err != nil {
		return s.waitCtx()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.err != nil:
		return s.err
	case s.inHead < len(s.inq):
		return nil
	case s.remoteErr != nil:
		return s.remoteErr
	}
	return io.EOF
}

// msgReader feeds a stream's queued messages to an arrow ipc.Reader.
type msgReader struct {
	s       *Stream
	cur     *arrowipc.Message
	lastErr error // the last error nextMessage returned: a transport error, not a decode one
}

func (m *msgReader) Message() (*arrowipc.Message, error) {
	m.s.dec.used = 0 // a new message: a new decode budget
	if m.cur != nil {
		m.cur.Release()
		m.cur = nil
	}
	msg, err := m.s.nextMessage()
	if err != nil {
		m.lastErr = err
		return nil, err
	}
	m.cur = msg
	return msg, nil
}

func (m *msgReader) Retain() {}

func (m *msgReader) Release() {
	if m.cur != nil {
		m.cur.Release()
		m.cur = nil
	}
}

// maxDecodeBytes bounds what decoding one Arrow message may allocate (decompressed buffers;
// an uncompressed message's arrays alias the frame). A compressed buffer's 8-byte length
// prefix is the peer's word: without a bound a corrupt or hostile one could make the
// receiver allocate terabytes.
const maxDecodeBytes = MaxFrameCap

// decodeAllocator is the allocator a stream's Arrow reader decodes with: the connection's
// pool, with a per-message budget. Over budget it panics, which the Arrow reader turns into
// an error (a protocol violation for the link).
type decodeAllocator struct {
	p    *BufferPool
	used int64 // bytes allocated while decoding the current message
}

func (a *decodeAllocator) charge(n int) {
	if n < 0 || a.used+int64(n) > maxDecodeBytes {
		panic(fmt.Sprintf("decoding the message needs a buffer of %d bytes, over the link's bound of %d bytes per message (%d already allocated): a corrupt or hostile compressed-length prefix", n, maxDecodeBytes, a.used))
	}
	a.used += int64(n)
}

func (a *decodeAllocator) Allocate(n int) []byte {
	a.charge(n)
	return a.p.Allocate(n)
}

func (a *decodeAllocator) Reallocate(n int, b []byte) []byte {
	if n > cap(b) {
		a.charge(n - len(b))
	}
	return a.p.Reallocate(n, b)
}

func (a *decodeAllocator) Free(b []byte) { a.p.Put(b) }

// Recv returns the peer's next record batch, which the caller owns and must Release. It
// returns io.EOF after the peer's END (see End), a *RemoteError for the peer's ERROR, and
// the stream's failure otherwise. A malformed Arrow message is a protocol violation: the
// connection is closed.
func (s *Stream) Recv() (arrow.RecordBatch, error) {
	if s.ar == nil {
		if err := s.waitReadable(); err != nil {
			return nil, err
		}
		s.dec.p = s.c.pool
		ar, err := newArrowReader(&s.mr, &s.dec)
		if err != nil {
			return nil, s.decodeFailed(err)
		}
		s.ar = ar
	}
	if !s.ar.Next() {
		err := s.ar.Err()
		if err == nil {
			return nil, io.EOF
		}
		return nil, s.decodeFailed(err)
	}
	rec := s.ar.RecordBatch()
	rec.Retain()
	return rec, nil
}

func newArrowReader(mr *msgReader, pool memory.Allocator) (ar *arrowipc.Reader, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("arrow reader: %v", r)
		}
	}()
	return arrowipc.NewReaderFromMessageReader(mr, arrowipc.WithAllocator(pool))
}

// decodeFailed classifies an error from the arrow reader: a transport error passes through;
// anything else means the peer sent an Arrow message that does not decode.
func (s *Stream) decodeFailed(err error) error {
	if le := s.mr.lastErr; le != nil && (errors.Is(err, le) || err == le) {
		return le
	}
	if s.mr.lastErr != nil {
		return s.mr.lastErr
	}
	perr := fmt.Errorf("%w: stream %d: malformed Arrow message: %w", ErrProtocol, s.id, err)
	s.c.protocolError(perr)
	return perr
}

// Schema returns the schema of the peer's batches once Recv has returned one (or nil).
func (s *Stream) Schema() *arrow.Schema {
	if s.ar == nil {
		return nil
	}
	return s.ar.Schema()
}

// End returns the peer's END payload (a msgpack map) after Recv returned io.EOF.
func (s *Stream) End() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.remoteEnd
}

// DecodeEnd unmarshals the peer's END payload into v.
func (s *Stream) DecodeEnd(v any) error {
	end := s.End()
	if end == nil {
		return fmt.Errorf("stream %d: no END received", s.id)
	}
	return msgpack.Unmarshal(end, v)
}

// ---- send side ----------------------------------------------------------------------------

func (s *Stream) sendStateErrLocked() error {
	switch {
	case s.err != nil:
		return s.err
	case s.localFin:
		return fmt.Errorf("stream %d: %w: this side already ended it", s.id, ErrStreamClosed)
	case s.isClient && s.remoteFin && s.remoteErr != nil:
		return fmt.Errorf("stream %d: %w: the server ended it: %w", s.id, ErrStreamClosed, s.remoteErr)
	case s.isClient && s.remoteFin:
		return fmt.Errorf("stream %d: %w: the server ended it", s.id, ErrStreamClosed)
	}
	return nil
}

// sendData writes one SCHEMA or BATCH frame of n payload bytes, waiting for credit first.
func (s *Stream) sendData(kind Kind, parts [][]byte, n int) error {
	if n > int(s.c.peer.MaxFrame) {
		return fmt.Errorf("stream %d: %w: %d bytes, peer accepts %d; send smaller batches", s.id, ErrFrameTooLarge, n, s.c.peer.MaxFrame)
	}
	need := min(int64(n), int64(s.c.peer.Window))
	s.mu.Lock()
	if err := s.sendStateErrLocked(); err != nil {
		s.mu.Unlock()
		return err
	}
	if s.sendAvail < need {
		s.mu.Unlock()
		start := time.Now()
		s.creditWaits.Add(1)
		s.c.creditWaits.Add(1)
		err := s.c.waitFor(s.ctx, s.creditSig, func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.sendAvail >= need || s.sendStateErrLocked() != nil
		})
		s.addStall(start)
		if err != nil {
			return s.waitCtx()
		}
		s.mu.Lock()
		if err := s.sendStateErrLocked(); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	s.sendAvail -= int64(n)
	s.mu.Unlock()
	if err := s.c.fw.write(&frame{kind: kind, stream: s.id, parts: parts}); err != nil {
		return err
	}
	s.bytesOut.Add(uint64(n) + HeaderSize)
	s.framesOut.Add(1)
	if kind == KindBatch {
		s.batchesOut.Add(1)
		s.c.batchesOut.Add(1)
	}
	return nil
}

func (s *Stream) addStall(start time.Time) {
	d := int64(time.Since(start))
	s.stallNs.Add(d)
	s.c.creditStallNs.Add(d)
}

// Send writes a record batch, preceded the first time by its schema (and by dictionary
// batches when it has dictionary columns). It waits for credit, then writes the batch as one
// Arrow IPC message with one vectored write, and returns once the batch's buffers are no
// longer referenced: the caller may release or reuse rec afterwards.
func (s *Stream) Send(rec arrow.RecordBatch) error {
	if s.aw == nil {
		s.aw = arrowipc.NewWriterWithPayloadWriter(&s.pw, append([]arrowipc.Option{
			arrowipc.WithSchema(rec.Schema()), arrowipc.WithAllocator(s.c.pool)}, s.c.sendOpts...)...)
	}
	return s.aw.Write(rec)
}

// SendSchema sends the schema of the batches to come, for a result that may have no batches.
// Send calls it implicitly.
func (s *Stream) SendSchema(schema *arrow.Schema) error {
	if s.schemaSent {
		return nil
	}
	p := arrowipc.GetSchemaPayload(schema, s.c.pool)
	defer p.Release()
	return s.pw.WritePayload(p)
}

// CloseSend ends this side's half with an END frame whose payload is end, a msgpack map (nil
// sends {}). On the server it completes the stream. An error wrapping ErrNotSent means the END
// certainly did not leave (the stream or its connection had failed first); after any other
// error the peer may have received it.
func (s *Stream) CloseSend(end []byte) error {
	if end == nil {
		end = []byte(emptyMap)
	} else if err := mpValidMap(end); err != nil {
		return notSent(fmt.Errorf("stream %d: END payload: %w", s.id, err))
	}
	s.mu.Lock()
	if err := s.sendStateErrLocked(); err != nil {
		s.mu.Unlock()
		return notSent(err)
	}
	s.localFin = true
	s.mu.Unlock()
	f := frame{kind: KindEnd, stream: s.id}
	if len(end) <= copyLimit {
		f.small = end
	} else {
		f.parts = [][]byte{end}
	}
	queued, err := s.c.fw.send(&f)
	if !s.isClient {
		s.c.retire(s)
	}
	if err != nil && !queued {
		return notSent(err)
	}
	return err
}

// CloseSendMap is CloseSend with a map marshalled to msgpack.
func (s *Stream) CloseSendMap(end map[string]any) error {
	b, err := msgpack.Marshal(end)
	if err != nil {
		return fmt.Errorf("stream %d: END payload: %w", s.id, err)
	}
	return s.CloseSend(b)
}

// Cancel abandons the stream: the peer is told with a CANCEL frame (unless the stream is
// already complete), and this side's pending and later operations fail with ErrCanceled.
func (s *Stream) Cancel(reason string) { s.cancel(errors.New(reason)) }

func (s *Stream) cancel(cause error) {
	if cause == nil {
		cause = context.Canceled
	}
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return
	}
	s.err = fmt.Errorf("stream %d (%s): %w: %w", s.id, s.method, ErrCanceled, cause)
	tell := !s.localFin || !s.remoteFin
	if !s.isClient {
		tell = !s.localFin
	}
	s.localFin = true
	q := s.takeQueueLocked()
	s.mu.Unlock()
	releaseQueue(q)
	if tell {
		var buf [256]byte
		reason := cause.Error()
		if len(reason) > 200 {
			reason = reason[:200]
		}
		_ = s.c.fw.writeAsync(&frame{kind: KindCancel, stream: s.id, small: appendCancelPayload(buf[:0], reason)})
	}
	if s.cancelCtx != nil {
		s.cancelCtx(s.err)
	}
	s.c.retire(s)
	signal(s.recvSig)
	signal(s.creditSig)
	s.c.preemptReader() // a goroutine of ours may be the one blocked reading
}

// Close releases the stream. A stream the server has not completed is canceled first.
func (s *Stream) Close() {
	s.mu.Lock()
	done := s.remoteFin && (s.localFin || s.isClient)
	s.mu.Unlock()
	if !done {
		s.cancel(errors.New("closed before the end"))
	}
	if s.stopAfter != nil {
		s.stopAfter()
	}
	if s.ar != nil {
		s.ar.Release()
		s.ar = nil
	}
	s.mr.Release()
	if s.aw != nil {
		_ = s.aw.Close()
		s.aw = nil
	}
	s.stopGrants()
	s.mu.Lock()
	q := s.takeQueueLocked()
	s.mu.Unlock()
	releaseQueue(q)
	s.c.releaseData(s)
}

// StreamStats are one stream's counters on this side.
type StreamStats struct {
	ID          uint32        `json:"id" msgpack:"id"`
	Method      string        `json:"method" msgpack:"method"`
	BytesIn     uint64        `json:"bytes_in" msgpack:"bytes_in"`
	BytesOut    uint64        `json:"bytes_out" msgpack:"bytes_out"`
	FramesIn    uint64        `json:"frames_in" msgpack:"frames_in"`
	FramesOut   uint64        `json:"frames_out" msgpack:"frames_out"`
	BatchesIn   uint64        `json:"batches_in" msgpack:"batches_in"`
	BatchesOut  uint64        `json:"batches_out" msgpack:"batches_out"`
	CreditStall time.Duration `json:"credit_stall_ns" msgpack:"credit_stall_ns"`
	CreditWaits uint64        `json:"credit_waits" msgpack:"credit_waits"`
}

// Stats returns the stream's counters.
func (s *Stream) Stats() StreamStats {
	return StreamStats{
		ID: s.id, Method: s.method,
		BytesIn: s.bytesIn.Load(), BytesOut: s.bytesOut.Load(),
		FramesIn: s.framesIn.Load(), FramesOut: s.framesOut.Load(),
		BatchesIn: s.batchesIn.Load(), BatchesOut: s.batchesOut.Load(),
		CreditStall: time.Duration(s.stallNs.Load()), CreditWaits: s.creditWaits.Load(),
	}
}

// finish completes a server stream after its handler returned err: END or ERROR unless the
// handler already ended it or the stream failed, then the stream's resources are released.
func (s *Stream) finish(err error) {
	s.mu.Lock()
	already, failed := s.localFin, s.err != nil
	s.localFin = true
	s.mu.Unlock()
	if !already && !failed {
		if err == nil {
			st := s.Stats()
			var buf [256]byte
			b := mpAppendMapHeader(buf[:0], 3)
			b = mpAppendUint(mpAppendStr(b, "bytes_out"), st.BytesOut)
			b = mpAppendUint(mpAppendStr(b, "batches_out"), st.BatchesOut)
			b = mpAppendUint(mpAppendStr(b, "credit_stall_ns"), uint64(st.CreditStall))
			_ = s.c.fw.write(&frame{kind: KindEnd, stream: s.id, small: b})
		} else {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				if cause := context.Cause(s.ctx); cause != nil {
					var re *RemoteError
					if errors.As(cause, &re) {
						err = cause
					}
				}
			}
			code, msg := errorCode(err)
			var buf [512]byte
			if len(msg) > 4000 {
				msg = msg[:4000]
			}
			f := frame{kind: KindError, stream: s.id, small: appendErrorPayload(buf[:0], code, msg)}
			_ = s.c.fw.write(&f)
		}
	}
	if s.cancelCtx != nil {
		s.cancelCtx(context.Canceled)
	}
	s.c.retire(s)
	if s.ar != nil {
		s.ar.Release()
		s.ar = nil
	}
	s.mr.Release()
	if s.aw != nil {
		_ = s.aw.Close()
		s.aw = nil
	}
	s.stopGrants()
	s.mu.Lock()
	q := s.takeQueueLocked()
	s.mu.Unlock()
	releaseQueue(q)
	s.c.releaseData(s)
}
