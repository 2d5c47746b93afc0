package types

// Like matches s against a SQL LIKE pattern: % any run of characters, _ one character, esc
// quotes the next pattern character. Matching is by character and case-sensitive.
func Like(s, pattern string, esc rune) bool {
	str, pat := []rune(s), []rune(pattern)
	// Iterative matching with backtracking to the last %.
	si, pi := 0, 0
	starP, starS := -1, 0
	for si < len(str) {
		if pi < len(pat) {
			c := pat[pi]
			switch {
			case c == esc && pi+1 < len(pat):
				if pat[pi+1] == str[si] {
					si, pi = si+1, pi+2
					continue
				}
			case c == '%':
				starP, starS = pi, si
				pi++
				continue
			case c == '_' || c == str[si]:
				si, pi = si+1, pi+1
				continue
			}
		}
		if starP < 0 {
			return false
		}
		starS++
		si, pi = starS, starP+1
	}
	for pi < len(pat) && pat[pi] == '%' {
		pi++
	}
	return pi == len(pat)
}
