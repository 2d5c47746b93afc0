package dbt3

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/colinkdb/colink/dbt3/measure"
)

// DefaultMySQL is exemgr's default MySQL address.
const DefaultMySQL = "127.0.0.1:4306"

// ScriptConfig is what "dbt3 query" runs: one script on one session with exemgr, given as
// exactly one of Query, File and Execute. Settings RunScript cannot use are *UsageError
// naming the flag.
type ScriptConfig struct {
	Addr, Database string
	// Query is TPC-H query N (1–22, with the validation parameters) or the ColumnStore
	// experiment's CS1–CS3.
	Query string
	File  string    // a script file; "-" reads Stdin
	Stdin io.Reader // read for File "-"
	// Execute is the statements themselves.
	Execute string
	// Format is psv (as the TPC-H answer files spell results: a header, values separated
	// by |, decimals at their scale, NULL as nothing), table (the mysql client's), csv
	// (RFC 4180, NULL as \N) or json (an array of objects, NULL as null).
	Format string
	// Stats prints each process's CPU, context switches and the link's traffic (SHOW QUERY
	// STATS) on Stderr.
	Stats bool
}

// script checks cfg and returns the script it names.
func (cfg *ScriptConfig) script() (string, error) {
	if n := btoi(cfg.Query != "") + btoi(cfg.File != "") + btoi(cfg.Execute != ""); n != 1 {
		return "", Usagef("give exactly one of -q N, -f FILE and -e SQL")
	}
	switch cfg.Format {
	case "psv", "table", "csv", "json":
	default:
		return "", Usagef("--format %q: want psv, table, csv or json", cfg.Format)
	}
	if _, err := MySQLConfig(cfg.Addr, cfg.Database); err != nil {
		return "", Usagef("--mysql: %v", err)
	}
	switch {
	case cfg.Query != "":
		qs, err := SelectQueries(cfg.Query)
		if err != nil || len(qs) != 1 {
			return "", Usagef("-q %q: want one query, 1–22 or CS1–CS3", cfg.Query)
		}
		return qs[0].Script, nil
	case cfg.File != "":
		var b []byte
		var err error
		if cfg.File == "-" {
			b, err = io.ReadAll(cfg.Stdin)
		} else {
			b, err = os.ReadFile(cfg.File)
		}
		if err != nil {
			return "", Usagef("-f: %v", err)
		}
		return string(b), nil
	}
	return cfg.Execute, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// RunScript runs cfg's statements in order on one session (Q15's create view, select, drop
// view included) and prints the result of the last statement that returned rows on Stdout.
func RunScript(ctx context.Context, cfg ScriptConfig, out Output) error {
	script, err := cfg.script()
	if err != nil {
		return err
	}
	conn, err := Dial(ctx, cfg.Addr, cfg.Database)
	if err != nil {
		return err
	}
	defer conn.Close()
	m := &Measurer{Conn: conn, Stats: cfg.Stats}
	ex, err := m.Run(ctx, Query{Name: "script", Script: script})
	if err != nil {
		return err
	}
	if cfg.Stats {
		printSampleStats(out, ex)
	}
	if ex.Result == nil {
		fmt.Fprintln(out.Stderr, "dbt3 query: the script returned no result set")
		return nil
	}
	switch cfg.Format {
	case "table":
		return ex.Result.WriteTable(out.Stdout)
	case "csv":
		return ex.Result.WriteCSV(out.Stdout)
	case "json":
		return ex.Result.WriteJSON(out.Stdout)
	}
	return ex.Result.WritePSV(out.Stdout)
}

// printSampleStats prints an execution's measurement on stderr, one line per process.
func printSampleStats(out Output, ex *Execution) {
	s := ex.Sample
	fmt.Fprintf(out.Stderr, "elapsed %.3fs, %d rows\n", s.Elapsed, s.Rows)
	names := make([]string, 0, len(s.Procs))
	for n := range s.Procs {
		names = append(names, n)
	}
	slices.SortFunc(names, measure.CompareProcesses)
	for _, n := range names {
		u := s.Procs[n]
		fmt.Fprintf(out.Stderr, "%-10s user %.3fs sys %.3fs ctxsw %d voluntary %d involuntary\n", n, u.User, u.Sys, u.Voluntary, u.Involuntary)
	}
	if l := s.Link; l != nil {
		fmt.Fprintf(out.Stderr, "link       %d bytes to primprocs, %d from; %d/%d batches; %d frames, %d syscalls\n",
			l.BytesOut, l.BytesIn, l.BatchesOut, l.BatchesIn, l.Frames, l.Syscalls)
	}
	for _, c := range s.Checks {
		fmt.Fprintln(out.Stderr, "check:", c)
	}
}
