package ipc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The session fuzz targets drive whole connections through the core, with no network and
// no clock. FuzzCoreSession feeds one core every byte its peer sends, from the handshake
// on, as the socket would (in reads of varying sizes, with the timer ticking between
// them), while a simple application consumes and ends its streams. FuzzCorePair connects
// two honest cores, a client and a server, back to back, and plays a random sequence of
// application events, deliveries and ticks on them. Both check, after every event, the
// core's invariants (checkInvariants: credits conserved and never overdrawn, tables
// consistent), that everything a core writes is well-formed frames, that no stream is
// woken after the application released it, and at the end that every pooled buffer came
// back; the pair also checks that two honest cores never fail each other, that every
// stream's data arrives whole and in order, and that a consumer that keeps consuming
// always lets its producer finish (the progress rule of PROTOCOL.md's flow control).

// fuzzHarness is a core with the application and the writer around it, for the fuzz
// targets.
type fuzzHarness struct {
	t       testing.TB
	name    string
	c       *core
	pool    *countingPool
	out     []byte // written, not yet delivered to the peer
	streams map[uint32]*fuzzStream
	order   []uint32 // stream ids in the order seen
	calls   map[uint32]bool
	// peerMax is the largest frame the peer accepts: what this side may write.
	peerMax uint32
	a       actions
}

// fuzzStream is one stream as the application sees it.
type fuzzStream struct {
	cs       *coreStream
	released bool
	sent     []int64 // sizes of the data frames sent, in order
	got      []int64 // sizes of the data frames consumed, in order
	schema   bool    // sent its schema
	ended    bool    // this side's half is done (END, FIN or CANCEL)
	peerEnd  bool    // consume reported the peer's end
	blocked  int64   // a data frame of this size waits for credit (0: none)
	canceled bool    // either side canceled or the stream failed: data may be lost
}

func newFuzzHarness(t testing.TB, name string, client bool, lim Limits) *fuzzHarness {
	h := &fuzzHarness{t: t, name: name, pool: newCountingPool(), streams: map[uint32]*fuzzStream{}, calls: map[uint32]bool{}, peerMax: HandshakeMaxFrame}
	cfg := coreConfig{isClient: client, limits: lim, transport: "tcp", remote: name + "'s peer", selfUID: 1000, pool: h.pool, nonce: testNonce}
	if !client {
		cfg.nonce = peerNonce
		cfg.params.instance = bytes.Repeat([]byte{0x33}, 16)
		cfg.unaryFor = func(method []byte, fin bool) UnaryAppendHandler {
			if fin && bytes.HasPrefix(method, []byte("unary.")) {
				return serveEcho
			}
			return nil
		}
	}
	h.c = newCore(cfg, testEpoch)
	h.c.startHandshake(testEpoch, testEpoch.Add(h.c.lim.HandshakeTimeout), &h.a)
	h.settle(testEpoch)
	return h
}

// settle writes what the core queued (checking that it is well-formed) and carries out
// its actions as the loop would, then checks the invariants.
func (h *fuzzHarness) settle(now time.Time) {
	c := h.c
	if c.phase == phaseOpen {
		h.peerMax = uint32(c.peer.MaxFrame)
	}
	for {
		r, n := c.out.take()
		if r == nil {
			break
		}
		start := len(h.out)
		for _, v := range r.vectors() {
			h.out = append(h.out, v...)
		}
		h.checkWritten(h.out[start:])
		c.wrote(now, r, n, int64(r.bytes), nil, &h.a)
	}
	a := &h.a
	for _, q := range a.accept {
		h.track(q.cs)
	}
	for _, w := range a.wake {
		if fs := h.streams[w.cs.id]; fs != nil && fs.released {
			h.t.Fatalf("%s: stream %d woken after the application released it", h.name, w.cs.id)
		}
		if w.cancel != nil {
			if fs := h.streams[w.cs.id]; fs != nil {
				fs.canceled = true
			}
		}
	}
	for _, r := range a.calls {
		if !h.calls[r.id] {
			h.t.Fatalf("%s: call %d completed twice, or never made", h.name, r.id)
		}
		delete(h.calls, r.id)
		if r.owned != nil {
			h.pool.Put(r.owned)
		}
	}
	replies, n := []byte(nil), 0
	for _, q := range a.inline {
		start := len(replies)
		out, err := q.handler(nil, q.args, append(replies, zeroHeader...))
		if err != nil {
			h.t.Fatalf("%s: echo: %v", h.name, err)
		}
		PutHeader(out[start:], Header{Kind: KindEnd, Stream: q.id, Length: uint32(len(out) - start - HeaderSize)})
		replies, n = out, n+1
	}
	if n > 0 && c.queueEncoded(replies, n) == nil {
		a.reset()
		h.settle(now)
		return
	}
	if a.fail != nil {
		for _, fs := range h.streams {
			fs.canceled = true
		}
	}
	a.reset()
	if err := c.checkInvariants(); err != nil {
		h.t.Fatalf("%s: invariant: %v", h.name, err)
	}
}

