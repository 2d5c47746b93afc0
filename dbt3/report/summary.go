// Package report owns what people and eyes read of dbt3's runs: it summarizes measure.Run
// records (a colink transport comparison, a DuckDB run of the same queries) into medians
// with min–max and paired ratios per query and pushdown level, fits each transport's cost
// per GB moved on the link against tcp's (cost.go), and writes them as Markdown tables and
// SVG plots (gonum/plot): each query's elapsed time per transport with each daemon's CPU
// stacked beside it, the ratios against tcp with their spread, the paired differences over
// link bytes with the fitted lines, and colink against DuckDB.
package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/colinkdb/colink/dbt3/measure"
)

// Comparison is a colink comparison run summarized per query, pushdown level and
// transport.
type Comparison struct {
	Run        *measure.Run
	Transports []string // in the order the run first used them
	// Baseline is the transport the others are compared with: tcp if the run has it.
	Baseline string
	// Pushdowns are the pushdown levels in the run, in the order full, filter, scan (a
	// record from before the dial counts as full).
	Pushdowns  []string
	Processes  []string // "exemgr", "primproc0", … as SHOW QUERY STATS named them
	Rounds     int
	WarmRounds []int  // the rounds summarized as warm: 2…R, or 1 when the run has one round
	Rows       []*Row // by pushdown level, then in the order the run first ran the queries
	// Totals are "Q1–Q22" and "CS1–CS3" per pushdown level, when the members ran.
	Totals []*Row
	// Costs are each transport's fitted cost per GB moved against the baseline (cost.go).
	Costs []*Cost
	// PeakRSS is each daemon's largest resident size over the run's samples, by transport
	// then process, with the query during which it was reached.
	PeakRSS map[string]map[string]Peak
}

// Peak is a process's largest resident size and the sample that reached it.
type Peak struct {
	Bytes int64
	Query string
	Round int
}

// Row is one query (or a total) at one pushdown level, summarized.
type Row struct {
	Query    string
	Pushdown string
	By       map[string]*Cell // by transport
	// Ratios are each other transport's elapsed over the baseline's, taken per warm round
	// (the same execution, back to back) and summarized, by transport.
	Ratios map[string]measure.Stat
}

// Ratio is transport tr's ratio against the baseline (N 0 if there is none).
func (r *Row) Ratio(tr string) measure.Stat { return r.Ratios[tr] }

// Label names the row: the query, and its pushdown level when the run has several.
func (c *Comparison) Label(r *Row) string {
	if c.levelsShown() {
		return r.Query + " " + r.Pushdown
	}
	return r.Query
}

// levelsShown reports whether tables need a pushdown column: more than one level, or one
// that is not full.
func (c *Comparison) levelsShown() bool {
	return len(c.Pushdowns) > 1 || (len(c.Pushdowns) == 1 && c.Pushdowns[0] != "full")
}

// Others are the transports compared with the baseline.
func (c *Comparison) Others() []string {
	var out []string
	for _, tr := range c.Transports {
		if tr != c.Baseline {
			out = append(out, tr)
		}
	}
	return out
}

// pushdownOrder is the levels' order in tables.
var pushdownOrder = []string{"full", "filter", "scan"}

// samplePushdown is the level a sample ran at; records from before the dial ran at full.
func samplePushdown(s *measure.Sample) string {
	if s.Pushdown == "" {
		return "full"
	}
	return s.Pushdown
}

// Cell is one query over one transport.
type Cell struct {
	Elapsed  measure.Stat            // warm rounds
	Cold     measure.Stat            // round 1
	Procs    map[string]ProcSummary  // warm rounds, by process
	ProcStat map[string]measure.Stat // /proc CPU (user+sys), warm rounds, by process
	Link     LinkSummary
	Errors   []string // "round N: error"
	Checks   []string // "round N: disagreement"
	Verified map[string]int
	elapsed  map[int]float64         // round → elapsed, successful samples only
	samples  map[int]*measure.Sample // round → the successful warm sample
}

// ProcSummary is one process's CPU and context switches over the warm rounds.
type ProcSummary struct {
	User, Sys, Voluntary, Involuntary measure.Stat
}

// LinkSummary is the link's traffic over the warm rounds.
type LinkSummary struct {
	BytesOut, BytesIn, BatchesOut, BatchesIn, Frames, Syscalls measure.Stat
}

