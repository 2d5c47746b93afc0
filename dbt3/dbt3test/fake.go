// Package dbt3test owns a fake exemgr for the drivers' tests: exemgr's real MySQL front end
// (exemgr/frontend) over an engine that answers from a table of canned results and reports
// SHOW QUERY STATS rows as a real exemgr would, so that the drivers' protocol handling,
// formatting, statistics parsing and bookkeeping are tested without the SQL engine; and
// the checks of the reports' output that several packages' tests make (WellFormedSVG).
package dbt3test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exemgr/frontend"
)

// Column describes a canned result's column: Type is int64, float64, string, date or
// decimal(P,S).
type Column struct{ Name, Type string }

// Canned is a canned result: columns and rows of values as text ("" with Null for NULL).
type Canned struct {
	Columns []Column
	Rows    [][]string
	// Delay is how long the engine takes before answering.
	Delay time.Duration
	// Err, if set, is returned instead of a result.
	Err string
}

// Engine is a fake exemgr engine. Statements are matched after collapsing whitespace and
// lower-casing; DDL (create view, drop view) and the cache-drop statement succeed; SHOW
// QUERY STATS describes the previous statement with Transport and Primprocs.
type Engine struct {
	mu         sync.Mutex
	results    map[string]Canned
	fallback   *Canned
	transport  string
	primprocs  int
	statements []string
	bySession  map[uint32][]string // session id → its statements, as statements
	lastStats  map[uint32]int      // session id → statements' count at its last statement
	pushdown   map[uint32]string   // session id → its SET colink_pushdown
	flushes    int
}

// NewEngine returns an engine with no canned results, one primproc and transport tcp.
func NewEngine() *Engine {
	return &Engine{results: map[string]Canned{}, transport: "tcp", primprocs: 1, lastStats: map[uint32]int{},
		bySession: map[uint32][]string{}, pushdown: map[uint32]string{}}
}

// SessionStatements returns each session's statements (normalised), by session id; ids
// grow in the order the sessions connected.
func (e *Engine) SessionStatements() map[uint32][]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[uint32][]string, len(e.bySession))
	for id, st := range e.bySession {
		out[id] = append([]string(nil), st...)
	}
	return out
}

// Normalize is how the engine matches statements.
func Normalize(stmt string) string {
	var lines []string
	for _, l := range strings.Split(stmt, "\n") {
		if t := strings.TrimSpace(l); !strings.HasPrefix(t, "--") {
			lines = append(lines, l)
		}
	}
	return strings.ToLower(strings.Join(strings.Fields(strings.Join(lines, " ")), " "))
}

// Set adds a canned result for stmt.
func (e *Engine) Set(stmt string, c Canned) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.results[Normalize(stmt)] = c
}

// SetDefault sets the result of every statement without a canned result of its own.
func (e *Engine) SetDefault(c Canned) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fallback = &c
}

// SetTransport sets what SHOW QUERY STATS reports as the primprocs' transport.
func (e *Engine) SetTransport(t string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.transport = t
}

// Statements returns the statements received so far (normalized), SHOW QUERY STATS included.
func (e *Engine) Statements() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.statements...)
}

// Flushes counts the cache-drop statements received.
func (e *Engine) Flushes() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.flushes
}

var (
	pushdownRE = regexp.MustCompile(`^set colink_pushdown = '(full|filter|scan)'$`)
	ddlRE      = regexp.MustCompile(`^(create|drop) view `)
	flushRE    = regexp.MustCompile(`^select calflushcache\(\)$`)
)

// Query implements frontend.Engine.
func (e *Engine) Query(ctx context.Context, s *frontend.Session, query string) (*frontend.Result, error) {
	q := Normalize(query)
	e.mu.Lock()
	e.statements = append(e.statements, q)
	e.bySession[s.ID()] = append(e.bySession[s.ID()], q)
	if q == "show query stats" {
		res := e.statsLocked(s)
		e.mu.Unlock()
		return res, nil
	}
	e.lastStats[s.ID()] = len(e.statements)
	if m := pushdownRE.FindStringSubmatch(q); m != nil {
		e.pushdown[s.ID()] = m[1]
		e.mu.Unlock()
		return nil, nil
	}
	c, ok := e.results[q]
	if !ok && e.fallback != nil {
		c, ok = *e.fallback, true
	}
	e.mu.Unlock()
	switch {
	case ddlRE.MatchString(q):
		return nil, nil
	case flushRE.MatchString(q):
		e.mu.Lock()
		e.flushes++
		e.mu.Unlock()
		return textResult([]Column{{"calFlushCache()", "int64"}}, [][]string{{"0"}})
	case !ok:
		return nil, frontend.Errorf(frontend.ErrParse, "fake engine: no canned result for %q", q)
	}
	if c.Delay > 0 {
		select {
		case <-time.After(c.Delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if c.Err != "" {
		return nil, frontend.Errorf(1105, "%s", c.Err)
	}
	return textResult(c.Columns, c.Rows)
}

// statsLocked answers SHOW QUERY STATS: one exemgr row and one row per primproc, with
// figures derived from the number of statements so far so that every statement's differ,
// and the session's pushdown level (SET colink_pushdown; full by default).
func (e *Engine) statsLocked(s *frontend.Session) *frontend.Result {
	n := e.lastStats[s.ID()]
	level := e.pushdown[s.ID()]
	if level == "" {
		level = "full"
	}
	cols := []Column{
		{"process", "string"}, {"peer", "string"}, {"transport", "string"}, {"pushdown", "string"}, {"elapsed_us", "int64"},
		{"user_us", "int64"}, {"sys_us", "int64"}, {"nvcsw", "int64"}, {"nivcsw", "int64"},
		{"bytes_out", "int64"}, {"bytes_in", "int64"}, {"batches_out", "int64"}, {"batches_in", "int64"},
		{"frames", "int64"}, {"syscalls", "int64"}, {"row_groups_eliminated", "int64"}, {"rows", "int64"},
	}
	itoa := func(v int) string { return strconv.Itoa(v) }
	rows := [][]string{{"exemgr", "", "", level, itoa(1000 * n), itoa(100 * n), itoa(10 * n), itoa(n), "1", "0", "0", "0", "0", "0", "0", "0", "1"}}
	for i := range e.primprocs {
		rows = append(rows, []string{"primproc" + itoa(i), "tcp://127.0.0.1:" + itoa(8620+i), e.transport, level, itoa(1000 * n),
			itoa(200 * n), itoa(20 * n), itoa(2 * n), "2", itoa(64 * n), itoa(4096 * n), "1", itoa(3 * n), itoa(5 * n), itoa(7 * n), "4", "0"})
	}
	res, _ := textResult(cols, rows)
	return res
}

// textResult builds a one-batch result.
func textResult(cols []Column, rows [][]string) (*frontend.Result, error) {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		dt, err := arrowType(c.Type)
		if err != nil {
			return nil, err
		}
		fields[i] = arrow.Field{Name: c.Name, Type: dt, Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, row := range rows {
		for i, v := range row {
			if err := appendValue(b.Field(i), v); err != nil {
				return nil, fmt.Errorf("column %s: %w", cols[i].Name, err)
			}
		}
	}
	return &frontend.Result{Rows: frontend.RecordRows(b.NewRecordBatch())}, nil
}

// Null is the canned value that stands for NULL.
const Null = "\x00NULL"

var decimalRE = regexp.MustCompile(`^decimal\((\d+),(\d+)\)$`)

func arrowType(t string) (arrow.DataType, error) {
	switch t {
	case "int64":
		return arrow.PrimitiveTypes.Int64, nil
	case "float64":
		return arrow.PrimitiveTypes.Float64, nil
	case "string":
		return arrow.BinaryTypes.String, nil
	case "date":
		return arrow.FixedWidthTypes.Date32, nil
	}
	if m := decimalRE.FindStringSubmatch(t); m != nil {
		p, _ := strconv.Atoi(m[1])
		s, _ := strconv.Atoi(m[2])
		return &arrow.Decimal64Type{Precision: int32(p), Scale: int32(s)}, nil
	}
	return nil, fmt.Errorf("fake engine: unknown type %q", t)
}

func appendValue(b array.Builder, v string) error {
	if v == Null {
		b.AppendNull()
		return nil
	}
	switch b := b.(type) {
	case *array.Int64Builder:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return err
		}
		b.Append(n)
	case *array.Float64Builder:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return err
		}
		b.Append(f)
	case *array.StringBuilder:
		b.Append(v)
	case *array.Date32Builder:
		t, err := time.Parse("2006-01-02", v)
		if err != nil {
			return err
		}
		b.Append(arrow.Date32FromTime(t))
	case *array.Decimal64Builder:
		scale := int(b.Type().(*arrow.Decimal64Type).Scale)
		whole, frac, _ := strings.Cut(v, ".")
		if len(frac) != scale {
			return fmt.Errorf("decimal %q: want %d decimals", v, scale)
		}
		n, err := strconv.ParseInt(whole+frac, 10, 64)
		if err != nil {
			return err
		}
		b.Append(arrowDecimal64(n))
	default:
		return fmt.Errorf("fake engine: builder %T", b)
	}
	return nil
}

// CheckDatabase implements frontend.Engine: every database exists.
func (e *Engine) CheckDatabase(ctx context.Context, name string) error { return nil }

// Serve runs the front end over e on a unix socket in a temporary directory until the test
// ends, and returns the socket's path.
func Serve(t testing.TB, e *Engine) string {
	t.Helper()
	dir, err := shortTempDir(t)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "mysql.sock")
	cfg := frontend.DefaultConfig()
	cfg.Listen = nil
	cfg.Socket = sock
	cfg.Logger = slog.New(slog.DiscardHandler)
	srv, err := frontend.Listen(cfg, e)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return sock
}
