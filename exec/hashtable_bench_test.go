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

// BenchmarkSelectiveProbe looks up 800,000 keys spread over 10,000 (partsupp's suppliers at
// SF 1) in a table of the 396 of them a nation holds (Q11), hashed and direct.
func BenchmarkSelectiveProbe(b *testing.B) {
	const batch = vec.DefaultBatchRows
	var build []int64
	for k := int64(7); k < 10_000; k += 25 {
		build = append(build, k)
	}
	probes := make([]int64, 800_000)
	x := uint64(88172645463325252)
	for i := range probes {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		probes[i] = int64(x%10_000) + 1
	}
	t := newHashTable([]vec.Type{vec.Int64Type}, nil, nil)
	bk := &vec.Vec{Type: vec.Int64Type, I64: build}
	rows := make([]int32, max(len(build), batch))
	for i := range rows {
		rows[i] = int32(i)
	}
	var s probeScratch
	s.prepare(len(build))
	hashRows([]*vec.Vec{bk}, rows[:len(build)], s.h, t.seed)
	if err := t.findOrInsert([]*vec.Vec{bk}, rows[:len(build)], make([]int32, len(build)), &s, nil); err != nil {
		b.Fatal(err)
	}
	t.sizeForProbes()
	direct := t.direct
	for _, mode := range []string{"hashed", "direct"} {
		b.Run(mode, func(b *testing.B) {
			ids := make([]int32, batch)
			kv := &vec.Vec{Type: vec.Int64Type}
			for it := 0; it < b.N; it++ {
				for start := 0; start+batch <= len(probes); start += batch {
					kv.I64 = probes[start : start+batch]
					if mode == "direct" && direct != nil && t.findDirect([]*vec.Vec{kv}, rows[:batch], ids) {
						continue
					}
					s.prepare(batch)
					hashRows([]*vec.Vec{kv}, rows[:batch], s.h, t.seed)
					t.find([]*vec.Vec{kv}, rows[:batch], ids, &s)
				}
			}
			b.ReportMetric(float64(len(probes))*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mprobes/s")
		})
	}
}
