package ipc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	arrowipc "github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/internal/bufpool"
)

// Stream is one request and its two half-streams: the client's (REQUEST, then optionally a
// schema, batches and END) and the server's (optionally a schema and batches, then END or
// ERROR). Either side may CANCEL. Data frames on each half are flow controlled: the receiver
// grants credit in bytes, and a sender with too little credit waits, so a stalled consumer
// bounds the memory its producer can make the link hold to about one window.
//
// A Stream is used by at most one sending and one receiving goroutine at a time.
//
// Its protocol state is the core's (cs, guarded by the connection's mu); the Stream holds
// what the application's goroutines need: the request, the context, the signals they wait
// on, and the Arrow codec.
type Stream struct {
	c        *Conn
	cs       *coreStream
	id       uint32
	isClient bool
	method   string
	args     []byte
	timeout  time.Duration // server: the client's deadline budget
	ctx      context.Context
	// cancelCtx: server: cancels the handler's context; set before the stream is
	// published, never changed.
	cancelCtx context.CancelCauseFunc
	stopAfter func() bool // client: detaches the ctx watcher

	recvSig   chan struct{} // signalled when the receive state changes
	creditSig chan struct{} // signalled when the send state changes

	// Arrow codec state: the writer belongs to the sending goroutine, the reader to the
	// receiving one.
	aw         *arrowipc.Writer
	pw         payloadWriter
	ar         *arrowipc.Reader
	mr         msgReader
	dec        decodeAllocator
	schemaSent bool
}

