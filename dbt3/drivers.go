package dbt3

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/colinkdb/colink/dbt3/measure"
	"github.com/colinkdb/colink/tpch"
)

// DriverOptions are the settings of the power and throughput tests ("dbt3 power", "dbt3
// throughput") as their flags give them; PowerTest and ThroughputTest check them (bad ones
// are *UsageError naming the flag), run the test, record it and print it.
type DriverOptions struct {
	Addr, Database string // exemgr's MySQL address and the database
	SF             string // scale factor of the loaded data (Q11's fraction and the metric)
	Seed           int64  // qgen seed (ClockSeed when the user gives none)
	Validation     bool   // the validation parameters (qgen -d) instead of seeded ones
	Answers        string // directory of expected answers (qNN.csv) for the validation queries
	NoStats        bool   // do not read SHOW QUERY STATS after each statement
	PIDs           []string
	// RefreshDir is the directory of the refresh sets (dbt3 gen --refresh N); "" runs no
	// refresh functions. RefreshLocal sends the files over the MySQL connection (LOAD DATA
	// LOCAL INFILE); RefreshSet is power's set, throughput's first; DeleteKeys the order
	// keys per RF2 DELETE statement.
	RefreshDir             string
	RefreshLocal           bool
	RefreshSet, DeleteKeys int
	Streams                int    // throughput: concurrent query streams
	Out                    string // the run's JSON record ("": not written)
	Command                string // the command line, recorded in the run
}

// refresher returns the refresh functions the options ask for (nil without RefreshDir).
func (o *DriverOptions) refresher() (Refresher, error) {
	if o.RefreshDir == "" {
		return nil, nil
	}
	if st, err := os.Stat(o.RefreshDir); err != nil || !st.IsDir() {
		return nil, Usagef("--refresh %s: not a directory of refresh sets (dbt3 gen --refresh N --out DIR writes them)", o.RefreshDir)
	}
	if o.Answers != "" {
		return nil, Usagef("--answers with --refresh: the queries run after RF1 and see its rows, so the reference answers (of the loaded data) do not apply")
	}
	if o.RefreshSet < 1 {
		return nil, Usagef("--refresh-set %d: sets are numbered from 1", o.RefreshSet)
	}
	if o.DeleteKeys < 1 {
		return nil, Usagef("--refresh-delete-keys %d: need at least one", o.DeleteKeys)
	}
	return &SQLRefresher{Dir: o.RefreshDir, Local: o.RefreshLocal, DeleteKeys: o.DeleteKeys}, nil
}

// session checks the shared options and returns the session configuration, the scale
// factor, the verifier (nil without Answers) and the refresher (nil without RefreshDir).
func (o *DriverOptions) session() (SessionConfig, float64, *Verifier, Refresher, error) {
	fail := func(err error) (SessionConfig, float64, *Verifier, Refresher, error) {
		return SessionConfig{}, 0, nil, nil, err
	}
	scale, err := tpch.ParseScale(o.SF)
	if err != nil {
		return fail(Usagef("--sf: %v", err))
	}
	sf := scale.SF()
	if _, err := MySQLConfig(o.Addr, o.Database); err != nil {
		return fail(Usagef("--mysql: %v", err))
	}
	if o.Answers != "" && !o.Validation {
		return fail(Usagef("--answers checks the validation queries; add --validation"))
	}
	s := SessionConfig{Addr: o.Addr, Database: o.Database, Stats: !o.NoStats}
	for _, p := range o.PIDs {
		name, num, ok := strings.Cut(p, "=")
		pid, err := strconv.Atoi(num)
		if !ok || name == "" || err != nil || pid <= 0 {
			return fail(Usagef("--pid %q: want name=PID, e.g. exemgr=1234", p))
		}
		if s.PIDs == nil {
			s.PIDs = map[string]int{}
		}
		s.PIDs[name] = pid
	}
	var v *Verifier
	if o.Answers != "" {
		qs, err := StreamQueries(0, 0, sf, true)
		if err != nil {
			return fail(err)
		}
		ref, err := LoadReference(o.Answers, qs)
		if err != nil {
			return fail(Usagef("--answers: %v", err))
		}
		v = &Verifier{Reference: ref}
	}
	rf, err := o.refresher()
	if err != nil {
		return fail(err)
	}
	return s, sf, v, rf, nil
}

