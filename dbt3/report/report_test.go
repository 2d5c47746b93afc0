package report

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colinkdb/colink/dbt3/dbt3test"
	"github.com/colinkdb/colink/dbt3/measure"
)

func sample(q, tr string, round int, elapsed float64, errText string) measure.Sample {
	return measure.Sample{
		System: "colink", Transport: tr, Primprocs: 1, Query: q, Round: round, Cold: round == 1,
		Elapsed: elapsed, Error: errText, Verified: map[bool]string{true: "reference", false: ""}[errText == ""],
		Procs: map[string]measure.Usage{
			"exemgr":    {User: elapsed / 10, Sys: elapsed / 20, Voluntary: 10, Involuntary: 1},
			"primproc0": {User: elapsed / 2, Sys: elapsed / 4, Voluntary: 20, Involuntary: 2},
		},
		ProcStat: map[string]measure.Usage{"exemgr": {User: elapsed / 10}, "primproc0": {User: elapsed / 2}},
		Link:     &measure.Link{BytesOut: 100, BytesIn: 3 << 20, BatchesIn: 12, Frames: 30, Syscalls: 40},
	}
}

// The expected figures are worked by hand in the comments.
func testRun() *measure.Run {
	r := &measure.Run{ID: "2026-11-30T0512-compare-sf1", Driver: "compare", SF: 1, Threads: 2, Started: time.Date(2026, 11, 30, 5, 12, 0, 0, time.UTC),
		Notes: []string{"a note"}}
	// Q1: tcp 1.0 (cold), 0.5, 0.7; unix 1.2 (cold), 0.4, 0.7.
	// Warm tcp 0.6 [0.5–0.7], unix 0.55 [0.4–0.7]; ratios 0.8, 1.0: 0.9 [0.8–1.0].
	// Q2: tcp 0.2, 0.1, 0.3; unix 0.2, 0.2 and an error in round 3.
	// Warm unix 0.2 (round 2 only); ratio 0.2/0.1 = 2 (round 2 only).
	// Q1–Q22: tcp rounds 2, 3: 0.6, 1.0: 0.8 [0.6–1.0]; unix round 2 only: 0.6; ratio 1.
	r.Samples = []measure.Sample{
		sample("Q1", "tcp", 1, 1.0, ""), sample("Q2", "tcp", 1, 0.2, ""), sample("CS1", "tcp", 1, 0.05, ""),
		sample("Q1", "unix", 1, 1.2, ""), sample("Q2", "unix", 1, 0.2, ""), sample("CS1", "unix", 1, 0.04, ""),
		sample("Q1", "unix", 2, 0.4, ""), sample("Q2", "unix", 2, 0.2, ""), sample("CS1", "unix", 2, 0.02, ""),
		sample("Q1", "tcp", 2, 0.5, ""), sample("Q2", "tcp", 2, 0.1, ""), sample("CS1", "tcp", 2, 0.03, ""),
		sample("Q1", "tcp", 3, 0.7, ""), sample("Q2", "tcp", 3, 0.3, ""), sample("CS1", "tcp", 3, 0.03, ""),
		sample("Q1", "unix", 3, 0.7, ""), sample("Q2", "unix", 3, 0, "Q2 statement 1: lost primproc0"), sample("CS1", "unix", 3, 0.02, ""),
	}
	r.Samples[0].Checks = []string{"primproc0 CPU disagrees beyond 2 ticks"}
	return r
}

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func statIs(t *testing.T, what string, s measure.Stat, n int, med, lo, hi float64) {
	t.Helper()
	if s.N != n || !approx(s.Median, med) || !approx(s.Min, lo) || !approx(s.Max, hi) {
		t.Errorf("%s = %+v, want n=%d %v [%v–%v]", what, s, n, med, lo, hi)
	}
}

