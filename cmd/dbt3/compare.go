package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/dbt3"
	daemons "github.com/colinkdb/colink/dbt3/cluster"
	"github.com/colinkdb/colink/dbt3/measure"
	"github.com/colinkdb/colink/dbt3/report"
	"github.com/colinkdb/colink/internal/atomicfile"
	"github.com/colinkdb/colink/tpch"
)

// compareOptions are the flags of "dbt3 compare" (and, with other defaults, "dbt3 bench").
type compareOptions struct {
	transports   []string
	pushdowns    []string
	runs         int
	sf           string
	primprocs    int
	threads      int
	data         string // root of the persisted primproc stores; "" for temporary ones
	from         string // load from these generated files instead of generating in process
	answers      string
	out          string
	bin          string
	port         int
	socketDir    string
	queries      string
	duckdb       string
	primprocArgs []string
	exemgrArgs   []string
	streamRounds int
	warmup       bool
	verbose      bool
}

func (o *compareOptions) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.transports, "transports", []string{"tcp", "unix"}, "link transports to compare, in round 1's order")
	fs.StringSliceVar(&o.pushdowns, "pushdown", []string{"full"}, "exemgr pushdown levels to run every query at (full, filter, scan); the scan family always runs at scan")
	fs.IntVar(&o.runs, "runs", 3, "rounds: round 1 cold (caches dropped before each query), the others warm")
	fs.StringVar(&o.sf, "sf", "1", "scale factor")
	fs.IntVar(&o.primprocs, "primprocs", 1, "primprocs, each holding a share of every table")
	fs.IntVar(&o.threads, "threads", 0, "worker threads per primproc (default: all cores)")
	fs.StringVar(&o.data, "data", "", "directory for the primprocs' stores, loaded once and reused (DIR/colink-sfF-ppN/pmI); must exist. Default: temporary stores, loaded every time")
	fs.StringVar(&o.from, "from", "", "load from the .tbl or Parquet files in this directory (default: generate in process)")
	fs.StringVar(&o.answers, "answers", "", "directory of expected answers (qNN.csv) for the validation queries; without it every result must equal the query's first result of the run")
	fs.StringVar(&o.out, "out", "", "results directory (default results/<run-id>)")
	fs.StringVar(&o.bin, "bin", "", "directory holding primproc and exemgr (default: built from the source tree, or beside dbt3, or on PATH)")
	fs.IntVar(&o.port, "port", 0, "primproc i listens on 127.0.0.1:port+i (default: free ports)")
	fs.StringVar(&o.socketDir, "socket-dir", "", "directory for the daemons' unix sockets (default: the run's temporary directory)")
	fs.StringVar(&o.queries, "queries", "all", "queries to run: all (Q1…Q22, CS1…CS3), tpch, cs, or a list such as 1,3,5-8,CS1")
	fs.StringVar(&o.duckdb, "duckdb", "", "a DuckDB run's JSON (bench/duckdb) to put beside colink in the report")
	fs.StringArrayVar(&o.primprocArgs, "primproc-arg", nil, "extra primproc flag, repeatable (e.g. --primproc-arg=--cache-size=2GiB)")
	fs.StringArrayVar(&o.exemgrArgs, "exemgr-arg", nil, "extra exemgr flag, repeatable")
	fs.BoolVar(&o.warmup, "warmup", true, "in warm rounds, run each query once unmeasured over every transport before its measured executions, so that the first does not refill the column cache for the others (the working set exceeds the cache at SF 10) nor run on a warmer exemgr")
	fs.IntVar(&o.streamRounds, "ipcbench-rounds", 3, "after the queries, rounds of ipcbench's stream mode (1 GB per transport each) against the same primproc, to check the fitted CPU per GB; 0 skips it")
	fs.BoolVarP(&o.verbose, "verbose", "v", false, "log each step and sample on stderr")
}

