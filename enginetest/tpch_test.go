package enginetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colinkdb/colink/dbt3/answers"
	"github.com/colinkdb/colink/dbt3/queries"
	"github.com/colinkdb/colink/internal/testref"
	"github.com/colinkdb/colink/primproc/fragment"
	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/physical"
	"github.com/colinkdb/colink/storage"
)

// answersDir is where the TPC-H reference answers live ("" if absent: see testref).
func answersDir() string {
	dir, _ := testref.Path("answers")
	return dir
}

// testStores are loaded stores shared by the tests of one scale factor.
type testStores struct {
	one []*storage.Store // everything in one store
	two []*storage.Store // segments dealt over two stores
}

var (
	storesMu sync.Mutex
	loaded   = map[float64]*testStores{}
)

// smallStoreOptions gives SF 0.01 tables several segments and row groups.
func storeOptions(sf float64) (storage.Options, int) {
	if sf <= 0.01 {
		return storage.Options{RowGroupRows: 512, SegmentRows: 1024, CacheSize: 256 << 20}, 1024
	}
	if sf <= 0.1 {
		return storage.Options{RowGroupRows: 8192, SegmentRows: 32768, CacheSize: 1 << 30}, 32768
	}
	return storage.Options{CacheSize: 8 << 30}, storage.DefaultSegmentRows
}

