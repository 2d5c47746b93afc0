package enginetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colinkdb/colink/dbt3/answers"
	"github.com/colinkdb/colink/dbt3/queries"
	"github.com/colinkdb/colink/internal/rusage"
	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/storage"
)

// TestSF1Timings loads SF 1 (clustered) into local stores and times the 22 queries warm,
// in process: COLINK_SF1=1. COLINK_SF1_DIR keeps the stores between runs (loaded when
// empty); COLINK_SF1_STORES (default 1) simulates that many primprocs; COLINK_SF1_RUNS
// (default 3) is the warm runs per query, after one warm-up; COLINK_SF1_QUERIES limits the
// queries (e.g. "1,3,9"); COLINK_SF1_CLUSTER=0 loads lineitem and orders in dbgen's
// (key) order instead of sorting each segment by date. Every result is checked against
// answers/sf1 when present. The planner uses the statistics measured from the stores, or
// with COLINK_SF1_STATS=tpch TPC-H's known distributions; COLINK_SF1_WRITE_STATS=FILE
// writes the measured ones (as sql/catalog/tpch_sf1_stats.json, which the planner's tests
// use), COLINK_SF1_PLANS=DIR each query's EXPLAIN.
//
//	COLINK_SF1=1 COLINK_SF1_DIR=/tmp/colink-sf1 go test ./enginetest -run SF1 -v -timeout 30m
func TestSF1Timings(t *testing.T) {
	if os.Getenv("COLINK_SF1") == "" {
		t.Skip("set COLINK_SF1=1 to time the 22 queries at SF 1")
	}
	nstores := envInt("COLINK_SF1_STORES", 1)
	runs := envInt("COLINK_SF1_RUNS", 3)
	dir := os.Getenv("COLINK_SF1_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	opts, segRows := storeOptions(1)
	var sts []*storage.Store
	fresh := false
	for i := range nstores {
		sub := filepath.Join(dir, fmt.Sprintf("pp%d-of-%d", i, nstores))
		if _, err := os.Stat(filepath.Join(sub, "CATALOG")); err != nil {
			fresh = true
		}
		s, err := storage.Open(sub, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		sts = append(sts, s)
	}
	ctx := context.Background()
	if fresh || len(Tables(sts[0])) < 8 {
		start := time.Now()
		cluster := os.Getenv("COLINK_SF1_CLUSTER") != "0"
		if err := LoadTPCH(ctx, sts, LoadOptions{SF: 1, SegmentRows: segRows, Cluster: cluster}); err != nil {
			t.Fatal(err)
		}
		t.Logf("loaded SF 1 into %d store(s) in %v", nstores, time.Since(start))
	}
	for _, st := range sts { // a store loaded before sketches were kept gets them now
		if res, err := st.AddMissingSketches(ctx); err != nil {
			t.Fatal(err)
		} else if res.Segments > 0 {
			t.Logf("computed the sketches of %d segments (%d rows) of %s", res.Segments, res.Rows, st.Dir())
		}
	}
	s := newSession(t, 1, sts)
	if os.Getenv("COLINK_SF1_STATS") == "tpch" {
		s.Stats = catalog.TPCHStats{SF: 1}
	}
	if path := os.Getenv("COLINK_SF1_WRITE_STATS"); path != "" {
		if err := s.Stats.(*catalog.MemoryStats).WriteFile(path); err != nil {
			t.Fatal(err)
		}
	}
	s.Runner.(*LocalRunner).Options.Threads = runtime.GOMAXPROCS(0)
	want := map[int]bool{}
	if q := os.Getenv("COLINK_SF1_QUERIES"); q != "" {
		for _, f := range strings.Split(q, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				t.Fatalf("COLINK_SF1_QUERIES: %v", err)
			}
			want[n] = true
		}
	}
	var total, totalCPU time.Duration
	var lines []string
	for n := 1; n <= queries.Count; n++ {
		if len(want) > 0 && !want[n] {
			continue
		}
		text, _ := queries.Get(n)
		out, err := s.Run(ctx, text) // warm-up, and the answer check
		if dir := os.Getenv("COLINK_SF1_PLANS"); dir != "" && err == nil {
			if werr := os.WriteFile(filepath.Join(dir, fmt.Sprintf("q%02d.txt", n)), []byte(out.Plan.Explain()), 0o644); werr != nil {
				t.Fatal(werr)
			}
		}
		if err != nil {
			t.Fatalf("Q%d: %v", n, err)
		}
		if exp, err := answers.ReadFile(filepath.Join(answersDir(), "sf1", fmt.Sprintf("q%02d.csv", n))); err == nil {
			if err := answers.Compare(out.Table, exp); err != nil {
				t.Errorf("Q%d: %v", n, err)
			}
		}
		var times, cpus []time.Duration
		var st = out.Stats
		for range runs {
			ru0, _ := rusage.Self()
			start := time.Now()
			o, err := s.Run(ctx, text)
			if err != nil {
				t.Fatalf("Q%d: %v", n, err)
			}
			times = append(times, time.Since(start))
			ru1, _ := rusage.Self()
			cpus = append(cpus, ru1.Sub(ru0).CPU())
			st = o.Stats
		}
		slices.Sort(times)
		slices.Sort(cpus)
		med, cpu := times[len(times)/2], cpus[len(cpus)/2]
		total += med
		totalCPU += cpu
		lines = append(lines, fmt.Sprintf("Q%02d %8.3fs (min %.3f, cpu %.3fs)  rows from primprocs %d, %.1f MiB, broadcast %.1f MiB, row groups %d/%d eliminated",
			n, med.Seconds(), times[0].Seconds(), cpu.Seconds(), st.RowsReceived, float64(st.BytesReceived)/(1<<20),
			float64(st.BytesBroadcast)/(1<<20), st.Primprocs.RowGroupsEliminated, st.Primprocs.RowGroups))
	}
	lines = append(lines, fmt.Sprintf("total %.3fs (median per query), cpu %.3fs, %d store(s), GOMAXPROCS %d",
		total.Seconds(), totalCPU.Seconds(), nstores, runtime.GOMAXPROCS(0)))
	t.Log("\n" + strings.Join(lines, "\n"))
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
