// Package datadriven owns colink's runner of Pebble-style data-driven tests: a testdata file
// holds cases, each a command line with arguments, input lines, a "----" separator and the
// expected output, ended by a blank line:
//
//	# a comment
//	command key=value flag
//	input
//	----
//	expected output
//
// Lines before a command that are blank or start with "#" are comments. Expected output
// that itself contains blank lines is written between doubled separators:
//
//	command
//	----
//	----
//	first paragraph
//
//	second paragraph
//	----
//	----
//
// Every case runs as a subtest named command/line. Running the test with -rewrite writes
// the actual outputs back into the file (atomically; comments and inputs are kept), for
// review with git diff.
package datadriven

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/colinkdb/colink/internal/atomicfile"
)

// rewrite is the test binary's -rewrite flag; flags are the one package-level state a
// test helper cannot avoid.
var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of data-driven tests")

// Separator divides a case's input from its expected output.
const Separator = "----"

// Arg is one command argument: key=value, or a bare key whose Val is "".
type Arg struct {
	Key, Val string
}

// TestData is one case of a file.
type TestData struct {
	// Pos is file:line of the command line, for messages.
	Pos string
	// Cmd is the command word, CmdArgs its arguments in written order.
	Cmd     string
	CmdArgs []Arg
	// Input and Expected are the lines before and after the separator, joined by "\n"
	// (no trailing newline).
	Input    string
	Expected string
}

// Arg returns the value of argument key and whether it was given.
func (d *TestData) Arg(key string) (string, bool) {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// ArgOr returns the value of argument key, or def when it was not given.
func (d *TestData) ArgOr(key, def string) string {
	if v, ok := d.Arg(key); ok {
		return v
	}
	return def
}

// HasArg reports whether argument key was given (with or without a value).
func (d *TestData) HasArg(key string) bool {
	_, ok := d.Arg(key)
	return ok
}

// Fatalf fails the test with a message that starts with the case's position.
func (d *TestData) Fatalf(t testing.TB, format string, args ...any) {
	t.Helper()
	t.Fatalf("%s: %s", d.Pos, fmt.Sprintf(format, args...))
}

// testCase is a parsed case together with the text around it, so that a rewrite keeps the
// file as written apart from the expected outputs.
type testCase struct {
	header  []string // comment and blank lines before the command line
	cmdLine string
	input   []string
	data    TestData
}

// parsed is a whole file: its cases and the comment lines after the last one.
type parsed struct {
	cases   []testCase
	trailer []string
}

func isComment(line string) bool {
	s := strings.TrimSpace(line)
	return s == "" || strings.HasPrefix(s, "#")
}

// parse reads a file's text; name is used in positions and errors.
func parse(name, text string) (parsed, error) {
	lines := strings.Split(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	var p parsed
	var pending []string
	for i := 0; i < len(lines); {
		if isComment(lines[i]) {
			pending = append(pending, lines[i])
			i++
			continue
		}
		c := testCase{header: pending, cmdLine: lines[i]}
		pending = nil
		line := i + 1
		fields := strings.Fields(lines[i])
		c.data.Pos = fmt.Sprintf("%s:%d", name, line)
		c.data.Cmd = fields[0]
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			c.data.CmdArgs = append(c.data.CmdArgs, Arg{Key: k, Val: v})
		}
		for i++; i < len(lines) && lines[i] != Separator; i++ {
			c.input = append(c.input, lines[i])
		}
		if i >= len(lines) {
			return parsed{}, fmt.Errorf("%s:%d: %s has no %s after its input", name, line, c.data.Cmd, Separator)
		}
		i++
		var expected []string
		if i < len(lines) && lines[i] == Separator {
			// Doubled separators: the output runs to the next pair.
			for i++; ; i++ {
				if i >= len(lines) {
					return parsed{}, fmt.Errorf("%s:%d: output opened with %s%s is not closed by another pair", name, line, Separator, Separator)
				}
				if lines[i] == Separator && i+1 < len(lines) && lines[i+1] == Separator {
					i += 2
					break
				}
				expected = append(expected, lines[i])
			}
		} else {
			for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
				expected = append(expected, lines[i])
			}
		}
		c.data.Input = strings.Join(c.input, "\n")
		c.data.Expected = strings.Join(expected, "\n")
		p.cases = append(p.cases, c)
	}
	p.trailer = pending
	return p, nil
}

// format writes the file back with outputs[i] as the expected output of case i.
func (p parsed) format(outputs []string) string {
	var sb strings.Builder
	for i, c := range p.cases {
		for _, h := range c.header {
			sb.WriteString(h + "\n")
		}
		sb.WriteString(c.cmdLine + "\n")
		for _, l := range c.input {
			sb.WriteString(l + "\n")
		}
		sb.WriteString(Separator + "\n")
		out := outputs[i]
		switch {
		case needsDoubleSeparator(out):
			sb.WriteString(Separator + "\n" + out + "\n" + Separator + "\n" + Separator + "\n")
		case out != "":
			sb.WriteString(out + "\n")
		}
	}
	for _, l := range p.trailer {
		sb.WriteString(l + "\n")
	}
	return sb.String()
}

// needsDoubleSeparator reports whether an output cannot be written as plain lines, which
// end at the first blank one.
func needsDoubleSeparator(out string) bool {
	if out == "" {
		return false
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) == "" {
			return true
		}
	}
	return false
}

// RunTest runs every case of the file at path through f, as subtests, and compares f's
// output (trailing newlines ignored) with the expected output; with -rewrite it writes
// the outputs into the file instead.
func RunTest(t *testing.T, path string, f func(t *testing.T, d *TestData) string) {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := parse(path, string(text))
	if err != nil {
		t.Fatal(err)
	}
	outputs := make([]string, len(p.cases))
	for i := range p.cases {
		d := &p.cases[i].data
		outputs[i] = d.Expected
		name := fmt.Sprintf("%s/%s", d.Cmd, d.Pos[strings.LastIndexByte(d.Pos, ':')+1:])
		t.Run(name, func(t *testing.T) {
			got := strings.TrimRight(f(t, d), "\n")
			if *rewrite {
				outputs[i] = got
				return
			}
			if got != d.Expected {
				t.Errorf("%s: %s\n%s\n----\ngot:\n%s\nwant:\n%s", d.Pos, p.cases[i].cmdLine, d.Input, got, d.Expected)
			}
		})
	}
	if *rewrite {
		if err := rewriteFile(path, p.format(outputs)); err != nil {
			t.Fatal(err)
		}
	}
}

// Walk runs f on every file in dir (not in its subdirectories), in name order, as
// subtests named after the files.
func Walk(t *testing.T, dir string, f func(t *testing.T, path string)) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		t.Run(n, func(t *testing.T) { f(t, filepath.Join(dir, n)) })
	}
}

// rewriteFile replaces the test file at path with text, atomically, keeping its mode.
func rewriteFile(path, text string) error {
	perm := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	if err := atomicfile.Write(path, []byte(text), perm); err != nil {
		return fmt.Errorf("datadriven: rewrite: %w", err)
	}
	return nil
}
