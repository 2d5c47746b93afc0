package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colinkdb/colink/dbt3/cluster"
	"github.com/colinkdb/colink/dbt3/measure"
)

// repoRoot is the main module's root, relative to this module's directory.
const repoRoot = "../.."

// answersDir returns the SF 0.01 answers in the shared reference data, or skips the test.
func answersDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(repoRoot, "..", "shared", "tpch", "answers", "sf0.01")
	if _, err := os.Stat(filepath.Join(dir, "q01.csv")); err != nil {
		t.Skipf("no TPC-H answers at %s (../shared is absent): %v", dir, err)
	}
	return dir
}

// generate writes SF 0.01 Parquet tables into a temporary directory with the main module's
// `dbt3 gen`, or skips the test if that cannot run.
func generate(t *testing.T, extra ...string) string {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append([]string{"run", "./cmd/dbt3", "gen", "--sf", "0.01", "--format", "parquet", "--no-sync", "--out", dir}, extra...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("cannot generate SF 0.01 Parquet data with `go %s` in %s: %v\n%s",
			strings.Join(args, " "), repoRoot, err, out)
	}
	return dir
}

func allQueries(t *testing.T) []query {
	t.Helper()
	qs, err := loadQueries(allQueryNames(), "")
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

// TestValidationSF001 runs the 22 validation queries and the three extra ones at SF 0.01,
// one cold round and one warm, on DuckDB's native tables and on views over the files, checks
// every TPC-H result against the official answers and the records against what was run.
func TestValidationSF001(t *testing.T) {
	answers := answersDir(t)
	data := generate(t)
	for _, storage := range []string{storageNative, storageParquet} {
		t.Run(storage, func(t *testing.T) { validate(t, data, answers, storage) })
	}
}

func validate(t *testing.T, data, answers, storage string) {
	qs := allQueries(t)
	rec, outcomes, err := runBench(context.Background(), config{
		DataDir: data, Storage: storage, Threads: 2, Runs: 2, Queries: qs, AnswersDir: answers, Command: "test",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outcomes {
		want := "ok"
		if o.Query.Number == 0 {
			want = "no answer"
		}
		if o.Check != want {
			t.Errorf("%s: check %q, want %q: %s", o.Query.Name, o.Check, want, strings.Join(o.Diffs, "; "))
		}
		if len(o.Query.Adaptations) > 0 {
			t.Logf("%s adapted for DuckDB: %s", o.Query.Name, strings.Join(o.Query.Adaptations, "; "))
		}
	}

	// The record: every query once per round, round 1 cold, resource use present.
	if rec.Driver != "duckdb" || rec.SF != 0.01 || rec.Threads != 2 || rec.Command != "test" {
		t.Errorf("run header: driver %q sf %v threads %d command %q", rec.Driver, rec.SF, rec.Threads, rec.Command)
	}
	if len(rec.Samples) != 2*len(qs) {
		t.Fatalf("%d samples, want %d", len(rec.Samples), 2*len(qs))
	}
	rows := map[string]int64{}
	for i, s := range rec.Samples {
		round := 1 + i/len(qs)
		q := qs[i%len(qs)]
		u, ok := s.Procs["duckdb"]
		if s.System != "duckdb" || s.Query != q.Name || s.Round != round || s.Cold != (round == 1) ||
			s.Elapsed <= 0 || s.Error != "" || !ok || u.User < 0 || u.Sys < 0 || u.Voluntary < 0 {
			t.Errorf("sample %d: %+v", i, s)
		}
		if round == 1 {
			rows[s.Query] = s.Rows
		} else if s.Rows != rows[s.Query] {
			t.Errorf("%s: %d rows warm, %d cold", s.Query, s.Rows, rows[s.Query])
		}
	}
	if rows["CS1"] != 100 || rows["CS2"] != 100 || rows["CS3"] != 1 || rows["Q1"] != 4 {
		t.Errorf("rows: %v", rows)
	}
	var cpu float64
	for _, s := range rec.Samples {
		cpu += s.Procs["duckdb"].CPU()
	}
	if cpu <= 0 {
		t.Errorf("no CPU time measured over %d samples", len(rec.Samples))
	}
	wantNotes := []string{"lineitem: l_orderkey BIGINT", "l_extendedprice DECIMAL(15,2)", "l_shipdate DATE", "o_orderdate DATE"}
	if storage == storageNative {
		wantNotes = append(wantNotes, "tables: DuckDB's own (native storage)", "load: ", "s wall", "database file")
	} else {
		wantNotes = append(wantNotes, "tables: views over read_parquet")
	}
	if rec.Storage != storage {
		t.Errorf("run storage %q, want %q", rec.Storage, storage)
	}
	for _, want := range wantNotes {
		if !strings.Contains(strings.Join(rec.Notes, "\n"), want) {
			t.Errorf("notes do not show %q:\n%s", want, strings.Join(rec.Notes, "\n"))
		}
	}

	path := filepath.Join(t.TempDir(), "duckdb.json")
	if err := rec.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	back, err := measure.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Samples) != len(rec.Samples) || back.Samples[3].Procs["duckdb"] != rec.Samples[3].Procs["duckdb"] {
		t.Errorf("JSON round trip lost samples")
	}
	sum := summary(rec, outcomes)
	for _, want := range []string{"| Q22 | 7 |", "| CS3 | 1 |", "| **total** |", "| ok |", "| no answer |"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
}

// TestCommand runs the command as a user would: chunked data, a selection, --print, --out,
// --check against a deliberately wrong answer, and bad input.
func TestCommand(t *testing.T) {
	answers := answersDir(t)
	data := generate(t, "--chunks", "3")
	if _, err := os.Stat(filepath.Join(data, "lineitem.3.parquet")); err != nil {
		t.Fatalf("dbt3 gen --chunks 3 wrote no lineitem.3.parquet: %v", err)
	}
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "run.json")
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"--data", data, "--queries", "1,6,cs3", "--runs", "1", "--threads", "1",
		"--check", answers, "--print", "--out", out, "--quiet"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &stdout, &stderr)
	}
	want, err := os.ReadFile(filepath.Join(answers, "q06.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "-- Q6\n"+string(want)) {
		t.Errorf("--print did not write Q6 as its answer file:\n%s", &stdout)
	}
	rec, err := measure.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Samples) != 3 || rec.Samples[2].Query != "CS3" || rec.Threads != 1 {
		t.Errorf("record: %+v", rec.Samples)
	}
	// CS3 counts the join of every lineitem with its order: all of lineitem.
	counts, err := os.ReadFile(filepath.Join(repoRoot, "..", "shared", "tpch", "ROWCOUNTS-sf0.01"))
	if err != nil {
		t.Fatal(err)
	}
	var lineitems string
	for _, line := range strings.Split(string(counts), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[1] == "lineitem.tbl" {
			lineitems = f[0]
		}
	}
	if lineitems == "" || !strings.Contains(stdout.String(), "-- CS3\ncount_star()\n"+lineitems+"\n") {
		t.Errorf("CS3 did not count the %q lineitems:\n%s", lineitems, &stdout)
	}

	// --db keeps the loaded database file, which a second run will not overwrite.
	db := filepath.Join(t.TempDir(), "tpch.duckdb")
	stdout.Reset()
	stderr.Reset()
	if code := run(ctx, []string{"--data", data, "--queries", "6", "--runs", "1", "--db", db, "--quiet"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("--db: exit %d\n%s", code, &stderr)
	}
	if st, err := os.Stat(db); err != nil || st.Size() == 0 {
		t.Fatalf("--db %s not kept: %v", db, err)
	}
	if _, err := os.Stat(db + ".loading"); err == nil {
		t.Errorf("the load's temporary file %s.loading is left", db)
	}
	if !strings.Contains(stdout.String(), "native tables") || !strings.Contains(stdout.String(), "The tables' load: ") {
		t.Errorf("the summary does not say the tables were native and loaded:\n%s", &stdout)
	}

	// A wrong answer is reported and fails the run.
	wrong := t.TempDir()
	os.WriteFile(filepath.Join(wrong, "q06.csv"), []byte("revenue\n1193053.2254\n"), 0o644)
	stdout.Reset()
	stderr.Reset()
	code = run(ctx, []string{"--data", data, "--queries", "6", "--runs", "1", "--check", wrong, "--quiet"}, &stdout, &stderr)
	if code != exitFailure || !strings.Contains(stderr.String(), `got "1193053.2253", want "1193053.2254"`) {
		t.Errorf("wrong answer: exit %d, stderr:\n%s", code, &stderr)
	}

	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{}, "--data DIR is required"},
		{[]string{"--data", filepath.Join(data, "nope")}, "data directory"},
		{[]string{"--data", data, "--queries", "23"}, "unknown query"},
		{[]string{"--data", data, "--threads", "0"}, "--threads 0"},
		{[]string{"--data", data, "--runs", "0"}, "--runs 0"},
		{[]string{"--data", data, "--check", filepath.Join(data, "nope")}, "not a directory of answer files"},
		{[]string{"--data", data, "--out", "/nonexistent/dir/x.json"}, "does not exist"},
		{[]string{"--data", data, "--bogus"}, "unknown flag"},
		{[]string{"--data", data, "--storage", "memory"}, `--storage "memory": want native or parquet`},
		{[]string{"--data", data, "--storage", "parquet", "--db", db + "2"}, "--db names a database file for --storage native"},
		{[]string{"--data", data, "--db", db}, "exists: remove it or name another"},
		{[]string{"--data", data, "--db", "/nonexistent/dir/x.duckdb"}, "does not exist"},
		{[]string{"--data", data, "extra"}, "unexpected argument"},
	} {
		stderr.Reset()
		if code := run(ctx, tc.args, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tc.msg) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr.String(), exitUsage, tc.msg)
		}
	}
}