// checkWritten checks that b is whole, well-formed frames within the peer's limit.
func (h *fuzzHarness) checkWritten(b []byte) {
	for len(b) > 0 {
		hd, p, n, err := DecodeFrame(b, max(h.peerMax, HandshakeMaxFrame))
		if err != nil {
			h.t.Fatalf("%s wrote a malformed frame: %v", h.name, err)
		}
		b = b[n:]
		var perr error
		switch hd.Kind {
		case KindHello:
			_, perr = DecodeHello(p)
		case KindRequest:
			_, perr = decodeRequest(p)
		case KindError:
			_, perr = decodeErrorPayload(p)
		case KindCancel:
			_, perr = decodeCancelPayload(p)
		case KindEnd:
			perr = mpValidMap(p)
		case KindCredit:
			var g uint64
			if g, perr = decodeUintPayload(hd.Kind, p); perr == nil && (g == 0 || g > MaxFrameCap) {
				perr = fmt.Errorf("a grant of %d bytes", g)
			}
		case KindPing, KindPong:
			_, perr = decodeUintPayload(hd.Kind, p)
		case KindSchema, KindBatch:
			if hd.Stream > h.c.lastID && h.c.cfg.isClient {
				perr = fmt.Errorf("data for stream %d, never opened", hd.Stream)
			}
		}
		if perr != nil {
			h.t.Fatalf("%s wrote a bad %v payload: %v", h.name, hd.Kind, perr)
		}
	}
}

func (h *fuzzHarness) track(cs *coreStream) *fuzzStream {
	fs := h.streams[cs.id]
	if fs == nil {
		fs = &fuzzStream{cs: cs}
		h.streams[cs.id] = fs
		h.order = append(h.order, cs.id)
	}
	return fs
}

// feed gives the core b in reads of the sizes split returns.
func (h *fuzzHarness) feed(now time.Time, b []byte, split func() int) {
	for len(b) > 0 && h.c.phase != phaseFailed {
		sp := h.c.readSpace()
		n := copy(sp, b[:min(len(b), max(1, split()))])
		b = b[n:]
		h.c.received(now, n, &h.a)
		h.settle(now)
	}
}

// consumeAll takes every frame queued on the live streams, as an application that keeps
// up does; a stream whose peer ended it is ended by this side too (a server's handler
// returns, a client closes it).
func (h *fuzzHarness) consumeAll(now time.Time) {
	for _, id := range h.order {
		fs := h.streams[id]
		if fs.released {
			continue
		}
		for {
			m, _, _, err := h.c.consume(now, fs.cs)
			if err != nil {
				if err != errWouldBlock {
					fs.peerEnd = true
				}
				break
			}
			fs.got = append(fs.got, m.size)
			h.pool.Put(m.owned)
		}
		h.settle(now)
	}
}

// end releases every stream the peer has ended, finishing a server's.
func (h *fuzzHarness) end(now time.Time) {
	for _, id := range h.order {
		fs := h.streams[id]
		if fs.released || !fs.peerEnd {
			continue
		}
		if h.c.cfg.isClient {
			if !h.c.closeDone(fs.cs) {
				h.c.cancel(fs.cs, fmt.Errorf("%w: closed before the end", ErrCanceled), "closed before the end")
				fs.canceled = true
			}
		} else {
			h.c.finish(fs.cs, "", "")
		}
		h.c.release(fs.cs)
		fs.released, fs.ended = true, true
		h.settle(now)
	}
}

