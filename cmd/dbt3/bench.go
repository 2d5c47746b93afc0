package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/tpch"
)

// runBench implements "dbt3 bench": the main job in one command.
func runBench(ctx context.Context, e *env, args []string) error {
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: dbt3 bench [--sf 1] [--data data] [--runs 3] [--transports tcp,unix] [--primprocs 1] [--answers DIR] [--out DIR]")
		fmt.Fprintln(e.stderr, `
The whole measurement on a fresh machine: generates the TPC-H tables (Parquet, the files
bench/duckdb reads too) into DATA/sfF-parquet unless they are there, builds and starts
primproc(s) as child processes, loads them once into DATA/colink-sfF-ppN, runs the
transport comparison (see dbt3 compare --help), writes results/<run-id>/ and prints the
elapsed table. The daemons are stopped on exit and on Ctrl-C. A DuckDB run of the same
scale at results/duckdb-sfF/duckdb.json is put beside colink in the report.`)
		fs.PrintDefaults()
	}
	var o compareOptions
	o.register(fs)
	if f := fs.Lookup("data"); f != nil {
		f.DefValue = "data"
		f.Usage = "directory for the generated tables and the primprocs' stores, created if missing; both are reused by later runs"
	}
	if err := parseFlags(fs, e, args); err != nil {
		return err
	}
	if !fs.Changed("data") {
		o.data = "data"
	}
	if fs.Changed("from") {
		return usagef("--from: bench generates its own tables into --data; use dbt3 compare --from")
	}
	scale, err := tpch.ParseScale(o.sf)
	if err != nil {
		return usagef("--sf: %v", err)
	}
	// Check the other flags before generating anything.
	probe := o
	probe.data = ""
	if _, err := probe.validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(o.data, 0o755); err != nil {
		return usagef("--data: %v", err)
	}
	genDir := filepath.Join(o.data, "sf"+scale.String()+"-parquet")
	if missing := missingTables(genDir); len(missing) > 0 {
		fmt.Fprintf(e.stderr, "dbt3 bench: generating SF %s into %s (missing: %s)\n", scale, genDir, strings.Join(missing, ", "))
		if err := runGen(ctx, e, []string{"--sf", scale.String(), "--out", genDir, "--format", "parquet"}); err != nil {
			return fmt.Errorf("generate: %w", err)
		}
	}
	o.from = genDir
	if o.duckdb == "" {
		if p := filepath.Join("results", "duckdb-sf"+scale.String(), "duckdb.json"); fileExists(p) {
			o.duckdb = p
		}
	}
	return o.run(ctx, e, "dbt3 bench "+strings.Join(args, " "))
}

// missingTables lists the tables without a Parquet file in dir.
func missingTables(dir string) []string {
	var out []string
	for _, t := range tpch.TableNames() {
		if !fileExists(filepath.Join(dir, t+".parquet")) {
			out = append(out, t)
		}
	}
	return out
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
