package frontend

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"github.com/colinkdb/colink/exec/vec"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestLargePacketsAreSplit: a row of 2^24-1 bytes or more continues in further packets, the
// last shorter than 2^24-1 (empty if need be).
func TestLargePacketsAreSplit(t *testing.T) {
	for _, size := range []int{maxPayload - 1, maxPayload, maxPayload + 5} {
		var out bytes.Buffer
		w := newPacketWriter(&out)
		w.reset(3)
		w.begin()
		w.buf = append(w.buf, bytes.Repeat([]byte{'x'}, size)...)
		if err := w.end(); err != nil {
			t.Fatal(err)
		}
		w.flush()
		var lengths []int
		var seqs []byte
		b := out.Bytes()
		total := 0
		for len(b) > 0 {
			n := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
			lengths, seqs = append(lengths, n), append(seqs, b[3])
			total += n
			b = b[4+n:]
		}
		if total != size || lengths[len(lengths)-1] >= maxPayload || seqs[0] != 3 || int(seqs[len(seqs)-1]) != 3+len(seqs)-1 {
			t.Errorf("payload of %d bytes: packets %v, sequence %v", size, lengths, seqs)
		}
		if w.seq != byte(3+len(seqs)) {
			t.Errorf("next sequence %d after %d packets from 3", w.seq, len(seqs))
		}
	}
}

func TestColumnFromField(t *testing.T) {
	md := func(v string) arrow.Metadata { return arrow.NewMetadata([]string{vec.SQLTypeKey}, []string{v}) }
	for _, c := range []struct {
		field arrow.Field
		want  Column
	}{
		{arrow.Field{Name: "k", Type: arrow.PrimitiveTypes.Int64}, Column{Name: "k", Type: TypeLongLong, Length: 20, Flags: FlagNotNull | FlagNum | FlagBinary}},
		{arrow.Field{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, Column{Name: "n", Type: TypeLong, Length: 11, Flags: FlagNum | FlagBinary}},
		{arrow.Field{Name: "p", Type: &arrow.Decimal64Type{Precision: 15, Scale: 2}}, Column{Name: "p", Type: TypeNewDecimal, Length: 17, Decimals: 2, Flags: FlagNotNull | FlagNum | FlagBinary}},
		{arrow.Field{Name: "s", Type: &arrow.Decimal128Type{Precision: 38, Scale: 0}, Nullable: true}, Column{Name: "s", Type: TypeNewDecimal, Length: 39, Flags: FlagNum | FlagBinary}},
		{arrow.Field{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true}, Column{Name: "d", Type: TypeDate, Length: 10, Flags: FlagBinary}},
		{arrow.Field{Name: "c", Type: arrow.BinaryTypes.String, Metadata: md("CHAR(25)")}, Column{Name: "c", Type: TypeString, Length: 25, Flags: FlagNotNull}},
		{arrow.Field{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: md("varchar(117)")}, Column{Name: "v", Type: TypeVarString, Length: 117}},
		{arrow.Field{Name: "e", Type: arrow.BinaryTypes.String, Nullable: true}, Column{Name: "e", Type: TypeVarString, Length: 255}},
		{arrow.Field{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, Column{Name: "f", Type: TypeDouble, Length: 22, Decimals: 31, Flags: FlagNum | FlagBinary}},
		{arrow.Field{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}, Column{Name: "b", Type: TypeTiny, Length: 1, Flags: FlagNum | FlagBinary}},
		{arrow.Field{Name: "u", Type: arrow.PrimitiveTypes.Uint32, Nullable: true}, Column{Name: "u", Type: TypeLong, Length: 10, Flags: FlagNum | FlagBinary | FlagUnsigned}},
	} {
		got, err := ColumnFromField(c.field)
		if err != nil || got != c.want {
			t.Errorf("ColumnFromField(%v) = %+v, %v; want %+v", c.field, got, err, c.want)
		}
	}
	_, err := ColumnFromField(arrow.Field{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}})
	if code, _, msg := AsMySQL(err); code != ErrUnknownError || !strings.Contains(msg, `"ts"`) {
		t.Errorf("unsupported type: %v", err)
	}
}

func TestAsMySQL(t *testing.T) {
	wrapped := Errorf(ErrNoSuchTable, "Table '%s' doesn't exist: %w", "x", errors.New("catalog miss"))
	for _, c := range []struct {
		err   error
		code  uint16
		state string
	}{
		{wrapped, 1146, "42S02"},
		{errors.Join(errors.New("context"), wrapped), 1146, "42S02"},
		{tableError{"t"}, 1146, "42S02"},
		{&Error{Code: 1054, Message: "Unknown column 'x' in 'field list'"}, 1054, "42S22"},
		{context.Canceled, 1317, "70100"},
		{ErrKilled, 1317, "70100"},
		{Errorf(ErrQueryMemoryLimit, "query over its memory bound"), 1041, "HY001"},
		{errors.New("anything"), 1105, "HY000"},
	} {
		code, state, _ := AsMySQL(c.err)
		if code != c.code || state != c.state {
			t.Errorf("AsMySQL(%v) = %d %s, want %d %s", c.err, code, state, c.code, c.state)
		}
	}
	if !errors.Is(wrapped, wrapped.Err) || wrapped.Err.Error() != "catalog miss" {
		t.Errorf("Errorf does not wrap its %%w operand")
	}
}

// TestShutdownWaitsForStatements: with a shutdown timeout, a running statement finishes
// and its client gets its rows; an idle connection closes at once, and no new client is
// accepted meanwhile.
func TestShutdownWaitsForStatements(t *testing.T) {
	eng := newFakeEngine()
	ts := startServer(t, eng, func(c *Config) { c.ShutdownTimeout = 5 * time.Second })
	db := open(t, ts, "tcp", "root", "", "")
	db.SetMaxIdleConns(0)
	idle, err := net.DialTimeout("tcp", ts.tcp, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	type answer struct {
		n   int
		err error
	}
	done := make(chan answer, 1)
	go func() {
		var a answer
		a.err = db.QueryRow("slow").Scan(&a.n)
		done <- a
	}()
	select {
	case <-eng.started:
	case <-time.After(5 * time.Second):
		t.Fatal("query did not start")
	}
	start := time.Now()
	stopped := make(chan struct{})
	go func() { ts.stop(); close(stopped) }()
	time.Sleep(50 * time.Millisecond)
	if c, err := net.DialTimeout("tcp", ts.tcp, time.Second); err == nil {
		c.Close()
		t.Errorf("a new client was accepted during the shutdown")
	}
	if a := <-done; a.err != nil || a.n != 1 {
		t.Errorf("the running statement during the shutdown: %d, %v; want its row", a.n, a.err)
	}
	<-stopped
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the shutdown took %v after the statement ended", took)
	}
	_ = idle.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 4096)
	for {
		if _, err := idle.Read(buf); err != nil {
			break // closed (the greeting may come first)
		}
	}
}

