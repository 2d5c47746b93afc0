// Command sqlfuzz is colink's differential query fuzzer. From each seed it generates random
// queries over the TPC-H schema — joins along the foreign keys (LEFT JOIN among them), IN
// and EXISTS subqueries, scalar subqueries, derived tables, CASE, COALESCE and NULLIF that
// make NULLs, GROUP BY, COUNT(DISTINCT), HAVING, DISTINCT, ORDER BY and LIMIT, over every
// value type colink computes with — and checks each with three oracles:
//
//   - differential: the same query on colink, through its daemons, and on DuckDB with the
//     same rows in its own tables; rows compared in order only where ORDER BY fixes it;
//   - TLP (SQLancer's ternary logic partitioning), on colink alone: the answer equals the
//     union of the answers under WHERE p, WHERE NOT p and WHERE p IS NULL;
//   - NoREC (SQLancer's non-optimising reference), on colink alone: COUNT(*) … WHERE p
//     equals SUM(CASE WHEN p THEN 1 ELSE 0 END) over the same rows.
//
// A query DuckDB rejects, that colink does not support (error 1235 or 1064), that times
// out, or that has no defined answer (a LIMIT without a total order) is skipped and counted
// by reason, never compared. Every disagreement is reduced (smaller variants that still
// disagree replace it) and written to --out as a standalone .sql file with both answers.
//
// It lives in the bench module beside the DuckDB runner, since DuckDB needs cgo. Run it from
// bench/duckdb:
//
//	go run ./sqlfuzz --sf 0.1 --seeds 1,2,3,4,5 --queries 2000 --out ../../results/fuzz-sf0.1
//
// It builds colink's daemons and dbt3 from the tree, generates the data (Parquet) if it is
// missing, starts primprocs and an exemgr, and loads the data into both engines.
//
// Exit status: 0 when no oracle found a disagreement, 1 when one did (or a run failed), 2
// on bad flags.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usageError marks bad command-line input (exit status 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, pflag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "sqlfuzz:", err)
		return 2
	}
	level := slog.LevelWarn
	if cfg.verbose {
		level = slog.LevelInfo
	}
	cfg.log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	sum, err := fuzz(ctx, cfg, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "sqlfuzz:", err)
		return 1
	}
	if sum != nil && sum.Findings > 0 {
		return 1
	}
	return 0
}
