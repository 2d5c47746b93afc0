package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/colinkdb/colink/dbt3/measure"
)

// Cost is one transport's cost per GB moved on the link, against the baseline's: each
// warm execution of a query at a pushdown level over the transport is paired with the same
// execution over the baseline (the same round, taken back to back), and the paired
// differences in elapsed and in each daemon's CPU are fitted against the link bytes the
// execution moved. The slope is what a GB costs (negative: the transport saves); the
// intercept, what a query costs regardless of its bytes.
type Cost struct {
	Transport string
	Pairs     []Pair
	Elapsed   Fit            // Δ elapsed seconds against GB
	CPU       Fit            // Δ CPU seconds (user+sys, every daemon) against GB
	Procs     map[string]Fit // Δ CPU seconds of each daemon against GB
}

// Pair is one execution over the transport and over the baseline.
type Pair struct {
	Query, Pushdown string
	Round           int
	GB              float64 // link bytes both ways, 1e9 per GB (the mean of the two sides')
	Elapsed         float64 // transport − baseline, seconds
	CPU             float64 // transport − baseline, seconds, every daemon
	Procs           map[string]float64
}

// Fit is a least-squares line through paired differences: Slope seconds per GB and
// Intercept seconds per query. The slope's 95 % confidence interval comes from the rounds:
// a line is fitted to each warm round's pairs alone, and the interval is Student's t over
// those slopes (RoundSlopes), so it holds the run's drift from round to round; with fewer
// than two rounds it is the pooled fit's own interval from its residuals (t with n−2
// degrees of freedom), and NaN with fewer than three pairs.
type Fit struct {
	Slope, Intercept float64
	Lo, Hi           float64
	FromRounds       bool // the interval is from the per-round slopes
	RoundSlopes      []float64
	N                int // pairs
	MinGB, MaxGB     float64
	// ThroughOrigin says the pairs moved too narrow a range of bytes (the largest under
	// twice the smallest: one query at one level, such as the big PM join alone) for a
	// slope and an intercept to be told apart, so the line is forced through the origin:
	// the slope is the paired difference per GB moved, the per-query cost taken as zero.
	ThroughOrigin bool
}

// narrowSpan is the ratio of the largest to the smallest bytes per execution below which
// fitPairs fits through the origin.
const narrowSpan = 2

// Significant reports whether the interval excludes zero.
func (f Fit) Significant() bool { return !math.IsNaN(f.Lo) && (f.Lo > 0 || f.Hi < 0) }

// String prints the slope and interval in milliseconds per GB.
func (f Fit) String() string {
	if f.N == 0 {
		return "–"
	}
	if math.IsNaN(f.Lo) {
		return fmt.Sprintf("%+.1f ms/GB", f.Slope*1000)
	}
	return fmt.Sprintf("%+.1f ms/GB [%+.1f, %+.1f]", f.Slope*1000, f.Lo*1000, f.Hi*1000)
}

// fitCosts pairs every other transport's warm executions with the baseline's.
func (c *Comparison) fitCosts() []*Cost {
	var out []*Cost
	for _, tr := range c.Others() {
		cost := &Cost{Transport: tr, Procs: map[string]Fit{}}
		for _, r := range c.Rows {
			t, b := r.By[tr], r.By[c.Baseline]
			if t == nil || b == nil {
				continue
			}
			for _, round := range slices.Sorted(maps.Keys(t.samples)) {
				ts, bs := t.samples[round], b.samples[round]
				if bs == nil || ts.Link == nil || bs.Link == nil {
					continue
				}
				bytes := float64(ts.Link.BytesIn+ts.Link.BytesOut+bs.Link.BytesIn+bs.Link.BytesOut) / 2
				p := Pair{Query: r.Query, Pushdown: r.Pushdown, Round: round, GB: bytes / 1e9,
					Elapsed: ts.Elapsed - bs.Elapsed, Procs: map[string]float64{}}
				for _, proc := range c.Processes {
					d := ts.Procs[proc].CPU() - bs.Procs[proc].CPU()
					p.Procs[proc] = d
					p.CPU += d
				}
				cost.Pairs = append(cost.Pairs, p)
			}
		}
		if len(cost.Pairs) == 0 {
			continue
		}
		cost.Elapsed = fitPairs(cost.Pairs, func(p Pair) float64 { return p.Elapsed })
		cost.CPU = fitPairs(cost.Pairs, func(p Pair) float64 { return p.CPU })
		for _, proc := range c.Processes {
			cost.Procs[proc] = fitPairs(cost.Pairs, func(p Pair) float64 { return p.Procs[proc] })
		}
		out = append(out, cost)
	}
	return out
}

