package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/dbt3"
	"github.com/colinkdb/colink/dbt3/measure"
	"github.com/colinkdb/colink/tpch"
)

// streamFlags are the flags the power and throughput tests share.
type streamFlags struct {
	addr, database, sf, answers, out string
	seed                             int64
	validation, noStats              bool
	pids                             []string
	refreshDir                       string
	refreshLocal                     bool
	refreshSet, deleteKeys           int
}

func (f *streamFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.addr, "mysql", defaultMySQL, "exemgr's MySQL address: host:port or a unix socket path")
	fs.StringVar(&f.database, "database", dbt3.DefaultDatabase, "database to use")
	fs.StringVar(&f.sf, "sf", "1", "scale factor of the loaded data (Q11's fraction and the metric)")
	fs.Int64Var(&f.seed, "seed", 0, "qgen seed (default: from the clock, as DBT3's init_seed: month day hour minute second)")
	fs.BoolVar(&f.validation, "validation", false, "use the validation parameters (qgen -d) instead of seeded ones")
	fs.StringVar(&f.answers, "answers", "", "directory of expected answers (qNN.csv) to check the validation queries against")
	fs.StringVar(&f.out, "out", "", "write the run's JSON record here")
	fs.BoolVar(&f.noStats, "no-stats", false, "do not read SHOW QUERY STATS after each statement")
	fs.StringArrayVar(&f.pids, "pid", nil, "a local daemon as name=PID (exemgr=123, primproc0=456), repeatable: cross-check its CPU in /proc")
	fs.StringVar(&f.refreshDir, "refresh", "", "directory of the refresh sets (dbt3 gen --refresh N): run RF1 and RF2 from them")
	fs.BoolVar(&f.refreshLocal, "refresh-local", true, "RF1 sends the files over the MySQL connection (LOAD DATA LOCAL INFILE); =false makes exemgr read them on its own host, which needs its --secure-file-priv to cover the --refresh directory")
	fs.IntVar(&f.deleteKeys, "refresh-delete-keys", dbt3.DefaultDeleteKeys, "order keys per RF2 DELETE statement")
}

// refresher returns the refresh functions the flags ask for (nil without --refresh).
func (f *streamFlags) refresher() (dbt3.Refresher, error) {
	if f.refreshDir == "" {
		return nil, nil
	}
	if st, err := os.Stat(f.refreshDir); err != nil || !st.IsDir() {
		return nil, usagef("--refresh %s: not a directory of refresh sets (dbt3 gen --refresh N --out DIR writes them)", f.refreshDir)
	}
	if f.answers != "" {
		return nil, usagef("--answers with --refresh: the queries run after RF1 and see its rows, so the reference answers (of the loaded data) do not apply")
	}
	if f.refreshSet < 1 {
		return nil, usagef("--refresh-set %d: sets are numbered from 1", f.refreshSet)
	}
	if f.deleteKeys < 1 {
		return nil, usagef("--refresh-delete-keys %d: need at least one", f.deleteKeys)
	}
	return &dbt3.SQLRefresher{Dir: f.refreshDir, Local: f.refreshLocal, DeleteKeys: f.deleteKeys}, nil
}

// session validates the shared flags and returns the session configuration, the scale factor and
// the verifier (nil without --answers).
func (f *streamFlags) session(fs *pflag.FlagSet) (dbt3.SessionConfig, float64, *dbt3.Verifier, error) {
	scale, err := tpch.ParseScale(f.sf)
	if err != nil {
		return dbt3.SessionConfig{}, 0, nil, usagef("--sf: %v", err)
	}
	sf := scale.SF()
	if _, err := dbt3.MySQLConfig(f.addr, f.database); err != nil {
		return dbt3.SessionConfig{}, 0, nil, usagef("--mysql: %v", err)
	}
	if !fs.Changed("seed") {
		f.seed = clockSeed(time.Now())
	}
	if f.answers != "" && !f.validation {
		return dbt3.SessionConfig{}, 0, nil, usagef("--answers checks the validation queries; add --validation")
	}
	s := dbt3.SessionConfig{Addr: f.addr, Database: f.database, Stats: !f.noStats}
	for _, p := range f.pids {
		name, num, ok := strings.Cut(p, "=")
		pid, err := strconv.Atoi(num)
		if !ok || name == "" || err != nil || pid <= 0 {
			return dbt3.SessionConfig{}, 0, nil, usagef("--pid %q: want name=PID, e.g. exemgr=1234", p)
		}
		if s.PIDs == nil {
			s.PIDs = map[string]int{}
		}
		s.PIDs[name] = pid
	}
	var v *dbt3.Verifier
	if f.answers != "" {
		qs, err := dbt3.StreamQueries(0, 0, sf, true)
		if err != nil {
			return dbt3.SessionConfig{}, 0, nil, err
		}
		ref, err := dbt3.LoadReference(f.answers, qs)
		if err != nil {
			return dbt3.SessionConfig{}, 0, nil, usagef("--answers: %v", err)
		}
		v = &dbt3.Verifier{Reference: ref}
	}
	return s, sf, v, nil
}

// clockSeed is DBT3's default seed: the date as month, day, hour, minute, second digits.
func clockSeed(t time.Time) int64 {
	n, _ := strconv.ParseInt(strings.TrimLeft(t.Format("0102150405"), "0"), 10, 64)
	return n
}

