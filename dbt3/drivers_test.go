package dbt3

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colinkdb/colink/dbt3/answers"
	"github.com/colinkdb/colink/dbt3/dbt3test"
	"github.com/colinkdb/colink/dbt3/measure"
)

var oneRow = dbt3test.Canned{Columns: dbt3test.Cols("n int64"), Rows: [][]string{{"7"}}}

// A three-statement script (Q15's shape): elapsed and statistics are the sums of its
// statements', the result is the select's, and the /proc cross-check runs on our own pid.
func TestMeasurerScript(t *testing.T) {
	e := dbt3test.NewEngine()
	e.Set("select total_revenue from revenue0", dbt3test.Canned{Columns: dbt3test.Cols("total_revenue decimal(15,4)"), Rows: [][]string{{"1.2345"}}, Delay: 20 * time.Millisecond})
	c := dialFake(t, e)
	m := &Measurer{Conn: c, Stats: true, Transport: "tcp", PIDs: map[string]int{"dbt3": os.Getpid()}, Check: CPUCheck{Hz: ClockTicks()}}
	q := Query{Name: "Q15", Number: 15, Script: "-- comment\ncreate view revenue0 as select 1;\n\nselect total_revenue from revenue0;\ndrop view revenue0;\n"}
	ex, err := m.Run(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	s := ex.Sample
	if s.Query != "Q15" || s.Rows != 1 || s.Error != "" || s.Elapsed < 0.02 {
		t.Errorf("sample %+v", s)
	}
	if ex.Result == nil || ex.Result.Rows[0][0] != "1.2345" {
		t.Errorf("result %+v", ex.Result)
	}
	// The fake reports 100·n µs user for exemgr after its n-th statement: statements 1, 3
	// and 5 (2 and 4 are SHOW QUERY STATS): 100+300+500 µs.
	if got := s.Procs["exemgr"].User; math.Abs(got-0.0009) > 1e-12 {
		t.Errorf("exemgr user %v, want 0.0009 (summed over three statements)", got)
	}
	if s.Link == nil || s.Link.BytesIn != 4096*9 || s.Link.BatchesIn != 3*9 || s.Link.Frames != 5*9 || s.RowGroupsEliminated != 12 {
		t.Errorf("link %+v, row groups %d", s.Link, s.RowGroupsEliminated)
	}
	if _, ok := s.ProcStat["dbt3"]; !ok {
		t.Errorf("no /proc reading: %+v", s)
	}
	stmts := e.Statements()
	if len(stmts) != 6 || stmts[1] != "show query stats" || !strings.HasPrefix(stmts[4], "drop view") {
		t.Errorf("statements %q", stmts)
	}
}

// A failing statement ends the script, is recorded, and the script's drop view still runs.
func TestMeasurerFailureDropsView(t *testing.T) {
	e := dbt3test.NewEngine()
	e.Set("select broken from revenue0", dbt3test.Canned{Err: "no such column"})
	c := dialFake(t, e)
	m := &Measurer{Conn: c, Stats: true}
	ex, err := m.Run(context.Background(), Query{Name: "Q15", Script: "create view revenue0 as select 1; select broken from revenue0; drop view revenue0;"})
	if err == nil || !strings.Contains(ex.Sample.Error, "no such column") || !strings.Contains(ex.Sample.Error, "Q15 statement 2") {
		t.Fatalf("err %v, sample %+v", err, ex.Sample)
	}
	stmts := e.Statements()
	if last := stmts[len(stmts)-1]; last != "drop view revenue0" {
		t.Errorf("last statement %q, want the drop view", last)
	}
}

// Rows of SHOW QUERY STATS naming another transport than the run's make the sample fail.
func TestMeasurerTransportMismatch(t *testing.T) {
	e := dbt3test.NewEngine()
	e.Set("select 7", oneRow)
	e.SetTransport("tcp")
	c := dialFake(t, e)
	m := &Measurer{Conn: c, Stats: true, Transport: "unix"}
	ex, err := m.Run(context.Background(), Query{Name: "X", Script: "select 7;"})
	if err == nil || !strings.Contains(ex.Sample.Error, "over tcp, but this run is about unix") {
		t.Errorf("err %v, sample error %q", err, ex.Sample.Error)
	}
}

func TestCPUCheck(t *testing.T) {
	c := CPUCheck{Hz: 100, Tolerance: 2}
	if msg := c.Compare("exemgr", measure.Usage{User: 1.00, Sys: 0.10}, CPUTicks{User: 101, Sys: 9}); msg != "" {
		t.Errorf("within two ticks flagged: %s", msg)
	}
	msg := c.Compare("primproc0", measure.Usage{User: 1.00, Sys: 0.10}, CPUTicks{User: 110, Sys: 10})
	if !strings.Contains(msg, "primproc0") || !strings.Contains(msg, "user 1.000s by its own account, 1.100s by /proc (110 ticks)") || strings.Contains(msg, "sys") {
		t.Errorf("message %q", msg)
	}
}

func TestParseProcStat(t *testing.T) {
	line := "4242 (odd) name (x)) S 1 4242 4242 0 -1 4194560 1000 0 0 0 1234 567 0 0 20 0 9 0 100 0 0\n"
	got, err := parseProcStat(line)
	if err != nil || got != (CPUTicks{1234, 567}) {
		t.Errorf("got %+v, %v", got, err)
	}
	if _, err := parseProcStat("4242 (short) S 1 2"); err == nil {
		t.Error("short line accepted")
	}
	if _, err := ReadProcCPU(os.Getpid()); err != nil {
		t.Errorf("own /proc stat: %v", err)
	}
}

func TestClockTicksFromAuxv(t *testing.T) {
	var b []byte
	put := func(v uint64) {
		for i := 0; i < 8; i++ {
			b = append(b, byte(v>>(8*i)))
		}
	}
	put(6) // AT_PAGESZ
	put(4096)
	put(atClockTick)
	put(250)
	put(0)
	put(0)
	if got := clockTicksFromAuxv(b); got != 250 {
		t.Errorf("AT_CLKTCK %d, want 250", got)
	}
	if got := clockTicksFromAuxv(b[:24]); got != 100 { // cut before AT_CLKTCK's value
		t.Errorf("truncated auxv gives %d, want the default 100", got)
	}
	if hz := ClockTicks(); hz <= 0 {
		t.Errorf("ClockTicks %d", hz)
	}
}

func TestVerifier(t *testing.T) {
	want, err := answers.Parse(strings.NewReader("n|name\n7|seven\n"))
	if err != nil {
		t.Fatal(err)
	}
	v := &Verifier{Reference: map[string]*answers.Table{"Q1": want}}
	good := &Result{Columns: []string{"n", "name"}, Types: []string{"BIGINT", "VARCHAR"}, Rows: [][]string{{"7", "seven"}}}
	bad := &Result{Columns: []string{"n", "name"}, Types: []string{"BIGINT", "VARCHAR"}, Rows: [][]string{{"8", "seven"}}}
	if got, err := v.Check("Q1", good); got != VerifiedReference || err != nil {
		t.Errorf("good: %q %v", got, err)
	}
	if _, err := v.Check("Q1", bad); err == nil || !strings.Contains(err.Error(), "Q1") {
		t.Errorf("bad: %v", err)
	}
	// Without a reference, the first result is the reference for later ones.
	if got, err := v.Check("CS1", good); got != VerifiedConsistent || err != nil {
		t.Errorf("first CS1: %q %v", got, err)
	}
	if got, err := v.Check("CS1", good); got != VerifiedConsistent || err != nil {
		t.Errorf("same CS1: %q %v", got, err)
	}
	if _, err := v.Check("CS1", bad); err == nil || !strings.Contains(err.Error(), "first result") {
		t.Errorf("different CS1: %v", err)
	}
}

func TestLoadReference(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/q01.csv", []byte("a\n1\n"), 0o644)
	os.WriteFile(dir+"/q11.csv", []byte("a\n11\n"), 0o644)
	os.WriteFile(dir+"/q11-fraction-0.0001.csv", []byte("a\n110001\n"), 0o644)
	qs := []Query{{Name: "Q1", Number: 1}, {Name: "Q2", Number: 2}, {Name: "Q11", Number: 11, Script: "… * 0.0001000000 …"}, {Name: "CS1"}}
	ref, err := LoadReference(dir, qs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ref) != 2 || ref["Q1"].Rows[0][0] != "1" || ref["Q11"].Rows[0][0] != "110001" {
		t.Errorf("reference %v", ref)
	}
	ref, _ = LoadReference(dir, []Query{{Name: "Q11", Number: 11, Script: "… * 0.0100000000 …"}})
	if ref["Q11"].Rows[0][0] != "11" {
		t.Errorf("Q11 at its own fraction read %v", ref["Q11"].Rows)
	}
	if _, err := LoadReference(dir+"/missing", qs); err == nil {
		t.Error("missing directory accepted")
	}
	if _, err := LoadReference(t.TempDir(), qs); err == nil || !strings.Contains(err.Error(), "no qNN.csv") {
		t.Errorf("empty directory: %v", err)
	}
}

func TestSelectQueries(t *testing.T) {
	cases := []struct {
		list string
		want string
		err  string
	}{
		{"all", "Q1 Q2 Q3 Q4 Q5 Q6 Q7 Q8 Q9 Q10 Q11 Q12 Q13 Q14 Q15 Q16 Q17 Q18 Q19 Q20 Q21 Q22 CS1 CS2 CS3", ""},
		{"1,3,5-7,cs2,Q3", "Q1 Q3 Q5 Q6 Q7 CS2", ""},
		{"q20-q22", "Q20 Q21 Q22", ""},
		{"cs", "CS1 CS2 CS3", ""},
		{"scan", "SCAN1 SCAN2 SCAN4 SCAN8 CS1 CS2 CS3", ""},
		{"6,scan,scan4", "Q6 SCAN1 SCAN2 SCAN4 SCAN8", ""},
		{"23", "", "want a TPC-H query"},
		{"SCAN3", "", "SCAN1, SCAN2, SCAN4, SCAN8"},
		{"CS4", "", "CS1 … CS3"},
		{"5-3", "", "want a TPC-H query"},
	}
	for _, c := range cases {
		qs, err := SelectQueries(c.list)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.list, err, c.err)
			}
			continue
		}
		var names []string
		for _, q := range qs {
			names = append(names, q.Name)
		}
		if err != nil || strings.Join(names, " ") != c.want {
			t.Errorf("%q: %v %v", c.list, names, err)
		}
	}
	cs := ColumnStoreQueries()
	if cs[2].Script != "select count(*) from orders, lineitem where l_orderkey = o_orderkey;" {
		t.Errorf("CS3 %q", cs[2].Script)
	}
}

