package report

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/colinkdb/colink/dbt3/measure"
	"github.com/colinkdb/colink/internal/buildinfo"
)

// seconds prints a Stat of seconds as "median [min–max]", or "–".
func seconds(s measure.Stat) string {
	if s.N == 0 {
		return "–"
	}
	if s.N == 1 {
		return fmt.Sprintf("%.3f", s.Median)
	}
	return fmt.Sprintf("%.3f [%.3f–%.3f]", s.Median, s.Min, s.Max)
}

func ratio(s measure.Stat) string {
	if s.N == 0 {
		return "–"
	}
	if s.N == 1 {
		return fmt.Sprintf("%.3f", s.Median)
	}
	return fmt.Sprintf("%.3f [%.3f–%.3f]", s.Median, s.Min, s.Max)
}

func millis(s measure.Stat) string {
	if s.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", s.Median*1000)
}

func count(s measure.Stat) string {
	if s.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f", s.Median)
}

func bytesText(s measure.Stat) string {
	if s.N == 0 {
		return "–"
	}
	v := s.Median
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%.2f GiB", v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.2f MiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1f KiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0f B", v)
}

// answerText says how a query's results were checked over all its samples.
func answerText(r *Row, transports []string) string {
	var errs int
	ver := map[string]int{}
	for _, tr := range transports {
		if c := r.By[tr]; c != nil {
			errs += len(c.Errors)
			for k, v := range c.Verified {
				ver[k] += v
			}
		}
	}
	switch {
	case errs > 0:
		return fmt.Sprintf("**%d failed**", errs)
	case ver["reference"] > 0 && len(ver) == 1:
		return "expected answer"
	case ver["consistent"] > 0 && len(ver) == 1:
		return "same every run"
	case ver[""] > 0 && len(ver) == 1:
		return "unchecked"
	}
	return "mixed"
}

func table(w io.Writer, header []string, rows [][]string) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(header, " | "))
	seps := make([]string, len(header))
	for i, h := range header {
		seps[i] = "---:"
		if i == 0 || h == "answers" || h == "transport" {
			seps[i] = "---"
		}
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(seps, "|"))
	for _, r := range rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
	fmt.Fprintln(w)
}

