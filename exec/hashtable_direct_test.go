package exec

import (
	"math"
	"testing"

	"github.com/colinkdb/colink/exec/vec"
)

// readyTable is a complete table of kv's first n keys, readied for probes (its direct
// index or key filter built).
func readyTable(t *testing.T, kv *vec.Vec, n int) *hashTable {
	t.Helper()
	ht := newHashTable([]vec.Type{kv.Type}, nil, nil)
	rows := make([]int32, n)
	for i := range rows {
		rows[i] = int32(i)
	}
	var s probeScratch
	s.prepare(n)
	hashRows([]*vec.Vec{kv}, rows, s.h, ht.seed)
	if err := ht.findOrInsert([]*vec.Vec{kv}, rows, make([]int32, n), &s, nil); err != nil {
		t.Fatal(err)
	}
	ht.sizeForProbes()
	return ht
}

// TestDirectIndex checks the direct index against the hashed one: for dense keys of each
// integer width (negative ones and the int64 extremes' neighbours included) every probe,
// present, absent or outside the span, gets the id the hashed lookup gives; sparse keys get
// no direct index; and an insert after the table was readied drops it, so the new key is
// found.
func TestDirectIndex(t *testing.T) {
	probe := func(t *testing.T, ht *hashTable, kv *vec.Vec, n int) {
		t.Helper()
		rows := make([]int32, n)
		for i := range rows {
			rows[i] = int32(i)
		}
		want, got := make([]int32, n), make([]int32, n)
		var s probeScratch
		s.prepare(n)
		hashRows([]*vec.Vec{kv}, rows, s.h, ht.seed)
		ht.find([]*vec.Vec{kv}, rows, want, &s)
		if !ht.findDirect([]*vec.Vec{kv}, rows, got) {
			t.Fatal("no direct lookup for dense keys")
		}
		for i := range rows {
			if got[i] != want[i] {
				t.Fatalf("probe %d: direct id %d, hashed %d", i, got[i], want[i])
			}
		}
	}
	build := readyTable

	for _, base := range []int64{-5000, 0, 1 << 40, math.MaxInt64 - 20000} {
		// Every third key of a span of 3,000 from base, built in descending order.
		var keys []int64
		for k := int64(2999); k >= 0; k -= 3 {
			keys = append(keys, base+k)
		}
		ht := build(t, &vec.Vec{Type: vec.Int64Type, I64: keys}, len(keys))
		if ht.direct == nil {
			t.Fatalf("base %d: no direct index for 1,000 keys over a span of 3,000", base)
		}
		var probes []int64
		for k := int64(-10); k < 3010; k++ {
			probes = append(probes, base+k)
		}
		probes = append(probes, math.MinInt64, math.MaxInt64, base-1<<40)
		probe(t, ht, &vec.Vec{Type: vec.Int64Type, I64: probes}, len(probes))
	}

	t.Run("int32 and date32", func(t *testing.T) {
		for _, ty := range []vec.Type{vec.Int32Type, {ID: vec.Date32}} {
			var keys, probes []int32
			for k := int32(-100); k < 900; k += 2 {
				keys = append(keys, k)
			}
			for k := int32(-200); k < 1000; k++ {
				probes = append(probes, k)
			}
			probes = append(probes, math.MinInt32, math.MaxInt32)
			ht := build(t, &vec.Vec{Type: ty, I32: keys}, len(keys))
			probe(t, ht, &vec.Vec{Type: ty, I32: probes}, len(probes))
		}
	})

	t.Run("sparse keys are hashed", func(t *testing.T) {
		keys := []int64{0, 1 << 30, 1 << 31, 1 << 50}
		ht := build(t, &vec.Vec{Type: vec.Int64Type, I64: keys}, len(keys))
		if ht.direct != nil || ht.findDirect([]*vec.Vec{{Type: vec.Int64Type, I64: keys}}, []int32{0}, make([]int32, 1)) {
			t.Fatal("a direct index over a span of 2^50")
		}
	})

	t.Run("sparse keys over a small span are direct", func(t *testing.T) {
		// 396 keys spread over 10,000, as Germany's suppliers are at SF 1.
		var keys, probes []int64
		for k := int64(7); k < 10_000; k += 25 {
			keys = append(keys, k)
		}
		for k := int64(-3); k < 10_005; k++ {
			probes = append(probes, k)
		}
		ht := build(t, &vec.Vec{Type: vec.Int64Type, I64: keys}, len(keys))
		if ht.direct == nil {
			t.Fatalf("no direct index for %d keys over a span of 10,000", len(keys))
		}
		probe(t, ht, &vec.Vec{Type: vec.Int64Type, I64: probes}, len(probes))
	})

	t.Run("an insert drops it", func(t *testing.T) {
		keys := []int64{10, 11, 12}
		ht := build(t, &vec.Vec{Type: vec.Int64Type, I64: keys}, len(keys))
		if ht.direct == nil {
			t.Fatal("no direct index")
		}
		kv := &vec.Vec{Type: vec.Int64Type, I64: []int64{13}}
		var s probeScratch
		s.prepare(1)
		hashRows([]*vec.Vec{kv}, []int32{0}, s.h, ht.seed)
		ids := []int32{0}
		if err := ht.findOrInsert([]*vec.Vec{kv}, []int32{0}, ids, &s, nil); err != nil || ids[0] != 3 {
			t.Fatalf("insert: id %d, %v", ids[0], err)
		}
		if ht.direct != nil {
			t.Fatal("the direct index outlived an insert")
		}
		ht.sizeForProbes()
		probe(t, ht, &vec.Vec{Type: vec.Int64Type, I64: []int64{9, 10, 13, 14}}, 4)
	})
}

