package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/tpch"
)

// runGen implements "dbt3 gen": TPC-H tables and refresh sets, byte-identical to dbgen 2.14.
func runGen(ctx context.Context, e *env, args []string) error {
	fs := pflag.NewFlagSet("gen", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: dbt3 gen --sf F --out DIR [--format tbl|parquet] [--tables t1,t2] [--chunks N] [--refresh N]")
		fmt.Fprintln(e.stderr, "\nGenerates the TPC-H tables as dbgen 2.14 does, using every core.")
		fs.PrintDefaults()
	}
	sf := fs.String("sf", "1", "scale factor: a whole number from 1 to 100000, or thousandths below 1 (0.01, 0.1)")
	out := fs.String("out", "", "output directory (created if missing; required)")
	format := fs.String("format", "tbl", "table file format: tbl (dbgen's text) or parquet")
	tables := fs.StringSlice("tables", nil, "tables to write (default all eight; \"none\" writes only refresh sets)")
	chunks := fs.Int("chunks", 1, "files per table, divided as dbgen -C N divides them (name.tbl.K)")
	refresh := fs.Int("refresh", 0, "refresh sets to write (orders.tbl.uK, lineitem.tbl.uK, delete.K), as dbgen -U N")
	workers := fs.Int("workers", 0, "generator goroutines (default: GOMAXPROCS)")
	noSync := fs.Bool("no-sync", false, "do not fsync files before renaming them into place")
	stats := fs.Bool("stats", false, "print wall and CPU time, peak RSS and context switches at the end")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (pprof) of the generation to this file")
	memProfile := fs.String("memprofile", "", "write a heap profile (pprof) to this file at the end")
	if err := parseFlags(fs, e, args); err != nil {
		return err
	}

	scale, err := tpch.ParseScale(*sf)
	if err != nil {
		return usagef("--sf: %v", err)
	}
	f, err := tpch.ParseFormat(*format)
	if err != nil {
		return usagef("--format: %v", err)
	}
	if *out == "" {
		return usagef("--out is required")
	}
	if *chunks < 1 {
		return usagef("--chunks %d: must be at least 1", *chunks)
	}
	if *refresh < 0 {
		return usagef("--refresh %d: must not be negative", *refresh)
	}
	var names []string
	if *tables != nil {
		names = []string{}
		for _, t := range *tables {
			t = strings.ToLower(strings.TrimSpace(t))
			if t == "none" {
				continue
			}
			if _, ok := tpch.LookupTable(t); !ok {
				return usagef("--tables: unknown table %q (want some of %s, or none)", t, strings.Join(tpch.TableNames(), ","))
			}
			names = append(names, t)
		}
	}
	if err := ensureWritableDir(*out); err != nil {
		return &usageError{err}
	}

	opts := tpch.Options{Scale: scale, Dir: *out, Format: f, Tables: names, Chunks: *chunks,
		Refresh: *refresh, Workers: *workers, NoSync: *noSync}
	bar := e.progressBar(opts.EstimatedRows(), "generating SF "+scale.String(), "rows")
	if bar != nil {
		opts.Progress = func(n int64) { _ = bar.Add64(n) }
	}
	if *cpuProfile != "" {
		pf, err := os.Create(*cpuProfile)
		if err != nil {
			return usagef("--cpuprofile: %v", err)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	err = tpch.Generate(ctx, opts)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	if *memProfile != "" {
		if err := writeHeapProfile(*memProfile); err != nil {
			return err
		}
	}
	if *stats || e.stderrTerminal {
		fmt.Fprintf(e.stderr, "dbt3 gen: SF %s to %s (%s): %s\n", scale, *out, f, usageReport(selfUsage(), time.Since(start)))
	}
	return nil
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	return nil
}

// ensureWritableDir creates dir if needed and checks that files can be created in it.
func ensureWritableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	f, err := os.CreateTemp(dir, ".dbt3-write-check-*")
	if err != nil {
		return fmt.Errorf("--out: directory %s is not writable: %w", dir, err)
	}
	f.Close()
	return os.Remove(filepath.Clean(f.Name()))
}
