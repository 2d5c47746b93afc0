package faults

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/go-sql-driver/mysql"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/link"
)

// The write faults write into a table of their own, so that the TPC-H tables the other
// faults read stay as loaded. Its state is summed up as (rows, sum of k): every write moves
// it from one known state to another, and any other state is a write half done.
const (
	writeTable = "faults_w"
	// initialRows is the table's size as loaded: k = 0 … initialRows-1.
	initialRows = 1000
	// keyStep separates the keys of successive writes: write n adds keys from n·keyStep on,
	// and the DELETE removes every key at or above keyStep.
	keyStep = 1_000_000_000
	// loadRows is the size of a LOAD DATA write.
	loadRows = 20000
	// insertSource is the INSERT … SELECT's source: the lineitems of the first 60,000
	// orders (about 60,000 rows at any scale factor).
	insertSource = "from lineitem where l_orderkey <= 60000"
)

// tableState is the write table's row count and sum of keys.
type tableState struct{ Rows, Sum int64 }

func (s tableState) String() string { return fmt.Sprintf("%d rows, sum(k) %d", s.Rows, s.Sum) }

// writeState is what the write faults know of their table.
type writeState struct {
	model   tableState // the state the last try left (or the load made)
	initial tableState
	next    int64 // the next write's number (keys from next·keyStep)
	// insRows and insSum are the INSERT … SELECT's rows and their keys' sum before the
	// write's offset.
	insRows, insSum int64
	// took is each write kind's healthy duration, measured once: the kill lands within
	// 1.5 times it.
	took map[string]time.Duration
	dir  string // LOAD DATA files
}

// writeKind is one kind of write, with the state it leads to.
type writeKind struct {
	name  string
	stmt  func(w *writeState, base int64) (string, error)
	after func(w *writeState, before tableState, base int64) tableState
}

var writeKinds = []writeKind{
	{"INSERT … SELECT",
		func(w *writeState, base int64) (string, error) {
			return fmt.Sprintf("insert into %s select l_orderkey * 8 + l_linenumber + %d, 'insert' %s", writeTable, base, insertSource), nil
		},
		func(w *writeState, s tableState, base int64) tableState {
			return tableState{s.Rows + w.insRows, s.Sum + w.insSum + w.insRows*base}
		}},
	{"LOAD DATA LOCAL",
		func(w *writeState, base int64) (string, error) {
			path := filepath.Join(w.dir, "load.tsv")
			if err := writeLoadFile(path, base); err != nil {
				return "", err
			}
			return fmt.Sprintf("load data local infile '%s' into table %s", path, writeTable), nil
		},
		func(w *writeState, s tableState, base int64) tableState {
			return tableState{s.Rows + loadRows, s.Sum + loadRows*base + loadRows*(loadRows-1)/2}
		}},
	{"DELETE",
		func(w *writeState, base int64) (string, error) {
			return fmt.Sprintf("delete from %s where k >= %d", writeTable, keyStep), nil
		},
		func(w *writeState, s tableState, base int64) tableState { return w.initial }},
}

// writeLoadFile writes LOAD DATA's tab-separated rows: keys base … base+loadRows-1.
func writeLoadFile(path string, base int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	for i := range int64(loadRows) {
		bw.WriteString(strconv.FormatInt(base+i, 10))
		bw.WriteString("\tload\n")
	}
	return errors.Join(bw.Flush(), f.Close())
}

// loadWriteTable creates the write table on every primproc through the link: initialRows
// rows dealt over them.
func loadWriteTable(ctx context.Context, cl link.Cluster) error {
	k, err := vec.SQLField("k", "bigint", true)
	if err != nil {
		return err
	}
	v, err := vec.SQLField("v", "varchar(32)", true)
	if err != nil {
		return err
	}
	schema := arrow.NewSchema([]arrow.Field{k, v}, nil)
	chunks := len(cl)
	_, err = cl.Load(ctx, []link.TableLoad{{Table: writeTable, Schema: schema, Chunks: chunks, EstimatedRows: initialRows,
		Open: func(c int) (link.ChunkReader, error) {
			b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
			defer b.Release()
			for i := c * initialRows / chunks; i < (c+1)*initialRows/chunks; i++ {
				b.Field(0).(*array.Int64Builder).Append(int64(i))
				b.Field(1).(*array.StringBuilder).Append("initial")
			}
			return &oneBatch{rec: b.NewRecordBatch()}, nil
		}}}, link.LoadOptions{})
	if err != nil {
		return fmt.Errorf("load %s: %w", writeTable, err)
	}
	return nil
}