// runCompare implements "dbt3 compare".
func runCompare(ctx context.Context, e *env, args []string) error {
	fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: dbt3 compare [--transports tcp,unix] [--pushdown full,filter,scan] [--queries all|tpch|cs|scan|LIST] [--runs R] [--sf F] [--primprocs N] [--data DIR] [--answers DIR] [--out DIR]")
		fmt.Fprintln(e.stderr, `
The transport comparison. Starts N primprocs (each listening on TCP and a unix socket at
once) and one exemgr per transport over them as child processes, loads the data unless
--data already holds it, then for each of R rounds runs each query at each pushdown level
over every transport in turn — the order reversed from one execution to the next and from
one round to the next — reading SHOW QUERY STATS after every statement and /proc/PID/stat
around it. Round 1 drops the caches before each execution. Writes results/<run-id>/
(compare.json, report.md, SVG plots: elapsed and CPU per query, the paired differences
against tcp over link bytes, the fitted cost per GB), prints the elapsed table, and stops
every daemon, on Ctrl-C too.`)
		fs.PrintDefaults()
	}
	var o compareOptions
	o.register(fs)
	if err := parseFlags(fs, e, args); err != nil {
		return err
	}
	return o.run(ctx, e, "dbt3 compare "+strings.Join(args, " "))
}

// preparedCompare is what run validated from the flags.
type preparedCompare struct {
	scale      tpch.Scale
	transports []string
	pushdowns  []string
	queries    []dbt3.Query
	verifier   *dbt3.Verifier
	duckdb     *measure.Run
}

// validate checks every flag before anything starts, so that bad input starts no daemon.
func (o *compareOptions) validate() (*preparedCompare, error) {
	var p preparedCompare
	var err error
	if p.transports, err = dbt3.ParseTransports(o.transports); err != nil {
		return nil, usagef("--transports: %v", err)
	}
	if p.pushdowns, err = dbt3.ParsePushdowns(o.pushdowns); err != nil {
		return nil, usagef("--pushdown: %v", err)
	}
	if p.scale, err = tpch.ParseScale(o.sf); err != nil {
		return nil, usagef("--sf: %v", err)
	}
	switch {
	case o.runs < 1:
		return nil, usagef("--runs %d: need at least one", o.runs)
	case o.primprocs < 1:
		return nil, usagef("--primprocs %d: need at least one", o.primprocs)
	case o.streamRounds < 0:
		return nil, usagef("--ipcbench-rounds %d: must not be negative", o.streamRounds)
	case o.threads < 0:
		return nil, usagef("--threads %d: must not be negative", o.threads)
	case o.port < 0 || o.port+o.primprocs > 65536:
		return nil, usagef("--port %d: not a usable port range for %d primprocs", o.port, o.primprocs)
	}
	if o.data != "" {
		if st, err := os.Stat(o.data); err != nil || !st.IsDir() {
			return nil, usagef("--data %s: the data directory does not exist (create it, or leave --data out for temporary stores)", o.data)
		}
	}
	if o.from != "" {
		if st, err := os.Stat(o.from); err != nil || !st.IsDir() {
			return nil, usagef("--from %s: not a directory of generated tables", o.from)
		}
	}
	if p.queries, err = dbt3.SelectQueries(o.queries); err != nil {
		return nil, usagef("--queries: %v", err)
	}
	p.verifier = &dbt3.Verifier{}
	if o.answers != "" {
		ref, err := dbt3.LoadReference(o.answers, p.queries)
		if err != nil {
			return nil, usagef("--answers: %v", err)
		}
		p.verifier.Reference = ref
	}
	if o.duckdb != "" {
		if p.duckdb, err = measure.ReadFile(o.duckdb); err != nil {
			return nil, usagef("--duckdb: %v", err)
		}
		if p.duckdb.Driver != "duckdb" {
			return nil, usagef("--duckdb %s: a %q run, not a DuckDB one", o.duckdb, p.duckdb.Driver)
		}
	}
	return &p, nil
}

// loadMarker records, in a persisted store's directory, that its data was fully loaded.
type loadMarker struct {
	SF        float64   `json:"sf"`
	Primprocs int       `json:"primprocs"`
	Source    string    `json:"source"` // "generated in process" or the --from directory
	Loaded    time.Time `json:"loaded"`
	Seconds   float64   `json:"seconds"`
}

const loadMarkerFile = "loaded.json"

