package faults

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/colinkdb/colink/dbt3/cluster"
	"github.com/colinkdb/colink/dbt3/measure"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/storage"
	"github.com/colinkdb/colink/tpch"
)

// Config configures a run of the suite.
type Config struct {
	Binaries cluster.Binaries
	// TestHookPrimproc is primproc built with the colink_testhooks tag; without it
	// crash-primproc-commit is skipped, and the report says so.
	TestHookPrimproc string
	// Load loads the TPC-H tables at scale factor SF into the primprocs at these link
	// endpoints (as dbt3 load does).
	Load func(ctx context.Context, endpoints []string) error
	SF   string
	// Tries is how often each fault runs on each transport.
	Tries      int
	Transports []string
	// Faults names the faults to run (Names lists them); empty runs all.
	Faults    []string
	Primprocs int
	// RunDir holds the daemons' data and logs; it must exist. A short path keeps the unix
	// sockets' paths under the kernel's limit.
	RunDir string
	// The daemons' link heartbeat, --net-write-timeout and --pool-idle.
	HeartbeatInterval, HeartbeatTimeout time.Duration
	NetWriteTimeout, PoolIdle           time.Duration
	// Slack is added to every time bound that a loaded machine could stretch.
	Slack time.Duration
	// HangTimeout bounds every statement and wait: one not done by then is a hang.
	HangTimeout time.Duration
	// IdleConnections is idle-connections's number of sessions.
	IdleConnections int
	Seed            uint64
	Log             *slog.Logger
	// OnTrial, if set, is called after each try.
	OnTrial func(fault, transport string, t Trial)
}

// DefaultConfig returns the full suite's settings, the daemons' defaults where they have
// one; the caller sets Binaries, Load and RunDir.
func DefaultConfig() Config {
	return Config{
		SF: "0.01", Tries: 3, Transports: Transports(), Primprocs: 2,
		HeartbeatInterval: ipc.DefaultHeartbeatInterval, HeartbeatTimeout: ipc.DefaultHeartbeatTimeout,
		NetWriteTimeout: time.Second, PoolIdle: time.Second, Slack: time.Second,
		HangTimeout: 30 * time.Second, IdleConnections: 1000, Seed: 18,
	}
}

// Transports lists the suite's link transports. auto is not one: on the suite's local
// cluster it comes to shm, and a try must know which transport it tests.
func Transports() []string { return []string{"tcp", "unix", "shm"} }

// maxConnections is exemgr's --mysql-max-connections in the suite: room for the idle
// sessions and the clients that query beside them.
func (c *Config) maxConnections() int { return c.IdleConnections + 100 }

// all returns every fault, in the order the suite runs them.
func all(cfg *Config) []Fault {
	return []Fault{
		killPrimprocQuery(cfg), stopPrimprocQuery(cfg), killExemgrQuery(cfg), stopExemgrQuery(cfg),
		killPrimprocWrite(cfg), crashPrimprocCommit(cfg),
		garbageLink(cfg), garbageMySQL(cfg),
		idleConnections(cfg), slowConsumer(cfg),
	}
}

// Names lists the faults' names, in the order the suite runs them.
func Names() []string {
	cfg := DefaultConfig()
	var out []string
	for _, f := range all(&cfg) {
		out = append(out, f.Name)
	}
	return out
}

// Describe returns every fault with its summary and criterion under cfg's settings.
func Describe(cfg Config) []Fault { return all(&cfg) }