// fitPairs fits y(p) against p.GB: the pooled line over every pair, and the interval of
// its slope (see Fit).
func fitPairs(pairs []Pair, y func(Pair) float64) Fit {
	xs, ys := make([]float64, len(pairs)), make([]float64, len(pairs))
	byRound := map[int][]int{}
	f := Fit{N: len(pairs), MinGB: math.Inf(1), MaxGB: math.Inf(-1), Lo: math.NaN(), Hi: math.NaN()}
	for i, p := range pairs {
		xs[i], ys[i] = p.GB, y(p)
		byRound[p.Round] = append(byRound[p.Round], i)
		f.MinGB, f.MaxGB = min(f.MinGB, p.GB), max(f.MaxGB, p.GB)
	}
	if f.MinGB > 0 && f.MaxGB < narrowSpan*f.MinGB {
		return fitThroughOrigin(f, xs, ys, byRound)
	}
	if len(pairs) < 2 || f.MaxGB == f.MinGB {
		f.Intercept = stat.Mean(ys, nil)
		return f
	}
	f.Intercept, f.Slope = stat.LinearRegression(xs, ys, nil, false)
	for _, round := range slices.Sorted(maps.Keys(byRound)) {
		idx := byRound[round]
		rx, ry := make([]float64, len(idx)), make([]float64, len(idx))
		for j, i := range idx {
			rx[j], ry[j] = xs[i], ys[i]
		}
		if len(idx) >= 2 && slices.Max(rx) > slices.Min(rx) {
			_, b := stat.LinearRegression(rx, ry, nil, false)
			f.RoundSlopes = append(f.RoundSlopes, b)
		}
	}
	if f.intervalFromRounds() {
		return f
	}
	if n := len(pairs); n >= 3 {
		var rss float64
		for i := range xs {
			e := ys[i] - (f.Intercept + f.Slope*xs[i])
			rss += e * e
		}
		mx := stat.Mean(xs, nil)
		var sxx float64
		for _, x := range xs {
			sxx += (x - mx) * (x - mx)
		}
		se := math.Sqrt(rss / float64(n-2) / sxx)
		half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 2)}.Quantile(0.975) * se
		f.Lo, f.Hi = f.Slope-half, f.Slope+half
	}
	return f
}

// intervalFromRounds sets the slope's 95 % interval from the rounds' slopes, when there are
// at least two: centred on the pooled slope, as wide as they scatter (Student's t). It
// reports whether it did.
func (f *Fit) intervalFromRounds() bool {
	r := len(f.RoundSlopes)
	if r < 2 {
		return false
	}
	_, sd := stat.MeanStdDev(f.RoundSlopes, nil)
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(r - 1)}.Quantile(0.975) * sd / math.Sqrt(float64(r))
	f.Lo, f.Hi, f.FromRounds = f.Slope-half, f.Slope+half, true
	return true
}

