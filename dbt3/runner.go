package dbt3

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/colinkdb/colink/dbt3/measure"
	"github.com/colinkdb/colink/dbt3/queries"
)

// Measurer runs query scripts on one session and records each run as a measure.Sample.
type Measurer struct {
	Conn *Conn
	// Stats runs SHOW QUERY STATS after every statement and folds each process's CPU,
	// context switches and link counters into the sample.
	Stats bool
	// Transport, if set, is the link transport every primproc row of SHOW QUERY STATS must
	// report; a different one makes the sample an error (exemgr did not use the transport
	// the run is about).
	Transport string
	// Pushdown, if set, is the pushdown level SHOW QUERY STATS must report for every
	// statement; the sample records the level reported.
	Pushdown string
	// PIDs are the local daemons by process name ("exemgr", "primproc0", …). Their
	// /proc/PID/stat CPU is read around every statement and compared with Stats' figures.
	PIDs map[string]int
	// Check is the /proc comparison's tick rate and tolerance.
	Check CPUCheck
}

// Execution is one run of a script.
type Execution struct {
	Sample measure.Sample // Query, Elapsed, Rows, Procs, Link, ProcStat, Checks, Error
	Result *Result        // the last result set the script produced (its query's); nil on error
}

// Run executes q's statements in order on the session. Elapsed is the sum of the
// statements' times (SHOW QUERY STATS and /proc readings fall between them, outside the
// clock). A statement that fails ends the script: the sample's Error says why and the
// script's DROP statements still run, so that Q15's view does not outlive a failure. The
// returned error is the statement's error; the sample is filled as far as it got.
func (m *Measurer) Run(ctx context.Context, q Query) (*Execution, error) {
	ex := &Execution{Sample: measure.Sample{Query: q.Name}}
	s := &ex.Sample
	stmts := queries.Split(q.Script)
	if len(stmts) == 0 {
		err := fmt.Errorf("%s: the script has no statements", q.Name)
		s.Error = err.Error()
		return ex, err
	}
	names := slices.Sorted(maps.Keys(m.PIDs))
	procTicks := map[string]CPUTicks{}
	var procErr error
	read := func() map[string]CPUTicks {
		out := make(map[string]CPUTicks, len(names))
		for _, n := range names {
			t, err := ReadProcCPU(m.PIDs[n])
			if err != nil && procErr == nil {
				procErr = fmt.Errorf("%s (pid %d): %w", n, m.PIDs[n], err)
			}
			out[n] = t
		}
		return out
	}
	for _, n := range names {
		ResetPeakRSS(m.PIDs[n]) // best effort: without it the peak is the process's own
	}
	defer func() {
		for _, n := range names {
			r, err := ReadRSS(m.PIDs[n])
			if err != nil {
				continue
			}
			if s.PeakRSS == nil {
				s.PeakRSS, s.RSS = map[string]int64{}, map[string]int64{}
			}
			s.PeakRSS[n], s.RSS[n] = r.Peak, r.Now
		}
	}()
	var elapsed time.Duration
	fail := func(i int, err error) (*Execution, error) {
		s.Elapsed = elapsed.Seconds()
		s.Error = err.Error()
		for _, st := range stmts[i+1:] {
			if isDrop(st) {
				m.Conn.Exec(ctx, st) // best effort; the sample already failed
			}
		}
		return ex, err
	}
	for i, st := range stmts {
		before := read()
		res, d, err := m.Conn.Exec(ctx, st)
		after := read()
		elapsed += d
		if err != nil {
			return fail(i, fmt.Errorf("%s statement %d: %w", q.Name, i+1, err))
		}
		for _, n := range names {
			procTicks[n] = addTicks(procTicks[n], after[n].Sub(before[n]))
		}
		if len(res.Columns) > 0 {
			ex.Result = res
		}
		if !m.Stats {
			continue
		}
		stats, err := m.Conn.QueryStats(ctx)
		if err != nil {
			return fail(i, fmt.Errorf("%s statement %d: %w", q.Name, i+1, err))
		}
		if err := m.checkTransport(stats); err != nil {
			return fail(i, fmt.Errorf("%s statement %d: %w", q.Name, i+1, err))
		}
		if len(stats) > 0 && stats[0].Pushdown != "" {
			if m.Pushdown != "" && stats[0].Pushdown != m.Pushdown {
				return fail(i, fmt.Errorf("%s statement %d: exemgr ran it at pushdown %s, but this sample is about %s", q.Name, i+1, stats[0].Pushdown, m.Pushdown))
			}
			s.Pushdown = stats[0].Pushdown
		}
		addStats(s, stats)
	}
	s.Elapsed = elapsed.Seconds()
	if ex.Result != nil {
		s.Rows = int64(len(ex.Result.Rows))
	}
	if procErr != nil {
		s.Checks = append(s.Checks, "no /proc cross-check: "+procErr.Error())
		return ex, nil
	}
	if len(names) > 0 {
		hz := m.Check.Hz
		if hz <= 0 {
			hz = 100
		}
		s.ProcStat = map[string]measure.Usage{}
		check := m.Check
		if check.Tolerance <= 0 {
			check.Tolerance = 2 * int64(len(stmts)) // two ticks of truncation per statement window
		}
		for _, n := range names {
			s.ProcStat[n] = ticksToUsage(procTicks[n], hz)
			self, ok := s.Procs[n]
			if !m.Stats || !ok {
				continue
			}
			if msg := check.Compare(n, self, procTicks[n]); msg != "" {
				s.Checks = append(s.Checks, msg)
			}
		}
	}
	return ex, nil
}

func (m *Measurer) checkTransport(stats []ProcStats) error {
	if m.Transport == "" {
		return nil
	}
	for _, p := range stats {
		if p.IsPrimProc() && p.Transport != "" && p.Transport != m.Transport {
			return fmt.Errorf("exemgr reached %s over %s, but this run is about %s", p.Process, p.Transport, m.Transport)
		}
	}
	return nil
}

func addTicks(a, b CPUTicks) CPUTicks { return CPUTicks{a.User + b.User, a.Sys + b.Sys} }

func isDrop(stmt string) bool {
	f := strings.Fields(strings.ToLower(stripComments(stmt)))
	return len(f) >= 2 && f[0] == "drop" && f[1] == "view"
}

// stripComments drops "--" comment lines, which query scripts keep at their top.
func stripComments(stmt string) string {
	var b strings.Builder
	for _, line := range strings.Split(stmt, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "--") || strings.HasPrefix(t, "#") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
