package ipc

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
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
	cl, err := NewClient(ln.Endpoint().String(), ClientConfig{Transport: TransportUnix, ConnsPerPeer: 1, Logger: lg})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cl.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := cl.WaitUp(ctx); err != nil {
		b.Fatal(err)
	}
	return cl.Conns()[0]
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
