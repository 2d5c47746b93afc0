package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/bench/duckdb/internal/tpchfiles"
	"github.com/colinkdb/colink/dbt3/cluster"
	"github.com/colinkdb/colink/internal/atomicfile"
)

// config is one fuzzing run's settings.
type config struct {
	seeds     []uint64
	queries   int
	sf        float64
	dataDir   string
	outDir    string
	connect   string
	primprocs int
	transport string
	threads   int
	timeout   time.Duration
	reduce    bool
	exec      string
	verbose   bool
	command   string
	log       *slog.Logger
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := pflag.NewFlagSet("sqlfuzz", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	seeds := fs.String("seeds", "1,2,3,4,5", "comma-separated seeds; each seed's queries are its own stream")
	queries := fs.Int("queries", 200, "queries per seed")
	sf := fs.Float64("sf", 0.1, "TPC-H scale factor of the data")
	data := fs.String("data", "", "Parquet files of dbt3 gen --format parquet (default: <tree>/data/sf<SF>-parquet, generated if missing)")
	out := fs.String("out", "", "directory for the findings and the summary (default: <tree>/results/fuzz-sf<SF>)")
	connect := fs.String("connect", "", "use a running exemgr at this MySQL address (host:port or socket path) holding the same data, instead of starting daemons")
	primprocs := fs.Int("primprocs", 2, "primprocs to start (two exercise the merge of partial results)")
	transport := fs.String("transport", "unix", "the link's transport: tcp or unix")
	threads := fs.Int("threads", 2, "threads of each primproc and of DuckDB")
	timeout := fs.Duration("timeout", 30*time.Second, "bound of each query on each engine")
	reduce := fs.Bool("reduce", true, "reduce each disagreement before writing it")
	execSQL := fs.String("exec", "", "run this one query on both engines, print both answers and exit")
	verbose := fs.BoolP("verbose", "v", false, "log each step")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: cd bench/duckdb && go run ./sqlfuzz [--sf F] [--seeds S,…] [--queries N] [--out DIR]")
		fmt.Fprintln(stderr, "\nGenerates random queries over TPC-H and checks colink against DuckDB (differential) and")
		fmt.Fprintln(stderr, "against itself (SQLancer's TLP and NoREC); writes each disagreement, reduced, with both answers.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, &usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	cfg := &config{queries: *queries, sf: *sf, dataDir: *data, outDir: *out, connect: *connect, primprocs: *primprocs,
		transport: *transport, threads: *threads, timeout: *timeout, reduce: *reduce, exec: *execSQL, verbose: *verbose,
		command: "cd bench/duckdb && go run ./sqlfuzz " + strings.Join(args, " ")}
	for _, s := range strings.Split(*seeds, ",") {
		v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, &usageError{fmt.Errorf("--seeds: %q is not a seed", s)}
		}
		cfg.seeds = append(cfg.seeds, v)
	}
	switch {
	case cfg.queries < 1:
		return nil, &usageError{fmt.Errorf("--queries must be at least 1")}
	case cfg.sf <= 0:
		return nil, &usageError{fmt.Errorf("--sf must be positive")}
	case cfg.primprocs < 1:
		return nil, &usageError{fmt.Errorf("--primprocs must be at least 1")}
	case cfg.transport != "tcp" && cfg.transport != "unix":
		return nil, &usageError{fmt.Errorf("--transport %q: want tcp or unix", cfg.transport)}
	}
	return cfg, nil
}

// summary is a run's record: what was generated, compared and skipped, and the findings.
type summary struct {
	Command string   `json:"command"`
	SF      float64  `json:"sf"`
	Seeds   []uint64 `json:"seeds"`
	Queries int      `json:"queries"`
	Elapsed float64  `json:"elapsed_s"`
	// Done counts the queries checked so far; it is Queries × len(Seeds) once the run is
	// complete. Partial says the run has not finished (the summary is rewritten every 100
	// queries, so that a run stopped early or killed keeps its record) or was interrupted.
	Done     int               `json:"done"`
	Partial  string            `json:"partial,omitempty"`
	Oracles  map[string]*tally `json:"oracles"`
	Shapes   map[string]int    `json:"shapes"`
	Findings int               `json:"findings"`
	Files    []string          `json:"finding_files,omitempty"`
	// ReferenceFaults are the disagreements where a fresh DuckDB with the same rows agreed
	// with colink (recheckReference): written, not counted as findings.
	ReferenceFaults []string `json:"reference_faults,omitempty"`
	DuckLoad        float64  `json:"duckdb_load_s"`
	// Engines is the time each engine spent answering, and how many queries it ran.
	Engines map[string]engineTime `json:"engines"`
}

