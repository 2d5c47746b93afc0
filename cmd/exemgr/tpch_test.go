package main

import (
	"context"
	dsql "database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colinkdb/colink/dbt3/answers"
	"github.com/colinkdb/colink/dbt3/queries"
)

// TestTPCH runs the 22 validation queries at SF 0.01 through go-sql-driver/mysql against
// exemgr with one primproc and with two, over the link's tcp, unix and shm transports, at each
// pushdown level (SET colink_pushdown), and compares every result with the reference
// answers (strings and counts exactly, sums to the printed digit, averages within 1e-6
// relative). SHOW QUERY STATS must name the transport and the level, and the levels must
// move Q6's traffic as they say: its rows cross the link only when the aggregate (filter)
// and the filter too (scan) stay in exemgr.
func TestTPCH(t *testing.T) {
	needDaemons(t)
	runTPCH(t, "0.01")
}

// TestTPCHSF01 does the same at SF 0.1 (COLINK_SF01=1).
func TestTPCHSF01(t *testing.T) {
	if os.Getenv("COLINK_SF01") == "" {
		t.Skip("set COLINK_SF01=1 to run the 22 queries at SF 0.1 through the daemons")
	}
	runTPCH(t, "0.1")
}

// pushdownLevels are the values of colink_pushdown, in order of the traffic they move.
var pushdownLevels = []string{"full", "filter", "scan"}

