package main

import (
	"context"
	"strings"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/dbt3"
	"github.com/colinkdb/colink/dbt3/bench"
)

// compareFlags registers the flags of "dbt3 compare" (and, with other defaults, "dbt3
// bench") on c's fields, c's values the defaults.
func compareFlags(fs *pflag.FlagSet, c *bench.Config) {
	fs.StringSliceVar(&c.Transports, "transports", c.Transports, "link transports to compare (tcp, unix, shm), in round 1's order; ratios are taken against tcp")
	fs.StringSliceVar(&c.Pushdowns, "pushdown", c.Pushdowns, "exemgr pushdown levels to run every query at (full, filter, scan); the scan family always runs at scan")
	fs.IntVar(&c.Runs, "runs", c.Runs, "rounds: round 1 cold (caches dropped before each query), the others warm")
	fs.StringVar(&c.SF, "sf", c.SF, "scale factor")
	fs.IntVar(&c.Primprocs, "primprocs", c.Primprocs, "primprocs, each holding a share of every table")
	fs.IntVar(&c.Threads, "threads", c.Threads, "worker threads per primproc (default: all cores)")
	fs.StringVar(&c.Data, "data", c.Data, "directory for the primprocs' stores, loaded once and reused (DIR/colink-sfF-ppN/pmI); must exist. Default: temporary stores, loaded every time")
	fs.StringVar(&c.From, "from", c.From, "load from the .tbl or Parquet files in this directory (default: generate in process)")
	fs.StringVar(&c.Answers, "answers", c.Answers, "directory of expected answers (qNN.csv) for the validation queries; without it every result must equal the query's first result of the run")
	fs.StringVar(&c.Out, "out", c.Out, "results directory (default results/<run-id>)")
	fs.StringVar(&c.Bin, "bin", c.Bin, "directory holding primproc and exemgr (default: built from the source tree, or beside dbt3, or on PATH)")
	fs.IntVar(&c.Port, "port", c.Port, "primproc i listens on 127.0.0.1:port+i (default: free ports)")
	fs.StringVar(&c.SocketDir, "socket-dir", c.SocketDir, "directory for the daemons' unix sockets (default: the run's temporary directory)")
	fs.StringVar(&c.Queries, "queries", c.Queries, "queries to run: all (Q1…Q22, CS1…CS3), tpch, cs, or a list such as 1,3,5-8,CS1")
	fs.StringVar(&c.DuckDB, "duckdb", c.DuckDB, "a DuckDB run's JSON (bench/duckdb) to put beside colink in the report")
	fs.StringArrayVar(&c.PrimprocArgs, "primproc-arg", c.PrimprocArgs, "extra primproc flag, repeatable (e.g. --primproc-arg=--cache-size=2GiB)")
	fs.StringArrayVar(&c.ExemgrArgs, "exemgr-arg", c.ExemgrArgs, "extra exemgr flag, repeatable")
	fs.BoolVar(&c.Warmup, "warmup", c.Warmup, "in warm rounds, run each query once unmeasured over every transport before its measured executions, so that the first does not refill the column cache for the others (the working set exceeds the cache at SF 10) nor run on a warmer exemgr")
	fs.IntVar(&c.StreamRounds, "ipcbench-rounds", c.StreamRounds, "after the queries, rounds of ipcbench's stream mode (1 GB per transport each) against the same primproc, to check the fitted CPU per GB; 0 skips it")
	fs.StringVar(&c.Profile, "profile", "", "queries to profile, a list as --queries takes (e.g. 1,6,CS3): after the rounds each runs once more, unmeasured, over every transport with a CPU profile in each daemon, saved as OUT/profiles/QUERY-TRANSPORT-DAEMON.pprof for go tool pprof")
	fs.BoolVarP(&c.Verbose, "verbose", "v", c.Verbose, "log each step and sample on stderr")
}

// runCompare implements "dbt3 compare".
func runCompare(ctx context.Context, out dbt3.Output, args []string) error {
	fs := newFlagSet("compare", out, "usage: dbt3 compare [--transports tcp,unix,shm] [--pushdown full,filter,scan] [--queries all|tpch|cs|scan|LIST] [--runs R] [--sf F] [--primprocs N] [--data DIR] [--answers DIR] [--out DIR]", `
The transport comparison. Starts N primprocs (each listening on TCP and a unix socket at
once) and one exemgr per transport over them as child processes, loads the data unless
--data already holds it, then for each of R rounds runs each query at each pushdown level
over every transport in turn — the order reversed from one execution to the next and from
one round to the next — reading SHOW QUERY STATS after every statement and /proc/PID/stat
around it. Round 1 drops the caches before each execution. Writes results/<run-id>/
(compare.json, report.md, SVG plots: elapsed and CPU per query, the paired differences
against tcp over link bytes, the fitted cost per GB), prints the elapsed table, and stops
every daemon, on Ctrl-C too.`)
	c := bench.DefaultConfig()
	compareFlags(fs, &c)
	if err := parseFlags(fs, out, args); err != nil {
		return err
	}
	c.Command = "dbt3 compare " + strings.Join(args, " ")
	return bench.Compare(ctx, c, out)
}

// runBench implements "dbt3 bench": the main job in one command.
func runBench(ctx context.Context, out dbt3.Output, args []string) error {
	fs := newFlagSet("bench", out, "usage: dbt3 bench [--sf 1] [--data data] [--runs 6] [--transports tcp,unix,shm] [--primprocs 1] [--answers DIR] [--out DIR]", `
The whole measurement on a fresh machine: generates the TPC-H tables (Parquet, the files
bench/duckdb reads too) into DATA/sfF-parquet unless they are there, builds and starts
primproc(s) as child processes, loads them once into DATA/colink-sfF-ppN, runs the
transport comparison (see dbt3 compare --help), writes results/<run-id>/ and prints the
elapsed table. The daemons are stopped on exit and on Ctrl-C. A DuckDB run of the same
scale is put beside colink in the report: results/duckdb-sfF-native/duckdb.json (DuckDB on
its own tables) if it is there, else results/duckdb-sfF/duckdb.json (over the Parquet
files); the report says which.`)
	c := bench.DefaultConfig()
	compareFlags(fs, &c)
	if f := fs.Lookup("data"); f != nil {
		f.DefValue = "data"
		f.Usage = "directory for the generated tables and the primprocs' stores, created if missing; both are reused by later runs"
	}
	if err := parseFlags(fs, out, args); err != nil {
		return err
	}
	if !fs.Changed("data") {
		c.Data = "data"
	}
	if fs.Changed("from") {
		return dbt3.Usagef("--from: bench generates its own tables into --data; use dbt3 compare --from")
	}
	c.Command = "dbt3 bench " + strings.Join(args, " ")
	return bench.Bench(ctx, c, out)
}
