package ipc

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/vmihailenco/msgpack/v5"
)

// The core's data-driven tests: every file under testdata/core is a script of events for
// one core at a time, with the actions each event produced. There is no network and no
// clock: time is what the script says (now=, durations since the core was made).
//
// Commands (arguments key=value; sizes take K and M suffixes, times Go durations):
//
//	new role=client|server [established] [window=] [max-frame=] [max-streams=]
//	    [conn-buffer=] [interval=] [timeout=] [handshake=] [transport=tcp|unix] [pid=]
//	    [peer-uid=] [token=] [peer-window=] [peer-max-frame=] [peer-max-streams=]
//	    [shm=] (the segment size this side asks for or offers) [ring] (established:
//	    a consumer's ring of 4096 bytes, generation 7, as the loop maps it)
//	recv [now=] [split=n]      frames the peer sends, one a line (see peerFrame), fed in
//	                           reads of n bytes (default: all at once); with no frames,
//	                           the reader's first pass over what is already buffered
//	bytes [now=]               raw bytes from the peer, hex, one chunk a line
//	eof [now=]                 the peer closed the connection
//	tick [now=] [unread=]      the timer (unread: bytes waiting unread in the socket)
//	peer-state state=R|T|Z|gone [now=]
//	open method= [fin] [timeout=]           a client's stream
//	call method=                            a client's unary call
//	cancel-call stream=                     the caller of a call gave up
//	send stream= [kind=BATCH] len= [now=]   a data frame (the core checks the credit)
//	send stream= ring pos= len=             an RBATCH for a body of len bytes at pos
//	shm-created size=                       a server's segments exist (0: they failed)
//	consume stream= [now=]                  the application takes the next frame
//	close-send stream= [end=]               this side's END
//	cancel stream= [reason=]                this side's cancellation
//	close stream=                           Stream.Close: cancel unless complete, release
//	finish stream= [code= msg=]             a server's handler returned
//	close-with code= msg=                   the server goes away
//	close                                   Conn.Close
//	state                                   the connection's and every stream's state
//
// Output: what the core wrote (write KIND ...), then its actions (accept, wake,
// call-done, inline, check-peer, shm-create, fail), and "timer T" whenever the deadline it wants a
// tick at changed.
func TestCoreScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/core", func(t *testing.T, path string) {
		var h *coreHarness
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd == "new" {
				h = newCoreHarness(t, d)
				return h.flush()
			}
			if h == nil {
				d.Fatalf(t, "%s before new", d.Cmd)
			}
			h.t = t
			return h.run(d)
		})
	})
}

// testNonce and peerNonce are the two sides' handshake nonces in the scripts.
var (
	testNonce = bytes.Repeat([]byte{0x11}, 32)
	peerNonce = bytes.Repeat([]byte{0x22}, 32)
)

// testEpoch is time zero of the scripts.
var testEpoch = time.Unix(1000, 0)

// countingPool is a bufferPool that knows which of its buffers are out.
type countingPool struct {
	out map[*byte]int
}

func newCountingPool() *countingPool { return &countingPool{out: map[*byte]int{}} }

func (p *countingPool) Get(n int) []byte {
	b := make([]byte, n, max(n, 1))
	p.out[&b[:1][0]]++
	return b
}

func (p *countingPool) Put(b []byte) {
	if cap(b) == 0 {
		return
	}
	k := &b[:1][0]
	if p.out[k] == 0 {
		panic("countingPool: a buffer given back twice, or never handed out")
	}
	if p.out[k]--; p.out[k] == 0 {
		delete(p.out, k)
	}
}

func (p *countingPool) outstanding() int { return len(p.out) }

// coreHarness drives one core.
type coreHarness struct {
	t       testing.TB
	c       *core
	pool    *countingPool
	now     time.Duration
	token   []byte
	streams map[uint32]*coreStream // every stream seen, kept after it retires
	// released are the streams the application let go of: the core must never wake them.
	released map[uint32]bool
	timer    time.Time
	// strict: a protocol-level inconsistency in the output is a test failure (the fuzz
	// targets turn it off for the frames they make up themselves).
	strict bool
	// pending are the actions of the events since the last flush.
	pending actions
}

