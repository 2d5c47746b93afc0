package daemon

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// ByteSize is a flag value holding a byte count: a number, possibly with a fraction, and
// an optional binary unit: B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB (all powers of 1024),
// case-insensitive, with or without a space ("512MiB", "4G", "1.5 GiB", "4096"). The count
// must come to a whole number of bytes. It prints in the largest unit that divides it.
type ByteSize int64

var _ pflag.Value = (*ByteSize)(nil)

// Type implements pflag.Value.
func (b *ByteSize) Type() string { return "bytes" }

// String implements pflag.Value.
func (b *ByteSize) String() string {
	n := int64(*b)
	for _, u := range byteUnits {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

var byteUnits = []struct {
	name  string
	shift uint
}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}}

// Set implements pflag.Value.
func (b *ByteSize) Set(s string) error {
	n, err := ParseByteSize(s)
	if err != nil {
		return err
	}
	*b = ByteSize(n)
	return nil
}

// ParseByteSize parses a byte count in ByteSize's syntax.
func ParseByteSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	f, err := strconv.ParseFloat(num, 64)
	if num == "" || err != nil {
		return 0, fmt.Errorf("size %q: want a number of bytes with an optional unit (KiB, MiB, GiB, TiB)", s)
	}
	var shift uint
	switch unit {
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
		return 0, fmt.Errorf("size %q: unknown unit %q (want B, KiB, MiB, GiB or TiB)", s, strings.TrimSpace(t[i:]))
	}
	v := f * float64(int64(1)<<shift)
	if v >= 1<<62 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	if v != math.Trunc(v) {
		return 0, fmt.Errorf("size %q is not a whole number of bytes", s)
	}
	return int64(v), nil
}

// ByteSizeVar defines a ByteSize flag stored in p, initially def. The help shows defText
// as the default when it is not empty (a default computed from the machine reads better
// as "a third of physical memory" than as its number on the machine that printed it).
func ByteSizeVar(fs *pflag.FlagSet, p *int64, name string, def int64, defText, usage string) {
	*p = def
	fs.Var((*ByteSize)(p), name, usage)
	if defText != "" {
		fs.Lookup(name).DefValue = defText
	}
}