// Validate checks the settings a caller chooses (not Binaries, Load and RunDir, which Run
// checks).
func (c *Config) Validate() error {
	switch {
	case c.Tries < 1:
		return fmt.Errorf("tries %d: need at least one", c.Tries)
	case c.Primprocs < 1:
		return fmt.Errorf("primprocs %d: need at least one", c.Primprocs)
	case len(c.Transports) == 0:
		return errors.New("no transports")
	case c.HeartbeatInterval <= 0 || c.HeartbeatTimeout <= c.HeartbeatInterval:
		return fmt.Errorf("heartbeat interval %v, timeout %v: want 0 < interval < timeout", c.HeartbeatInterval, c.HeartbeatTimeout)
	case c.NetWriteTimeout < time.Second:
		return fmt.Errorf("net write timeout %v: exemgr's is whole seconds, at least 1s", c.NetWriteTimeout)
	case c.PoolIdle <= 0 || c.HangTimeout <= 0 || c.Slack < 0:
		return errors.New("pool idle and hang timeout must be positive, slack not negative")
	case c.IdleConnections < 1:
		return fmt.Errorf("idle connections %d: need at least one", c.IdleConnections)
	}
	if _, err := tpch.ParseScale(c.SF); err != nil {
		return fmt.Errorf("scale factor: %w", err)
	}
	for _, tr := range c.Transports {
		if !slices.Contains(Transports(), tr) {
			return fmt.Errorf("transport %q: want one of %s", tr, strings.Join(Transports(), ", "))
		}
	}
	names := Names()
	for _, f := range c.Faults {
		if !slices.Contains(names, f) {
			return fmt.Errorf("unknown fault %q (want some of %s)", f, strings.Join(names, ", "))
		}
	}
	return nil
}

// raiseFileLimit makes room for the idle sessions' sockets in this process (the daemons,
// Go programs too, raise their own soft limit to the hard one at start).
func raiseFileLimit(need uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("getrlimit: %w", err)
	}
	if lim.Cur >= need {
		return nil
	}
	if lim.Max < need {
		return fmt.Errorf("%d idle connections need %d file descriptors; the hard limit is %d (raise it: ulimit -Hn %d, or LimitNOFILE)", need-256, need, lim.Max, need)
	}
	lim.Cur = need
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("setrlimit NOFILE %d: %w", need, err)
	}
	return nil
}

