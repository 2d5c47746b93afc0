// Package queries holds the 22 DBT3/TPC-H query scripts with the TPC-H validation
// parameters, in the MySQL dialect exemgr accepts, and hands them to other packages.
//
// Each file N.sql is derived from the TPC qgen template N.sql by these rules, which a qgen
// port must follow to reproduce the files byte for byte with its validation parameters:
//
//   - the template's "-- $ID$" line and its ":x", ":o" and ":n N" directive lines are dropped;
//     its other comment lines are kept, at the top; Q15's are followed by a note that the
//     script is not safe to run concurrently (its view revenue0 is database-wide);
//   - parameters are substituted as `qgen -d` substitutes them (Q11's fraction as
//     0.0001000000, Q6's discount as .06, Q15's view as revenue0);
//   - Oracle's `interval '90' day (3)` is written `interval '90' day`;
//   - Q13's derived-table column list, which TiDB's parser does not accept, moves into the
//     select list: `count(o_orderkey) as c_count` and `) as c_orders`;
//   - a template ending in ":n N" with N > 0 gets `limit N` on a line of its own before the
//     query's final ";";
//   - runs of blank lines become one blank line; the file ends with one newline.
//
// Every statement ends with ";". Q15 is three statements: create view, select, drop view.
package queries

import (
	"embed"
	"fmt"
	"strings"
)

// FS holds the files 1.sql … 22.sql.
//
//go:embed *.sql
var FS embed.FS

// Count is the number of TPC-H queries.
const Count = 22

// Get returns the text of query n (1 … 22).
func Get(n int) (string, error) {
	if n < 1 || n > Count {
		return "", fmt.Errorf("queries: no TPC-H query %d (want 1 … %d)", n, Count)
	}
	b, err := FS.ReadFile(fmt.Sprintf("%d.sql", n))
	if err != nil {
		return "", fmt.Errorf("queries: read query %d: %w", n, err)
	}
	return string(b), nil
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