func TestSummarize(t *testing.T) {
	c := Summarize(testRun())
	if strings.Join(c.Transports, ",") != "tcp,unix" || strings.Join(c.Processes, ",") != "exemgr,primproc0" || c.Rounds != 3 {
		t.Fatalf("transports %v processes %v rounds %d", c.Transports, c.Processes, c.Rounds)
	}
	q1, q2 := c.Rows[0], c.Rows[1]
	statIs(t, "Q1 tcp", q1.By["tcp"].Elapsed, 2, 0.6, 0.5, 0.7)
	statIs(t, "Q1 unix", q1.By["unix"].Elapsed, 2, 0.55, 0.4, 0.7)
	statIs(t, "Q1 tcp cold", q1.By["tcp"].Cold, 1, 1.0, 1.0, 1.0)
	statIs(t, "Q1 ratio", q1.Ratio("unix"), 2, 0.9, 0.8, 1.0)
	statIs(t, "Q2 unix", q2.By["unix"].Elapsed, 1, 0.2, 0.2, 0.2)
	statIs(t, "Q2 ratio", q2.Ratio("unix"), 1, 2, 2, 2)
	if len(q2.By["unix"].Errors) != 1 || !strings.Contains(q2.By["unix"].Errors[0], "round 3: Q2 statement 1") {
		t.Errorf("Q2 unix errors %v", q2.By["unix"].Errors)
	}
	// primproc0 user = elapsed/2 over tcp's warm rounds 0.5, 0.7: 0.25, 0.35: median 0.3.
	statIs(t, "Q1 tcp primproc0 user", q1.By["tcp"].Procs["primproc0"].User, 2, 0.3, 0.25, 0.35)
	statIs(t, "Q1 tcp bytes in", q1.By["tcp"].Link.BytesIn, 2, 3<<20, 3<<20, 3<<20)
	if len(c.Totals) != 2 || c.Totals[0].Query != "TPC-H (2 of 22)" || c.Totals[1].Query != "CS (1 of 3)" {
		t.Fatalf("totals %v", c.Totals)
	}
	tot := c.Totals[0]
	statIs(t, "total tcp", tot.By["tcp"].Elapsed, 2, 0.8, 0.6, 1.0)
	statIs(t, "total unix", tot.By["unix"].Elapsed, 1, 0.6, 0.6, 0.6)
	statIs(t, "total ratio", tot.Ratio("unix"), 1, 1, 1, 1)
	// Cold total: the members' round-1 times, 1.0 + 0.2.
	statIs(t, "total tcp cold", tot.By["tcp"].Cold, 1, 1.2, 1.2, 1.2)
	errs, checks := c.Problems()
	if len(errs) != 1 || len(checks) != 1 || !strings.Contains(checks[0], "Q1 tcp round 1: primproc0 CPU") {
		t.Errorf("problems %v %v", errs, checks)
	}
}

// One round: that round is summarized as warm too, and ratios pair it.
func TestSummarizeOneRound(t *testing.T) {
	r := &measure.Run{ID: "x", Driver: "compare", Samples: []measure.Sample{sample("Q6", "tcp", 1, 0.4, ""), sample("Q6", "unix", 1, 0.3, "")}}
	c := Summarize(r)
	statIs(t, "ratio", c.Rows[0].Ratio("unix"), 1, 0.75, 0.75, 0.75)
	if len(c.Totals) != 1 {
		t.Errorf("totals %d, want the TPC-H one only", len(c.Totals))
	}
}

func duckRun() *measure.Run {
	r := &measure.Run{ID: "duck", Driver: "duckdb", SF: 1, Threads: 2}
	for round, el := range []float64{0.9, 0.2, 0.4} {
		r.Samples = append(r.Samples, measure.Sample{System: "duckdb", Query: "Q1", Round: round + 1, Elapsed: el,
			Procs: map[string]measure.Usage{"duckdb": {User: el, Sys: 0.1}}})
	}
	return r
}