func newCoreHarness(t testing.TB, d *datadriven.TestData) *coreHarness {
	arg := func(k, def string) string { return scriptArg(t, d, k, def) }
	h := &coreHarness{t: t, pool: newCountingPool(), streams: map[uint32]*coreStream{}, released: map[uint32]bool{}, strict: true}
	lim := Limits{
		MaxFrame:          int(parseSize(t, arg("max-frame", "0"))),
		StreamWindow:      int(parseSize(t, arg("window", "64K"))),
		MaxStreams:        int(parseSize(t, arg("max-streams", "0"))),
		MaxConnBuffer:     int(parseSize(t, arg("conn-buffer", "0"))),
		HeartbeatInterval: parseDur(t, arg("interval", "250ms")),
		HeartbeatTimeout:  parseDur(t, arg("timeout", "1s")),
		HandshakeTimeout:  parseDur(t, arg("handshake", "5s")),
	}
	var token string
	if d.MaybeScanArgs(t, "token", &token) {
		h.token = []byte(token)
	}
	pid, _ := strconv.Atoi(arg("pid", "0"))
	peerUID, _ := strconv.Atoi(arg("peer-uid", "1000"))
	cfg := coreConfig{
		isClient: arg("role", "client") == "client", limits: lim, transport: arg("transport", "tcp"),
		remote: "pm0", peerUID: peerUID, peerPID: pid, selfUID: 1000, pool: h.pool, nonce: testNonce,
		params: handshakeParams{name: "test", token: h.token, instance: bytes.Repeat([]byte{0x33}, 16), shm: uint64(parseSize(t, arg("shm", "0")))},
	}
	if !cfg.isClient {
		cfg.unaryFor = func(method []byte, fin bool) UnaryAppendHandler {
			if fin && bytes.HasPrefix(method, []byte("unary.")) {
				return serveEcho
			}
			return nil
		}
	}
	h.c = newCore(cfg, testEpoch)
	var a actions
	if d.HasArg("established") {
		peer := Hello{Version: Version, Name: "peer", Nonce: peerNonce,
			MaxFrame:   uint64(parseSize(t, arg("peer-max-frame", "64M"))),
			Window:     uint64(parseSize(t, arg("peer-window", "64K"))),
			MaxStreams: uint64(parseSize(t, arg("peer-max-streams", "1024"))),
		}
		h.c.established(testEpoch, peer)
		if d.HasArg("ring") {
			mem := testSegment(4096)
			initSegment(mem, 7)
			h.c.ring = newRingRx(newShmSeg(mem, nil), 7)
		}
	} else {
		h.c.startHandshake(testEpoch, testEpoch.Add(h.c.lim.HandshakeTimeout), &a)
	}
	h.pending = a
	return h
}

func parseSize(t testing.TB, s string) int64 {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("size %q: %v", s, err)
	}
	return n * mult
}

func parseDur(t testing.TB, s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("duration %q: %v", s, err)
	}
	return d
}

// scriptArg is the value of a command's argument key=value, or def when it is not given.
func scriptArg(t testing.TB, d *datadriven.TestData, key, def string) string {
	v := def
	d.MaybeScanArgs(t, key, &v)
	return v
}

func (h *coreHarness) at() time.Time { return testEpoch.Add(h.now) }

func (h *coreHarness) setNow(d *datadriven.TestData) {
	d.MaybeScanArgs(h.t, "now", &h.now)
}

func (h *coreHarness) stream(d *datadriven.TestData) *coreStream {
	id, err := strconv.ParseUint(scriptArg(h.t, d, "stream", ""), 10, 32)
	if err != nil {
		d.Fatalf(h.t, "stream=: %v", err)
	}
	cs := h.streams[uint32(id)]
	if cs == nil {
		d.Fatalf(h.t, "no stream %d", id)
	}
	return cs
}

