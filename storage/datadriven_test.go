package storage

import (
	"bufio"
	"flag"
	"os"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata files with the actual output")

// testCase is one block of a data-driven test file:
//
//	command line
//	----
//	expected output (up to a blank line)
type testCase struct {
	line     int
	cmd      string
	expected string
}

// runDataDriven runs every case of a testdata file through fn and compares fn's output with
// the expected text (with -rewrite, it writes the actual outputs back instead).
func runDataDriven(t *testing.T, path string, fn func(t *testing.T, cmd string) string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		out   strings.Builder
		cases []testCase
		cur   *testCase
		inOut bool
		lines []string
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		lines = append(lines, line)
		switch {
		case cur == nil && (line == "" || strings.HasPrefix(line, "#")):
		case cur == nil:
			cases = append(cases, testCase{line: n, cmd: line})
			cur = &cases[len(cases)-1]
		case !inOut && line == "----":
			inOut = true
		case !inOut:
			cur.cmd += "\n" + line
		case line == "":
			cur, inOut = nil, false
		default:
			cur.expected += line + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		got := fn(t, c.cmd)
		if got != "" && !strings.HasSuffix(got, "\n") {
			got += "\n"
		}
		if *rewrite {
			out.WriteString(c.cmd + "\n----\n" + got + "\n")
			continue
		}
		if got != c.expected {
			t.Errorf("%s:%d: %s\ngot:\n%swant:\n%s", path, c.line, c.cmd, got, c.expected)
		}
	}
	if *rewrite {
		header := ""
		for _, l := range lines {
			if !strings.HasPrefix(l, "#") {
				break
			}
			header += l + "\n"
		}
		if err := os.WriteFile(path, []byte(header+"\n"+out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
