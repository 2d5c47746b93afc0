package frontend

import (
	"context"
	"errors"
	"fmt"
	"github.com/colinkdb/colink/exec/vec"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// fakeEngine answers a fixed set of statements from literal Arrow records, and records what
// happens to the contexts it is given.
type fakeEngine struct {
	mu      sync.Mutex
	queries []string // every statement received, in order

	// started receives the session of each "block" query when it starts; cancelled receives
	// the context.Cause that ended it.
	started   chan *Session
	cancelled chan error
	bigRows   int // rows of "select * from big"
	// closeGate, if set, holds the Close of "slow close"'s result until it is closed.
	closeGate chan struct{}
}

func newFakeEngine() *fakeEngine {
	return &fakeEngine{started: make(chan *Session, 16), cancelled: make(chan error, 16), bigRows: 2_000_000}
}

// tableError is an error type of another package: it carries its MySQL error through the
// MySQLError interface only.
type tableError struct{ table string }

func (e tableError) Error() string { return "no table " + e.table }
func (e tableError) MySQLError() (uint16, string, string) {
	return 1146, "42S02", fmt.Sprintf("Table 'tpch.%s' doesn't exist", e.table)
}

func (f *fakeEngine) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.queries...)
}

func (f *fakeEngine) CheckDatabase(_ context.Context, name string) error {
	if name == "tpch" || name == "other" {
		return nil
	}
	return Errorf(ErrBadDB, "Unknown database '%s'", name)
}

func (f *fakeEngine) FieldList(_ context.Context, s *Session, table, _ string) ([]Column, error) {
	f.mu.Lock()
	f.queries = append(f.queries, "COM_FIELD_LIST "+table)
	f.mu.Unlock()
	if table != "typed" {
		return nil, tableError{table}
	}
	return ColumnsFromSchema(typedSchema())
}

func (f *fakeEngine) Query(ctx context.Context, s *Session, query string) (*Result, error) {
	f.mu.Lock()
	f.queries = append(f.queries, query)
	f.mu.Unlock()
	q := strings.ToLower(query)
	switch {
	case q == "select * from typed", strings.HasPrefix(q, "select * from typed where "):
		return &Result{Rows: newRecordRows(typedRecord())}, nil
	case q == "select * from big":
		return &Result{Rows: newBigRows(ctx, f.bigRows, f.cancelled)}, nil
	case q == "slow close":
		return &Result{Rows: &gatedRows{recordRows: newRecordRows(oneRecord(7)), gate: f.closeGate}}, nil
	case q == "select * from empty":
		return &Result{Rows: newRecordRows(emptyRecord())}, nil
	case q == "slow":
		f.started <- s
		select {
		case <-time.After(300 * time.Millisecond):
			return &Result{Rows: newRecordRows(oneRecord(1))}, nil
		case <-ctx.Done():
			f.cancelled <- context.Cause(ctx)
			return nil, fmt.Errorf("fake scan: %w", context.Cause(ctx))
		}
	case q == "block":
		f.started <- s
		<-ctx.Done()
		f.cancelled <- context.Cause(ctx)
		return nil, fmt.Errorf("fake scan: %w", context.Cause(ctx))
	case q == "fail midway":
		return &Result{Rows: &failingRows{rec: typedRecord()}}, nil
	case q == "select * from nosuch":
		return nil, fmt.Errorf("bind: %w", tableError{"nosuch"})
	case q == "selec 1":
		return nil, Errorf(ErrParse, "You have an error in your SQL syntax near 'selec 1'")
	case q == "boom":
		return nil, errors.New("boom: the engine broke")
	case strings.HasPrefix(q, "create view"), strings.HasPrefix(q, "drop view"):
		return &Result{AffectedRows: 0}, nil
	case q == "select 1":
		return &Result{Rows: newRecordRows(oneRecord(1))}, nil
	case q == "select 2":
		return &Result{Rows: newRecordRows(oneRecord(2))}, nil
	case q == "show databases":
		return &Result{Rows: newRecordRows(stringsRecord("Database", "information_schema", "other", "tpch"))}, nil
	case q == "show tables":
		return &Result{Rows: newRecordRows(stringsRecord("Tables_in_"+s.Database(), "typed"))}, nil
	case q == "warn":
		return &Result{AffectedRows: 3, Warnings: []Warning{{"Warning", 1292, "Truncated incorrect DOUBLE value: 'x'"}}}, nil
	case q == "show query stats":
		return &Result{Rows: newRecordRows(stringsRecord("stats", fmt.Sprint(s.QueryStats())))}, nil
	case q == "remember":
		s.SetQueryStats("elapsed=1ms")
		return nil, nil
	}
	return nil, Errorf(ErrParse, "fake engine does not know %q", query)
}

// recordRows streams literal records.
type recordRows struct {
	recs   []arrow.RecordBatch
	next   int
	closed bool
}

func newRecordRows(recs ...arrow.RecordBatch) *recordRows { return &recordRows{recs: recs} }

// gatedRows is a result whose Close waits for gate (as an engine's close may wait on its
// statement's bookkeeping).
type gatedRows struct {
	*recordRows
	gate chan struct{}
}

func (r *gatedRows) Close() error {
	<-r.gate
	return r.recordRows.Close()
}

func (r *recordRows) Schema() *arrow.Schema { return r.recs[0].Schema() }
func (r *recordRows) Next() (arrow.RecordBatch, error) {
	if r.next >= len(r.recs) {
		return nil, io.EOF
	}
	r.next++
	return r.recs[r.next-1], nil
}
func (r *recordRows) Close() error { r.closed = true; return nil }

// failingRows yields one batch, then an error.
type failingRows struct {
	rec  arrow.RecordBatch
	sent bool
}

func (r *failingRows) Schema() *arrow.Schema { return r.rec.Schema() }
func (r *failingRows) Next() (arrow.RecordBatch, error) {
	if r.sent {
		return nil, Errorf(ErrDivisionByZero, "Division by 0")
	}
	r.sent = true
	return r.rec, nil
}
func (r *failingRows) Close() error { return nil }

// bigRows streams n rows of (int64 id, decimal(15,2) amount, date, varchar) in batches of
// 8192, re-filling one batch so that the engine side holds constant memory.
type bigRows struct {
	ctx       context.Context
	remaining int
	next      int64
	schema    *arrow.Schema
	b         *array.RecordBuilder
	rec       arrow.RecordBatch
	cancelled chan error
}

func newBigRows(ctx context.Context, n int, cancelled chan error) *bigRows {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "amount", Type: &arrow.Decimal64Type{Precision: 15, Scale: 2}},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32},
		{Name: "flag", Type: arrow.BinaryTypes.String},
	}, nil)
	return &bigRows{ctx: ctx, remaining: n, schema: schema, b: array.NewRecordBuilder(memory.DefaultAllocator, schema), cancelled: cancelled}
}

func (r *bigRows) Schema() *arrow.Schema { return r.schema }
func (r *bigRows) Next() (arrow.RecordBatch, error) {
	if err := r.ctx.Err(); err != nil {
		return nil, context.Cause(r.ctx)
	}
	if r.remaining == 0 {
		return nil, io.EOF
	}
	if r.rec != nil {
		r.rec.Release()
	}
	n := min(r.remaining, 8192)
	ids := r.b.Field(0).(*array.Int64Builder)
	amounts := r.b.Field(1).(*array.Decimal64Builder)
	days := r.b.Field(2).(*array.Date32Builder)
	flags := r.b.Field(3).(*array.StringBuilder)
	for i := 0; i < n; i++ {
		ids.Append(r.next)
		amounts.Append(decimal.Decimal64(r.next*7 - 50))
		days.Append(arrow.Date32(8000 + r.next%3000))
		flags.Append("N")
		r.next++
	}
	r.remaining -= n
	r.rec = r.b.NewRecordBatch()
	return r.rec, nil
}
func (r *bigRows) Close() error {
	if r.ctx.Err() != nil {
		r.cancelled <- context.Cause(r.ctx)
	}
	if r.rec != nil {
		r.rec.Release()
	}
	r.b.Release()
	return nil
}

// typedSchema has one column of each type of the common convention, with TPC-H metadata.
func typedSchema() *arrow.Schema {
	md := func(t string) arrow.Metadata { return arrow.NewMetadata([]string{vec.SQLTypeKey}, []string{t}) }
	return arrow.NewSchema([]arrow.Field{
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
		{Name: "price", Type: &arrow.Decimal64Type{Precision: 15, Scale: 2}, Nullable: true, Metadata: md("decimal(15,2)")},
		{Name: "total", Type: &arrow.Decimal128Type{Precision: 38, Scale: 4}, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: md("char(25)")},
		{Name: "comment", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: md("varchar(44)")},
		{Name: "ratio", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "ok", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil)
}

// typedRecord's rows, as the text protocol must print them (NULL for null).
var typedText = [][]string{
	{"1", "9000000000", "1234.56", "12345678901234567890123.4567", "1998-12-01", "Customer#000000001", "a comment", "0.1", "1"},
	{"-7", "-1", "-0.05", "-0.0001", "1970-01-01", "", "tab\there", "1e20", "0"},
	{"NULL", "0", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"},
}

func typedRecord() arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, typedSchema())
	defer b.Release()
	b.Field(0).(*array.Int32Builder).AppendValues([]int32{1, -7, 0}, []bool{true, true, false})
	b.Field(1).(*array.Int64Builder).AppendValues([]int64{9000000000, -1, 0}, nil)
	b.Field(2).(*array.Decimal64Builder).AppendValues([]decimal.Decimal64{123456, -5, 0}, []bool{true, true, false})
	big, _ := decimal128.FromString("12345678901234567890123.4567", 38, 4)
	b.Field(3).(*array.Decimal128Builder).AppendValues([]decimal128.Num{big, decimal128.FromI64(-1), {}}, []bool{true, true, false})
	b.Field(4).(*array.Date32Builder).AppendValues([]arrow.Date32{10561, 0, 0}, []bool{true, true, false})
	b.Field(5).(*array.StringBuilder).AppendValues([]string{"Customer#000000001", "", ""}, []bool{true, true, false})
	b.Field(6).(*array.StringBuilder).AppendValues([]string{"a comment", "tab\there", ""}, []bool{true, true, false})
	b.Field(7).(*array.Float64Builder).AppendValues([]float64{0.1, 1e20, 0}, []bool{true, true, false})
	b.Field(8).(*array.BooleanBuilder).AppendValues([]bool{true, false, false}, []bool{true, true, false})
	return b.NewRecordBatch()
}

func emptyRecord() arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, typedSchema())
	defer b.Release()
	return b.NewRecordBatch()
}

func oneRecord(v int64) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{{Name: fmt.Sprint(v), Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(v)
	return b.NewRecordBatch()
}

func stringsRecord(name string, values ...string) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{{Name: name, Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues(values, nil)
	return b.NewRecordBatch()
}

// testServer is a running server on a loopback port and a unix socket.
type testServer struct {
	srv    *Server
	tcp    string // host:port
	socket string
	stop   func() // cancels Serve's context and waits for Serve to return
}

// startServer starts a server for eng; cfg may adjust the configuration. It stops when the
// test ends.
func startServer(t *testing.T, eng Engine, adjust func(*Config)) *testServer {
	t.Helper()
	// Socket paths are limited to 108 bytes, so not under t.TempDir()'s long names.
	dir, err := os.MkdirTemp("", "fe")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cfg := DefaultConfig()
	cfg.Listen = []string{"127.0.0.1:0"}
	cfg.Socket = filepath.Join(dir, "mysql.sock")
	cfg.ShutdownTimeout = 0 // a test that leaves a statement blocked ends at once
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if adjust != nil {
		adjust(&cfg)
	}
	srv, err := Listen(cfg, eng)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ctx); err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	stop := func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return after its context was cancelled")
		}
	}
	t.Cleanup(stop)
	ts := &testServer{srv: srv, stop: stop}
	for _, a := range srv.Addrs() {
		switch a := a.(type) {
		case *net.TCPAddr:
			ts.tcp = a.String()
		case *net.UnixAddr:
			ts.socket = a.Name
		}
	}
	return ts
}
