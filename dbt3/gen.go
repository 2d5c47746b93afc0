package dbt3

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/colinkdb/colink/internal/atomicfile"
	"github.com/colinkdb/colink/tpch"
)

// GenConfig is what "dbt3 gen" writes, as its flags give it; settings Generate cannot use
// are *UsageError naming the flag.
type GenConfig struct {
	SF     string // scale factor (tpch.ParseScale)
	Dir    string // output directory, created if missing
	Format string // tbl (dbgen's text) or parquet
	// Tables to write (nil: all eight); "none" names no table, so that a list of only
	// "none" writes only refresh sets.
	Tables []string
	// Chunks, Refresh, Workers and NoSync are tpch.Options'.
	Chunks, Refresh, Workers int
	NoSync                   bool
	// Stats prints wall and CPU time, peak RSS and context switches at the end (printed
	// anyway when Stderr is a terminal).
	Stats bool
	// CPUProfile and MemProfile, if set, are files for a CPU profile of the generation and
	// a heap profile at its end (pprof).
	CPUProfile, MemProfile string
}

// DefaultGenConfig returns dbt3 gen's defaults; the caller sets Dir.
func DefaultGenConfig() GenConfig { return GenConfig{SF: "1", Format: "tbl", Chunks: 1} }

// options checks cfg and returns the generator's options.
func (cfg *GenConfig) options() (tpch.Options, error) {
	opts := tpch.Options{Dir: cfg.Dir, Chunks: cfg.Chunks, Refresh: cfg.Refresh, Workers: cfg.Workers, NoSync: cfg.NoSync}
	var err error
	if opts.Scale, err = tpch.ParseScale(cfg.SF); err != nil {
		return opts, Usagef("--sf: %v", err)
	}
	if opts.Format, err = tpch.ParseFormat(cfg.Format); err != nil {
		return opts, Usagef("--format: %v", err)
	}
	switch {
	case cfg.Dir == "":
		return opts, Usagef("--out is required")
	case cfg.Chunks < 1:
		return opts, Usagef("--chunks %d: must be at least 1", cfg.Chunks)
	case cfg.Refresh < 0:
		return opts, Usagef("--refresh %d: must not be negative", cfg.Refresh)
	}
	if cfg.Tables != nil {
		opts.Tables = []string{}
		for _, t := range cfg.Tables {
			t = strings.ToLower(strings.TrimSpace(t))
			if t == "none" {
				continue
			}
			if _, ok := tpch.LookupTable(t); !ok {
				return opts, Usagef("--tables: unknown table %q (want some of %s, or none)", t, strings.Join(tpch.TableNames(), ","))
			}
			opts.Tables = append(opts.Tables, t)
		}
	}
	return opts, nil
}

// Generate writes cfg's TPC-H tables and refresh sets into cfg.Dir (created if missing),
// byte-identical to dbgen 2.14's, with a progress bar on a terminal.
func Generate(ctx context.Context, cfg GenConfig, out Output) error {
	opts, err := cfg.options()
	if err != nil {
		return err
	}
	if err := EnsureWritableDir(cfg.Dir); err != nil {
		return err
	}
	bar := out.ProgressBar(opts.EstimatedRows(), "generating SF "+opts.Scale.String(), "rows")
	if bar != nil {
		opts.Progress = func(n int64) { _ = bar.Add64(n) }
	}
	if cfg.CPUProfile != "" {
		pf, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return Usagef("--cpuprofile: %v", err)
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
	if cfg.MemProfile != "" {
		if err := writeHeapProfile(cfg.MemProfile); err != nil {
			return err
		}
	}
	if cfg.Stats || out.StderrTerminal {
		fmt.Fprintf(out.Stderr, "dbt3 gen: SF %s to %s (%s): %s\n", opts.Scale, opts.Dir, opts.Format, UsageLine(time.Since(start)))
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

// QgenConfig is what "dbt3 qgen" writes: one stream's 22 queries with the parameters
// TPC-H's qgen draws.
type QgenConfig struct {
	Seed       int64
	Stream     int    // 0 is the power test, 1… the throughput streams (qgen -p)
	SF         string // scale factor of the data (sets Q11's fraction, 0.0001/SF)
	Validation bool   // the validation parameters (qgen -d) instead of seeded ones
	Compat214  bool   // draw exactly as qgen 2.14 (tpch.QgenCompat214)
	// Dir, if set, receives one file per query, named position-query (01-q14.sql, …);
	// otherwise the whole stream goes to Qgen's writer.
	Dir string
}

// Qgen writes cfg's stream in the stream's TPC-H order: to w, or a file per query in
// cfg.Dir.
func Qgen(cfg QgenConfig, w io.Writer) error {
	if cfg.Stream < 0 {
		return Usagef("--stream %d: streams are numbered from 0", cfg.Stream)
	}
	scale, err := tpch.ParseScale(cfg.SF)
	if err != nil {
		return Usagef("--sf: %v", err)
	}
	variant := tpch.QgenSpec
	if cfg.Compat214 {
		variant = tpch.QgenCompat214
	}
	queries, err := tpch.StreamQueries(cfg.Seed, cfg.Stream, scale.SF(), cfg.Validation, variant)
	if err != nil {
		return err
	}
	if cfg.Dir == "" {
		header := fmt.Sprintf("-- dbt3 qgen: stream %d, seed %d, SF %s", cfg.Stream, cfg.Seed, scale)
		if cfg.Validation {
			header = fmt.Sprintf("-- dbt3 qgen: stream %d, validation parameters, SF %s", cfg.Stream, scale)
		}
		var b strings.Builder
		b.WriteString(header + "\n")
		for _, q := range queries {
			b.WriteString("\n" + q.Text)
		}
		_, err := fmt.Fprint(w, b.String())
		return err
	}
	if err := EnsureWritableDir(cfg.Dir); err != nil {
		return err
	}
	for i, q := range queries {
		name := filepath.Join(cfg.Dir, fmt.Sprintf("%02d-q%d.sql", i+1, q.Number))
		if err := atomicfile.Write(name, []byte(q.Text), 0o644); err != nil {
			return err
		}
	}
	return nil
}