// Summarize summarizes a comparison run's colink samples.
func Summarize(run *measure.Run) *Comparison {
	c := &Comparison{Run: run}
	procs := map[string]bool{}
	type key struct{ query, pushdown string }
	var order []key // (query, level) in first-seen order
	byKey := map[key][]*measure.Sample{}
	for i := range run.Samples {
		s := &run.Samples[i]
		if s.System != "colink" {
			continue
		}
		if !slices.Contains(c.Transports, s.Transport) {
			c.Transports = append(c.Transports, s.Transport)
		}
		k := key{s.Query, samplePushdown(s)}
		if !slices.Contains(c.Pushdowns, k.pushdown) {
			c.Pushdowns = append(c.Pushdowns, k.pushdown)
		}
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], s)
		c.Rounds = max(c.Rounds, s.Round)
		for p := range s.Procs {
			procs[p] = true
		}
		for p, b := range s.PeakRSS {
			if c.PeakRSS == nil {
				c.PeakRSS = map[string]map[string]Peak{}
			}
			if c.PeakRSS[s.Transport] == nil {
				c.PeakRSS[s.Transport] = map[string]Peak{}
			}
			if b > c.PeakRSS[s.Transport][p].Bytes {
				c.PeakRSS[s.Transport][p] = Peak{Bytes: b, Query: s.Query + " " + k.pushdown, Round: s.Round}
			}
		}
	}
	c.Baseline = "tcp"
	if !slices.Contains(c.Transports, "tcp") && len(c.Transports) > 0 {
		c.Baseline = c.Transports[0]
	}
	levelRank := func(l string) int {
		if i := slices.Index(pushdownOrder, l); i >= 0 {
			return i
		}
		return len(pushdownOrder)
	}
	slices.SortStableFunc(c.Pushdowns, func(a, b string) int { return cmp.Compare(levelRank(a), levelRank(b)) })
	slices.SortStableFunc(order, func(a, b key) int { return cmp.Compare(levelRank(a.pushdown), levelRank(b.pushdown)) })
	c.Processes = slices.SortedFunc(maps.Keys(procs), measure.CompareProcesses)
	if c.Rounds >= 2 {
		for r := 2; r <= c.Rounds; r++ {
			c.WarmRounds = append(c.WarmRounds, r)
		}
	} else {
		c.WarmRounds = []int{1}
	}
	for _, k := range order {
		c.Rows = append(c.Rows, c.summarizeQuery(k.query, k.pushdown, byKey[k]))
	}
	for _, level := range c.Pushdowns {
		c.Totals = append(c.Totals, c.total("Q1–Q22", 22, level, func(q string) bool { return strings.HasPrefix(q, "Q") }))
		c.Totals = append(c.Totals, c.total("CS1–CS3", 3, level, func(q string) bool { return strings.HasPrefix(q, "CS") }))
	}
	c.Totals = slices.DeleteFunc(c.Totals, func(r *Row) bool { return r == nil })
	c.Costs = c.fitCosts()
	return c
}

func (c *Comparison) warm(round int) bool { return slices.Contains(c.WarmRounds, round) }

func (c *Comparison) summarizeQuery(q, pushdown string, samples []*measure.Sample) *Row {
	row := &Row{Query: q, Pushdown: pushdown, By: map[string]*Cell{}}
	type acc struct {
		elapsed, cold                               []float64
		user, sys, vol, invol                       map[string][]float64
		procStat                                    map[string][]float64
		bout, bin, batchOut, batchIn, frames, calls []float64
	}
	accs := map[string]*acc{}
	for _, s := range samples {
		a := accs[s.Transport]
		cell := row.By[s.Transport]
		if a == nil {
			a = &acc{user: map[string][]float64{}, sys: map[string][]float64{}, vol: map[string][]float64{}, invol: map[string][]float64{}, procStat: map[string][]float64{}}
			accs[s.Transport] = a
			cell = &Cell{Verified: map[string]int{}, elapsed: map[int]float64{}, samples: map[int]*measure.Sample{}}
			row.By[s.Transport] = cell
		}
		for _, ch := range s.Checks {
			cell.Checks = append(cell.Checks, fmt.Sprintf("round %d: %s", s.Round, ch))
		}
		if s.Error != "" {
			cell.Errors = append(cell.Errors, fmt.Sprintf("round %d: %s", s.Round, s.Error))
			continue
		}
		cell.Verified[s.Verified]++
		if s.Round == 1 {
			a.cold = append(a.cold, s.Elapsed)
		}
		if !c.warm(s.Round) {
			continue
		}
		cell.elapsed[s.Round] = s.Elapsed
		cell.samples[s.Round] = s
		a.elapsed = append(a.elapsed, s.Elapsed)
		for p, u := range s.Procs {
			a.user[p] = append(a.user[p], u.User)
			a.sys[p] = append(a.sys[p], u.Sys)
			a.vol[p] = append(a.vol[p], float64(u.Voluntary))
			a.invol[p] = append(a.invol[p], float64(u.Involuntary))
		}
		for p, u := range s.ProcStat {
			a.procStat[p] = append(a.procStat[p], u.CPU())
		}
		if l := s.Link; l != nil {
			a.bout = append(a.bout, float64(l.BytesOut))
			a.bin = append(a.bin, float64(l.BytesIn))
			a.batchOut = append(a.batchOut, float64(l.BatchesOut))
			a.batchIn = append(a.batchIn, float64(l.BatchesIn))
			a.frames = append(a.frames, float64(l.Frames))
			a.calls = append(a.calls, float64(l.Syscalls))
		}
	}
	for tr, a := range accs {
		cell := row.By[tr]
		cell.Elapsed = measure.Summarize(a.elapsed)
		cell.Cold = measure.Summarize(a.cold)
		cell.Procs = map[string]ProcSummary{}
		for p := range a.user {
			cell.Procs[p] = ProcSummary{measure.Summarize(a.user[p]), measure.Summarize(a.sys[p]), measure.Summarize(a.vol[p]), measure.Summarize(a.invol[p])}
		}
		cell.ProcStat = map[string]measure.Stat{}
		for p, v := range a.procStat {
			cell.ProcStat[p] = measure.Summarize(v)
		}
		cell.Link = LinkSummary{measure.Summarize(a.bout), measure.Summarize(a.bin), measure.Summarize(a.batchOut),
			measure.Summarize(a.batchIn), measure.Summarize(a.frames), measure.Summarize(a.calls)}
	}
	c.setRatios(row)
	return row
}

