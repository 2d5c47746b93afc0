package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	colexec "github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/rusage"
	"github.com/colinkdb/colink/internal/testbin"
	"github.com/colinkdb/colink/link"
)

// TestPrimprocBench measures primproc at a scale factor (SF 1 by default) through the
// link, from this test process as the client:
//
//   - dbt3 load of all eight tables (a child process), wall and CPU of both processes, and
//     primproc's resident memory after the load;
//   - fragments over lineitem: Q6's shape (scan, filter, sum; with and without zone-map
//     predicates) and Q1's (scan, filter, group-by with eight aggregates), cold (after
//     dropcache, page cache included) and warm, alternating, REPS times each.
//
// It runs only with COLINK_PRIMPROC_BENCH=1:
//
//	COLINK_PRIMPROC_BENCH=1 [COLINK_PRIMPROC_BENCH_SF=1] [COLINK_PRIMPROC_BENCH_REPS=5] \
//	  [COLINK_PRIMPROC_BENCH_OUT=results/primproc.json] go test ./cmd/primproc -run TestPrimprocBench -v -timeout 60m
func TestPrimprocBench(t *testing.T) {
	if os.Getenv("COLINK_PRIMPROC_BENCH") != "1" {
		t.Skip("set COLINK_PRIMPROC_BENCH=1 to run the primproc benchmark")
	}
	sf := envOr("COLINK_PRIMPROC_BENCH_SF", "1")
	reps, _ := strconv.Atoi(envOr("COLINK_PRIMPROC_BENCH_REPS", "5"))
	loads, _ := strconv.Atoi(envOr("COLINK_PRIMPROC_BENCH_LOADS", "3"))
	bins := t.TempDir()
	pmBin := testbin.Build(t, bins, "./cmd/primproc")
	dbt3Bin := testbin.Build(t, bins, "./cmd/dbt3")
	dir := testbin.TempDir(t)
	p := &pm{dataDir: filepath.Join(dir, "data"), unix: "unix://" + filepath.Join(dir, "pm.sock")}
	p.args = []string{"--data-dir", p.dataDir, "--listen", p.unix}
	p.restart(t, pmBin)
	c := dial(t, p.unix, "unix")
	ctx := context.Background()
	rep := benchReport{SF: sf, Reps: reps, Cores: numCPU(), LoadAvgBefore: loadAvg()}

	// Loads: all eight tables, replaced each time.
	for i := range loads {
		before, err := c.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(dbt3Bin, "load", "--sf", sf, "--primproc", p.unix)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("dbt3 load: %v\n%s", err, out.String())
		}
		wall := time.Since(start)
		after, err := c.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		pmu := after.Usage().Sub(before.Usage())
		rep.Loads = append(rep.Loads, loadRun{WallS: wall.Seconds(),
			ClientUserS: time.Duration(ru.Utime.Nano()).Seconds(), ClientSysS: time.Duration(ru.Stime.Nano()).Seconds(),
			PrimprocUserS: pmu.User.Seconds(), PrimprocSysS: pmu.Sys.Seconds(), PrimprocRSSMiB: after.RSSBytes >> 20})
		t.Logf("load %d: %.1fs\n%s", i, wall.Seconds(), out.String())
	}
	cat, err := c.Catalog(ctx, "lineitem")
	if err != nil {
		t.Fatal(err)
	}
	li := cat.Table("lineitem")
	rep.LineitemRows, rep.LineitemSegments, rep.LineitemRowGroups, rep.LineitemBytes = li.Rows, li.Segments, li.RowGroups, li.Bytes
	for _, tb := range mustCatalog(t, c).Tables {
		rep.TotalRows += tb.Rows
		rep.TotalBytes += tb.Bytes
	}

	// Fragments, cold and warm, alternating.
	q6z := q6(t, "lineitem")
	q6n := q6(t, "lineitem")
	q6n.Scan.Zone = nil
	q1full := q1Full(t)
	shapes := []struct {
		name string
		args *link.FragmentArgs
	}{{"Q6 scan+filter+sum, zone maps", q6z}, {"Q6 scan+filter+sum, no zone maps", q6n}, {"Q1 scan+filter+group-by", q1full}}
	results := map[string][]fragRun{}
	for r := range reps {
		for si, s := range shapes {
			order := []bool{true, false} // cold, then warm
			if (r+si)%2 == 1 {
				order = []bool{false, true} // warm first (after a warm-up), then cold
				if _, err := benchFragment(ctx, c, s.args, false); err != nil {
					t.Fatal(err)
				}
			}
			for _, cold := range order {
				fr, err := benchFragment(ctx, c, s.args, cold)
				if err != nil {
					t.Fatal(err)
				}
				key := s.name + map[bool]string{true: ", cold", false: ", warm"}[cold]
				results[key] = append(results[key], fr)
			}
		}
	}
	for _, s := range shapes {
		for _, temp := range []string{", cold", ", warm"} {
			key := s.name + temp
			rep.Fragments = append(rep.Fragments, summarize(key, results[key], li.Rows))
		}
	}
	rep.LoadAvgAfter = loadAvg()
	md := rep.markdown()
	t.Log("\n" + md)
	if out := os.Getenv("COLINK_PRIMPROC_BENCH_OUT"); out != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if !filepath.IsAbs(out) {
			out = filepath.Join("..", "..", out)
		}
		if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(strings.TrimSuffix(out, ".json")+".table.md", []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func numCPU() int { return runtime.NumCPU() }

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func mustCatalog(t *testing.T, c *link.Client) *link.Catalog {
	cat, err := c.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// q1Full is TPC-H Q1's primproc fragment: the filter, the projection of the aggregates'
// inputs and a partial group-by with Q1's eight aggregates.
func q1Full(t testing.TB) *link.FragmentArgs {
	cols := []string{"l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_returnflag", "l_linestatus", "l_shipdate"}
	types := []vec.Type{vec.Decimal(15, 2), vec.Decimal(15, 2), vec.Decimal(15, 2), vec.Decimal(15, 2), vec.StringType, vec.StringType, vec.DateType}
	e := func(s string) *expr.Expr {
		x, err := expr.Parse(s, cols)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	return &link.FragmentArgs{Fragment: colexec.Fragment{
		Scan: colexec.Scan{Table: "lineitem", Columns: cols, Types: types,
			Zone: []colexec.ZonePredicate{{Col: 6, Op: expr.OpLe, Value: vec.MustParseDate("1998-09-02")}}},
		Steps: []colexec.Step{
			{Filter: e("(<= l_shipdate (date_sub date'1998-12-01' 90 day))")},
			{Project: []*expr.Expr{e("l_returnflag"), e("l_linestatus"), e("l_quantity"), e("l_extendedprice"),
				e("(* l_extendedprice (- 1 l_discount))"), e("(* (* l_extendedprice (- 1 l_discount)) (+ 1 l_tax))"), e("l_discount")}},
			{Aggregate: &colexec.AggStep{Spec: colexec.AggSpec{GroupBy: []int{0, 1}, Aggs: []colexec.Aggregate{
				{Func: colexec.AggSum, Col: 2}, {Func: colexec.AggSum, Col: 3}, {Func: colexec.AggSum, Col: 4}, {Func: colexec.AggSum, Col: 5},
				{Func: colexec.AggAvg, Col: 2}, {Func: colexec.AggAvg, Col: 3}, {Func: colexec.AggAvg, Col: 6}, {Func: colexec.AggCountStar}}}}},
		},
	}}
}

type fragRun struct {
	WallS, PrimprocCPUS, WorkerCPUS, ClientCPUS float64
	RowsScanned                                 int64
	RowGroups, Eliminated                       int
	BytesFromDisk, BytesFromCache               int64
	Nvcsw, Nivcsw                               int64
}

// benchFragment runs one fragment (after dropping the caches if cold) and measures it.
func benchFragment(ctx context.Context, c *link.Client, args *link.FragmentArgs, cold bool) (fragRun, error) {
	if cold {
		if _, err := c.DropCache(ctx, true); err != nil {
			return fragRun{}, err
		}
	}
	before, err := c.Stats(ctx)
	if err != nil {
		return fragRun{}, err
	}
	self0, _ := rusage.Self()
	start := time.Now()
	fs, err := c.Fragment(ctx, args, nil)
	if err != nil {
		return fragRun{}, err
	}
	defer fs.Close()
	if err := fs.Each(func(arrow.RecordBatch) error { return nil }); err != nil {
		return fragRun{}, err
	}
	wall := time.Since(start)
	self1, _ := rusage.Self()
	after, err := c.Stats(ctx)
	if err != nil {
		return fragRun{}, err
	}
	end := fs.End()
	pm := after.Usage().Sub(before.Usage())
	return fragRun{WallS: wall.Seconds(), PrimprocCPUS: pm.CPU().Seconds(), WorkerCPUS: float64(end.Stats.WorkerCPUNanos) / 1e9,
		ClientCPUS: self1.Sub(self0).CPU().Seconds(), RowsScanned: end.Stats.RowsScanned,
		RowGroups: end.Stats.RowGroups, Eliminated: end.Stats.RowGroupsEliminated,
		BytesFromDisk: end.Stats.BytesFromDisk, BytesFromCache: end.Stats.BytesFromCache,
		Nvcsw: pm.Voluntary, Nivcsw: pm.Involuntary}, nil
}

type stat struct{ Median, Min, Max float64 }

func statOf(xs []float64) stat {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return stat{}
	}
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stat{m, s[0], s[len(s)-1]}
}

type fragSummary struct {
	Name                     string
	Runs                     []fragRun
	Wall, PrimprocCPU        stat
	RowsPerCoreS, TablePerCS stat // rows scanned / primproc CPU s; table rows / primproc CPU s
	RowsScanned              int64
	RowGroups, Eliminated    int
}

func summarize(name string, runs []fragRun, tableRows int64) fragSummary {
	var wall, cpu, rate, trate []float64
	for _, r := range runs {
		wall = append(wall, r.WallS)
		cpu = append(cpu, r.PrimprocCPUS)
		rate = append(rate, float64(r.RowsScanned)/r.PrimprocCPUS)
		trate = append(trate, float64(tableRows)/r.PrimprocCPUS)
	}
	s := fragSummary{Name: name, Runs: runs, Wall: statOf(wall), PrimprocCPU: statOf(cpu), RowsPerCoreS: statOf(rate), TablePerCS: statOf(trate)}
	if len(runs) > 0 {
		s.RowsScanned, s.RowGroups, s.Eliminated = runs[0].RowsScanned, runs[0].RowGroups, runs[0].Eliminated
	}
	return s
}

type loadRun struct {
	WallS, ClientUserS, ClientSysS, PrimprocUserS, PrimprocSysS float64
	PrimprocRSSMiB                                              int64
}

type benchReport struct {
	SF                                                 string
	Reps, Cores                                        int
	LoadAvgBefore, LoadAvgAfter                        string
	Loads                                              []loadRun
	LineitemRows, TotalRows, LineitemBytes, TotalBytes int64
	LineitemSegments, LineitemRowGroups                int
	Fragments                                          []fragSummary
}

func (r *benchReport) markdown() string {
	var b strings.Builder
	fmtStat := func(s stat, f string) string {
		return fmt.Sprintf(f+" ("+f+"–"+f+")", s.Median, s.Min, s.Max)
	}
	var wall, cu, cs, pu, ps, rss []float64
	for _, l := range r.Loads {
		wall, cu, cs, pu, ps = append(wall, l.WallS), append(cu, l.ClientUserS), append(cs, l.ClientSysS), append(pu, l.PrimprocUserS), append(ps, l.PrimprocSysS)
		rss = append(rss, float64(l.PrimprocRSSMiB))
	}
	fmt.Fprintf(&b, "Load of SF %s (%d rows, %.0f MiB of segments), %d runs:\n\n", r.SF, r.TotalRows, float64(r.TotalBytes)/(1<<20), len(r.Loads))
	b.WriteString("| | wall s | dbt3 user s | dbt3 sys s | primproc user s | primproc sys s | primproc RSS after, MiB |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	fmt.Fprintf(&b, "| median (min–max) | %s | %s | %s | %s | %s | %s |\n\n", fmtStat(statOf(wall), "%.1f"), fmtStat(statOf(cu), "%.1f"),
		fmtStat(statOf(cs), "%.1f"), fmtStat(statOf(pu), "%.1f"), fmtStat(statOf(ps), "%.1f"), fmtStat(statOf(rss), "%.0f"))
	fmt.Fprintf(&b, "Fragments over lineitem (%d rows, %d segments, %d row groups), %d runs each:\n\n", r.LineitemRows, r.LineitemSegments, r.LineitemRowGroups, r.Reps)
	b.WriteString("| fragment | row groups read | wall s | primproc CPU s | rows scanned / CPU s | lineitem rows / CPU s |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, f := range r.Fragments {
		fmt.Fprintf(&b, "| %s | %d of %d | %s | %s | %s M | %s M |\n", f.Name, f.RowGroups-f.Eliminated, f.RowGroups,
			fmtStat(f.Wall, "%.3f"), fmtStat(f.PrimprocCPU, "%.3f"),
			fmtStat(stat{f.RowsPerCoreS.Median / 1e6, f.RowsPerCoreS.Min / 1e6, f.RowsPerCoreS.Max / 1e6}, "%.1f"),
			fmtStat(stat{f.TablePerCS.Median / 1e6, f.TablePerCS.Min / 1e6, f.TablePerCS.Max / 1e6}, "%.1f"))
	}
	fmt.Fprintf(&b, "\nLoad average (1, 5, 15 min) before: %s; after: %s. %d cores.\n", r.LoadAvgBefore, r.LoadAvgAfter, r.Cores)
	return b.String()
}
