package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Bad flags exit with status 2 and a message naming the flag, before anything starts;
// --help exits 0.
func TestUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--help"}, 0, "Measures the link against a plain socket (--raw)"},
		{[]string{"--help"}, 0, "Arrow Flight (--flight)"},
		{[]string{"--bogus"}, 2, "unknown flag: --bogus"},
		{[]string{"--mode", "sync,flood"}, 2, `ipcbench: --mode "flood": want sync, async or stream`},
		{[]string{"--transport", "memfd"}, 2, `ipcbench: --transport "memfd": want tcp, unix or shm`},
		{[]string{"--repeat", "0"}, 2, "must be >= 1, --payload 0..1MiB"},
		{[]string{"--payload", "2000000"}, 2, "must be >= 1, --payload 0..1MiB"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), c.args, &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("ipcbench %v: exit %d, stderr %q; want exit %d and %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
}