func newStream(c *Conn, cs *coreStream, method string, args []byte) *Stream {
	s := &Stream{
		c: c, cs: cs, id: cs.id, isClient: c.isClient, method: method, args: args,
		recvSig:   make(chan struct{}, 1),
		creditSig: make(chan struct{}, 1),
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

// newRingMessage wraps an RBATCH as an Arrow message: its metadata in the pooled frame
// payload (copied out of shared memory: the socket brought it), its body in place in the
// ring region, which goes back to the ring when the message and every array built on its
// body are released.
func newRingMessage(m rxFrame, pool memory.Allocator, ring *ringRx) *arrowipc.Message {
	np := m.metaOff + 8 + m.metaLen
	head := memory.NewBufferWithAllocator(m.owned[:np:np], pool)
	mb := memory.SliceBuffer(head, m.metaOff+8, m.metaLen)
	bb := memory.NewBufferWithAllocator(m.body, ring)
	msg := arrowipc.NewMessage(mb, bb)
	mb.Release()
	bb.Release()
	head.Release()
	return msg
}

// waitCtx returns the error for a done context: on the client the stream is canceled (the
// server is told); on the server the handler gets the cause and reports it by returning.
func (s *Stream) waitCtx() error {
	cause := context.Cause(s.ctx)
	if s.isClient {
		s.cancel(cause)
		s.c.mu.Lock()
		defer s.c.mu.Unlock()
		return s.cs.err
	}
	return cause
}

// recvDone reports whether a receiver has something to act on.
func (s *Stream) recvDone() bool {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return s.c.core.recvReady(s.cs)
}

// nextMessage returns the next queued Arrow message, waiting for one; io.EOF after the peer's
// END. Consuming grants the bytes back to the peer (core.consume).
func (s *Stream) nextMessage() (*arrowipc.Message, error) {
	c := s.c
	for {
		if err := s.waitReadable(); err != nil {
			return nil, err
		}
		var a actions
		c.mu.Lock()
		m, grantAt, flush, err := c.core.consume(time.Now(), s.cs)
		if !grantAt.IsZero() {
			c.armLocked(grantAt)
		}
		if flush && err == nil {
			err = c.sendLocked(c.core.out.round, false, &a)
		}
		c.failedLocked(&a)
		c.mu.Unlock()
		c.exec(&a)
		if err == errWouldBlock {
			continue
		}
		if m.owned == nil {
			return nil, err
		}
		var msg *arrowipc.Message
		if m.body != nil {
			msg = newRingMessage(m, frameAllocator{c.pool}, c.core.ring)
		} else {
			np := int(m.size)
			payload := m.owned[:np:np]
			msg = newArrowMessage(payload, frameAllocator{c.pool}, payload[8:8+m.metaLen], payload[8+m.metaLen:])
		}
		if err != nil {
			msg.Release()
			return nil, err
		}
		return msg, nil
	}
}

// waitReadable waits until a message is queued (nil) or the peer's half ended (io.EOF, its
// ERROR, or a failure).
func (s *Stream) waitReadable() error {
	if err := s.c.waitFor(s.ctx, s.recvSig, s.recvDone); err != nil {
		return s.waitCtx()
	}
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	if err := s.c.core.recvState(s.cs); err != errWouldBlock {
		return err
	}
	return nil
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
	p    *bufpool.Pool
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
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return s.cs.remoteEnd
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

// sendData writes one SCHEMA or BATCH frame of n payload bytes, waiting for credit first.
func (s *Stream) sendData(kind Kind, parts [][]byte, n int) error {
	c := s.c
	for {
		var a actions
		c.mu.Lock()
		round, mustWait, ok, err := c.core.sendData(time.Now(), s.cs, kind, parts, n)
		if ok {
			err = c.sendLocked(round, mustWait, &a)
		}
		c.failedLocked(&a)
		c.mu.Unlock()
		c.exec(&a)
		if ok || err != nil {
			return err
		}
		if err := s.awaitCredit(n); err != nil {
			return err
		}
	}
}

// awaitCredit waits until the stream's credit covers n bytes, for a sender whose attempt
// found too little; on the stream's end or cancellation it closes the stall and returns
// why.
func (s *Stream) awaitCredit(n int) error {
	c := s.c
	ready := func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.core.sendReady(s.cs, n)
	}
	if err := c.waitFor(s.ctx, s.creditSig, ready); err != nil {
		c.mu.Lock()
		c.core.endStall(time.Now(), s.cs)
		c.mu.Unlock()
		return s.waitCtx()
	}
	return nil
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
	c := s.c
	var a actions
	c.mu.Lock()
	round, mustWait, err := c.core.closeSend(s.cs, end)
	if err == nil {
		err = c.sendLocked(round, mustWait, &a)
	}
	c.failedLocked(&a)
	c.mu.Unlock()
	c.exec(&a)
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
	reason := cause.Error()
	if len(reason) > 200 {
		reason = reason[:200]
	}
	c := s.c
	c.mu.Lock()
	err := fmt.Errorf("stream %d (%s): %w: %w", s.id, s.method, ErrCanceled, cause)
	live, flush := c.core.cancel(s.cs, err, reason)
	c.mu.Unlock()
	if !live {
		return
	}
	if flush {
		signal(c.w.kick)
	}
	if s.cancelCtx != nil {
		s.cancelCtx(err)
	}
	signal(s.recvSig)
	signal(s.creditSig)
	c.preemptReader() // a goroutine of ours may be the one blocked reading
}

// Close releases the stream. A stream the server has not completed is canceled first.
func (s *Stream) Close() {
	c := s.c
	c.mu.Lock()
	done := c.core.closeDone(s.cs)
	c.mu.Unlock()
	if !done {
		s.cancel(errors.New("closed before the end"))
	}
	if s.stopAfter != nil {
		s.stopAfter()
	}
	s.releaseCodec()
	c.mu.Lock()
	c.core.release(s.cs)
	c.mu.Unlock()
}

// releaseCodec releases the Arrow reader and writer and the message being read.
func (s *Stream) releaseCodec() {
	if s.ar != nil {
		s.ar.Release()
		s.ar = nil
	}
	s.mr.Release()
	if s.aw != nil {
		_ = s.aw.Close()
		s.aw = nil
	}
}

// StreamStats are one stream's counters on this side.
type StreamStats struct {
	ID     uint32 `json:"id" msgpack:"id"`
	Method string `json:"method" msgpack:"method"`
	Traffic
	CreditStall time.Duration `json:"credit_stall_ns" msgpack:"credit_stall_ns"`
	CreditWaits uint64        `json:"credit_waits" msgpack:"credit_waits"`
}

// Stats returns the stream's counters.
func (s *Stream) Stats() StreamStats {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return s.c.core.streamStats(s.cs)
}

// finish completes a server stream after its handler returned err: END or ERROR unless the
// handler already ended it or the stream failed, then the stream's resources are released.
func (s *Stream) finish(err error) {
	var code, msg string
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			if cause := context.Cause(s.ctx); cause != nil {
				var re *RemoteError
				if errors.As(cause, &re) {
					err = cause
				}
			}
		}
		code, msg = errorCode(err)
		if len(msg) > 4000 {
			msg = msg[:4000]
		}
	}
	c := s.c
	var a actions
	c.mu.Lock()
	if round, queued := c.core.finish(s.cs, code, msg); queued {
		_ = c.sendLocked(round, false, &a)
	}
	c.failedLocked(&a)
	c.mu.Unlock()
	c.exec(&a)
	if s.cancelCtx != nil {
		s.cancelCtx(context.Canceled)
	}
	s.releaseCodec()
	c.mu.Lock()
	c.core.release(s.cs)
	c.mu.Unlock()
}

// frameAllocator hands received frame buffers back to their pool. The Arrow message built on
// a frame gets the payload with its capacity cut to its length, so a batch whose metadata
// points past its body fails to decode instead of reading the recycled buffer's stale
// tail; Free restores the capacity (the buffer came from Get(len), so its capacity is that
// length's class size) before returning it.
type frameAllocator struct{ p *bufpool.Pool }

func (a frameAllocator) Allocate(size int) []byte { return a.p.Get(size) }

func (a frameAllocator) Reallocate(size int, b []byte) []byte { return a.p.Reallocate(size, b) }

func (a frameAllocator) Free(b []byte) {
	if len(b) == 0 {
		return
	}
	if cap(b) == len(b) {
		b = unsafe.Slice(&b[0], bufpool.SizeOf(len(b)))
	}
	a.p.Put(b)
}
