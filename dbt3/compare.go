package dbt3

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/colinkdb/colink/dbt3/measure"
)

// Transports are the link transports a comparison may measure.
var transports = []string{"tcp", "unix", "shm"}

// ParseTransports checks a --transports list: known transports, each once.
func ParseTransports(list []string) ([]string, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("no transports given (want some of %v)", transports)
	}
	var out []string
	for _, t := range list {
		if !slices.Contains(transports, t) {
			return nil, fmt.Errorf("unknown transport %q (want %v)", t, transports)
		}
		if slices.Contains(out, t) {
			return nil, fmt.Errorf("transport %q given twice", t)
		}
		out = append(out, t)
	}
	return out, nil
}

// Pushdowns are exemgr's pushdown levels, in order of the traffic they put on the link.
var pushdowns = []string{"full", "filter", "scan"}

// ParsePushdowns checks a --pushdown list: known levels, each once.
func ParsePushdowns(list []string) ([]string, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("no pushdown levels given (want some of %v)", pushdowns)
	}
	var out []string
	for _, p := range list {
		if !slices.Contains(pushdowns, p) {
			return nil, fmt.Errorf("unknown pushdown level %q (want %v)", p, pushdowns)
		}
		if slices.Contains(out, p) {
			return nil, fmt.Errorf("pushdown level %q given twice", p)
		}
		out = append(out, p)
	}
	return out, nil
}

// Endpoint is where one of a Target's exemgrs takes MySQL clients, and the pids of the
// local daemons it uses by process name ("exemgr", "primproc0", …) for the /proc
// cross-check.
type Endpoint struct {
	Addr string
	PIDs map[string]int
}

// Target is the daemons a comparison measures.
type Target interface {
	// Serve readies one exemgr per transport, all running at once over the same primprocs,
	// and returns where each takes clients, by transport.
	Serve(ctx context.Context, transports []string) (map[string]Endpoint, error)
	// Check returns an error describing any daemon that has died (with its log).
	Check() error
}

// CompareConfig configures a transport comparison.
type CompareConfig struct {
	Target     Target
	Transports []string // e.g. tcp, unix, shm; the order of the first query of round 1
	// Pushdowns are the pushdown levels every query runs at (default: full), except a
	// query that pins its own (Query.Pushdown).
	Pushdowns []string
	Runs      int // rounds; round 1 is cold
	// Warmup runs each query (at each level) once over every transport, unmeasured,
	// before its measured executions of a warm round, so that the transport that goes
	// first does not refill the column cache for the others (at SF 10 the run's working
	// set exceeds it, and the first execution after another query read what that query
	// evicted), nor find its exemgr warmer than the others' (with a warm-up on the first
	// transport alone, the rounds' fitted slopes alternated in sign with the order).
	Warmup    bool
	Queries   []Query
	Database  string
	Primprocs int
	Verifier  *Verifier
	OnSample  func(measure.Sample) // progress
	Log       *slog.Logger
}

// RoundOrder returns the transports in the order turn t (from 1) runs them: as given in
// odd turns, reversed in even ones, so that drift hits every transport alike.
func RoundOrder(transports []string, turn int) []string {
	out := slices.Clone(transports)
	if turn%2 == 0 {
		slices.Reverse(out)
	}
	return out
}

