package fn

import (
	"math"
	"testing"
)

// substringRef is MySQL's SUBSTRING spelled over a rune slice, for comparison.
func substringRef(s string, pos, length int64) string {
	r := []rune(s)
	n := int64(len(r))
	if pos == 0 || length == 0 {
		return ""
	}
	var start int64
	if pos > 0 {
		start = pos - 1
	} else {
		start = n + pos
	}
	if start < 0 || start >= n {
		return ""
	}
	if length < 0 || length > n-start {
		return string(r[start:])
	}
	return string(r[start : start+length])
}

// TestSubstringBounds: every position and length around the string's bounds and at the
// int64 extremes gives the reference result, for ASCII and multi-byte text (no panics).
func TestSubstringBounds(t *testing.T) {
	edges := []int64{math.MinInt64, math.MinInt64 + 1, math.MaxInt64, math.MaxInt64 - 1}
	for _, s := range []string{"", "a", "hello world", "naïve café", "日本語テキスト"} {
		var vals []int64
		vals = append(vals, edges...)
		for k := int64(-12); k <= 12; k++ {
			vals = append(vals, k)
		}
		for _, pos := range vals {
			// length -1 is "no length": to the end (substringKernel maps an explicit
			// length < 1 to the empty string before calling substring).
			for _, length := range append([]int64{-1}, vals...) {
				if length < -1 {
					continue
				}
				got := string(substring([]byte(s), pos, length))
				if want := substringRef(s, pos, length); got != want {
					t.Errorf("substring(%q, %d, %d) = %q, want %q", s, pos, length, got, want)
				}
			}
		}
	}
}