func (h *coreHarness) run(d *datadriven.TestData) string {
	h.setNow(d)
	c, now := h.c, h.at()
	var out strings.Builder
	a := &h.pending
	switch d.Cmd {
	case "recv":
		var b []byte
		for _, line := range strings.Split(d.Input, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				b = append(b, peerFrame(h.t, d, h, line)...)
			}
		}
		split, _ := strconv.Atoi(scriptArg(h.t, d, "split", "0"))
		h.feed(b, split, a)
	case "bytes":
		for _, line := range strings.Split(d.Input, "\n") {
			b, err := hex.DecodeString(strings.ReplaceAll(line, " ", ""))
			if err != nil {
				d.Fatalf(h.t, "hex: %v", err)
			}
			h.feed(b, 0, a)
		}
	case "eof":
		c.readFailed(now, io.EOF, a)
		c.dec.release() // as the loop's reader does when its connection has failed
	case "tick":
		unread, _ := strconv.Atoi(scriptArg(h.t, d, "unread", "-1"))
		c.tick(now, unread, a)
	case "stalled":
		// What Conn.failIfStalled asks before a client picks the connection.
		if err := c.stalled(now); err != nil {
			fmt.Fprintf(&out, "stalled: %v\n", err)
		} else {
			out.WriteString("not stalled\n")
		}
	case "peer-state":
		st := scriptArg(h.t, d, "state", "R")
		var err error
		if st == "gone" {
			err = errors.New("has exited")
		}
		c.peerState(now, st[0], err, a)
	case "open":
		timeout := time.Duration(0)
		d.MaybeScanArgs(h.t, "timeout", &timeout)
		cs, _, err := c.open(scriptArg(h.t, d, "method", "m"), nil, timeout, d.HasArg("fin"))
		if err != nil {
			fmt.Fprintf(&out, "error: %v\n", err)
			break
		}
		h.streams[cs.id] = cs
		fmt.Fprintf(&out, "opened stream=%d\n", cs.id)
	case "call":
		done := func(end []byte, err error) {} // the harness prints call-done from the actions
		id, _, _, err := c.call(scriptArg(h.t, d, "method", "m"), nil, 0, done)
		if err != nil {
			fmt.Fprintf(&out, "error: %v\n", err)
			break
		}
		fmt.Fprintf(&out, "call stream=%d\n", id)
	case "cancel-call":
		id, _ := strconv.Atoi(scriptArg(h.t, d, "stream", "0"))
		pending, _ := c.cancelCall(uint32(id), scriptArg(h.t, d, "reason", "gave up"))
		fmt.Fprintf(&out, "pending=%v\n", pending)
	case "send":
		cs := h.stream(d)
		kind := KindBatch
		if scriptArg(h.t, d, "kind", "BATCH") == "SCHEMA" {
			kind = KindSchema
		}
		n := int(parseSize(h.t, scriptArg(h.t, d, "len", "100")))
		var ok bool
		var err error
		if d.HasArg("ring") {
			head := arrowTestMessage(arrowMsgRecordBatch, 8+32+n, false)[:40]
			desc := shmDesc{gen: 7, pos: uint64(parseSize(h.t, scriptArg(h.t, d, "pos", "0"))), len: uint64(n)}
			_, _, ok, err = c.sendRingData(now, cs, desc, [][]byte{head}, 40+n)
		} else {
			_, _, ok, err = c.sendData(now, cs, kind, [][]byte{make([]byte, n)}, n)
		}
		switch {
		case err != nil:
			fmt.Fprintf(&out, "error: %v\n", err)
		case !ok:
			fmt.Fprintf(&out, "wait for credit (have %d)\n", cs.sendAvail)
		default:
			fmt.Fprintf(&out, "sent (credit left %d)\n", cs.sendAvail)
		}
	case "consume":
		cs := h.stream(d)
		m, grantAt, _, err := c.consume(now, cs)
		switch {
		case err == io.EOF:
			out.WriteString("eof\n")
		case err == errWouldBlock:
			out.WriteString("nothing queued\n")
		case err != nil:
			fmt.Fprintf(&out, "error: %v\n", err)
		default:
			fmt.Fprintf(&out, "got %v len=%d\n", m.kind, m.size)
			h.pool.Put(m.owned) // the application releases it
			if m.body != nil {
				c.ring.release(m.body)
			}
		}
		if !grantAt.IsZero() {
			fmt.Fprintf(&out, "grant at %v\n", grantAt.Sub(testEpoch))
		}
	case "close-send":
		end := []byte(emptyMap)
		if _, _, err := c.closeSend(h.stream(d), end); err != nil {
			fmt.Fprintf(&out, "error: %v\n", err)
		}
	case "cancel":
		cs := h.stream(d)
		reason := scriptArg(h.t, d, "reason", "canceled")
		live, _ := c.cancel(cs, fmt.Errorf("stream %d: %w: %s", cs.id, ErrCanceled, reason), reason)
		fmt.Fprintf(&out, "live=%v\n", live)
	case "close":
		if !d.HasArg("stream") {
			c.fail(now, fmt.Errorf("%w: closed by this side", ErrConnClosed), nil, 0, a)
			break
		}
		cs := h.stream(d)
		if !c.closeDone(cs) {
			c.cancel(cs, fmt.Errorf("stream %d: %w: closed before the end", cs.id, ErrCanceled), "closed before the end")
		}
		c.release(cs)
		h.released[cs.id] = true
	case "finish":
		cs := h.stream(d)
		c.finish(cs, scriptArg(h.t, d, "code", ""), scriptArg(h.t, d, "msg", ""))
		c.release(cs)
		h.released[cs.id] = true
	case "shm-created":
		c.shmCreated(now, uint64(parseSize(h.t, scriptArg(h.t, d, "size", "0"))))
	case "close-with":
		c.closeWith(now, scriptArg(h.t, d, "code", CodeUnavailable), scriptArg(h.t, d, "msg", "going away"), a)
	case "state":
		h.state(&out)
		return out.String()
	default:
		d.Fatalf(h.t, "unknown command %s", d.Cmd)
	}
	out.WriteString(h.flush())
	return out.String()
}

