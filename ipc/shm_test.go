package ipc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The shm transport over real unix sockets: batches arrive intact through the rings,
// flow control bounds a stalled consumer as on the sockets, a dying peer fails the streams
// and the segments go once the application lets go, TCP never negotiates shared memory,
// and a peer that does not offer it gets the plain unix socket.

const testShmSize = 1 << 20

// shmClient connects to url with transport shm and segments of size bytes (one
// connection), and returns it with its connection.
func shmClient(t *testing.T, url string, size int64, window int) (*Client, *Conn) {
	t.Helper()
	cl := newTestClient(t, url, ClientConfig{Transport: TransportShm, ConnsPerPeer: 1, Limits: Limits{ShmSize: size, StreamWindow: window}})
	conns := cl.Conns()
	if len(conns) != 1 {
		t.Fatalf("%d connections", len(conns))
	}
	return cl, conns[0]
}

// recvBatches receives st's batches until its end, checking that the i-th is
// makeBatch(first+i*rows, rows); it returns them if keep (else releases each), and their
// number.
func recvBatches(t *testing.T, st *Stream, first, rows int, keep bool) ([]arrow.RecordBatch, int) {
	t.Helper()
	var kept []arrow.RecordBatch
	for i := 0; ; i++ {
		rec, err := st.Recv()
		if err == io.EOF {
			return kept, i
		}
		if err != nil {
			t.Fatal(err)
		}
		checkBatch(t, rec, first+i*rows, rows)
		if keep {
			kept = append(kept, rec)
		} else {
			rec.Release()
		}
	}
}

// checkBatch checks that rec is makeBatch(start, n).
func checkBatch(t *testing.T, rec arrow.RecordBatch, start, n int) {
	t.Helper()
	if int(rec.NumRows()) != n {
		t.Fatalf("batch of %d rows, want %d", rec.NumRows(), n)
	}
	k := rec.Column(0).(*array.Int64)
	s := rec.Column(1).(*array.String)
	for i := range n {
		v := start + i
		if k.Value(i) != int64(v) {
			t.Fatalf("row %d: k=%d, want %d", i, k.Value(i), v)
		}
		if v%7 == 0 {
			if !s.IsNull(i) {
				t.Fatalf("row %d: s=%q, want null", i, s.Value(i))
			}
		} else if s.Value(i) != fmt.Sprintf("row-%d", v) {
			t.Fatalf("row %d: s=%q", i, s.Value(i))
		}
	}
}

func serverConn(t *testing.T, srv *Server) ConnStats {
	t.Helper()
	st := srv.Snapshot(StatsOptions{})
	if len(st.Conns) != 1 {
		t.Fatalf("server has %d connections", len(st.Conns))
	}
	return st.Conns[0]
}