type engineTime struct {
	Queries int     `json:"queries"`
	Seconds float64 `json:"seconds"`
}

// tally counts one oracle's verdicts.
type tally struct {
	Compared int            `json:"compared"`
	Agreed   int            `json:"agreed"`
	Differed int            `json:"differed"`
	Skipped  map[string]int `json:"skipped"`
}

func (t *tally) add(o outcome) {
	switch o.v {
	case agree:
		t.Compared++
		t.Agreed++
	case differ:
		t.Compared++
		t.Differed++
	default:
		t.Skipped[skipClass(o.reason)]++
	}
}

// skipClass groups skip reasons (their error texts vary by query) into counted classes.
func skipClass(reason string) string {
	for _, p := range []string{"DuckDB rejects it", "colink does not support it"} {
		if strings.HasPrefix(reason, p) {
			msg := strings.TrimPrefix(reason, p+": ")
			if len(msg) > 90 {
				msg = msg[:90] + "…"
			}
			return p + ": " + msg
		}
	}
	return reason
}

// moduleRoot finds colink's source tree at or above the working directory.
func moduleRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			sc := bufio.NewScanner(strings.NewReader(string(b)))
			for sc.Scan() {
				if strings.TrimSpace(sc.Text()) == "module github.com/colinkdb/colink" {
					return d, nil
				}
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("not inside colink's source tree (run from bench/duckdb)")
		}
		d = parent
	}
}

// goBuild builds the main module's commands into dir.
func goBuild(ctx context.Context, root, dir string, pkgs ...string) error {
	args := append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", strings.Join(pkgs, " "), err, out)
	}
	return nil
}

// run executes a command, returning its output in the error on failure.
func runCmd(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return nil
}

// setup brings up both engines over the same data.
type setup struct {
	colink, duck *sqlEngine
	tables       []tpchfiles.Table // the Parquet files DuckDB loads, for a fresh DuckDB
	cl           *cluster.Cluster
	duckLoad     time.Duration
	cleanup      []func()
}

func (s *setup) close() {
	for i := len(s.cleanup) - 1; i >= 0; i-- {
		s.cleanup[i]()
	}
}