// closeAll fails the core and checks that every pooled buffer came back.
func (h *fuzzHarness) closeAll(now time.Time) {
	h.c.fail(now, fmt.Errorf("%w: closed by this side", ErrConnClosed), nil, 0, &h.a)
	h.settle(now)
	h.c.dec.release()
	for _, fs := range h.streams {
		h.c.release(fs.cs)
	}
	if n := h.pool.outstanding(); n != 0 {
		h.t.Fatalf("%s: %d pooled buffers never came back", h.name, n)
	}
}

// splitter returns read sizes drawn from seed: mostly small, sometimes large.
func splitter(seed byte) func() int {
	x := uint32(seed)*2654435761 + 1
	return func() int {
		x = x*1664525 + 1013904223
		switch r := x >> 24; {
		case r < 64:
			return int(r%16) + 1
		case r < 192:
			return int(r) * 7
		}
		return 1 << 20
	}
}

// sessionSeeds are whole byte streams a client sends a server: a handshake, then requests,
// uploads, credit, heartbeats, cancellations and ends.
func sessionSeeds() [][]byte {
	hello := AppendFrame(nil, KindHello, 0, 0, AppendHello(nil, &Hello{Version: Version, Role: "client", Name: "fuzz", Nonce: testNonce, MaxFrame: MinMaxFrame, Window: MinMaxFrame}))
	var s1 []byte
	s1 = append(s1, hello...)
	s1 = AppendFrame(s1, KindRequest, FlagFin, 1, appendRequest(nil, "unary.echo", nil, 0))
	s1 = AppendFrame(s1, KindRequest, 0, 2, appendRequest(nil, "upload", nil, time.Second))
	s1 = AppendFrame(s1, KindSchema, 0, 2, arrowTestMessage(arrowMsgSchema, 64, true))
	for _, n := range []int{100, 20000, 40000, 5000} {
		s1 = AppendFrame(s1, KindBatch, 0, 2, arrowTestMessage(arrowMsgRecordBatch, n, false))
	}
	s1 = AppendFrame(s1, KindPing, 0, 0, mpAppendUint(nil, 7))
	s1 = AppendFrame(s1, KindEnd, 0, 2, []byte(emptyMap))
	s1 = AppendFrame(s1, KindRequest, FlagFin, 3, appendRequest(nil, "download", nil, 0))
	s1 = AppendFrame(s1, KindCredit, 0, 3, mpAppendUint(nil, 4096))
	s1 = AppendFrame(s1, KindCancel, 0, 3, appendCancelPayload(nil, "enough"))
	s1 = AppendFrame(s1, KindPong, 0, 0, mpAppendUint(nil, uint64(testEpoch.UnixNano())))
	s2 := append(append([]byte(nil), hello...), AppendFrame(nil, KindRequest, 0, 1, appendRequest(nil, "x", nil, 0))...)
	s2 = AppendFrame(s2, KindBatch, 0, 1, arrowTestMessage(arrowMsgRecordBatch, 100, false))
	s3 := append(append([]byte(nil), hello...), "GET / HTTP/1.1\r\n\r\n"...)
	s4 := append([]byte(nil), hello[:len(hello)-3]...)
	return [][]byte{s1, s2, s3, s4, hello}
}

func FuzzCoreSession(f *testing.F) {
	for i, s := range sessionSeeds() {
		f.Add(byte(i), s)
	}
	f.Fuzz(func(t *testing.T, seed byte, stream []byte) {
		h := newFuzzHarness(t, "server", false, Limits{StreamWindow: MinMaxFrame, MaxFrame: MinMaxFrame, MaxStreams: 8, MaxConnBuffer: 4 * MinMaxFrame})
		split := splitter(seed)
		now := testEpoch
		for len(stream) > 0 && h.c.phase != phaseFailed {
			n := min(len(stream), split())
			h.feed(now, stream[:n], split)
			stream = stream[n:]
			h.consumeAll(now)
			h.end(now)
			now = now.Add(time.Duration(seed%50) * time.Millisecond)
			h.c.tick(now, -1, &h.a)
			if h.a.checkPeer {
				h.c.peerState(now, 'R', nil, &h.a)
			}
			h.settle(now)
		}
		if h.c.phase != phaseFailed {
			h.c.readFailed(now, io.EOF, &h.a)
			h.settle(now)
		}
		h.closeAll(now)
	})
}

