package ipc

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	arrowipc "github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/vmihailenco/msgpack/v5"
)

// Flow-control progress: whatever the window and the frame sizes, a stream whose consumer
// keeps reading completes. These tests failed (timed out) while a receiver held back
// consumed bytes below its grant threshold: small frames, then one at least (window − those
// bytes), left both sides waiting for each other.

// blobSchema is one non-null binary column: a batch of one row of L bytes is an Arrow
// message of a fixed overhead plus L rounded up to 8.
var blobSchema = arrow.NewSchema([]arrow.Field{{Name: "b", Type: arrow.BinaryTypes.Binary}}, nil)

func blobBatch(mem memory.Allocator, l int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, blobSchema)
	defer b.Release()
	b.Field(0).(*array.BinaryBuilder).Append(make([]byte, l))
	return b.NewRecordBatch()
}

// messageSize is the length of rec's Arrow IPC message: the payload of its BATCH frame.
func messageSize(t testing.TB, rec arrow.RecordBatch) int {
	p, err := arrowipc.GetRecordBatchPayload(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	meta := p.Meta()
	defer meta.Release()
	var body countWriter
	if err := p.SerializeBody(&body); err != nil {
		t.Fatal(err)
	}
	return 8 + (meta.Len()+7)&^7 + int(body)
}

type countWriter int64

func (w *countWriter) Write(p []byte) (int, error) { *w += countWriter(len(p)); return len(p), nil }

// blobSizer turns target frame sizes into blob lengths: the frame it gives is at most 7
// bytes below the target (and no smaller than an empty blob's).
type blobSizer struct{ overhead int }

func newBlobSizer(t testing.TB) blobSizer {
	rec := blobBatch(memory.DefaultAllocator, 0)
	defer rec.Release()
	return blobSizer{overhead: messageSize(t, rec)}
}

func (z blobSizer) blobLen(target int) int { return max(0, target-z.overhead) &^ 7 }

// sizeHandlers registers "sizes" (args {"sizes": [...]}: a schema, then one batch per target
// frame size) and "drain" (receives every batch, ends with {"rows": n}).
func sizeHandlers(s *Server, z blobSizer) {
	s.Handle("sizes", func(ctx context.Context, st *Stream) error {
		var a struct {
			Sizes []int `msgpack:"sizes"`
		}
		if err := st.DecodeArgs(&a); err != nil {
			return err
		}
		if err := st.SendSchema(blobSchema); err != nil {
			return err
		}
		for _, n := range a.Sizes {
			if err := sendRelease(st, blobBatch(memory.DefaultAllocator, z.blobLen(n))); err != nil {
				return err
			}
		}
		return nil
	})
	s.Handle("drain", func(ctx context.Context, st *Stream) error {
		rows := 0
		for {
			rec, err := st.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			rows += int(rec.NumRows())
			rec.Release()
		}
		return st.CloseSendMap(map[string]any{"rows": rows})
	})
}

// flowCase is one stream: frames of the given target sizes (after the schema) sent to a
// receiver granting window bytes, which pauses for pause after every frame.
type flowCase struct {
	window int
	sizes  []int
	upload bool // client → server (the server's window) instead of server → client
	pause  time.Duration
}

func (fc flowCase) String() string {
	dir := "down"
	if fc.upload {
		dir = "up"
	}
	return fmt.Sprintf("%s window=%d sizes=%v pause=%v", dir, fc.window, fc.sizes, fc.pause)
}

// runFlowCase runs fc over an in-memory pipe and fails t if the stream does not complete
// within limit.
func runFlowCase(t *testing.T, z blobSizer, fc flowCase, limit time.Duration) {
	t.Helper()
	lg, _ := newTestLogger()
	srv := NewServer(ServerConfig{Name: "flow", Logger: lg, Limits: Limits{StreamWindow: fc.window, MaxFrame: 8 * fc.window}})
	sizeHandlers(srv, z)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}()
	a, b := net.Pipe()
	go srv.ServeConn(b)
	hctx, hcancel := context.WithTimeout(context.Background(), 5*time.Second)
	c, err := NewClientConn(hctx, a, ClientConfig{Limits: Limits{StreamWindow: fc.window, MaxFrame: 8 * fc.window}})
	hcancel()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var got int
	if fc.upload {
		st, err := c.Open(ctx, "drain", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := st.SendSchema(blobSchema); err != nil {
			t.Fatalf("%v: schema: %v", fc, err)
		}
		for i, n := range fc.sizes {
			rec := blobBatch(memory.DefaultAllocator, z.blobLen(n))
			err := st.Send(rec)
			rec.Release()
			if err != nil {
				t.Fatalf("%v: no progress: frame %d (%d bytes) not sent: %v", fc, i, n, err)
			}
		}
		if err := st.CloseSend(nil); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Recv(); err != io.EOF {
			t.Fatalf("%v: %v", fc, err)
		}
		var end struct {
			Rows int `msgpack:"rows"`
		}
		if err := st.DecodeEnd(&end); err != nil {
			t.Fatal(err)
		}
		got = end.Rows
	} else {
		args, _ := msgpack.Marshal(map[string]any{"sizes": fc.sizes})
		st, err := c.Open(ctx, "sizes", args, true)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for {
			rec, err := st.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%v: no progress after %d of %d frames: %v", fc, got, len(fc.sizes), err)
			}
			got += int(rec.NumRows())
			rec.Release()
			if fc.pause > 0 {
				time.Sleep(fc.pause)
			}
		}
	}
	if got != len(fc.sizes) {
		t.Fatalf("%v: %d batches arrived", fc, got)
	}
}