func start(ctx context.Context, cfg *config) (*setup, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(root, "bin")
	s := &setup{}
	cfg.log.Info("sqlfuzz: building colink", "into", bin)
	if err := goBuild(ctx, root, bin, "./cmd/primproc", "./cmd/exemgr", "./cmd/dbt3"); err != nil {
		return nil, err
	}
	if cfg.dataDir == "" {
		cfg.dataDir = filepath.Join(root, "data", fmt.Sprintf("sf%g-parquet", cfg.sf))
	}
	if cfg.outDir == "" {
		cfg.outDir = filepath.Join(root, "results", fmt.Sprintf("fuzz-sf%g", cfg.sf))
	}
	tables, err := tpchfiles.Find(cfg.dataDir)
	if err != nil {
		cfg.log.Info("sqlfuzz: generating the data", "sf", cfg.sf, "dir", cfg.dataDir)
		if err := runCmd(ctx, filepath.Join(bin, "dbt3"), "gen", "--sf", strconv.FormatFloat(cfg.sf, 'g', -1, 64),
			"--format", "parquet", "--out", cfg.dataDir); err != nil {
			return nil, err
		}
		if tables, err = tpchfiles.Find(cfg.dataDir); err != nil {
			return nil, err
		}
	}
	addr := cfg.connect
	if addr == "" {
		work, err := os.MkdirTemp("", "sqlfuzz-")
		if err != nil {
			return nil, err
		}
		s.cleanup = append(s.cleanup, func() { os.RemoveAll(work) })
		var dirs []string
		for i := 0; i < cfg.primprocs; i++ {
			dirs = append(dirs, filepath.Join(work, "pm"+strconv.Itoa(i)))
		}
		cl, err := cluster.Start(ctx, cluster.Config{
			Binaries: cluster.Binaries{PrimProc: filepath.Join(bin, "primproc"), ExeMgr: filepath.Join(bin, "exemgr")},
			DataDirs: dirs, RunDir: work, Threads: cfg.threads, Log: cfg.log,
			PrimProcArgs: []string{"--cache-size", "2GiB"},
		})
		if err != nil {
			s.close()
			return nil, err
		}
		s.cl = cl
		s.cleanup = append(s.cleanup, func() { cl.Stop() })
		loadArgs := []string{"load", "--from", cfg.dataDir}
		for _, ep := range cl.LinkEndpoints() {
			loadArgs = append(loadArgs, "--primproc", ep)
		}
		cfg.log.Info("sqlfuzz: loading colink")
		if err := runCmd(ctx, filepath.Join(bin, "dbt3"), loadArgs...); err != nil {
			s.close()
			return nil, err
		}
		if addr, err = cl.UseTransport(ctx, cfg.transport); err != nil {
			s.close()
			return nil, err
		}
	}
	if s.colink, err = openColink(addr, "tpch"); err != nil {
		s.close()
		return nil, err
	}
	s.cleanup = append(s.cleanup, func() { s.colink.db.Close() })
	s.tables = tables
	cfg.log.Info("sqlfuzz: loading DuckDB")
	if s.duck, s.duckLoad, err = openDuckDB(ctx, tables, cfg.threads); err != nil {
		s.close()
		return nil, err
	}
	s.cleanup = append(s.cleanup, func() { s.duck.db.Close() })
	s.colink.log, s.duck.log = cfg.log, cfg.log
	return s, nil
}

