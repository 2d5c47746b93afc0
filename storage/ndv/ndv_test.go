package ndv

import (
	"encoding/binary"
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
	if !a.Equal(&b) {
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
	if !m.Equal(&before) {
		t.Error("merging an empty sketch changed the registers")
	}
}

func TestEncoding(t *testing.T) {
	for _, n := range []int{0, 3, ExactMax, ExactMax + 1, 5000, 1_000_000} {
		var s Sketch
		for i := range n {
			s.AddHash(HashInt64(int64(i)))
		}
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d values: %d bytes encoded", n, len(b))
		if n <= ExactMax && len(b) != 2+8*n || len(b) > 2048 {
			t.Errorf("%d values encode to %d bytes", n, len(b))
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(&s) || got.Estimate() != s.Estimate() {
			t.Errorf("%d values: the decoded sketch differs", n)
		}
	}
	var s Sketch
	good, _ := s.MarshalBinary()
	for i := range 1000 {
		s.AddHash(HashInt64(int64(i)))
	}
	dense, _ := s.MarshalBinary()
	bad := map[string][]byte{
		"empty":            nil,
		"format":           append([]byte{9}, good[1:]...),
		"precision":        append([]byte{good[0], 14}, good[2:]...),
		"truncated":        dense[:len(dense)-2],
		"garbage":          {formatRegisters, Precision, 1, 2, 3},
		"exact, ragged":    {formatExact, Precision, 1, 2, 3},
		"exact, unordered": append(append([]byte{formatExact, Precision}, le(5)...), le(3)...),
		"exact, repeated":  append(append([]byte{formatExact, Precision}, le(5)...), le(5)...),
	}
	var big Sketch
	for i := range ExactMax + 1 {
		big.AddHash(HashInt64(int64(i)))
	}
	big.reg[7] = maxRank + 1
	tooHigh, _ := big.MarshalBinary()
	bad["register out of range"] = tooHigh
	var many []byte
	for i := range ExactMax + 1 {
		many = append(many, le(uint64(i+1))...)
	}
	bad["exact, too many"] = append([]byte{formatExact, Precision}, many...)
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

func le(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// TestExact counts small domains exactly: 25 nation names, two of which share a register
// (which makes the registers alone say 23), up to ExactMax values, across merges.
func TestExact(t *testing.T) {
	names := []string{"ALGERIA", "ARGENTINA", "BRAZIL", "CANADA", "EGYPT", "ETHIOPIA", "FRANCE", "GERMANY",
		"INDIA", "INDONESIA", "IRAN", "IRAQ", "JAPAN", "JORDAN", "KENYA", "MOROCCO", "MOZAMBIQUE", "PERU",
		"CHINA", "ROMANIA", "SAUDI ARABIA", "VIETNAM", "RUSSIA", "UNITED KINGDOM", "UNITED STATES"}
	var s Sketch
	for range 3 {
		for _, n := range names {
			s.AddHash(HashString(n))
		}
	}
	if !s.Exact() || s.Estimate() != 25 {
		t.Errorf("nation names: exact %v, %v distinct", s.Exact(), s.Estimate())
	}
	var a, b Sketch
	for i := range ExactMax {
		a.AddHash(HashInt64(int64(i)))
	}
	if !a.Exact() || a.Estimate() != ExactMax {
		t.Fatalf("%d values: exact %v, %v", ExactMax, a.Exact(), a.Estimate())
	}
	b.AddHash(HashInt64(1000))
	b.AddHash(HashInt64(3))
	m := a
	m.Merge(&b)
	if m.Exact() {
		t.Errorf("a merge of %d values counts exactly", ExactMax+1)
	}
	within(t, "merged past the exact range", m.Estimate(), ExactMax+1)
	c := b
	c.Merge(&b)
	if !c.Exact() || c.Estimate() != 2 {
		t.Errorf("a sketch merged with itself: %v", c.Estimate())
	}
	var z Sketch
	z.AddHash(0) // the hash 0 (HashInt64(0)) counts like any other
	z.AddHash(HashInt64(3))
	z.AddHash(0)
	enc, _ := z.MarshalBinary()
	back, err := Decode(enc)
	if err != nil || !back.Equal(&z) || back.Estimate() != 2 {
		t.Errorf("round trip of the hash 0: %v", err)
	}
	// A dense sketch of a small domain (the first format kept only registers) estimates.
	dense := []byte{formatRegisters, Precision}
	var regs Sketch
	for _, n := range names {
		regs.AddHash(HashString(n))
	}
	regs.toRegisters()
	full, _ := regs.MarshalBinary()
	if full[0] != formatRegisters {
		t.Fatal("an overflowed sketch is not encoded as registers")
	}
	old, err := Decode(append(dense, full[2:]...))
	if err != nil || old.Exact() || old.Estimate() < 22 || old.Estimate() > 26 {
		t.Errorf("registers of 25 values: %v, %v", old.Estimate(), err)
	}
}

// BenchmarkAddFewDistinct adds values of a small domain (7 integers, 3 strings), which a
// sketch keeps counting exactly: every value probes the exact set.
func BenchmarkAddFewDistinct(b *testing.B) {
	vals := make([]int64, 1<<16)
	var data []byte
	offs := []int32{0}
	for i := range vals {
		vals[i] = int64(i % 7)
		data = append(data, "ANR"[i%3])
		offs = append(offs, int32(len(data)))
	}
	var s Sketch
	b.ReportAllocs()
	for b.Loop() {
		s.AddInt64s(vals, nil, 0)
		s.AddBytes(data, offs, len(vals), nil, 0)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N<<17), "ns/value")
}