// oneBatch is a chunk of one record batch.
type oneBatch struct{ rec arrow.RecordBatch }

func (o *oneBatch) Next() (arrow.RecordBatch, error) {
	r := o.rec
	o.rec = nil
	return r, nil
}

func (o *oneBatch) Close() {
	if o.rec != nil {
		o.rec.Release()
	}
}

// readState reads the write table's state, retrying (for a primproc that is restarting or
// a prepared transaction being settled) for up to wait.
func (e *Env) readState(ctx context.Context, wait time.Duration) (tableState, error) {
	deadline := time.Now().Add(wait)
	for {
		got, _, err := e.query(ctx, "select count(*), coalesce(sum(k), 0) from "+writeTable)
		if err == nil {
			return parseState(got)
		}
		if time.Now().After(deadline) || !sleep(ctx, 100*time.Millisecond) {
			return tableState{}, err
		}
	}
}

// parseState reads "rows|sum\n".
func parseState(s string) (tableState, error) {
	f := strings.Split(strings.TrimSpace(s), "|")
	if len(f) != 2 {
		return tableState{}, fmt.Errorf("state %q: want rows|sum", s)
	}
	n, err1 := strconv.ParseInt(f[0], 10, 64)
	sum, err2 := strconv.ParseInt(strings.TrimSuffix(f[1], ".0"), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return tableState{}, fmt.Errorf("state %q: %w", s, err)
	}
	return tableState{n, sum}, nil
}

// setupWrites reads the table's loaded state, the INSERT … SELECT's source and each kind's
// healthy duration (running each once: INSERT, LOAD DATA, then the DELETE that undoes both).
func (e *Env) setupWrites(ctx context.Context) error {
	w := e.write
	st, err := e.readState(ctx, 0)
	if err != nil {
		return fmt.Errorf("read %s: %w", writeTable, err)
	}
	w.initial, w.model = st, st
	src, _, err := e.query(ctx, "select count(*), sum(l_orderkey * 8 + l_linenumber) "+insertSource)
	if err != nil {
		return fmt.Errorf("the INSERT … SELECT's source: %w", err)
	}
	s, err := parseState(src)
	if err != nil {
		return err
	}
	w.insRows, w.insSum = s.Rows, s.Sum
	w.took = map[string]time.Duration{}
	for _, k := range writeKinds {
		base := w.base()
		stmt, err := k.stmt(w, base)
		if err != nil {
			return err
		}
		start := time.Now()
		if _, err := e.exec(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", k.name, err)
		}
		w.took[k.name] = time.Since(start)
		want := k.after(w, w.model, base)
		got, err := e.readState(ctx, 0)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("%s on the healthy cluster: %s, want %s", k.name, got, want)
		}
		w.model = got
	}
	return nil
}

// base takes the next write's key offset.
func (w *writeState) base() int64 {
	w.next++
	return w.next * keyStep
}

// mysqlCode is a MySQL error's number, 0 for another error.
func mysqlCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// Error codes the write faults look for.
const (
	codeOutcomeUnknown = 1397 // the commit's answer was lost: applied or not
	codeNotDurable     = 1180 // applied, but a crash may undo it
	codeInternal       = 1105
)

// before reads the table's state at a try's start; it must be the model's.
func (e *Env) beforeWrite(ctx context.Context, t *Trial) (tableState, bool) {
	st, err := e.readState(ctx, 5*time.Second)
	if err != nil {
		t.fail(UnclearError, "read %s before the write: %s", writeTable, oneLine(err.Error()))
		return st, false
	}
	if st != e.write.model {
		t.fail(WrongAnswer, "%s holds %s before the write, but the last write left %s", writeTable, st, e.write.model)
		e.write.model = st
	}
	return st, true
}

// judgeWrite checks the state after the restart against the write's answer: an
// acknowledged write is there; one that failed with 1397 (outcome unknown) or 1180 (not
// durable) is wholly there or wholly not; one that failed otherwise is not there; and the
// table is never between.
func (e *Env) judgeWrite(t *Trial, err error, before, after, got tableState) {
	code := mysqlCode(err)
	switch {
	case got != before && got != after:
		t.fail(WrongAnswer, "half-written: %s holds %s, neither the state before (%s) nor after (%s) the write", writeTable, got, before, after)
	case err == nil && got != after:
		t.fail(WrongAnswer, "an acknowledged write was lost: %s holds %s, want %s", writeTable, got, after)
	case err != nil && code != codeOutcomeUnknown && code != codeNotDurable && got == after:
		t.fail(WrongAnswer, "the write failed with %q, which says nothing was applied, but it is there", oneLine(err.Error()))
	}
	switch {
	case err == nil:
		t.note("acknowledged; applied")
	case got == after:
		t.note("error %d; applied", code)
	default:
		t.note("error %d; not applied", code)
	}
	e.write.model = got
}

