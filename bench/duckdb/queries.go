package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/colinkdb/colink/dbt3/queries"
)

// query is one benchmark query: a TPC-H script (Q1 … Q22) or one of the original ColumnStore
// experiment's three extra queries (CS1 … CS3).
type query struct {
	Name       string   // "Q1" … "Q22", "CS1" … "CS3": the name in the records
	Number     int      // TPC-H query number; 0 for the extra queries
	Script     string   // the script as read, before adaptation
	Statements []string // what DuckDB runs, in order, adapted
	// Adaptations lists what was changed in the script for DuckDB, one line each.
	Adaptations []string
}

// extraQueries are the three queries of the original ColumnStore experiment.
var extraQueries = [...]string{
	"select l_orderkey from lineitem order by 1 limit 100;",
	"select l_comment from lineitem order by 1 limit 100;",
	"select count(*) from orders, lineitem where l_orderkey = o_orderkey;",
}

// allQueryNames lists every query the runner knows, in the order it runs them.
func allQueryNames() []string {
	var names []string
	for n := 1; n <= queries.Count; n++ {
		names = append(names, "Q"+strconv.Itoa(n))
	}
	for i := range extraQueries {
		names = append(names, "CS"+strconv.Itoa(i+1))
	}
	return names
}

// parseSelection turns a --queries value such as "1,3,CS1", "q5-q8" or "all" into query
// names in the order given, each once.
func parseSelection(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "all") {
		return allQueryNames(), nil
	}
	var out []string
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if lo, hi, ok := strings.Cut(item, "-"); ok {
			a, errA := tpchNumber(lo)
			b, errB := tpchNumber(hi)
			if errA != nil || errB != nil || a > b {
				return nil, fmt.Errorf("query range %q: want N-M with 1 ≤ N ≤ M ≤ %d", item, queries.Count)
			}
			for n := a; n <= b; n++ {
				add("Q" + strconv.Itoa(n))
			}
			continue
		}
		name, err := canonicalName(item)
		if err != nil {
			return nil, err
		}
		add(name)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no queries selected by %q", s)
	}
	return out, nil
}

// tpchNumber parses "7" or "Q7" as TPC-H query 7.
func tpchNumber(s string) (int, error) {
	s = strings.TrimSpace(s)
	if len(s) > 0 && (s[0] == 'q' || s[0] == 'Q') {
		s = s[1:]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > queries.Count {
		return 0, fmt.Errorf("no TPC-H query %q (want 1 … %d)", s, queries.Count)
	}
	return n, nil
}

// canonicalName maps "7", "q7", "Q7", "cs2" to the record names "Q7", "CS2".
func canonicalName(s string) (string, error) {
	up := strings.ToUpper(strings.TrimSpace(s))
	if rest, ok := strings.CutPrefix(up, "CS"); ok {
		k, err := strconv.Atoi(rest)
		if err != nil || k < 1 || k > len(extraQueries) {
			return "", fmt.Errorf("no extra query %q (want CS1 … CS%d)", s, len(extraQueries))
		}
		return "CS" + strconv.Itoa(k), nil
	}
	n, err := tpchNumber(up)
	if err != nil {
		return "", fmt.Errorf("unknown query %q (want 1 … %d, Q1 … Q%d or CS1 … CS%d)",
			s, queries.Count, queries.Count, len(extraQueries))
	}
	return "Q" + strconv.Itoa(n), nil
}

// loadQueries reads the named queries. TPC-H scripts come from dir when it is set (files
// N.sql, or PP-qN.sql as `dbt3 qgen --out` names them), else from the main module's embedded
// validation scripts.
func loadQueries(names []string, dir string) ([]query, error) {
	out := make([]query, 0, len(names))
	for _, name := range names {
		var q query
		q.Name = name
		if rest, ok := strings.CutPrefix(name, "CS"); ok {
			k, _ := strconv.Atoi(rest)
			q.Script = extraQueries[k-1]
		} else {
			n, _ := strconv.Atoi(strings.TrimPrefix(name, "Q"))
			q.Number = n
			var err error
			if dir == "" {
				q.Script, err = queries.Get(n)
			} else {
				q.Script, err = readScript(dir, n)
			}
			if err != nil {
				return nil, err
			}
		}
		stmts := queries.Split(q.Script)
		if len(stmts) == 0 {
			return nil, fmt.Errorf("query %s: the script holds no statement", name)
		}
		for _, s := range stmts {
			a, notes := adaptForDuckDB(s)
			q.Statements = append(q.Statements, a)
			q.Adaptations = append(q.Adaptations, notes...)
		}
		out = append(out, q)
	}
	return out, nil
}

// readScript reads TPC-H query n's script from dir.
func readScript(dir string, n int) (string, error) {
	path := filepath.Join(dir, strconv.Itoa(n)+".sql")
	b, err := os.ReadFile(path)
	if err == nil {
		return string(b), nil
	}
	if !os.IsNotExist(err) {
		return "", fmt.Errorf("query %d: %w", n, err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*-q"+strconv.Itoa(n)+".sql"))
	switch len(matches) {
	case 1:
		b, err := os.ReadFile(matches[0])
		if err != nil {
			return "", fmt.Errorf("query %d: %w", n, err)
		}
		return string(b), nil
	case 0:
		return "", fmt.Errorf("query %d: no %s (nor *-q%d.sql) in %s", n, filepath.Base(path), n, dir)
	}
	return "", fmt.Errorf("query %d: several files in %s: %s", n, dir, strings.Join(matches, ", "))
}

// adaptForDuckDB rewrites what DuckDB cannot take of the MySQL-dialect scripts and says what
// it changed. DuckDB 1.5 parses all 22 validation scripts and the three extra queries as they
// are, so today this is the identity; a rewrite belongs here, with its reason, when a script
// needs one.
func adaptForDuckDB(stmt string) (string, []string) {
	return stmt, nil
}

// returnsRows reports whether stmt is a query whose rows the runner reads, as opposed to a
// statement such as Q15's create view and drop view.
func returnsRows(stmt string) bool {
	s := stmt
	for {
		s = strings.TrimSpace(s)
		if !strings.HasPrefix(s, "--") {
			break
		}
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		} else {
			s = ""
		}
	}
	first := strings.ToLower(strings.Fields(s + " x")[0])
	switch strings.TrimLeft(first, "(") {
	case "select", "with", "values", "table", "describe", "show", "explain":
		return true
	}
	return false
}
