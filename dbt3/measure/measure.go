// Package measure owns the measurement records that dbt3's drivers and the DuckDB runner
// (bench/duckdb, a separate module) write to results/, and the summary statistics taken
// over them: medians with min–max, and ratios between two configurations measured in one run.
//
// A Run is one invocation of a driver. Its Samples are single executions of one query in one
// configuration (system and transport), so that alternating configurations within a run keeps
// every sample next to its peers and a ratio is always taken between samples of the same run.
//
// The package imports only the standard library so that the DuckDB module can import it.
package measure

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/colinkdb/colink/internal/atomicfile"
	"github.com/colinkdb/colink/internal/buildinfo"
)

// Run is one driver invocation: what was run, where, and every sample it took.
type Run struct {
	ID      string    `json:"id"`      // e.g. "2026-11-30T0512-compare-sf1"
	Driver  string    `json:"driver"`  // "compare", "power", "throughput", "duckdb"
	Command string    `json:"command"` // the command line that produced the run
	Started time.Time `json:"started"`
	SF      float64   `json:"sf"`
	Threads int       `json:"threads"` // worker threads per process (primproc --threads, DuckDB threads)
	Host    Host      `json:"host"`
	// Builds is the build of each program of the run, keyed "primproc", "exemgr", "dbt3",
	// "duckdb-bench": the code the figures came from (an unstamped build has no revision).
	Builds map[string]buildinfo.Info `json:"builds,omitempty"`
	// Storage is where a DuckDB run's tables lived: "native" (DuckDB's own tables, loaded
	// from the files once) or "parquet" (views over the files); "" for other drivers and
	// for DuckDB runs recorded before the field (which were "parquet").
	Storage string   `json:"storage,omitempty"`
	Samples []Sample `json:"samples"`
	// Metrics holds driver-level results such as "power@size" or "throughput@size".
	Metrics map[string]float64 `json:"metrics,omitempty"`
	Notes   []string           `json:"notes,omitempty"`
}

// Host describes the machine a run was taken on.
type Host struct {
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpu_model,omitempty"` // /proc/cpuinfo's model name
	MemoryMiB int64  `json:"memory_mib"`
	Kernel    string `json:"kernel"`
	GoVersion string `json:"go_version"`
	// Load is /proc/loadavg's 1, 5 and 15 minute averages when the host was described (at a
	// run's start): how busy the machine was with other work.
	Load string `json:"load,omitempty"`
	// BusyCPUs is how many CPUs' worth the machine was busy with other work in the second
	// before the run started (BusyCPUs); nil where not measured.
	BusyCPUs *float64 `json:"busy_cpus_before,omitempty"`
}

// Sample is one execution of one query in one configuration.
type Sample struct {
	System    string `json:"system"`              // "colink" or "duckdb"
	Transport string `json:"transport,omitempty"` // colink's link: "tcp", "unix", "shm"
	// Pushdown is colink's pushdown level the query ran at ("full", "filter", "scan"), as
	// SHOW QUERY STATS reported it; "" for DuckDB and for records from before the dial.
	Pushdown  string `json:"pushdown,omitempty"`
	Primprocs int    `json:"primprocs,omitempty"`
	Query     string `json:"query"` // "Q1".."Q22", "RF1", "RF2", or a named extra query
	Stream    int    `json:"stream"`
	Round     int    `json:"round"` // 1-based repetition; round 1 of a cold/warm series is cold
	Cold      bool   `json:"cold"`  // run right after the caches were dropped

	Elapsed float64 `json:"elapsed_s"` // wall time seen by the client, seconds
	Rows    int64   `json:"rows"`
	Error   string  `json:"error,omitempty"`

	// Procs is each process's resource use during the sample, as the process itself
	// accounts it (getrusage deltas), keyed by role: "exemgr", "primproc0", "duckdb", …
	Procs map[string]Usage `json:"procs,omitempty"`
	// Link counts what crossed between exemgr and the primprocs; nil for DuckDB.
	Link *Link `json:"link,omitempty"`
	// RowGroupsEliminated counts zone-map eliminations across all scans of the query.
	RowGroupsEliminated int64 `json:"row_groups_eliminated,omitempty"`

	// ProcStat is each local daemon's user and sys CPU over the sample as /proc/PID/stat
	// counts it (tick resolution), taken by the client around the statements: the
	// cross-check of Procs.
	ProcStat map[string]Usage `json:"proc_stat,omitempty"`
	// PeakRSS is each local daemon's peak resident size during the sample, in bytes, as the
	// kernel counts it (VmHWM, reset before the sample); RSS is its resident size after.
	PeakRSS map[string]int64 `json:"peak_rss_bytes,omitempty"`
	RSS     map[string]int64 `json:"rss_bytes,omitempty"`
	// Checks lists disagreements found while taking the sample that do not make it wrong,
	// e.g. Procs and ProcStat differing by more than the tick resolution.
	Checks []string `json:"checks,omitempty"`
	// Verified says how the result was checked: "reference" (equal to the expected answer),
	// "consistent" (no reference; equal to the first result of the same query in the run),
	// "duckdb" (no reference; equal to DuckDB's result in the same round, bench/duckdb's
	// side-by-side run) or "" (not checked). A result that failed its check has Error set.
	Verified string `json:"verified,omitempty"`
}

