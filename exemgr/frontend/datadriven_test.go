package frontend

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
)

// A testdata file holds cases of the form
//
//	directive
//	input lines…
//	----
//	expected output lines…
//	<blank line>
//
// Lines starting with "#" between cases are comments. Run with COLINK_REWRITE=1 to rewrite
// the expected outputs from what the code produces.

type dataCase struct {
	line      int
	directive string
	input     string
	expected  string
}

func readDataCases(t *testing.T, path string) (cases []dataCase, comments map[int][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	comments = map[int][]string{}
	sc := bufio.NewScanner(f)
	var cur *dataCase
	var in, out []string
	state := 0 // 0 between cases, 1 input, 2 expected
	line := 0
	flush := func() {
		if cur != nil {
			cur.input, cur.expected = strings.Join(in, "\n"), strings.Join(out, "\n")
			cases = append(cases, *cur)
		}
		cur, in, out, state = nil, nil, nil, 0
	}
	for sc.Scan() {
		line++
		text := sc.Text()
		switch state {
		case 0:
			if strings.HasPrefix(text, "#") || strings.TrimSpace(text) == "" {
				comments[len(cases)] = append(comments[len(cases)], text)
				continue
			}
			cur = &dataCase{line: line, directive: text}
			state = 1
		case 1:
			if text == "----" {
				state = 2
				continue
			}
			in = append(in, text)
		case 2:
			if text == "" {
				flush()
				continue
			}
			out = append(out, text)
		}
	}
	if state == 1 {
		t.Fatalf("%s:%d: case has no ----", path, cur.line)
	}
	flush()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases, comments
}

// runDataCases checks each case of path against run(directive, input).
func runDataCases(t *testing.T, path string, run func(t *testing.T, directive, input string) string) {
	cases, comments := readDataCases(t, path)
	rewrite := os.Getenv("COLINK_REWRITE") != ""
	for i := range cases {
		c := &cases[i]
		got := strings.TrimRight(run(t, c.directive, c.input), "\n")
		if rewrite {
			c.expected = got
			continue
		}
		if got != c.expected {
			t.Errorf("%s:%d: %s\n%s\ngot:\n%s\nwant:\n%s", path, c.line, c.directive, c.input, got, c.expected)
		}
	}
	if rewrite {
		var b strings.Builder
		for i, c := range cases {
			for _, l := range comments[i] {
				b.WriteString(l + "\n")
			}
			fmt.Fprintf(&b, "%s\n%s\n----\n%s\n\n", c.directive, c.input, c.expected)
		}
		for _, l := range comments[len(cases)] {
			b.WriteString(l + "\n")
		}
		if err := os.WriteFile(path, []byte(strings.TrimRight(b.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
