package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/colinkdb/colink/bench/duckdb/internal/tpchfiles"
	"github.com/colinkdb/colink/dbt3/answers"
	"github.com/colinkdb/colink/dbt3/measure"
	"github.com/colinkdb/colink/internal/rusage"
)

// Storage modes: where DuckDB's tables live.
const (
	// storageNative loads the Parquet files once into DuckDB's own tables, in a database
	// file, and queries those: what a user who picks DuckDB does.
	storageNative = "native"
	// storageParquet queries views over read_parquet of the files: DuckDB decodes the
	// files on every query.
	storageParquet = "parquet"
)

// config is one benchmark run's settings.
type config struct {
	DataDir string
	// Storage is storageNative or storageParquet ("" is native).
	Storage string
	// DBPath, native only, is the database file to load the tables into and keep; "" loads
	// into a temporary one, removed at the end. It must not exist yet.
	DBPath  string
	Threads int // DuckDB's worker threads (SET threads)
	Runs    int // rounds: round 1 cold, the others warm
	Queries []query
	// DropCaches drops the OS page cache (root only) before each cold query.
	DropCaches bool
	// AnswersDir, if set, holds qNN.csv answers that every result is checked against.
	AnswersDir string
	// Colink, if set, is the MySQL address of a running exemgr holding the same data: every
	// query then runs on colink too, the engines alternating query by query (colinkSide).
	Colink string
	// Print, if set, receives each query's round-1 result in the answer files' psv form.
	Print   io.Writer
	Log     *slog.Logger
	Command string // the command line, for the record
}

// outcome is what the runner learnt about one query over all rounds.
type outcome struct {
	Query *query
	// Check is "ok", "mismatch", "no answer" or "" (not checked).
	Check string
	Diffs []string // the first round's differences from the answer, if any
}

// dropCachesPath is the kernel's knob for dropping the page, dentry and inode caches.
const dropCachesPath = "/proc/sys/vm/drop_caches"

// source is where an instance's tables come from: views over the Parquet files, or the
// native tables of a database file they were loaded into (loadNative).
type source struct {
	storage string
	tables  []tpchfiles.Table
	dbPath  string // native: the loaded database file
}

// instance is one DuckDB database: its own buffer manager and caches, the eight tables
// (views over the Parquet files, or a database file's native tables), and one connection.
type instance struct {
	db   *sql.DB
	conn *sql.Conn
}

// openInstance starts a fresh DuckDB database with the given threads over src's tables.
func openInstance(ctx context.Context, src source, threads int) (*instance, error) {
	path := ""
	if src.storage == storageNative {
		path = src.dbPath
	}
	connector, err := duckdb.NewConnector(path, nil)
	if err != nil {
		return nil, fmt.Errorf("duckdb: open database %s: %w", path, err)
	}
	db := sql.OpenDB(connector) // db.Close closes the connector, and with it the database
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("duckdb: connect: %w", err)
	}
	in := &instance{db: db, conn: conn}
	setup := []string{"set threads = " + strconv.Itoa(threads)}
	if src.storage == storageParquet {
		for _, t := range src.tables {
			setup = append(setup, tpchfiles.ViewSQL(t))
		}
	}
	for _, s := range setup {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			in.close()
			return nil, fmt.Errorf("duckdb: %s: %w", s, err)
		}
	}
	return in, nil
}

// loadNative loads the Parquet files into native tables of a new database file at path and
// returns the load's wall time and the process's CPU for it. The file appears whole or not
// at all: the tables are loaded and checkpointed into path's temporary sibling, which is
// renamed to path once DuckDB has closed it.
func loadNative(ctx context.Context, tables []tpchfiles.Table, path string, threads int) (time.Duration, measure.Usage, error) {
	tmp := path + ".loading"
	os.Remove(tmp)
	os.Remove(tmp + ".wal")
	before, err := rusage.Self()
	if err != nil {
		return 0, measure.Usage{}, err
	}
	start := time.Now()
	err = func() error {
		in, err := openInstance(ctx, source{storage: storageNative, dbPath: tmp}, threads)
		if err != nil {
			return err
		}
		defer in.close()
		for _, t := range tables {
			if _, err := in.conn.ExecContext(ctx, tpchfiles.LoadSQL(t)); err != nil {
				return fmt.Errorf("duckdb: load %s: %w", t.Name, err)
			}
		}
		if _, err := in.conn.ExecContext(ctx, "checkpoint"); err != nil {
			return fmt.Errorf("duckdb: checkpoint: %w", err)
		}
		return nil
	}()
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		os.Remove(tmp + ".wal")
		return 0, measure.Usage{}, err
	}
	elapsed := time.Since(start)
	after, err := rusage.Self()
	if err != nil {
		return 0, measure.Usage{}, err
	}
	return elapsed, usage(after, before), nil
}

