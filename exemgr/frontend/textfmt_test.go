package frontend

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

func TestAppendDouble(t *testing.T) {
	// What MySQL prints for a DOUBLE without a fixed scale (SELECT <double literal>).
	for _, c := range []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{1, "1"},
		{-2.5, "-2.5"},
		{100, "100"},
		{0.1, "0.1"},
		{0.30000000000000004, "0.30000000000000004"}, // 0.1+0.2 at run time
		{1.0 / 3, "0.3333333333333333"},
		{0.0001, "0.0001"},
		{1e-5, "0.00001"},
		{1e-15, "0.000000000000001"},
		{1e-16, "1e-16"},
		{-1.5e-16, "-1.5e-16"},
		{1e14, "100000000000000"},
		{123456789012345, "123456789012345"},
		{1e15, "1e15"},
		{1234567890123456, "1.234567890123456e15"},
		{12345678901234.5, "12345678901234.5"},
		{1234567890123456.7, "1234567890123456.8"},
		{1e20, "1e20"},
		{-1.5e20, "-1.5e20"},
		{1e100, "1e100"},
		{math.MaxFloat64, "1.7976931348623157e308"},
		{5e-324, "5e-324"},
		{math.Copysign(0, -1), "0"}, // as MariaDB prints -0e0
		{math.Inf(1), "inf"},
		{math.NaN(), "nan"},
	} {
		if got := string(appendDouble(nil, c.in, 64)); got != c.want {
			t.Errorf("appendDouble(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestAppendDecimal64(t *testing.T) {
	for _, c := range []struct {
		v     int64
		scale int32
		want  string
	}{
		{123456, 2, "1234.56"},
		{-5, 2, "-0.05"},
		{0, 2, "0.00"},
		{100, 2, "1.00"},
		{-100, 2, "-1.00"},
		{5, 0, "5"},
		{-1, 4, "-0.0001"},
		{math.MinInt64, 0, "-9223372036854775808"},
		{math.MaxInt64, 18, "9.223372036854775807"},
		{math.MinInt64, 19, "-0.9223372036854775808"},
		{12, -2, "1200"},
	} {
		if got := string(appendDecimal64(nil, c.v, c.scale)); got != c.want {
			t.Errorf("appendDecimal64(%d, %d) = %q, want %q", c.v, c.scale, got, c.want)
		}
	}
}

// TestAppendDecimal128 compares with math/big over values of every magnitude, including
// limbs that need zero padding.
func TestAppendDecimal128(t *testing.T) {
	check := func(n decimal128.Num, scale int32) {
		t.Helper()
		want := n.BigInt()
		neg := want.Sign() < 0
		digits := new(big.Int).Abs(want).String()
		wantText := string(appendScaled(nil, neg, []byte(digits), scale))
		if got := string(appendDecimal128(nil, n.HighBits(), n.LowBits(), scale)); got != wantText {
			t.Errorf("appendDecimal128(%s, %d) = %q, want %q", want, scale, got, wantText)
		}
	}
	ten19, _ := decimal128.FromString("10000000000000000000", 38, 0)
	check(ten19, 0)
	check(ten19.Negate(), 2)
	max38, _ := decimal128.FromString("99999999999999999999999999999999999999", 38, 0)
	check(max38, 0)
	check(max38.Negate(), 38)
	check(decimal128.MaxDecimal128, 0)
	check(decimal128.FromI64(math.MinInt64), 3)
	check(decimal128.New(0, 1<<63), 0) // 2^63: does not fit an int64
	check(decimal128.New(-1, 1<<63-1), 1)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		hi := int64(rng.Uint64())
		switch rng.IntN(3) { // all magnitudes: small, around 2^64, large
		case 0:
			hi = hi >> 60
		case 1:
			hi = hi >> 30
		}
		check(decimal128.New(hi, rng.Uint64()), int32(rng.IntN(39)))
	}
}

func TestAppendDate(t *testing.T) {
	for _, c := range []struct {
		days int32
		want string
	}{
		{0, "1970-01-01"},
		{10561, "1998-12-01"},
		{8035, "1992-01-01"},
		{-1, "1969-12-31"},
		{-719528, "0000-01-01"},
		{2932896, "9999-12-31"},
		{11016, "2000-02-29"},
	} {
		if got := string(appendDate(nil, c.days)); got != c.want {
			t.Errorf("appendDate(%d) = %q, want %q", c.days, got, c.want)
		}
	}
	for d := int32(-719528); d <= 2932896; d += 7 {
		want := time.Unix(int64(d)*86400, 0).UTC().Format("2006-01-02")
		if got := string(appendDate(nil, d)); got != want {
			t.Fatalf("appendDate(%d) = %q, want %q", d, got, want)
		}
	}
}

func TestFormattingDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 256)
	allocs := testing.AllocsPerRun(100, func() {
		b := appendDouble(buf[:0], 1234.5678e-9, 64)
		b = appendDecimal64(b, -123456789, 2)
		b = appendDecimal128(b, -5, 12345, 4)
		b = appendDate(b, 10561)
		_ = b
	})
	if allocs != 0 {
		t.Errorf("formatting allocates %.0f times per value set", allocs)
	}
}