func TestPowerWithFakeEngine(t *testing.T) {
	e := dbt3test.NewEngine()
	e.SetDefault(oneRow)
	sock := dbt3test.Serve(t, e)
	var seen []string
	run, err := Power(context.Background(), PowerConfig{
		Session: SessionConfig{Addr: sock, Stats: true}, SF: 1, Seed: 1234,
		OnSample: func(s measure.Sample) { seen = append(seen, s.Query) },
	})
	if err != nil {
		t.Fatal(err)
	}
	order := []string{"Q14", "Q2", "Q9", "Q20", "Q6", "Q17", "Q18", "Q8", "Q21", "Q13", "Q3", "Q22", "Q16", "Q4", "Q11", "Q15", "Q1", "Q10", "Q19", "Q5", "Q7", "Q12"}
	if !slices.Equal(seen, order) {
		t.Errorf("order %v, want TPC-H stream 0's %v", seen, order)
	}
	var intervals []float64
	for _, s := range run.Samples {
		intervals = append(intervals, s.Elapsed)
		if s.Procs["exemgr"].User <= 0 {
			t.Errorf("%s without query stats", s.Query)
		}
	}
	want, _ := PowerAtSize(1, intervals)
	if run.Metrics["power@size"] != want || run.Metrics["intervals"] != 22 {
		t.Errorf("metrics %v, want power %v over 22 intervals", run.Metrics, want)
	}
	if !strings.Contains(strings.Join(run.Notes, "\n"), "refresh functions RF1 and RF2 were not run") {
		t.Errorf("notes %q", run.Notes)
	}
	// The queries ran with seed 1234's parameters.
	qs, _ := StreamQueries(1234, 0, 1, false)
	if stmts := e.Statements(); !slices.Contains(stmts, dbt3test.Normalize(strings.TrimSuffix(strings.TrimSpace(qs[0].Script), ";"))) {
		t.Errorf("Q14 with seed 1234's parameters not among the statements")
	}
}

