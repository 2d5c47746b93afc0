package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/internal/atomicfile"
	"github.com/colinkdb/colink/tpch"
)

// runQgen implements "dbt3 qgen": the 22 queries of a stream, in the stream's order, with
// the parameters TPC-H's qgen draws from a seed.
func runQgen(ctx context.Context, e *env, args []string) error {
	fs := pflag.NewFlagSet("qgen", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: dbt3 qgen --seed S [--stream N] [--sf F] [--out DIR] [--validation] [--compat-214]")
		fmt.Fprintln(e.stderr, "\nWrites stream N's 22 queries (MySQL dialect) in the stream's TPC-H order: to stdout, or")
		fmt.Fprintln(e.stderr, "with --out one file per query, named position-query (01-q14.sql, 02-q2.sql, ...).")
		fs.PrintDefaults()
	}
	seed := fs.Int64("seed", 0, "random seed, as qgen -r (required unless --validation)")
	stream := fs.Int("stream", 0, "stream number: 0 is the power test, 1… the throughput streams (qgen -p)")
	sf := fs.String("sf", "1", "scale factor of the data (sets Q11's fraction, 0.0001/SF)")
	out := fs.String("out", "", "directory for one file per query (default: the whole stream to stdout)")
	validation := fs.Bool("validation", false, "use the validation parameters (qgen -d) instead of random ones")
	compat := fs.Bool("compat-214", false, "draw exactly as qgen 2.14, whose Q4 and Q22 parameters leave the spec's domains")
	if err := parseFlags(fs, e, args); err != nil {
		return err
	}
	if !*validation && !fs.Changed("seed") {
		return usagef("--seed is required (or --validation)")
	}
	if *stream < 0 {
		return usagef("--stream %d: streams are numbered from 0", *stream)
	}
	scale, err := tpch.ParseScale(*sf)
	if err != nil {
		return usagef("--sf: %v", err)
	}
	variant := tpch.QgenSpec
	if *compat {
		variant = tpch.QgenCompat214
	}
	queries, err := tpch.StreamQueries(*seed, *stream, scale.SF(), *validation, variant)
	if err != nil {
		return err
	}
	if *out == "" {
		header := fmt.Sprintf("-- dbt3 qgen: stream %d, seed %d, SF %s", *stream, *seed, scale)
		if *validation {
			header = fmt.Sprintf("-- dbt3 qgen: stream %d, validation parameters, SF %s", *stream, scale)
		}
		var b strings.Builder
		b.WriteString(header + "\n")
		for _, q := range queries {
			b.WriteString("\n" + q.Text)
		}
		_, err := fmt.Fprint(e.stdout, b.String())
		return err
	}
	if err := ensureWritableDir(*out); err != nil {
		return &usageError{err}
	}
	for i, q := range queries {
		name := filepath.Join(*out, fmt.Sprintf("%02d-q%d.sql", i+1, q.Number))
		if err := atomicfile.Write(name, []byte(q.Text), 0o644); err != nil {
			return err
		}
	}
	return nil
}
