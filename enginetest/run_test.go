package enginetest

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/colinkdb/colink/dbt3/queries"
	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/sql/physical"
)

// TestQueryStats checks the statistics of a run against each other: what arrived from the
// primprocs is what they produced, each fragment ran once on each primproc, build sides
// were shipped to both, and the date zone maps skipped row groups.
func TestQueryStats(t *testing.T) {
	ts := stores(t, 0.01)
	s := newSession(t, 0.01, ts.two)
	for _, n := range []int{3, 6} {
		text, _ := queries.Get(n)
		out, err := s.Run(context.Background(), text)
		if err != nil {
			t.Fatal(err)
		}
		st := out.Stats
		if st.FragmentsRun != len(out.Plan.Fragments()) || len(st.Fragments) != st.FragmentsRun {
			t.Errorf("Q%d: %d fragment runs recorded, plan has %d fragments", n, st.FragmentsRun, len(out.Plan.Fragments()))
		}
		var rows, batches, bytes int64
		for _, fr := range st.Fragments {
			if len(fr.Streams) != 2 {
				t.Errorf("Q%d fragment %d: %d streams, want one per primproc", n, fr.Fragment, len(fr.Streams))
			}
			var produced, producedBytes int64
			for _, ps := range fr.Streams {
				produced += ps.RowsProduced
				producedBytes += ps.BytesProduced
			}
			if produced != fr.RowsReceived || producedBytes != fr.BytesReceived {
				t.Errorf("Q%d fragment %d: received %d rows / %d bytes, primprocs produced %d / %d", n, fr.Fragment, fr.RowsReceived, fr.BytesReceived, produced, producedBytes)
			}
			rows, batches, bytes = rows+fr.RowsReceived, batches+fr.BatchesReceived, bytes+fr.BytesReceived
		}
		if rows != st.RowsReceived || batches != st.BatchesReceived || bytes != st.BytesReceived || rows == 0 {
			t.Errorf("Q%d: totals %d rows, %d batches, %d bytes; fragments add up to %d, %d, %d", n, st.RowsReceived, st.BatchesReceived, st.BytesReceived, rows, batches, bytes)
		}
		if st.Elapsed <= 0 || st.Primprocs.RowsScanned == 0 || st.Primprocs.RowGroups == 0 {
			t.Errorf("Q%d: stats %+v", n, st)
		}
		switch n {
		case 3:
			if st.FragmentsRun != 3 || st.BytesBroadcast == 0 {
				t.Errorf("Q3: %d fragment runs, %d bytes broadcast", st.FragmentsRun, st.BytesBroadcast)
			}
		case 6:
			if st.Primprocs.RowGroupsEliminated == 0 || st.BytesBroadcast != 0 {
				t.Errorf("Q6: %d of %d row groups eliminated, %d bytes broadcast", st.Primprocs.RowGroupsEliminated, st.Primprocs.RowGroups, st.BytesBroadcast)
			}
		}
	}
}

// TestMemoryLimit runs a query whose exemgr side needs more memory than allowed (over two
// stores, so that exemgr finishes the aggregate; with one, the store does).
func TestMemoryLimit(t *testing.T) {
	ts := stores(t, 0.01)
	s := newSession(t, 0.01, ts.two)
	s.Exec = physical.ExecOptions{QueryMemory: 256 << 10}
	_, err := s.Run(context.Background(), "select o_comment, count(*) from orders group by o_comment order by 2 desc limit 3")
	if !errors.Is(err, exec.ErrMemoryLimit) {
		t.Fatalf("error %v, want the memory limit", err)
	}
	// The same session still answers what fits.
	s.Exec.QueryMemory = 0
	if _, err := s.Run(context.Background(), "select count(*) from orders"); err != nil {
		t.Fatal(err)
	}
}

// TestCancel cancels queries before and while they run: they fail with the context's
// error and leave no goroutine behind.
func TestCancel(t *testing.T) {
	ts := stores(t, 0.01)
	s := newSession(t, 0.01, ts.two)
	text, _ := queries.Get(9)
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Run(ctx, text); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before: error %v", err)
	}
	p, err := s.Plan(context.Background(), "select l_orderkey, l_partkey from lineitem")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	res, err := p.Execute(ctx, s.Runner, physical.ExecOptions{OutputRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := res.Next(ctx)
	if err != nil || rec == nil {
		t.Fatalf("first record: %v", err)
	}
	rec.Release()
	cancel()
	for {
		rec, err := res.Next(ctx)
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v, want context.Canceled", err)
			}
			break
		}
		if rec == nil {
			t.Fatal("the cancelled query ran to its end")
		}
		rec.Release()
	}
	res.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after the cancelled queries, %d before", n, before)
	}
}