// TestShutdownGraceRunsOut: a statement still running when the shutdown timeout ends is
// cancelled with ErrShutdown.
func TestShutdownGraceRunsOut(t *testing.T) {
	eng := newFakeEngine()
	ts := startServer(t, eng, func(c *Config) { c.ShutdownTimeout = 200 * time.Millisecond })
	db := open(t, ts, "tcp", "root", "", "")
	errc := make(chan error, 1)
	go func() {
		_, err := db.Exec("block")
		errc <- err
	}()
	<-eng.started
	start := time.Now()
	ts.stop()
	if cause := <-eng.cancelled; !errors.Is(cause, ErrShutdown) {
		t.Errorf("cause = %v, want ErrShutdown", cause)
	}
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Errorf("the statement was cancelled after %v, before the grace of 200ms", took)
	}
	if err := <-errc; err == nil {
		t.Errorf("the query survived shutdown")
	}
}

func TestShutdownCancelsQueries(t *testing.T) {
	eng := newFakeEngine()
	ts := startServer(t, eng, nil)
	db := open(t, ts, "tcp", "root", "", "")
	errc := make(chan error, 1)
	go func() {
		_, err := db.Exec("block")
		errc <- err
	}()
	select {
	case <-eng.started:
	case <-time.After(5 * time.Second):
		t.Fatal("query did not start")
	}
	ts.stop()
	if cause := <-eng.cancelled; !errors.Is(cause, ErrShutdown) {
		t.Errorf("cause = %v, want ErrShutdown", cause)
	}
	if err := <-errc; err == nil {
		t.Errorf("the query survived shutdown")
	}
	if c, err := net.DialTimeout("tcp", ts.tcp, time.Second); err == nil {
		c.Close()
		t.Errorf("still listening after shutdown")
	}
}

func TestTooManyConnections(t *testing.T) {
	eng := newFakeEngine()
	ts := startServer(t, eng, func(c *Config) { c.MaxConnections = 2 })
	db := open(t, ts, "tcp", "root", "", "")
	db.SetMaxIdleConns(0) // a sql.Conn closed is a connection closed
	ctx := context.Background()
	var held []*sql.Conn
	for range 2 {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.PingContext(ctx); err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	if err := open(t, ts, "unix", "root", "", "").Ping(); mysqlCode(err) != ErrConCount {
		t.Errorf("third connection: %v, want 1040", err)
	}
	held[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := open(t, ts, "unix", "root", "", "").Ping()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a slot did not free up: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	held[1].Close()
}

// TestSocketInUse: a second server on a live socket is refused; a stale socket file is
// replaced.
func TestSocketInUse(t *testing.T) {
	ts := startServer(t, newFakeEngine(), nil)
	cfg := DefaultConfig()
	cfg.Listen = nil
	cfg.Socket = ts.socket
	if _, err := Listen(cfg, newFakeEngine()); err == nil || !strings.Contains(err.Error(), "another server") {
		t.Errorf("second server on a live socket: %v", err)
	}
	stale := ts.socket + ".stale"
	l, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	cfg.Socket = stale
	s, err := Listen(cfg, newFakeEngine())
	if err != nil {
		t.Fatalf("stale socket: %v", err)
	}
	s.closeListeners()
}