// Compare runs every query Runs times at every pushdown level over every transport. One
// exemgr per transport serves throughout (Target.Serve), each on its own session; the
// transports take turns query by query, in an order that alternates from one query (and
// level) to the next and from one round to the next (RoundOrder), so that a query's
// samples over the transports are taken back to back. Each execution is measured by a
// Measurer with SHOW QUERY STATS and the /proc cross-check, and its result verified. In
// round 1 every execution runs cold: the primprocs' caches are dropped right before it. A
// failed query is recorded in its sample and the run goes on, unless a daemon died;
// Compare's error then says which and why.
func Compare(ctx context.Context, cfg CompareConfig) (*measure.Run, error) {
	if cfg.Runs < 1 {
		return nil, fmt.Errorf("compare: %d runs; need at least one", cfg.Runs)
	}
	if _, err := ParseTransports(cfg.Transports); err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	if len(cfg.Pushdowns) == 0 {
		cfg.Pushdowns = []string{"full"}
	}
	if _, err := ParsePushdowns(cfg.Pushdowns); err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	if len(cfg.Queries) == 0 {
		return nil, fmt.Errorf("compare: no queries")
	}
	for _, q := range cfg.Queries {
		if q.Pushdown != "" && !slices.Contains(pushdowns, q.Pushdown) {
			return nil, fmt.Errorf("compare: %s pins unknown pushdown level %q", q.Name, q.Pushdown)
		}
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	verifier := cfg.Verifier
	if verifier == nil {
		verifier = &Verifier{}
	}
	eps, err := cfg.Target.Serve(ctx, cfg.Transports)
	if err != nil {
		return nil, err
	}
	hz := ClockTicks()
	sessions := map[string]*compareSession{}
	defer func() {
		for _, cs := range sessions {
			cs.conn.Close()
		}
	}()
	for _, tr := range cfg.Transports {
		ep, ok := eps[tr]
		if !ok {
			return nil, fmt.Errorf("compare: the target serves no %s exemgr", tr)
		}
		conn, err := Dial(ctx, ep.Addr, cfg.Database)
		if err != nil {
			return nil, fmt.Errorf("compare: %s exemgr: %w", tr, err)
		}
		sessions[tr] = &compareSession{conn: conn, m: &Measurer{Conn: conn, Stats: true, Transport: tr, PIDs: ep.PIDs, Check: CPUCheck{Hz: hz}}}
	}
	run := &measure.Run{Driver: "compare"}
	run.Notes = append(run.Notes,
		fmt.Sprintf("%d rounds over %v at pushdown %v; round 1 cold (caches dropped with %q before each execution), the others warm%s; one exemgr per transport, all running over the same primprocs, and the transports take turns query by query, the order reversed from one query (and level) to the next and from one round to the next", cfg.Runs, cfg.Transports, cfg.Pushdowns, DropCacheStatement, warmNote(cfg.Warmup)))
	for round := 1; round <= cfg.Runs; round++ {
		log.Info("compare: round", "round", round)
		turn := round // so that each execution's order also flips from round to round
		for _, q := range cfg.Queries {
			levels := cfg.Pushdowns
			if q.Pushdown != "" {
				levels = []string{q.Pushdown}
			}
			for _, level := range levels {
				order := RoundOrder(cfg.Transports, turn)
				if cfg.Warmup && round > 1 {
					for _, tr := range order {
						if err := sessions[tr].warm(ctx, cfg, q, level); err != nil {
							return run, fmt.Errorf("round %d, warming %s at %s over %s: %w", round, q.Name, level, tr, err)
						}
					}
				}
				for _, tr := range order {
					if err := ctx.Err(); err != nil {
						return run, err
					}
					s, err := sessions[tr].execute(ctx, cfg, verifier, q, level, round)
					if s != nil {
						run.Samples = append(run.Samples, *s)
						if cfg.OnSample != nil {
							cfg.OnSample(*s)
						}
					}
					if err != nil {
						return run, fmt.Errorf("round %d, %s, %s at %s: %w", round, tr, q.Name, level, err)
					}
				}
				turn++
			}
		}
	}
	return run, nil
}

// warmNote says how warm rounds begin each query.
func warmNote(warmup bool) string {
	if warmup {
		return " (each query run once unmeasured over every transport before its measured executions, so that the first does not refill the cache for the others)"
	}
	return " (without a warm-up execution: the first transport of each query may refill the cache for the others)"
}

// compareSession is one exemgr's session in a comparison, and the pushdown level it was
// last set to.
type compareSession struct {
	conn  *Conn
	m     *Measurer
	level string
}

// setLevel sets the session's pushdown level unless it is set already.
func (cs *compareSession) setLevel(ctx context.Context, level string) error {
	if cs.level == level {
		return nil
	}
	if _, _, err := cs.conn.Exec(ctx, "SET colink_pushdown = '"+level+"'"); err != nil {
		return err
	}
	cs.level = level
	return nil
}

// warm runs q once at level, unmeasured and unverified (CompareConfig.Warmup). A failure
// is the measured executions' to report; only a dead daemon ends the run.
func (cs *compareSession) warm(ctx context.Context, cfg CompareConfig, q Query, level string) error {
	if err := cs.setLevel(ctx, level); err != nil {
		if derr := cfg.Target.Check(); derr != nil {
			return derr
		}
		return fmt.Errorf("set the pushdown level: %w", err)
	}
	cs.m.Pushdown = level
	if _, err := cs.m.Run(ctx, q); err != nil && ctx.Err() == nil {
		return cfg.Target.Check()
	}
	return ctx.Err()
}

// execute runs q once at level (round 1 cold). A failed query gives a sample with its
// error and a nil error; the error is a dead daemon's, or a failure around the query
// (setting the level, dropping the caches), which ends the run.
func (cs *compareSession) execute(ctx context.Context, cfg CompareConfig, v *Verifier, q Query, level string, round int) (*measure.Sample, error) {
	fail := func(what string, err error) error {
		if derr := cfg.Target.Check(); derr != nil {
			return derr
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := cs.setLevel(ctx, level); err != nil {
		return nil, fail("set the pushdown level", err)
	}
	cold := round == 1
	if cold {
		if err := cs.conn.DropCache(ctx); err != nil {
			return nil, fail("drop the caches", err)
		}
	}
	cs.m.Pushdown = level
	ex, qerr := cs.m.Run(ctx, q)
	s := &ex.Sample
	s.System, s.Transport, s.Primprocs, s.Round, s.Cold = "colink", cs.m.Transport, cfg.Primprocs, round, cold
	if s.Pushdown == "" {
		s.Pushdown = level
	}
	v.Verify(ex)
	if qerr != nil {
		if ctx.Err() != nil {
			return s, ctx.Err()
		}
		if derr := cfg.Target.Check(); derr != nil {
			return s, derr
		}
	}
	return s, nil
}