// feed gives the core b as the socket would, in reads of at most split bytes.
func (h *coreHarness) feed(b []byte, split int, a *actions) {
	if len(b) == 0 {
		h.c.received(h.at(), 0, a) // the frames already buffered
	}
	for len(b) > 0 && h.c.phase != phaseFailed {
		sp := h.c.readSpace()
		n := len(b)
		if split > 0 {
			n = min(n, split)
		}
		n = copy(sp, b[:n])
		b = b[n:]
		h.c.received(h.at(), n, a)
	}
}

// flush "writes" the core's output, then prints it and the pending actions.
func (h *coreHarness) flush() string {
	var out strings.Builder
	c := h.c
	var wrote []byte
	if c.phase != phaseFailed || h.pending.fail != nil {
		for {
			r, n := c.out.take()
			if r == nil {
				break
			}
			for _, v := range r.vectors() {
				wrote = append(wrote, v...)
			}
			c.wrote(h.at(), r, n, int64(r.bytes), nil, &h.pending)
		}
	}
	for len(wrote) > 0 {
		hd, p, n, err := DecodeFrame(wrote, MaxFrameCap)
		if err != nil {
			h.t.Fatalf("the core wrote a malformed frame: %v (% x)", err, wrote[:min(len(wrote), 32)])
		}
		wrote = wrote[n:]
		fmt.Fprintf(&out, "write %s\n", describeFrame(hd, p))
	}
	a := &h.pending
	for _, q := range a.accept {
		h.streams[q.cs.id] = q.cs
		fin := ""
		if q.fin {
			fin = " fin"
		}
		fmt.Fprintf(&out, "accept stream=%d method=%s%s", q.cs.id, q.cs.method, fin)
		if q.timeout > 0 {
			fmt.Fprintf(&out, " timeout=%v", q.timeout)
		}
		out.WriteString("\n")
	}
	wakes := append([]wakeup(nil), a.wake...)
	sort.SliceStable(wakes, func(i, j int) bool { return wakes[i].cs.id < wakes[j].cs.id })
	for _, w := range wakes {
		if h.released[w.cs.id] && h.strict {
			h.t.Errorf("stream %d woken after the application released it", w.cs.id)
		}
		what := []string{}
		if w.recv {
			what = append(what, "recv")
		}
		if w.send {
			what = append(what, "send")
		}
		fmt.Fprintf(&out, "wake stream=%d %s", w.cs.id, strings.Join(what, "+"))
		if w.cancel != nil {
			fmt.Fprintf(&out, " cancel=%q", w.cancel.Error())
		}
		out.WriteString("\n")
	}
	calls := append([]callResult(nil), a.calls...)
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].id < calls[j].id })
	for _, r := range calls {
		if r.err != nil {
			fmt.Fprintf(&out, "call-done stream=%d err=%q\n", r.id, r.err.Error())
		} else {
			fmt.Fprintf(&out, "call-done stream=%d end=%s\n", r.id, describeMsgpack(r.end))
		}
		if r.owned != nil {
			h.pool.Put(r.owned)
		}
	}
	for _, q := range a.inline {
		fmt.Fprintf(&out, "inline stream=%d method=%s\n", q.id, q.method)
	}
	if a.checkPeer {
		out.WriteString("check-peer\n")
	}
	if a.shmCreate > 0 {
		fmt.Fprintf(&out, "shm-create size=%d\n", a.shmCreate)
	}
	if f := a.fail; f != nil {
		fmt.Fprintf(&out, "fail: %v\n", f.err)
	}
	a.reset()
	if d := c.deadline(); !d.Equal(h.timer) {
		h.timer = d
		if d.IsZero() {
			out.WriteString("timer none\n")
		} else {
			fmt.Fprintf(&out, "timer %v\n", d.Sub(testEpoch))
		}
	}
	if err := h.c.checkInvariants(); err != nil {
		h.t.Errorf("invariant: %v", err)
	}
	return out.String()
}