// Run starts the cluster, loads it, runs every fault Tries times over each transport and
// returns the report. An error means the suite itself could not run (the daemons did not
// start, the load failed); faults that fail are in the report.
func Run(ctx context.Context, cfg Config) (rep *Report, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Load == nil || cfg.RunDir == "" {
		return nil, errors.New("faults: no loader or no run directory")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if err := raiseFileLimit(uint64(cfg.IdleConnections) + 256); err != nil {
		return nil, err
	}
	log := cfg.Log
	started := time.Now()
	rep = &Report{
		Started: started, SF: cfg.SF, Tries: cfg.Tries, Primprocs: cfg.Primprocs, Transports: cfg.Transports,
		Settings: Settings{HeartbeatInterval: cfg.HeartbeatInterval.String(), HeartbeatTimeout: cfg.HeartbeatTimeout.String(),
			NetWriteTimeout: cfg.NetWriteTimeout.String(), PoolIdle: cfg.PoolIdle.String(), Slack: cfg.Slack.String(),
			HangTimeout: cfg.HangTimeout.String(), IdleConnections: cfg.IdleConnections, Seed: cfg.Seed},
		Host: measure.LocalHost(),
	}
	hb := []string{"--heartbeat-interval", cfg.HeartbeatInterval.String(), "--heartbeat-timeout", cfg.HeartbeatTimeout.String(),
		"--pool-idle", cfg.PoolIdle.String()}
	layout, err := segmentLayout(cfg.SF, cfg.Primprocs)
	if err != nil {
		return nil, err
	}
	var dataDirs []string
	for i := range cfg.Primprocs {
		dataDirs = append(dataDirs, filepath.Join(cfg.RunDir, "pm"+strconv.Itoa(i)))
	}
	cl, err := cluster.Start(ctx, cluster.Config{
		Binaries: cfg.Binaries, DataDirs: dataDirs, RunDir: cfg.RunDir, MySQLTCP: true, Log: log,
		PrimProcArgs: append(slices.Clone(hb), layout...),
		ExeMgrArgs: append(slices.Clone(hb), "--net-write-timeout", cfg.NetWriteTimeout.String(),
			"--data-dir", filepath.Join(cfg.RunDir, "exemgr"), "--max-allowed-packet", strconv.Itoa(maxAllowedPacket),
			"--mysql-max-connections", strconv.Itoa(cfg.maxConnections())),
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		if serr := cl.Stop(); serr != nil && err == nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("stopping the daemons: %v", serr))
		}
	}()
	loadStart := time.Now()
	if err := cfg.Load(ctx, cl.LinkEndpoints()); err != nil {
		return nil, fmt.Errorf("load SF %s: %w", cfg.SF, err)
	}
	var stats link.Cluster
	defer func() {
		for _, c := range stats {
			c.Close()
		}
	}()
	for _, ep := range cl.LinkEndpoints() {
		c, err := link.Dial(ep, ipc.ClientConfig{Transport: ipc.TransportTCP, Name: "faults", ConnsPerPeer: 1,
			BackoffMax: 200 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			return nil, err
		}
		stats = append(stats, c)
	}
	if err := loadWriteTable(ctx, stats); err != nil {
		return nil, err
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("TPC-H SF %s loaded into %d primprocs in %.1fs", cfg.SF, cfg.Primprocs, time.Since(loadStart).Seconds()))

	faults := all(&cfg)
	if len(cfg.Faults) > 0 {
		faults = slices.DeleteFunc(faults, func(f Fault) bool { return !slices.Contains(cfg.Faults, f.Name) })
	}
	ref := &reference{}
	write := &writeState{dir: cfg.RunDir}
	rng := rand.New(rand.NewPCG(cfg.Seed, 18))
	for ti, tr := range cfg.Transports {
		if _, err := cl.UseTransport(ctx, tr); err != nil {
			return nil, fmt.Errorf("exemgr over %s: %w", tr, err)
		}
		e := &Env{Transport: tr, cfg: &cfg, cl: cl, stats: stats, rng: rng, log: log, ref: ref, write: write}
		if ti == 0 {
			if err := e.measureReference(ctx); err != nil {
				return nil, err
			}
			rep.Notes = append(rep.Notes, fmt.Sprintf("healthy: the check query takes %.3fs at most (of 3 runs)", ref.checkTime.Seconds()))
		}
		got, _, links, err := e.checkLinks(ctx)
		if err != nil || got != ref.check {
			return nil, fmt.Errorf("over %s, before any fault, the check query answers %q (%v), want %q", tr, got, err, ref.check)
		}
		if bad := e.wrongLinks(links); bad != "" {
			return nil, fmt.Errorf("over %s, before any fault: %s", tr, bad)
		}
		for _, f := range faults {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			row := Row{Fault: f.Name, Transport: tr, Summary: f.Summary, Criterion: f.Criterion, Settled: f.SettlesMemory}
			if f.Name == "crash-primproc-commit" && cfg.TestHookPrimproc == "" {
				row.Skipped = "no primproc built with the colink_testhooks tag"
				rep.Rows = append(rep.Rows, row)
				continue
			}
			e.runFault(ctx, f, &row)
			rep.Rows = append(rep.Rows, row)
		}
	}
	rep.Seconds = time.Since(started).Seconds()
	return rep, nil
}

// segmentLayout returns primproc's --segment-rows and --row-group-rows for the run: the
// defaults, unless lineitem at sf is too small for them to give every primproc two
// segments of it; then the segment size is halved until it does, with row groups of a
// quarter of a segment. So every fault finds work on every primproc (dbt3 load deals whole
// segments, and keeps a table smaller than a row group per primproc on one).
func segmentLayout(sf string, primprocs int) ([]string, error) {
	sc, err := tpch.ParseScale(sf)
	if err != nil {
		return nil, err
	}
	rows, err := sc.EstimatedRows("lineitem")
	if err != nil {
		return nil, err
	}
	seg := int64(storage.DefaultSegmentRows)
	for seg > 4096 && rows < 2*int64(primprocs)*seg {
		seg /= 2
	}
	group := min(int64(storage.DefaultRowGroupRows), seg/4)
	if seg == storage.DefaultSegmentRows && group == storage.DefaultRowGroupRows {
		return nil, nil
	}
	return []string{"--segment-rows", strconv.FormatInt(seg, 10), "--row-group-rows", strconv.FormatInt(group, 10)}, nil
}

// measureReference takes the healthy answers.
func (e *Env) measureReference(ctx context.Context) error {
	for range 3 {
		got, took, err := e.query(ctx, checkQuery)
		if err != nil {
			return fmt.Errorf("the check query on the healthy cluster: %w", err)
		}
		if e.ref.check != "" && got != e.ref.check {
			return fmt.Errorf("the check query answers %q, then %q, on the healthy cluster", e.ref.check, got)
		}
		e.ref.check, e.ref.checkTime = got, max(e.ref.checkTime, took)
	}
	got, _, err := e.query(ctx, longAnswerQuery)
	if err != nil {
		return fmt.Errorf("the long query's answer on the healthy cluster: %w", err)
	}
	e.ref.long = got
	// The faults land within half a second of the long query's fragments starting: it must
	// still be running a second after.
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res, err := e.start(qctx, longQuery)
	if err != nil {
		return err
	}
	var t Trial
	if !e.waitRunning(ctx, &t, res) {
		return fmt.Errorf("the long query on the healthy cluster: %s", strings.Join(t.Failures, "; "))
	}
	sleep(ctx, time.Second)
	select {
	case r := <-res:
		return fmt.Errorf("the long query ended (%v) within a second of reaching the primprocs: too short to inject faults into", r.err)
	default:
	}
	cancel()
	if _, idle := e.waitIdle(ctx, e.all(), 5*time.Second); !idle {
		return errors.New("the primprocs still run the cancelled long query 5s after")
	}
	e.log.Info("faults: healthy answers taken", "check_s", e.ref.checkTime.Seconds())
	return nil
}

// runFault runs one fault's tries on e's transport into row.
func (e *Env) runFault(ctx context.Context, f Fault, row *Row) {
	start := time.Now()
	defer func() { row.Seconds = time.Since(start).Seconds() }()
	if f.Setup != nil {
		if err := f.Setup(ctx, e); err != nil {
			row.Skipped = fmt.Sprintf("setup failed: %v", err)
			return
		}
	}
	row.RSSBefore = e.rss()
	for n := 1; n <= e.cfg.Tries && ctx.Err() == nil; n++ {
		t := Trial{Try: n}
		f.Try(ctx, e, &t)
		e.repair(ctx, &t)
		row.Trials = append(row.Trials, t)
		e.log.Info("faults: try", "fault", f.Name, "transport", e.Transport, "try", n, "outcome", t.Outcome.String(),
			"seconds", t.Seconds, "error", t.Error, "failures", strings.Join(t.Failures, "; "))
		if e.cfg.OnTrial != nil {
			e.cfg.OnTrial(f.Name, e.Transport, t)
		}
	}
	if f.SettlesMemory {
		e.settle(ctx)
	}
	row.RSSAfter = e.rss()
}

// repair finds daemons that died without the fault killing them (or that the fault did
// not bring back) and starts them again, so that the next try has a whole cluster.
func (e *Env) repair(ctx context.Context, t *Trial) {
	for i := range e.cl.Primprocs() {
		name := e.pmName(i)
		if e.cl.Running(name) {
			_ = e.cl.Signal(name, syscall.SIGCONT) // never leave one stopped
			continue
		}
		t.fail(Died, "%s was not running at the end of the try", name)
		if err := e.cl.RestartPrimproc(ctx, i, "", nil); err != nil {
			e.log.Warn("faults: restart a dead primproc", "name", name, "err", err)
		}
	}
	if e.cl.Running("exemgr") {
		_ = e.cl.Signal("exemgr", syscall.SIGCONT)
		return
	}
	t.fail(Died, "exemgr was not running at the end of the try")
	if _, err := e.cl.UseTransport(ctx, e.Transport); err != nil {
		e.log.Warn("faults: restart a dead exemgr", "err", err)
	}
}
