package daemon

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

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
		{"512mib", 512 << 20, "512MiB"},
		{"4G", 4 << 30, "4GiB"},
		{"4GB", 4 << 30, "4GiB"},
		{"64 mb", 64 << 20, "64MiB"},
		{" 8k ", 8 << 10, "8KiB"},
		{"2TiB", 2 << 40, "2TiB"},
		{"1.5GiB", 3 << 29, "1536MiB"},
		{"0.5K", 512, "512"},
		{"100B", 100, "100"},
	} {
		var b ByteSize
		if err := b.Set(tc.in); err != nil || int64(b) != tc.want || b.String() != tc.text {
			t.Errorf("%q: %d (%s), %v; want %d (%s)", tc.in, int64(b), b.String(), err, tc.want, tc.text)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"", "want a number"},
		{"-1", "want a number"},
		{"MiB", "want a number"},
		{"1.2.3", "want a number"},
		{"1.5", "not a whole number"},
		{"4 parsecs", `unknown unit "parsecs"`},
		{"99999999999T", "too large"},
	} {
		var b ByteSize
		if err := b.Set(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one saying %q", tc.in, err, tc.want)
		}
	}
}

// TestByteSizeVarHelp: the help names a described default once, a plain default by its
// value, and parsing sets the variable.
func TestByteSizeVarHelp(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	var cache, mem int64
	ByteSizeVar(fs, &cache, "cache-size", 8425503402, "a third of physical memory", "column cache budget")
	ByteSizeVar(fs, &mem, "query-memory", 4<<30, "", "memory of one query")
	help := fs.FlagUsages()
	if !strings.Contains(help, "column cache budget (default a third of physical memory)\n") || strings.Contains(help, "8425503402") {
		t.Errorf("--cache-size help:\n%s", help)
	}
	if !strings.Contains(help, "memory of one query (default 4GiB)\n") {
		t.Errorf("--query-memory help:\n%s", help)
	}
	if cache != 8425503402 || mem != 4<<30 {
		t.Fatalf("defaults %d, %d", cache, mem)
	}
	if err := fs.Parse([]string{"--cache-size", "2GiB", "--query-memory=0"}); err != nil {
		t.Fatal(err)
	}
	if cache != 2<<30 || mem != 0 {
		t.Fatalf("parsed %d, %d", cache, mem)
	}
	if err := fs.Parse([]string{"--cache-size", "lots"}); err == nil || !strings.Contains(err.Error(), `size "lots"`) {
		t.Fatalf("bad size: %v", err)
	}
}
