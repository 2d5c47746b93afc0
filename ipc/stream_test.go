package ipc

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

func newPipeServer(t *testing.T, lim Limits) (*Server, *logBuf) {
	t.Helper()
	lg, lb := newTestLogger()
	srv := NewServer(ServerConfig{Name: "pipe", Logger: lg, Limits: lim})
	testHandlers(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return srv, lb
}

// A consumer that stops reading bounds what the producer sends to about one window.
func TestFlowControlBoundsProducer(t *testing.T) {
	const window = 256 << 10
	srv, _ := newPipeServer(t, Limits{StreamWindow: window})
	c := pipePair(t, srv, ClientConfig{Limits: Limits{StreamWindow: window}})
	ctx := context.Background()
	st, err := c.Open(ctx, "gen", mpMap("n", 200, "rows", 2000), true) // ~25 KiB batches, ~5 MiB in all
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Take the first batch so the client is reading, then stall.
	recvOne(t, st)
	time.Sleep(200 * time.Millisecond)
	var sent uint64
	for _, cs := range srv.Stats().Conns {
		sent += cs.BytesOut
	}
	if sent > 2*window {
		t.Fatalf("producer sent %d bytes while the consumer stalled; window is %d", sent, window)
	}
	rows := 2000 + recvAll(t, st, func(rec arrow.RecordBatch, before int) {
		if got := rec.Column(0).(*array.Int64).Value(0); got != int64(2000+before) {
			t.Fatalf("batch starts at %d, want %d", got, 2000+before)
		}
	})
	if rows != 200*2000 {
		t.Fatalf("rows %d", rows)
	}
	var stall time.Duration
	for _, cs := range srv.Stats().Conns {
		stall += cs.CreditStall
	}
	// The pipe is synchronous and the idle client reads lazily, so part of the stall is
	// spent blocked in the pipe rather than waiting for credit.
	if stall < 30*time.Millisecond {
		t.Fatalf("server credit stall %v, want most of the 200ms the consumer stalled", stall)
	}
}

// Batches flow both ways under credit: the client uploads, echo sends them back.
func TestUploadAndEchoBatches(t *testing.T) {
	srv, _ := newPipeServer(t, Limits{StreamWindow: 128 << 10})
	c := pipePair(t, srv, ClientConfig{Limits: Limits{StreamWindow: 128 << 10}})
	ctx := context.Background()
	st, err := c.Open(ctx, "echo", mpAppendStr(nil, "up"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	errc := sendBatches(st, 50, 1000)
	n := recvAll(t, st, nil)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if n != 50000 || !strings.Contains(string(st.End()), "up") {
		t.Fatalf("rows %d end %q", n, st.End())
	}
}

func TestSchemaOnlyAndZeroRowBatches(t *testing.T) {
	srv, _ := newPipeServer(t, Limits{})
	c := pipePair(t, srv, ClientConfig{})
	st, err := c.Open(context.Background(), "gen", mpMap("n", 3, "rows", 0), true)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 0
	recvAll(t, st, func(rec arrow.RecordBatch, _ int) {
		if rec.NumRows() != 0 {
			t.Fatalf("rows %d", rec.NumRows())
		}
		n++
	})
	if n != 3 || st.Schema() == nil || st.Schema().NumFields() != 2 {
		t.Fatalf("%d batches, schema %v", n, st.Schema())
	}
	st2, err := c.Open(context.Background(), "gen", mpMap("n", 0, "rows", 0), true)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if _, err := st2.Recv(); err != io.EOF || st2.Schema() == nil {
		t.Fatalf("schema-only stream: %v schema %v", err, st2.Schema())
	}
}

func TestCancelFromClientReachesHandler(t *testing.T) {
	srv, _ := newPipeServer(t, Limits{})
	c := pipePair(t, srv, ClientConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	st, err := c.Open(ctx, "block", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	start := time.Now()
	_, err = st.Recv()
	if !errors.Is(err, ErrCanceled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Recv after cancel: %v", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("cancel took %v", took)
	}
	// The handler's context was canceled: the server has no stream left.
	deadline := time.Now().Add(2 * time.Second)
	for {
		active := 0
		for _, cs := range srv.Stats().Conns {
			active += cs.StreamsActive
		}
		if active == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server still has %d streams", active)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDeadlinePropagates(t *testing.T) {
	srv, _ := newPipeServer(t, Limits{})
	c := pipePair(t, srv, ClientConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Call(ctx, "block", nil)
	if err == nil {
		t.Fatal("block returned")
	}
	var re *RemoteError
	if !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &re) && re.Code == CodeDeadlineExceeded) {
		t.Fatalf("error %v, want a deadline", err)
	}
}

func TestServerErrorsAndUnknownMethod(t *testing.T) {
	srv, _ := newPipeServer(t, Limits{})
	c := pipePair(t, srv, ClientConfig{})
	_, err := c.Call(context.Background(), "nope", nil)
	var re *RemoteError
	if !errors.As(err, &re) || re.Code != CodeUnknownMethod || !strings.Contains(re.Message, "echo") {
		t.Fatalf("unknown method: %v", err)
	}
	_, err = c.Call(context.Background(), "gen", mpAppendStr(nil, "not a map"))
	if !errors.As(err, &re) || re.Code != CodeInvalidArgument {
		t.Fatalf("bad args: %v", err)
	}
	// The connection still works.
	if _, err := c.Call(context.Background(), "echo", nil); err != nil {
		t.Fatal(err)
	}
}

func TestConnFailureFailsStreams(t *testing.T) {
	srv, _ := newPipeServer(t, Limits{})
	c := pipePair(t, srv, ClientConfig{})
	st, err := c.Open(context.Background(), "block", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	go func() { time.Sleep(30 * time.Millisecond); c.nc.Close() }()
	_, err = st.Recv()
	if !errors.Is(err, ErrConnClosed) {
		t.Fatalf("Recv on a closed connection: %v", err)
	}
}

func TestGoCallsPipelined(t *testing.T) {
	srv, _ := newPipeServer(t, Limits{})
	c := pipePair(t, srv, ClientConfig{})
	done := make(chan error, 100)
	for i := 0; i < 100; i++ {
		if err := c.Go("echo", mpAppendInt(nil, int64(i)), i%10 == 9, func(end []byte, err error) { done <- err }); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 100; i++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d of 100 calls answered", i)
		}
	}
}

// A silent peer is detected by the heartbeat.
func TestHeartbeatDetectsSilentPeer(t *testing.T) {
	srv, _ := newPipeServer(t, Limits{})
	a, b := netPipeStalling()
	go srv.ServeConn(b)
	c, err := NewClientConn(context.Background(), a, ClientConfig{Limits: Limits{HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := c.Open(context.Background(), "block", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b.stall() // the server side stops reading and writing
	start := time.Now()
	_, err = st.Recv()
	if !errors.Is(err, ErrPeerSilent) || time.Since(start) > 2*time.Second {
		t.Fatalf("after %v: %v", time.Since(start), err)
	}
}

// Streams that can receive data are capped at MaxConnBuffer/StreamWindow per connection,
// on the client (Open) and on the server (requests without FIN); unary calls do not count.
func TestConnBufferCapsDataStreams(t *testing.T) {
	const window = 64 << 10
	srvLim := Limits{StreamWindow: window, MaxConnBuffer: 2 * window}
	if srvLim.DataStreams() != 2 {
		t.Fatalf("DataStreams %d, want 2", srvLim.DataStreams())
	}
	srv, _ := newPipeServer(t, srvLim)
	c := pipePair(t, srv, ClientConfig{Limits: Limits{StreamWindow: window, MaxConnBuffer: 3 * window}})
	ctx := context.Background()

	// Client side: three streams may receive data, the fourth is refused locally.
	var open []*Stream
	for i := range 3 {
		st, err := c.Open(ctx, "block", nil, true)
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		open = append(open, st)
	}
	if _, err := c.Open(ctx, "block", nil, true); !errors.Is(err, ErrTooManyStreams) {
		t.Fatalf("fourth stream: %v, want ErrTooManyStreams", err)
	}
	done := make(chan error, 1)
	if err := c.Go("echo", nil, true, func(end []byte, err error) { done <- err }); err != nil {
		t.Fatalf("a unary call is not a data stream: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	open[2].Close()
	st, err := c.Open(ctx, "block", nil, true)
	if err != nil {
		t.Fatalf("after a Close: %v", err)
	}
	open[2] = st

	// Server side: the FIN streams above do not count; two streams that may upload do,
	// and the client's cap is 3, so the server's refusal shows on a second one.
	for _, s := range open[1:] {
		s.Close()
	}
	up1, err := c.Open(ctx, "echo", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer up1.Close()
	up2, err := c.Open(ctx, "echo", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer up2.Close()
	// open[0] (FIN) + up1 + up2 = 3 on the client; free one client slot for the probe.
	open[0].Close()
	up3, err := c.Open(ctx, "echo", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer up3.Close()
	_, err = up3.Recv()
	var re *RemoteError
	if !errors.As(err, &re) || re.Code != CodeTooManyStreams || !strings.Contains(re.Message, "MaxConnBuffer") {
		t.Fatalf("third upload stream: %v, want too_many_streams", err)
	}
}

// ErrNotSent marks exactly the failures after which the peer cannot have seen the END or the
// request: a caller deciding whether a commit may have happened relies on it.
func TestNotSent(t *testing.T) {
	srv, _ := newPipeServer(t, Limits{})
	ctx := context.Background()

	t.Run("END after the connection failed", func(t *testing.T) {
		c := pipePair(t, srv, ClientConfig{})
		st, err := c.Open(ctx, "echo", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		c.Close()
		err = st.CloseSend(nil)
		if !errors.Is(err, ErrNotSent) || !errors.Is(err, ErrConnClosed) {
			t.Fatalf("CloseSend on a failed connection: %v, want ErrNotSent and ErrConnClosed", err)
		}
	})
	t.Run("END after the server ended the stream", func(t *testing.T) {
		c := pipePair(t, srv, ClientConfig{})
		st, err := c.Open(ctx, "gen", mpMap("n", 0, "rows", 1), false)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for {
			if _, err := st.Recv(); err != nil {
				break // the server's END
			}
		}
		if err := st.CloseSend(nil); !errors.Is(err, ErrNotSent) || !errors.Is(err, ErrStreamClosed) {
			t.Fatalf("CloseSend after the server's END: %v, want ErrNotSent and ErrStreamClosed", err)
		}
	})
	t.Run("END sent", func(t *testing.T) {
		c := pipePair(t, srv, ClientConfig{})
		st, err := c.Open(ctx, "echo", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := st.CloseSend(nil); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Recv(); err != io.EOF {
			t.Fatalf("Recv after END: %v", err)
		}
	})

	env := startServer(t, ServerConfig{})
	t.Run("call answered with an error", func(t *testing.T) {
		c := newTestClient(t, env.unix, ClientConfig{})
		_, err := c.Call(ctx, "nope", nil)
		var re *RemoteError
		if !errors.As(err, &re) || errors.Is(err, ErrNotSent) {
			t.Fatalf("unknown method: %v, want the server's error, not ErrNotSent", err)
		}
		dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if _, err := c.Call(dctx, "block", nil); err == nil || errors.Is(err, ErrNotSent) {
			t.Fatalf("a call that timed out at the server: %v, want an error that is not ErrNotSent", err)
		}
	})
	t.Run("call without a connection", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "tcp://" + ln.Addr().String()
		ln.Close() // nothing listens there now
		lg, _ := newTestLogger()
		c, err := NewClient(url, ClientConfig{Logger: lg})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if _, err := c.Call(dctx, "echo", nil); !errors.Is(err, ErrNotSent) || !errors.Is(err, ErrPeerDown) {
			t.Fatalf("call with no connection: %v, want ErrNotSent and ErrPeerDown", err)
		}
	})
}