// WriteMarkdown writes the comparison (and, if d is not nil, colink against DuckDB) as
// Markdown: the run's setting, elapsed times with the unix/tcp ratio, each process's CPU
// and context switches, the link's traffic, failures and disagreements, and the notes.
func WriteMarkdown(out io.Writer, c *Comparison, d *DuckDB) error {
	w := bufio.NewWriter(out)
	run := c.Run
	fmt.Fprintf(w, "# colink: the link's transports, %s — %s\n\n", strings.Join(c.Transports, " against "), run.ID)
	fmt.Fprintf(w, "**%s**\n\n", c.Answer())
	if warn := c.roundsWarning(); warn != "" {
		fmt.Fprintf(w, "> **Warning.** %s\n\n", warn)
	}
	fmt.Fprintf(w, "%s  \n", settingText(c))
	fmt.Fprintf(w, "Host: %s. Started %s.  \n", hostText(run.Host), run.Started.UTC().Format("2006-01-02 15:04 UTC"))
	if code := buildsText(run.Builds); code != "" {
		fmt.Fprintf(w, "Code: %s.  \n", code)
	}
	if run.Command != "" {
		fmt.Fprintf(w, "Command: `%s`\n", run.Command)
	}
	fmt.Fprintln(w)

	writeElapsed(w, c)

	fmt.Fprintf(w, "## CPU milliseconds, user / sys, median over the warm rounds\n\n")
	fmt.Fprintf(w, "Each process's own getrusage delta over the query's statements (SHOW QUERY STATS); /proc is the client's /proc/PID/stat reading of user+sys over the same statements, summed over the daemons, at clock-tick resolution.\n\n")
	header := append(c.keyHeader(), "transport")
	for _, p := range c.Processes {
		header = append(header, p)
	}
	header = append(header, "total", "/proc total", "ctx switches vol / invol")
	var rows [][]string
	for _, r := range c.Rows {
		for _, tr := range c.Transports {
			cell := cellOf(r, tr)
			line := append(c.keyCells(r), tr)
			var total, procTotal, vol, invol float64
			for _, p := range c.Processes {
				ps, ok := cell.Procs[p]
				if !ok {
					line = append(line, "–")
					continue
				}
				line = append(line, millis(ps.User)+" / "+millis(ps.Sys))
				total += ps.User.Median + ps.Sys.Median
				vol += ps.Voluntary.Median
				invol += ps.Involuntary.Median
			}
			for _, st := range cell.ProcStat {
				procTotal += st.Median
			}
			procText := "–"
			if len(cell.ProcStat) > 0 {
				procText = fmt.Sprintf("%.0f", procTotal*1000)
			}
			line = append(line, fmt.Sprintf("%.1f", total*1000), procText, fmt.Sprintf("%.0f / %.0f", vol, invol))
			rows = append(rows, line)
		}
	}
	table(w, header, rows)

	fmt.Fprintf(w, "## The link, median per query over the warm rounds\n\n")
	rows = nil
	for _, r := range c.Rows {
		for _, tr := range c.Transports {
			l := cellOf(r, tr).Link
			rows = append(rows, append(append(c.keyCells(r), tr), bytesText(l.BytesOut), bytesText(l.BytesIn), count(l.BatchesOut), count(l.BatchesIn), count(l.Frames), count(l.Syscalls)))
		}
	}
	table(w, append(append(c.keyHeader(), "transport"), "bytes to primprocs", "bytes from primprocs", "batches to", "batches from", "frames", "syscalls"), rows)

	writeCosts(w, c)

	if d != nil {
		writeDuckDB(w, c, d)
	}

	if len(c.PeakRSS) > 0 {
		fmt.Fprintf(w, "## Peak resident memory\n\n")
		fmt.Fprintf(w, "Each daemon's largest resident size during any query of the run (the kernel's VmHWM, reset before each query), and the query that reached it.\n\n")
		var rows [][]string
		for _, tr := range c.Transports {
			for _, p := range slices.SortedFunc(maps.Keys(c.PeakRSS[tr]), measure.CompareProcesses) {
				pk := c.PeakRSS[tr][p]
				rows = append(rows, []string{tr, p, fmt.Sprintf("%.2f GiB", float64(pk.Bytes)/(1<<30)), fmt.Sprintf("%s, round %d", pk.Query, pk.Round)})
			}
		}
		table(w, []string{"transport", "process", "peak RSS", "during"}, rows)
	}

	errs, checks := c.Problems()
	fmt.Fprintf(w, "## Failures and checks\n\n")
	if len(errs) == 0 {
		fmt.Fprintf(w, "Every query ran and its answer checked out in every round.\n\n")
	} else {
		fmt.Fprintf(w, "%d failed executions:\n\n", len(errs))
		for _, e := range errs {
			fmt.Fprintf(w, "- %s\n", oneLine(e))
		}
		fmt.Fprintln(w)
	}
	if len(checks) == 0 {
		fmt.Fprintf(w, "The daemons' own CPU accounting and /proc agreed within the tick resolution everywhere.\n\n")
	} else {
		fmt.Fprintf(w, "%d disagreements between the daemons' own CPU accounting and /proc (beyond two clock ticks per statement):\n\n", len(checks))
		for _, e := range checks {
			fmt.Fprintf(w, "- %s\n", oneLine(e))
		}
		fmt.Fprintln(w)
	}
	if len(run.Notes) > 0 {
		fmt.Fprintf(w, "## Notes\n\n")
		for _, n := range run.Notes {
			fmt.Fprintf(w, "- %s\n", n)
		}
		fmt.Fprintln(w)
	}
	return w.Flush()
}