// killPrimprocWrite: kill -9 of a primproc at a random moment of a write.
func killPrimprocWrite(cfg *Config) Fault {
	return Fault{
		Name: "kill-primproc-write",
		Summary: "kill -9 of one primproc (in turn) at a random moment within 1.5 times a write's healthy duration; the writes take turns: " +
			"INSERT … SELECT (60,000 rows), LOAD DATA LOCAL (20,000 rows), DELETE (all rows written); then restart it",
		Criterion: fmt.Sprintf("after the restart the table is wholly before or wholly after the write; an acknowledged write is there; "+
			"one that failed with 1397 (outcome unknown) or 1180 is either; one that failed otherwise is not there, and failed within %v of the kill, naming a primproc; "+
			"the check query answers right", killBound),
		Setup: func(ctx context.Context, e *Env) error {
			if e.write.took == nil {
				return e.setupWrites(ctx)
			}
			return nil
		},
		Try: func(ctx context.Context, e *Env, t *Trial) {
			i := (t.Try - 1) % e.cl.Primprocs()
			kind := writeKinds[(t.Try-1)%len(writeKinds)]
			name := e.pmName(i)
			before, ok := e.beforeWrite(ctx, t)
			if !ok {
				return
			}
			base := e.write.base()
			stmt, err := kind.stmt(e.write, base)
			if err != nil {
				t.fail(UnclearError, "%v", err)
				return
			}
			after := kind.after(e.write, before, base)
			delay := e.jitter(0, e.write.took[kind.name]*3/2)
			t.note("%s; %s killed %.0fms in", kind.name, name, float64(delay)/float64(time.Millisecond))
			res := make(chan result, 1)
			go func() {
				_, err := e.exec(ctx, stmt)
				res <- result{err: err, at: time.Now()}
			}()
			sleep(ctx, delay)
			injected := time.Now()
			if !e.kill(t, name) {
				<-res
				return
			}
			r, ok := e.await(res)
			switch {
			case !ok || (r.err != nil && isHang(r.err)):
				t.fail(Hang, "the write did not end within %v", e.cfg.HangTimeout)
			case r.err == nil:
				t.set(Right)
			default:
				took := r.at.Sub(injected)
				t.errorAt(r.err, took, took <= killBound && namesPrimproc(r.err.Error()))
				if took > killBound {
					t.fail(UnclearError, "the error came %.2fs after the kill (bound %v)", took.Seconds(), killBound)
				}
				if !namesPrimproc(r.err.Error()) {
					t.fail(UnclearError, "the error does not name a primproc")
				}
			}
			if !e.restartPrimproc(ctx, t, i, "", nil) {
				return
			}
			got, err := e.readState(ctx, 15*time.Second)
			if err != nil {
				t.fail(UnclearError, "read %s after the restart: %s", writeTable, oneLine(err.Error()))
				return
			}
			e.judgeWrite(t, r.err, before, after, got)
			e.verify(ctx, t, "after the restart")
		},
	}
}

// spansDecider reports whether keys base … base+n-1 go to the first primproc (a
// two-phase write's decider) and to another.
func spansDecider(base, n int64, primprocs int) bool {
	first, other := false, false
	for k := base; k < base+n; k++ {
		if link.MemberOfInt(k, primprocs) == 0 {
			first = true
		} else {
			other = true
		}
	}
	return first && other
}

// Crash points of a primproc built with test hooks (primproc/testhook.go).
const (
	crashWriteCommitted   = "write-committed"   // a one-phase write's commit is durable, not answered
	crashResolveCommitted = "resolve-committed" // the decider's commit is durable, not answered
	crashWritePrepared    = "write-prepared"    // a two-phase write's prepare is durable, not answered
)

