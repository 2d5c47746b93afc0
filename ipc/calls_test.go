package ipc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The call table hands every callback back exactly once, through slots or the spill map.
func TestCallTableSlotsAndSpill(t *testing.T) {
	var tab callTable
	const n = 3*callSlots + 7 // ids 1..n: the later ones collide with pending earlier ones
	got := make([]int, n+1)
	for id := uint32(1); id <= n; id++ {
		first := tab.add(id, func(end []byte, err error) { got[id]++ })
		if first != (id == 1) {
			t.Fatalf("add(%d) first = %v", id, first)
		}
	}
	if p := tab.pending; p != n {
		t.Fatalf("pending %d, want %d", p, n)
	}
	if tab.take(n+1) != nil || tab.take(0) != nil {
		t.Fatal("take of an id never added returned a callback")
	}
	ids := rand.Perm(n)
	for _, i := range ids[:n/2] {
		d := tab.take(uint32(i + 1))
		if d == nil {
			t.Fatalf("take(%d) = nil", i+1)
		}
		d(nil, nil)
		if tab.take(uint32(i+1)) != nil {
			t.Fatalf("take(%d) twice returned a callback", i+1)
		}
	}
	tab.drain(func(id uint32, d CallDone) { d(nil, nil) })
	for id := 1; id <= n; id++ {
		if got[id] != 1 {
			t.Fatalf("callback %d ran %d times", id, got[id])
		}
	}
	if p := tab.pending; p != 0 {
		t.Fatalf("pending %d after drain", p)
	}
}

// More Go calls than the table has slots stay pending on a server that does not answer;
// when the connection fails every callback gets the error exactly once.
func TestGoCallsFailOnceWhenConnectionCloses(t *testing.T) {
	srv, _ := newPipeServer(t, Limits{MaxStreams: 4 * callSlots})
	c := pipePair(t, srv, ClientConfig{})
	const n = callSlots + 300
	var calls, errs atomic.Int64
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range n {
		err := c.Go("block", nil, i%100 == 99 || i == n-1, func(end []byte, err error) {
			calls.Add(1)
			if errors.Is(err, ErrConnClosed) {
				errs.Add(1)
			}
			wg.Done()
		})
		if err != nil {
			t.Fatalf("Go %d: %v", i, err)
		}
	}
	waitFor(t, func() bool { return srv.Stats().Conns != nil && srv.Stats().Conns[0].StreamsActive == n })
	c.Close()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%d of %d callbacks ran", calls.Load(), n)
	}
	time.Sleep(10 * time.Millisecond)
	if calls.Load() != n || errs.Load() != n {
		t.Fatalf("%d callbacks, %d with ErrConnClosed, want %d each", calls.Load(), errs.Load(), n)
	}
	if err := c.Go("echo", nil, true, func([]byte, error) { t.Error("callback after a refused Go") }); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("Go on a closed connection: %v", err)
	}
}