type fakeRefresher struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeRefresher) RF1(ctx context.Context, c *Conn, set int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "RF1")
	return nil
}

func (f *fakeRefresher) RF2(ctx context.Context, c *Conn, set int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "RF2")
	return errors.New("no delete yet")
}

// With a Refresher, RF1 runs first and RF2 last; a failed interval leaves no metric.
func TestPowerRefreshHook(t *testing.T) {
	e := dbt3test.NewEngine()
	e.SetDefault(oneRow)
	sock := dbt3test.Serve(t, e)
	rf := &fakeRefresher{}
	run, err := Power(context.Background(), PowerConfig{Session: SessionConfig{Addr: sock}, SF: 1, Validation: true, Refresh: rf})
	if err == nil || !strings.Contains(err.Error(), "RF2: no delete yet") {
		t.Fatalf("err %v", err)
	}
	if len(run.Samples) != 24 || run.Samples[0].Query != "RF1" || run.Samples[23].Query != "RF2" {
		t.Errorf("%d samples, first %s", len(run.Samples), run.Samples[0].Query)
	}
	if _, ok := run.Metrics["power@size"]; ok {
		t.Errorf("metric despite a failure: %v", run.Metrics)
	}
}

func TestThroughputWithFakeEngine(t *testing.T) {
	e := dbt3test.NewEngine()
	e.SetDefault(dbt3test.Canned{Columns: oneRow.Columns, Rows: oneRow.Rows, Delay: 2 * time.Millisecond})
	sock := dbt3test.Serve(t, e)
	run, err := Throughput(context.Background(), ThroughputConfig{Session: SessionConfig{Addr: sock}, SF: 0.01, Seed: 7, Streams: 3})
	if err != nil {
		t.Fatal(err)
	}
	perStream := map[int][]string{}
	for _, s := range run.Samples {
		perStream[s.Stream] = append(perStream[s.Stream], s.Query)
	}
	for st := 1; st <= 3; st++ {
		qs, _ := StreamQueries(7+int64(st), st, 0.01, false)
		var want []string
		for _, q := range qs {
			want = append(want, q.Name)
		}
		if !slices.Equal(perStream[st], want) {
			t.Errorf("stream %d ran %v, want permutation %v", st, perStream[st], want)
		}
		if run.Metrics["ts_s"] < run.Metrics["stream"+string(rune('0'+st))+"_s"] {
			t.Errorf("Ts %v shorter than stream %d", run.Metrics["ts_s"], st)
		}
	}
	want, _ := ThroughputAtSize(0.01, 3, run.Metrics["ts_s"])
	if run.Metrics["throughput@size"] != want {
		t.Errorf("throughput %v, want %v", run.Metrics["throughput@size"], want)
	}
	if _, err := Throughput(context.Background(), ThroughputConfig{Session: SessionConfig{Addr: sock}, SF: 1, Streams: 0}); err == nil {
		t.Error("zero streams accepted")
	}
}

