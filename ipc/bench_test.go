package ipc

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// benchEnv is a server with a unary echo over a unix socket and one client connection to it.
func benchEnv(b *testing.B) *Conn {
	b.Helper()
	lg, _ := newTestLogger()
	s := NewServer(ServerConfig{Logger: lg})
	s.HandleUnary("echo", func(ctx context.Context, args []byte) ([]byte, error) {
		end := make([]byte, 0, 8+len(args))
		end = append(end, 0x81, 0xa4, 'e', 'c', 'h', 'o')
		return append(end, args...), nil
	})
	s.HandleUnaryAppend("echoa", func(ctx context.Context, args, end []byte) ([]byte, error) {
		end = append(end, 0x81, 0xa4, 'e', 'c', 'h', 'o')
		return append(end, args...), nil
	})
	cl := newTestClient(b, benchServe(b, s), ClientConfig{Transport: TransportUnix, ConnsPerPeer: 1, Logger: lg})
	return cl.Conns()[0]
}

// benchServe serves s on a unix socket until the benchmark ends and returns its URL.
func benchServe(b *testing.B, s *Server) string {
	b.Helper()
	dir := b.TempDir()
	ln, err := Listen(Endpoint{Network: "unix", Address: filepath.Join(dir, "b.sock")}, false)
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		os.RemoveAll(dir)
	})
	return ln.Endpoint().String()
}

// BenchmarkGoPipelined keeps 64 unary calls in flight on one connection, as ipcbench's async
// mode does: a sender queues a call per token and flushes; replies return the tokens.
func BenchmarkGoPipelined(b *testing.B) {
	b.Run("alloc", func(b *testing.B) { benchGoPipelined(b, "echo") })
	b.Run("append", func(b *testing.B) { benchGoPipelined(b, "echoa") })
}

func benchGoPipelined(b *testing.B, method string) {
	c := benchEnv(b)
	args := mpAppendBin(nil, make([]byte, 64))
	const inflight = 64
	tokens := make(chan struct{}, inflight)
	for range inflight {
		tokens <- struct{}{}
	}
	var wg sync.WaitGroup
	var firstErr error
	var mu sync.Mutex
	done := func(end []byte, err error) {
		if err != nil {
			mu.Lock()
			firstErr = err
			mu.Unlock()
		}
		wg.Done()
		tokens <- struct{}{}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; {
		<-tokens
		for {
			wg.Add(1)
			if err := c.Go(method, args, false, done); err != nil {
				b.Fatal(err)
			}
			i++
			if i == b.N {
				break
			}
			select {
			case <-tokens:
				continue
			default:
			}
			break
		}
		if err := c.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
}

// BenchmarkCallSync makes one unary call at a time.
func BenchmarkCallSync(b *testing.B) {
	c := benchEnv(b)
	args := mpAppendBin(nil, make([]byte, 64))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Call(ctx, "echo", args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStream streams b.N batches of one 1 MiB int64 column from a server to a client
// over the unix socket and over shm: the client decodes each in place and releases it.
// The bytes per second are the batch bodies'.
func BenchmarkStream(b *testing.B) {
	for _, tr := range []Transport{TransportUnix, TransportShm} {
		b.Run(string(tr), func(b *testing.B) { benchStream(b, tr) })
	}
}

func benchStream(b *testing.B, tr Transport) {
	const rows = 128 << 10
	lg, _ := newTestLogger()
	s := NewServer(ServerConfig{Logger: lg})
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	bld := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range rows {
		bld.Append(int64(i))
	}
	col := bld.NewArray()
	bld.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, rows)
	col.Release()
	b.Cleanup(rec.Release)
	s.Handle("blast", func(ctx context.Context, st *Stream) error {
		var a struct {
			N int `msgpack:"n"`
		}
		if err := st.DecodeArgs(&a); err != nil {
			return err
		}
		for range a.N {
			if err := st.Send(rec); err != nil {
				return err
			}
		}
		return nil
	})
	cl, err := NewClient(benchServe(b, s), ClientConfig{Transport: tr, ConnsPerPeer: 1, Logger: lg})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cl.Close() })
	ctx := context.Background()
	if err := cl.WaitUp(ctx); err != nil {
		b.Fatal(err)
	}
	if got := cl.Conns()[0].Transport(); got != string(tr) {
		b.Fatalf("transport %s, want %s", got, tr)
	}
	b.SetBytes(rows * 8)
	b.ReportAllocs()
	b.ResetTimer()
	st, err := cl.Open(ctx, "blast", mpMap("n", b.N), true)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	n := 0
	for {
		r, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
		r.Release()
	}
	b.StopTimer()
	if n != b.N {
		b.Fatalf("%d batches, want %d", n, b.N)
	}
	if cs := cl.Conns()[0].Stats(); tr == TransportShm {
		b.ReportMetric(float64(cs.RingBatchesIn)/float64(b.N), "ring/op")
	}
}