func runTPCH(t *testing.T, sf string) {
	needAnswers(t, sf)
	want := make([]*answers.Table, queries.Count+1)
	for n := 1; n <= queries.Count; n++ {
		tb, err := answers.ReadFile(expectedFile(sf, n))
		if err != nil {
			t.Fatal(err)
		}
		want[n] = tb
	}
	for _, layout := range layouts {
		c := shared.cluster(t, layout.name, layout.primprocs, sf)
		t.Run(layout.name, func(t *testing.T) {
			var wg sync.WaitGroup
			for _, transport := range []string{"tcp", "unix", "shm"} {
				em := shared.exemgr(t, c, transport)
				wg.Add(1)
				t.Run(transport, func(t *testing.T) {
					defer wg.Done()
					// The unix-transport exemgr is reached over its MySQL socket, the other
					// over TCP, so both client paths are covered too.
					db := em.db(t, transport == "unix")
					conn, err := db.Conn(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					defer conn.Close()
					q6Bytes := map[string]int64{}
					for _, level := range pushdownLevels {
						if _, err := conn.ExecContext(context.Background(), "SET colink_pushdown = '"+level+"'"); err != nil {
							t.Fatalf("SET colink_pushdown = '%s': %s", level, errorText(err))
						}
						start := time.Now()
						for n := 1; n <= queries.Count; n++ {
							text, err := queries.Get(n)
							if err != nil {
								t.Fatal(err)
							}
							ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
							got, err := runScript(ctx, conn, text, "")
							cancel()
							if err != nil {
								t.Errorf("pushdown=%s Q%d: %s", level, n, errorText(err))
								continue
							}
							if err := answers.Compare(got, want[n]); err != nil {
								t.Errorf("pushdown=%s Q%d: %v", level, n, err)
							}
							if n == 6 {
								stats := queryStats(t, conn)
								if stats[0]["pushdown"] != level {
									t.Errorf("pushdown=%s: SHOW QUERY STATS says pushdown %q", level, stats[0]["pushdown"])
								}
								q6Bytes[level], _ = strconv.ParseInt(stats[0]["bytes_in"], 10, 64)
								ring, _ := strconv.ParseInt(stats[0]["ring_bytes_in"], 10, 64)
								// Over shm the batch bodies cross in the rings (all of
								// them at scan, where they are large); elsewhere nothing.
								if transport != "shm" && ring != 0 {
									t.Errorf("pushdown=%s: %d ring bytes over %s", level, ring, transport)
								}
								if transport == "shm" && level == "scan" && ring*2 < q6Bytes[level] {
									t.Errorf("pushdown=scan: %d of Q6's %d link bytes came through the rings, want most", ring, q6Bytes[level])
								}
							}
						}
						t.Logf("pushdown=%s: 22 queries in %v", level, time.Since(start).Round(time.Millisecond))
					}
					checkTransport(t, conn, transport)
					t.Logf("Q6's link bytes in: %v", q6Bytes)
					// Full pushdown sends each primproc's partial sum; filter its filtered
					// rows' two columns; scan the four columns of every row in the zones.
					if !(q6Bytes["full"]*10 < q6Bytes["filter"] && q6Bytes["filter"] < q6Bytes["scan"]) {
						t.Errorf("Q6's link bytes do not grow with the pushdown levels: %v", q6Bytes)
					}
				})
			}
			wg.Wait()
		})
	}
}

// checkTransport checks that SHOW QUERY STATS names the transport asked for.
func checkTransport(t *testing.T, conn *dsql.Conn, transport string) {
	t.Helper()
	stats := queryStats(t, conn)
	for _, row := range stats[1:] {
		if row["transport"] != transport {
			t.Errorf("%s: transport %q, want %q", row["process"], row["transport"], transport)
		}
	}
}

// TestConcurrentSessions runs the validation queries (but Q15, whose view name every
// session would share) from several sessions at once, each in its own order, and checks
// every answer.
func TestConcurrentSessions(t *testing.T) {
	needDaemons(t)
	needAnswers(t, "0.01")
	c := shared.cluster(t, "two-primprocs", 2, "0.01")
	em := shared.exemgr(t, c, "unix")
	const sessions = 6
	var wg sync.WaitGroup
	errs := make(chan error, sessions*queries.Count)
	for s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := em.db(t, s%2 == 0).Conn(context.Background())
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			for i := range queries.Count {
				n := (i+5*s)%queries.Count + 1
				if n == 15 {
					continue
				}
				text, _ := queries.Get(n)
				want, err := answers.ReadFile(expectedFile("0.01", n))
				if err != nil {
					errs <- err
					return
				}
				got, err := runScript(context.Background(), conn, text, "")
				if err != nil {
					errs <- fmt.Errorf("session %d, Q%d: %s", s, n, errorText(err))
					continue
				}
				if err := answers.Compare(got, want); err != nil {
					errs <- fmt.Errorf("session %d, Q%d: %w", s, n, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestPushdownVariable checks colink_pushdown as a client sees it: the daemon's level by
// default, a session's own after SET (names in any case), DEFAULT back to the daemon's,
// EXPLAIN's closing line, and error 1231 naming the values for anything else, the session
// going on at its level.
func TestPushdownVariable(t *testing.T) {
	needDaemons(t)
	c := shared.cluster(t, "one-primproc", 1, "0.01")
	conn, err := shared.exemgr(t, c, "tcp").db(t, false).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	level := func() string {
		t.Helper()
		var v string
		if err := conn.QueryRowContext(ctx, "SELECT @@colink_pushdown").Scan(&v); err != nil {
			t.Fatalf("SELECT @@colink_pushdown: %s", errorText(err))
		}
		return v
	}
	explainTail := func() string {
		t.Helper()
		rows, err := conn.QueryContext(ctx, "EXPLAIN SELECT count(*) FROM lineitem WHERE l_quantity < 3")
		if err != nil {
			t.Fatalf("EXPLAIN: %s", errorText(err))
		}
		defer rows.Close()
		var last string
		for rows.Next() {
			if err := rows.Scan(&last); err != nil {
				t.Fatal(err)
			}
		}
		return last
	}
	if got := level(); got != "full" {
		t.Fatalf("default level %q, want full", got)
	}
	if tail := explainTail(); strings.Contains(tail, "pushdown=") {
		t.Errorf("EXPLAIN at full names a level: %q", tail)
	}
	if _, err := conn.ExecContext(ctx, "SET colink_pushdown = 'SCAN'"); err != nil {
		t.Fatal(errorText(err))
	}
	if got := level(); got != "scan" {
		t.Errorf("after SET 'SCAN': %q", got)
	}
	if tail := explainTail(); !strings.Contains(tail, "pushdown=scan") {
		t.Errorf("EXPLAIN at scan ends %q", tail)
	}
	_, err = conn.ExecContext(ctx, "SET colink_pushdown = 'everything'")
	if got := errorText(err); !strings.Contains(got, "ERROR 1231") || !strings.Contains(got, "full, filter or scan") {
		t.Errorf("SET to a bad level: %s", got)
	}
	_, err = conn.ExecContext(ctx, "SET colink_pushdown = 2")
	if got := errorText(err); !strings.Contains(got, "ERROR 1231") {
		t.Errorf("SET to a number: %s", got)
	}
	if got := level(); got != "scan" {
		t.Errorf("after failed SETs: %q, want scan still", got)
	}
	if _, err := conn.ExecContext(ctx, "SET colink_pushdown = DEFAULT"); err != nil {
		t.Fatal(errorText(err))
	}
	if got := level(); got != "full" {
		t.Errorf("after SET DEFAULT: %q", got)
	}
}