// Every frame size relative to the window, in both directions, at the smallest window.
func TestFlowControlProgressAtEveryFrameSize(t *testing.T) {
	z := newBlobSizer(t)
	const w = MinMaxFrame // the smallest window a side may announce
	for _, n := range []int{
		1, w / 8, w/4 - 8, w / 4, w/4 + 8, w / 2, 3 * w / 4, 3*w/4 + 8,
		w - 512, w - 64, w - 8, w, w + 8, w + w/4, 2 * w, 3 * w,
	} {
		for _, prefix := range [][]int{nil, {1}, {w / 8}, {w/4 - 64}, {w / 8, w / 16}} {
			sizes := append(append([]int(nil), prefix...), n, n, 1, n)
			for _, up := range []bool{false, true} {
				fc := flowCase{window: w, sizes: sizes, upload: up}
				t.Run(fmt.Sprintf("%v", fc), func(t *testing.T) { runFlowCase(t, z, fc, 10*time.Second) })
				if t.Failed() {
					return
				}
			}
		}
	}
}

// A property test: random windows and frame sizes (many near the thresholds that matter),
// random consumer pauses, both directions; every stream must complete. COLINK_FLOW_CASES
// sets the number of cases (default 60), COLINK_FLOW_SEED the seed (default: time).
func TestFlowControlProgressRandom(t *testing.T) {
	z := newBlobSizer(t)
	cases := 60
	if s := os.Getenv("COLINK_FLOW_CASES"); s != "" {
		cases, _ = strconv.Atoi(s)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("COLINK_FLOW_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (COLINK_FLOW_SEED reproduces it)", seed)
	rng := rand.New(rand.NewPCG(seed, 0x636f6c696e6b))
	for i := range cases {
		w := MinMaxFrame << rng.IntN(4) // 64 KiB .. 512 KiB
		w += rng.IntN(w/8) &^ 7
		k := 1 + rng.IntN(8)
		sizes := make([]int, k)
		for j := range sizes {
			switch rng.IntN(4) {
			case 0: // small
				sizes[j] = 1 + rng.IntN(w/8)
			case 1: // around the thresholds: a quarter window, what is left after the rest, the window
				anchors := []int{w / 4, w - z.overhead, w - w/8, w, 2 * w}
				sizes[j] = max(1, anchors[rng.IntN(len(anchors))]+rng.IntN(129)-64)
			default:
				sizes[j] = 1 + rng.IntN(5*w/2)
			}
		}
		fc := flowCase{window: w, sizes: sizes, upload: rng.IntN(2) == 0}
		if rng.IntN(4) == 0 {
			fc.pause = time.Duration(rng.IntN(3)) * time.Millisecond
		}
		t.Run(strconv.Itoa(i), func(t *testing.T) { runFlowCase(t, z, fc, 10*time.Second) })
		if t.Failed() {
			t.Fatalf("seed %d case %d: %v", seed, i, fc)
		}
	}
}
