package frontend

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// TestPreparedStatements drives the binary protocol with go-sql-driver without
// interpolateParams (its default): every parameter type it sends, NULL, a '?' inside a
// string that is no placeholder, a value that would be SQL if pasted in, reuse of a
// statement, long data, and a result set of every column type in the binary row format.
func TestPreparedStatements(t *testing.T) {
	eng := newFakeEngine()
	ts := startServer(t, eng, nil)
	db := open(t, ts, "tcp", "root", "", "maxAllowedPacket=16384")
	ctx := context.Background()

	day := time.Date(1998, 12, 1, 0, 0, 0, 0, time.UTC)
	rows, err := db.QueryContext(ctx, "select * from typed where a = ? and b = ? and c = ? and d = ? and e = ? and f = ? and g = '?' and h = ?",
		int64(-5), uint64(18446744073709551615), 1.5, "it's \\ a 'quote'; drop table x", nil, true, day)
	if err != nil {
		t.Fatal(err)
	}
	// Every value comes back as the binary row format's Go value; compare with the text
	// protocol's rows.
	var got [][]string
	for rows.Next() {
		vals := make([]any, 9)
		ptrs := make([]any, 9)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, 9)
		for i, v := range vals {
			row[i] = binaryText(v)
		}
		got = append(got, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	want := [][]string{
		{"1", "9000000000", "1234.56", "12345678901234567890123.4567", "1998-12-01", "Customer#000000001", "a comment", "0.1", "1"},
		{"-7", "-1", "-0.05", "-0.0001", "1970-01-01", "", "tab\there", "1e+20", "0"},
		{"NULL", "0", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"},
	}
	if strings.Join(flatten(got), "|") != strings.Join(flatten(want), "|") {
		t.Errorf("rows in the binary format:\n got %q\nwant %q", got, want)
	}
	seen := eng.seen()
	bound := seen[len(seen)-1]
	wantBound := `select * from typed where a = -5 and b = 18446744073709551615 and c = 1.5e+00 and d = 'it\'s \\ a \'quote\'; drop table x' and e = NULL and f = 1 and g = '?' and h = '1998-12-01'`
	if bound != wantBound {
		t.Errorf("the engine got\n %s\nwant\n %s", bound, wantBound)
	}

	// A statement prepared once runs with other values; long data (a value longer than
	// the driver's share of max_allowed_packet) arrives by COM_STMT_SEND_LONG_DATA.
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st, err := conn.PrepareContext(ctx, "select * from typed where x = ?")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("y", 40000)
	for _, arg := range []any{int64(1), "two", []byte(long)} {
		r, err := st.QueryContext(ctx, arg)
		if err != nil {
			t.Fatalf("%T: %v", arg, err)
		}
		r.Close()
	}
	seen = eng.seen()
	if len(seen) < 3 || seen[len(seen)-3] != "select * from typed where x = 1" || seen[len(seen)-2] != "select * from typed where x = 'two'" ||
		seen[len(seen)-1] != "select * from typed where x = '"+long+"'" {
		t.Errorf("reused statement: the engine got %.80q", seen[len(seen)-3:])
	}
	st.Close()

	// A statement that fails in the engine fails the EXECUTE with the engine's error, and
	// the session goes on.
	bad, err := conn.PrepareContext(ctx, "select * from nosuch")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.QueryContext(ctx); !isMySQL(err, 1146) {
		t.Errorf("an unknown table through EXECUTE: %v", err)
	}
	bad.Close()
	var one int64
	if err := conn.QueryRowContext(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("after a failed EXECUTE: %v, %d", err, one)
	}
	// Results the front end makes itself come in the binary format too.
	local, err := conn.PrepareContext(ctx, "select @@version, connection_id()")
	if err != nil {
		t.Fatal(err)
	}
	var version string
	var id int64
	if err := local.QueryRowContext(ctx).Scan(&version, &id); err != nil || version == "" || id <= 0 {
		t.Errorf("select @@version, connection_id() through EXECUTE: %v, %q, %d", err, version, id)
	}
	local.Close()
}

// TestPreparedStatementsBounded: a session holds at most maxPreparedStmts statements
// (error 1461 after, and closing one makes room).
func TestPreparedStatementsBounded(t *testing.T) {
	ts := startServer(t, newFakeEngine(), nil)
	ctx := context.Background()
	conn := rootConn(t, ts)
	var stmts []*sql.Stmt
	for i := 0; i < maxPreparedStmts; i++ {
		st, err := conn.PrepareContext(ctx, "select * from typed where x = ?")
		if err != nil {
			t.Fatalf("statement %d: %v", i+1, err)
		}
		stmts = append(stmts, st)
	}
	if _, err := conn.PrepareContext(ctx, "select 1"); !isMySQL(err, errMaxPreparedStmts) {
		t.Fatalf("statement %d: %v, want error %d", maxPreparedStmts+1, err, errMaxPreparedStmts)
	}
	stmts[0].Close()
	if st, err := conn.PrepareContext(ctx, "select 1"); err != nil {
		t.Fatalf("after closing one: %v", err)
	} else {
		st.Close()
	}
	for _, st := range stmts[1:] {
		st.Close()
	}
}

// TestPreparedStatementsRaw sends binary-protocol packets by hand: an EXECUTE that relies on
// types sent before, unknown statement ids, malformed parameters, a FETCH, long data over
// max_allowed_packet, and RESET; each bad one gets an error that names it and the
// connection keeps serving.
func TestPreparedStatementsRaw(t *testing.T) {
	eng := newFakeEngine()
	ts := startServer(t, eng, func(c *Config) { c.MaxAllowedPacket = 4096 })
	nc := rawClient(t, ts)
	defer nc.Close()

	send := func(seq byte, payload ...byte) {
		t.Helper()
		hdr := []byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), seq}
		if _, err := nc.Write(append(hdr, payload...)); err != nil {
			t.Fatal(err)
		}
	}
	read := func() []byte {
		t.Helper()
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		var hdr [4]byte
		if _, err := io.ReadFull(nc, hdr[:]); err != nil {
			t.Fatal(err)
		}
		p := make([]byte, int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)
		if _, err := io.ReadFull(nc, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	wantErr := func(what string, code uint16, msg string) {
		t.Helper()
		p := read()
		if p[0] != 0xff || binary.LittleEndian.Uint16(p[1:]) != code || !bytes.Contains(p, []byte(msg)) {
			t.Errorf("%s: got %q, want error %d %q", what, p, code, msg)
		}
	}
	// readResult reads a result set to its final EOF (or an error) and returns its rows'
	// packets.
	readResult := func(what string) [][]byte {
		t.Helper()
		p := read()
		if p[0] == 0xff {
			t.Fatalf("%s: %q", what, p)
		}
		cols := int(p[0])
		for range cols {
			read()
		}
		read() // EOF after the columns
		var rows [][]byte
		for {
			p := read()
			if p[0] == 0xfe && len(p) < 9 {
				return rows
			}
			rows = append(rows, p)
		}
	}

	prepare := func(text string) uint32 {
		send(0, append([]byte{0x16}, text...)...)
		p := read()
		if p[0] != 0 {
			t.Fatalf("prepare %q: %q", text, p)
		}
		id := binary.LittleEndian.Uint32(p[1:])
		if params := binary.LittleEndian.Uint16(p[7:]); params > 0 {
			for range params + 1 { // the parameters' definitions and their EOF
				read()
			}
		}
		return id
	}
	id := prepare("select * from typed where x = ? and y = ?")
	le := binary.LittleEndian
	exec := func(payload ...byte) {
		send(0, append(le.AppendUint32([]byte{0x17}, id), append([]byte{0, 1, 0, 0, 0}, payload...)...)...)
	}
	// First execution: NULL bitmap 0, types LONGLONG and VAR_STRING, values 7 and "a?b".
	exec(append([]byte{0, 1, 8, 0, 253, 0}, append(le.AppendUint64(nil, 7), 3, 'a', '?', 'b')...)...)
	if rows := readResult("execute"); len(rows) != 3 || rows[0][0] != 0 {
		t.Errorf("execute: %d rows %q", len(rows), rows)
	}
	// Second: no types (the first's hold), the second parameter NULL.
	exec(append([]byte{2, 0}, le.AppendUint64(nil, 8)...)...)
	readResult("execute with the earlier types")
	if got := eng.seen(); got[len(got)-2] != "select * from typed where x = 7 and y = 'a?b'" || got[len(got)-1] != "select * from typed where x = 8 and y = NULL" {
		t.Errorf("bound: %q", got[len(got)-2:])
	}

	send(0, 0x17, 99, 0, 0, 0, 0, 1, 0, 0, 0)
	wantErr("execute of an unknown id", errUnknownStmt, "Unknown prepared statement handler (99) given to mysqld_stmt_execute")
	exec(0, 1, 8, 0)
	wantErr("types without values", ErrWrongArguments, "Incorrect arguments to mysqld_stmt_execute")
	exec(0, 1, 200, 0, 253, 0, 0)
	wantErr("an unknown type", ErrWrongArguments, "type 200 is not a parameter type")
	exec(0, 1, 246, 0, 253, 0, 4, '1', ';', '2', '3', 1, 'x')
	wantErr("a decimal that is not a number", ErrWrongArguments, "is not a decimal number")
	send(0, 0x1c, 1, 0, 0, 0, 1, 0, 0, 0)
	wantErr("fetch", errNoOpenCursor, "has no open cursor")
	send(0, 0x1a, 98, 0, 0, 0)
	wantErr("reset of an unknown id", errUnknownStmt, "mysqld_stmt_reset")

	// Long data over max_allowed_packet (4096) in two chunks: the EXECUTE says so; a RESET
	// clears it and the statement runs again.
	chunk := bytes.Repeat([]byte{'z'}, 3000)
	send(0, append(le.AppendUint16(le.AppendUint32([]byte{0x18}, id), 1), chunk...)...)
	send(0, append(le.AppendUint16(le.AppendUint32([]byte{0x18}, id), 1), chunk...)...)
	exec(append([]byte{0, 0}, le.AppendUint64(nil, 9)...)...)
	wantErr("long data over max_allowed_packet", ErrNetPacketTooLarge, "longer than 'max_allowed_packet'")
	send(0, append(le.AppendUint16(le.AppendUint32([]byte{0x18}, id), 1), 'q')...)
	send(0, le.AppendUint32([]byte{0x1a}, id)...)
	if p := read(); p[0] != 0 {
		t.Errorf("reset: %q", p)
	}
	exec(append([]byte{0, 0}, le.AppendUint64(nil, 9)...)...)
	wantErr("the second parameter's long data was reset away", ErrWrongArguments, "cut short")
	send(0, append(le.AppendUint16(le.AppendUint32([]byte{0x18}, id), 1), "long"...)...)
	exec(append([]byte{0, 0}, le.AppendUint64(nil, 10)...)...)
	readResult("execute with long data")
	if got := eng.seen(); got[len(got)-1] != "select * from typed where x = 10 and y = 'long'" {
		t.Errorf("long data bound: %q", got[len(got)-1])
	}

	// CLOSE has no answer; the id is gone after it.
	send(0, le.AppendUint32([]byte{0x19}, id)...)
	exec(append([]byte{0, 0}, le.AppendUint64(nil, 1)...)...)
	wantErr("execute after close", errUnknownStmt, "Unknown prepared statement handler")
	send(0, append([]byte{0x16}, "select 1; select 2"...)...)
	wantErr("two statements", ErrParse, "a prepared statement holds one statement")
}

// binaryText prints a value go-sql-driver scanned from a binary-protocol row.
func binaryText(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return string(x)
	case time.Time:
		return x.Format(time.DateOnly)
	}
	return fmt.Sprint(v)
}

func flatten(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

func isMySQL(err error, code uint16) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == code
}

// TestDecimalParameterText: a DECIMAL parameter is written into the statement as sent, so
// only plain decimal numbers are taken.
func TestDecimalParameterText(t *testing.T) {
	for v, ok := range map[string]bool{"12.50": true, "-0.5": true, "+7": true, ".5": true, "5.": true,
		"": false, "-": false, ".": false, "1e5": false, "0x1p-2": false, "Inf": false, "1.2.3": false, "1;drop": false, "1 ": false} {
		if got := isDecimalText([]byte(v)); got != ok {
			t.Errorf("%q: %v, want %v", v, got, ok)
		}
	}
}

// TestBinaryText: the front end's own results in the binary row format keep each column's
// width, whatever the text.
func TestBinaryText(t *testing.T) {
	for _, tc := range []struct {
		t        ColumnType
		unsigned bool
		text     string
		want     []byte
	}{
		{TypeLongLong, false, "-2", []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{TypeLongLong, false, "18446744073709551615", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{TypeLong, true, "4294967295", []byte{0xff, 0xff, 0xff, 0xff}},
		{TypeTiny, false, "1", []byte{1}},
		{TypeDate, false, "1998-12-01", []byte{4, 0xce, 0x07, 12, 1}},
		{TypeVarString, false, "abc", []byte{3, 'a', 'b', 'c'}},
	} {
		if got := appendBinaryText(nil, tc.t, tc.unsigned, tc.text); !bytes.Equal(got, tc.want) {
			t.Errorf("%d %q: %v, want %v", tc.t, tc.text, got, tc.want)
		}
	}
}
