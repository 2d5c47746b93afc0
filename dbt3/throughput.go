package dbt3

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/colinkdb/colink/dbt3/measure"
)

// ThroughputConfig configures the throughput test.
type ThroughputConfig struct {
	Session    SessionConfig // Stats' per-process figures overlap while streams run at once
	SF         float64
	Seed       int64 // stream s draws its parameters from Seed+s, as DBT3 seeds its streams
	Streams    int
	Validation bool
	// Refresh, if set, runs one RF1/RF2 pair per query stream, one pair after another,
	// in a refresh stream beside the query streams, on refresh sets FirstRefreshSet,
	// FirstRefreshSet+1, … (default 1; after a power test on the same data, 2).
	Refresh         Refresher
	FirstRefreshSet int
	Verifier        *Verifier
	OnSample        func(measure.Sample) // called from the streams' goroutines, one at a time
}

// Throughput runs DBT3's throughput test: Streams query streams at once, each on its own
// session, stream s (from 1) running its TPC-H permutation with qgen parameters drawn from
// Seed+s. Ts runs from the start of the first stream to the end of the last; the run's
// metrics are "throughput@size", "ts_s" and each stream's "streamN_s".
func Throughput(ctx context.Context, cfg ThroughputConfig) (*measure.Run, error) {
	if cfg.Streams < 1 {
		return nil, fmt.Errorf("throughput test: %d streams; need at least one", cfg.Streams)
	}
	streams := make([][]Query, cfg.Streams)
	for s := range streams {
		qs, err := StreamQueries(cfg.Seed+int64(s+1), s+1, cfg.SF, cfg.Validation)
		if err != nil {
			return nil, err
		}
		streams[s] = qs
	}
	run := &measure.Run{Driver: "throughput", SF: cfg.SF, Metrics: map[string]float64{}}
	run.Notes = append(run.Notes, fmt.Sprintf("%d streams; stream s uses qgen seed %d+s and permutation s", cfg.Streams, cfg.Seed))
	if cfg.Session.Stats {
		run.Notes = append(run.Notes, "per-process CPU of a sample overlaps with the other streams' statements")
	}
	conns := make([]*Conn, cfg.Streams)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	for s := range conns {
		c, err := Dial(ctx, cfg.Session.Addr, cfg.Session.Database)
		if err != nil {
			return nil, err
		}
		conns[s] = c
	}
	var refreshConn *Conn
	if cfg.Refresh != nil {
		c, err := Dial(ctx, cfg.Session.Addr, cfg.Session.Database)
		if err != nil {
			return nil, err
		}
		refreshConn = c
		defer c.Close()
		first := max(cfg.FirstRefreshSet, 1)
		run.Notes = append(run.Notes, fmt.Sprintf("refresh stream: RF1 and RF2 of sets %d to %d", first, first+cfg.Streams-1))
	} else {
		run.Notes = append(run.Notes, noRefreshNote)
	}

	var mu sync.Mutex // guards run.Samples, failures and OnSample
	var failures []string
	record := func(s measure.Sample) {
		mu.Lock()
		defer mu.Unlock()
		s.System, s.Round = "colink", 1
		run.Samples = append(run.Samples, s)
		if s.Error != "" {
			failures = append(failures, fmt.Sprintf("stream %d %s: %s", s.Stream, s.Query, s.Error))
		}
		if cfg.OnSample != nil {
			cfg.OnSample(s)
		}
	}
	streamElapsed := make([]time.Duration, cfg.Streams)
	var wg sync.WaitGroup
	start := time.Now()
	for s := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			m := &Measurer{Conn: conns[s], Stats: cfg.Session.Stats}
			for _, q := range streams[s] {
				if ctx.Err() != nil {
					return
				}
				ex, _ := m.Run(ctx, q)
				ex.Sample.Stream = s + 1
				cfg.Verifier.Verify(ex)
				record(ex.Sample)
			}
			streamElapsed[s] = time.Since(t0)
		}()
	}
	if refreshConn != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := max(cfg.FirstRefreshSet, 1)
			for set := first; set < first+cfg.Streams && ctx.Err() == nil; set++ {
				for _, rf := range []struct {
					name string
					fn   func(context.Context, *Conn, int) error
				}{{"RF1", cfg.Refresh.RF1}, {"RF2", cfg.Refresh.RF2}} {
					t0 := time.Now()
					err := rf.fn(ctx, refreshConn, set)
					s := measure.Sample{Query: rf.name, Stream: cfg.Streams + 1, Elapsed: time.Since(t0).Seconds()}
					if err != nil {
						s.Error = err.Error()
					}
					record(s)
				}
			}
		}()
	}
	wg.Wait()
	ts := time.Since(start)
	if err := ctx.Err(); err != nil {
		return run, err
	}
	run.Metrics["ts_s"] = ts.Seconds()
	for s, d := range streamElapsed {
		run.Metrics[fmt.Sprintf("stream%d_s", s+1)] = d.Seconds()
	}
	if len(failures) > 0 {
		run.Notes = append(run.Notes, fmt.Sprintf("no throughput metric: %d statements failed", len(failures)))
		return run, errors.New("throughput test: failures:\n  " + strings.Join(failures, "\n  "))
	}
	tp, err := ThroughputAtSize(cfg.SF, cfg.Streams, ts.Seconds())
	if err != nil {
		return run, err
	}
	run.Metrics["throughput@size"] = tp
	return run, nil
}
