package exec

import (
	"fmt"
	"testing"

	"github.com/colinkdb/colink/exec/vec"
)

// BenchmarkHashTable inserts keys then looks every key up again, in batches of 1024 rows,
// with the keys in a random order: distinct keys (groups) of 1.5M (Q18's orders) and 200k
// (Q17's parts), each seen four times.
func BenchmarkHashTable(b *testing.B) {
	for _, groups := range []int{200_000, 1_500_000} {
		b.Run(fmt.Sprintf("groups=%d", groups), func(b *testing.B) { benchHashTable(b, groups) })
	}
}

func benchHashTable(b *testing.B, groups int) {
	const batch = vec.DefaultBatchRows
	n := groups * 4
	keys := make([]int64, n)
	x := uint64(88172645463325252)
	for i := range keys {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		keys[i] = int64(x%uint64(groups)) * 4
	}
	kv := &vec.Vec{Type: vec.Int64Type}
	ids := make([]int32, batch)
	var rows []int32
	for i := range batch {
		rows = append(rows, int32(i))
	}
	var s probeScratch
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		t := newHashTable([]vec.Type{vec.Int64Type}, nil, nil)
		for pass := 0; pass < 2; pass++ {
			for start := 0; start+batch <= n; start += batch {
				kv.I64 = keys[start : start+batch]
				s.prepare(batch)
				hashRows([]*vec.Vec{kv}, rows, s.h, t.seed)
				if pass == 0 {
					if err := t.findOrInsert([]*vec.Vec{kv}, rows, ids, &s, nil); err != nil {
						b.Fatal(err)
					}
				} else {
					t.find([]*vec.Vec{kv}, rows, ids, &s)
				}
			}
		}
		if t.len() != groups && t.len() < groups*9/10 {
			b.Fatalf("%d groups", t.len())
		}
	}
	b.ReportMetric(float64(2*n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mlookups/s")
}
