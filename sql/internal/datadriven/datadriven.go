// Package datadriven runs Pebble-style data-driven tests: a file of cases, each a command
// line, an input block, a "----" separator and the expected output, ended by a blank line:
//
//	plan
//	select 1
//	----
//	Project 1
//	  Values rows=1
//
// Lines starting with "#" between cases are comments. Expected output that contains blank
// lines is written between "----" and "----" doubled separators. Run the test with
// -rewrite to write the actual output back into the file.
package datadriven

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of data-driven tests")

// Case is one test case.
type Case struct {
	Pos  string // file:line, for messages
	Cmd  string // the command word
	Args map[string]string
	// ArgOrder lists argument keys in the order written.
	ArgOrder []string
	Input    string
	Expected string
}

// Arg returns a command argument ("key=value" or a bare "key", whose value is "").
func (c *Case) Arg(key string) (string, bool) {
	v, ok := c.Args[key]
	return v, ok
}

// Run runs every case of the file through fn, which returns the actual output.
func Run(t *testing.T, path string, fn func(t *testing.T, c *Case) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out strings.Builder
	i := 0
	for i < len(lines) {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			out.WriteString(line)
			if i < len(lines)-1 {
				out.WriteByte('\n')
			}
			i++
			continue
		}
		c := &Case{Pos: fmt.Sprintf("%s:%d", path, i+1), Args: map[string]string{}}
		fields := strings.Fields(trimmed)
		c.Cmd = fields[0]
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			c.Args[k] = v
			c.ArgOrder = append(c.ArgOrder, k)
		}
		out.WriteString(line + "\n")
		i++
		var input []string
		for i < len(lines) && lines[i] != "----" {
			input = append(input, lines[i])
			i++
		}
		if i >= len(lines) {
			t.Fatalf("%s: no ---- after the input", c.Pos)
		}
		c.Input = strings.Join(input, "\n")
		for _, l := range input {
			out.WriteString(l + "\n")
		}
		i++ // ----
		double := i < len(lines) && lines[i] == "----"
		var expected []string
		if double {
			i++
			for i < len(lines) && !(lines[i] == "----" && i+1 < len(lines) && lines[i+1] == "----") {
				expected = append(expected, lines[i])
				i++
			}
			i += 2
		} else {
			for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
				expected = append(expected, lines[i])
				i++
			}
		}
		c.Expected = strings.Join(expected, "\n")
		var actual string
		t.Run(fmt.Sprintf("%s/%d", c.Cmd, i), func(t *testing.T) {
			actual = strings.TrimRight(fn(t, c), "\n")
			if !*rewrite && actual != c.Expected {
				t.Errorf("%s: %s %s\n%s\n--- got:\n%s\n--- want:\n%s", c.Pos, c.Cmd, strings.Join(fields[1:], " "), c.Input, actual, c.Expected)
			}
		})
		out.WriteString("----\n")
		if strings.Contains(actual, "\n\n") {
			out.WriteString("----\n" + actual + "\n----\n----\n")
		} else {
			out.WriteString(actual + "\n")
		}
	}
	if *rewrite {
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
}
