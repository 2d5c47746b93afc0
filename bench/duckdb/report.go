package main

import (
	"fmt"
	"strings"

	"github.com/colinkdb/colink/dbt3/measure"
)

// summary prints the run as a Markdown table: per query the cold round's elapsed time, the
// warm rounds' elapsed and CPU (user+sys) as median [min–max], the warm median context
// switches, rows and the check; then the totals, taken per round over the queries listed.
// storageLabel names where a run's tables lived (runs before Run.Storage used views).
func storageLabel(run *measure.Run) string {
	if run.Storage == storageNative {
		return "native tables"
	}
	return "views over Parquet"
}

func summary(run *measure.Run, outcomes []outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "DuckDB, SF %s, %d threads, %s, %d rounds (1 cold, %d warm); times in seconds\n\n",
		measure.FormatSF(run.SF), run.Threads, storageLabel(run), rounds(run), max(rounds(run)-1, 0))
	for _, n := range run.Notes {
		if strings.HasPrefix(n, "load: ") {
			fmt.Fprintf(&b, "The tables' %s.\n\n", n)
		}
	}
	b.WriteString("| query | rows | cold elapsed | cold CPU | warm elapsed | warm CPU | warm CPU/elapsed | warm ctxsw vol/invol | check |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|---|\n")
	for _, o := range outcomes {
		name := o.Query.Name
		samples := run.Select(func(s *measure.Sample) bool { return s.Query == name && s.System == "duckdb" })
		var coldE, coldC string
		var we, wc, wv, wi, ratio []float64
		var rows int64 = -1
		failed := false
		for _, s := range samples {
			u := s.Procs["duckdb"]
			if s.Error != "" {
				failed = true
			}
			if rows < 0 {
				rows = s.Rows
			}
			if s.Cold {
				coldE, coldC = fmt.Sprintf("%.3f", s.Elapsed), fmt.Sprintf("%.3f", u.CPU())
				continue
			}
			we = append(we, s.Elapsed)
			wc = append(wc, u.CPU())
			wv = append(wv, float64(u.Voluntary))
			wi = append(wi, float64(u.Involuntary))
			if s.Elapsed > 0 {
				ratio = append(ratio, u.CPU()/s.Elapsed)
			}
		}
		check := o.Check
		if failed {
			check = "ERROR"
		}
		if check == "" {
			check = "–"
		}
		ctxsw := "–"
		if len(wv) > 0 {
			ctxsw = fmt.Sprintf("%.0f / %.0f", measure.Summarize(wv).Median, measure.Summarize(wi).Median)
		}
		ratioS := "–"
		if len(ratio) > 0 {
			ratioS = fmt.Sprintf("%.2f", measure.Summarize(ratio).Median)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", name, rows, coldE, coldC,
			measure.Summarize(we), measure.Summarize(wc), ratioS, ctxsw, check)
	}
	tpchOnly := func(s *measure.Sample) bool { return strings.HasPrefix(s.Query, "Q") }
	all := func(*measure.Sample) bool { return true }
	hasTPCH, hasExtra := false, false
	for _, o := range outcomes {
		hasTPCH = hasTPCH || o.Query.Number > 0
		hasExtra = hasExtra || o.Query.Number == 0
	}
	if hasTPCH && hasExtra {
		writeTotal(&b, "**total TPC-H**", run, tpchOnly)
	}
	writeTotal(&b, "**total**", run, all)
	return b.String()
}

// rounds returns the highest round number among the run's samples.
func rounds(run *measure.Run) int {
	n := 0
	for _, s := range run.Samples {
		n = max(n, s.Round)
	}
	return n
}

// writeTotal writes a table row of per-round totals over the samples keep selects: the cold
// round's, and the warm rounds' median [min–max].
func writeTotal(b *strings.Builder, label string, run *measure.Run, keep func(*measure.Sample) bool) {
	elapsed, cpu := totals(run, keep)
	var coldE, coldC string
	if len(elapsed) > 0 {
		coldE, coldC = fmt.Sprintf("%.3f", elapsed[0]), fmt.Sprintf("%.3f", cpu[0])
	}
	warmE, warmC := measure.Stat{}, measure.Stat{}
	if len(elapsed) > 1 {
		warmE, warmC = measure.Summarize(elapsed[1:]), measure.Summarize(cpu[1:])
	}
	fmt.Fprintf(b, "| %s | | %s | %s | %s | %s | | | |\n", label, coldE, coldC, warmE, warmC)
}

// totals returns, per round, the sum of elapsed time and of CPU time over the samples keep
// selects.
func totals(run *measure.Run, keep func(*measure.Sample) bool) (elapsed, cpu []float64) {
	n := rounds(run)
	elapsed, cpu = make([]float64, n), make([]float64, n)
	for _, s := range run.Select(keep) {
		if s.System != "duckdb" {
			continue // colink's samples of a side-by-side run have their own table
		}
		elapsed[s.Round-1] += s.Elapsed
		cpu[s.Round-1] += s.Procs["duckdb"].CPU()
	}
	return elapsed, cpu
}
