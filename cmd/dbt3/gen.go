package main

import (
	"context"

	"github.com/colinkdb/colink/dbt3"
)

// runGen implements "dbt3 gen": TPC-H tables and refresh sets, byte-identical to dbgen 2.14.
func runGen(ctx context.Context, out dbt3.Output, args []string) error {
	fs := newFlagSet("gen", out, "usage: dbt3 gen --sf F --out DIR [--format tbl|parquet] [--tables t1,t2] [--chunks N] [--refresh N]", "\nGenerates the TPC-H tables as dbgen 2.14 does, using every core.")
	c := dbt3.DefaultGenConfig()
	fs.StringVar(&c.SF, "sf", c.SF, "scale factor: a whole number from 1 to 100000, or thousandths below 1 (0.01, 0.1)")
	fs.StringVar(&c.Dir, "out", "", "output directory (created if missing; required)")
	fs.StringVar(&c.Format, "format", c.Format, "table file format: tbl (dbgen's text) or parquet")
	fs.StringSliceVar(&c.Tables, "tables", nil, "tables to write (default all eight; \"none\" writes only refresh sets)")
	fs.IntVar(&c.Chunks, "chunks", c.Chunks, "files per table, divided as dbgen -C N divides them (name.tbl.K)")
	fs.IntVar(&c.Refresh, "refresh", 0, "refresh sets to write (orders.tbl.uK, lineitem.tbl.uK, delete.K), as dbgen -U N")
	fs.IntVar(&c.Workers, "workers", 0, "generator goroutines (default: GOMAXPROCS)")
	fs.BoolVar(&c.NoSync, "no-sync", false, "do not fsync files before renaming them into place")
	fs.BoolVar(&c.Stats, "stats", false, "print wall and CPU time, peak RSS and context switches at the end")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile (pprof) of the generation to this file")
	fs.StringVar(&c.MemProfile, "memprofile", "", "write a heap profile (pprof) to this file at the end")
	if err := parseFlags(fs, out, args); err != nil {
		return err
	}
	return dbt3.Generate(ctx, c, out)
}

// runQgen implements "dbt3 qgen": the 22 queries of a stream, in the stream's order, with
// the parameters TPC-H's qgen draws from a seed.
func runQgen(ctx context.Context, out dbt3.Output, args []string) error {
	fs := newFlagSet("qgen", out, "usage: dbt3 qgen --seed S [--stream N] [--sf F] [--out DIR] [--validation] [--compat-214]", `
Writes stream N's 22 queries (MySQL dialect) in the stream's TPC-H order: to stdout, or
with --out one file per query, named position-query (01-q14.sql, 02-q2.sql, ...).`)
	var c dbt3.QgenConfig
	fs.Int64Var(&c.Seed, "seed", 0, "random seed, as qgen -r (required unless --validation)")
	fs.IntVar(&c.Stream, "stream", 0, "stream number: 0 is the power test, 1… the throughput streams (qgen -p)")
	fs.StringVar(&c.SF, "sf", "1", "scale factor of the data (sets Q11's fraction, 0.0001/SF)")
	fs.StringVar(&c.Dir, "out", "", "directory for one file per query (default: the whole stream to stdout)")
	fs.BoolVar(&c.Validation, "validation", false, "use the validation parameters (qgen -d) instead of random ones")
	fs.BoolVar(&c.Compat214, "compat-214", false, "draw exactly as qgen 2.14, whose Q4 and Q22 parameters leave the spec's domains")
	if err := parseFlags(fs, out, args); err != nil {
		return err
	}
	if !c.Validation && !fs.Changed("seed") {
		return dbt3.Usagef("--seed is required (or --validation)")
	}
	return dbt3.Qgen(c, out.Stdout)
}
