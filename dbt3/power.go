package dbt3

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/colinkdb/colink/dbt3/measure"
)

// Refresher runs TPC-H's refresh functions on a session: RF1 inserts a refresh set's new
// orders and their lineitems, RF2 deletes a set's old orders and their lineitems.
// SQLRefresher runs them through exemgr; a driver given none says so in its notes.
type Refresher interface {
	RF1(ctx context.Context, c *Conn, set int) error
	RF2(ctx context.Context, c *Conn, set int) error
}

// noRefreshNote is the note every power and throughput run carries while Refresher is nil.
const noRefreshNote = "refresh functions RF1 and RF2 were not run (no --refresh directory of refresh sets); " +
	"as DBT3 does with the intervals it has, the power metric is the geometric mean of the 22 query intervals"

// SessionConfig is where and how a driver reaches exemgr.
type SessionConfig struct {
	Addr     string // exemgr's MySQL address (see MySQLConfig)
	Database string
	// Stats reads SHOW QUERY STATS after every statement into the samples.
	Stats bool
	// PIDs, for local daemons, enables the /proc cross-check (see Measurer).
	PIDs map[string]int
}

// PowerConfig configures the power test.
type PowerConfig struct {
	Session    SessionConfig
	SF         float64
	Seed       int64 // qgen seed of stream 0
	Validation bool  // the validation parameters instead of seeded ones
	Refresh    Refresher
	RefreshSet int // the refresh set RF1 and RF2 use (default 1)
	Verifier   *Verifier
	// OnSample, if set, is called after each sample (progress).
	OnSample func(measure.Sample)
}

// Power runs DBT3's power test: RF1 (when a Refresher is given), stream 0's 22 queries in
// TPC-H's permutation order for stream 0, then RF2, one at a time on one session. The run
// holds one sample per interval and the metrics "power@size" (DBT3's) and
// "power@size_tpch" (with TPC-H's 1/1000 floor). A failed query is recorded in its sample
// and makes Power return an error, without the metrics: a power test with a failed query
// has no score.
func Power(ctx context.Context, cfg PowerConfig) (*measure.Run, error) {
	qs, err := StreamQueries(cfg.Seed, 0, cfg.SF, cfg.Validation)
	if err != nil {
		return nil, err
	}
	run := &measure.Run{Driver: "power", SF: cfg.SF, Metrics: map[string]float64{}}
	if cfg.Validation {
		run.Notes = append(run.Notes, "validation parameters (qgen -d)")
	} else {
		run.Notes = append(run.Notes, fmt.Sprintf("qgen seed %d, stream 0", cfg.Seed))
	}
	order := make([]string, len(qs))
	for i, q := range qs {
		order[i] = q.Name
	}
	run.Notes = append(run.Notes, "query order: "+strings.Join(order, " "))
	conn, err := Dial(ctx, cfg.Session.Addr, cfg.Session.Database)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	m := &Measurer{Conn: conn, Stats: cfg.Session.Stats, PIDs: cfg.Session.PIDs, Check: CPUCheck{Hz: ClockTicks()}}

	var intervals []float64
	var failures []string
	record := func(s measure.Sample) {
		s.System, s.Stream, s.Round = "colink", 0, 1
		run.Samples = append(run.Samples, s)
		if s.Error != "" {
			failures = append(failures, s.Query+": "+s.Error)
		} else {
			intervals = append(intervals, s.Elapsed)
		}
		if cfg.OnSample != nil {
			cfg.OnSample(s)
		}
	}
	set := max(cfg.RefreshSet, 1)
	refresh := func(name string, fn func(context.Context, *Conn, int) error) {
		start := time.Now()
		err := fn(ctx, conn, set)
		s := measure.Sample{Query: name, Elapsed: time.Since(start).Seconds()}
		if err != nil {
			s.Error = err.Error()
		}
		record(s)
	}
	if cfg.Refresh != nil {
		run.Notes = append(run.Notes, fmt.Sprintf("RF1 and RF2 of refresh set %d", set))
		refresh("RF1", cfg.Refresh.RF1)
	} else {
		run.Notes = append(run.Notes, noRefreshNote)
	}
	for _, q := range qs {
		if err := ctx.Err(); err != nil {
			return run, err
		}
		ex, _ := m.Run(ctx, q)
		cfg.Verifier.Verify(ex)
		record(ex.Sample)
	}
	if cfg.Refresh != nil {
		refresh("RF2", cfg.Refresh.RF2)
	}
	if len(failures) > 0 {
		run.Notes = append(run.Notes, "no power metric: "+fmt.Sprint(len(failures))+" intervals failed")
		return run, fmt.Errorf("power test: %d of %d intervals failed:\n  %s", len(failures), len(run.Samples), strings.Join(failures, "\n  "))
	}
	if run.Metrics["power@size"], err = PowerAtSize(cfg.SF, intervals); err != nil {
		return run, err
	}
	if run.Metrics["power@size_tpch"], err = PowerAtSize(cfg.SF, FloorIntervals(intervals)); err != nil {
		return run, err
	}
	run.Metrics["intervals"] = float64(len(intervals))
	return run, nil
}
