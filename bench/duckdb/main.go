// Command duckdb runs the DBT3/TPC-H query scripts in DuckDB, in process, on the Parquet
// files that `dbt3 gen --format parquet` writes, and records each execution as colink's
// drivers do (github.com/colinkdb/colink/dbt3/measure), so that `dbt3 report` can put colink
// and DuckDB side by side on the same data, queries and thread count.
//
// By default (--storage native) the files are loaded once into DuckDB's own tables in a
// database file, the load timed apart, as a user who picks DuckDB would query them;
// --storage parquet queries views over the files instead, which DuckDB decodes on every
// query.
//
// It lives in its own Go module so that cgo and DuckDB stay out of the main module. Run it
// from its directory:
//
//	cd bench/duckdb && go run . --data ../../data/sf1-parquet --threads 2 --runs 5 --out duckdb.json
//
// Exit status: 0 when every query ran (and, with --check, matched its answer); 1 when a query
// failed or differed from its answer; 2 on bad flags or unusable input.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/bench/duckdb/internal/tpchfiles"
	"github.com/colinkdb/colink/internal/atomicfile"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks bad command-line input (exit status 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command without the process around it: it parses args, runs the benchmark and
// returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := benchCommand(ctx, args, stdout, stderr)
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, pflag.ErrHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "duckdb:", err)
		return exitUsage
	}
	fmt.Fprintln(stderr, "duckdb:", err)
	return exitFailure
}

func benchCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("duckdb", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: cd bench/duckdb && go run . --data DIR [--storage native|parquet] [--threads N] [--runs R] [--queries LIST]")
		fmt.Fprintln(stderr, "       [--out FILE.json] [--markdown FILE.md] [--check ANSWERS_DIR] [--print] [--drop-caches]")
		fmt.Fprintln(stderr, "\nRuns the 22 TPC-H validation queries and the ColumnStore experiment's CS1–CS3 in DuckDB on")
		fmt.Fprintln(stderr, "the Parquet files of `dbt3 gen --format parquet` (by default loaded into DuckDB's own tables),")
		fmt.Fprintln(stderr, "and prints per query median [min–max] elapsed and CPU time. Round 1 is cold (a new DuckDB")
		fmt.Fprintln(stderr, "instance per query), the others warm.")
		fs.PrintDefaults()
	}
	data := fs.String("data", "", "directory of the Parquet tables (<table>.parquet or <table>.<K>.parquet; required)")
	storage := fs.String("storage", storageNative, "where DuckDB's tables live: native (the files loaded once into DuckDB's own tables in a database file, the load timed apart) or parquet (views over the files, decoded on every query)")
	dbPath := fs.String("db", "", "native: load the tables into this new database file and keep it (default: a temporary file, removed at the end)")
	threads := fs.Int("threads", 2, "DuckDB worker threads (SET threads)")
	runs := fs.Int("runs", 3, "rounds: round 1 cold, the others warm")
	selection := fs.String("queries", "all", "queries to run: all, or a list such as 1,3,5-8,CS1 (Q1…Q22, CS1…CS3)")
	queryDir := fs.String("query-dir", "", "read the TPC-H scripts from this directory (N.sql or PP-qN.sql as `dbt3 qgen --out` writes) instead of the validation texts of dbt3/queries")
	out := fs.String("out", "", "write the measurements as JSON (dbt3/measure's Run) to this file")
	markdown := fs.String("markdown", "", "also write the summary table (Markdown) to this file")
	check := fs.String("check", "", "compare every result with the answers qNN.csv in this directory, e.g. ../../../shared/tpch/answers/sf1")
	print := fs.Bool("print", false, "print each query's result (round 1) to stdout in the answer files' psv form")
	dropCaches := fs.Bool("drop-caches", false, "drop the OS page cache before each cold query (needs root: writes "+dropCachesPath+")")
	quiet := fs.Bool("quiet", false, "do not log each sample to stderr")
	colink := fs.String("colink", "", "also run every query on the colink exemgr at this MySQL address (host:port or socket path) holding the same data, the engines alternating query by query in each round, and print colink/DuckDB ratios")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return &usageError{err}
	}
	if fs.NArg() > 0 {
		return &usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	if *data == "" {
		return &usageError{errors.New("--data DIR is required (generate it with `go run ./cmd/dbt3 gen --format parquet --out DIR` in the main module)")}
	}
	switch {
	case *storage != storageNative && *storage != storageParquet:
		return &usageError{fmt.Errorf("--storage %q: want native or parquet", *storage)}
	case *dbPath != "" && *storage != storageNative:
		return &usageError{fmt.Errorf("--db names a database file for --storage native; --storage %s has none", *storage)}
	}
	if *dbPath != "" {
		if _, err := os.Stat(*dbPath); err == nil {
			return &usageError{fmt.Errorf("--db %s exists: remove it or name another file (the run loads a new one)", *dbPath)}
		}
		if st, err := os.Stat(filepath.Dir(*dbPath)); err != nil || !st.IsDir() {
			return &usageError{fmt.Errorf("--db %s: directory %s does not exist", *dbPath, filepath.Dir(*dbPath))}
		}
	}
	if *threads < 1 {
		return &usageError{fmt.Errorf("--threads %d: want at least 1", *threads)}
	}
	if *runs < 1 {
		return &usageError{fmt.Errorf("--runs %d: want at least 1", *runs)}
	}
	names, err := parseSelection(*selection)
	if err != nil {
		return &usageError{fmt.Errorf("--queries: %w", err)}
	}
	qs, err := loadQueries(names, *queryDir)
	if err != nil {
		return &usageError{err}
	}
	if _, err := tpchfiles.Find(*data); err != nil {
		return &usageError{err}
	}
	if *check != "" {
		if st, err := os.Stat(*check); err != nil || !st.IsDir() {
			return &usageError{fmt.Errorf("--check %s: not a directory of answer files", *check)}
		}
	}
	for _, p := range []string{*out, *markdown} {
		if p == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(p)); err != nil || !st.IsDir() {
			return &usageError{fmt.Errorf("cannot write %s: directory %s does not exist", p, filepath.Dir(p))}
		}
	}

	level := slog.LevelInfo
	if *quiet {
		level = slog.LevelWarn
	}
	cfg := config{
		DataDir:    *data,
		Storage:    *storage,
		DBPath:     *dbPath,
		Threads:    *threads,
		Runs:       *runs,
		Queries:    qs,
		DropCaches: *dropCaches,
		AnswersDir: *check,
		Colink:     *colink,
		Log:        slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
		Command:    commandLine(args),
	}
	if *print {
		cfg.Print = stdout
	}
	rec, outcomes, runErr := runBench(ctx, cfg)
	if rec == nil {
		return runErr
	}
	table := summary(rec, outcomes) + pairedSummary(rec, qs)
	fmt.Fprint(stdout, table)
	if *out != "" {
		if err := rec.WriteFile(*out); err != nil {
			return err
		}
	}
	if *markdown != "" {
		if err := atomicfile.Write(*markdown, []byte(table), 0o644); err != nil {
			return err
		}
	}
	var bad []string
	for _, o := range outcomes {
		if o.Check == "mismatch" {
			bad = append(bad, o.Query.Name+" ("+strings.Join(o.Diffs, "; ")+")")
		}
	}
	if len(bad) > 0 {
		runErr = errors.Join(runErr, fmt.Errorf("%d results differ from the answers in %s: %s",
			len(bad), *check, strings.Join(bad, ", ")))
	}
	return runErr
}

// commandLine is how the run was started, for the record: the module's directory and its
// arguments, shell-quoted where needed.
func commandLine(args []string) string {
	parts := []string{"cd bench/duckdb && go run ."}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?;&|<>()[]{}!#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
