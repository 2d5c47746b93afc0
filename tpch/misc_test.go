package tpch

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"

	"github.com/colinkdb/colink/tpch/internal/distfile"
)

func decimal64(v int64) decimal.Decimal64 { return decimal.Decimal64(v) }

// TestDistsMatchKit checks the compiled distributions against the kit's dists.dss.
func TestDistsMatchKit(t *testing.T) {
	ref := sharedTPCH(t)
	f, err := os.Open(filepath.Join(ref, "dists.dss"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kit, err := distfile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	ours := distSpecs()
	if len(kit) != len(ours) {
		t.Fatalf("%d distributions compiled, the kit has %d", len(ours), len(kit))
	}
	for i, d := range kit {
		o := ours[i]
		if o.name != d.Name || len(o.members) != len(d.Members) {
			t.Fatalf("distribution %d: compiled %s/%d, kit %s/%d", i, o.name, len(o.members), d.Name, len(d.Members))
		}
		for j, m := range d.Members {
			if o.members[j].text != m.Text || o.members[j].weight != m.Weight {
				t.Errorf("%s[%d]: compiled %q|%d, kit %q|%d", d.Name, j, o.members[j].text, o.members[j].weight, m.Text, m.Weight)
			}
		}
	}
}

func TestParseScale(t *testing.T) {
	cases := []struct {
		in      string
		ok      bool
		parts   int64
		refresh int64
	}{
		{"0.01", true, 2000, 10},
		{"0.1", true, 20000, 150},
		{"1", true, 200000, 1500},
		{"10", true, 2000000, 15000},
		{"0.001", true, 200, 0}, // dbgen: ⌊1500/10000⌋·10 = 0
		{"100000", true, 20000000000, 150000000},
		{"0", false, 0, 0},
		{"-1", false, 0, 0},
		{"1.5", false, 0, 0},
		{"0.0005", false, 0, 0},
		{"0.0125", false, 0, 0},
		{"100001", false, 0, 0},
		{"abc", false, 0, 0},
		{"NaN", false, 0, 0},
	}
	for _, c := range cases {
		sc, err := ParseScale(c.in)
		if (err == nil) != c.ok {
			t.Errorf("ParseScale(%q): err %v, want ok=%v", c.in, err, c.ok)
			continue
		}
		if !c.ok {
			continue
		}
		if n, _ := sc.Units("part"); n != c.parts {
			t.Errorf("SF %s: %d parts, want %d", c.in, n, c.parts)
		}
		if n := sc.RefreshOrders(); n != c.refresh {
			t.Errorf("SF %s: %d refresh orders, want %d", c.in, n, c.refresh)
		}
	}
}

// TestSkipAhead checks the jump-ahead arithmetic against stepping one draw at a time.
func TestSkipAhead(t *testing.T) {
	x := int64(933588178)
	stepped := x
	for n := int64(1); n <= 500; n++ {
		stepped = nextRand(stepped)
		if got := nthElement(n, x); got != stepped {
			t.Fatalf("nthElement(%d) = %d, stepping gives %d", n, got, stepped)
		}
	}
	y := int64(12345)
	stepped = y
	for n := int64(1); n <= 300; n++ {
		stepped = nextRand64(stepped)
		if got := advanceRand64(y, n); got != stepped {
			t.Fatalf("advanceRand64(%d) = %d, stepping gives %d", n, got, stepped)
		}
	}
	// Padding a row with the power table equals the square-and-multiply jump.
	r := newRNG(false)
	defs := streamDefs()
	r.unif(1, 10, sLQty)
	want := nthElement(6, r.seed[sLQty])
	r.rowStop([]int{sLQty}, defs)
	if r.seed[sLQty] != want {
		t.Fatalf("rowStop padded to %d, want %d", r.seed[sLQty], want)
	}
}

func TestGeneratorRejects(t *testing.T) {
	sc := mustScale(t, "0.01")
	if _, err := NewGenerator(sc, "nope", 1, 1); err == nil {
		t.Error("unknown table accepted")
	}
	if _, err := NewGenerator(sc, "part", 3, 2); err == nil {
		t.Error("chunk 3 of 2 accepted")
	}
	if _, err := NewGenerator(sc, "part", 1, 1, WithBatchRows(3)); err == nil {
		t.Error("batch of 3 rows accepted")
	}
	if _, err := NewRefreshGenerator(sc, "part", 1); err == nil {
		t.Error("refresh set of part accepted")
	}
	if _, err := NewRefreshGenerator(sc, "orders", 0); err == nil {
		t.Error("refresh set 0 accepted")
	}
}

func TestAppendInt(t *testing.T) {
	for _, v := range []int64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 12345, 99999, -1, -10, -99999, 1<<62 + 7, -1 << 63, 1<<63 - 1} {
		if got, want := string(appendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Errorf("appendInt(%d) = %q, want %q", v, got, want)
		}
	}
	for v := int64(-2000); v <= 200000; v += 7 {
		if got, want := string(appendInt(nil, v)), strconv.FormatInt(v, 10); got != want {
			t.Fatalf("appendInt(%d) = %q, want %q", v, got, want)
		}
	}
}

// TestBigScaleSmoke runs dbgen's 64-bit paths (o_custkey and l_partkey at SF ≥ 30000) on a
// far chunk: keys stay in range and chunking is deterministic. No reference output exists
// at that scale here; see rng.skip for how chunks follow dbgen -C/-S.
func TestBigScaleSmoke(t *testing.T) {
	sc := mustScale(t, "30000")
	if !sc.big() {
		t.Fatal("SF 30000 should use dbgen's 64-bit generator")
	}
	first := func() (arrow.RecordBatch, error) {
		g, err := NewGenerator(sc, "lineitem", 7, 1000000, WithBatchRows(64))
		if err != nil {
			return nil, err
		}
		defer g.Close()
		return g.Next()
	}
	a, err := first()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	b, _ := first()
	defer b.Release()
	parts, _ := sc.Units("part")
	pk := a.Column(1).(*array.Int64)
	for i := 0; i < pk.Len(); i++ {
		if v := pk.Value(i); v < 1 || v > parts {
			t.Fatalf("l_partkey %d outside [1, %d]", v, parts)
		}
		if v := b.Column(1).(*array.Int64).Value(i); v != pk.Value(i) {
			t.Fatalf("row %d: l_partkey %d then %d from the same chunk", i, pk.Value(i), v)
		}
	}
	og, _ := NewGenerator(sc, "orders", 3, 1000000, WithBatchRows(64))
	rec, err := og.Next()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	custs, _ := sc.Units("customer")
	ck := rec.Column(1).(*array.Int64)
	for i := 0; i < ck.Len(); i++ {
		if v := ck.Value(i); v < 1 || v > custs || v%3 == 0 {
			t.Fatalf("o_custkey %d outside [1, %d] or a multiple of 3", v, custs)
		}
	}
}

// BenchmarkLineitemArrow measures Arrow batch generation of lineitem at SF 0.1 (one core).
func BenchmarkLineitemArrow(b *testing.B) {
	sc := mustScale(b, "0.1")
	textPool() // built once, outside the timing
	b.ResetTimer()
	rows := 0
	for range b.N {
		g, err := NewGenerator(sc, "lineitem", 1, 1)
		if err != nil {
			b.Fatal(err)
		}
		for {
			rec, err := g.Next()
			if err != nil {
				break
			}
			rows += int(rec.NumRows())
			rec.Release()
		}
		g.Close()
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkLineitemTbl measures .tbl text generation of lineitem at SF 0.1 (one core).
func BenchmarkLineitemTbl(b *testing.B) {
	sc := mustScale(b, "0.1")
	textPool()
	b.ResetTimer()
	var n int64
	for range b.N {
		g, err := NewGenerator(sc, "lineitem", 1, 1)
		if err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, 0, 1<<20)
		for {
			buf, err = g.AppendTbl(buf[:0])
			if err != nil {
				break
			}
			n += int64(len(buf))
		}
	}
	b.SetBytes(n / int64(b.N))
}

// TestPoolCheckpoints re-derives the text pool's checkpoints from dbgen's sequential fill:
// each must be the start of a sentence with the stream's seed at that point.
func TestPoolCheckpoints(t *testing.T) {
	if testing.Short() {
		t.Skip("walks the whole text pool")
	}
	d := loadDists()
	cps := poolCheckpoints()
	if cps[0].offset != 0 || cps[0].seed != streamDefs()[sTextPool].seed {
		t.Fatalf("first checkpoint %+v is not the stream's start", cps[0])
	}
	r := newRNG(false)
	var sentence [maxSentence + 16]byte
	pos, next := 0, 1
	for pos < textPoolSize && next < len(cps) {
		if pos > cps[next].offset {
			t.Fatalf("checkpoint %+v is not a sentence boundary", cps[next])
		}
		if pos == cps[next].offset {
			if r.seed[sTextPool] != cps[next].seed {
				t.Fatalf("checkpoint at %d: seed %d, the sequential fill has %d", pos, cps[next].seed, r.seed[sTextPool])
			}
			next++
		}
		pos += len(txtSentence(sentence[:0], &r, d)) + 1
	}
	if next != len(cps) {
		t.Fatalf("only %d of %d checkpoints reached", next, len(cps))
	}
}

// TestPickIsUnif checks that pick's integer division gives exactly dbgen's float UnifInt
// (rng.unif) for every distribution total the kit can have. Both are non-decreasing step
// functions of the draw x, and the integer one steps up exactly at x = ⌈k·M/total⌉
// (M = 2³¹−1), so agreeing at each such x and the x before it means agreeing everywhere.
func TestPickIsUnif(t *testing.T) {
	const maxTotal = 1024
	for _, s := range distSpecs() {
		if d := newDist(s); d.total > maxTotal {
			t.Fatalf("distribution %s totals %d, over the %d checked here", s.name, d.total, maxTotal)
		}
	}
	r := newRNG(false)
	// seedBefore returns the seed whose next draw is x: one step back, 16807^(M−2) = 16807⁻¹.
	seedBefore := func(x int64) int64 { return nthElement(pmModulus-2, x) }
	check := func(d *dist, x int64) {
		r.seed[sPCntr] = seedBefore(x)
		r2 := r
		if got, want := int64(r.pick(d, sPCntr))+1, r2.unif(1, d.total, sPCntr); got != want {
			t.Fatalf("total %d, draw %d: pick gives %d, unif %d", d.total, x, got, want)
		}
	}
	for total := int64(1); total <= maxTotal; total++ {
		d := &dist{total: total, pick: make([]int16, total)}
		for i := range d.pick {
			d.pick[i] = int16(i)
		}
		check(d, 1)
		check(d, pmModulus-1)
		for k := int64(1); k < total; k++ {
			x := (k*pmModulus + total - 1) / total // ⌈k·M/total⌉
			check(d, x-1)
			check(d, x)
		}
	}
}
