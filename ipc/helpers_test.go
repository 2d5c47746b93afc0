package ipc

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// testLogger returns a logger that writes into the test log (and a buffer tests can search).
type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitLog reports whether the log contains want, polling for up to 5 s: a log line may be
// written after the event a test observed (a server logs a refused handshake after its
// ERROR frame has reached the client).
func (l *logBuf) waitLog(want string) bool {
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if strings.Contains(l.String(), want) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

func newTestLogger() (*slog.Logger, *logBuf) {
	lb := &logBuf{}
	return slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug})), lb
}

// testSchema is the shape the tests stream: an int64 and a string column.
func testSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
}

func makeBatch(mem memory.Allocator, start, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, testSchema())
	defer b.Release()
	kb := b.Field(0).(*array.Int64Builder)
	sb := b.Field(1).(*array.StringBuilder)
	for i := start; i < start+n; i++ {
		kb.Append(int64(i))
		if i%7 == 0 {
			sb.AppendNull()
		} else {
			sb.Append(fmt.Sprintf("row-%d", i))
		}
	}
	return b.NewRecordBatch()
}

// testHandlers registers the handlers the ipc tests use:
//
//	echo: END {"echo": args}; batches the client uploads are sent back.
//	gen:  args {"n": batches, "rows": rows}: streams n batches.
//	block: waits for its context, then returns its error.
func testHandlers(s *Server) {
	s.Handle("echo", func(ctx context.Context, st *Stream) error {
		for {
			rec, err := st.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			err = st.Send(rec)
			rec.Release()
			if err != nil {
				return err
			}
		}
		b := mpAppendMapHeader(nil, 1)
		b = mpAppendStr(b, "echo")
		b = append(b, st.Args()...)
		return st.CloseSend(b)
	})
	s.Handle("gen", func(ctx context.Context, st *Stream) error {
		var a struct {
			N    int `msgpack:"n"`
			Rows int `msgpack:"rows"`
		}
		if err := st.DecodeArgs(&a); err != nil {
			return err
		}
		if err := st.SendSchema(testSchema()); err != nil {
			return err
		}
		for i := 0; i < a.N; i++ {
			if err := sendRelease(st, makeBatch(memory.DefaultAllocator, i*a.Rows, a.Rows)); err != nil {
				return err
			}
		}
		return nil
	})
	s.Handle("block", func(ctx context.Context, st *Stream) error {
		<-ctx.Done()
		return ctx.Err()
	})
}

type testEnv struct {
	srv     *Server
	tcp     string
	unix    string
	log     *logBuf
	cleanup func()
}

// startServer starts a server with the test handlers on a loopback TCP port and a unix
// socket in a temp dir.
func startServer(t *testing.T, cfg ServerConfig, register ...func(*Server)) *testEnv {
	t.Helper()
	lg, lb := newTestLogger()
	if cfg.Logger == nil {
		cfg.Logger = lg
	}
	s := NewServer(cfg)
	testHandlers(s)
	for _, r := range register { // before Serve: Handle is not safe beside running streams
		r(s)
	}
	tl, err := Listen(Endpoint{Network: "tcp", Address: "127.0.0.1:0"}, false)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "colink-ipc")
	if err != nil {
		t.Fatal(err)
	}
	ul, err := Listen(Endpoint{Network: "unix", Address: filepath.Join(dir, "s.sock")}, false)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := s.Serve(tl, ul); err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	env := &testEnv{srv: s, tcp: tl.Endpoint().String(), unix: ul.Endpoint().String(), log: lb}
	env.cleanup = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		<-done
		os.RemoveAll(dir)
	}
	t.Cleanup(env.cleanup)
	return env
}

func newTestClient(t testing.TB, url string, cfg ClientConfig) *Client {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger, _ = newTestLogger()
	}
	c, err := NewClient(url, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.WaitUp(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// pipePair connects a client Conn to srv over an in-memory pipe.
func pipePair(t *testing.T, srv *Server, cfg ClientConfig) *Conn {
	t.Helper()
	a, b := net.Pipe()
	go srv.ServeConn(b)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := NewClientConn(ctx, a, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// recvAll receives st's batches until EOF, failing t on an error, calls f (if not nil)
// with each batch and the rows before it, releases it, and returns the rows received.
func recvAll(t *testing.T, st *Stream, f func(rec arrow.RecordBatch, before int)) int {
	t.Helper()
	rows := 0
	for {
		rec, err := st.Recv()
		if err == io.EOF {
			return rows
		}
		if err != nil {
			t.Fatal(err)
		}
		if f != nil {
			f(rec, rows)
		}
		rows += int(rec.NumRows())
		rec.Release()
	}
}

// sendRelease sends rec on st and releases it.
func sendRelease(st *Stream, rec arrow.RecordBatch) error {
	defer rec.Release()
	return st.Send(rec)
}

// sendBatches sends n batches of rows rows on st from a goroutine, then closes the sending
// side; the channel receives the first error or the close's outcome.
func sendBatches(st *Stream, n, rows int) <-chan error {
	errc := make(chan error, 1)
	go func() {
		for i := range n {
			if err := sendRelease(st, makeBatch(memory.DefaultAllocator, i*rows, rows)); err != nil {
				errc <- err
				return
			}
		}
		errc <- st.CloseSend(nil)
	}()
	return errc
}

// recvOne receives one batch from st, failing t on an error, and releases it.
func recvOne(t *testing.T, st *Stream) {
	t.Helper()
	rec, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	rec.Release()
}

func mpMap(kv ...any) []byte {
	b := mpAppendMapHeader(nil, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		b = mpAppendStr(b, kv[i].(string))
		switch v := kv[i+1].(type) {
		case int:
			b = mpAppendInt(b, int64(v))
		case string:
			b = mpAppendStr(b, v)
		case []byte:
			b = mpAppendBin(b, v)
		}
	}
	return b
}

// stallConn wraps a pipe end so a test can freeze it: reads and writes then block until the
// connection is closed.
type stallConn struct {
	net.Conn
	mu      sync.Mutex
	stalled chan struct{}
}

func (s *stallConn) stall() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.stalled)
}

func (s *stallConn) isStalled() bool {
	select {
	case <-s.stalled:
		return true
	default:
		return false
	}
}

func (s *stallConn) Read(p []byte) (int, error) {
	n, err := s.Conn.Read(p)
	for s.isStalled() {
		time.Sleep(10 * time.Millisecond)
		if _, werr := s.Conn.Write(nil); werr != nil {
			return 0, werr
		}
	}
	return n, err
}

func (s *stallConn) Write(p []byte) (int, error) {
	for s.isStalled() {
		time.Sleep(10 * time.Millisecond)
		if _, werr := s.Conn.Write(nil); werr != nil {
			return 0, werr
		}
	}
	return s.Conn.Write(p)
}

func netPipeStalling() (net.Conn, *stallConn) {
	a, b := net.Pipe()
	return a, &stallConn{Conn: b, stalled: make(chan struct{})}
}
