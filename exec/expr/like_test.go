package expr

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/colinkdb/colink/exec/vec"
)

// likeRef is LIKE spelled as a recursive match over characters (backslash escapes), for
// comparison with the matcher.
func likeRef(pat, s []rune) bool {
	if len(pat) == 0 {
		return len(s) == 0
	}
	switch c := pat[0]; {
	case c == '%':
		for k := 0; k <= len(s); k++ {
			if likeRef(pat[1:], s[k:]) {
				return true
			}
		}
		return false
	case c == '_':
		return len(s) > 0 && likeRef(pat[1:], s[1:])
	case c == '\\' && len(pat) > 1:
		return len(s) > 0 && s[0] == pat[1] && likeRef(pat[2:], s[1:])
	default:
		return len(s) > 0 && s[0] == c && likeRef(pat[1:], s[1:])
	}
}

// TestLikeAgainstReference: random patterns of literals (one and two bytes), _, %, and
// escapes agree with likeRef on random strings, through both match and selectRows.
func TestLikeAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	patChars := []string{"a", "b", "é", "_", "%", "%", "\\%", "\\_", "\\\\", "\\a", "\\"}
	strChars := []string{"a", "b", "é", "%", "_", "\\"}
	var strs []string
	for range 200 {
		var sb strings.Builder
		for range r.IntN(9) {
			sb.WriteString(strChars[r.IntN(len(strChars))])
		}
		strs = append(strs, sb.String())
	}
	x := vec.NewVec(vec.StringType)
	for _, s := range strs {
		x.AppendDatum(vec.StringDatum(s))
	}
	rows := make([]int32, len(strs))
	for i := range rows {
		rows[i] = int32(i)
	}
	for range 3000 {
		var sb strings.Builder
		for range r.IntN(7) {
			sb.WriteString(patChars[r.IntN(len(patChars))])
		}
		pat := sb.String()
		m := compileLike([]byte(pat))
		var want []int32
		for i, s := range strs {
			w := likeRef([]rune(pat), []rune(s))
			if got := m.match([]byte(s)); got != w {
				t.Fatalf("%q LIKE %q = %v, want %v", s, pat, got, w)
			}
			if w {
				want = append(want, int32(i))
			}
		}
		if got := m.selectRows(x, rows, false, make([]int32, len(rows))); !slices.Equal(got, want) {
			t.Fatalf("selectRows(LIKE %q) = %v, want %v", pat, got, want)
		}
	}
}

// BenchmarkLike filters l_comment-like strings by the shapes of pattern TPC-H uses and by
// ones with _.
func BenchmarkLike(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	words := strings.Fields("furiously special requests final deposits carefully ironic packages " +
		"blithely regular accounts slyly express theodolites quickly bold pinto beans green forest " +
		"Customer Complaints")
	x := vec.NewVec(vec.StringType)
	const n = 4096
	for range n {
		var sb strings.Builder
		for k := range 4 + r.IntN(8) {
			if k > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[r.IntN(len(words))])
		}
		x.AppendDatum(vec.StringDatum(sb.String()))
	}
	rows := make([]int32, n)
	for i := range rows {
		rows[i] = int32(i)
	}
	out := make([]int32, n)
	for _, pat := range []string{"forest%", "%green%", "%BRASS", "%special%requests%",
		"%Customer%Complaints%", "furiously special requests", "%s_ecial%", "_u%y%"} {
		m := compileLike([]byte(pat))
		b.Run(pat, func(b *testing.B) {
			for b.Loop() {
				m.selectRows(x, rows, false, out)
			}
			b.SetBytes(int64(len(x.Bytes)))
		})
	}
}