// duckStorage says where a DuckDB run's tables lived (runs before measure.Run.Storage used
// views over the files).
func duckStorage(r *measure.Run) string {
	if r.Storage == "native" {
		return "on its own tables (native storage), loaded from the Parquet files of `dbt3 gen` before the run"
	}
	return "on views over the Parquet files of `dbt3 gen`, decoded on every query (not DuckDB's own tables)"
}

func writeDuckDB(w io.Writer, c *Comparison, d *DuckDB) {
	fmt.Fprintf(w, "## colink against DuckDB, elapsed seconds (warm medians)\n\n")
	fmt.Fprintf(w, "DuckDB run %s: SF %g, %d threads, %s. Ratios are of medians (the runs are separate, so not paired).\n\n", d.Run.ID, d.Run.SF, d.Run.Threads, duckStorage(d.Run))
	header := []string{"query"}
	for _, tr := range c.Transports {
		header = append(header, "colink "+tr)
	}
	header = append(header, "DuckDB")
	for _, tr := range c.Transports {
		header = append(header, "colink "+tr+" / DuckDB")
	}
	var rows [][]string
	for _, r := range c.fullRows() {
		dd, ok := d.Elapsed[r.Query]
		line := []string{r.Query}
		for _, tr := range c.Transports {
			line = append(line, seconds(cellOf(r, tr).Elapsed))
		}
		line = append(line, seconds(dd))
		for _, tr := range c.Transports {
			ce := cellOf(r, tr).Elapsed
			if !ok || ce.N == 0 || dd.Median == 0 {
				line = append(line, "–")
				continue
			}
			line = append(line, fmt.Sprintf("%.2f", ce.Median/dd.Median))
		}
		rows = append(rows, line)
	}
	table(w, header, rows)
	if d.Run.SF != c.Run.SF {
		fmt.Fprintf(w, "**The runs' scale factors differ (colink %g, DuckDB %g): the ratios compare different data.**\n\n", c.Run.SF, d.Run.SF)
	}
}

// fullRows are the rows at full pushdown (what DuckDB is compared with), or at the run's
// first level if it has no full one.
func (c *Comparison) fullRows() []*Row {
	level := "full"
	if !slices.Contains(c.Pushdowns, level) && len(c.Pushdowns) > 0 {
		level = c.Pushdowns[0]
	}
	var out []*Row
	for _, r := range c.Rows {
		if r.Pushdown == level {
			out = append(out, r)
		}
	}
	return out
}

var emptyCell = &Cell{}