func (h *coreHarness) state(out *strings.Builder) {
	c := h.c
	phase := [...]string{"handshake", "open", "failed"}[c.phase]
	fmt.Fprintf(out, "conn %s streams=%d data-streams=%d calls=%d last-id=%d pool-out=%d", phase, len(c.streams), c.dataStreams, c.calls.pending, c.lastID, h.pool.outstanding())
	if c.lateFrames > 0 {
		fmt.Fprintf(out, " late=%d", c.lateFrames)
	}
	if c.rtt > 0 {
		fmt.Fprintf(out, " rtt=%v", c.rtt)
	}
	if c.creditWaits > 0 {
		fmt.Fprintf(out, " credit-waits=%d stall=%v", c.creditWaits, c.creditStall)
	}
	if c.shmSize > 0 {
		fmt.Fprintf(out, " shm=%d", c.shmSize)
	}
	if r := c.ring; r != nil {
		fmt.Fprintf(out, " ring-outstanding=%d ring-next=%d ring-tail=%d", r.outstanding(), r.next, r.tail)
	}
	if c.err != nil {
		fmt.Fprintf(out, " err=%q", c.err.Error())
	}
	out.WriteString("\n")
	ids := make([]int, 0, len(h.streams))
	for id := range h.streams {
		ids = append(ids, int(id))
	}
	sort.Ints(ids)
	for _, id := range ids {
		cs := h.streams[uint32(id)]
		fmt.Fprintf(out, "stream %d: send-credit=%d recv-credit=%d queued=%d/%d ungranted=%d", id, cs.sendAvail, cs.recvAvail, len(cs.inq)-cs.inHead, cs.queued, cs.ungranted)
		for _, f := range []struct {
			on   bool
			name string
		}{{cs.localFin, "local-fin"}, {cs.remoteFin, "remote-fin"}, {cs.retired, "retired"}, {cs.countsData, "counts-data"}, {!cs.grantAt.IsZero(), "grant-pending"}} {
			if f.on {
				out.WriteString(" " + f.name)
			}
		}
		if cs.creditWaits > 0 {
			fmt.Fprintf(out, " credit-waits=%d stall=%v", cs.creditWaits, cs.stall)
		}
		if cs.err != nil {
			fmt.Fprintf(out, " err=%q", cs.err.Error())
		}
		out.WriteString("\n")
	}
}

