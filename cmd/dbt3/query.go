package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/dbt3"
)

// defaultMySQL is exemgr's default MySQL address.
const defaultMySQL = "127.0.0.1:4306"

// runQuery implements "dbt3 query": one script through exemgr, its query's result printed.
func runQuery(ctx context.Context, e *env, args []string) error {
	fs := pflag.NewFlagSet("query", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: dbt3 query [--mysql ADDR] (-q N | -f FILE.sql | -e SQL) [--format psv|table] [--stats]")
		fmt.Fprintln(e.stderr, `
Runs a script's statements in order on one session with exemgr (Q15's create view, select,
drop view included) and prints the result of the last statement that returned rows: as the
TPC-H answer files spell results (psv: a header, values separated by |, decimals at their
scale, NULL as nothing) or as the mysql client's table.`)
		fs.PrintDefaults()
	}
	addr := fs.String("mysql", defaultMySQL, "exemgr's MySQL address: host:port or a unix socket path")
	database := fs.String("database", dbt3.DefaultDatabase, "database to use")
	query := fs.StringP("query", "q", "", "TPC-H query N (1–22, with the validation parameters) or the ColumnStore experiment's CS1–CS3")
	file := fs.StringP("file", "f", "", "script to run (- for stdin)")
	text := fs.StringP("execute", "e", "", "statements to run instead of a file")
	format := fs.String("format", "psv", "output format: psv or table")
	stats := fs.Bool("stats", false, "print each process's CPU, context switches and the link's traffic (SHOW QUERY STATS) on stderr")
	if err := parseFlags(fs, e, args); err != nil {
		return err
	}
	if n := btoi(*query != "") + btoi(*file != "") + btoi(*text != ""); n != 1 {
		return usagef("give exactly one of -q N, -f FILE and -e SQL")
	}
	if *format != "psv" && *format != "table" {
		return usagef("--format %q: want psv or table", *format)
	}
	if _, err := dbt3.MySQLConfig(*addr, *database); err != nil {
		return usagef("--mysql: %v", err)
	}
	script := *text
	if *query != "" {
		qs, err := dbt3.SelectQueries(*query)
		if err != nil || len(qs) != 1 {
			return usagef("-q %q: want one query, 1–22 or CS1–CS3", *query)
		}
		script = qs[0].Script
	}
	if *file != "" {
		var b []byte
		var err error
		if *file == "-" {
			b, err = io.ReadAll(os.Stdin)
		} else {
			b, err = os.ReadFile(*file)
		}
		if err != nil {
			return usagef("-f: %v", err)
		}
		script = string(b)
	}
	conn, err := dbt3.Dial(ctx, *addr, *database)
	if err != nil {
		return err
	}
	defer conn.Close()
	m := &dbt3.Measurer{Conn: conn, Stats: *stats}
	ex, err := m.Run(ctx, dbt3.Query{Name: "script", Script: script})
	if err != nil {
		return err
	}
	if *stats {
		printSampleStats(e, ex)
	}
	if ex.Result == nil {
		fmt.Fprintln(e.stderr, "dbt3 query: the script returned no result set")
		return nil
	}
	if *format == "table" {
		return ex.Result.WriteTable(e.stdout)
	}
	return ex.Result.WritePSV(e.stdout)
}

// printSampleStats prints an execution's measurement on stderr, one line per process.
func printSampleStats(e *env, ex *dbt3.Execution) {
	s := ex.Sample
	fmt.Fprintf(e.stderr, "elapsed %.3fs, %d rows\n", s.Elapsed, s.Rows)
	names := make([]string, 0, len(s.Procs))
	for n := range s.Procs {
		names = append(names, n)
	}
	sortProcesses(names)
	for _, n := range names {
		u := s.Procs[n]
		fmt.Fprintf(e.stderr, "%-10s user %.3fs sys %.3fs ctxsw %d voluntary %d involuntary\n", n, u.User, u.Sys, u.Voluntary, u.Involuntary)
	}
	if l := s.Link; l != nil {
		fmt.Fprintf(e.stderr, "link       %d bytes to primprocs, %d from; %d/%d batches; %d frames, %d syscalls\n",
			l.BytesOut, l.BytesIn, l.BatchesOut, l.BatchesIn, l.Frames, l.Syscalls)
	}
	for _, c := range s.Checks {
		fmt.Fprintln(e.stderr, "check:", c)
	}
}

// sortProcesses orders exemgr first, then primproc0, primproc1, ….
func sortProcesses(names []string) {
	key := func(n string) string {
		if n == "exemgr" {
			return ""
		}
		if rest, ok := strings.CutPrefix(n, "primproc"); ok {
			return fmt.Sprintf("p%08s", rest)
		}
		return "z" + n
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(key(a), key(b)) })
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