// run runs the comparison and writes its results.
func (o *compareOptions) run(ctx context.Context, e *env, command string) (err error) {
	p, err := o.validate()
	if err != nil {
		return err
	}
	logLevel := slog.LevelWarn
	if o.verbose {
		logLevel = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: logLevel}))
	bins, err := daemons.FindBinaries(ctx, o.bin, log)
	if err != nil {
		if o.bin != "" {
			return usagef("--bin: %v", err)
		}
		return err
	}
	runDir, err := os.MkdirTemp("", "colink-dbt3-")
	if err != nil {
		return err
	}
	keepRunDir := false
	defer func() {
		if keepRunDir {
			fmt.Fprintf(e.stderr, "dbt3: the daemons' logs are in %s\n", runDir)
			return
		}
		os.RemoveAll(runDir)
	}()

	// The stores: persisted under --data, keyed by scale factor and primproc count (the
	// rows dealt to each primproc depend on both), or temporary.
	storeRoot := filepath.Join(runDir, "data")
	if o.data != "" {
		storeRoot = filepath.Join(o.data, fmt.Sprintf("colink-sf%s-pp%d", p.scale, o.primprocs))
	}
	var dataDirs []string
	for i := range o.primprocs {
		dataDirs = append(dataDirs, filepath.Join(storeRoot, "pm"+strconv.Itoa(i)))
	}
	started := time.Now()
	loadBefore := loadAverage()
	cl, err := daemons.Start(ctx, daemons.Config{
		Binaries: bins, DataDirs: dataDirs, RunDir: runDir, SocketDir: o.socketDir, BasePort: o.port,
		Threads: o.threads, PrimProcArgs: o.primprocArgs, ExeMgrArgs: o.exemgrArgs, Log: log,
	})
	if err != nil {
		keepRunDir = true
		return daemonError(err)
	}
	defer func() {
		if serr := cl.Stop(); serr != nil && err == nil {
			err = fmt.Errorf("stopping the daemons: %w", serr)
		}
	}()

	loadNote, err := o.ensureLoaded(ctx, e, cl, storeRoot, p.scale)
	if err != nil {
		keepRunDir = true
		if derr := cl.Check(); derr != nil {
			return fmt.Errorf("%w (%v)", err, derr)
		}
		return err
	}

	executions := 0
	for _, q := range p.queries {
		if q.Pushdown != "" {
			executions++
		} else {
			executions += len(p.pushdowns)
		}
	}
	total := o.runs * len(p.transports) * executions
	bar := e.progressBar(int64(total), "running queries", "")
	failed := 0
	run, cerr := dbt3.Compare(ctx, dbt3.CompareConfig{
		Target: cl, Transports: p.transports, Pushdowns: p.pushdowns, Runs: o.runs, Warmup: o.warmup, Queries: p.queries, Primprocs: o.primprocs, Database: dbt3.DefaultDatabase,
		Verifier: p.verifier, Log: log,
		OnSample: func(s measure.Sample) {
			if s.Error != "" {
				failed++
			}
			if bar != nil {
				bar.Describe(fmt.Sprintf("round %d %-4s %-6s %-5s", s.Round, s.Transport, s.Pushdown, s.Query))
				_ = bar.Add(1)
			}
			log.Info("sample", "round", s.Round, "transport", s.Transport, "pushdown", s.Pushdown, "query", s.Query, "elapsed_s", s.Elapsed, "error", s.Error)
		},
	})
	if bar != nil {
		_ = bar.Finish()
	}
	if cerr != nil {
		if errors.Is(cerr, context.Canceled) {
			return errors.New("interrupted; the daemons are stopped")
		}
		keepRunDir = true // the daemons' logs tell what went wrong
		var se *daemons.StartError
		if errors.As(cerr, &se) {
			return daemonError(cerr)
		}
		return cerr
	}

	if len(p.transports) > 1 && o.streamRounds > 0 {
		switch {
		case bins.IPCBench == "":
			run.Notes = append(run.Notes, "no ipcbench binary found beside the daemons: the fitted CPU per GB is not checked against the link's stream figures")
		default:
			log.Info("compare: ipcbench stream check", "rounds", o.streamRounds)
			costs, command, err := streamCosts(ctx, bins.IPCBench, cl.LinkEndpoints()[0], runDir, p.transports, o.streamRounds, 1e9)
			if err != nil {
				run.Notes = append(run.Notes, fmt.Sprintf("the ipcbench stream check failed: %v", err))
				break
			}
			for tr, sc := range costs {
				report.SetStreamCost(run, tr, sc)
			}
			run.Notes = append(run.Notes, fmt.Sprintf("after the queries, `%s` measured the link's stream against primproc0 (synthetic batches of 65,536 rows × 4 int64 + 1 string of 40 bytes; CPU of both ends per GB)", command))
		}
	}

	run.ID = measure.RunID("compare", p.scale.SF(), started)
	run.Command = command
	run.Started = started
	run.SF = p.scale.SF()
	run.Threads = o.threads
	if run.Threads == 0 {
		run.Threads = runtime.NumCPU()
	}
	run.Host = measure.LocalHost()
	run.Notes = append(run.Notes,
		"one exemgr per transport runs throughout, each started with its --transport, over the same primprocs (listening on TCP and a unix socket at once); the idle exemgrs wait while one runs a query, and the primprocs' caches carry over from one execution to the next: hence the cache drop before every execution of the cold round",
		fmt.Sprintf("the client talks to exemgr over a unix socket (the same in every configuration); answers checked %s", answerNote(o.answers)),
		loadNote,
		fmt.Sprintf("daemons: %s, %s", bins.PrimProc, bins.ExeMgr),
		fmt.Sprintf("load average (1, 5, 15 min) at the start: %s; at the end: %s (other processes on the machine make elapsed times noisy; the paired ratios less so)", loadBefore, loadAverage()))
	if len(o.primprocArgs)+len(o.exemgrArgs) > 0 {
		run.Notes = append(run.Notes, fmt.Sprintf("extra flags: primproc %q, exemgr %q", o.primprocArgs, o.exemgrArgs))
	}

	outDir := o.out
	if outDir == "" {
		outDir = unusedDir(filepath.Join("results", run.ID))
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	if err := run.WriteFile(filepath.Join(outDir, report.ComparisonJSON)); err != nil {
		return err
	}
	_, files, err := report.Write(outDir, report.Runs{Compare: run, DuckDB: p.duckdb})
	if err != nil {
		return err
	}
	if err := report.WriteSummary(e.stdout, report.Summarize(run)); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\nWrote %s and %s.\n", filepath.Join(outDir, report.ComparisonJSON), strings.Join(files, ", "))
	if failed > 0 {
		return fmt.Errorf("%d of %d executions failed; see %s", failed, len(run.Samples), filepath.Join(outDir, report.MarkdownFile))
	}
	return nil
}