// describeFrame prints a frame the core wrote.
func describeFrame(h Header, p []byte) string {
	s := h.Kind.String()
	if h.Stream != 0 {
		s += fmt.Sprintf(" stream=%d", h.Stream)
	}
	switch h.Kind {
	case KindHello:
		hl, err := DecodeHello(p)
		if err != nil {
			return s + " bad: " + err.Error()
		}
		var f []string
		add := func(ok bool, k string, v any) {
			if ok {
				f = append(f, fmt.Sprintf("%s=%v", k, v))
			}
		}
		add(hl.Role != "", "role", hl.Role)
		add(hl.Auth != "", "auth", hl.Auth)
		add(hl.Window != 0, "window", hl.Window)
		add(hl.MaxFrame != 0, "max-frame", hl.MaxFrame)
		add(hl.MaxStreams != 0, "max-streams", hl.MaxStreams)
		add(len(hl.Proof) > 0, "proof", len(hl.Proof))
		add(hl.Shm != 0, "shm", hl.Shm)
		return s + " " + strings.Join(f, " ")
	case KindRequest:
		q, err := decodeRequest(p)
		if err != nil {
			return s + " bad: " + err.Error()
		}
		s += " method=" + q.Method
		if h.Flags&FlagFin != 0 {
			s += " fin"
		}
		if q.Timeout > 0 {
			s += fmt.Sprintf(" timeout=%v", q.Timeout)
		}
		return s
	case KindSchema, KindBatch:
		return s + fmt.Sprintf(" len=%d", len(p))
	case KindRingBatch:
		d, head, err := decodeShmDesc(p)
		if err != nil {
			return s + " bad: " + err.Error()
		}
		return s + fmt.Sprintf(" gen=%d pos=%d len=%d head=%d", d.gen, d.pos, d.len, len(head))
	case KindEnd:
		return s + " " + describeMsgpack(p)
	case KindError:
		e, err := decodeErrorPayload(p)
		if err != nil {
			return s + " bad: " + err.Error()
		}
		return s + fmt.Sprintf(" code=%s msg=%q", e.Code, e.Message)
	case KindCredit:
		n, _ := decodeUintPayload(h.Kind, p)
		return s + fmt.Sprintf(" n=%d", n)
	case KindCancel:
		r, _ := decodeCancelPayload(p)
		return s + fmt.Sprintf(" reason=%q", r)
	case KindPing, KindPong:
		n, _ := decodeUintPayload(h.Kind, p)
		return s + fmt.Sprintf(" nonce=%v", time.Duration(int64(n)-testEpoch.UnixNano()))
	}
	return s
}