// TestSideBySide runs DuckDB and a real colink (primproc and exemgr started from the tree,
// loaded from the same files) in one run with --colink: both engines run every query in
// every round, in alternating order, colink's results are checked against the answers, and
// the summary holds the paired ratios.
func TestSideBySide(t *testing.T) {
	answers := answersDir(t)
	data := generate(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := t.TempDir()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/primproc", "./cmd/exemgr", "./cmd/dbt3")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Skipf("cannot build colink's daemons: %v\n%s", err, out)
	}
	work := t.TempDir()
	cl, err := cluster.Start(ctx, cluster.Config{
		Binaries: cluster.Binaries{PrimProc: filepath.Join(bin, "primproc"), ExeMgr: filepath.Join(bin, "exemgr")},
		DataDirs: []string{filepath.Join(work, "pm0")}, RunDir: work, Threads: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	load := exec.CommandContext(ctx, filepath.Join(bin, "dbt3"), append([]string{"load", "--from", data, "--primproc"}, cl.LinkEndpoints()...)...)
	if out, err := load.CombinedOutput(); err != nil {
		t.Fatalf("dbt3 load: %v\n%s", err, out)
	}
	addr, err := cl.UseTransport(ctx, "unix")
	if err != nil {
		t.Fatal(err)
	}
	names, _ := parseSelection("1,6,CS3")
	qs, err := loadQueries(names, "")
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := runBench(ctx, config{DataDir: data, Threads: 1, Runs: 3, Queries: qs, AnswersDir: answers, Colink: addr, Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Samples) != 2*3*len(qs) {
		t.Fatalf("%d samples, want %d (two engines, three rounds, %d queries)", len(rec.Samples), 2*3*len(qs), len(qs))
	}
	for k := 0; k < len(rec.Samples); k += 2 {
		a, b := rec.Samples[k], rec.Samples[k+1]
		round, i := a.Round, k/2%len(qs)
		first := "duckdb"
		if firstIsColink(round, i) {
			first = "colink"
		}
		if a.Query != b.Query || a.Round != b.Round || a.System != first || a.System == b.System {
			t.Errorf("samples %d, %d: %s %s round %d, then %s %s round %d; want %s first", k, k+1,
				a.System, a.Query, a.Round, b.System, b.Query, b.Round, first)
		}
		for _, s := range []measure.Sample{a, b} {
			if s.Error != "" || s.Elapsed <= 0 || s.Cold != (s.Round == 1) {
				t.Errorf("%s %s round %d: %+v", s.System, s.Query, s.Round, s)
			}
			if s.System == "colink" {
				if want := map[bool]string{true: "reference", false: verifiedDuckDB}[s.Query != "CS3"]; s.Verified != want {
					t.Errorf("colink %s round %d verified %q, want %q", s.Query, s.Round, s.Verified, want)
				}
				if _, ok := s.Procs["exemgr"]; !ok {
					t.Errorf("colink %s round %d: no exemgr CPU in %v", s.Query, s.Round, s.Procs)
				}
			}
		}
	}
	sum := summary(rec, nil) + pairedSummary(rec, qs)
	for _, want := range []string{"colink against DuckDB in the same run", "| Q6 |", "**total (3 queries)**", "95 % CI", "Only 2 warm rounds"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	t.Log(sum)

	// The wrong data (or none) is refused before anything runs.
	if _, err := openColink(ctx, addr, 1, qs, ""); err == nil || !strings.Contains(err.Error(), "must hold the same data") {
		t.Errorf("colink at SF 0.01 taken for SF 1: %v", err)
	}
}