// Batches both ways through the rings, compared row by row; the counters show that the
// rings carried the bodies and the socket only their descriptors.
func TestShmStreamsIntact(t *testing.T) {
	const size = 8 << 20 // room for the whole stream: no fallbacks
	env := startServer(t, ServerConfig{Name: "shm", Limits: Limits{ShmSize: size}})
	_, c := shmClient(t, env.unix, size, 0)
	if c.Transport() != "shm" || c.Stats().ShmSize != size {
		t.Fatalf("transport %s, shm size %d", c.Transport(), c.Stats().ShmSize)
	}
	ctx := context.Background()
	st, err := c.Open(ctx, "gen", mpMap("n", 200, "rows", 1000), true)
	if err != nil {
		t.Fatal(err)
	}
	var held []arrow.RecordBatch // kept a while, released out of order
	for i := 0; ; i++ {
		rec, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		checkBatch(t, rec, i*1000, 1000)
		held = append(held, rec)
		if len(held) == 3 {
			held[1].Release()
			held[2].Release()
			checkBatch(t, held[0], (i-2)*1000, 1000)
			held[0].Release()
			held = held[:0]
		}
	}
	for _, r := range held {
		r.Release()
	}
	st.Close()
	cs := c.Stats()
	if cs.RingBatchesIn != 200 || cs.RingBytesIn < 200*8000 || cs.SocketBytesIn > cs.RingBytesIn/4 || cs.BytesIn != cs.SocketBytesIn+cs.RingBytesIn || cs.RingWakeups != 0 {
		t.Errorf("client: %d ring batches in, %d ring bytes, %d socket bytes, %d in all, %d wake-ups sent", cs.RingBatchesIn, cs.RingBytesIn, cs.SocketBytesIn, cs.BytesIn, cs.RingWakeups)
	}
	ss := serverConn(t, env.srv)
	if ss.Transport != "shm" || ss.RingBatchesOut != 200 || ss.RingBytesOut != cs.RingBytesIn || ss.RingWakeups == 0 || ss.RingWakeups > 200 || ss.RingFallbacks != 0 {
		t.Errorf("server: transport %s, %d ring batches out, %d bytes, %d wake-ups, %d fallbacks", ss.Transport, ss.RingBatchesOut, ss.RingBytesOut, ss.RingWakeups, ss.RingFallbacks)
	}
	if n := c.shm.rx.outstanding(); n != 0 {
		t.Errorf("%d regions outstanding after every batch was released", n)
	}

	// Uploads: the client's ring toward the server, echoed back through the server's.
	st, err = c.Open(ctx, "echo", mpAppendStr(nil, "up"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	errc := sendBatches(st, 50, 500)
	recvBatches(t, st, 0, 500, false)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if cs := c.Stats(); cs.RingBatchesOut != 50 || cs.RingBatchesIn != 250 {
		t.Errorf("client after the upload: %d ring batches out, %d in", cs.RingBatchesOut, cs.RingBatchesIn)
	}
	if ss := serverConn(t, env.srv); ss.RingBatchesIn != 50 {
		t.Errorf("server after the upload: %d ring batches in", ss.RingBatchesIn)
	}
}

// Bodies larger than the ring, and bodies that find it full, go on the socket, in order,
// and are counted as fallbacks.
func TestShmFallsBackToSocket(t *testing.T) {
	env := startServer(t, ServerConfig{Name: "shm", Limits: Limits{ShmSize: MinShmSize}})
	_, c := shmClient(t, env.unix, MinShmSize, 0)
	ctx := context.Background()
	// 5000 rows: a body of some 80 KB, more than the 60 KiB ring; 100 rows fit.
	st, err := c.Open(ctx, "gen", mpMap("n", 4, "rows", 5000), true)
	if err != nil {
		t.Fatal(err)
	}
	recvBatches(t, st, 0, 5000, false)
	st.Close()
	if ss := serverConn(t, env.srv); ss.RingFallbacks != 4 || ss.RingBatchesOut != 0 {
		t.Errorf("large bodies: %d fallbacks, %d ring batches", ss.RingFallbacks, ss.RingBatchesOut)
	}
	// A consumer holding every batch fills the ring: the rest take the socket, in order.
	st, err = c.Open(ctx, "gen", mpMap("n", 60, "rows", 100), true)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	held, _ := recvBatches(t, st, 0, 100, true)
	ss := serverConn(t, env.srv)
	if ss.RingBatchesOut == 0 || ss.RingFallbacks == 4 || ss.RingBatchesOut+ss.RingFallbacks != 64 {
		t.Errorf("a full ring: %d ring batches, %d fallbacks", ss.RingBatchesOut, ss.RingFallbacks)
	}
	for i, r := range held {
		checkBatch(t, r, i*100, 100) // the regions still hold what they held
		r.Release()
	}
}

// A consumer that stops reading bounds what the producer sends through the ring to about
// one window, as on the sockets.
func TestShmFlowControlBoundsProducer(t *testing.T) {
	const window = 256 << 10
	env := startServer(t, ServerConfig{Name: "shm", Limits: Limits{ShmSize: 8 << 20, StreamWindow: window}})
	_, c := shmClient(t, env.unix, 8<<20, window)
	st, err := c.Open(context.Background(), "gen", mpMap("n", 200, "rows", 2000), true)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recvOne(t, st)
	time.Sleep(200 * time.Millisecond)
	ss := serverConn(t, env.srv)
	if ss.RingBytesOut > 2*window || ss.CreditWaits == 0 {
		t.Fatalf("the producer put %d bytes in the ring (%d credit waits) while the consumer stalled; window %d", ss.RingBytesOut, ss.CreditWaits, window)
	}
	if _, n := recvBatches(t, st, 2000, 2000, false); n != 199 {
		t.Fatalf("%d batches after the first, want 199", n)
	}
}

// A server that goes away mid-stream fails the stream with a clear error; the batches the
// application still holds stay readable, and the segments go when they are released.
func TestShmPeerClosesMidStream(t *testing.T) {
	half := func(ctx context.Context, st *Stream) error {
		if err := st.SendSchema(testSchema()); err != nil {
			return err
		}
		for i := range 3 {
			rec := makeBatch(memory.DefaultAllocator, i*100, 100)
			err := st.Send(rec)
			rec.Release()
			if err != nil {
				return err
			}
		}
		time.Sleep(50 * time.Millisecond)
		st.Conn().Close() // the process "dies": its socket closes mid-stream
		<-ctx.Done()
		return ctx.Err()
	}
	env := startServer(t, ServerConfig{Name: "shm", Limits: Limits{ShmSize: testShmSize}},
		func(s *Server) { s.Handle("half", half) })
	_, c := shmClient(t, env.unix, testShmSize, 0)
	st, err := c.Open(context.Background(), "half", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var held []arrow.RecordBatch
	for {
		rec, err := st.Recv()
		if err != nil {
			if !errors.Is(err, ErrConnClosed) || !strings.Contains(err.Error(), "closed the connection") {
				t.Fatalf("stream error %v, want the peer's close", err)
			}
			break
		}
		held = append(held, rec)
	}
	if len(held) != 3 {
		t.Fatalf("%d batches before the close, want 3", len(held))
	}
	rx := c.shm.rxSeg
	if refs := rx.refs.Load(); refs != 3 {
		t.Fatalf("the segment has %d references with 3 batches held after the close, want 3", refs)
	}
	for i, r := range held {
		checkBatch(t, r, i*100, 100)
		r.Release()
	}
	if refs := rx.refs.Load(); refs != 0 {
		t.Fatalf("the segment has %d references after every release: not unmapped", refs)
	}
	if refs := c.shm.txSeg.refs.Load(); refs != 0 {
		t.Fatalf("the client's own segment has %d references after the close", refs)
	}
}

// A TCP connection never negotiates shared memory, whatever the client asks; a unix one
// to a peer that does not offer it is the plain unix socket, and says so in the log.
func TestShmNegotiation(t *testing.T) {
	env := startServer(t, ServerConfig{Name: "shm", Limits: Limits{ShmSize: testShmSize}})
	ctx := context.Background()
	nc, err := net.Dial("tcp", strings.TrimPrefix(env.tcp, "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClientConn(ctx, nc, ClientConfig{Transport: TransportShm, Limits: Limits{ShmSize: testShmSize}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Transport() != "tcp" || c.shm != nil || c.core.shmSize != 0 {
		t.Fatalf("TCP connection: transport %s, shm size %d", c.Transport(), c.core.shmSize)
	}
	if _, err := c.Call(ctx, "echo", nil); err != nil {
		t.Fatal(err)
	}
	c.Close()

	// Through the TCP URL of a local peer: its unix socket, with shared memory.
	for _, tr := range []Transport{TransportShm, TransportAuto} {
		cl := newTestClient(t, env.tcp, ClientConfig{Transport: tr, Limits: Limits{ShmSize: testShmSize}})
		for _, c := range cl.Conns() {
			if c.Transport() != "shm" {
				t.Errorf("%s to a local tcp URL: %s", tr, c.Transport())
			}
		}
	}
	if _, err := NewClient("tcp://192.0.2.1:8620", ClientConfig{Transport: TransportShm}); err == nil || !strings.Contains(err.Error(), "not on this host") {
		t.Errorf("transport shm to a remote peer: %v", err)
	}

	// A server with shared memory disabled: the plain unix socket, logged.
	plain := startServer(t, ServerConfig{Name: "plain", Limits: Limits{ShmSize: -1}})
	lg, lb := newTestLogger()
	cl := newTestClient(t, plain.unix, ClientConfig{Transport: TransportShm, ConnsPerPeer: 1, Logger: lg, Limits: Limits{ShmSize: testShmSize}})
	if c := cl.Conns()[0]; c.Transport() != "unix" {
		t.Fatalf("a peer without shared memory: %s", c.Transport())
	}
	if !lb.waitLog("does not offer shared memory") || !lb.waitLog("level=WARN") {
		t.Errorf("no warning of the fallback:\n%s", lb.String())
	}
	st, err := cl.Open(ctx, "gen", mpMap("n", 3, "rows", 100), true)
	if err != nil {
		t.Fatal(err)
	}
	recvBatches(t, st, 0, 100, false)
	st.Close()
	// A client that does not ask gets none, even from a server that offers it.
	cl = newTestClient(t, env.unix, ClientConfig{Transport: TransportUnix, ConnsPerPeer: 1})
	if c := cl.Conns()[0]; c.Transport() != "unix" {
		t.Fatalf("transport unix: %s", c.Transport())
	}
}

// A client that cannot map the segments the server agreed to dials again without shared
// memory. The client here reaches the server through a byte proxy, which (like any
// read(2)) drops the descriptors passed with the server's hello.
func TestShmSetupFailureFallsBack(t *testing.T) {
	env := startServer(t, ServerConfig{Name: "shm", Limits: Limits{ShmSize: testShmSize}})
	path := filepath.Join(t.TempDir(), "proxy.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			a, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("unix", strings.TrimPrefix(env.unix, "unix://"))
			if err != nil {
				a.Close()
				continue
			}
			go func() { _, _ = io.Copy(a, b); a.Close() }()
			go func() { _, _ = io.Copy(b, a); b.Close() }()
		}
	}()
	lg, lb := newTestLogger()
	cl := newTestClient(t, "unix://"+path, ClientConfig{Transport: TransportShm, ConnsPerPeer: 1, Logger: lg, Limits: Limits{ShmSize: testShmSize}})
	if c := cl.Conns()[0]; c.Transport() != "unix" {
		t.Fatalf("through the proxy: %s", c.Transport())
	}
	if !lb.waitLog("shared memory could not be set up") || !lb.waitLog("passed 0 descriptors") {
		t.Errorf("no log of the failed set-up:\n%s", lb.String())
	}
	if _, err := cl.Call(context.Background(), "echo", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(env.srv.Snapshot(StatsOptions{}).Conns) == 1 })
	if ss := serverConn(t, env.srv); ss.Transport != "unix" {
		t.Errorf("the server's side of the redial: %s", ss.Transport)
	}
}

func TestParseTransport(t *testing.T) {
	for _, s := range []string{"tcp", "unix", "shm", "auto"} {
		if tr, err := ParseTransport(s); err != nil || string(tr) != s {
			t.Errorf("%q: %q, %v", s, tr, err)
		}
	}
	if tr, err := ParseTransport(""); err != nil || tr != DefaultTransport {
		t.Errorf("the default: %q, %v", tr, err)
	}
	if _, err := ParseTransport("memfd"); err == nil || !strings.Contains(err.Error(), "shm") {
		t.Errorf("an unknown transport: %v", err)
	}
}

// The server holds at most MaxShmConns connections with shared memory: a unix client
// beyond them is served over the socket (auto falls back; shm is refused by the client),
// and a place freed by a connection's end serves the next. ShmBytes states the bound.
func TestShmConnsBounded(t *testing.T) {
	cfg := ServerConfig{Name: "shm", MaxShmConns: 1, Limits: Limits{ShmSize: testShmSize}}
	if got, want := cfg.ShmBytes(), int64(2*testShmSize); got != want {
		t.Fatalf("ShmBytes %d, want %d", got, want)
	}
	env := startServer(t, cfg)
	ccfg := ClientConfig{Transport: TransportAuto, ConnsPerPeer: 1, Limits: Limits{ShmSize: testShmSize}}
	if got, want := ccfg.ShmBytes(3), int64(3*2*testShmSize); got != want {
		t.Fatalf("client ShmBytes %d, want %d", got, want)
	}
	if got := (ClientConfig{Transport: TransportUnix}).ShmBytes(3); got != 0 {
		t.Fatalf("transport unix maps %d bytes of shared memory", got)
	}
	first := newTestClient(t, env.unix, ccfg)
	if c := first.Conns()[0]; c.Transport() != "shm" {
		t.Fatalf("the first connection: %s", c.Transport())
	}
	second := newTestClient(t, env.unix, ccfg)
	if c := second.Conns()[0]; c.Transport() != "unix" {
		t.Fatalf("the connection beyond MaxShmConns: %s", c.Transport())
	}
	if _, err := second.Call(context.Background(), "echo", nil); err != nil {
		t.Fatal(err)
	}
	first.Close()
	second.Close()
	waitFor(t, func() bool { return len(env.srv.Snapshot(StatsOptions{}).Conns) == 0 })
	third := newTestClient(t, env.unix, ccfg)
	if c := third.Conns()[0]; c.Transport() != "shm" {
		t.Fatalf("after the shm connection ended: %s", c.Transport())
	}
}
