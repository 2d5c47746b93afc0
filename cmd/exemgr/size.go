package main

import (
	"fmt"
	"strconv"
	"strings"
)

// byteSize is a flag holding a byte count: a whole number with an optional binary unit
// (B, K/KiB, M/MiB, G/GiB, T/TiB; KB, MB, GB and TB mean the same powers of 1024).
type byteSize int64

func (b *byteSize) Type() string { return "bytes" }

func (b *byteSize) String() string {
	n := int64(*b)
	for _, u := range []struct {
		name  string
		shift uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

func (b *byteSize) Set(s string) error {
	t := strings.TrimSpace(s)
	digits := strings.IndexFunc(t, func(r rune) bool { return r < '0' || r > '9' })
	if digits < 0 {
		digits = len(t)
	}
	n, err := strconv.ParseInt(t[:digits], 10, 64)
	if err != nil {
		return fmt.Errorf("%q: want a whole number of bytes with an optional unit (KiB, MiB, GiB, TiB)", s)
	}
	var shift uint
	switch strings.ToLower(strings.TrimSpace(t[digits:])) {
	case "", "b":
	case "k", "kb", "kib":
		shift = 10
	case "m", "mb", "mib":
		shift = 20
	case "g", "gb", "gib":
		shift = 30
	case "t", "tb", "tib":
		shift = 40
	default:
		return fmt.Errorf("%q: unknown unit %q (want B, KiB, MiB, GiB or TiB)", s, t[digits:])
	}
	if n > (1<<62)>>shift {
		return fmt.Errorf("%q is too large", s)
	}
	*b = byteSize(n << shift)
	return nil
}