// loadAverage returns /proc/loadavg's three averages, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// unusedDir returns dir, or dir-2, dir-3, … if dir exists: two runs started in the same
// minute share an ID, and the second must not overwrite the first's results.
func unusedDir(dir string) string {
	for i := 2; ; i++ {
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			return dir
		}
		dir = strings.TrimSuffix(dir, "-"+strconv.Itoa(i-1)) + "-" + strconv.Itoa(i)
	}
}

func answerNote(dir string) string {
	if dir == "" {
		return "for consistency only (no --answers): each result equals the query's first result of the run"
	}
	return "against the expected answers in " + dir + " (CS1–CS3 for consistency)"
}

// ensureLoaded loads the data into the primprocs unless the store's marker says it is
// there, and returns a note for the run's record.
func (o *compareOptions) ensureLoaded(ctx context.Context, e *env, cl *daemons.Cluster, storeRoot string, scale tpch.Scale) (string, error) {
	markerPath := filepath.Join(storeRoot, loadMarkerFile)
	if b, err := os.ReadFile(markerPath); err == nil {
		var m loadMarker
		if json.Unmarshal(b, &m) == nil && m.SF == scale.SF() && m.Primprocs == o.primprocs {
			return fmt.Sprintf("data loaded into %s on %s from %s (%.1f s) and reused", storeRoot, m.Loaded.UTC().Format(time.RFC3339), m.Source, m.Seconds), nil
		}
	}
	args := []string{}
	for _, ep := range cl.LinkEndpoints() {
		args = append(args, "--primproc", ep)
	}
	source := "generated in process"
	if o.from != "" {
		args = append(args, "--from", o.from)
		source = o.from
	} else {
		args = append(args, "--sf", scale.String())
	}
	start := time.Now()
	// dbt3 load's report lines go to stderr: stdout is for the comparison's table.
	loadEnv := &env{stdout: e.stderr, stderr: e.stderr, stderrTerminal: e.stderrTerminal}
	if err := runLoad(ctx, loadEnv, args); err != nil {
		return "", fmt.Errorf("load: %w", err)
	}
	m := loadMarker{SF: scale.SF(), Primprocs: o.primprocs, Source: source, Loaded: time.Now(), Seconds: time.Since(start).Seconds()}
	if o.data != "" {
		b, _ := json.MarshalIndent(m, "", "  ")
		if err := atomicfile.Write(markerPath, append(b, '\n'), 0o644); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("data %s loaded into %s in %.1f s", source, storeRoot, m.Seconds), nil
}

// daemonError makes a daemon's failure to start a usage-class error (exit status 2): the
// message already carries the daemon's own log lines.
func daemonError(err error) error {
	var se *daemons.StartError
	if errors.As(err, &se) {
		return &usageError{err}
	}
	return err
}