// crashPrimprocCommit: a primproc that dies at an exact moment of a commit.
func crashPrimprocCommit(cfg *Config) Fault {
	return Fault{
		Name: "crash-primproc-commit",
		Summary: "a primproc built with test hooks kills itself (SIGKILL) at a commit point, in turn: a one-row INSERT's one-phase commit durable but unanswered (write-committed); " +
			"a 20-row INSERT over both primprocs, its decider's commit durable but unanswered (resolve-committed), or its prepare durable but unanswered (write-prepared); then restart it on the normal binary",
		Criterion: fmt.Sprintf("committed: the INSERT fails with 1397 'outcome unknown' within %v and after the restart it is there; "+
			"prepared: it fails with a plain 1105 (not 1397) and after the restart it is nowhere; never half-written; the check query answers right", killBound),
		Setup: func(ctx context.Context, e *Env) error {
			if e.write.took == nil {
				return e.setupWrites(ctx)
			}
			return nil
		},
		Try: func(ctx context.Context, e *Env, t *Trial) {
			points := []string{crashWriteCommitted, crashResolveCommitted, crashWritePrepared}
			if e.cl.Primprocs() < 2 {
				points = points[:1] // the two-phase points need two primprocs
			}
			point := points[(t.Try-1)%len(points)]
			before, ok := e.beforeWrite(ctx, t)
			if !ok {
				return
			}
			base := e.write.base()
			n, victim := int64(1), link.MemberOfInt(base, e.cl.Primprocs())
			if point != crashWriteCommitted {
				// Two-phase: rows on the first primproc, the decider, and on another.
				n, victim = 20, 0
				for !spansDecider(base, n, e.cl.Primprocs()) {
					n++
				}
			}
			var rows []string
			for k := range n {
				rows = append(rows, fmt.Sprintf("(%d, 'crash')", base+k))
			}
			stmt := fmt.Sprintf("insert into %s values %s", writeTable, strings.Join(rows, ", "))
			after := tableState{before.Rows + n, before.Sum + n*base + n*(n-1)/2}
			name := e.pmName(victim)
			t.note("%s on %s (%d rows)", point, name, n)
			// The victim comes back on the hooked binary, set to die at the point, and exemgr
			// must have found the new process before the write: a statement sent in the
			// moment before exemgr sees the old connections' end fails, rightly, as sent to
			// a primproc that is down, and never reaches the crash point.
			if !e.kill(t, name) || !e.restartPrimproc(ctx, t, victim, e.cfg.TestHookPrimproc, []string{"COLINK_TESTHOOK_CRASH=" + point}) ||
				!e.awaitUp(ctx, t) {
				return
			}
			mark := e.mark(name)
			start := time.Now()
			_, err := e.exec(ctx, stmt)
			took := time.Since(start)
			crashed := false
			if werr := e.cl.WaitExit(name, 5*time.Second); werr != nil {
				t.fail(UnclearError, "%s did not die at its crash point: %v", name, werr)
				e.kill(t, name)
			} else if _, found := mark.waitLog(ctx, time.Second, "test hook: killing this process", point); !found {
				t.fail(UnclearError, "%s died without logging its crash point", name)
			} else {
				crashed = true
			}
			code := mysqlCode(err)
			switch {
			case err != nil && isHang(err):
				t.fail(Hang, "the INSERT did not end within %v", e.cfg.HangTimeout)
			case err == nil && crashed:
				t.fail(WrongAnswer, "the INSERT was acknowledged though its primproc died before answering")
			case err == nil:
				t.set(Right)
			case point == crashWritePrepared:
				t.errorAt(err, took, code == codeInternal && took <= killBound)
				if code != codeInternal {
					t.fail(UnclearError, "error %d, want a plain 1105: no commit request had left", code)
				}
			default:
				clear := code == codeOutcomeUnknown && strings.Contains(err.Error(), "outcome unknown") && took <= killBound
				t.errorAt(err, took, clear)
				if code != codeOutcomeUnknown || !strings.Contains(err.Error(), "outcome unknown") {
					t.fail(UnclearError, "error %d, want 1397 saying the outcome is unknown", code)
				}
			}
			if err != nil && took > killBound {
				t.fail(UnclearError, "the error came %.2fs after the statement began (bound %v)", took.Seconds(), killBound)
			}
			if !e.restartPrimproc(ctx, t, victim, "", nil) {
				return
			}
			got, rerr := e.readState(ctx, 15*time.Second)
			if rerr != nil {
				t.fail(UnclearError, "read %s after the restart: %s", writeTable, oneLine(rerr.Error()))
				return
			}
			want := after
			if point == crashWritePrepared {
				want = before
			}
			if crashed && got != want && (got == before || got == after) {
				t.fail(WrongAnswer, "after the restart %s holds %s, want %s (the crash point's outcome)", writeTable, got, want)
			}
			e.judgeWrite(t, err, before, after, got)
			e.verify(ctx, t, "after the restart")
		},
	}
}
