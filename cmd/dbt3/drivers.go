package main

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/dbt3"
)

// runQuery implements "dbt3 query": one script through exemgr, its query's result printed.
func runQuery(ctx context.Context, out dbt3.Output, args []string) error {
	fs := newFlagSet("query", out, "usage: dbt3 query [--mysql ADDR] (-q N | -f FILE.sql | -e SQL) [--format psv|table|csv|json] [--stats]", `
Runs a script's statements in order on one session with exemgr (Q15's create view, select,
drop view included) and prints the result of the last statement that returned rows: as the
TPC-H answer files spell results (psv: a header, values separated by |, decimals at their
scale, NULL as nothing) or as the mysql client's table.`)
	c := dbt3.ScriptConfig{Stdin: os.Stdin}
	fs.StringVar(&c.Addr, "mysql", dbt3.DefaultMySQL, "exemgr's MySQL address: host:port or a unix socket path")
	fs.StringVar(&c.Database, "database", dbt3.DefaultDatabase, "database to use")
	fs.StringVarP(&c.Query, "query", "q", "", "TPC-H query N (1–22, with the validation parameters) or the ColumnStore experiment's CS1–CS3")
	fs.StringVarP(&c.File, "file", "f", "", "script to run (- for stdin)")
	fs.StringVarP(&c.Execute, "execute", "e", "", "statements to run instead of a file")
	fs.StringVar(&c.Format, "format", "psv", "output format: psv (as the TPC-H answer files), table (the mysql client's), csv (NULL as \\N) or json")
	fs.BoolVar(&c.Stats, "stats", false, "print each process's CPU, context switches and the link's traffic (SHOW QUERY STATS) on stderr")
	if err := parseFlags(fs, out, args); err != nil {
		return err
	}
	return dbt3.RunScript(ctx, c, out)
}

// driverFlags registers the flags the power and throughput tests share.
func driverFlags(fs *pflag.FlagSet, o *dbt3.DriverOptions) {
	fs.StringVar(&o.Addr, "mysql", dbt3.DefaultMySQL, "exemgr's MySQL address: host:port or a unix socket path")
	fs.StringVar(&o.Database, "database", dbt3.DefaultDatabase, "database to use")
	fs.StringVar(&o.SF, "sf", "1", "scale factor of the loaded data (Q11's fraction and the metric)")
	fs.Int64Var(&o.Seed, "seed", 0, "qgen seed (default: from the clock, as DBT3's init_seed: month day hour minute second)")
	fs.BoolVar(&o.Validation, "validation", false, "use the validation parameters (qgen -d) instead of seeded ones")
	fs.StringVar(&o.Answers, "answers", "", "directory of expected answers (qNN.csv) to check the validation queries against")
	fs.StringVar(&o.Out, "out", "", "write the run's JSON record here")
	fs.BoolVar(&o.NoStats, "no-stats", false, "do not read SHOW QUERY STATS after each statement")
	fs.StringArrayVar(&o.PIDs, "pid", nil, "a local daemon as name=PID (exemgr=123, primproc0=456), repeatable: cross-check its CPU in /proc")
	fs.StringVar(&o.RefreshDir, "refresh", "", "directory of the refresh sets (dbt3 gen --refresh N): run RF1 and RF2 from them")
	fs.BoolVar(&o.RefreshLocal, "refresh-local", true, "RF1 sends the files over the MySQL connection (LOAD DATA LOCAL INFILE); =false makes exemgr read them on its own host, which needs its --secure-file-priv to cover the --refresh directory")
	fs.IntVar(&o.DeleteKeys, "refresh-delete-keys", dbt3.DefaultDeleteKeys, "order keys per RF2 DELETE statement")
}

// parseDriverFlags parses a driver's flags and fills in what the flags leave to the
// command: the seed from the clock unless given, and the command line.
func parseDriverFlags(fs *pflag.FlagSet, o *dbt3.DriverOptions, out dbt3.Output, args []string) error {
	if err := parseFlags(fs, out, args); err != nil {
		return err
	}
	if !fs.Changed("seed") {
		o.Seed = dbt3.ClockSeed(time.Now())
	}
	o.Command = "dbt3 " + strings.Join(os.Args[1:], " ")
	return nil
}

// runPower implements "dbt3 power".
func runPower(ctx context.Context, out dbt3.Output, args []string) error {
	fs := newFlagSet("power", out, "usage: dbt3 power [--mysql ADDR] [--sf F] [--seed N | --validation [--answers DIR]] [--refresh DIR [--refresh-set K]] [--out FILE.json]", `
DBT3's power test against a running exemgr: stream 0's 22 queries in TPC-H's order for
stream 0, one at a time on one session, then the power metric as DBT3 computes it,
3600·SF / (geometric mean of the intervals). With --refresh DIR, RF1 runs first and RF2
last, from refresh set --refresh-set of DIR (written by dbt3 gen --refresh N): 24 intervals.
RF1 loads the set's orders and lineitem files with LOAD DATA [LOCAL] INFILE, RF2 deletes its
orders and their lineitems by key. Without it the mean is over the 22 query intervals, and
the report says so.`)
	var o dbt3.DriverOptions
	driverFlags(fs, &o)
	fs.IntVar(&o.RefreshSet, "refresh-set", 1, "the refresh set RF1 and RF2 use")
	if err := parseDriverFlags(fs, &o, out, args); err != nil {
		return err
	}
	return dbt3.PowerTest(ctx, o, out)
}

// runThroughput implements "dbt3 throughput".
func runThroughput(ctx context.Context, out dbt3.Output, args []string) error {
	fs := newFlagSet("throughput", out, "usage: dbt3 throughput --streams S [--mysql ADDR] [--sf F] [--seed N | --validation] [--refresh DIR [--refresh-set K]] [--out FILE.json]", `
DBT3's throughput test against a running exemgr: S query streams at once, each on its own
session; stream s runs TPC-H's permutation s with qgen parameters drawn from seed+s, as
DBT3 seeds its streams. The metric is DBT3's: S·22·3600 / Ts · SF, Ts from the first
stream's start to the last one's end. With --refresh DIR, a refresh stream runs beside the
query streams: one RF1/RF2 pair per query stream, on refresh sets --refresh-set,
--refresh-set+1, … of DIR (dbt3 gen --refresh N writes them; the default 2 leaves set 1 to
a power test run before).`)
	var o dbt3.DriverOptions
	driverFlags(fs, &o)
	fs.IntVar(&o.RefreshSet, "refresh-set", 2, "the first refresh set the refresh stream uses")
	fs.IntVar(&o.Streams, "streams", 2, "concurrent query streams")
	if err := parseDriverFlags(fs, &o, out, args); err != nil {
		return err
	}
	return dbt3.ThroughputTest(ctx, o, out)
}