// finishRun fills a run's identity and writes it if --out was given.
func finishRun(run *measure.Run, driver string, sf float64, started time.Time, out string) error {
	run.ID = measure.RunID(driver, sf, started)
	run.Started = started
	run.Command = "dbt3 " + strings.Join(os.Args[1:], " ")
	run.Host = measure.LocalHost()
	if out == "" {
		return nil
	}
	if dir := filepath.Dir(out); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return run.WriteFile(out)
}

// printSamples prints one line per sample.
func printSamples(e *env, run *measure.Run) {
	fmt.Fprintf(e.stdout, "%-8s %-6s %10s %8s  %s\n", "stream", "query", "elapsed_s", "rows", "check")
	for _, s := range run.Samples {
		check := s.Verified
		if s.Error != "" {
			check = "ERROR " + strings.Join(strings.Fields(s.Error), " ")
		}
		fmt.Fprintf(e.stdout, "%-8d %-6s %10.3f %8d  %s\n", s.Stream, s.Query, s.Elapsed, s.Rows, check)
	}
}

// runPower implements "dbt3 power".
func runPower(ctx context.Context, e *env, args []string) error {
	fs := pflag.NewFlagSet("power", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: dbt3 power [--mysql ADDR] [--sf F] [--seed N | --validation [--answers DIR]] [--refresh DIR [--refresh-set K]] [--out FILE.json]")
		fmt.Fprintln(e.stderr, `
DBT3's power test against a running exemgr: stream 0's 22 queries in TPC-H's order for
stream 0, one at a time on one session, then the power metric as DBT3 computes it,
3600·SF / (geometric mean of the intervals). With --refresh DIR, RF1 runs first and RF2
last, from refresh set --refresh-set of DIR (written by dbt3 gen --refresh N): 24 intervals.
RF1 loads the set's orders and lineitem files with LOAD DATA [LOCAL] INFILE, RF2 deletes its
orders and their lineitems by key. Without it the mean is over the 22 query intervals, and
the report says so.`)
		fs.PrintDefaults()
	}
	var f streamFlags
	f.register(fs)
	fs.IntVar(&f.refreshSet, "refresh-set", 1, "the refresh set RF1 and RF2 use")
	if err := parseFlags(fs, e, args); err != nil {
		return err
	}
	sess, sf, v, err := f.session(fs)
	if err != nil {
		return err
	}
	rf, err := f.refresher()
	if err != nil {
		return err
	}
	started := time.Now()
	run, runErr := dbt3.Power(ctx, dbt3.PowerConfig{Session: sess, SF: sf, Seed: f.seed, Validation: f.validation, Verifier: v,
		Refresh: rf, RefreshSet: f.refreshSet})
	if run == nil {
		return runErr
	}
	if err := finishRun(run, "power", sf, started, f.out); err != nil {
		return err
	}
	printSamples(e, run)
	if p, ok := run.Metrics["power@size"]; ok {
		fmt.Fprintf(e.stdout, "\nPower@Size %.2f (DBT3: 3600·SF / geometric mean of %d intervals); with TPC-H's 1/1000 floor %.2f\n",
			p, int(run.Metrics["intervals"]), run.Metrics["power@size_tpch"])
	}
	for _, n := range run.Notes {
		fmt.Fprintln(e.stdout, "note:", n)
	}
	return runErr
}

// runThroughput implements "dbt3 throughput".
func runThroughput(ctx context.Context, e *env, args []string) error {
	fs := pflag.NewFlagSet("throughput", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: dbt3 throughput --streams S [--mysql ADDR] [--sf F] [--seed N | --validation] [--refresh DIR [--refresh-set K]] [--out FILE.json]")
		fmt.Fprintln(e.stderr, `
DBT3's throughput test against a running exemgr: S query streams at once, each on its own
session; stream s runs TPC-H's permutation s with qgen parameters drawn from seed+s, as
DBT3 seeds its streams. The metric is DBT3's: S·22·3600 / Ts · SF, Ts from the first
stream's start to the last one's end. With --refresh DIR, a refresh stream runs beside the
query streams: one RF1/RF2 pair per query stream, on refresh sets --refresh-set,
--refresh-set+1, … of DIR (dbt3 gen --refresh N writes them; the default 2 leaves set 1 to
a power test run before).`)
		fs.PrintDefaults()
	}
	var f streamFlags
	f.register(fs)
	fs.IntVar(&f.refreshSet, "refresh-set", 2, "the first refresh set the refresh stream uses")
	streams := fs.Int("streams", 2, "concurrent query streams")
	if err := parseFlags(fs, e, args); err != nil {
		return err
	}
	if *streams < 1 {
		return usagef("--streams %d: need at least one", *streams)
	}
	sess, sf, v, err := f.session(fs)
	if err != nil {
		return err
	}
	rf, err := f.refresher()
	if err != nil {
		return err
	}
	started := time.Now()
	run, runErr := dbt3.Throughput(ctx, dbt3.ThroughputConfig{Session: sess, SF: sf, Seed: f.seed, Streams: *streams, Validation: f.validation, Verifier: v,
		Refresh: rf, FirstRefreshSet: f.refreshSet})
	if run == nil {
		return runErr
	}
	if err := finishRun(run, "throughput", sf, started, f.out); err != nil {
		return err
	}
	printSamples(e, run)
	if t, ok := run.Metrics["throughput@size"]; ok {
		fmt.Fprintf(e.stdout, "\nThroughput@Size %.2f (DBT3: %d·22·3600 / Ts %.3fs · SF %g)\n", t, *streams, run.Metrics["ts_s"], sf)
	}
	for _, n := range run.Notes {
		fmt.Fprintln(e.stdout, "note:", n)
	}
	return runErr
}
