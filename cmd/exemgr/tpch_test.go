package main

import (
	"context"
	dsql "database/sql"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/colinkdb/colink/dbt3/answers"
	"github.com/colinkdb/colink/dbt3/queries"
)

// TestTPCH runs the 22 validation queries at SF 0.01 through go-sql-driver/mysql against
// exemgr with one primproc and with two, over the link's tcp and unix transports, and
// compares every result with the reference answers (strings and counts exactly, sums to the
// printed digit, averages within 1e-6 relative).
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
			for _, transport := range []string{"tcp", "unix"} {
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
							t.Errorf("Q%d: %s", n, errorText(err))
							continue
						}
						if err := answers.Compare(got, want[n]); err != nil {
							t.Errorf("Q%d: %v", n, err)
						}
					}
					t.Logf("22 queries in %v", time.Since(start).Round(time.Millisecond))
					checkTransport(t, conn, transport)
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
