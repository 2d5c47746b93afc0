package frontend

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/go-sql-driver/mysql"
)

// TestSessionStatements runs testdata/session.txt's statements, in order, on one connection
// through go-sql-driver: the statements the front end answers itself, and the routing of
// everything else to the engine.
func TestSessionStatements(t *testing.T) {
	eng := newFakeEngine()
	ts := startServer(t, eng, func(c *Config) { c.Users = Users{"root": {}, "alice": {Password: "pw"}} })
	ctx := context.Background()
	conns := map[string]*sql.Conn{}
	conn := func(user string) *sql.Conn {
		if c, ok := conns[user]; ok {
			return c
		}
		password := map[string]string{"root": "", "alice": "pw"}[user]
		c, err := open(t, ts, "tcp", user, password, "").Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[user] = c
		return c
	}
	rootID := ""
	datadriven.RunTest(t, "testdata/session.txt", func(t *testing.T, d *datadriven.TestData) string {
		// "query" runs as root; "query alice" as alice. "$root" in the input is root's
		// connection id.
		if d.Cmd != "query" {
			t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
		}
		user, input := "root", d.Input
		if len(d.CmdArgs) > 0 {
			user = d.CmdArgs[0].Key
		}
		if rootID == "" { // asked once: a statement in between would clear the warnings
			if err := conn("root").QueryRowContext(ctx, "select connection_id()").Scan(&rootID); err != nil {
				t.Fatal(err)
			}
		}
		input = strings.ReplaceAll(input, "$root", rootID)
		return strings.ReplaceAll(render(conn(user).QueryContext(ctx, input)), rootID, "$root")
	})
}

// render prints a query's outcome: its columns with their MySQL types and its rows, "ok"
// for a statement without a result set, or the error.
func render(rows *sql.Rows, err error) string {
	if err != nil {
		var me *mysql.MySQLError
		if errors.As(err, &me) {
			return fmt.Sprintf("error %d (%s): %s", me.Number, string(me.SQLState[:]), me.Message)
		}
		return "error: " + err.Error()
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return "error: " + err.Error()
	}
	if len(types) == 0 {
		return "ok"
	}
	var b strings.Builder
	for i, ct := range types {
		if i > 0 {
			b.WriteString("|")
		}
		b.WriteString(ct.Name() + ":" + ct.DatabaseTypeName())
	}
	for rows.Next() {
		vals := make([]sql.NullString, len(types))
		ptrs := make([]any, len(types))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "error: " + err.Error()
		}
		b.WriteString("\n")
		for i, v := range vals {
			if i > 0 {
				b.WriteString("|")
			}
			if v.Valid {
				b.WriteString(v.String)
			} else {
				b.WriteString("NULL")
			}
		}
	}
	if err := rows.Err(); err != nil {
		var me *mysql.MySQLError
		if errors.As(err, &me) {
			return b.String() + fmt.Sprintf("\nerror %d (%s): %s", me.Number, string(me.SQLState[:]), me.Message)
		}
		return b.String() + "\nerror: " + err.Error()
	}
	return b.String()
}