// setRatios sets each other transport's ratio against the baseline.
func (c *Comparison) setRatios(row *Row) {
	row.Ratios = map[string]measure.Stat{}
	for _, tr := range c.Others() {
		row.Ratios[tr] = pairedRatio(row.By[tr], row.By[c.Baseline])
	}
}

// pairedRatio is num/den elapsed over the rounds both have.
func pairedRatio(num, den *Cell) measure.Stat {
	if num == nil || den == nil {
		return measure.Stat{}
	}
	var ns, ds []float64
	for _, r := range slices.Sorted(maps.Keys(num.elapsed)) {
		if d, ok := den.elapsed[r]; ok {
			ns = append(ns, num.elapsed[r])
			ds = append(ds, d)
		}
	}
	return measure.Ratio(ns, ds)
}

// total sums the member queries' elapsed times at level per round and transport. A round
// counts only if every member query succeeded in it; with no member query, total is nil.
// It is called name if all of the family's size queries ran, else "TPC-H (n of size)" or
// "CS (n of size)".
func (c *Comparison) total(name string, size int, level string, member func(string) bool) *Row {
	var members []*Row
	for _, r := range c.Rows {
		if r.Pushdown == level && member(r.Query) {
			members = append(members, r)
		}
	}
	if len(members) == 0 {
		return nil
	}
	if len(members) != size {
		family := "TPC-H"
		if size == 3 {
			family = "CS"
		}
		name = fmt.Sprintf("%s (%d of %d)", family, len(members), size)
	}
	row := &Row{Query: name, Pushdown: level, By: map[string]*Cell{}}
	for _, tr := range c.Transports {
		cell := &Cell{elapsed: map[int]float64{}}
		var sums []float64
		for _, round := range c.WarmRounds {
			sum, complete := 0.0, true
			for _, m := range members {
				mc := m.By[tr]
				v, ok := 0.0, false
				if mc != nil {
					v, ok = mc.elapsed[round]
				}
				if !ok {
					complete = false
					break
				}
				sum += v
			}
			if complete {
				cell.elapsed[round] = sum
				sums = append(sums, sum)
			}
		}
		cell.Elapsed = measure.Summarize(sums)
		var cold float64
		coldOK := true
		for _, m := range members {
			mc := m.By[tr]
			if mc == nil || mc.Cold.N == 0 {
				coldOK = false
				break
			}
			cold += mc.Cold.Median
		}
		if coldOK {
			cell.Cold = measure.Summarize([]float64{cold})
		}
		row.By[tr] = cell
	}
	c.setRatios(row)
	return row
}

// Problems lists every error and check of the run, one line each.
func (c *Comparison) Problems() (errs, checks []string) {
	for _, r := range c.Rows {
		for _, tr := range c.Transports {
			cell := r.By[tr]
			if cell == nil {
				continue
			}
			for _, e := range cell.Errors {
				errs = append(errs, fmt.Sprintf("%s %s %s", c.Label(r), tr, e))
			}
			for _, ch := range cell.Checks {
				checks = append(checks, fmt.Sprintf("%s %s %s", c.Label(r), tr, ch))
			}
		}
	}
	return errs, checks
}

// DuckDB is a DuckDB run of the same queries, summarized per query.
type DuckDB struct {
	Run     *measure.Run
	Elapsed map[string]measure.Stat // warm rounds (or round 1 if it has only one)
	CPU     map[string]measure.Stat // the process's user+sys, same rounds
}

// SummarizeDuckDB summarizes a DuckDB run (bench/duckdb's records).
func SummarizeDuckDB(run *measure.Run) *DuckDB {
	d := &DuckDB{Run: run, Elapsed: map[string]measure.Stat{}, CPU: map[string]measure.Stat{}}
	rounds := 0
	for _, s := range run.Samples {
		rounds = max(rounds, s.Round)
	}
	el, cpu := map[string][]float64{}, map[string][]float64{}
	for _, s := range run.Samples {
		if s.Error != "" || (rounds >= 2 && s.Round < 2) {
			continue
		}
		el[s.Query] = append(el[s.Query], s.Elapsed)
		var c float64
		for _, u := range s.Procs {
			c += u.CPU()
		}
		cpu[s.Query] = append(cpu[s.Query], c)
	}
	for q, v := range el {
		d.Elapsed[q] = measure.Summarize(v)
		d.CPU[q] = measure.Summarize(cpu[q])
	}
	return d
}
