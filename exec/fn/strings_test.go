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

// locateRef is MySQL's LOCATE(sub, s[, pos]) over rune slices, for comparison: a given pos
// must be within s.
func locateRef(sub, s string, pos int64, given bool) int64 {
	r, q := []rune(s), []rune(sub)
	if pos < 1 || pos > int64(len(r))+1 || given && pos > int64(len(r)) {
		return 0
	}
	for i := pos - 1; i+int64(len(q)) <= int64(len(r)); i++ {
		if string(r[i:i+int64(len(q))]) == sub {
			return i + 1
		}
	}
	return 0
}

// TestLocate: LOCATE at every start position around the string's bounds and at the int64
// extremes, for ASCII and multi-byte text, an empty needle and one longer than the text,
// gives the reference's character position.
func TestLocate(t *testing.T) {
	positions := []int64{math.MinInt64, -1, 0, math.MaxInt64}
	for k := int64(1); k <= 12; k++ {
		positions = append(positions, k)
	}
	for _, s := range []string{"", "a", "banana", "naïve café naïve", "日本語テキスト日本"} {
		for _, sub := range []string{"", "a", "na", "ïve", "本", "café naïve", "zz", s + "x"} {
			for _, pos := range positions {
				if got, want := locate([]byte(sub), []byte(s), pos, true), locateRef(sub, s, pos, true); got != want {
					t.Errorf("LOCATE(%q, %q, %d) = %d, want %d", sub, s, pos, got, want)
				}
			}
			if got, want := locate([]byte(sub), []byte(s), 1, false), locateRef(sub, s, 1, false); got != want {
				t.Errorf("LOCATE(%q, %q) = %d, want %d", sub, s, got, want)
			}
		}
	}
}
