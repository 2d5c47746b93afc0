package main

import (
	"context"
	dsql "database/sql"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSleep runs SLEEP through a real exemgr: SELECT SLEEP(0.2) waits about 0.2 s and
// returns 0; over a table it waits once per row; NULL and negative arguments are error 1210;
// KILL QUERY ends a SELECT SLEEP(10) at once (1317) and the session goes on; a client that
// goes away ends its SLEEP too.
func TestSleep(t *testing.T) {
	needDaemons(t)
	c := shared.cluster(t, "one-primproc", 1, "0.01")
	em := shared.exemgr(t, c, "tcp")
	ctx := context.Background()
	conn := em.conn(t)

	start := time.Now()
	var v int64
	if err := conn.QueryRowContext(ctx, "select sleep(0.2)").Scan(&v); err != nil || v != 0 {
		t.Fatalf("select sleep(0.2): %d, %s", v, errorText(err))
	}
	if took := time.Since(start); took < 200*time.Millisecond || took > 3*time.Second {
		t.Errorf("select sleep(0.2) took %v", took)
	}

	// Five nations in region 1: five waits.
	start = time.Now()
	tb := queryTable(t, ctx, conn, "select n_name, sleep(0.05) from nation where n_regionkey = 1")
	if took := time.Since(start); len(tb.Rows) != 5 || took < 250*time.Millisecond {
		t.Errorf("sleep(0.05) over 5 rows: %d rows in %v, want 5 in at least 250ms", len(tb.Rows), took)
	}
	for _, r := range tb.Rows {
		if r[1] != "0" {
			t.Errorf("row %v: SLEEP gave %s, want 0", r, r[1])
		}
	}

	for _, q := range []string{"select sleep(-1)", "select sleep(null)"} {
		_, err := conn.ExecContext(ctx, q)
		if got := errorText(err); got != "ERROR 1210 (HY000): Incorrect arguments to sleep." {
			t.Errorf("%s: %s, want ERROR 1210 (HY000): Incorrect arguments to sleep.", q, got)
		}
	}

	// running waits until SHOW PROCESSLIST shows session id running a statement starting
	// with prefix (or, with gone, until it no longer does).
	running := func(t *testing.T, id int64, prefix string, gone bool) {
		t.Helper()
		watcher := em.conn(t)
		ok := waitFor(10*time.Second, func() bool {
			rows, err := watcher.QueryContext(ctx, "show full processlist")
			if err != nil {
				t.Fatal(errorText(err))
			}
			defer rows.Close()
			tb, err := result(rows, "NULL")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range tb.Rows {
				if r[0] == strconv.FormatInt(id, 10) && strings.HasPrefix(r[len(r)-1], prefix) {
					return !gone
				}
			}
			return gone
		})
		if !ok {
			t.Fatalf("session %d: running %q never became %v", id, prefix, !gone)
		}
	}
	connID := func(c *dsql.Conn) int64 {
		var id int64
		if err := c.QueryRowContext(ctx, "select connection_id()").Scan(&id); err != nil {
			t.Fatal(errorText(err))
		}
		return id
	}

	t.Run("kill query", func(t *testing.T) {
		victim := em.conn(t)
		id := connID(victim)
		done := make(chan error, 1)
		go func() {
			var v int64
			done <- victim.QueryRowContext(ctx, "select sleep(10)").Scan(&v)
		}()
		running(t, id, "select sleep(10)", false)
		start := time.Now()
		if _, err := em.conn(t).ExecContext(ctx, "kill query "+strconv.FormatInt(id, 10)); err != nil {
			t.Fatal(errorText(err))
		}
		select {
		case err := <-done:
			if got := errorText(err); !strings.HasPrefix(got, "ERROR 1317 ") {
				t.Errorf("the killed SLEEP(10): %s, want ERROR 1317", got)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("KILL QUERY took %v to end SLEEP(10)", took)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("SLEEP(10) did not end within 5s of KILL QUERY")
		}
		if err := victim.QueryRowContext(ctx, "select 1").Scan(new(int)); err != nil {
			t.Errorf("the session after KILL QUERY: %s", errorText(err))
		}
	})

	t.Run("client gone", func(t *testing.T) {
		victim := em.conn(t)
		id := connID(victim)
		qctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			var v int64
			done <- victim.QueryRowContext(qctx, "select sleep(10)").Scan(&v)
		}()
		running(t, id, "select sleep(10)", false)
		start := time.Now()
		cancel() // go-sql-driver closes the connection of a cancelled query
		<-done
		running(t, id, "select sleep(10)", true)
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("the SLEEP of a client gone ran on for %v", took)
		}
	})
}