// A method with only a unary handler refuses uploaded batches with a clear error instead of
// ignoring them, and still answers a stream that ends without batches.
func TestUnaryMethodRefusesUploads(t *testing.T) {
	srv, _ := newPipeServer(t, Limits{})
	srv.HandleUnary("uonly", func(ctx context.Context, args []byte) ([]byte, error) { return mpMap("ok", 1), nil })
	c := pipePair(t, srv, ClientConfig{})
	ctx := context.Background()

	st, err := c.Open(ctx, "uonly", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	rec := makeBatch(memory.DefaultAllocator, 0, 10)
	defer rec.Release()
	// The server refuses at the schema, so the batch and the END may already find the
	// stream ended.
	if err := st.Send(rec); err != nil && !errors.Is(err, ErrStreamClosed) {
		t.Fatal(err)
	}
	_ = st.CloseSend(nil)
	_, err = st.Recv()
	var re *RemoteError
	if !errors.As(err, &re) || re.Code != CodeInvalidArgument {
		t.Fatalf("upload to a unary method: %v, want invalid_argument", err)
	}
	st.Close()

	st, err = c.Open(ctx, "uonly", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CloseSend(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != io.EOF {
		t.Fatalf("unary method without FIN and without batches: %v", err)
	}
	st.Close()
	if end, err := c.Call(ctx, "uonly", nil); err != nil || len(end) == 0 {
		t.Fatalf("Call: %v %x", err, end)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not met within 5s")
}

// Client.Go waits for a connection that is still coming up, and fails with ErrPeerDown
// when the peer cannot be reached.
func TestClientGoWaitsForConnection(t *testing.T) {
	env := startServer(t, ServerConfig{})
	lg, _ := newTestLogger()
	cl, err := NewClient(env.unix, ClientConfig{Transport: TransportUnix, Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	res := make(chan error, 1)
	if err := cl.Go("echo", nil, true, func(end []byte, err error) { res <- err }); err != nil {
		t.Fatalf("Go before the connection was up: %v", err)
	}
	select {
	case err := <-res:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no reply")
	}

	down, err := NewClient("unix://"+t.TempDir()+"/none.sock", ClientConfig{Transport: TransportUnix, Logger: lg, DialTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	start := time.Now()
	err = down.Go("echo", nil, true, func([]byte, error) { t.Error("callback of a refused call") })
	if !errors.Is(err, ErrPeerDown) || time.Since(start) > 2*time.Second {
		t.Fatalf("Go to an unreachable peer after %v: %v", time.Since(start), err)
	}
}

// Append-style unary handlers build their replies in the connection's buffer; an empty
// reply is {}, a bad one or a panic is an internal error, and the next call still works.
func TestUnaryAppendHandler(t *testing.T) {
	srv, _ := newPipeServer(t, Limits{})
	srv.HandleUnaryAppend("twice", func(ctx context.Context, args, end []byte) ([]byte, error) {
		end = mpAppendMapHeader(end, 2)
		end = append(mpAppendStr(end, "a"), args...)
		return append(mpAppendStr(end, "b"), args...), nil
	})
	srv.HandleUnaryAppend("empty", func(ctx context.Context, args, end []byte) ([]byte, error) { return end, nil })
	srv.HandleUnaryAppend("bad", func(ctx context.Context, args, end []byte) ([]byte, error) { return append(end, 0x81), nil })
	srv.HandleUnaryAppend("panics", func(ctx context.Context, args, end []byte) ([]byte, error) { panic("boom") })
	c := pipePair(t, srv, ClientConfig{})
	ctx := context.Background()
	type result struct {
		end []byte
		err error
	}
	call := func(method string, args []byte) result {
		res := make(chan result, 1)
		if err := c.Go(method, args, true, func(end []byte, err error) { res <- result{bytes.Clone(end), err} }); err != nil {
			t.Fatal(err)
		}
		return <-res
	}
	for i := range 3 {
		if r := call("twice", mpAppendInt(nil, int64(i))); r.err != nil || !bytes.Equal(r.end, []byte{0x82, 0xa1, 'a', byte(i), 0xa1, 'b', byte(i)}) {
			t.Fatalf("twice %d: %x %v", i, r.end, r.err)
		}
	}
	if r := call("empty", nil); r.err != nil || string(r.end) != emptyMap {
		t.Fatalf("empty: %x %v", r.end, r.err)
	}
	for _, m := range []string{"bad", "panics"} {
		var re *RemoteError
		if r := call(m, nil); !errors.As(r.err, &re) || re.Code != CodeInternal {
			t.Fatalf("%s: %v", m, r.err)
		}
	}
	if r := call("twice", mpAppendInt(nil, 5)); r.err != nil || len(r.end) != 7 {
		t.Fatalf("after errors: %x %v", r.end, r.err)
	}
	// Without FIN the append handler serves through the stream path.
	st, err := c.Open(ctx, "twice", mpAppendInt(nil, 9), false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CloseSend(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != io.EOF || !bytes.Equal(st.End(), []byte{0x82, 0xa1, 'a', 9, 0xa1, 'b', 9}) {
		t.Fatalf("stream path: %v %x", err, st.End())
	}
}

// Call on a method that streams more than a window of batches completes (the discarded
// batches' credit goes back), and a canceled Call cancels the server's handler.
func TestCallDiscardsBatchesAndCancels(t *testing.T) {
	const window = 64 << 10
	srv, _ := newPipeServer(t, Limits{})
	c := pipePair(t, srv, ClientConfig{Limits: Limits{StreamWindow: window}})
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "gen", mpMap("n", 40, "rows", 1000)) // ~40 × 20 KB, > window
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Call on a streaming method stalled")
	}

	cctx, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	start := time.Now()
	_, err := c.Call(cctx, "block", nil)
	if !errors.Is(err, ErrCanceled) || !errors.Is(err, context.Canceled) || time.Since(start) > 3*time.Second {
		t.Fatalf("canceled Call after %v: %v", time.Since(start), err)
	}
	waitFor(t, func() bool {
		st := srv.Stats()
		return len(st.Conns) == 1 && st.Conns[0].StreamsActive == 0
	})
	if _, err := c.Call(ctx, MethodEcho, nil); err != nil {
		t.Fatalf("Call after a cancel: %v", err)
	}
}