func (in *instance) close() {
	in.conn.Close()
	in.db.Close()
}

// describe returns DuckDB's version, the settings that decide what it caches between
// queries, and the scale factor of the data (suppliers / 10 000).
func (in *instance) describe(ctx context.Context) (version string, settings []string, sf float64, err error) {
	if err = in.conn.QueryRowContext(ctx, "select version()").Scan(&version); err != nil {
		return "", nil, 0, fmt.Errorf("duckdb: version: %w", err)
	}
	rows, err := in.conn.QueryContext(ctx, `select name, value from duckdb_settings() where name in
		('threads', 'memory_limit', 'enable_external_file_cache', 'parquet_metadata_cache',
		 'prefetch_all_parquet_files', 'enable_object_cache') order by name`)
	if err != nil {
		return "", nil, 0, fmt.Errorf("duckdb: settings: %w", err)
	}
	for rows.Next() {
		var name, value string
		if err = rows.Scan(&name, &value); err != nil {
			rows.Close()
			return "", nil, 0, fmt.Errorf("duckdb: settings: %w", err)
		}
		settings = append(settings, name+"="+value)
	}
	rows.Close()
	if err = rows.Err(); err != nil {
		return "", nil, 0, fmt.Errorf("duckdb: settings: %w", err)
	}
	var suppliers int64
	if err = in.conn.QueryRowContext(ctx, "select count(*) from supplier").Scan(&suppliers); err != nil {
		return "", nil, 0, fmt.Errorf("duckdb: count suppliers: %w", err)
	}
	return version, settings, float64(suppliers) / 10000, nil
}

// usage is the process's resource use between two getrusage(RUSAGE_SELF) readings: every
// DuckDB worker thread, and the Go runtime's threads, count, since DuckDB runs in this process.
func usage(later, earlier rusage.Usage) measure.Usage {
	d := later.Sub(earlier)
	return measure.Usage{User: d.User.Seconds(), Sys: d.Sys.Seconds(), Voluntary: d.Voluntary, Involuntary: d.Involuntary}
}

// rawResult is a statement's rows as scanned, before formatting.
type rawResult struct {
	columns []string
	types   []string
	rows    [][]any
}

// run executes q's statements and measures them: wall time from the first statement's start
// to the last row read, and the process's getrusage delta. The result is formatted after the
// clock stops. A failed statement ends the script, but later statements that return no rows
// (Q15's drop view) still run, unmeasured, so the next round finds no stale view.
func (in *instance) run(ctx context.Context, q *query) (measure.Sample, *table, error) {
	sample := measure.Sample{System: "duckdb", Query: q.Name}
	runtime.GC() // no collection of earlier garbage inside the measured interval
	before, err := rusage.Self()
	if err != nil {
		return sample, nil, err
	}
	start := time.Now()
	var last *rawResult
	var rows int64
	failed := -1
	for i, stmt := range q.Statements {
		if !returnsRows(stmt) {
			if _, err = in.conn.ExecContext(ctx, stmt); err != nil {
				failed = i
				break
			}
			continue
		}
		var res *rawResult
		if res, err = in.query(ctx, stmt); err != nil {
			failed = i
			break
		}
		rows += int64(len(res.rows))
		last = res
	}
	elapsed := time.Since(start)
	after, uerr := rusage.Self()
	if uerr != nil {
		return sample, nil, uerr
	}
	sample.Elapsed = elapsed.Seconds()
	sample.Rows = rows
	sample.Procs = map[string]measure.Usage{"duckdb": usage(after, before)}
	if failed >= 0 {
		for _, stmt := range q.Statements[failed+1:] {
			if !returnsRows(stmt) {
				in.conn.ExecContext(ctx, stmt) // best effort: the error that matters is err
			}
		}
		sample.Error = err.Error()
		return sample, nil, fmt.Errorf("%s statement %d: %w", q.Name, failed+1, err)
	}
	if last == nil {
		return sample, &table{}, nil
	}
	t := &table{Columns: last.columns, Types: last.types, Rows: make([][]string, len(last.rows))}
	for i, r := range last.rows {
		cells := make([]string, len(r))
		for j, v := range r {
			cells[j] = formatCell(v)
		}
		t.Rows[i] = cells
	}
	return sample, t, nil
}