func describeMsgpack(b []byte) string {
	var v map[string]any
	if err := msgpack.Unmarshal(b, &v); err != nil {
		return "bad: " + err.Error()
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s:%v", k, v[k]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// peerFrame encodes one line of a recv command: a kind and its fields, as the peer would
// send it, with overrides to make it wrong:
//
//	HELLO role= [version=] [auth=] [window=] [max-frame=] [max-streams=] [name=] [proof=right|wrong] [bare]
//	REQUEST stream= method= [fin] [timeout=]
//	SCHEMA stream= [len=]     a well-formed Arrow schema message of len bytes (at least 40)
//	BATCH stream= len=        a well-formed Arrow record batch message of len bytes
//	RBATCH stream= pos= len= [gen=7] [body-length=]   a descriptor of a body of len bytes at
//	                          pos, and an Arrow head whose metadata says body-length (len)
//	HELLO ... [shm=]          the segment size asked for or agreed
//	END stream= | ERROR stream= code= msg= | CREDIT stream= n= | CANCEL stream= [reason=]
//	PING nonce= | PONG nonce=
//	any: flags= header-version= magic=XXXX reserved= payload=hex length= (the header's)
func peerFrame(t testing.TB, d *datadriven.TestData, h *coreHarness, line string) []byte {
	fields := strings.Fields(line)
	kind := Kind(0)
	for k := KindHello; k <= kindMax; k++ {
		if k.String() == fields[0] {
			kind = k
		}
	}
	if kind == 0 {
		if n, err := strconv.Atoi(fields[0]); err == nil {
			kind = Kind(n)
		} else {
			d.Fatalf(t, "frame kind %q", fields[0])
		}
	}
	args := map[string]string{}
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		if k == "msg" || k == "reason" {
			v = strings.ReplaceAll(v, "_", " ") // words of a message
		}
		args[k] = v
	}
	get := func(k, def string) string {
		if v, ok := args[k]; ok {
			return v
		}
		return def
	}
	num := func(k, def string) int64 { return parseSize(t, get(k, def)) }
	_, has := args["fin"]
	var flags Flags
	if has {
		flags = FlagFin
	}
	var p []byte
	switch kind {
	case KindHello:
		role := get("role", "server")
		hl := Hello{Version: uint64(num("version", "1")), Role: role, Name: "peer", Nonce: peerNonce,
			Auth: get("auth", ""), MaxFrame: uint64(num("max-frame", "64M")), Window: uint64(num("window", "64K")),
			Shm: uint64(num("shm", "0"))}
		if role == "server" {
			hl.Instance = bytes.Repeat([]byte{0x44}, 16)
			hl.MaxStreams = uint64(num("max-streams", "1024"))
			if hl.Auth == "" {
				hl.Auth = AuthNone
			}
		}
		if pr, ok := args["proof"]; ok {
			// The peer's proof: the client's over (server nonce, client nonce), the server's
			// over (client nonce, server nonce); this side's nonce is testNonce.
			tok := h.token
			if pr == "wrong" {
				tok = []byte("not the token")
			}
			if role == "client" {
				hl = Hello{Proof: authProof(tok, proofLabelClient, testNonce, peerNonce)}
			} else {
				hl = Hello{Proof: authProof(tok, proofLabelServer, testNonce, peerNonce)}
			}
		}
		if _, bare := args["bare"]; bare {
			hl = Hello{Version: hl.Version, Role: role}
		}
		p = AppendHello(nil, &hl)
	case KindRequest:
		timeout := time.Duration(0)
		if v, ok := args["timeout"]; ok {
			timeout = parseDur(t, v)
		}
		p = appendRequest(nil, get("method", "m"), nil, timeout)
	case KindSchema:
		p = arrowTestMessage(arrowMsgSchema, int(num("len", "40")), true)
	case KindBatch:
		p = arrowTestMessage(arrowMsgRecordBatch, int(num("len", "100")), false)
	case KindRingBatch:
		n := num("len", "100")
		p = make([]byte, shmDescSize)
		shmDesc{gen: uint64(num("gen", "7")), pos: uint64(num("pos", "0")), len: uint64(n)}.put(p)
		p = append(p, arrowTestMessage(arrowMsgRecordBatch, int(8+32+num("body-length", strconv.FormatInt(n, 10))), false)[:40]...)
	case KindEnd:
		p = []byte(emptyMap)
	case KindError:
		p = appendErrorPayload(nil, get("code", CodeInternal), get("msg", "failed"))
	case KindCredit:
		p = mpAppendUint(nil, uint64(num("n", "1")))
	case KindCancel:
		p = appendCancelPayload(nil, get("reason", "canceled"))
	case KindPing, KindPong:
		p = mpAppendUint(nil, uint64(testEpoch.UnixNano()+int64(parseDur(t, get("nonce", "0s")))))
	}
	if v, ok := args["payload"]; ok {
		var err error
		if p, err = hex.DecodeString(v); err != nil {
			d.Fatalf(t, "payload: %v", err)
		}
	}
	if v, ok := args["flags"]; ok {
		n, _ := strconv.ParseUint(v, 0, 16)
		flags = Flags(n)
	}
	stream, _ := strconv.ParseUint(get("stream", "0"), 10, 32)
	b := AppendFrame(nil, kind, flags, uint32(stream), p)
	if v, ok := args["header-version"]; ok {
		n, _ := strconv.Atoi(v)
		b[2] = byte(n)
	}
	if v, ok := args["magic"]; ok {
		m, _ := hex.DecodeString(v)
		copy(b, m)
	}
	if v, ok := args["reserved"]; ok {
		n, _ := strconv.Atoi(v)
		b[6] = byte(n)
	}
	if v, ok := args["length"]; ok {
		binary.LittleEndian.PutUint32(b[12:], uint32(parseSize(t, v)))
	}
	if v, ok := args["truncate"]; ok {
		n, _ := strconv.Atoi(v)
		b = b[:n]
	}
	return b
}

// arrowTestMessage returns an Arrow IPC encapsulated message of exactly size bytes that the
// link's framing checks accept: a minimal flatbuffer Message (version V5, the header type,
// a bodyLength) and, for a batch, a body of zeros. The core never decodes the arrays.
func arrowTestMessage(headerType uint8, size int, schema bool) []byte {
	const metaMin = 32
	metaLen, body := metaMin, size-8-metaMin
	if schema {
		metaLen, body = size-8, 0
	}
	if body < 0 || metaLen < metaMin {
		panic(fmt.Sprintf("an Arrow test message needs at least %d bytes, not %d", 8+metaMin, size))
	}
	m := make([]byte, 8+metaLen+body)
	binary.LittleEndian.PutUint32(m[0:], 0xFFFFFFFF)
	binary.LittleEndian.PutUint32(m[4:], uint32(metaLen))
	meta := m[8 : 8+metaLen]
	// Root table at 16, vtable at 4: 12 bytes (4 fields), table of 16 bytes.
	binary.LittleEndian.PutUint32(meta[0:], 16)
	binary.LittleEndian.PutUint16(meta[4:], 12)
	binary.LittleEndian.PutUint16(meta[6:], 16)
	binary.LittleEndian.PutUint16(meta[8:], 4)   // version
	binary.LittleEndian.PutUint16(meta[10:], 6)  // header_type
	binary.LittleEndian.PutUint16(meta[12:], 0)  // header: absent
	binary.LittleEndian.PutUint16(meta[14:], 8)  // bodyLength
	binary.LittleEndian.PutUint32(meta[16:], 12) // soffset to the vtable
	binary.LittleEndian.PutUint16(meta[20:], 4)  // V5
	meta[22] = headerType
	binary.LittleEndian.PutUint64(meta[24:], uint64(body))
	return m
}

func TestArrowTestMessage(t *testing.T) {
	for _, tc := range []struct {
		typ    uint8
		size   int
		schema bool
	}{{arrowMsgSchema, 40, true}, {arrowMsgSchema, 200, true}, {arrowMsgRecordBatch, 40, false}, {arrowMsgRecordBatch, 70000, false}} {
		m := arrowTestMessage(tc.typ, tc.size, tc.schema)
		info, _, body, err := parseArrowMessage(m)
		if err != nil || len(m) != tc.size || info.headerType != tc.typ || len(body) != int(info.bodyLength) {
			t.Fatalf("%+v: %v %+v", tc, err, info)
		}
	}
}
