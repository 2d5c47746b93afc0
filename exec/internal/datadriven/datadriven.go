// Package datadriven runs Pebble-style data-driven test files: each case is a command
// line, input lines, a "----" separator and the expected output, ended by a blank line.
//
//	# a comment
//	command key=value flag
//	input
//	----
//	expected output
//
// Setting COLINK_REWRITE=1 rewrites the files with the actual outputs (review the diff).
package datadriven

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestData is one case.
type TestData struct {
	Pos      string // file:line
	Cmd      string
	Args     map[string]string
	Input    string
	Expected string
}

// Arg returns a key=value argument, or def.
func (d *TestData) Arg(key, def string) string {
	if v, ok := d.Args[key]; ok {
		return v
	}
	return def
}

// HasArg reports whether a key (with or without a value) was given.
func (d *TestData) HasArg(key string) bool {
	_, ok := d.Args[key]
	return ok
}

type block struct {
	header   []string // comments and blank lines before the case
	cmdLine  string
	input    []string
	expected []string
	line     int
}

func parse(path string) ([]block, []string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	lines := strings.Split(string(raw), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var blocks []block
	var pending []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
			pending = append(pending, l)
			continue
		}
		b := block{header: pending, cmdLine: l, line: i + 1}
		pending = nil
		i++
		for ; i < len(lines) && lines[i] != "----"; i++ {
			b.input = append(b.input, lines[i])
		}
		if i >= len(lines) {
			return nil, nil, fmt.Errorf("%s:%d: case without ----", path, b.line)
		}
		i++
		for ; i < len(lines) && lines[i] != ""; i++ {
			b.expected = append(b.expected, lines[i])
		}
		i-- // the blank line (if any) belongs to the next case's header
		blocks = append(blocks, b)
	}
	return blocks, pending, nil
}

func parseCmd(line string) (string, map[string]string) {
	fields := strings.Fields(line)
	args := map[string]string{}
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		args[k] = v
	}
	return fields[0], args
}

// RunTest runs every case of a file through f, comparing f's output with the expected.
func RunTest(t *testing.T, path string, f func(t *testing.T, d *TestData) string) {
	t.Helper()
	blocks, trailer, err := parse(path)
	if err != nil {
		t.Fatal(err)
	}
	rewrite := os.Getenv("COLINK_REWRITE") == "1"
	for bi := range blocks {
		b := &blocks[bi]
		cmd, args := parseCmd(b.cmdLine)
		d := &TestData{
			Pos:      fmt.Sprintf("%s:%d", filepath.Base(path), b.line),
			Cmd:      cmd,
			Args:     args,
			Input:    strings.Join(b.input, "\n"),
			Expected: strings.Join(b.expected, "\n"),
		}
		got := strings.TrimRight(f(t, d), "\n")
		if strings.Contains(got, "\n\n") {
			t.Fatalf("%s: output contains a blank line, which the format cannot hold:\n%s", d.Pos, got)
		}
		if rewrite {
			b.expected = nil
			if got != "" {
				b.expected = strings.Split(got, "\n")
			}
			continue
		}
		if got != d.Expected {
			t.Errorf("%s: %s\n%s\n----\ngot:\n%s\n\nwant:\n%s", d.Pos, b.cmdLine, d.Input, got, d.Expected)
		}
	}
	if rewrite {
		var sb strings.Builder
		for _, b := range blocks {
			for _, h := range b.header {
				sb.WriteString(h + "\n")
			}
			sb.WriteString(b.cmdLine + "\n")
			for _, l := range b.input {
				sb.WriteString(l + "\n")
			}
			sb.WriteString("----\n")
			for _, l := range b.expected {
				sb.WriteString(l + "\n")
			}
		}
		for _, h := range trailer {
			sb.WriteString(h + "\n")
		}
		if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Walk runs f on every file in dir, as subtests named after the files.
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