// fitThroughOrigin is fitPairs' line through the origin (see Fit.ThroughOrigin): the
// slope Σxy/Σxx, pooled and per round, the interval from the rounds' slopes, or from the
// residuals (t with n−1 degrees of freedom) with a single round.
func fitThroughOrigin(f Fit, xs, ys []float64, byRound map[int][]int) Fit {
	f.ThroughOrigin = true
	slope := func(idx []int) float64 {
		var sxy, sxx float64
		for _, i := range idx {
			sxy += xs[i] * ys[i]
			sxx += xs[i] * xs[i]
		}
		return sxy / sxx
	}
	all := make([]int, len(xs))
	for i := range all {
		all[i] = i
	}
	f.Slope = slope(all)
	for _, round := range slices.Sorted(maps.Keys(byRound)) {
		f.RoundSlopes = append(f.RoundSlopes, slope(byRound[round]))
	}
	if f.intervalFromRounds() {
		return f
	}
	if n := len(xs); n >= 2 {
		var rss, sxx float64
		for i := range xs {
			e := ys[i] - f.Slope*xs[i]
			rss += e * e
			sxx += xs[i] * xs[i]
		}
		half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975) * math.Sqrt(rss/float64(n-1)/sxx)
		f.Lo, f.Hi = f.Slope-half, f.Slope+half
	}
	return f
}

// Mix is the DBT3 mix the answer sentence scales a cost to: the TPC-H queries at full
// pushdown over the baseline (all 22 if the run has them), its warm median elapsed and its
// link bytes (the sum of the queries' medians), if the run has it.
type Mix struct {
	Name    string
	Elapsed float64 // seconds
	GB      float64
	OK      bool
}

// mix finds the run's DBT3 mix.
func (c *Comparison) mix() Mix {
	for _, t := range c.Totals {
		if t.Pushdown != "full" || !(t.Query == "Q1–Q22" || strings.HasPrefix(t.Query, "TPC-H")) {
			continue
		}
		cell := t.By[c.Baseline]
		if cell == nil || cell.Elapsed.N == 0 {
			return Mix{}
		}
		var bytes float64
		for _, r := range c.Rows {
			if r.Pushdown == "full" && len(r.Query) > 1 && r.Query[0] == 'Q' {
				if b := r.By[c.Baseline]; b != nil {
					bytes += b.Link.BytesIn.Median + b.Link.BytesOut.Median
				}
			}
		}
		name := "the DBT3 mix (Q1–Q22 at full pushdown)"
		if t.Query != "Q1–Q22" {
			name = "this run's " + t.Query + " queries at full pushdown"
		}
		return Mix{Name: name, Elapsed: cell.Elapsed.Median, GB: bytes / 1e9, OK: true}
	}
	return Mix{}
}

// Answer is the report's opening sentence, computed from the fitted costs: for each
// transport, what it saves or costs per GB against the baseline in elapsed and CPU, with
// the intervals, and what that comes to at the run's DBT3 mix.
func (c *Comparison) Answer() string {
	if len(c.Costs) == 0 {
		return fmt.Sprintf("No cost per GB: the run has no transport to pair with %s.", c.Baseline)
	}
	m := c.mix()
	var out string
	for i, cost := range c.Costs {
		if i > 0 {
			out += " "
		}
		e, cpu := cost.Elapsed, cost.CPU
		// what says a fit in words: saves or costs, or no difference its interval can show.
		what := func(f Fit, of string) string {
			ci := fmt.Sprintf("95 %% CI %+.0f to %+.0f ms", f.Lo*1000, f.Hi*1000)
			if math.IsNaN(f.Lo) {
				ci = "no interval"
			}
			switch {
			case !f.Significant():
				return fmt.Sprintf("shows no difference in %s per GB moved distinguishable from zero (%+.0f ms, %s)", of, f.Slope*1000, ci)
			case f.Slope < 0:
				return fmt.Sprintf("saves %.0f ms of %s per GB moved (%s)", -f.Slope*1000, of, ci)
			}
			return fmt.Sprintf("costs %.0f ms more %s per GB moved (%s)", f.Slope*1000, of, ci)
		}
		out += fmt.Sprintf("Against %s, %s %s and %s, fitted over %d paired executions moving %s to %s each",
			c.Baseline, cost.Transport, what(e, "elapsed"), what(cpu, "CPU"), e.N, gbText(e.MinGB), gbText(e.MaxGB))
		if e.ThroughOrigin {
			out += " (too narrow a range of bytes to tell a per-query cost from a per-GB one, so the per-GB figures are the paired differences over the GB moved)"
		}
		if m.OK && m.Elapsed > 0 {
			out += fmt.Sprintf("; at %s, which moved %s on the link in %.2f s, the elapsed figure comes to %+.2f %% of elapsed", m.Name, gbText(m.GB), m.Elapsed, 100*e.Slope*m.GB/m.Elapsed)
		}
		out += "."
	}
	return out
}

