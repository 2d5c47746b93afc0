package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// exploreFile is enginetest's sqllogictest-style suite of queries a person types while
// exploring TPC-H data at SF 0.01, with results checked against DuckDB; here it runs
// through the real daemons.
var exploreFile = filepath.Join("..", "..", "internal", "enginetest", "testdata", "explore")

// exploreCase is one case of the file: "query [rowsort]" with its result in psv form (NULL
// as NULL), or "error" with the MySQL error it fails with.
type exploreCase struct {
	pos      string
	cmd      string
	rowsort  bool
	input    string
	expected string
}

// readExplore parses the file: comments (#) and blank lines between cases; a case is its
// command line, its input up to "----", and its expected output up to a blank line.
func readExplore(path string) ([]exploreCase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cases []exploreCase
	sc := bufio.NewScanner(f)
	line := 0
	next := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		line++
		return sc.Text(), true
	}
	for {
		l, ok := next()
		if !ok {
			break
		}
		if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		fields := strings.Fields(l)
		c := exploreCase{pos: fmt.Sprintf("%s:%d", path, line), cmd: fields[0], rowsort: slices.Contains(fields[1:], "rowsort")}
		var in, out []string
		for {
			l, ok := next()
			if !ok {
				return nil, fmt.Errorf("%s: no ---- after the input", c.pos)
			}
			if l == "----" {
				break
			}
			in = append(in, l)
		}
		for {
			l, ok := next()
			if !ok || l == "" {
				break
			}
			out = append(out, l)
		}
		c.input, c.expected = strings.Join(in, "\n"), strings.Join(out, "\n")
		cases = append(cases, c)
	}
	return cases, sc.Err()
}

// TestExplore runs the exploratory suite through exemgr with one primproc and with two.
func TestExplore(t *testing.T) {
	needDaemons(t)
	cases, err := readExplore(exploreFile)
	if err != nil {
		t.Skipf("the exploratory suite is not readable: %v", err)
	}
	for _, layout := range layouts {
		c := shared.cluster(t, layout.name, layout.primprocs, "0.01")
		t.Run(layout.name, func(t *testing.T) {
			conn := shared.exemgr(t, c, "tcp").conn(t)
			for _, tc := range cases {
				got := ""
				tb, err := runScript(context.Background(), conn, tc.input, "NULL")
				switch {
				case tc.cmd == "query" && err != nil:
					got = "error: " + errorText(err)
				case tc.cmd == "query":
					if tc.rowsort {
						slices.SortFunc(tb.Rows, func(a, b []string) int {
							return strings.Compare(strings.Join(a, "|"), strings.Join(b, "|"))
						})
					}
					got = strings.TrimRight(tb.String(), "\n")
				case tc.cmd == "error" && err == nil:
					got = "no error:\n" + tb.String()
				case tc.cmd == "error":
					got = errorText(err)
				default:
					t.Fatalf("%s: unknown command %q", tc.pos, tc.cmd)
				}
				if got != tc.expected {
					t.Errorf("%s: %s\ngot:\n%s\nwant:\n%s", tc.pos, tc.input, got, tc.expected)
				}
			}
		})
	}
}
