package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/dbt3"
	"github.com/colinkdb/colink/dbt3/report"
)

// runReport implements "dbt3 report": Markdown and SVG from run records.
func runReport(ctx context.Context, out dbt3.Output, args []string) error {
	fs := newFlagSet("report", out, "usage: dbt3 report [--out DIR] COMPARE.json [DUCKDB.json]", `
Writes report.md and the SVG plots of a comparison run (dbt3 compare or bench), with a
DuckDB run of the same queries (bench/duckdb) beside it if given: per query elapsed time
over tcp and unix with each daemon's CPU, the unix/tcp ratios, colink against DuckDB.`)
	dir := fs.String("out", "", "directory to write into (default: the comparison run's directory)")
	fs.SetOutput(out.Stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return &dbt3.UsageError{Err: err}
	}
	if fs.NArg() == 0 {
		return dbt3.Usagef("give the run files (a comparison's compare.json, optionally a DuckDB run's JSON)")
	}
	rs, err := report.ReadRuns(fs.Args())
	if err != nil {
		return dbt3.Usagef("%v", err)
	}
	if *dir == "" {
		*dir = report.RunDir(fs.Args())
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return dbt3.Usagef("--out: %v", err)
	}
	_, files, err := report.Write(*dir, rs)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(out.Stdout, f)
	}
	return nil
}