// TestKeyFilter checks the key filter of a table too sparse for a direct index: for
// Q17's shape (204 keys among 200,000), int64 and int32, it lets through exactly the
// probes whose key is present (a bit stands for one key), absent keys outside the span
// and the types' extremes included; dense keys, a span past maxFilterSpan and an insert
// leave no filter.
func TestKeyFilter(t *testing.T) {
	build := readyTable
	// check probes every key of [lo-50, hi+50] and the type's extremes: the filter must
	// pass exactly the present keys.
	check := func(t *testing.T, ht *hashTable, probes *vec.Vec, present func(i int) bool) {
		t.Helper()
		n := probes.Len()
		rows := make([]int32, n)
		for i := range rows {
			rows[i] = int32(i)
		}
		passed, ok := ht.filterRows([]*vec.Vec{probes}, rows, nil)
		if !ok {
			t.Fatal("no filter")
		}
		k := 0
		for i := range rows {
			if present(i) {
				if k >= len(passed) || passed[k] != int32(i) {
					t.Fatalf("probe %d (%v): present but filtered out", i, probes.Datum(i))
				}
				k++
			}
		}
		if k != len(passed) {
			t.Fatalf("the filter passed %d probes, %d keys are present", len(passed), k)
		}
	}

	for _, base := range []int64{-100_000, 1, math.MaxInt64 - 300_000} {
		var keys, probes []int64
		have := map[int64]bool{}
		for k := int64(199_999); k >= 0; k -= 983 { // 204 keys, built descending
			keys = append(keys, base+k)
			have[base+k] = true
		}
		ht := build(t, &vec.Vec{Type: vec.Int64Type, I64: keys}, len(keys))
		if ht.direct != nil || ht.filter == nil {
			t.Fatalf("base %d: direct %v, filter %v: want a filter alone", base, ht.direct != nil, ht.filter != nil)
		}
		for k := int64(-50); k < 200_050; k++ {
			probes = append(probes, base+k)
		}
		probes = append(probes, math.MinInt64, math.MaxInt64)
		check(t, ht, &vec.Vec{Type: vec.Int64Type, I64: probes}, func(i int) bool { return have[probes[i]] })
	}

	t.Run("int32", func(t *testing.T) {
		var keys, probes []int32
		have := map[int32]bool{}
		for k := int32(-70_000); k < 130_000; k += 1000 {
			keys = append(keys, k)
			have[k] = true
		}
		for k := int32(-70_100); k < 130_100; k++ {
			probes = append(probes, k)
		}
		probes = append(probes, math.MinInt32, math.MaxInt32)
		ht := build(t, &vec.Vec{Type: vec.Int32Type, I32: keys}, len(keys))
		check(t, ht, &vec.Vec{Type: vec.Int32Type, I32: probes}, func(i int) bool { return have[probes[i]] })
	})

	t.Run("no filter", func(t *testing.T) {
		var dense, wide []int64
		for k := int64(0); k < 100_000; k += 3 { // a third of a span of 100,000: direct
			dense = append(dense, k)
		}
		for k := int64(0); k < 1000; k++ { // 1,000 keys over 2^27: past maxFilterSpan
			wide = append(wide, k<<17)
		}
		for name, keys := range map[string][]int64{"dense": dense, "wide": wide} {
			if ht := build(t, &vec.Vec{Type: vec.Int64Type, I64: keys}, len(keys)); ht.filter != nil {
				t.Errorf("%s keys got a filter", name)
			}
		}
		ht := build(t, &vec.Vec{Type: vec.Int64Type, I64: []int64{0, 100_000}}, 2)
		if ht.filter == nil {
			t.Fatal("no filter for two keys 100,000 apart")
		}
		kv := &vec.Vec{Type: vec.Int64Type, I64: []int64{50_000}}
		var s probeScratch
		s.prepare(1)
		hashRows([]*vec.Vec{kv}, []int32{0}, s.h, ht.seed)
		if err := ht.findOrInsert([]*vec.Vec{kv}, []int32{0}, []int32{0}, &s, nil); err != nil {
			t.Fatal(err)
		}
		if ht.filter != nil {
			t.Fatal("the filter outlived an insert")
		}
	})
}