// ClockSeed is DBT3's default seed: the date as month, day, hour, minute, second digits.
func ClockSeed(t time.Time) int64 {
	n, _ := strconv.ParseInt(strings.TrimLeft(t.Format("0102150405"), "0"), 10, 64)
	return n
}

// PowerTest runs the power test (Power), writes its record to o.Out if set and prints its
// samples, the metric and the notes on Stdout.
func PowerTest(ctx context.Context, o DriverOptions, out Output) error {
	sess, sf, v, rf, err := o.session()
	if err != nil {
		return err
	}
	started := time.Now()
	run, runErr := Power(ctx, PowerConfig{Session: sess, SF: sf, Seed: o.Seed, Validation: o.Validation, Verifier: v,
		Refresh: rf, RefreshSet: o.RefreshSet})
	return o.report(run, runErr, sf, started, out, func() {
		if p, ok := run.Metrics["power@size"]; ok {
			fmt.Fprintf(out.Stdout, "\nPower@Size %.2f (DBT3: 3600·SF / geometric mean of %d intervals); with TPC-H's 1/1000 floor %.2f\n",
				p, int(run.Metrics["intervals"]), run.Metrics["power@size_tpch"])
			fmt.Fprintln(out.Stdout, fairUse)
		}
	})
}

// ThroughputTest runs the throughput test (Throughput) with o.Streams streams, writes its
// record to o.Out if set and prints its samples, the metric and the notes on Stdout.
func ThroughputTest(ctx context.Context, o DriverOptions, out Output) error {
	if o.Streams < 1 {
		return Usagef("--streams %d: need at least one", o.Streams)
	}
	sess, sf, v, rf, err := o.session()
	if err != nil {
		return err
	}
	started := time.Now()
	run, runErr := Throughput(ctx, ThroughputConfig{Session: sess, SF: sf, Seed: o.Seed, Streams: o.Streams, Validation: o.Validation, Verifier: v,
		Refresh: rf, FirstRefreshSet: o.RefreshSet})
	return o.report(run, runErr, sf, started, out, func() {
		if t, ok := run.Metrics["throughput@size"]; ok {
			fmt.Fprintf(out.Stdout, "\nThroughput@Size %.2f (DBT3: %d·22·3600 / Ts %.3fs · SF %g)\n", t, o.Streams, run.Metrics["ts_s"], sf)
			fmt.Fprintln(out.Stdout, fairUse)
		}
	})
}

// fairUse goes beside every DBT3 metric: the TPC's fair-use rule for results derived from
// TPC-H.
const fairUse = "(Derived from TPC-H, as DBT3 is; not a TPC-H result and not comparable with published TPC-H results.)"

// report records a driver's run (started at started, at scale factor sf) and prints it:
// one line per sample, the metric (printMetric) and the notes; it returns runErr, the
// driver's own error. Without a run there is nothing to report.
func (o *DriverOptions) report(run *measure.Run, runErr error, sf float64, started time.Time, out Output, printMetric func()) error {
	if run == nil {
		return runErr
	}
	if err := o.record(run, run.Driver, sf, started); err != nil {
		return err
	}
	fmt.Fprintf(out.Stdout, "%-8s %-6s %10s %8s  %s\n", "stream", "query", "elapsed_s", "rows", "check")
	for _, s := range run.Samples {
		check := s.Verified
		if s.Error != "" {
			check = "ERROR " + strings.Join(strings.Fields(s.Error), " ")
		}
		fmt.Fprintf(out.Stdout, "%-8d %-6s %10.3f %8d  %s\n", s.Stream, s.Query, s.Elapsed, s.Rows, check)
	}
	printMetric()
	for _, n := range run.Notes {
		fmt.Fprintln(out.Stdout, "note:", n)
	}
	return runErr
}

// record fills a run's identity and writes it if o.Out is set.
func (o *DriverOptions) record(run *measure.Run, driver string, sf float64, started time.Time) error {
	run.ID = measure.RunID(driver, sf, started)
	run.Started = started
	run.Command = o.Command
	run.Host = measure.LocalHost()
	// The daemons were started by someone else: only dbt3's own build is known here (theirs
	// is in @@version).
	run.Builds = measure.Builds("dbt3", nil)
	if o.Out == "" {
		return nil
	}
	if dir := filepath.Dir(o.Out); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return run.WriteFile(o.Out)
}
