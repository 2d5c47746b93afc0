package main

import (
	"fmt"
	"strconv"
	"strings"
)

// sizeFlag is a byte count given as a number with an optional unit: B, K/KB/KiB, M/MB/MiB,
// G/GB/GiB, T/TB/TiB (all powers of 1024).
type sizeFlag int64

func (s *sizeFlag) String() string { return formatSize(int64(*s)) }
func (s *sizeFlag) Type() string   { return "size" }

func (s *sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

func parseSize(v string) (int64, error) {
	t := strings.TrimSpace(v)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, fmt.Errorf("size %q: want a number of bytes with an optional unit (KiB, MiB, GiB, TiB)", v)
	}
	shift := map[string]uint{"": 0, "b": 0, "k": 10, "kb": 10, "kib": 10, "m": 20, "mb": 20, "mib": 20,
		"g": 30, "gb": 30, "gib": 30, "t": 40, "tb": 40, "tib": 40}
	sh, ok := shift[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit %q (want B, KiB, MiB, GiB or TiB)", v, unit)
	}
	b := f * float64(int64(1)<<sh)
	if b > 1<<62 {
		return 0, fmt.Errorf("size %q is too large", v)
	}
	return int64(b), nil
}

func formatSize(n int64) string {
	for _, u := range []struct {
		s    string
		bits uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n >= 1<<u.bits && n%(1<<u.bits) == 0 {
			return strconv.FormatInt(n>>u.bits, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}
