// Package bench owns dbt3's transport comparison as one job, the measurement a person runs
// ("dbt3 compare", and "dbt3 bench", which first generates the tables): it checks the
// settings before anything starts, starts the primprocs and one exemgr per transport as
// children (dbt3/cluster), loads them unless a persisted store already holds the data
// (dbt3/load), runs the measured queries (dbt3.Compare), checks the fitted CPU per GB
// against ipcbench's stream mode run as a separate process (dbt3/ipcbench), writes the run's
// record, report and plots into results/<run-id>/ (dbt3/report) and prints the elapsed
// table. The daemons are stopped when it returns, on cancellation too.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/colinkdb/colink/dbt3"
	daemons "github.com/colinkdb/colink/dbt3/cluster"
	"github.com/colinkdb/colink/dbt3/load"
	"github.com/colinkdb/colink/dbt3/measure"
	"github.com/colinkdb/colink/dbt3/report"
	"github.com/colinkdb/colink/internal/atomicfile"
	"github.com/colinkdb/colink/tpch"
)

// Config is a comparison's settings, field by field the flags of "dbt3 compare" (see its
// --help); settings it cannot use are *dbt3.UsageError naming the flag.
type Config struct {
	Transports []string // link transports to compare, in round 1's order
	// Pushdowns are the exemgr pushdown levels every query runs at (the scan family always
	// runs at scan).
	Pushdowns []string
	Runs      int // rounds: round 1 cold (caches dropped before each query), the others warm
	SF        string
	Primprocs int // each holding a share of every table
	Threads   int // worker threads per primproc (0: all cores)
	// Data is the root of the persisted primproc stores (DIR/colink-sfF-ppN/pmI), loaded
	// once and reused; it must exist. "": temporary stores, loaded every time.
	Data string
	// From loads the .tbl or Parquet files of this directory instead of generating in
	// process.
	From string
	// Answers is a directory of expected answers (qNN.csv) for the validation queries;
	// without it every result must equal the query's first result of the run.
	Answers string
	Out     string // results directory (default results/<run-id>)
	Bin     string // directory holding primproc and exemgr (default: see cluster.FindBinaries)
	// Port: primproc i listens on 127.0.0.1:Port+i (0: free ports).
	Port      int
	SocketDir string // directory for the daemons' unix sockets (default: the run's temporary directory)
	Queries   string // all, tpch, cs, scan or a list such as 1,3,5-8,CS1
	DuckDB    string // a DuckDB run's JSON (bench/duckdb) to put beside colink in the report
	// PrimprocArgs and ExemgrArgs are extra flags for the daemons.
	PrimprocArgs, ExemgrArgs []string
	// Warmup runs each query once unmeasured over every transport before its measured
	// executions in warm rounds (see dbt3.CompareConfig.Warmup).
	Warmup bool
	// StreamRounds is the rounds of ipcbench's stream mode (1 GB per transport each) run
	// against the same primproc after the queries; 0 skips it.
	StreamRounds int
	// Profile names queries (a list as Queries takes) to profile: after the measured
	// rounds each runs once more, unmeasured, over every transport, with a CPU profile
	// taken in each daemon, saved as OUT/profiles/QUERY-TRANSPORT-DAEMON.pprof.
	Profile string
	Verbose bool   // log each step and sample on stderr
	Command string // the command line, recorded in the run
}

// DefaultConfig returns "dbt3 compare"'s defaults.
func DefaultConfig() Config {
	return Config{Transports: []string{"tcp", "unix", "shm"}, Pushdowns: []string{"full"}, Runs: 1 + report.MinWarmRounds, SF: "1", Primprocs: 1,
		Queries: "all", Warmup: true, StreamRounds: 3}
}

// preparedCompare is what run validated from the flags.
type preparedCompare struct {
	scale      tpch.Scale
	transports []string
	pushdowns  []string
	queries    []dbt3.Query
	profiled   []dbt3.Query // --profile's, each among queries
	verifier   *dbt3.Verifier
	duckdb     *measure.Run
}