// gbText prints a size in decimal units (the costs' GB are 1e9 bytes).
func gbText(gb float64) string {
	switch b := gb * 1e9; {
	case b >= 1e9:
		return fmt.Sprintf("%.2f GB", gb)
	case b >= 1e6:
		return fmt.Sprintf("%.1f MB", b/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.1f kB", b/1e3)
	default:
		return fmt.Sprintf("%.0f B", b)
	}
}

// StreamCost is ipcbench's stream figure for one transport, from the same run: the CPU
// both ends of the link spend per GB (client and server user+sys), and the wall time of a
// GB at its rate.
type StreamCost struct {
	CPU, Wall float64 // seconds per GB
}

// Stream metric names in measure.Run.Metrics (written by dbt3 compare from its ipcbench run).
func streamCPUMetric(tr string) string  { return "ipcbench.stream.cpu_s_per_gb." + tr }
func streamWallMetric(tr string) string { return "ipcbench.stream.wall_s_per_gb." + tr }

// SetStreamCost records ipcbench's figure for tr in a run's metrics.
func SetStreamCost(run *measure.Run, tr string, sc StreamCost) {
	if run.Metrics == nil {
		run.Metrics = map[string]float64{}
	}
	run.Metrics[streamCPUMetric(tr)] = sc.CPU
	run.Metrics[streamWallMetric(tr)] = sc.Wall
}

// streamCost is ipcbench's figure for tr, if the run recorded one.
func (c *Comparison) streamCost(tr string) (StreamCost, bool) {
	cpu, ok1 := c.Run.Metrics[streamCPUMetric(tr)]
	wall, ok2 := c.Run.Metrics[streamWallMetric(tr)]
	return StreamCost{CPU: cpu, Wall: wall}, ok1 && ok2
}

// StreamTolerance is how far, in CPU seconds per GB, the fitted CPU cost may lie outside
// its interval from ipcbench's difference and still agree: the stream moves one batch
// shape, the queries many, and exemgr decodes and reduces what it receives.
const StreamTolerance = 0.05

// StreamCheck compares a cost's fitted CPU per GB with ipcbench's stream difference for
// the same transports: ok if the stream's difference lies within the fit's interval
// widened by StreamTolerance; the text says what was compared and, if they disagree, by
// how much.
func (c *Comparison) StreamCheck(cost *Cost) (text string, ok, known bool) {
	t, okT := c.streamCost(cost.Transport)
	b, okB := c.streamCost(c.Baseline)
	if !okT || !okB {
		return fmt.Sprintf("no ipcbench stream figures for %s and %s in this run", cost.Transport, c.Baseline), false, false
	}
	want := t.CPU - b.CPU
	f := cost.CPU
	lo, hi := f.Lo, f.Hi
	if math.IsNaN(lo) {
		lo, hi = f.Slope, f.Slope
	}
	ok = want >= lo-StreamTolerance && want <= hi+StreamTolerance
	text = fmt.Sprintf("ipcbench's stream: %s %.0f ms CPU per GB, %s %.0f ms, a difference of %+.0f ms/GB; the fit: %s", cost.Transport, t.CPU*1000, c.Baseline, b.CPU*1000, want*1000, f)
	if ok {
		text += fmt.Sprintf(": they agree within the fit's interval ± %.0f ms/GB", StreamTolerance*1000)
	} else {
		gap := want - hi
		if want < lo {
			gap = want - lo
		}
		text += fmt.Sprintf(": they disagree by %+.0f ms/GB beyond the interval ± %.0f ms/GB", gap*1000, StreamTolerance*1000)
	}
	return text, ok, true
}
