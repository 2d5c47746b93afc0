package ipc

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/internal/bufpool"
)

// Nulls in sliced batches (bitmap offsets that are not byte-aligned, unknown null counts)
// survive the link even when every recycled buffer is dirty.
func TestSlicedNullsSurvive(t *testing.T) {
	pool, srv := dirtyPoolServer(t)
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	srv.Handle("sliced", func(ctx context.Context, st *Stream) error {
		ib := array.NewInt64Builder(memory.DefaultAllocator)
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for i := 0; i < 40; i++ {
			if i%5 == 4 {
				ib.AppendNull()
				sb.AppendNull()
			} else {
				ib.Append(int64(i))
				sb.Append("v")
			}
		}
		rec := array.NewRecordBatch(schema, []arrow.Array{ib.NewArray(), sb.NewArray()}, 40)
		for off := 0; off < 12; off++ {
			sl := rec.NewSlice(int64(off), int64(off+15))
			if err := st.Send(sl); err != nil {
				return err
			}
			sl.Release()
		}
		return nil
	})
	c := pipePair(t, srv, ClientConfig{Pool: pool})
	st, err := c.Open(context.Background(), "sliced", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for off := 0; ; off++ {
		rec, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for c := 0; c < 2; c++ {
			col := rec.Column(c)
			for i := 0; i < col.Len(); i++ {
				want := (off+i)%5 == 4
				if col.IsNull(i) != want {
					t.Errorf("offset %d col %d row %d: null %v, want %v (nulls %d)", off, c, i, col.IsNull(i), want, col.NullN())
				}
			}
		}
		rec.Release()
	}
}

// A column whose every value is NULL reaches the peer as NULLs, in both directions, even
// when every recycled buffer is dirty: Arrow's IPC writer and reader allocate the all-NULL
// bitmap themselves and rely on the allocator returning zeroed memory.
func TestAllNullColumnSurvivesDirtyPool(t *testing.T) {
	pool, srv := dirtyPoolServer(t)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "d", Type: &arrow.Decimal64Type{Precision: 15, Scale: 4}, Nullable: true},
	}, nil)
	allNull := func() arrow.RecordBatch {
		ib := array.NewInt64Builder(memory.DefaultAllocator)
		db := array.NewDecimal64Builder(memory.DefaultAllocator, schema.Field(1).Type.(*arrow.Decimal64Type))
		for range 3 {
			ib.AppendNull()
			db.AppendNull()
		}
		return array.NewRecordBatch(schema, []arrow.Array{ib.NewArray(), db.NewArray()}, 3)
	}
	check := func(who string, rec arrow.RecordBatch) {
		for c := range 2 {
			col := rec.Column(c)
			for i := range col.Len() {
				if !col.IsNull(i) {
					t.Errorf("%s: col %d row %d arrived as a value, want NULL", who, c, i)
				}
			}
		}
	}
	srv.Handle("nulls", func(ctx context.Context, st *Stream) error {
		got, err := st.Recv() // client → server
		if err != nil {
			return err
		}
		check("server", got)
		got.Release()
		// Wait for the client's end of sending: a handler that returned first would end
		// the stream under the client's CloseSend (the test failed ~1 run in 75 so).
		if _, err := st.Recv(); err != io.EOF {
			return fmt.Errorf("after the batch: %v, want the client's end of sending", err)
		}
		for range 3 {
			rec := allNull()
			err := st.Send(rec)
			rec.Release()
			if err != nil {
				return err
			}
		}
		return nil
	})
	c := pipePair(t, srv, ClientConfig{Pool: pool})
	st, err := c.Open(context.Background(), "nulls", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec := allNull()
	if err := st.Send(rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	if err := st.CloseSend(nil); err != nil {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		rec, err := st.Recv()
		if err == io.EOF {
			if n != 3 {
				t.Fatalf("got %d batches, want 3", n)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		check("client", rec)
		rec.Release()
	}
}

// dirtyPoolServer returns a buffer pool whose recycled buffers are all dirty (the pool
// scribbles 0xA5 over every buffer given back, and a few buffers of every class up to
// 64 KiB are given back before the test starts), and a server (shut down at the end of the
// test) that allocates from it: code that trusts recycled memory to be zeroed shows up as
// wrong values.
func dirtyPoolServer(t *testing.T) (*bufpool.Pool, *Server) {
	pool := bufpool.New(bufpool.Options{Scribble: true})
	var bufs [][]byte
	for n := 1; n <= 1<<16; n = bufpool.SizeOf(n) + 1 {
		for range 4 {
			bufs = append(bufs, pool.Get(n))
		}
	}
	for _, b := range bufs {
		pool.Put(b)
	}
	lg, _ := newTestLogger()
	srv := NewServer(ServerConfig{Pool: pool, Logger: lg})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return pool, srv
}
