package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/dbt3/report"
)

// runReport implements "dbt3 report": Markdown and SVG from run records.
func runReport(ctx context.Context, e *env, args []string) error {
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: dbt3 report [--out DIR] COMPARE.json [DUCKDB.json]")
		fmt.Fprintln(e.stderr, `
Writes report.md and the SVG plots of a comparison run (dbt3 compare or bench), with a
DuckDB run of the same queries (bench/duckdb) beside it if given: per query elapsed time
over tcp and unix with each daemon's CPU, the unix/tcp ratios, colink against DuckDB.`)
		fs.PrintDefaults()
	}
	out := fs.String("out", "", "directory to write into (default: the comparison run's directory)")
	fs.SetOutput(e.stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return &usageError{err}
	}
	if fs.NArg() == 0 {
		return usagef("give the run files (a comparison's compare.json, optionally a DuckDB run's JSON)")
	}
	rs, err := report.ReadRuns(fs.Args())
	if err != nil {
		return usagef("%v", err)
	}
	dir := *out
	if dir == "" {
		for _, p := range fs.Args() {
			if r, _ := report.ReadRuns([]string{p}); r.Compare != nil {
				dir = filepath.Dir(p)
				break
			}
		}
	}
	_, files, err := report.Write(dir, rs)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(e.stdout, f)
	}
	return nil
}