func cellOf(r *Row, tr string) *Cell {
	if c := r.By[tr]; c != nil {
		return c
	}
	return emptyCell
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func primprocs(run *measure.Run) int {
	n := 0
	for _, s := range run.Samples {
		n = max(n, s.Primprocs)
	}
	return n
}

func roundsText(rs []int) string {
	if len(rs) == 1 {
		return fmt.Sprintf("round %d", rs[0])
	}
	return fmt.Sprintf("rounds %d–%d", rs[0], rs[len(rs)-1])
}

// keyHeader is the columns that name a row: the query, and its level if the run has several.
func (c *Comparison) keyHeader() []string {
	if c.levelsShown() {
		return []string{"query", "pushdown"}
	}
	return []string{"query"}
}

// keyCells are a row's cells under keyHeader.
func (c *Comparison) keyCells(r *Row) []string {
	if c.levelsShown() {
		return []string{r.Query, r.Pushdown}
	}
	return []string{r.Query}
}

// writeElapsed writes the elapsed table: per query (and level) and total, each
// transport's warm median [min–max], the paired ratio of each other transport against the
// baseline, the cold round, and how the answers checked out.
func writeElapsed(w io.Writer, c *Comparison) {
	fmt.Fprintf(w, "## Elapsed seconds, median [min–max] over the warm rounds\n\n")
	fmt.Fprintf(w, "Client-side wall time from sending each statement to reading its last row. A ratio against %s is taken per round (the transports ran the execution back to back) and then summarized.\n\n", c.Baseline)
	header, rows := elapsedTable(c)
	table(w, header, rows)
}

// elapsedTable is the elapsed-time table: per query (and per total, its first cell in
// bold) each transport's warm median, the ratios against the baseline, the cold times and
// how the answers were checked.
func elapsedTable(c *Comparison) (header []string, rows [][]string) {
	header = c.keyHeader()
	for _, tr := range c.Transports {
		header = append(header, tr)
	}
	for _, tr := range c.Others() {
		header = append(header, tr+"/"+c.Baseline)
	}
	for _, tr := range c.Transports {
		header = append(header, tr+" cold")
	}
	header = append(header, "answers")
	for _, r := range c.rowsWithTotals() {
		line := c.keyCells(r)
		for _, tr := range c.Transports {
			line = append(line, seconds(cellOf(r, tr).Elapsed))
		}
		for _, tr := range c.Others() {
			line = append(line, ratio(r.Ratio(tr)))
		}
		for _, tr := range c.Transports {
			line = append(line, seconds(cellOf(r, tr).Cold))
		}
		if slices.Contains(c.Totals, r) {
			line = append(line, "")
			line[0] = "**" + line[0] + "**"
		} else {
			line = append(line, answerText(r, c.Transports))
		}
		rows = append(rows, line)
	}
	return header, rows
}

// MinWarmRounds is the fewest warm rounds whose medians and intervals the report trusts;
// fewer get a warning.
const MinWarmRounds = 5

// roundsWarning is the warning of a run with fewer than MinWarmRounds warm rounds, or "".
func (c *Comparison) roundsWarning() string {
	if n := len(c.WarmRounds); n < MinWarmRounds {
		return fmt.Sprintf("Only %d warm round(s): the medians, ratios and intervals below rest on too few executions to be stable on a machine whose speed drifts; run with --runs %d or more.", n, MinWarmRounds+1)
	}
	return ""
}

// rowsWithTotals is every row, each level's totals after its queries.
func (c *Comparison) rowsWithTotals() []*Row {
	var out []*Row
	for _, level := range c.Pushdowns {
		for _, r := range c.Rows {
			if r.Pushdown == level {
				out = append(out, r)
			}
		}
		for _, r := range c.Totals {
			if r.Pushdown == level {
				out = append(out, r)
			}
		}
	}
	return out
}

// writeCosts writes the fitted costs per GB, each with its check against ipcbench.
func writeCosts(w io.Writer, c *Comparison) {
	if len(c.Costs) == 0 {
		return
	}
	fmt.Fprintf(w, "## Cost per GB moved, against %s\n\n", c.Baseline)
	fmt.Fprintf(w, "Each warm execution over a transport is paired with the same execution over %s in the same round; the paired differences (transport − %s) in elapsed and in each daemon's CPU are fitted by least squares against the GB (1e9 bytes, both ways) the execution moved on the link. The slope is the cost of a GB (negative: the transport saves), the intercept the cost of a query whatever it moves. The 95 %% interval of a slope is Student's t over the slopes fitted to each warm round alone (the run's drift between rounds included); with a single round it is the pooled fit's own. Plots: `%s`, `%s` (log x).\n\n", c.Baseline, c.Baseline, CostElapsedSVG, CostCPUSVG)
	header := []string{"transport", "measure", "per GB [95 % CI]", "per query", "pairs", "GB per execution", "rounds' slopes"}
	var rows [][]string
	for _, cost := range c.Costs {
		add := func(what string, f Fit) {
			var slopes []string
			for _, s := range f.RoundSlopes {
				slopes = append(slopes, fmt.Sprintf("%+.0f", s*1000))
			}
			perQuery := fmt.Sprintf("%+.2f ms", f.Intercept*1000)
			if f.ThroughOrigin {
				perQuery = "0 (through the origin: too narrow a range of bytes)"
			}
			rows = append(rows, []string{cost.Transport, what, f.String(), perQuery, fmt.Sprint(f.N),
				gbText(f.MinGB) + " – " + gbText(f.MaxGB), strings.Join(slopes, ", ")})
		}
		add("elapsed", cost.Elapsed)
		add("CPU, all daemons", cost.CPU)
		for _, p := range c.Processes {
			add("CPU, "+p, cost.Procs[p])
		}
	}
	table(w, header, rows)
	for _, cost := range c.Costs {
		text, _, _ := c.StreamCheck(cost)
		fmt.Fprintf(w, "- %s against %s, CPU per GB: %s.\n", cost.Transport, c.Baseline, text)
	}
	fmt.Fprintln(w)
}

// WriteSummary writes what a terminal shows at the end of a run: the answer, a warning when
// the warm rounds are too few, the elapsed table aligned in plain text (not Markdown), and
// a line on failures and checks.
func WriteSummary(out io.Writer, c *Comparison) error {
	w := bufio.NewWriter(out)
	fmt.Fprintln(w, wrap(c.Answer(), 92))
	if warn := c.roundsWarning(); warn != "" {
		fmt.Fprintln(w, "\nWarning: "+wrap(warn, 83))
	}
	fmt.Fprintf(w, "\nElapsed seconds, median [min–max] over the warm rounds:\n\n")
	header, rows := elapsedTable(c)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, v := range r {
			cells[i] = strings.ReplaceAll(v, "**", "")
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	errs, checks := c.Problems()
	fmt.Fprintf(w, "\n%d failed executions, %d CPU disagreements with /proc.\n", len(errs), len(checks))
	return w.Flush()
}

// wrap breaks text into lines of at most width bytes at spaces.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(text) {
		if i > 0 && n+1+len(word) > width {
			b.WriteString("\n")
			n = 0
		} else if i > 0 {
			b.WriteString(" ")
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}

// hostText describes a run's host in one line: CPUs and model, memory, kernel, Go, load.
func hostText(h measure.Host) string {
	parts := []string{fmt.Sprintf("%d CPUs", h.CPUs)}
	if h.CPUModel != "" {
		parts[0] += " (" + h.CPUModel + ")"
	}
	parts = append(parts, fmt.Sprintf("%d MiB", h.MemoryMiB), h.Kernel, h.GoVersion)
	if h.Load != "" {
		parts = append(parts, "load average "+h.Load+" at the start")
	}
	if h.BusyCPUs != nil {
		parts = append(parts, fmt.Sprintf("%.2f CPUs busy with other work in the second before", *h.BusyCPUs))
	}
	return strings.Join(parts, ", ")
}

// buildsText names the revision of each program of a run, "" for a run recorded without
// builds: "primproc 0123456789ab, exemgr 0123456789ab+dirty, dbt3 unstamped".
func buildsText(b map[string]buildinfo.Info) string {
	var parts []string
	for _, role := range slices.Sorted(maps.Keys(b)) {
		parts = append(parts, role+" "+b[role].ShortRevision())
	}
	return strings.Join(parts, ", ")
}

// settingText is the run's setting in one sentence: scale, primprocs, threads, rounds,
// transports and pushdown levels.
func settingText(c *Comparison) string {
	run := c.Run
	return fmt.Sprintf("SF %g, %d primproc(s), %d primproc threads, %d round(s) (round 1 cold, caches dropped before each execution; %s summarized as warm), transports %s, pushdown %s.",
		run.SF, primprocs(run), run.Threads, c.Rounds, roundsText(c.WarmRounds), strings.Join(c.Transports, ", "), strings.Join(c.Pushdowns, ", "))
}