func TestMarkdown(t *testing.T) {
	var b bytes.Buffer
	c := Summarize(testRun())
	d := SummarizeDuckDB(duckRun())
	// DuckDB Q1, warm rounds 2 and 3: 0.2, 0.4: median 0.3. colink tcp 0.6 / 0.3 = 2.00.
	statIs(t, "duckdb Q1", d.Elapsed["Q1"], 2, 0.3, 0.2, 0.4)
	if err := WriteMarkdown(&b, c, d); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| Q1 | 0.600 [0.500–0.700] | 0.550 [0.400–0.700] | 0.900 [0.800–1.000] | 1.000 | 1.200 | expected answer |",
		"| Q2 | 0.200 [0.100–0.300] | 0.200 | 2.000 | 0.200 | 0.200 | **1 failed** |",
		"| **TPC-H (2 of 22)** | 0.800 [0.600–1.000] | 0.600 | 1.000 | 1.200 | 1.400 |  |",
		// exemgr: user elapsed/10 = 60 ms, sys elapsed/20 = 30 ms; primproc0 300 / 150; total 540.
		"| Q1 | tcp | 60.0 / 30.0 | 300.0 / 150.0 | 540.0 | 360 | 30 / 3 |",
		"| Q1 | tcp | 100 B | 3.00 MiB | 0 | 12 | 30 | 40 |",
		"| Q1 | 0.600 [0.500–0.700] | 0.550 [0.400–0.700] | 0.300 [0.200–0.400] | 2.00 | 1.83 |",
		"1 failed executions",
		"- Q2 unix round 3: Q2 statement 1: lost primproc0",
		"1 disagreements",
		"- a note",
		"on views over the Parquet files of `dbt3 gen`, decoded on every query (not DuckDB's own tables)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	native := duckRun()
	native.Storage = "native"
	b.Reset()
	if err := WriteMarkdown(&b, c, SummarizeDuckDB(native)); err != nil {
		t.Fatal(err)
	}
	if want := "on its own tables (native storage)"; !strings.Contains(b.String(), want) {
		t.Errorf("markdown of a native DuckDB run lacks %q", want)
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	cmpPath, duckPath := filepath.Join(dir, "compare.json"), filepath.Join(dir, "duckdb.json")
	if err := testRun().WriteFile(cmpPath); err != nil {
		t.Fatal(err)
	}
	if err := duckRun().WriteFile(duckPath); err != nil {
		t.Fatal(err)
	}
	rs, err := ReadRuns([]string{duckPath, cmpPath})
	if err != nil {
		t.Fatal(err)
	}
	md, files, err := Write(dir, rs)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 7 || !bytes.Contains(md, []byte("colink against DuckDB")) {
		t.Fatalf("files %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".svg") {
			dbt3test.WellFormedSVG(t, f, data)
		}
		if strings.HasSuffix(f, HTMLFile) {
			// Self-contained: every plot inline, the answer first, nothing fetched.
			page := string(data)
			if n := strings.Count(page, "<svg"); n != 5 {
				t.Errorf("%s holds %d inline plots, want 5", f, n)
			}
			if strings.Contains(page, "<?xml") || strings.Contains(page, " src=") || strings.Contains(page, "<link") {
				t.Errorf("%s is not self-contained", f)
			}
			if i, j := strings.Index(page, `class="answer"`), strings.Index(page, "<table"); i < 0 || j < i {
				t.Errorf("%s does not open with the answer", f)
			}
		}
	}
	if _, err := ReadRuns([]string{duckPath}); err == nil || !strings.Contains(err.Error(), "no comparison run") {
		t.Errorf("DuckDB alone: %v", err)
	}
	if _, err := ReadRuns([]string{cmpPath, cmpPath}); err == nil || !strings.Contains(err.Error(), "second comparison") {
		t.Errorf("two comparisons: %v", err)
	}
}

// costRun is a run with a known cost: over unix every execution takes 50 ms less per GB
// moved than over tcp and 2 ms more whatever it moves, and its CPU 80 ms less per GB (all
// in exemgr), with a per-round disturbance that leaves the slope alone.
func costRun() *measure.Run {
	r := costRunOver([]string{"tcp", "unix"}, map[string]float64{"unix": 1})
	SetStreamCost(r, "tcp", StreamCost{CPU: 0.36, Wall: 0.23})
	SetStreamCost(r, "unix", StreamCost{CPU: 0.28, Wall: 0.19})
	return r
}

// costRunOver is costRun over transports, in that order each round: each transport but
// tcp saves scale[tr] × (50 ms of elapsed and 80 ms of CPU) per GB against tcp.
func costRunOver(transports []string, scale map[string]float64) *measure.Run {
	r := &measure.Run{ID: "cost", Driver: "compare", SF: 1,
		Metrics: map[string]float64{}}
	queries := []struct {
		name, level string
		gb          float64
	}{{"Q1", "full", 0.0001}, {"Q6", "full", 0.001}, {"Q1", "scan", 0.2}, {"SCAN1", "scan", 0.5}, {"SCAN8", "scan", 4}}
	for round := 1; round <= 4; round++ {
		jitter := 0.001 * float64(round%3) // the same for both transports of a round
		for i, q := range queries {
			bytes := int64(q.gb * 1e9)
			for _, tr := range transports {
				el := 0.1 + q.gb*0.3 + jitter
				cpu := 0.05 + q.gb*0.4
				if k := scale[tr]; tr != "tcp" {
					el += k * (-0.05*q.gb + 0.002 + 0.0001*float64((round+i)%2))
					cpu += k * -0.08 * q.gb
				}
				s := measure.Sample{System: "colink", Transport: tr, Pushdown: q.level, Query: q.name, Round: round, Cold: round == 1,
					Elapsed: el, Verified: "consistent",
					Procs: map[string]measure.Usage{"exemgr": {User: cpu}, "primproc0": {User: 0.01}},
					Link:  &measure.Link{BytesIn: bytes}}
				r.Samples = append(r.Samples, s)
			}
		}
	}
	return r
}

func TestCostPerGB(t *testing.T) {
	c := Summarize(costRun())
	if strings.Join(c.Pushdowns, ",") != "full,scan" || !c.levelsShown() || c.Baseline != "tcp" {
		t.Fatalf("levels %v baseline %s", c.Pushdowns, c.Baseline)
	}
	// Rows by level, then first seen: Q1 full, Q6 full, Q1 scan, SCAN1, SCAN8.
	var labels []string
	for _, r := range c.Rows {
		labels = append(labels, c.Label(r))
	}
	if got := strings.Join(labels, ","); got != "Q1 full,Q6 full,Q1 scan,SCAN1 scan,SCAN8 scan" {
		t.Errorf("rows %s", got)
	}
	if len(c.Costs) != 1 {
		t.Fatalf("%d costs", len(c.Costs))
	}
	cost := c.Costs[0]
	// Warm rounds 2–4, five executions each.
	if cost.Transport != "unix" || len(cost.Pairs) != 15 || cost.Elapsed.N != 15 || len(cost.Elapsed.RoundSlopes) != 3 || !cost.Elapsed.FromRounds {
		t.Fatalf("cost %+v", cost.Elapsed)
	}
	if math.Abs(cost.Elapsed.Slope+0.05) > 1e-4 || math.Abs(cost.Elapsed.Intercept-0.00205) > 1e-4 {
		t.Errorf("elapsed fit %+v, want slope −0.05 s/GB, intercept 2 ms", cost.Elapsed)
	}
	if !(cost.Elapsed.Lo <= -0.05 && -0.05 <= cost.Elapsed.Hi) || !cost.Elapsed.Significant() {
		t.Errorf("elapsed interval [%v, %v]", cost.Elapsed.Lo, cost.Elapsed.Hi)
	}
	if math.Abs(cost.CPU.Slope+0.08) > 1e-9 || math.Abs(cost.Procs["exemgr"].Slope+0.08) > 1e-9 || math.Abs(cost.Procs["primproc0"].Slope) > 1e-9 {
		t.Errorf("CPU fits %+v / %+v", cost.CPU, cost.Procs)
	}
	// ipcbench: 0.28 − 0.36 = −0.08 s/GB, what the fit found.
	if text, ok, known := c.StreamCheck(cost); !known || !ok || !strings.Contains(text, "agree") {
		t.Errorf("stream check %q %v %v", text, ok, known)
	}
	ans := c.Answer()
	if !strings.Contains(ans, "Against tcp, unix saves 50 ms of elapsed per GB moved") || !strings.Contains(ans, "saves 80 ms of CPU") {
		t.Errorf("answer %q", ans)
	}
	// No Q1–Q22 total at full with all 22 queries is needed: the mix is the Q total at full.
	if !strings.Contains(ans, "at this run's TPC-H (2 of 22) queries at full pushdown") {
		t.Errorf("answer without the mix: %q", ans)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, c, nil); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"**Against tcp, unix saves 50 ms", "| query | pushdown | tcp | unix | unix/tcp |", "| SCAN8 | scan |",
		"## Cost per GB moved, against tcp", "| unix | elapsed | -50.0 ms/GB [", "they agree"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	for _, cpu := range []bool{false, true} {
		data, err := PlotCosts(c, cpu)
		if err != nil {
			t.Fatal(err)
		}
		dbt3test.WellFormedSVG(t, "costs", data)
	}
	// A stream figure that the fit does not match is called a disagreement.
	SetStreamCost(c.Run, "unix", StreamCost{CPU: 0.6, Wall: 0.19})
	if text, ok, _ := c.StreamCheck(cost); ok || !strings.Contains(text, "disagree") {
		t.Errorf("stream check %q", text)
	}
}

// Three transports: every other transport is paired with tcp, the baseline though it is
// not the first, in the tables, the fits and the plots.
func TestThreeTransports(t *testing.T) {
	c := Summarize(costRunOver([]string{"shm", "tcp", "unix"}, map[string]float64{"unix": 1, "shm": 2}))
	if strings.Join(c.Transports, ",") != "shm,tcp,unix" || c.Baseline != "tcp" || strings.Join(c.Others(), ",") != "shm,unix" {
		t.Fatalf("transports %v baseline %s others %v", c.Transports, c.Baseline, c.Others())
	}
	for _, r := range c.Rows {
		for _, tr := range []string{"shm", "unix"} {
			if st := r.Ratio(tr); st.N != 3 || !(st.Median > 0) {
				t.Errorf("%s: ratio %s/tcp %+v", c.Label(r), tr, st)
			}
		}
		if _, ok := r.Ratios["tcp"]; ok {
			t.Errorf("%s: a ratio of tcp against itself", c.Label(r))
		}
	}
	// SCAN8 moves 4 GB: shm saves 2 × 50 ms a GB, unix 50 ms.
	last := c.Rows[len(c.Rows)-1]
	if shm, unix := last.Ratio("shm").Median, last.Ratio("unix").Median; !(shm < unix && unix < 1) {
		t.Errorf("SCAN8 ratios shm %v unix %v", shm, unix)
	}
	slopes := map[string]float64{}
	for _, cost := range c.Costs {
		slopes[cost.Transport] = cost.Elapsed.Slope
	}
	if len(c.Costs) != 2 || math.Abs(slopes["unix"]+0.05) > 1e-4 || math.Abs(slopes["shm"]+0.1) > 1e-4 {
		t.Errorf("elapsed slopes %v, want unix −0.05 and shm −0.1 s/GB", slopes)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, c, nil); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"| query | pushdown | shm | tcp | unix | shm/tcp | unix/tcp | shm cold | tcp cold | unix cold | answers |",
		"| shm | elapsed | -100.0 ms/GB [", "| unix | elapsed | -50.0 ms/GB [", "shm against tcp", "unix against tcp"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if ans := c.Answer(); !strings.Contains(ans, "shm") || !strings.Contains(ans, "unix") {
		t.Errorf("answer names not both transports: %q", ans)
	}
	plots := map[string]func() ([]byte, error){
		"transports": func() ([]byte, error) { return PlotTransports(c) },
		"ratios":     func() ([]byte, error) { return PlotRatios(c) },
		"cost":       func() ([]byte, error) { return PlotCosts(c, false) },
		"cost cpu":   func() ([]byte, error) { return PlotCosts(c, true) },
	}
	for name, plot := range plots {
		data, err := plot()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		dbt3test.WellFormedSVG(t, name, data)
		for _, tr := range []string{"shm", "unix"} {
			if !bytes.Contains(data, []byte(tr)) {
				t.Errorf("%s plot does not name %s", name, tr)
			}
		}
	}
}

// TestWriteSummary: the terminal summary opens with the answer, warns of too few warm
// rounds, and aligns its table in plain text.
func TestWriteSummary(t *testing.T) {
	var b strings.Builder
	if err := WriteSummary(&b, Summarize(testRun())); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Log("\n" + out)
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "No cost per GB") && !strings.HasPrefix(lines[0], "Against tcp") {
		t.Errorf("the summary does not open with the answer: %q", lines[0])
	}
	if !strings.Contains(out, "Warning: Only 2 warm round(s)") {
		t.Errorf("no warning of 2 warm rounds:\n%s", out)
	}
	if strings.Contains(out, "|") || strings.Contains(out, "**") || strings.Contains(out, "---") {
		t.Errorf("Markdown in the terminal summary:\n%s", out)
	}
	var header, q1 string
	for _, l := range lines {
		if strings.HasPrefix(l, "query") {
			header = l
		}
		if strings.HasPrefix(l, "Q1 ") {
			q1 = l
		}
	}
	if header == "" || q1 == "" || strings.Index(header, "tcp") != strings.Index(q1, "0.600") {
		t.Errorf("the table's columns are not aligned:\n%s\n%s", header, q1)
	}
	if c := Summarize(testRun()); len(c.WarmRounds) >= MinWarmRounds || c.roundsWarning() == "" {
		t.Errorf("2 warm rounds gave no warning")
	}
}