// fuzz runs the configured seeds and writes the summary.
func fuzz(ctx context.Context, cfg *config, stdout io.Writer) (*summary, error) {
	began := time.Now()
	s, err := start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer s.close()
	o := &oracles{colink: s.colink, duck: s.duck}
	if cfg.exec != "" {
		for _, e := range []engine{s.colink, s.duck} {
			r, err := e.query(ctx, cfg.exec)
			fmt.Fprintf(stdout, "-- %s\n", e.name())
			if err != nil {
				fmt.Fprintf(stdout, "error: %v\n", err)
				continue
			}
			fmt.Fprintf(stdout, "%s\n%s", strings.Join(r.types, "|"), r.format(100))
		}
		return nil, nil
	}
	samples, err := sampleValues(ctx, s.duck, newSchema(nil), 24)
	if err != nil {
		return nil, err
	}
	sch := newSchema(samples)
	if err := os.MkdirAll(cfg.outDir, 0o755); err != nil {
		return nil, err
	}
	sum := &summary{Command: cfg.command, SF: cfg.sf, Seeds: cfg.seeds, Queries: cfg.queries,
		Oracles: map[string]*tally{}, Shapes: map[string]int{}, DuckLoad: s.duckLoad.Seconds()}
	for _, name := range []string{"differential", "tlp", "norec"} {
		sum.Oracles[name] = &tally{Skipped: map[string]int{}}
	}
	// finish records the engines' time; partial, when not "", says why the run is not
	// complete.
	finish := func(partial string) error {
		sum.Elapsed = time.Since(began).Seconds()
		sum.Partial = partial
		sum.Engines = map[string]engineTime{}
		for _, e := range []*sqlEngine{s.colink, s.duck} {
			sum.Engines[e.label] = engineTime{Queries: e.calls, Seconds: e.spent.Seconds()}
		}
		out := stdout
		if partial != "" && !strings.HasPrefix(partial, "interrupted") {
			out = io.Discard
		}
		return writeSummary(cfg.outDir, sum, out)
	}
	for _, seed := range cfg.seeds {
		for n := 1; n <= cfg.queries; n++ {
			if err := ctx.Err(); err != nil {
				msg := fmt.Sprintf("interrupted after %d of %d queries (seed %d, query %d not run)", sum.Done, cfg.queries*len(cfg.seeds), seed, n)
				if werr := finish(msg); werr != nil {
					return nil, werr
				}
				return nil, fmt.Errorf("%s: %w", msg, err)
			}
			q := generate(sch, seed, uint64(n))
			for _, sh := range shapes(q) {
				sum.Shapes[sh]++
			}
			var whole *result // colink's answer, for TLP
			for _, name := range []string{"differential", "tlp", "norec"} {
				out := o.checkWith(ctx, name, q, cfg.timeout, whole)
				if err := ctx.Err(); err != nil {
					// Interrupted during the query: its outcome is the interruption's, not
					// an answer; the query is not counted.
					msg := fmt.Sprintf("interrupted after %d of %d queries (seed %d, query %d cut short)", sum.Done, cfg.queries*len(cfg.seeds), seed, n)
					if werr := finish(msg); werr != nil {
						return nil, werr
					}
					return nil, fmt.Errorf("%s: %w", msg, err)
				}
				if name == "differential" && out.leftErr == nil {
					whole = out.left
				}
				if name == "differential" && out.v == differ && out.sig == "wrong answer" {
					why, err := s.recheckReference(ctx, cfg, o, q.sql(duckdbDialect), q.nullKeysSQL(), q.orderKeys(), q.limit > 0, out.left)
					if err != nil {
						return nil, err
					}
					if why != "" {
						file, err := writeFinding(cfg.outDir, seed, n, "reference", q, q, out, 0, "not colink's: "+why)
						if err != nil {
							return nil, err
						}
						sum.ReferenceFaults = append(sum.ReferenceFaults, file)
						fmt.Fprintf(stdout, "seed %d query %d: DuckDB's fault: %s (%s)\n", seed, n, why, file)
						out.v, out.reason = skipped, "the reference's fault (DuckDB agrees with colink when asked otherwise)"
					}
				}
				sum.Oracles[name].add(out)
				if out.v != differ {
					continue
				}
				if s.cl != nil {
					if derr := s.cl.Check(); derr != nil {
						file, _ := writeFinding(cfg.outDir, seed, n, name, q, q, out, 0, "a daemon died: "+derr.Error())
						sum.Findings++
						sum.Files = append(sum.Files, file)
						if werr := finish(fmt.Sprintf("stopped at seed %d, query %d: a daemon died", seed, n)); werr != nil {
							return nil, werr
						}
						return sum, fmt.Errorf("seed %d query %d: %w", seed, n, derr)
					}
				}
				reduced, checks := q, 0
				if cfg.reduce {
					reduced, checks = reduce(ctx, q, func(c *query) bool {
						r := o.check(ctx, name, c, cfg.timeout)
						return r.v == differ && r.sig == out.sig
					}, 300, 3*time.Minute)
				}
				final := o.check(ctx, name, reduced, cfg.timeout)
				if final.v != differ || final.sig != out.sig {
					reduced, final = q, out
				}
				file, err := writeFinding(cfg.outDir, seed, n, name, q, reduced, final, checks, "")
				if err != nil {
					return nil, err
				}
				sum.Findings++
				sum.Files = append(sum.Files, file)
				fmt.Fprintf(stdout, "seed %d query %d: %s oracle: %s (%s)\n", seed, n, name, final.reason, file)
			}
			sum.Done++
			if n%100 == 0 {
				cfg.log.Info("sqlfuzz: progress", "seed", seed, "queries", n, "findings", sum.Findings)
				if err := finish(fmt.Sprintf("running: %d of %d queries checked", sum.Done, cfg.queries*len(cfg.seeds))); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := finish(""); err != nil {
		return nil, err
	}
	return sum, nil
}

// recheckReference asks DuckDB again, two other ways, a query the differential oracle found
// colink and DuckDB disagree on, and returns why the fault is DuckDB's when one of them
// agrees with colink ("" when the finding stands):
//
//   - The same query with MySQL's NULL order as explicit sort keys (nullKeysSQL) instead of
//     NULLS FIRST. DuckDB 1.5 gives NULL rows for ORDER BY k NULLS FIRST LIMIT n over
//     customer ⋈ orders ⟕ lineitem, where the LEFT JOIN has no NULL row (every order has
//     lines); with the explicit key it gives the dates colink gives (seed 4, query 966 at
//     SF 0.1, in two runs).
//   - The same text in a DuckDB opened afresh from the same files, against a long-lived one
//     in a bad state: the fresh one then replaces it for the rest of the run.
//
// duckSQL is the query in DuckDB's dialect, alt its nullKeysSQL, order and limited say how
// answers compare (sameAnswer), and colinkAnswer is colink's.
func (s *setup) recheckReference(ctx context.Context, cfg *config, o *oracles, duckSQL, alt string, order []int, limited bool,
	colinkAnswer *result) (string, error) {
	if alt != "" {
		qctx, cancel := context.WithTimeout(ctx, cfg.timeout)
		res, err := o.duck.query(qctx, alt)
		cancel()
		if err == nil && sameAnswer(colinkAnswer, res, order, limited) == "" {
			return "DuckDB agrees with colink when the NULL order is an explicit sort key instead of NULLS FIRST/LAST: " + alt, nil
		}
	}
	fresh, _, err := openDuckDB(ctx, s.tables, cfg.threads)
	if err != nil {
		return "", fmt.Errorf("a fresh DuckDB for a recheck: %w", err)
	}
	qctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	res, err := fresh.query(qctx, duckSQL)
	cancel()
	if err != nil || sameAnswer(colinkAnswer, res, order, limited) != "" {
		fresh.db.Close()
		return "", nil
	}
	old := s.duck
	fresh.label, fresh.log = old.label, old.log
	fresh.spent, fresh.calls = old.spent, old.calls
	old.db.Close()
	s.duck, o.duck = fresh, fresh
	return "a DuckDB opened afresh with the same rows agrees with colink, and the fuzzer carries on with it", nil
}

// check runs one oracle with the per-query bound.
func (o *oracles) check(ctx context.Context, name string, q *query, timeout time.Duration) outcome {
	return o.checkWith(ctx, name, q, timeout, nil)
}

// checkWith is check with colink's answer to q, when already known, for TLP.
func (o *oracles) checkWith(ctx context.Context, name string, q *query, timeout time.Duration, whole *result) outcome {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch name {
	case "differential":
		return o.differential(ctx, q)
	case "tlp":
		return o.tlp(ctx, q, whole)
	}
	return o.norec(ctx, q)
}

// writeFinding writes a disagreement as a standalone .sql file: the reduced query in both
// dialects, both answers, and the query as generated.
func writeFinding(dir string, seed uint64, n int, oracle string, orig, reduced *query, out outcome, checks int, note string) (string, error) {
	name := filepath.Join(dir, fmt.Sprintf("seed%d-q%d-%s.sql", seed, n, oracle))
	var b strings.Builder
	fmt.Fprintf(&b, "-- sqlfuzz finding: seed %d, query %d, %s oracle\n", seed, n, oracle)
	fmt.Fprintf(&b, "-- what differs: %s\n", out.reason)
	if note != "" {
		fmt.Fprintf(&b, "-- %s\n", note)
	}
	fmt.Fprintf(&b, "-- reduced in %d checks from %d to %d nodes\n\n", checks, size(orig), size(reduced))
	writeSide := func(label string, r *result, err error) {
		fmt.Fprintf(&b, "-- %s:\n", label)
		switch {
		case err != nil:
			fmt.Fprintf(&b, "--   error: %s\n", firstLine(err.Error()))
		case r != nil:
			for _, line := range strings.Split(strings.TrimRight(r.format(40), "\n"), "\n") {
				fmt.Fprintf(&b, "--   %s\n", line)
			}
		}
	}
	fmt.Fprintf(&b, "-- the reduced query (colink, MySQL dialect):\n%s;\n\n", reduced.sql(mysqlDialect))
	if oracle == "differential" {
		fmt.Fprintf(&b, "-- the same in DuckDB's dialect:\n-- %s;\n\n", reduced.sql(duckdbDialect))
	}
	switch oracle {
	case "tlp":
		fmt.Fprintf(&b, "-- TLP partitioning predicate p: %s\n", renderExpr(reduced.tlp))
		for i, p := range partitions(reduced) {
			fmt.Fprintf(&b, "-- partition %d: %s;\n", i+1, p.sql(mysqlDialect))
		}
		b.WriteString("\n")
	case "norec":
		a, c := norecQueries(reduced)
		fmt.Fprintf(&b, "-- NoREC pair:\n-- %s;\n-- %s;\n\n", a.sql(mysqlDialect), c.sql(mysqlDialect))
	}
	writeSide(out.leftName, out.left, out.leftErr)
	writeSide(out.rightName, out.right, out.rightErr)
	fmt.Fprintf(&b, "\n-- as generated:\n-- %s;\n", orig.sql(mysqlDialect))
	return name, atomicfile.Write(name, []byte(b.String()), 0o644)
}

func renderExpr(e expr) string {
	var b strings.Builder
	e.render(mysqlDialect, &b)
	return b.String()
}

// writeSummary writes summary.json and summary.md and prints the Markdown.
func writeSummary(dir string, sum *summary, stdout io.Writer) error {
	js, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, "summary.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# sqlfuzz at SF %g: %d disagreements in %d queries\n\n", sum.SF, sum.Findings, sum.Done)
	if sum.Partial != "" {
		fmt.Fprintf(&b, "**Not a complete run: %s.**\n\n", sum.Partial)
	}
	fmt.Fprintf(&b, "`%s` (%.0f s; seeds %v, %d queries each; Go %s, %s/%s)\n\n", sum.Command, sum.Elapsed, sum.Seeds,
		sum.Queries, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&b, "colink answered %d queries in %.1f s, DuckDB %d in %.1f s (its tables loaded in %.1f s).\n\n",
		sum.Engines["colink"].Queries, sum.Engines["colink"].Seconds, sum.Engines["duckdb"].Queries, sum.Engines["duckdb"].Seconds, sum.DuckLoad)
	b.WriteString("| oracle | compared | agreed | differed | skipped |\n| --- | ---: | ---: | ---: | ---: |\n")
	for _, name := range []string{"differential", "tlp", "norec"} {
		t := sum.Oracles[name]
		skipped := 0
		for _, n := range t.Skipped {
			skipped += n
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", name, t.Compared, t.Agreed, t.Differed, skipped)
	}
	b.WriteString("\nSkipped, by reason (not compared):\n\n| oracle | reason | queries |\n| --- | --- | ---: |\n")
	for _, name := range []string{"differential", "tlp", "norec"} {
		t := sum.Oracles[name]
		reasons := slices.Sorted(maps.Keys(t.Skipped))
		slices.SortStableFunc(reasons, func(a, c string) int { return t.Skipped[c] - t.Skipped[a] })
		for _, r := range reasons {
			fmt.Fprintf(&b, "| %s | %s | %d |\n", name, strings.ReplaceAll(r, "|", `\|`), t.Skipped[r])
		}
	}
	b.WriteString("\nShape mix (queries using each feature; a query uses several):\n\n| feature | queries |\n| --- | ---: |\n")
	shapesSorted := slices.Sorted(maps.Keys(sum.Shapes))
	for _, sh := range shapesSorted {
		fmt.Fprintf(&b, "| %s | %d |\n", sh, sum.Shapes[sh])
	}
	if len(sum.Files) > 0 {
		b.WriteString("\nFindings:\n\n")
		for _, f := range sum.Files {
			fmt.Fprintf(&b, "- %s\n", filepath.Base(f))
		}
	}
	if len(sum.ReferenceFaults) > 0 {
		b.WriteString("\nThe reference's faults (a fresh DuckDB with the same rows agreed with colink; not findings):\n\n")
		for _, f := range sum.ReferenceFaults {
			fmt.Fprintf(&b, "- %s\n", filepath.Base(f))
		}
	}
	md := b.String()
	if err := atomicfile.Write(filepath.Join(dir, "summary.md"), []byte(md), 0o644); err != nil {
		return err
	}
	_, err = io.WriteString(stdout, md)
	return err
}
