package ndv

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"testing"
)

// within checks an estimate against the true count: exact to ±1 below 100 values, else
// within 5% (three standard errors).
func within(t *testing.T, what string, got float64, want int) {
	t.Helper()
	w := float64(want)
	if want < 100 {
		if math.Abs(got-w) > 1 {
			t.Errorf("%s: estimate %.2f, want %d", what, got, want)
		}
		return
	}
	if math.Abs(got-w)/w > 0.05 {
		t.Errorf("%s: estimate %.0f, want %d (error %.2f%%)", what, got, want, 100*(got-w)/w)
	}
}

func TestEstimateInts(t *testing.T) {
	var s Sketch
	if s.Estimate() != 0 || !s.Empty() {
		t.Fatalf("empty sketch estimates %v", s.Estimate())
	}
	next := 0
	for _, n := range []int{1, 2, 3, 10, 50, 99, 500, 3000, 10_000, 30_000, 100_000, 1_000_000, 5_000_000} {
		for ; next < n; next++ {
			s.AddHash(HashInt64(int64(next) * 7919))
		}
		within(t, fmt.Sprintf("%d ints", n), s.Estimate(), n)
		// Adding the same values again changes nothing.
		before := s.Estimate()
		for i := range min(n, 1000) {
			s.AddHash(HashInt64(int64(i) * 7919))
		}
		if s.Estimate() != before {
			t.Errorf("%d ints: repeated values moved the estimate from %v to %v", n, before, s.Estimate())
		}
	}
}

func TestEstimateStrings(t *testing.T) {
	var s Sketch
	var buf []byte
	for i := range 200_000 {
		buf = strconv.AppendInt(append(buf[:0], "Customer#"...), int64(i), 10)
		s.AddHash(HashBytes(buf))
		s.AddHash(HashString(string(buf))) // the same hash
	}
	within(t, "strings", s.Estimate(), 200_000)
}

func TestAddArrays(t *testing.T) {
	// Values 0..9 with every third NULL (validity bits from offset 3).
	vals := make([]int64, 10)
	i32 := make([]int32, 10)
	f64 := make([]float64, 10)
	valid := make([]byte, 2)
	live := 0
	for i := range vals {
		vals[i], i32[i], f64[i] = int64(i), int32(i), float64(i)
		if i%3 != 0 {
			j := 3 + i
			valid[j>>3] |= 1 << (j & 7)
			live++
		}
	}
	var a, b, c Sketch
	a.AddInt64s(vals, valid, 3)
	b.AddInt32s(i32, valid, 3)
	c.AddFloat64s(f64, valid, 3)
	within(t, "int64s", a.Estimate(), live)
	if a != b {
		t.Error("int32 and int64 values hash differently")
	}
	within(t, "float64s", c.Estimate(), live)
	var all Sketch
	all.AddInt64s(vals, nil, 0)
	within(t, "int64s without a bitmap", all.Estimate(), 10)

	data := []byte("aabbbc")
	offs := []int32{0, 1, 2, 2, 5, 6} // "a", "a", "", "bbb", "c"
	var s Sketch
	s.AddBytes(data, offs, 5, nil, 0)
	within(t, "strings", s.Estimate(), 4)

	var z Sketch
	z.AddFloat64s([]float64{0, math.Copysign(0, -1), math.NaN(), -math.NaN()}, nil, 0)
	within(t, "zeros and NaNs", z.Estimate(), 2)
}

func TestMerge(t *testing.T) {
	// Three shares of 0..299999 overlapping by a third each: the union has 300k values,
	// the shares 400k together.
	var shares [3]Sketch
	for i := range 400_000 {
		v := int64(i % 300_000)
		shares[i%3].AddHash(HashInt64(v))
	}
	var m Sketch
	for i := range shares {
		m.Merge(&shares[i])
	}
	within(t, "merged", m.Estimate(), 300_000)
	var empty Sketch
	before := m
	m.Merge(&empty)
	if m != before {
		t.Error("merging an empty sketch changed the registers")
	}
}

func TestEncoding(t *testing.T) {
	for _, n := range []int{0, 3, 5000, 1_000_000} {
		var s Sketch
		for i := range n {
			s.AddHash(HashInt64(int64(i)))
		}
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d values: %d bytes encoded", n, len(b))
		if n <= 5000 && len(b) > 2048 || len(b) > 3200 {
			t.Errorf("%d values encode to %d bytes", n, len(b))
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if *got != s {
			t.Errorf("%d values: the decoded sketch differs", n)
		}
	}
	var s Sketch
	good, _ := s.MarshalBinary()
	bad := map[string][]byte{
		"empty":     nil,
		"version":   append([]byte{9}, good[1:]...),
		"precision": append([]byte{good[0], 14}, good[2:]...),
		"truncated": good[:len(good)-2],
		"garbage":   {formatVersion, Precision, 1, 2, 3},
	}
	var big Sketch
	big.reg[7] = maxRank + 1
	tooHigh, _ := big.MarshalBinary()
	bad["register out of range"] = tooHigh
	for name, b := range bad {
		if _, err := Decode(b); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: error %v, want ErrFormat", name, err)
		}
	}
}

func BenchmarkAddInt64s(b *testing.B) {
	vals := make([]int64, 1<<16)
	for i := range vals {
		vals[i] = int64(i) * 31
	}
	var s Sketch
	b.SetBytes(8 << 16)
	b.ReportAllocs()
	for b.Loop() {
		s.AddInt64s(vals, nil, 0)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N<<16), "ns/value")
}

func BenchmarkAddBytes(b *testing.B) {
	var data []byte
	offs := []int32{0}
	for i := range 1 << 16 {
		data = append(data, fmt.Sprintf("carefully final deposits %d", i)...)
		offs = append(offs, int32(len(data)))
	}
	var s Sketch
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		s.AddBytes(data, offs, 1<<16, nil, 0)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N<<16), "ns/value")
}

func BenchmarkEstimate(b *testing.B) {
	var s Sketch
	for i := range 1_000_000 {
		s.AddHash(HashInt64(int64(i)))
	}
	for b.Loop() {
		s.Estimate()
	}
}