// TestRatioPlotRange: one outlier (a ratio of 7.4) does not stretch the ratio plot's axis;
// every point drawn, whisker ends included, lies within the drawn range, and the outlier is
// drawn at the edge with its value. COLINK_PLOT_DIR=dir saves the plot as PNG to look at.
func TestRatioPlotRange(t *testing.T) {
	r := testRun()
	for round := 1; round <= 3; round++ {
		r.Samples = append(r.Samples, sample("Q3", "tcp", round, 0.1, ""), sample("Q3", "unix", round, 0.74, ""))
	}
	c := Summarize(r)
	lay := c.ratioLayout()
	if lay.ymax > ratioClip*1.5 || lay.ymin < 1/(ratioClip*1.5) {
		t.Errorf("the axis spans %v–%v: the outlier stretched it", lay.ymin, lay.ymax)
	}
	outliers := 0
	for _, sr := range lay.series {
		for i, xy := range sr.in.XYs {
			lo, hi := xy.Y-sr.in.YErrors[i].Low, xy.Y+sr.in.YErrors[i].High
			if lo < lay.ymin || hi > lay.ymax || xy.Y < lay.ymin || xy.Y > lay.ymax {
				t.Errorf("%s point %v [%v, %v] outside the axis %v–%v", sr.transport, xy.Y, lo, hi, lay.ymin, lay.ymax)
			}
		}
		for i, xy := range sr.out {
			outliers++
			if xy.Y < lay.ymin || xy.Y > lay.ymax || sr.outLabels[i] != "7.40" {
				t.Errorf("outlier drawn at %v labelled %q; want at the edge, labelled 7.40", xy.Y, sr.outLabels[i])
			}
		}
	}
	if outliers != 1 {
		t.Errorf("%d outliers marked, want Q3's one", outliers)
	}
	if title := c.ratioFinding(); !strings.Contains(title, "unix/tcp") || !strings.Contains(title, "95 % CI") {
		t.Errorf("the title states no finding: %q", title)
	}
	p, w, h, err := ratiosPlot(c)
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("COLINK_PLOT_DIR"); dir != "" {
		if err := p.Save(w, h, filepath.Join(dir, "ratios.png")); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFitNarrowBytes: pairs that all moved about the same bytes (one query at one level,
// the big PM join) are fitted through the origin, since a slope and an intercept cannot be
// told apart there: the slope is the difference per GB, with a finite interval from the
// rounds, where a free line gave slopes of millions of seconds per GB.
func TestFitNarrowBytes(t *testing.T) {
	var pairs []Pair
	for round, d := range []float64{-0.9, -1.1, -1.0, -0.95, -1.05} {
		for k := range 2 {
			// 1.8 GB give or take a few bytes; the transport saves about 1 s each time.
			pairs = append(pairs, Pair{Round: round + 2, GB: 1.8 + float64(k)*1e-9, Elapsed: d + float64(k)*0.01})
		}
	}
	f := fitPairs(pairs, func(p Pair) float64 { return p.Elapsed })
	if !f.ThroughOrigin || f.Intercept != 0 || !f.FromRounds || len(f.RoundSlopes) != 5 {
		t.Fatalf("fit %+v: want a line through the origin with 5 rounds' slopes", f)
	}
	if want := -1.0 / 1.8; math.Abs(f.Slope-want) > 0.01 || f.Lo > f.Slope || f.Hi < f.Slope || f.Hi-f.Lo > 0.2 || !f.Significant() {
		t.Fatalf("slope %.4f s/GB [%.4f, %.4f], want about %.4f with a narrow interval excluding 0", f.Slope, f.Lo, f.Hi, want)
	}
	// A wide range still gets a free line.
	wide := append(slices.Clone(pairs), Pair{Round: 2, GB: 0.01, Elapsed: 0.1})
	if g := fitPairs(wide, func(p Pair) float64 { return p.Elapsed }); g.ThroughOrigin {
		t.Fatalf("bytes from 10 MB to 1.8 GB fitted through the origin")
	}
}
