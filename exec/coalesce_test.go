package exec

import (
	"context"
	"fmt"
	"testing"

	"github.com/colinkdb/colink/exec/vec"
)

// batchesOp returns prepared batches, each valid until the next Next (the next one is a
// different batch, so a consumer that kept one too long would read changed rows).
type batchesOp struct {
	types   []vec.Type
	batches []*vec.Batch
	i       int
}

func (o *batchesOp) Types() []vec.Type          { return o.types }
func (o *batchesOp) Init(context.Context) error { return nil }
func (o *batchesOp) Close() error               { return nil }
func (o *batchesOp) Next(context.Context) (*vec.Batch, error) {
	if o.i > 0 {
		// The batch handed out last is no longer the consumer's: scribble on it.
		for _, v := range o.batches[o.i-1].Cols {
			if v.Type.ID == vec.Int64 {
				for k := range v.I64 {
					v.I64[k] = -1
				}
			}
		}
	}
	if o.i >= len(o.batches) {
		return nil, nil
	}
	o.i++
	return o.batches[o.i-1], nil
}

// TestCoalesce feeds sparse and dense batches (an int column, a string column with NULLs)
// and checks that the output holds the active rows in order, that sparse batches were
// gathered into dense ones of at most batchRows rows, and that dense ones passed through.
func TestCoalesce(t *testing.T) {
	const batchRows = 64
	types := []vec.Type{vec.Int64Type, vec.StringType}
	var want []string
	next := int64(0)
	mk := func(n int, every int) *vec.Batch {
		b := vec.NewBatch(types)
		for i := range n {
			b.Cols[0].AppendDatum(vec.Int64Datum(next))
			if next%5 == 0 {
				b.Cols[1].AppendNull()
			} else {
				b.Cols[1].AppendDatum(vec.StringDatum(fmt.Sprintf("s%d", next)))
			}
			if every > 0 && i%every == 0 {
				b.Sel = append(b.Sel, int32(i))
				want = append(want, rowText(b, i))
			} else if every == 0 {
				want = append(want, rowText(b, i))
			}
			next++
		}
		b.N = n
		if every == 0 {
			b.Sel = nil
		}
		return b
	}
	in := &batchesOp{types: types}
	// sparse ×6 (8 rows each), dense, sparse ×2, dense with a selection of half, sparse ×9
	for range 6 {
		in.batches = append(in.batches, mk(batchRows, 8))
	}
	in.batches = append(in.batches, mk(batchRows, 0))
	for range 2 {
		in.batches = append(in.batches, mk(batchRows, 8))
	}
	in.batches = append(in.batches, mk(batchRows, 2))
	for range 9 {
		in.batches = append(in.batches, mk(batchRows, 16))
	}
	c := NewCoalesce(in, batchRows)
	ctx := context.Background()
	if err := c.Init(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	var sizes []int
	for {
		b, err := c.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if b == nil {
			break
		}
		if b.Len() == 0 || b.Len() > batchRows {
			t.Fatalf("a batch of %d rows", b.Len())
		}
		sizes = append(sizes, b.Len())
		b.Rows(func(i int) { got = append(got, rowText(b, i)) })
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows:\n got %v\nwant %v", got, want)
	}
	// 6×8 = 48 gathered (≥ 48 goes out), the dense 64, 2×8 before the half-dense 32,
	// then 9×4 = 36 at the end.
	if fmt.Sprint(sizes) != "[48 64 16 32 36]" {
		t.Errorf("batch sizes %v", sizes)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func rowText(b *vec.Batch, i int) string {
	s := "NULL"
	if !b.Cols[1].IsNull(i) {
		s = string(b.Cols[1].String(i))
	}
	return fmt.Sprintf("%d:%s", b.Cols[0].I64[i], s)
}
