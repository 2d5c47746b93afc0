package dbt3

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/colinkdb/colink/dbt3/measure"
)

// Transports are the link transports a comparison may measure.
var transports = []string{"tcp", "unix"}

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

// Endpoint is where a Target's exemgr takes MySQL clients, and the pids of the local
// daemons by process name ("exemgr", "primproc0", …) for the /proc cross-check.
type Endpoint struct {
	Addr string
	PIDs map[string]int
}

// Target is the daemons a comparison measures.
type Target interface {
	// Use makes the daemons serve queries over transport, (re)starting what must change,
	// and returns where exemgr takes clients.
	Use(ctx context.Context, transport string) (Endpoint, error)
	// Check returns an error describing any daemon that has died (with its log).
	Check() error
}

// CompareConfig configures a transport comparison.
type CompareConfig struct {
	Target     Target
	Transports []string // e.g. tcp, unix; the order of odd rounds
	Runs       int      // rounds; round 1 is cold
	Queries    []Query
	Database   string
	Primprocs  int
	Verifier   *Verifier
	OnSample   func(measure.Sample) // progress
	Log        *slog.Logger
}

// RoundOrder returns the transports in the order round r (from 1) runs them: as given in
// odd rounds, reversed in even ones, so that drift over a run hits every transport alike.
func RoundOrder(transports []string, round int) []string {
	out := slices.Clone(transports)
	if round%2 == 0 {
		slices.Reverse(out)
	}
	return out
}

// Compare runs every query Runs times over every transport. In each round the transports
// take turns (RoundOrder); for each, Target.Use readies the daemons, then the queries run
// one after another on one session, each measured by a Measurer with SHOW QUERY STATS and
// the /proc cross-check, and each result verified. In round 1 every query runs cold: the
// primprocs' caches are dropped right before it. A failed query is recorded in its sample
// and the run goes on, unless a daemon died; Compare's error then says which and why.
func Compare(ctx context.Context, cfg CompareConfig) (*measure.Run, error) {
	if cfg.Runs < 1 {
		return nil, fmt.Errorf("compare: %d runs; need at least one", cfg.Runs)
	}
	if _, err := ParseTransports(cfg.Transports); err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	if len(cfg.Queries) == 0 {
		return nil, fmt.Errorf("compare: no queries")
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	verifier := cfg.Verifier
	if verifier == nil {
		verifier = &Verifier{}
	}
	run := &measure.Run{Driver: "compare"}
	run.Notes = append(run.Notes,
		fmt.Sprintf("%d rounds over %v; round 1 cold (caches dropped with %q before each query), the others warm; even rounds run the transports in reverse order", cfg.Runs, cfg.Transports, DropCacheStatement))
	hz := ClockTicks()
	for round := 1; round <= cfg.Runs; round++ {
		for _, tr := range RoundOrder(cfg.Transports, round) {
			if err := ctx.Err(); err != nil {
				return run, err
			}
			log.Info("compare: round", "round", round, "transport", tr)
			if err := compareRound(ctx, cfg, run, verifier, round, tr, hz); err != nil {
				return run, err
			}
		}
	}
	return run, nil
}

func compareRound(ctx context.Context, cfg CompareConfig, run *measure.Run, v *Verifier, round int, tr string, hz int64) error {
	ep, err := cfg.Target.Use(ctx, tr)
	if err != nil {
		return fmt.Errorf("round %d, %s: %w", round, tr, err)
	}
	conn, err := Dial(ctx, ep.Addr, cfg.Database)
	if err != nil {
		return fmt.Errorf("round %d, %s: %w", round, tr, err)
	}
	defer conn.Close()
	m := &Measurer{Conn: conn, Stats: true, Transport: tr, PIDs: ep.PIDs, Check: CPUCheck{Hz: hz}}
	cold := round == 1
	for _, q := range cfg.Queries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if cold {
			if err := conn.DropCache(ctx); err != nil {
				if derr := cfg.Target.Check(); derr != nil {
					return derr
				}
				return fmt.Errorf("round %d, %s, before %s: %w", round, tr, q.Name, err)
			}
		}
		ex, qerr := m.Run(ctx, q)
		s := &ex.Sample
		s.System, s.Transport, s.Primprocs, s.Round, s.Cold = "colink", tr, cfg.Primprocs, round, cold
		v.Verify(ex)
		run.Samples = append(run.Samples, *s)
		if cfg.OnSample != nil {
			cfg.OnSample(*s)
		}
		if qerr != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if derr := cfg.Target.Check(); derr != nil {
				return fmt.Errorf("round %d, %s, %s: %w", round, tr, q.Name, derr)
			}
		}
	}
	return nil
}
