package fn

import (
	"bytes"
	"unicode"
	"unicode/utf8"

	"github.com/colinkdb/colink/exec/vec"
)

// The string functions' kernels. Text is UTF-8; an invalid byte counts as one character,
// as in CHAR_LENGTH. Comparisons are of bytes (colink's one collation is binary).

// mapKernel writes f(s) for every live row of the string argument.
func mapKernel(f func(dst, s []byte) []byte) func(*Site) Kernel {
	return func(*Site) Kernel {
		return func(args []*vec.Vec, out *vec.Vec, live []int32, nrows int) error {
			s := args[0]
			var w vec.StringWriter
			w.Begin(out)
			for _, i := range live {
				w.Gap(int(i))
				out.Bytes = f(out.Bytes, s.String(int(i)))
				w.End(i)
			}
			w.Finish(nrows)
			return nil
		}
	}
}

// appendUpper appends s with every letter in upper case (Unicode simple case mapping);
// ASCII text takes a byte loop.
func appendUpper(dst, s []byte) []byte {
	for k, c := range s {
		if c >= utf8.RuneSelf {
			return appendMapped(dst, s[k:], unicode.ToUpper)
		}
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

func appendLower(dst, s []byte) []byte {
	for k, c := range s {
		if c >= utf8.RuneSelf {
			return appendMapped(dst, s[k:], unicode.ToLower)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// appendMapped maps UTF-8 text rune by rune; invalid bytes are kept as they are.
func appendMapped(dst, s []byte, f func(rune) rune) []byte {
	for len(s) > 0 {
		r, w := utf8.DecodeRune(s)
		if r == utf8.RuneError && w == 1 {
			dst = append(dst, s[0])
		} else {
			dst = utf8.AppendRune(dst, f(r))
		}
		s = s[w:]
	}
	return dst
}

// appendReversed appends the characters of UTF-8 text s in reverse order; an invalid byte
// is one character.
func appendReversed(dst, s []byte) []byte {
	for k := len(s); k > 0; {
		w := 1
		if s[k-1] >= utf8.RuneSelf {
			_, w = utf8.DecodeLastRune(s[:k])
		}
		dst = append(dst, s[k-w:k]...)
		k -= w
	}
	return dst
}

func lengthKernel(*Site) Kernel {
	return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
		offs := args[0].Offsets
		for _, i := range live {
			out.I64[i] = int64(offs[i+1] - offs[i])
		}
		return nil
	}
}

func charLengthKernel(*Site) Kernel {
	return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
		s := args[0]
		for _, i := range live {
			out.I64[i] = int64(utf8.RuneCount(s.String(int(i))))
		}
		return nil
	}
}

func concatKernel(*Site) Kernel {
	return func(args []*vec.Vec, out *vec.Vec, live []int32, nrows int) error {
		var w vec.StringWriter
		w.Begin(out)
		for _, i := range live {
			w.Gap(int(i))
			for _, a := range args {
				out.Bytes = append(out.Bytes, a.String(int(i))...)
			}
			w.End(i)
		}
		w.Finish(nrows)
		return nil
	}
}

// trimKernel removes leading (lead) and trailing (trail) spaces, or repeated occurrences of
// the second argument's string when there is one (MySQL's TRIM(... FROM)).
func trimKernel(lead, trail bool) func(*Site) Kernel {
	return func(*Site) Kernel {
		space := []byte{' '}
		return func(args []*vec.Vec, out *vec.Vec, live []int32, nrows int) error {
			s := args[0]
			var w vec.StringWriter
			w.Begin(out)
			for _, i := range live {
				v, rem := s.String(int(i)), space
				if len(args) > 1 {
					rem = args[1].String(int(i))
				}
				if len(rem) > 0 {
					for lead && bytes.HasPrefix(v, rem) {
						v = v[len(rem):]
					}
					for trail && bytes.HasSuffix(v, rem) {
						v = v[:len(v)-len(rem)]
					}
				}
				w.Put(i, v)
			}
			w.Finish(nrows)
			return nil
		}
	}
}

// charsKernel is LEFT(s, n) or RIGHT(s, n): the n characters pick takes from s.
func charsKernel(pick func(s []byte, n int64) []byte) func(*Site) Kernel {
	return func(*Site) Kernel {
		return func(args []*vec.Vec, out *vec.Vec, live []int32, nrows int) error {
			s, cnt := args[0], args[1].I64
			var w vec.StringWriter
			w.Begin(out)
			for _, i := range live {
				w.Put(i, pick(s.String(int(i)), cnt[i]))
			}
			w.Finish(nrows)
			return nil
		}
	}
}

// leftChars is the first n characters of UTF-8 text s.
func leftChars(s []byte, n int64) []byte {
	if n <= 0 {
		return s[:0]
	}
	if n >= int64(len(s)) {
		return s // no more characters than bytes
	}
	k := 0
	for ; n > 0 && k < len(s); n-- {
		if s[k] < utf8.RuneSelf {
			k++
			continue
		}
		_, w := utf8.DecodeRune(s[k:])
		k += w
	}
	return s[:k]
}

// rightChars is the last n characters of UTF-8 text s.
func rightChars(s []byte, n int64) []byte {
	if n <= 0 {
		return s[:0]
	}
	if n >= int64(len(s)) {
		return s
	}
	k := len(s)
	for ; n > 0 && k > 0; n-- {
		if s[k-1] < utf8.RuneSelf {
			k--
			continue
		}
		_, w := utf8.DecodeLastRune(s[:k])
		k -= w
	}
	return s[k:]
}

// replaceKernel is REPLACE(s, from, to): every occurrence of from, left to right and not
// overlapping, replaced by to, comparing bytes (MySQL's REPLACE is case-sensitive); an
// empty from changes nothing.
func replaceKernel(*Site) Kernel {
	return func(args []*vec.Vec, out *vec.Vec, live []int32, nrows int) error {
		s, from, to := args[0], args[1], args[2]
		var w vec.StringWriter
		w.Begin(out)
		for _, i := range live {
			w.Gap(int(i))
			v, f := s.String(int(i)), from.String(int(i))
			if len(f) > 0 {
				t := to.String(int(i))
				for {
					j := bytes.Index(v, f)
					if j < 0 {
						break
					}
					out.Bytes = append(append(out.Bytes, v[:j]...), t...)
					v = v[j+len(f):]
				}
			}
			out.Bytes = append(out.Bytes, v...)
			w.End(i)
		}
		w.Finish(nrows)
		return nil
	}
}

// locateKernel is LOCATE(sub, s[, pos]), or with swapped INSTR(s, sub): the character
// position (from 1) of sub's first occurrence in s at or after character pos, 0 if there is
// none. As in MySQL, a given pos must lie within s (1 to its length), and an empty sub is
// found at pos (at 1 without pos, even in an empty s).
func locateKernel(swapped bool) func(*Site) Kernel {
	return func(*Site) Kernel {
		return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
			sub, s := args[0], args[1]
			if swapped {
				sub, s = s, sub
			}
			for _, i := range live {
				pos, given := int64(1), len(args) > 2
				if given {
					pos = args[2].I64[i]
				}
				out.I32[i] = int32(locate(sub.String(int(i)), s.String(int(i)), pos, given))
			}
			return nil
		}
	}
}

func locate(sub, s []byte, pos int64, given bool) int64 {
	if pos < 1 {
		return 0
	}
	// Skip pos-1 characters; a given pos must start at a character of s.
	off := 0
	for skipped := int64(1); skipped < pos; skipped++ {
		if off >= len(s) {
			return 0
		}
		_, n := utf8.DecodeRune(s[off:])
		off += n
	}
	if given && off >= len(s) {
		return 0
	}
	at := bytes.Index(s[off:], sub)
	if at < 0 {
		return 0
	}
	return pos + int64(utf8.RuneCount(s[off:off+at]))
}

// strcmpKernel is STRCMP(a, b): -1, 0 or 1 comparing bytes.
func strcmpKernel(*Site) Kernel {
	return func(args []*vec.Vec, out *vec.Vec, live []int32, _ int) error {
		a, b := args[0], args[1]
		for _, i := range live {
			out.I32[i] = int32(bytes.Compare(a.String(int(i)), b.String(int(i))))
		}
		return nil
	}
}

// substringKernel is SUBSTRING(s, pos[, len]) with MySQL's rules: positions count characters
// from 1; a negative pos counts from the end; pos 0, a position past the end or len < 1
// give the empty string.
func substringKernel(*Site) Kernel {
	return func(args []*vec.Vec, out *vec.Vec, live []int32, nrows int) error {
		s, p := args[0], args[1].I64
		var l []int64
		if len(args) > 2 {
			l = args[2].I64
		}
		var w vec.StringWriter
		w.Begin(out)
		for _, i := range live {
			length := int64(-1) // no length: to the end
			if l != nil {
				if length = l[i]; length < 1 {
					w.Put(i, nil)
					continue
				}
			}
			w.Put(i, substring(s.String(int(i)), p[i], length))
		}
		w.Finish(nrows)
		return nil
	}
}

// substring applies MySQL's SUBSTRING to UTF-8 text; length < 0 means "to the end".
// pos and length may be any int64: 0 <= start < n holds before anything is added to start.
func substring(s []byte, pos, length int64) []byte {
	if pos == 0 || length == 0 {
		return nil
	}
	ascii := true
	for _, c := range s {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		n := int64(len(s))
		start := pos - 1
		if pos < 0 {
			start = n + pos
		}
		if start < 0 || start >= n {
			return nil
		}
		end := n
		if length >= 0 && length < n-start { // not start+length: it may overflow
			end = start + length
		}
		return s[start:end]
	}
	n := int64(utf8.RuneCount(s))
	start := pos - 1
	if pos < 0 {
		start = n + pos
	}
	if start < 0 || start >= n {
		return nil
	}
	count := n - start
	if length >= 0 && length < count {
		count = length
	}
	// Skip start characters, then take count.
	b := 0
	for k := int64(0); k < start; k++ {
		_, w := utf8.DecodeRune(s[b:])
		b += w
	}
	e := b
	for k := int64(0); k < count; k++ {
		_, w := utf8.DecodeRune(s[e:])
		e += w
	}
	return s[b:e]
}