// query runs one statement and reads all its rows.
func (in *instance) query(ctx context.Context, stmt string) (*rawResult, error) {
	rs, err := in.conn.QueryContext(ctx, stmt)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	cts, err := rs.ColumnTypes()
	if err != nil {
		return nil, err
	}
	res := &rawResult{columns: make([]string, len(cts)), types: make([]string, len(cts))}
	for i, ct := range cts {
		res.columns[i] = ct.Name()
		res.types[i] = ct.DatabaseTypeName()
	}
	ptrs := make([]any, len(cts))
	for rs.Next() {
		vals := make([]any, len(cts))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			return nil, err
		}
		res.rows = append(res.rows, vals)
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// dropOSCaches writes back dirty pages and drops the kernel's page cache, so that the next
// read of the Parquet files comes from the device.
func dropOSCaches() error {
	syscall.Sync()
	if err := os.WriteFile(dropCachesPath, []byte("3\n"), 0); err != nil {
		return fmt.Errorf("drop the page cache: %w", err)
	}
	return nil
}

// runBench runs cfg.Queries for cfg.Runs rounds and returns the record of every sample and
// what each query's check found. Round 1 is cold: each query runs in a DuckDB database opened
// for it alone (after the page cache is dropped, with DropCaches). Rounds 2 … Runs are warm:
// one database, opened after round 1, runs them all. A query that fails is recorded with its
// error and the run goes on; the returned error then says how many failed.
func runBench(ctx context.Context, cfg config) (*measure.Run, []outcome, error) {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Threads < 1 || cfg.Runs < 1 || len(cfg.Queries) == 0 {
		return nil, nil, fmt.Errorf("need threads ≥ 1, runs ≥ 1 and a query (got %d, %d, %d)",
			cfg.Threads, cfg.Runs, len(cfg.Queries))
	}
	tables, err := tpchfiles.Find(cfg.DataDir)
	if err != nil {
		return nil, nil, err
	}
	if cfg.DropCaches {
		f, err := os.OpenFile(dropCachesPath, os.O_WRONLY, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("--drop-caches needs to write %s (as root): %w", dropCachesPath, err)
		}
		f.Close()
	}

	started := time.Now()
	loadBefore := loadAverage()
	src := source{storage: cfg.Storage, tables: tables, dbPath: cfg.DBPath}
	if src.storage == "" {
		src.storage = storageNative
	}
	var loadNote string
	if src.storage == storageNative {
		if src.dbPath == "" {
			dir, err := os.MkdirTemp("", "duckdb-bench-")
			if err != nil {
				return nil, nil, err
			}
			defer os.RemoveAll(dir)
			src.dbPath = filepath.Join(dir, "tpch.duckdb")
		} else if _, err := os.Stat(src.dbPath); err == nil {
			return nil, nil, fmt.Errorf("--db %s exists: remove it or name another file (the run loads a new one)", src.dbPath)
		}
		log.Info("duckdb: loading the tables", "into", src.dbPath)
		took, u, err := loadNative(ctx, tables, src.dbPath, cfg.Threads)
		if err != nil {
			return nil, nil, err
		}
		var size int64
		if st, err := os.Stat(src.dbPath); err == nil {
			size = st.Size()
		}
		loadNote = fmt.Sprintf("load: %.3f s wall, %.3f s user + %.3f s sys CPU, into a %.1f MB database file (create table … as select * from read_parquet, then checkpoint)",
			took.Seconds(), u.User, u.Sys, float64(size)/1e6)
		log.Info("duckdb: loaded", "elapsed_s", round3(took.Seconds()), "cpu_s", round3(u.CPU()), "bytes", size)
	}
	setup, err := openInstance(ctx, src, cfg.Threads)
	if err != nil {
		return nil, nil, err
	}
	schema, err := tpchfiles.CheckSchemas(ctx, setup.conn, tables)
	if err != nil {
		setup.close()
		return nil, nil, fmt.Errorf("the Parquet files in %s do not read as the TPC-H schema: %w", cfg.DataDir, err)
	}
	version, settings, sf, err := setup.describe(ctx)
	setup.close()
	if err != nil {
		return nil, nil, err
	}
	log.Info("duckdb", "version", version, "sf", sf, "threads", cfg.Threads, "settings", strings.Join(settings, " "))

	run := &measure.Run{
		ID:      measure.RunID("duckdb", sf, started),
		Driver:  "duckdb",
		Command: cfg.Command,
		Started: started.UTC(),
		SF:      sf,
		Threads: cfg.Threads,
		Host:    measure.LocalHost(),
		Builds:  measure.Builds("duckdb-bench", nil),
		Storage: src.storage,
		Notes: []string{
			"duckdb " + version + " (github.com/duckdb/duckdb-go/v2, in-process); settings: " + strings.Join(settings, ", "),
		},
	}
	if src.storage == storageNative {
		run.Notes = append(run.Notes, "tables: DuckDB's own (native storage), loaded once from the Parquet files in "+cfg.DataDir, loadNote,
			"DuckDB sees them as:")
	} else {
		run.Notes = append(run.Notes, "tables: views over read_parquet of the files in "+cfg.DataDir+" (decoded on every query); DuckDB sees them as:")
	}
	for _, line := range schema {
		run.Notes = append(run.Notes, "  "+line)
	}
	coldNote := "round 1 is cold: each query runs in a new in-memory DuckDB database over the views (no DuckDB cache survives); "
	if src.storage == storageNative {
		coldNote = "round 1 is cold: each query runs in a new DuckDB instance opened on the database file (its buffer pool empty); "
	}
	if cfg.DropCaches {
		coldNote += "the OS page cache was dropped (sync; echo 3 > " + dropCachesPath + ") before each cold query"
	} else {
		coldNote += "the OS page cache was NOT dropped, so the files may be read from memory"
	}
	run.Notes = append(run.Notes, coldNote,
		"rounds 2 and later are warm: one DuckDB database runs them all, after round 1 has read every file",
		"CPU and context switches: getrusage(RUSAGE_SELF) deltas of the process running DuckDB (all its threads)")
	for i := range cfg.Queries {
		for _, a := range cfg.Queries[i].Adaptations {
			run.Notes = append(run.Notes, "adapted "+cfg.Queries[i].Name+": "+a)
		}
	}

	outcomes := make([]outcome, len(cfg.Queries))
	for i := range cfg.Queries {
		outcomes[i].Query = &cfg.Queries[i]
	}
	failures := 0
	record := func(i, round int, s measure.Sample, t *table, err error) {
		q := &cfg.Queries[i]
		s.Round, s.Cold = round, round == 1
		run.Samples = append(run.Samples, s)
		u := s.Procs["duckdb"]
		if err != nil {
			failures++
			log.Error("query failed", "query", q.Name, "round", round, "err", err)
			return
		}
		log.Info("sample", "query", q.Name, "round", round, "cold", s.Cold,
			"elapsed_s", round3(s.Elapsed), "user_s", round3(u.User), "sys_s", round3(u.Sys),
			"nvcsw", u.Voluntary, "nivcsw", u.Involuntary, "rows", s.Rows)
		if cfg.Print != nil && round == 1 {
			fmt.Fprintf(cfg.Print, "-- %s\n", q.Name)
			writePSV(cfg.Print, t)
			fmt.Fprintln(cfg.Print)
		}
		if cfg.AnswersDir != "" {
			checkOutcome(&outcomes[i], cfg.AnswersDir, round, t, log)
		}
	}

	var col *colinkSide
	if cfg.Colink != "" {
		if col, err = openColink(ctx, cfg.Colink, sf, cfg.Queries, cfg.AnswersDir); err != nil {
			return nil, nil, err
		}
		defer col.close()
		run.Notes = append(run.Notes, "colink: exemgr at "+cfg.Colink+" ("+col.version+"), the same queries unadapted, in the same rounds: "+
			"the engines take turns query by query, the first alternating from query to query and round to round; a cold colink sample follows calFlushCache(); "+
			"colink's CPU and context switches are each daemon's, from SHOW QUERY STATS")
	}
	// recordColink runs query i of round on colink and returns its sample's index in
	// run.Samples and its result (nil if it failed).
	recordColink := func(i, round int) (int, *answers.Table) {
		s, res, err := col.run(ctx, &cfg.Queries[i], round == 1)
		s.Round, s.Cold = round, round == 1
		run.Samples = append(run.Samples, s)
		if err != nil {
			failures++
			log.Error("colink query failed", "query", cfg.Queries[i].Name, "round", round, "err", err)
			return len(run.Samples) - 1, nil
		}
		return len(run.Samples) - 1, res
	}
	// both runs query i of round on DuckDB (in) and, with a colink side, on colink, in the
	// alternating order; a colink result without a reference answer must equal DuckDB's.
	both := func(in *instance, i, round int) {
		colinkFirst := col != nil && firstIsColink(round, i)
		var at int
		var res *answers.Table
		if colinkFirst {
			at, res = recordColink(i, round)
		}
		s, t, err := in.run(ctx, &cfg.Queries[i])
		record(i, round, s, t, err)
		if col == nil {
			return
		}
		if !colinkFirst {
			at, res = recordColink(i, round)
		}
		cs := &run.Samples[at]
		if !checkAgainstDuckDB(cs, res, t) {
			failures++
			log.Error("colink's result differs from DuckDB's", "query", cfg.Queries[i].Name, "round", round, "err", cs.Error)
			return
		}
		if res != nil {
			log.Info("sample", "system", "colink", "query", cfg.Queries[i].Name, "round", round, "cold", cs.Cold,
				"elapsed_s", round3(cs.Elapsed), "rows", cs.Rows, "verified", cs.Verified)
		}
	}

	for i := range cfg.Queries {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		in, err := openInstance(ctx, src, cfg.Threads)
		if err != nil {
			return nil, nil, err
		}
		if cfg.DropCaches {
			if err := dropOSCaches(); err != nil {
				in.close()
				return nil, nil, err
			}
		}
		both(in, i, 1)
		in.close()
	}
	if cfg.Runs > 1 {
		in, err := openInstance(ctx, src, cfg.Threads)
		if err != nil {
			return nil, nil, err
		}
		defer in.close()
		for round := 2; round <= cfg.Runs; round++ {
			for i := range cfg.Queries {
				if err := ctx.Err(); err != nil {
					return nil, nil, err
				}
				both(in, i, round)
			}
		}
	}
	run.Notes = append(run.Notes, "load average (1, 5, 15 min) at the start: "+loadBefore+"; at the end: "+loadAverage()+
		" (other processes competing for the CPUs make elapsed times noisy; CPU times less so)")
	if failures > 0 {
		engines := 1
		if col != nil {
			engines = 2
		}
		return run, outcomes, fmt.Errorf("%d of %d query executions failed", failures, engines*cfg.Runs*len(cfg.Queries))
	}
	return run, outcomes, nil
}

// checkOutcome compares one round's result with the query's answer file and records what it
// found in o: a mismatch in any round makes the query's check a mismatch.
func checkOutcome(o *outcome, dir string, round int, t *table, log *slog.Logger) {
	path := answerPath(dir, o.Query)
	if path == "" {
		o.Check = "no answer"
		return
	}
	want, err := readPSV(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			o.Check = "no answer"
			return
		}
		o.Check = "mismatch"
		o.Diffs = []string{err.Error()}
		log.Error("check", "query", o.Query.Name, "err", err)
		return
	}
	diffs := compareResult(t, want)
	if len(diffs) == 0 {
		if o.Check == "" {
			o.Check = "ok"
		}
		return
	}
	if o.Check != "mismatch" {
		o.Diffs = diffs
	}
	o.Check = "mismatch"
	log.Error("result differs from the answer", "query", o.Query.Name, "round", round, "answer", path,
		"differences", strings.Join(diffs, "; "))
}

// loadAverage returns the system's 1, 5 and 15 minute load averages, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }
