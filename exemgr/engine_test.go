package exemgr

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/exemgr/frontend"
	"github.com/colinkdb/colink/internal/rusage"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/link/twophase"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

func TestParseSQLType(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want types.Type
		ok   bool
	}{
		{"int", types.Int32Type, true},
		{"INTEGER", types.Int32Type, true},
		{"bigint", types.Int64Type, true},
		{"decimal(15,2)", types.Dec(15, 2), true},
		{"decimal( 15 , 2 )", types.Dec(15, 2), true},
		{"decimal(10)", types.Dec(10, 0), true},
		{"date", types.DateType, true},
		{"char(25)", types.CharType(25), true},
		{"varchar(152)", types.VarcharType(152), true},
		{"varchar", types.VarcharType(0), true},
		{"double", types.Float64Type, true},
		{"boolean", types.BoolType, true},
		{"datetime", types.DatetimeType(0), true},
		{"datetime(3)", types.DatetimeType(3), true},
		{"timestamp(6)", types.DatetimeType(6), true},
		{"datetime(7)", types.Type{}, false},
		{"decimal(2,5)", types.Type{}, false},
		{"char(x)", types.Type{}, false},
		{"blob", types.Type{}, false},
		{"", types.Type{}, false},
	} {
		got, ok := types.ParseSQLType(tc.in)
		if ok != tc.ok || (ok && !got.Equal(tc.want)) {
			t.Errorf("ParseSQLType(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	// A column without a known SQL type falls back on its engine type.
	got, err := sqlType(link.Column{Name: "x", SQLType: "mystery", Type: vec.Decimal(12, 3)})
	if err != nil || !got.Equal(types.Dec(12, 3)) {
		t.Errorf("fallback: %v, %v", got, err)
	}
}

// TestColumnStats checks what the planner gets from a primproc's column summary: the
// measured distinct values (capped by the rows), the zone maps' range, the NULL count, and
// without a sketch an integer range as the bound or nothing.
func TestColumnStats(t *testing.T) {
	i32 := func(n int64) *vec.Datum { d := vec.Datum{Type: vec.Int32Type, Int: n}; return &d }
	lineitem := link.Table{Name: "lineitem", Rows: 6_001_215}
	ln := link.Column{Name: "l_linenumber", Min: i32(1), Max: i32(7), Distinct: 7.02}
	cs := columnStats(lineitem, ln, types.Int32Type)
	if cs.Distinct != 7 || !cs.HasRange || cs.Min != 1 || cs.Max != 7 || cs.Nulls != 0 {
		t.Errorf("l_linenumber: %+v", cs)
	}
	// A sketch's estimate above the rows is capped.
	key := link.Column{Name: "l_orderkey", Distinct: 6_050_000}
	if cs := columnStats(lineitem, key, types.Int64Type); cs.Distinct != 6_001_215 {
		t.Errorf("l_orderkey: %+v", cs)
	}
	// An estimate above an integer range's width is capped by it.
	qty := link.Column{Name: "ps_availqty", Min: i32(1), Max: i32(9999), Distinct: 10191}
	if cs := columnStats(lineitem, qty, types.Int32Type); cs.Distinct != 9999 {
		t.Errorf("ps_availqty: %+v", cs)
	}
	// Without a sketch, an integer column is bounded by its range.
	other := link.Table{Name: "events", Rows: 1000, Columns: []link.Column{{Name: "kind", Min: i32(10), Max: i32(19), Nulls: 40}}}
	if cs := columnStats(other, other.Columns[0], types.Int32Type); cs.Distinct != 10 || cs.Nulls != 40 {
		t.Errorf("kind in [10,19]: %+v", cs)
	}
	// A string without a sketch stays unknown; with one it has its estimate.
	if cs := columnStats(other, link.Column{Name: "name"}, types.VarcharType(10)); cs.Distinct != 0 || cs.HasRange {
		t.Errorf("a string column: %+v", cs)
	}
	if cs := columnStats(other, link.Column{Name: "name", Distinct: 3.4}, types.VarcharType(10)); cs.Distinct != 3 {
		t.Errorf("a string column with a sketch: %+v", cs)
	}
}

func TestLinkDelta(t *testing.T) {
	before := ipc.ClientStats{Conns: []ipc.ConnStats{
		{ID: 1, Transport: "unix", Traffic: ipc.Traffic{BytesIn: 100, BytesOut: 10, FramesIn: 3, FramesOut: 2, BatchesIn: 1}, ReadSyscalls: 5, WriteSyscalls: 4},
		{ID: 2, Transport: "unix", Traffic: ipc.Traffic{BytesIn: 50}},
	}}
	after := ipc.ClientStats{Conns: []ipc.ConnStats{
		{ID: 1, Transport: "unix", Traffic: ipc.Traffic{BytesIn: 1100, BytesOut: 60, FramesIn: 13, FramesOut: 4, BatchesIn: 6, BatchesOut: 1}, ReadSyscalls: 9, WriteSyscalls: 6},
		{ID: 3, Transport: "unix", Traffic: ipc.Traffic{BytesIn: 7, FramesIn: 1}, ReadSyscalls: 1}, // reconnected: counts from zero
	}}
	var p ProcessStats
	linkDelta(&p, before, after)
	want := ProcessStats{Transport: "unix", BytesIn: 1007, BytesOut: 50, BatchesIn: 5, BatchesOut: 1, Frames: 13, Syscalls: 7}
	if p != want {
		t.Errorf("got %+v\nwant %+v", p, want)
	}
}

func TestQueryStatsRecord(t *testing.T) {
	if rec := queryStatsRecord(nil); rec.NumRows() != 0 || int(rec.NumCols()) != len(queryStatsColumns) {
		t.Fatalf("no statistics yet: %d rows, %d columns", rec.NumRows(), rec.NumCols())
	}
	qs := &QueryStats{Statement: "select 1", Elapsed: 1500 * time.Microsecond, Rows: 3, Processes: []ProcessStats{
		{Process: "exemgr", Usage: rusage.Usage{User: 2 * time.Millisecond, Sys: time.Millisecond}, BytesIn: 10},
		{Process: "primproc0", Peer: "tcp://127.0.0.1:8620", Transport: "tcp", Usage: rusage.Usage{User: 5 * time.Millisecond, Voluntary: 4}, BytesIn: 10, RowGroupsEliminated: 2},
	}}
	rec := queryStatsRecord(qs)
	defer rec.Release()
	if rec.NumRows() != 2 {
		t.Fatalf("%d rows", rec.NumRows())
	}
	col := func(name string) int {
		for i, f := range rec.Schema().Fields() {
			if f.Name == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	str := func(name string, row int) string { return rec.Column(col(name)).(*array.String).Value(row) }
	num := func(name string, row int) int64 { return rec.Column(col(name)).(*array.Int64).Value(row) }
	if str("process", 0) != "exemgr" || str("process", 1) != "primproc0" || str("transport", 1) != "tcp" || str("peer", 1) != "tcp://127.0.0.1:8620" {
		t.Errorf("names: %v", rec)
	}
	if num("elapsed_us", 0) != 1500 || num("elapsed_us", 1) != 1500 || num("user_us", 0) != 2000 || num("sys_us", 0) != 1000 ||
		num("user_us", 1) != 5000 || num("nvcsw", 1) != 4 || num("rows", 0) != 3 || num("rows", 1) != 0 || num("row_groups_eliminated", 1) != 2 {
		t.Errorf("figures: %v", rec)
	}
}

func TestMySQLError(t *testing.T) {
	mem := &vec.Error{Code: vec.CodeOutOfResources, SQLState: "HY000", Err: exec.ErrMemoryLimit, Msg: "query memory limit exceeded: hash join needs 1 MiB more"}
	for _, tc := range []struct {
		err   error
		code  uint16
		state string
	}{
		{sqlerr.New(sqlerr.ErNoSuchTable, "Table 'tpch.x' doesn't exist"), 1146, "42S02"},
		{fmt.Errorf("fragment 2: %w", mem), 1041, "HY000"},
		{fmt.Errorf("primproc x: fragment: %w", vec.OutOfRange("DECIMAL", "a*b")), 1690, "22003"},
		{&peerError{peer: "tcp://h:1", err: ipc.ErrPeerDown}, 1105, "HY000"},
		{fmt.Errorf("stream 3: %w: %w", ipc.ErrCanceled, frontend.ErrKilled), 1317, "70100"},
		{context.Canceled, 1317, "70100"},
		{errors.New("something odd"), 1105, "HY000"},
		// A commit of unknown outcome whose cause is a KILL is still 1397: the write may be
		// applied, which 1317 would deny.
		{&twophase.OutcomeUnknownError{Table: "kv", Txn: "tx1", Peer: "tcp://h:1", Err: fmt.Errorf("stream 3: %w: %w", ipc.ErrCanceled, frontend.ErrKilled)}, 1397, "XAE03"},
		{fmt.Errorf("write kv: %w", &twophase.OutcomeUnknownError{Table: "kv", Txn: "tx1", Peer: "tcp://h:1", Err: ipc.ErrConnClosed}), 1397, "XAE03"},
	} {
		code, state, msg := frontend.AsMySQL(mysqlError(tc.err))
		if code != tc.code || state != tc.state {
			t.Errorf("%v: got %d (%s) %q, want %d (%s)", tc.err, code, state, msg, tc.code, tc.state)
		}
	}
}

func TestNonNegativeInt(t *testing.T) {
	for _, tc := range []struct {
		v    types.Value
		want int64
		ok   bool
	}{
		{types.IntValue(1 << 20), 1 << 20, true},
		{types.IntValue(-1), 0, false},
		{types.StringValue("4096"), 4096, true},
		{types.StringValue("lots"), 0, false},
		{types.NullValue(types.Int64Type), 0, false},
		{types.FloatValue(1.5), 0, false},
	} {
		got, ok := nonNegativeInt(tc.v)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%+v: %d, %v; want %d, %v", tc.v, got, ok, tc.want, tc.ok)
		}
	}
}

// TestNotDurableError: a primproc's commit that is applied but not durable reaches the client
// as 1180 saying so, not as a plain failure.
func TestNotDurableError(t *testing.T) {
	remote := ipc.Errorf(link.CodeNotDurable, "write: table kv: commit: applied but not durable: fsync of /d/pm0 failed: input/output error; a crash may undo it")
	err := fmt.Errorf("write kv: %w", fmt.Errorf("primproc unix:///s: write: %w", remote))
	code, state, msg := frontend.AsMySQL(mysqlError(err))
	want := "Got error during COMMIT: write kv: primproc unix:///s: write: write: table kv: commit: applied but not durable: fsync of /d/pm0 failed: input/output error; a crash may undo it"
	if code != 1180 || state != "HY000" || msg != want {
		t.Errorf("got %d (%s) %q, want 1180 (HY000) %q", code, state, msg, want)
	}
}
