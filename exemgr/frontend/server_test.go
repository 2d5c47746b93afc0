package frontend

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// open connects go-sql-driver/mysql to ts over network ("tcp" or "unix") with extra DSN
// parameters.
func open(t *testing.T, ts *testServer, network, user, password, params string) *sql.DB {
	t.Helper()
	addr := ts.tcp
	if network == "unix" {
		addr = ts.socket
	}
	dsn := user
	if password != "" {
		dsn += ":" + password
	}
	dsn += "@" + network + "(" + addr + ")/tpch"
	if params != "" {
		dsn += "?" + params
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// rootConn opens one connection of a root session over TCP, closed at cleanup.
func rootConn(t *testing.T, ts *testServer) *sql.Conn {
	t.Helper()
	c, err := open(t, ts, "tcp", "root", "", "").Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// wantCancel waits up to wait for the engine's context to be cancelled with cause want;
// what says what did not happen.
func wantCancel(t *testing.T, eng *fakeEngine, want error, wait time.Duration, what string) {
	t.Helper()
	select {
	case cause := <-eng.cancelled:
		if !errors.Is(cause, want) {
			t.Errorf("cause = %v, want %v", cause, want)
		}
	case <-time.After(wait):
		t.Fatal(what)
	}
}

// queryStrings runs query and returns its column names and rows as text, NULL for nulls.
func queryStrings(t *testing.T, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string) ([]string, [][]string) {
	t.Helper()
	rows, err := q.QueryContext(context.Background(), query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
			if !v.Valid {
				row[i] = "NULL"
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return cols, out
}

func mysqlCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

func TestGoDriverOverTCPAndUnix(t *testing.T) {
	eng := newFakeEngine()
	ts := startServer(t, eng, nil)
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			db := open(t, ts, network, "root", "", "")
			db.SetMaxOpenConns(1)
			if err := db.Ping(); err != nil {
				t.Fatalf("ping: %v", err)
			}
			cols, rows := queryStrings(t, db, "select * from typed")
			if got := strings.Join(cols, ","); got != "i32,i64,price,total,day,name,comment,ratio,ok" {
				t.Errorf("columns = %s", got)
			}
			if len(rows) != len(typedText) {
				t.Fatalf("got %d rows, want %d", len(rows), len(typedText))
			}
			for i := range rows {
				want := strings.Join(typedText[i], "|")
				// go-sql-driver parses DOUBLE text into a float64, which database/sql
				// prints in Go's form.
				want = strings.Replace(want, "1e20", "1e+20", 1)
				if got := strings.Join(rows[i], "|"); got != want {
					t.Errorf("row %d:\n got %s\nwant %s", i, got, want)
				}
			}

			// Column types as go-sql-driver reports them.
			r, err := db.Query("select * from typed")
			if err != nil {
				t.Fatal(err)
			}
			types, _ := r.ColumnTypes()
			var names []string
			for _, ct := range types {
				names = append(names, ct.DatabaseTypeName())
			}
			r.Close()
			if got, want := strings.Join(names, ","), "INT,BIGINT,DECIMAL,DECIMAL,DATE,CHAR,VARCHAR,DOUBLE,TINYINT"; got != want {
				t.Errorf("column types = %s, want %s", got, want)
			}
			if p, s, ok := types[2].DecimalSize(); !ok || p != 15 || s != 2 {
				t.Errorf("price DecimalSize = %d,%d,%v; want 15,2", p, s, ok)
			}
			if n, _ := types[1].Nullable(); n {
				t.Errorf("i64 is NOT NULL but reported nullable")
			}

			// Errors carry their codes, and the session goes on.
			for _, c := range []struct {
				query string
				code  uint16
			}{
				{"selec 1", 1064},
				{"select * from nosuch", 1146},
				{"boom", 1105},
				{"", 1065},
				{"select @@nonesuch", 1193},
			} {
				_, err := db.Exec(c.query)
				if got := mysqlCode(err); got != c.code {
					t.Errorf("%q: error %v, want code %d", c.query, err, c.code)
				}
			}
			var me *mysql.MySQLError
			if _, err := db.Exec("select * from nosuch"); !errors.As(err, &me) || string(me.SQLState[:]) != "42S02" || me.Message != "Table 'tpch.nosuch' doesn't exist" {
				t.Errorf("unknown table error = %#v", err)
			}
			if _, rows := queryStrings(t, db, "select 1"); len(rows) != 1 || rows[0][0] != "1" {
				t.Errorf("after errors, select 1 = %v", rows)
			}

			// An error after rows were sent ends the result set with that error.
			r, err = db.Query("fail midway")
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for r.Next() {
				n++
			}
			if err := r.Err(); mysqlCode(err) != ErrDivisionByZero || n != 3 {
				t.Errorf("fail midway: %d rows then %v; want 3 rows then error 1365", n, err)
			}
			r.Close()

			// USE, DATABASE(), and the session's database.
			var dbName sql.NullString
			if err := db.QueryRow("select database()").Scan(&dbName); err != nil || dbName.String != "tpch" {
				t.Errorf("database() = %v, %v", dbName, err)
			}
			if _, err := db.Exec("use other"); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow("SELECT DATABASE()").Scan(&dbName); err != nil || dbName.String != "other" {
				t.Errorf("after USE other, DATABASE() = %v, %v", dbName, err)
			}
			if _, err := db.Exec("use nonesuch"); mysqlCode(err) != ErrBadDB {
				t.Errorf("use nonesuch: %v, want 1049", err)
			}
			if _, err := db.Exec("use `tpch`"); err != nil {
				t.Fatal(err)
			}

			// Empty result set.
			if cols, rows := queryStrings(t, db, "select * from empty"); len(cols) != 9 || len(rows) != 0 {
				t.Errorf("empty: %d columns, %d rows", len(cols), len(rows))
			}

			// An OK with warnings, and SHOW WARNINGS.
			res, err := db.Exec("warn")
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := res.RowsAffected(); n != 3 {
				t.Errorf("rows affected = %d, want 3", n)
			}
		})
	}
}

func TestSessionStateOnOneConnection(t *testing.T) {
	eng := newFakeEngine()
	ts := startServer(t, eng, nil)
	ctx := context.Background()
	c := rootConn(t, ts)
	if _, err := c.ExecContext(ctx, "warn"); err != nil {
		t.Fatal(err)
	}
	_, rows := queryStrings(t, c, "show warnings")
	if len(rows) != 1 || strings.Join(rows[0], "|") != "Warning|1292|Truncated incorrect DOUBLE value: 'x'" {
		t.Errorf("show warnings = %v", rows)
	}
	if _, err := c.ExecContext(ctx, "selec 1"); err == nil {
		t.Fatal("no error")
	}
	_, rows = queryStrings(t, c, "SHOW ERRORS")
	if len(rows) != 1 || rows[0][1] != "1064" {
		t.Errorf("show errors = %v", rows)
	}
	if _, err := c.ExecContext(ctx, "remember"); err != nil {
		t.Fatal(err)
	}
	if _, rows := queryStrings(t, c, "show query stats"); rows[0][0] != "elapsed=1ms" {
		t.Errorf("stats = %v", rows)
	}
	if _, err := c.ExecContext(ctx, "SET NAMES utf8mb4"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, "set session sql_mode = 'ANSI', @@autocommit = ON"); err != nil {
		t.Fatal(err)
	}
	// As in MySQL 8, a combination mode reads back as the modes it stands for.
	_, rows = queryStrings(t, c, "select @@sql_mode, @@global.sql_mode as g, @@autocommit, @@version_comment limit 1")
	if got := strings.Join(rows[0], "|"); got != "REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ONLY_FULL_GROUP_BY,ANSI|ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION|1|colink" {
		t.Errorf("variables = %s", got)
	}
	if _, err := c.ExecContext(ctx, "set version = 'x'"); mysqlCode(err) != 1238 {
		t.Errorf("set read-only: %v", err)
	}
	var id uint32
	if err := c.QueryRowContext(ctx, "select connection_id()").Scan(&id); err != nil || id == 0 {
		t.Fatalf("connection_id: %d, %v", id, err)
	}
	_, rows = queryStrings(t, c, "show processlist")
	found := false
	for _, r := range rows {
		if r[0] == itoa(id) && r[1] == "root" && r[4] == "Query" {
			found = true
		}
	}
	if !found {
		t.Errorf("processlist %v lacks this session %d", rows, id)
	}
	for _, q := range []string{"begin", "commit", "start transaction read only", "rollback"} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}

func itoa(v uint32) string { return strconv.FormatUint(uint64(v), 10) }

func TestMultiStatements(t *testing.T) {
	eng := newFakeEngine()
	ts := startServer(t, eng, nil)
	// Without multiStatements the driver does not set CLIENT_MULTI_STATEMENTS.
	db := open(t, ts, "tcp", "root", "", "")
	if _, err := db.Exec("select 1; select 2"); mysqlCode(err) != ErrParse || !strings.Contains(err.Error(), "multiStatements=true") {
		t.Errorf("multi-statement without the flag: %v", err)
	}
	if _, rows := queryStrings(t, db, "select 1;"); rows[0][0] != "1" {
		t.Errorf("a trailing semicolon: %v", rows)
	}

	multi := open(t, ts, "tcp", "root", "", "multiStatements=true")
	multi.SetMaxOpenConns(1)
	// Q15's shape: create view; select; drop view.
	rows, err := multi.Query("create view revenue0 as select 1; select * from typed; drop view revenue0")
	if err != nil {
		t.Fatal(err)
	}
	// The first result is the view's OK; database/sql skips to the first result set.
	var sets [][]string
	for {
		cols, _ := rows.Columns()
		n := 0
		for rows.Next() {
			n++
		}
		sets = append(sets, []string{strings.Join(cols, ","), itoa(uint32(n))})
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if len(sets) < 1 || sets[0][1] != "3" {
		t.Errorf("result sets = %v", sets)
	}
	got := strings.Join(eng.seen(), "\n")
	if !strings.Contains(got, "create view revenue0 as select 1\nselect * from typed\ndrop view revenue0") {
		t.Errorf("engine saw:\n%s", got)
	}
	// An error stops the sequence.
	if _, err := multi.Exec("select 1; selec 1; drop view x"); mysqlCode(err) != ErrParse {
		t.Errorf("error in the middle: %v", err)
	}
	if strings.Contains(strings.Join(eng.seen(), "\n"), "drop view x") {
		t.Errorf("the statement after a failed one ran")
	}
	if err := multi.Ping(); err != nil {
		t.Errorf("ping after a failed multi-statement: %v", err)
	}
}

func TestAuthentication(t *testing.T) {
	eng := newFakeEngine()
	ts := startServer(t, eng, func(c *Config) {
		c.Users = Users{"alice": {Password: "s3cret:with colon"}, "root": {}}
	})
	if err := open(t, ts, "tcp", "alice", "s3cret:with colon", "").Ping(); err != nil {
		t.Errorf("right password: %v", err)
	}
	if err := open(t, ts, "tcp", "alice", "wrong", "").Ping(); mysqlCode(err) != ErrAccessDenied {
		t.Errorf("wrong password: %v, want 1045", err)
	}
	if err := open(t, ts, "tcp", "alice", "", "").Ping(); mysqlCode(err) != ErrAccessDenied {
		t.Errorf("no password: %v, want 1045", err)
	}
	if err := open(t, ts, "unix", "mallory", "x", "").Ping(); mysqlCode(err) != ErrAccessDenied {
		t.Errorf("unknown user: %v, want 1045", err)
	}
	if err := open(t, ts, "unix", "root", "", "").Ping(); err != nil {
		t.Errorf("root without password on the socket: %v", err)
	}
	if err := open(t, ts, "tcp", "root", "", "").Ping(); err != nil {
		t.Errorf("root without password on loopback: %v", err)
	}
	// A database named at connect is checked.
	bad, _ := sql.Open("mysql", "root@tcp("+ts.tcp+")/nonesuch")
	defer bad.Close()
	if err := bad.Ping(); mysqlCode(err) != ErrBadDB {
		t.Errorf("connect to an unknown database: %v, want 1049", err)
	}
}

func TestKillQueryFromAnotherConnection(t *testing.T) {
	eng := newFakeEngine()
	ts := startServer(t, eng, nil)
	db := open(t, ts, "tcp", "root", "", "")
	ctx := context.Background()
	victim, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	errc := make(chan error, 1)
	go func() {
		_, err := victim.ExecContext(ctx, "block")
		errc <- err
	}()
	var sess *Session
	select {
	case sess = <-eng.started:
	case <-time.After(5 * time.Second):
		t.Fatal("query did not start")
	}
	killer := open(t, ts, "unix", "root", "", "")
	if _, err := killer.Exec("KILL QUERY " + itoa(sess.ID())); err != nil {
		t.Fatalf("kill query: %v", err)
	}
	wantCancel(t, eng, ErrKilled, 5*time.Second, "the engine's context was not cancelled")
	if err := <-errc; mysqlCode(err) != ErrQueryInterrupted {
		t.Errorf("killed query returned %v, want 1317", err)
	}
	var one int
	if err := victim.QueryRowContext(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("the killed query's session is not usable: %v", err)
	}
	if _, err := killer.Exec("kill 4000000000"); mysqlCode(err) != ErrNoSuchThread {
		t.Errorf("kill of an unknown id: %v", err)
	}
	// KILL CONNECTION ends the victim's connection.
	if _, err := killer.Exec("kill connection " + itoa(sess.ID())); err != nil {
		t.Fatal(err)
	}
	if err := victim.PingContext(ctx); err == nil {
		t.Errorf("the killed connection still answers")
	}
}

func TestClientDisconnectCancelsQuery(t *testing.T) {
	eng := newFakeEngine()
	ts := startServer(t, eng, nil)
	db := open(t, ts, "tcp", "root", "", "")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(ctx, "block")
		errc <- err
	}()
	select {
	case <-eng.started:
	case <-time.After(5 * time.Second):
		t.Fatal("query did not start")
	}
	cancel() // go-sql-driver closes the connection
	wantCancel(t, eng, ErrClientGone, 5*time.Second, "the engine's context was not cancelled after the client went away")
	<-errc
}

// TestShowStatus: SHOW STATUS lists the server's counters, as mysqld names them, filtered by
// LIKE; the counters move with the connections and statements.
func TestShowStatus(t *testing.T) {
	ts := startServer(t, newFakeEngine(), nil)
	db := open(t, ts, "tcp", "root", "", "")
	cols, rows := queryStrings(t, db, "show global status")
	if len(cols) != 2 || cols[0] != "Variable_name" || cols[1] != "Value" {
		t.Fatalf("columns %v", cols)
	}
	got := map[string]string{}
	for _, r := range rows {
		got[r[0]] = r[1]
	}
	for _, name := range []string{"Connections", "Questions", "Queries", "Threads_connected", "Uptime"} {
		if _, ok := got[name]; !ok {
			t.Errorf("SHOW GLOBAL STATUS lacks %s: %v", name, got)
		}
	}
	if got["Threads_connected"] == "0" || got["Connections"] == "0" {
		t.Errorf("no connection counted: %v", got)
	}
	_, rows = queryStrings(t, db, "show status like 'quest%'")
	if len(rows) != 1 || rows[0][0] != "Questions" {
		t.Fatalf("SHOW STATUS LIKE 'quest%%': %v", rows)
	}
	before := rows[0][1]
	queryStrings(t, db, "select 1")
	_, rows = queryStrings(t, db, "show session status like 'Questions'")
	b, _ := strconv.Atoi(before)
	if a, err := strconv.Atoi(rows[0][1]); len(rows) != 1 || err != nil || a <= b {
		t.Errorf("Questions did not move: %s, then %v", before, rows)
	}
}

// TestAnswerBeforeClose: a result set reaches the client whole while the engine is still
// closing it (the statement's statistics follow the answer), and the session's next
// statement waits for the close.
func TestAnswerBeforeClose(t *testing.T) {
	eng := newFakeEngine()
	eng.closeGate = make(chan struct{})
	ts := startServer(t, eng, nil)
	db := open(t, ts, "unix", "root", "", "")
	db.SetMaxOpenConns(1)
	got := make(chan error, 1)
	go func() {
		var v int64
		got <- db.QueryRow("slow close").Scan(&v)
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		close(eng.closeGate)
		t.Fatal("the answer waited for the result's close")
	}
	next := make(chan error, 1)
	go func() { _, err := db.Exec("select * from empty"); next <- err }()
	select {
	case <-next:
		t.Fatal("the next statement ran before the close ended")
	case <-time.After(100 * time.Millisecond):
	}
	close(eng.closeGate)
	if err := <-next; err != nil {
		t.Fatal(err)
	}
}