// Usage is one process's resource use over an interval.
type Usage struct {
	User        float64 `json:"user_s"`
	Sys         float64 `json:"sys_s"`
	Voluntary   int64   `json:"nvcsw"`
	Involuntary int64   `json:"nivcsw"`
}

// CPU returns user plus system seconds.
func (u Usage) CPU() float64 { return u.User + u.Sys }

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{u.User + o.User, u.Sys + o.Sys, u.Voluntary + o.Voluntary, u.Involuntary + o.Involuntary}
}

// Link is the traffic on the link during a sample, summed over all primprocs.
type Link struct {
	BytesOut   int64 `json:"bytes_out"` // exemgr → primprocs
	BytesIn    int64 `json:"bytes_in"`  // primprocs → exemgr
	BatchesOut int64 `json:"batches_out"`
	BatchesIn  int64 `json:"batches_in"`
	Frames     int64 `json:"frames"`
	Syscalls   int64 `json:"syscalls"`
	// Shared memory (shm): the bytes of BytesOut and BytesIn that crossed in the rings,
	// batches sent on the socket for want of ring space, and wake-up writes.
	RingBytesOut  int64 `json:"ring_bytes_out,omitempty"`
	RingBytesIn   int64 `json:"ring_bytes_in,omitempty"`
	RingFallbacks int64 `json:"ring_fallbacks,omitempty"`
	RingWakeups   int64 `json:"ring_wakeups,omitempty"`
}

// Stat is a median with its range over a set of values.
type Stat struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// CILo and CIHi bound the median's 95 % confidence interval (BootstrapMedianCI), where
	// it was computed (Ratio computes it); both zero otherwise.
	CILo float64 `json:"ci_lo,omitempty"`
	CIHi float64 `json:"ci_hi,omitempty"`
}

// Summarize returns the median, minimum and maximum of vs. An empty vs gives a zero Stat.
func Summarize(vs []float64) Stat {
	if len(vs) == 0 {
		return Stat{}
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Stat{N: n, Median: med, Min: s[0], Max: s[n-1]}
}

// String prints "median [min–max]" with three significant decimals.
func (s Stat) String() string {
	if s.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f [%.3f–%.3f]", s.Median, s.Min, s.Max)
}

// Ratio summarizes num[i]/den[i] over paired samples (same round, alternating order), so
// drift that hits a pair alike cancels. Pairs with a zero denominator are skipped.
func Ratio(num, den []float64) Stat {
	n := min(len(num), len(den))
	rs := make([]float64, 0, n)
	for i := range n {
		if den[i] != 0 {
			rs = append(rs, num[i]/den[i])
		}
	}
	st := Summarize(rs)
	if st.N > 0 {
		st.CILo, st.CIHi = BootstrapMedianCI(rs, 0.95, 2000)
	}
	return st
}

// BootstrapMedianCI is the percentile bootstrap interval of the median of v at the given
// level, from n resamples with a fixed seed, so that a report is reproducible. One value
// is its own interval; with few values the interval is wide, as it should be.
func BootstrapMedianCI(v []float64, level float64, n int) (lo, hi float64) {
	if len(v) == 0 {
		return 0, 0
	}
	if len(v) == 1 {
		return v[0], v[0]
	}
	r := rand.New(rand.NewPCG(1, 2))
	meds := make([]float64, n)
	sample := make([]float64, len(v))
	for i := range meds {
		for j := range sample {
			sample[j] = v[r.IntN(len(v))]
		}
		meds[i] = Summarize(sample).Median
	}
	slices.Sort(meds)
	tail := (1 - level) / 2
	at := func(q float64) float64 { return meds[min(n-1, max(0, int(math.Round(q*float64(n-1)))))] }
	return at(tail), at(1 - tail)
}

// Select returns the samples for which keep is true, in order.
func (r *Run) Select(keep func(*Sample) bool) []*Sample {
	var out []*Sample
	for i := range r.Samples {
		if keep(&r.Samples[i]) {
			out = append(out, &r.Samples[i])
		}
	}
	return out
}

// WriteFile writes the run as indented JSON, atomically: a temporary file in the same
// directory, fsynced, then renamed over path.
func (r *Run) WriteFile(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("measure: encode run %s: %w", r.ID, err)
	}
	if err := atomicfile.Write(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("measure: %w", err)
	}
	return nil
}

// ReadFile reads a run written by WriteFile.
func ReadFile(path string) (*Run, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("measure: %w", err)
	}
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("measure: %s: %w", path, err)
	}
	return &r, nil
}

// CompareProcesses orders the processes of a sample (Sample.Procs' keys) as reports list
// them: exemgr first, then primprocs by number, then any other by name.
func CompareProcesses(a, b string) int {
	rank := func(p string) (int, int) {
		if p == "exemgr" {
			return 0, 0
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(p, "primproc")); err == nil {
			return 1, n
		}
		return 2, 0
	}
	ra, na := rank(a)
	rb, nb := rank(b)
	if ra != rb {
		return cmp.Compare(ra, rb)
	}
	if na != nb {
		return cmp.Compare(na, nb)
	}
	return strings.Compare(a, b)
}