// fakeTarget serves a fake engine per transport, each reporting it (or, if stuck, tcp
// whatever is asked), as one exemgr per transport would.
type fakeTarget struct {
	t       *testing.T
	engines map[string]*dbt3test.Engine
	addrs   map[string]string
	stuck   bool
	serves  int
	dead    error
}

func newFakeTarget(t *testing.T, stuck bool, transports ...string) *fakeTarget {
	f := &fakeTarget{t: t, engines: map[string]*dbt3test.Engine{}, addrs: map[string]string{}, stuck: stuck}
	for _, tr := range transports {
		e := dbt3test.NewEngine()
		e.SetDefault(oneRow)
		if !stuck {
			e.SetTransport(tr)
		}
		f.engines[tr], f.addrs[tr] = e, dbt3test.Serve(t, e)
	}
	return f
}

func (f *fakeTarget) Serve(ctx context.Context, transports []string) (map[string]Endpoint, error) {
	f.serves++
	out := map[string]Endpoint{}
	for _, tr := range transports {
		out[tr] = Endpoint{Addr: f.addrs[tr], PIDs: map[string]int{"exemgr": os.Getpid()}}
	}
	return out, nil
}

func (f *fakeTarget) Check() error { return f.dead }

func TestCompareWithFakeTarget(t *testing.T) {
	target := newFakeTarget(t, false, "tcp", "unix")
	qs, err := SelectQueries("1,6,CS3,SCAN2")
	if err != nil {
		t.Fatal(err)
	}
	run, err := Compare(context.Background(), CompareConfig{Target: target, Transports: []string{"tcp", "unix"}, Pushdowns: []string{"full", "filter"}, Runs: 3, Warmup: true, Queries: qs, Primprocs: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Warm rounds run each (query, level) once unmeasured over every transport first;
	// round 1 has no warm-ups.
	q6 := 0
	for _, e := range target.engines {
		for _, st := range e.Statements() {
			if strings.Contains(st, "sum(l_extendedprice * l_discount)") {
				q6++
			}
		}
	}
	if want := 3*2*2 + 2*2*2; q6 != want {
		t.Errorf("Q6 ran %d times over both exemgrs, want %d (12 measured, a warm-up over each transport at each level in each warm round)", q6, want)
	}
	// Per round: three queries at two levels and SCAN2 at its own, over two transports.
	const perRound = (3*2 + 1) * 2
	if len(run.Samples) != 3*perRound {
		t.Fatalf("%d samples, want %d", len(run.Samples), 3*perRound)
	}
	for tr, e := range target.engines {
		if got := e.Flushes(); got != perRound/2 {
			t.Errorf("%s: %d cache drops, want one before each execution of round 1 (%d)", tr, got, perRound/2)
		}
	}
	// The transports take turns execution by execution, the order reversed each time.
	for i := 0; i+1 < len(run.Samples); i += 2 {
		a, b := run.Samples[i], run.Samples[i+1]
		if a.Query != b.Query || a.Pushdown != b.Pushdown || a.Round != b.Round || a.Transport == b.Transport {
			t.Fatalf("samples %d and %d are not one execution over both transports: %+v / %+v", i, i+1, a, b)
		}
		if i%perRound >= 2 && a.Transport == run.Samples[i-2].Transport {
			t.Errorf("samples %d and %d start with the same transport %s", i-2, i, a.Transport)
		}
		if i >= perRound && a.Transport == run.Samples[i-perRound].Transport {
			t.Errorf("sample %d starts with %s as in the round before", i, a.Transport)
		}
	}
	levels := map[string]int{}
	for _, s := range run.Samples {
		if s.Error != "" || s.Cold != (s.Round == 1) || s.Primprocs != 1 || s.System != "colink" || s.Verified != VerifiedConsistent {
			t.Errorf("sample %+v", s)
		}
		if s.Procs["primproc0"].User <= 0 || s.Link == nil || s.ProcStat == nil {
			t.Errorf("sample without stats: %+v", s)
		}
		if s.Query == "SCAN2" && s.Pushdown != "scan" {
			t.Errorf("SCAN2 ran at %q, want its own level scan", s.Pushdown)
		}
		levels[s.Pushdown]++
	}
	if levels["full"] != 3*3*2 || levels["filter"] != 3*3*2 || levels["scan"] != 3*2 {
		t.Errorf("samples by level %v", levels)
	}
	if target.serves != 1 {
		t.Errorf("Serve called %d times, want once", target.serves)
	}
	// A target whose unix exemgr reports tcp: unix samples fail, the run goes on.
	stuck := newFakeTarget(t, true, "tcp", "unix")
	run, err = Compare(context.Background(), CompareConfig{Target: stuck, Transports: []string{"tcp", "unix"}, Runs: 1, Queries: qs[:1]})
	if err != nil {
		t.Fatal(err)
	}
	if run.Samples[0].Error != "" || !strings.Contains(run.Samples[1].Error, "over tcp, but this run is about unix") {
		t.Errorf("samples %+v", run.Samples)
	}
	// A dead daemon ends the run with its error.
	stuck.dead = errors.New("primproc0 exited: boom")
	stuck.engines["tcp"].Set(dbt3test.Normalize("select 1"), dbt3test.Canned{Err: "lost primproc0"})
	_, err = Compare(context.Background(), CompareConfig{Target: stuck, Transports: []string{"tcp"}, Runs: 1, Queries: []Query{{Name: "X", Script: "select 1;"}}})
	if err == nil || !strings.Contains(err.Error(), "primproc0 exited: boom") {
		t.Errorf("err %v", err)
	}
	if _, err := Compare(context.Background(), CompareConfig{Target: stuck, Transports: []string{"carrier-pigeon"}, Runs: 1, Queries: qs}); err == nil || !strings.Contains(err.Error(), `unknown transport "carrier-pigeon"`) {
		t.Errorf("unknown transport: %v", err)
	}
	if _, err := Compare(context.Background(), CompareConfig{Target: stuck, Transports: []string{"tcp"}, Pushdowns: []string{"most"}, Runs: 1, Queries: qs}); err == nil || !strings.Contains(err.Error(), `unknown pushdown level "most"`) {
		t.Errorf("unknown level: %v", err)
	}
}

func TestRoundOrder(t *testing.T) {
	if got := RoundOrder([]string{"tcp", "unix"}, 1); !slices.Equal(got, []string{"tcp", "unix"}) {
		t.Errorf("round 1 %v", got)
	}
	if got := RoundOrder([]string{"tcp", "unix"}, 2); !slices.Equal(got, []string{"unix", "tcp"}) {
		t.Errorf("round 2 %v", got)
	}
	if _, err := ParseTransports([]string{"tcp", "tcp"}); err == nil {
		t.Error("duplicate transport accepted")
	}
}

func TestParseStatusRSS(t *testing.T) {
	r, err := parseStatusRSS("Name:\tprimproc\nVmPeak:\t 9 kB\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\nThreads:\t7\n")
	if err != nil || r.Now != 1<<20 || r.Peak != 2<<20 {
		t.Fatalf("%+v, %v", r, err)
	}
	if _, err := parseStatusRSS("Name:\tx\n"); err == nil {
		t.Error("a status without VmRSS parsed")
	}
	if n := lazyFree("Rss:   4096 kB\nLazyFree:    1024 kB\nSwap: 0 kB\n"); n != 1<<20 {
		t.Errorf("LazyFree of 1024 kB read as %d", n)
	}
	if n := lazyFree("Rss:   4096 kB\n"); n != 0 {
		t.Errorf("no LazyFree line read as %d", n)
	}
	// A peak well above the present, then a reset: the peak comes down to the present.
	big := make([]byte, 96<<20)
	for i := 0; i < len(big); i += 4096 {
		big[i] = 1
	}
	big = nil
	debug.FreeOSMemory()
	self, err := ReadRSS(os.Getpid())
	if err != nil || self.Now <= 0 || self.Peak < self.Now+64<<20 {
		t.Fatalf("own RSS %+v, %v: want a peak 64 MiB above the present", self, err)
	}
	if err := ResetPeakRSS(os.Getpid()); err != nil {
		t.Skipf("clear_refs not writable here: %v", err)
	}
	after, _ := ReadRSS(os.Getpid())
	if after.Peak > self.Peak-32<<20 {
		t.Errorf("peak %d MiB after the reset, %d MiB before", after.Peak>>20, self.Peak>>20)
	}
}

// TestThroughputStreamViews: Q15 creates and drops a database-wide view, so each throughput
// stream names its own, as DBT3's qgen does with the stream number: stream N creates,
// reads and drops revenueN and no other view, with seeded and with validation parameters.
func TestThroughputStreamViews(t *testing.T) {
	viewRE := regexp.MustCompile(`\brevenue\w*`)
	for _, validation := range []bool{false, true} {
		e := dbt3test.NewEngine()
		e.SetDefault(oneRow)
		sock := dbt3test.Serve(t, e)
		const streams = 3
		if _, err := Throughput(context.Background(), ThroughputConfig{Session: SessionConfig{Addr: sock}, SF: 0.01, Seed: 7, Streams: streams, Validation: validation}); err != nil {
			t.Fatal(err)
		}
		bySession := e.SessionStatements()
		ids := slices.Sorted(maps.Keys(bySession))
		if len(ids) != streams {
			t.Fatalf("validation %v: %d sessions, want one per stream (%d)", validation, len(ids), streams)
		}
		// Stream N is the N-th session to connect.
		for n, id := range ids {
			want := fmt.Sprintf("revenue%d", n+1)
			var uses []string
			for _, st := range bySession[id] {
				for _, v := range viewRE.FindAllString(st, -1) {
					if v != "revenue" { // a column alias in Q3, Q5, Q10 …
						uses = append(uses, v)
					}
				}
				if strings.HasPrefix(st, "create view ") && !strings.HasPrefix(st, "create view "+want+" ") ||
					strings.HasPrefix(st, "drop view ") && st != "drop view "+want {
					t.Errorf("validation %v: stream %d: %q, want view %s", validation, n+1, st, want)
				}
			}
			// create view, the select's two references, drop view
			if len(uses) != 4 || slices.ContainsFunc(uses, func(v string) bool { return v != want }) {
				t.Errorf("validation %v: stream %d names views %v, want %s only (4 times)", validation, n+1, uses, want)
			}
		}
	}
}