// stores loads SF sf once per test binary into one store and into two.
func stores(t testing.TB, sf float64) *testStores {
	t.Helper()
	storesMu.Lock()
	defer storesMu.Unlock()
	if s, ok := loaded[sf]; ok {
		return s
	}
	dir, err := os.MkdirTemp("", fmt.Sprintf("colink-physical-sf%g-", sf))
	if err != nil {
		t.Fatal(err)
	}
	opts, segRows := storeOptions(sf)
	open := func(name string) *storage.Store {
		s, err := storage.Open(filepath.Join(dir, name), opts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ts := &testStores{one: []*storage.Store{open("one")}, two: []*storage.Store{open("two-a"), open("two-b")}}
	start := time.Now()
	ctx := context.Background()
	lo := LoadOptions{SF: sf, SegmentRows: segRows, Cluster: true}
	if err := LoadTPCH(ctx, ts.one, lo); err != nil {
		t.Fatal(err)
	}
	if err := LoadTPCH(ctx, ts.two, lo); err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded SF %g twice in %v", sf, time.Since(start))
	loaded[sf] = ts
	return ts
}

func TestMain(m *testing.M) {
	code := m.Run()
	storesMu.Lock()
	for _, ts := range loaded {
		for _, s := range append(ts.one, ts.two...) {
			dir := s.Dir()
			s.Close()
			os.RemoveAll(filepath.Dir(dir))
		}
	}
	storesMu.Unlock()
	os.Exit(code)
}

// newSession returns a session over the stores, planning with the statistics measured from
// them (MeasureStats), as exemgr does from the primprocs' catalogs; without stores, with
// TPC-H's known distributions at sf.
func newSession(t testing.TB, sf float64, st []*storage.Store) *Session {
	t.Helper()
	var stats catalog.Stats = catalog.TPCHStats{SF: sf}
	if len(st) > 0 {
		m, err := MeasureStats(st)
		if err != nil {
			t.Fatal(err)
		}
		stats = m
	}
	return &Session{
		Catalog:   catalog.TPCH("tpch"),
		Stats:     stats,
		Runner:    &LocalRunner{Stores: st, Options: fragment.Options{Threads: 2}},
		DB:        "tpch",
		Primprocs: len(st),
		Exec:      physical.ExecOptions{Threads: 2}, // sibling build sides at once
	}
}

// expectedFile names the answer file of query n at sf: Q11's script keeps the fraction
// 0.0001 whatever the scale factor, which q11-fraction-0.0001.csv answers.
func expectedFile(sf float64, n int) string {
	name := fmt.Sprintf("q%02d.csv", n)
	if n == 11 {
		name = "q11-fraction-0.0001.csv"
	}
	return filepath.Join(answersDir(), fmt.Sprintf("sf%g", sf), name)
}

func runTPCH(t *testing.T, sf float64) {
	testref.TPCH(t, "answers", fmt.Sprintf("sf%g", sf))
	ts := stores(t, sf)
	for _, layout := range []struct {
		name   string
		stores []*storage.Store
	}{{"one-primproc", ts.one}, {"two-primprocs", ts.two}} {
		for _, pushdown := range []physical.Pushdown{physical.PushdownFull, physical.PushdownFilter, physical.PushdownScan} {
			s := newSession(t, sf, layout.stores)
			s.Pushdown = pushdown
			for n := 1; n <= queries.Count; n++ {
				t.Run(fmt.Sprintf("%s/%s/q%02d", layout.name, pushdown, n), func(t *testing.T) {
					text, err := queries.Get(n)
					if err != nil {
						t.Fatal(err)
					}
					want, err := answers.ReadFile(expectedFile(sf, n))
					if err != nil {
						t.Fatal(err)
					}
					out, err := s.Run(context.Background(), text)
					if err != nil {
						t.Fatal(err)
					}
					if err := answers.Compare(out.Table, want); err != nil {
						t.Errorf("%v\nplan:\n%s", err, out.Plan.Explain())
					}
				})
			}
		}
	}
}

// TestTPCH runs the 22 validation queries at SF 0.01 with one primproc and with two, at
// every pushdown level, and compares every result with the reference answers.
func TestTPCH(t *testing.T) { runTPCH(t, 0.01) }

// TestTPCHSF01 does the same at SF 0.1 (COLINK_SF01=1).
func TestTPCHSF01(t *testing.T) {
	if os.Getenv("COLINK_SF01") == "" {
		t.Skip("set COLINK_SF01=1 to run the 22 queries at SF 0.1")
	}
	runTPCH(t, 0.1)
}

// TestExplainQ3 checks the shape of Q3's plan: three fragments chained by broadcasts, the
// aggregate split between the primprocs and exemgr, zone maps on the dates.
func TestExplainQ3(t *testing.T) {
	s := newSession(t, 1, nil)
	text, _ := queries.Get(3)
	p, err := s.Plan(context.Background(), text)
	if err != nil {
		t.Fatal(err)
	}
	got := p.Explain()
	for _, want := range []struct{ where, text string }{
		{"exemgr", "TopN 10 by revenue DESC, o_orderdate"},
		{"exemgr", "Aggregate final group=[l_orderkey, o_orderdate, o_shippriority]"},
		{"primproc", "Aggregate partial group=[l_orderkey, o_orderdate, o_shippriority]"},
		{"primproc", "Join inner PM on=[l_orderkey = o_orderkey] probing broadcast 2"},
		{"exemgr", "Broadcast 2 to every primproc"},
		{"exemgr", "Gather fragment 2 from every primproc"},
		{"primproc", "Join inner PM on=[o_custkey = c_custkey] probing broadcast 1"},
		{"primproc", "Scan lineitem cols=[l_orderkey, l_extendedprice, l_discount, l_shipdate] zone=[l_shipdate > date '1995-03-15']"},
		{"primproc", "Scan orders cols=[o_orderkey, o_custkey, o_orderdate, o_shippriority] zone=[o_orderdate < date '1995-03-15']"},
		{"primproc", "Scan customer cols=[c_custkey, c_mktsegment] zone=[c_mktsegment = 'BUILDING']"},
	} {
		found := false
		for _, line := range strings.Split(got, "\n") {
			where, text, _ := strings.Cut(line, " ")
			if where == want.where && strings.HasPrefix(strings.TrimSpace(text), want.text) {
				found = true
			}
		}
		if !found {
			t.Errorf("EXPLAIN lacks %s line %q:\n%s", want.where, want.text, got)
		}
	}
	if len(p.Fragments()) != 3 {
		t.Errorf("%d fragments, want 3:\n%s", len(p.Fragments()), got)
	}
}
