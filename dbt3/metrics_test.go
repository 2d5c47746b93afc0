package dbt3

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// The expected values are worked by hand in the comments.
func TestPowerAtSize(t *testing.T) {
	cases := []struct {
		name      string
		sf        float64
		intervals []float64
		want      float64
		err       string
	}{
		// 22 queries of 1 s: geometric mean 1, 3600·1/1.
		{"22 of one second", 1, repeat(1, 22), 3600, ""},
		// 22 queries of 2 s at SF 10: 36000/2.
		{"22 of two seconds sf10", 10, repeat(2, 22), 18000, ""},
		// (1·2·4)^(1/3) = 8^(1/3) = 2: 3600/2.
		{"three intervals", 1, []float64{1, 2, 4}, 1800, ""},
		// 11 of 0.5 s and 11 of 2 s: product 1, mean 1, at SF 0.01: 36.
		{"halves and doubles", 0.01, append(repeat(0.5, 11), repeat(2, 11)...), 36, ""},
		// 24 intervals (with RF1, RF2): 12 of 4 s and 12 of 9 s: (4·9)^(1/2) = 6: 3600·3/6.
		{"with refresh functions", 3, append(repeat(4, 12), repeat(9, 12)...), 1800, ""},
		{"zero interval", 1, []float64{1, 0}, 0, "must be positive"},
		{"no intervals", 1, nil, 0, "no timing intervals"},
		{"bad sf", 0, []float64{1}, 0, "scale factor"},
	}
	for _, c := range cases {
		got, err := PowerAtSize(c.sf, c.intervals)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !near(got, c.want) {
			t.Errorf("%s: got %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

func TestFloorIntervals(t *testing.T) {
	// Longest 20 s: the floor is 0.02 s; 0.001 and 0.015 rise to it, 0.02 and up stay.
	got := FloorIntervals([]float64{20, 0.001, 0.015, 0.02, 5})
	want := []float64{20, 0.02, 0.02, 0.02, 5}
	if !slices.EqualFunc(got, want, near) {
		t.Errorf("FloorIntervals = %v, want %v", got, want)
	}
	// Within three orders of magnitude nothing changes.
	in := []float64{10, 0.01, 1}
	if got := FloorIntervals(in); !slices.Equal(got, in) {
		t.Errorf("FloorIntervals(%v) = %v, want unchanged", in, got)
	}
}

func TestThroughputAtSize(t *testing.T) {
	cases := []struct {
		sf      float64
		streams int
		ts      float64
		want    float64
		err     string
	}{
		// 2 streams · 22 queries · 3600 / 88 s = 1800 per hour, · SF 1.
		{1, 2, 88, 1800, ""},
		// 4 · 22 · 3600 / 7920 s = 40, · SF 100 = 4000.
		{100, 4, 7920, 4000, ""},
		// 1 · 22 · 3600 / 1 s · 0.01 = 792.
		{0.01, 1, 1, 792, ""},
		{1, 0, 10, 0, "streams"},
		{1, 2, 0, 0, "measurement interval"},
		{-1, 2, 10, 0, "scale factor"},
	}
	for _, c := range cases {
		got, err := ThroughputAtSize(c.sf, c.streams, c.ts)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: err %v, want %q", c, err, c.err)
			}
			continue
		}
		if err != nil || !near(got, c.want) {
			t.Errorf("%+v: got %v, %v", c, got, err)
		}
	}
}

func TestQphH(t *testing.T) {
	// √(1800 · 3200) = √5760000 = 2400.
	if got := QphH(1800, 3200); !near(got, 2400) {
		t.Errorf("QphH = %v, want 2400", got)
	}
}