// TestColumnFilter checks the filter of a table with two key columns (Q9's shape: every
// supplier, a few parts): it covers the sparse column, passes exactly the probes whose
// value of it is present (whatever the other column), and a join through it finds every
// match; with both columns dense there is none.
func TestColumnFilter(t *testing.T) {
	sup, part := vec.NewVec(vec.Int32Type), vec.NewVec(vec.Int64Type)
	have := map[int64]bool{}
	n := 0
	for p := int64(5); p < 200_000; p += 97 {
		have[p] = true
		for s := int32(0); s < 4; s++ {
			sup.AppendDatum(vec.Int32Datum((int32(p)*7 + s*251) % 1000)) // the suppliers cover their span
			part.AppendDatum(vec.Int64Datum(p))
			n++
		}
	}
	keys := []*vec.Vec{sup, part}
	ht := newHashTable([]vec.Type{vec.Int32Type, vec.Int64Type}, nil, nil)
	rows := make([]int32, n)
	for i := range rows {
		rows[i] = int32(i)
	}
	var s probeScratch
	s.prepare(n)
	hashRows(keys, rows, s.h, ht.seed)
	if err := ht.findOrInsert(keys, rows, make([]int32, n), &s, nil); err != nil {
		t.Fatal(err)
	}
	ht.sizeForProbes()
	if ht.filter == nil || ht.filterCol != 1 {
		t.Fatalf("filter %v on column %d, want one on the parts", ht.filter != nil, ht.filterCol)
	}
	// Probes: every part of [0, 200 100) with a supplier that matches for present ones.
	ps, pp := vec.NewVec(vec.Int32Type), vec.NewVec(vec.Int64Type)
	for p := int64(0); p < 200_100; p++ {
		ps.AppendDatum(vec.Int32Datum((int32(p) * 7) % 1000))
		pp.AppendDatum(vec.Int64Datum(p))
	}
	probes := []*vec.Vec{ps, pp}
	all := make([]int32, pp.Len())
	for i := range all {
		all[i] = int32(i)
	}
	passed, ok := ht.filterRows(probes, all, nil)
	if !ok {
		t.Fatal("filterRows did not apply")
	}
	k := 0
	for i := range all {
		if have[int64(i)] {
			if k >= len(passed) || passed[k] != int32(i) {
				t.Fatalf("part %d present but filtered out", i)
			}
			k++
		}
	}
	if k != len(passed) {
		t.Fatalf("%d probes passed, %d parts present", len(passed), k)
	}
	var ps2 probeScratch
	ps2.prepare(pp.Len())
	hashRows(probes, passed, ps2.h, ht.seed)
	gids := make([]int32, pp.Len())
	ht.find(probes, passed, gids, &ps2)
	for _, i := range passed {
		if gids[i] < 0 {
			t.Fatalf("part %d with its first supplier not found", i)
		}
	}

	dense := newHashTable([]vec.Type{vec.Int32Type, vec.Int64Type}, nil, nil)
	d1, d2 := vec.NewVec(vec.Int32Type), vec.NewVec(vec.Int64Type)
	for i := range 4096 {
		d1.AppendDatum(vec.Int32Datum(int32(i % 64)))
		d2.AppendDatum(vec.Int64Datum(int64(i / 64)))
	}
	dk := []*vec.Vec{d1, d2}
	dr := make([]int32, 4096)
	for i := range dr {
		dr[i] = int32(i)
	}
	var ds probeScratch
	ds.prepare(4096)
	hashRows(dk, dr, ds.h, dense.seed)
	if err := dense.findOrInsert(dk, dr, make([]int32, 4096), &ds, nil); err != nil {
		t.Fatal(err)
	}
	dense.sizeForProbes()
	if dense.filter != nil {
		t.Fatalf("a filter on column %d of dense keys", dense.filterCol)
	}
}