// validate checks every setting before anything starts, so that bad input starts no daemon.
func (cfg *Config) validate() (*preparedCompare, error) {
	var p preparedCompare
	var err error
	if p.transports, err = dbt3.ParseTransports(cfg.Transports); err != nil {
		return nil, dbt3.Usagef("--transports: %v", err)
	}
	if p.pushdowns, err = dbt3.ParsePushdowns(cfg.Pushdowns); err != nil {
		return nil, dbt3.Usagef("--pushdown: %v", err)
	}
	if p.scale, err = tpch.ParseScale(cfg.SF); err != nil {
		return nil, dbt3.Usagef("--sf: %v", err)
	}
	switch {
	case cfg.Runs < 1:
		return nil, dbt3.Usagef("--runs %d: need at least one", cfg.Runs)
	case cfg.Primprocs < 1:
		return nil, dbt3.Usagef("--primprocs %d: need at least one", cfg.Primprocs)
	case cfg.StreamRounds < 0:
		return nil, dbt3.Usagef("--ipcbench-rounds %d: must not be negative", cfg.StreamRounds)
	case cfg.Threads < 0:
		return nil, dbt3.Usagef("--threads %d: must not be negative", cfg.Threads)
	case cfg.Port < 0 || cfg.Port+cfg.Primprocs > 65536:
		return nil, dbt3.Usagef("--port %d: not a usable port range for %d primprocs", cfg.Port, cfg.Primprocs)
	}
	if cfg.Data != "" {
		if st, err := os.Stat(cfg.Data); err != nil || !st.IsDir() {
			return nil, dbt3.Usagef("--data %s: the data directory does not exist (create it, or leave --data out for temporary stores)", cfg.Data)
		}
	}
	if cfg.From != "" {
		if st, err := os.Stat(cfg.From); err != nil || !st.IsDir() {
			return nil, dbt3.Usagef("--from %s: not a directory of generated tables", cfg.From)
		}
	}
	if p.queries, err = dbt3.SelectQueries(cfg.Queries); err != nil {
		return nil, dbt3.Usagef("--queries: %v", err)
	}
	if cfg.Profile != "" {
		if p.profiled, err = dbt3.SelectQueries(cfg.Profile); err != nil {
			return nil, dbt3.Usagef("--profile: %v", err)
		}
		for _, q := range p.profiled {
			if !slices.ContainsFunc(p.queries, func(r dbt3.Query) bool { return r.Name == q.Name }) {
				return nil, dbt3.Usagef("--profile: %s is not among the queries run (--queries %s)", q.Name, cfg.Queries)
			}
		}
	}
	p.verifier = &dbt3.Verifier{}
	if cfg.Answers != "" {
		ref, err := dbt3.LoadReference(cfg.Answers, p.queries)
		if err != nil {
			return nil, dbt3.Usagef("--answers: %v", err)
		}
		p.verifier.Reference = ref
	}
	if cfg.DuckDB != "" {
		if p.duckdb, err = measure.ReadFile(cfg.DuckDB); err != nil {
			return nil, dbt3.Usagef("--duckdb: %v", err)
		}
		if p.duckdb.Driver != "duckdb" {
			return nil, dbt3.Usagef("--duckdb %s: a %q run, not a DuckDB one", cfg.DuckDB, p.duckdb.Driver)
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

// Compare runs the comparison and writes its results.
func Compare(ctx context.Context, cfg Config, out dbt3.Output) (err error) {
	p, err := cfg.validate()
	if err != nil {
		return err
	}
	log := out.Logger(cfg.Verbose)
	bins, err := daemons.FindBinariesFlag(ctx, cfg.Bin, log)
	if err != nil {
		return err
	}
	runDir, err := os.MkdirTemp("", "colink-dbt3-")
	if err != nil {
		return err
	}
	keepRunDir := false
	defer func() {
		if keepRunDir {
			fmt.Fprintf(out.Stderr, "dbt3: the daemons' logs are in %s\n", runDir)
			return
		}
		os.RemoveAll(runDir)
	}()

	// The stores: persisted under --data, keyed by scale factor and primproc count (the
	// rows dealt to each primproc depend on both), or temporary.
	storeRoot := filepath.Join(runDir, "data")
	if cfg.Data != "" {
		storeRoot = filepath.Join(cfg.Data, fmt.Sprintf("colink-sf%s-pp%d", p.scale, cfg.Primprocs))
	}
	var dataDirs []string
	for i := range cfg.Primprocs {
		dataDirs = append(dataDirs, filepath.Join(storeRoot, "pm"+strconv.Itoa(i)))
	}
	busy, busyOK := measure.BusyCPUs(ctx, time.Second)
	if busyOK && busy > busyWarning {
		fmt.Fprintf(out.Stderr, "dbt3: warning: the machine was busy with other work before the run: %.2f of %d CPUs in the last second (load average %s); the figures will be noisy\n",
			busy, runtime.NumCPU(), loadAverage())
	}
	started := time.Now()
	loadBefore := loadAverage()
	cl, err := daemons.Start(ctx, daemons.Config{
		Binaries: bins, DataDirs: dataDirs, RunDir: runDir, SocketDir: cfg.SocketDir, BasePort: cfg.Port,
		Threads: cfg.Threads, PrimProcArgs: cfg.PrimprocArgs, ExeMgrArgs: cfg.ExemgrArgs, Log: log,
		Profiling: len(p.profiled) > 0,
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

	loadNote, err := cfg.ensureLoaded(ctx, out, cl, storeRoot, p.scale)
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
	total := cfg.Runs * len(p.transports) * executions
	bar := out.ProgressBar(int64(total), "running queries", "")
	failed := 0
	run, cerr := dbt3.Compare(ctx, dbt3.CompareConfig{
		Target: cl, Transports: p.transports, Pushdowns: p.pushdowns, Runs: cfg.Runs, Warmup: cfg.Warmup, Queries: p.queries, Primprocs: cfg.Primprocs, Database: dbt3.DefaultDatabase,
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

	if len(p.transports) > 1 && cfg.StreamRounds > 0 {
		switch {
		case bins.IPCBench == "":
			run.Notes = append(run.Notes, "no ipcbench binary found beside the daemons: the fitted CPU per GB is not checked against the link's stream figures")
		default:
			log.Info("compare: ipcbench stream check", "rounds", cfg.StreamRounds)
			costs, command, err := streamCosts(ctx, bins.IPCBench, cl.LinkEndpoints()[0], runDir, p.transports, cfg.StreamRounds, 1e9)
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
	run.Command = cfg.Command
	run.Started = started
	run.SF = p.scale.SF()
	run.Threads = cfg.Threads
	if run.Threads == 0 {
		run.Threads = runtime.NumCPU()
	}
	run.Host = measure.LocalHost()
	run.Host.Load = loadBefore
	if busyOK {
		run.Host.BusyCPUs = &busy
		if busy > busyWarning {
			run.Notes = append(run.Notes, fmt.Sprintf("warning: before the run the machine was busy with other work: %.2f CPUs in the last second", busy))
		}
	}
	run.Builds = measure.Builds("dbt3", map[string]string{"primproc": bins.PrimProc, "exemgr": bins.ExeMgr})
	run.Notes = append(run.Notes,
		"one exemgr per transport runs throughout, each started with its --transport, over the same primprocs (listening on TCP and a unix socket at once); the idle exemgrs wait while one runs a query, and the primprocs' caches carry over from one execution to the next: hence the cache drop before every execution of the cold round",
		fmt.Sprintf("the client talks to exemgr over a unix socket (the same in every configuration); answers checked %s", answerNote(cfg.Answers)),
		loadNote,
		fmt.Sprintf("daemons: %s, %s", bins.PrimProc, bins.ExeMgr),
		fmt.Sprintf("load average (1, 5, 15 min) at the start: %s; at the end: %s (other processes on the machine make elapsed times noisy; the paired ratios less so)", loadBefore, loadAverage()))
	if len(cfg.PrimprocArgs)+len(cfg.ExemgrArgs) > 0 {
		run.Notes = append(run.Notes, fmt.Sprintf("extra flags: primproc %q, exemgr %q", cfg.PrimprocArgs, cfg.ExemgrArgs))
	}

	outDir := cfg.Out
	if outDir == "" {
		outDir = unusedDir(filepath.Join("results", run.ID))
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	if len(p.profiled) > 0 {
		files, err := profileQueries(ctx, cl, p, filepath.Join(outDir, "profiles"))
		if err != nil {
			run.Notes = append(run.Notes, fmt.Sprintf("profiling failed: %v", err))
		}
		if len(files) > 0 {
			run.Notes = append(run.Notes, fmt.Sprintf("CPU profiles (go tool pprof FILE) of %d unmeasured executions after the rounds, at pushdown %s, in %s", len(files)/(1+cfg.Primprocs), p.pushdowns[0], filepath.Join(outDir, "profiles")))
		}
	}
	if err := run.WriteFile(filepath.Join(outDir, report.ComparisonJSON)); err != nil {
		return err
	}
	_, files, err := report.Write(outDir, report.Runs{Compare: run, DuckDB: p.duckdb})
	if err != nil {
		return err
	}
	if err := report.WriteSummary(out.Stdout, report.Summarize(run)); err != nil {
		return err
	}
	fmt.Fprintf(out.Stdout, "\nWrote %s and %s.\n", filepath.Join(outDir, report.ComparisonJSON), strings.Join(files, ", "))
	if failed > 0 {
		return fmt.Errorf("%d of %d executions failed; see %s", failed, len(run.Samples), filepath.Join(outDir, report.MarkdownFile))
	}
	return nil
}

// profileQueries runs each profiled query once over every transport at the first pushdown
// level, a CPU profile running in each daemon meanwhile, and saves the profiles into dir.
func profileQueries(ctx context.Context, cl *daemons.Cluster, p *preparedCompare, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, tr := range p.transports {
		conn, err := dbt3.Dial(ctx, cl.MySQLSocket(tr), dbt3.DefaultDatabase)
		if err != nil {
			return files, err
		}
		m := &dbt3.Measurer{Conn: conn}
		for _, q := range p.profiled {
			level := q.Pushdown
			if level == "" {
				level = p.pushdowns[0]
			}
			if _, _, err := conn.ExecCount(ctx, "SET colink_pushdown = '"+level+"'"); err != nil {
				conn.Close()
				return files, err
			}
			if err := cl.StartProfiles(ctx, tr); err != nil {
				conn.Close()
				return files, err
			}
			_, qerr := m.Run(ctx, q)
			got, err := cl.StopProfiles(ctx, tr, dir, q.Name+"-"+tr)
			files = append(files, got...)
			if err := errors.Join(qerr, err); err != nil {
				conn.Close()
				return files, fmt.Errorf("%s over %s: %w", q.Name, tr, err)
			}
		}
		conn.Close()
	}
	return files, nil
}

// busyWarning is the other work, in CPUs, over which a run warns that its machine is busy.
const busyWarning = 0.25

// loadAverage returns /proc/loadavg's three averages, or "unknown".
func loadAverage() string {
	if la := measure.LoadAverage(); la != "" {
		return la
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
func (cfg *Config) ensureLoaded(ctx context.Context, out dbt3.Output, cl *daemons.Cluster, storeRoot string, scale tpch.Scale) (string, error) {
	markerPath := filepath.Join(storeRoot, loadMarkerFile)
	if b, err := os.ReadFile(markerPath); err == nil {
		var m loadMarker
		if json.Unmarshal(b, &m) == nil && m.SF == scale.SF() && m.Primprocs == cfg.Primprocs {
			return fmt.Sprintf("data loaded into %s on %s from %s (%.1f s) and reused", storeRoot, m.Loaded.UTC().Format(time.RFC3339), m.Source, m.Seconds), nil
		}
	}
	lc := load.DefaultConfig()
	lc.Primprocs = cl.LinkEndpoints()
	source := "generated in process"
	if cfg.From != "" {
		lc.From = cfg.From
		source = cfg.From
	} else {
		lc.SF = scale.String()
	}
	start := time.Now()
	// The load's report lines go to stderr: stdout is for the comparison's table.
	if err := load.Run(ctx, lc, out.ToStderr()); err != nil {
		return "", fmt.Errorf("load: %w", err)
	}
	m := loadMarker{SF: scale.SF(), Primprocs: cfg.Primprocs, Source: source, Loaded: time.Now(), Seconds: time.Since(start).Seconds()}
	if cfg.Data != "" {
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
		return &dbt3.UsageError{Err: err}
	}
	return err
}