// FuzzCorePair plays a client and a server core against each other. Each byte of ops is
// an event (see the switch); the bytes after some of them are its arguments.
func FuzzCorePair(f *testing.F) {
	f.Add([]byte{0, 1, 0, 1, 2, 0, 4, 0, 4, 0, 4, 0, 5, 0, 0, 1, 8, 9, 10, 1, 0, 6, 12})
	f.Add([]byte{2, 1, 3, 0, 0, 9, 0, 9, 0, 9, 0, 1, 6, 6, 6, 12, 12, 1, 0, 10, 0})
	f.Add([]byte{2, 0, 4, 0, 200, 4, 0, 200, 4, 0, 200, 12, 0, 8, 12, 0, 8, 7, 0, 11, 0})
	f.Add(bytes.Repeat([]byte{2, 0, 4, 1, 90, 0, 8, 12, 1, 9, 1, 6}, 8))
	f.Fuzz(func(t *testing.T, ops []byte) {
		runPair(t, ops)
	})
}

// runPair is FuzzCorePair's body.
func runPair(t testing.TB, ops []byte) {
	lim := Limits{StreamWindow: MinMaxFrame, MaxFrame: 4 * MinMaxFrame, MaxStreams: 16, MaxConnBuffer: 8 * MinMaxFrame}
	cl := newFuzzHarness(t, "client", true, lim)
	sv := newFuzzHarness(t, "server", false, lim)
	now := testEpoch
	next := func() int {
		if len(ops) == 0 {
			return 0
		}
		b := ops[0]
		ops = ops[1:]
		return int(b)
	}
	pick := func(h *fuzzHarness) *fuzzStream {
		k := next()
		var live []*fuzzStream
		for _, id := range h.order {
			if fs := h.streams[id]; !fs.released {
				live = append(live, fs)
			}
		}
		if len(live) == 0 {
			return nil
		}
		return live[k%len(live)]
	}
	deliver := func(from, to *fuzzHarness, n int) {
		if n <= 0 || n > len(from.out) {
			n = len(from.out)
		}
		b := from.out[:n:n]
		from.out = from.out[n:]
		to.feed(now, b, splitter(byte(n)))
	}
	send := func(h *fuzzHarness, fs *fuzzStream, size int64) {
		kind := KindBatch
		if !fs.schema {
			kind, size = KindSchema, 48
		}
		if fs.blocked != 0 {
			size = fs.blocked
		}
		_, _, ok, err := h.c.sendData(now, fs.cs, kind, [][]byte{arrowTestMessage(map[Kind]uint8{KindSchema: arrowMsgSchema, KindBatch: arrowMsgRecordBatch}[kind], int(size), kind == KindSchema)}, int(size))
		switch {
		case err != nil:
			fs.blocked = 0
		case !ok:
			fs.blocked = size
		default:
			fs.blocked = 0
			fs.schema = true
			fs.sent = append(fs.sent, size)
		}
		h.settle(now)
	}
	tick := func(d time.Duration) {
		deliver(cl, sv, 0)
		deliver(sv, cl, 0)
		now = now.Add(d)
		for _, h := range []*fuzzHarness{cl, sv} {
			h.c.tick(now, -1, &h.a)
			h.settle(now)
		}
	}
	for len(ops) > 0 {
		switch op := next() % 14; op {
		case 0:
			deliver(cl, sv, next()*97)
		case 1:
			deliver(sv, cl, next()*97)
		case 2: // open
			fin := next()%2 == 1
			cs, _, err := cl.c.open("m", nil, 0, fin)
			if err == nil {
				fs := cl.track(cs)
				fs.ended = fin
			}
			cl.settle(now)
		case 3: // unary call
			if id, _, _, err := cl.c.call("unary.echo", nil, 0, func([]byte, error) {}); err == nil {
				cl.calls[id] = true
			}
			cl.settle(now)
		case 4, 9: // send
			h := cl
			if op == 9 {
				h = sv
			}
			if fs := pick(h); fs != nil && !fs.ended {
				send(h, fs, int64(40+next()*1021))
			}
		case 5: // the client ends its half
			if fs := pick(cl); fs != nil && !fs.ended && fs.blocked == 0 {
				if _, _, err := cl.c.closeSend(fs.cs, []byte(emptyMap)); err == nil {
					fs.ended = true
				}
				cl.settle(now)
			}
		case 6:
			cl.consumeAll(now)
			cl.end(now)
		case 7, 11: // cancel
			h := cl
			if op == 11 {
				h = sv
			}
			if fs := pick(h); fs != nil {
				h.c.cancel(fs.cs, fmt.Errorf("%w: fuzz", ErrCanceled), "fuzz")
				fs.canceled, fs.ended = true, true
				h.settle(now)
			}
		case 8:
			sv.consumeAll(now)
		case 10: // a handler returns
			if fs := pick(sv); fs != nil && fs.blocked == 0 && (fs.peerEnd || next()%2 == 0) {
				code := ""
				if next()%4 == 0 {
					code = CodeInternal
				}
				sv.c.finish(fs.cs, code, "fuzz")
				sv.c.release(fs.cs)
				fs.released, fs.ended = true, true
				sv.settle(now)
			}
		case 12:
			tick(time.Duration(1+next()%100) * time.Millisecond)
		case 13:
			for id := range cl.calls {
				if p, _ := cl.c.cancelCall(id, "fuzz"); p {
					delete(cl.calls, id)
				}
				break
			}
			cl.settle(now)
		}
	}
	// Drain: deliver everything, consume everything, retry what waits for credit, and let
	// delayed grants come due. A producer whose consumer keeps up always gets to send.
	for range 50 {
		tick(3 * time.Millisecond)
		for _, h := range []*fuzzHarness{cl, sv} {
			h.consumeAll(now)
			for _, id := range h.order {
				if fs := h.streams[id]; fs.blocked != 0 && !fs.released {
					send(h, fs, fs.blocked)
				}
			}
		}
	}
	for _, h := range []*fuzzHarness{cl, sv} {
		if h.c.phase != phaseOpen {
			t.Fatalf("%s: two honest cores failed: %v", h.name, h.c.err)
		}
	}
	for _, pair := range [][2]*fuzzHarness{{cl, sv}, {sv, cl}} {
		from, to := pair[0], pair[1]
		for id, fs := range from.streams {
			peer := to.streams[id]
			if fs.blocked != 0 && !fs.canceled && (peer == nil || !peer.canceled) && fs.cs.err == nil && !fs.cs.remoteFin {
				t.Fatalf("%s: stream %d still waits to send %d bytes (credit %d) though its consumer keeps up", from.name, id, fs.blocked, fs.cs.sendAvail)
			}
			if peer == nil {
				continue
			}
			n := min(len(peer.got), len(fs.sent))
			if len(peer.got) > len(fs.sent) || !equalInt64(peer.got[:n], fs.sent[:n]) {
				t.Fatalf("stream %d, %s to %s: sent %v, arrived %v", id, from.name, to.name, fs.sent, peer.got)
			}
			if !fs.canceled && !peer.canceled && !peer.released && len(peer.got) != len(fs.sent) {
				t.Fatalf("stream %d, %s to %s: sent %v, only %v arrived", id, from.name, to.name, fs.sent, peer.got)
			}
		}
	}
	cl.closeAll(now)
	sv.closeAll(now)
}

func equalInt64(a, b []int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// TestWriteFuzzSeeds writes the session targets' seed corpus under testdata/fuzz when
// COLINK_WRITE_FUZZ_SEEDS is set (run it after changing sessionSeeds).
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("COLINK_WRITE_FUZZ_SEEDS") == "" {
		t.Skip("set COLINK_WRITE_FUZZ_SEEDS to rewrite the seed corpus")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzCoreSession")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, s := range sessionSeeds() {
		body := fmt.Sprintf("go test fuzz v1\nbyte(%q)\n[]byte(%q)\n", byte(i), s)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%d", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
