package main

import "testing"

func TestByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		text string
	}{
		{"0", 0, "0"},
		{"4096", 4096, "4KiB"},
		{"1000", 1000, "1000"},
		{"512MiB", 512 << 20, "512MiB"},
		{"4G", 4 << 30, "4GiB"},
		{"64 mb", 64 << 20, "64MiB"},
		{"2TiB", 2 << 40, "2TiB"},
	} {
		var b byteSize
		if err := b.Set(tc.in); err != nil || int64(b) != tc.want || b.String() != tc.text {
			t.Errorf("%q: %d (%s), %v; want %d (%s)", tc.in, int64(b), b.String(), err, tc.want, tc.text)
		}
	}
	for _, bad := range []string{"", "-1", "1.5G", "4 parsecs", "99999999999T"} {
		var b byteSize
		if err := b.Set(bad); err == nil {
			t.Errorf("%q: no error (got %d)", bad, int64(b))
		}
	}
}
