// Package queries hands out the 22 DBT3/TPC-H queries with the TPC-H validation parameters
// (clause 2.4, `qgen -d`), in the standard text exemgr accepts. The one copy of the texts is
// tpch's templates (tpch/queries, TPC-H's own with only Oracle's interval precision and row
// limit turned into MySQL's; see tpch's TestTemplatesAreTheOfficialOnes): Get renders them,
// and `dbt3 qgen --validation --out DIR` writes them as files.
//
// Every statement ends with ";". Q15 is three statements: create view, select, drop view.
package queries

import (
	"fmt"
	"strings"

	"github.com/colinkdb/colink/tpch"
)

// Count is the number of TPC-H queries.
const Count = 22

// Get returns the text of query n (1 … 22).
func Get(n int) (string, error) {
	if n < 1 || n > Count {
		return "", fmt.Errorf("queries: no TPC-H query %d (want 1 … %d)", n, Count)
	}
	// Stream 0, SF 1's parameters (Q11's fraction 0.0001, as the answer files take it).
	text, err := tpch.RenderQuery(n, 0, tpch.ValidationParams(n, 1))
	if err != nil {
		return "", fmt.Errorf("queries: query %d: %w", n, err)
	}
	return text, nil
}

// Split cuts a script into its statements at each ";" that lies outside quotes and comments.
// Statements come back without their ";", trimmed; empty ones and comment-only ones are left
// out. Comment lines ("-- " to end of line) inside a statement are kept.
func Split(script string) []string {
	var out []string
	start := 0
	emit := func(end int) {
		s := strings.TrimSpace(script[start:end])
		if s != "" && !onlyComments(s) {
			out = append(out, s)
		}
	}
	for i := 0; i < len(script); i++ {
		switch c := script[i]; c {
		case '\'', '"', '`':
			// Skip to the closing quote; a doubled quote or a backslash escape stays inside.
			for i++; i < len(script); i++ {
				if script[i] == '\\' && c != '`' {
					i++
					continue
				}
				if script[i] == c {
					if i+1 < len(script) && script[i+1] == c {
						i++
						continue
					}
					break
				}
			}
		case '-':
			if strings.HasPrefix(script[i:], "--") {
				for i < len(script) && script[i] != '\n' {
					i++
				}
			}
		case '#':
			for i < len(script) && script[i] != '\n' {
				i++
			}
		case '/':
			if strings.HasPrefix(script[i:], "/*") {
				if j := strings.Index(script[i+2:], "*/"); j >= 0 {
					i += j + 3
				} else {
					i = len(script)
				}
			}
		case ';':
			emit(i)
			start = i + 1
		}
	}
	emit(len(script))
	return out
}

// onlyComments reports whether s holds nothing but line comments and blank space.
func onlyComments(s string) bool {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "--") && !strings.HasPrefix(line, "#") {
			return false
		}
	}
	return true
}
