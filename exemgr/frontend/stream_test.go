package frontend

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// TestLargeResultStreamsInBoundedMemory reads 2M rows (about 60 MB of text) through
// go-sql-driver while sampling the process's heap: a server that built the result set in
// memory would hold it all at once.
func TestLargeResultStreamsInBoundedMemory(t *testing.T) {
	const rows = 2_000_000
	eng := newFakeEngine()
	eng.bigRows = rows
	ts := startServer(t, eng, nil)
	db := open(t, ts, "unix", "root", "", "")

	// Start from a collected heap, so that earlier tests' garbage does not count.
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	peak.Store(base)
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	r, err := db.Query("select * from big")
	if err != nil {
		t.Fatal(err)
	}
	var id, day, flag sql.RawBytes
	var amount sql.RawBytes
	n, textBytes := 0, 0
	for r.Next() {
		if err := r.Scan(&id, &amount, &day, &flag); err != nil {
			t.Fatal(err)
		}
		textBytes += len(id) + len(amount) + len(day) + len(flag)
		if n == rows-1 && (string(id) != strconv.Itoa(rows-1) || string(amount) != "139999.43") {
			t.Errorf("last row = %s %s, want %d 139999.43", id, amount, rows-1)
		}
		n++
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	close(stop)
	<-sampled
	if n != rows {
		t.Fatalf("read %d rows, want %d", n, rows)
	}
	grown := peak.Load() - base
	t.Logf("%d rows, %d MB of values in %v (%.1f M rows/s); heap in use grew by at most %d MB",
		n, textBytes>>20, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds()/1e6, grown>>20)
	if limit := uint64(24 << 20); grown > limit {
		t.Errorf("heap in use grew by %d MB while streaming %d MB: over %d MB", grown>>20, textBytes>>20, limit>>20)
	}
}

// TestClientGoneMidResult: a client that stops reading and disconnects during a large
// result cancels the engine's context.
func TestClientGoneMidResult(t *testing.T) {
	eng := newFakeEngine()
	eng.bigRows = 50_000_000 // far more than fits in socket buffers
	ts := startServer(t, eng, nil)
	db := open(t, ts, "tcp", "root", "", "")
	ctx, cancel := context.WithCancel(context.Background())
	r, err := db.QueryContext(ctx, "select * from big")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000 && r.Next(); i++ {
	}
	cancel() // go-sql-driver closes the connection
	wantCancel(t, eng, ErrClientGone, 10*time.Second, "the engine was not told the client went away")
	r.Close()
}

// TestKillMidResult: KILL QUERY during a streamed result ends it with error 1317 in place
// of the EOF, and the session goes on.
func TestKillMidResult(t *testing.T) {
	eng := newFakeEngine()
	eng.bigRows = 50_000_000
	ts := startServer(t, eng, nil)
	ctx := context.Background()
	c := rootConn(t, ts)
	var id uint32
	if err := c.QueryRowContext(ctx, "select connection_id()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	r, err := c.QueryContext(ctx, "select * from big")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000 && r.Next(); i++ {
	}
	if _, err := open(t, ts, "tcp", "root", "", "").Exec("kill query " + strconv.Itoa(int(id))); err != nil {
		t.Fatal(err)
	}
	n := 0
	for r.Next() {
		n++
	}
	if err := r.Err(); mysqlCode(err) != ErrQueryInterrupted {
		t.Errorf("after %d more rows: %v, want error 1317", n, err)
	}
	r.Close()
	if cause := <-eng.cancelled; !errors.Is(cause, ErrKilled) {
		t.Errorf("cause = %v, want ErrKilled", cause)
	}
	var one int
	if err := c.QueryRowContext(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("session after KILL QUERY: %v", err)
	}
}

// TestRowEncodingDoesNotAllocate: encoding a batch costs no allocation per row (nor per
// batch, once the buffers are warm).
func TestRowEncodingDoesNotAllocate(t *testing.T) {
	rec := typedRecord()
	defer rec.Release()
	enc, err := newRowEncoder(rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	w := newPacketWriter(io.Discard)
	allocs := testing.AllocsPerRun(100, func() {
		if err := enc.bind(rec); err != nil {
			t.Fatal(err)
		}
		if err := enc.writeRows(w, int(rec.NumRows())); err != nil {
			t.Fatal(err)
		}
		w.flush()
	})
	if allocs != 0 {
		t.Errorf("encoding a batch allocates %.0f times", allocs)
	}
}

// BenchmarkEncodeRows measures the text encoding of lineitem-like rows into the socket
// buffer (without the socket).
func BenchmarkEncodeRows(b *testing.B) {
	rows := newBigRows(context.Background(), 8192, nil)
	rec, err := rows.Next()
	if err != nil {
		b.Fatal(err)
	}
	enc, _ := newRowEncoder(rec.Schema())
	var sink countingWriter
	w := newPacketWriter(&sink)
	b.ResetTimer()
	for b.Loop() {
		enc.bind(rec)
		enc.writeRows(w, int(rec.NumRows()))
	}
	w.flush()
	b.ReportMetric(float64(b.N)*float64(rec.NumRows())/b.Elapsed().Seconds()/1e6, "Mrows/s")
	b.SetBytes(int64(sink.n) / int64(b.N))
}

type countingWriter struct{ n int }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }
