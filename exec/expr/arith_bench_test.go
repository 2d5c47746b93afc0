package expr

import (
	"context"
	"testing"

	"github.com/colinkdb/colink/exec/vec"
)

// BenchmarkArith times the arithmetic kernels on a batch of 8192 rows: doubles (whose
// kernels check for results beyond the finite doubles) and TPC-H's decimal shapes.
func BenchmarkArith(b *testing.B) {
	const n = 8192
	types := []vec.Type{vec.Float64Type, vec.Float64Type, vec.Decimal(15, 2), vec.Decimal(15, 2)}
	batch := vec.NewBatch(types)
	batch.N = n
	for i, c := range batch.Cols {
		c.Prepare(types[i], n)
	}
	for r := range n {
		batch.Cols[0].F64[r] = float64(r) * 1.25
		batch.Cols[1].F64[r] = float64(r%97) + 0.5
		batch.Cols[2].I64[r] = int64(r) * 1234
		batch.Cols[3].I64[r] = int64(r%10) + 1
	}
	for _, src := range []string{
		"(* #0 #1)", "(+ #0 #1)", "(/ #0 #1)",
		"(* #2 (- 1 #3))", "(/ #2 #3)", "(* (/ #2 #3) 3)",
	} {
		b.Run(src, func(b *testing.B) { benchEval(b, src, nil, types, batch, n) })
	}
}

// benchEval times src (over columns names of types) on batch, of size bytes.
func benchEval(b *testing.B, src string, names []string, types []vec.Type, batch *vec.Batch, size int64) {
	e, err := Parse(src, names)
	if err != nil {
		b.Fatal(err)
	}
	ev, err := Compile(e, types)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	for b.Loop() {
		if _, err := ev.Eval(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
}
