package fragment_test

import (
	"context"
	"errors"
	"io"
	"math/big"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/enginetest"
	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/primproc/fragment"
	"github.com/colinkdb/colink/storage"
	"github.com/colinkdb/colink/tpch"
)

const sf = 0.01

// load generates SF 0.01 into n stores in a temp dir (segments of 1024 rows, row groups of
// 512, lineitem and orders clustered by date).
func load(t *testing.T, n int) []*storage.Store {
	t.Helper()
	dir := t.TempDir()
	var out []*storage.Store
	for i := range n {
		s, err := storage.Open(filepath.Join(dir, string(rune('a'+i))), storage.Options{RowGroupRows: 512, SegmentRows: 1024, CacheSize: 64 << 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out = append(out, s)
	}
	err := enginetest.LoadTPCH(context.Background(), out, enginetest.LoadOptions{SF: sf, SegmentRows: 1024, Cluster: true, Tables: []string{"lineitem", "nation"}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var money = vec.Decimal(15, 2)

// q6 is TPC-H Q6 as a fragment: scan lineitem, filter, partially aggregate the revenue.
func q6() *exec.Fragment {
	col := expr.ColRef
	dec := func(s string) *expr.Expr { return expr.Const(vec.MustParseDecimal(s)) }
	date := func(s string) *expr.Expr { return expr.Const(vec.MustParseDate(s)) }
	return &exec.Fragment{
		Scan: exec.Scan{Table: "lineitem",
			Columns: []string{"l_quantity", "l_extendedprice", "l_discount", "l_shipdate"},
			Types:   []vec.Type{money, money, money, vec.DateType},
			Zone: []exec.ZonePredicate{
				{Col: 3, Op: expr.OpGe, Value: vec.MustParseDate("1994-01-01")},
				{Col: 3, Op: expr.OpLt, Value: vec.MustParseDate("1995-01-01")},
			}},
		Steps: []exec.Step{
			{Filter: expr.Call(expr.OpAnd,
				expr.Call(expr.OpGe, col(3), date("1994-01-01")),
				expr.Call(expr.OpLt, col(3), date("1995-01-01")),
				expr.Call(expr.OpGe, col(2), dec("0.05")),
				expr.Call(expr.OpLe, col(2), dec("0.07")),
				expr.Call(expr.OpLt, col(0), dec("24")))},
			{Project: []*expr.Expr{expr.Call(expr.OpMul, col(1), col(2))}},
			{Aggregate: &exec.AggStep{Spec: exec.AggSpec{Aggs: []exec.Aggregate{{Func: exec.AggSum, Col: 0}}}}},
		},
	}
}

// q6Want computes Q6's revenue (scaled by 10^4) with a plain loop over the generator's rows.
func q6Want(t *testing.T) *big.Int {
	sc, err := tpch.NewScale(sf)
	if err != nil {
		t.Fatal(err)
	}
	g, err := tpch.NewGenerator(sc, "lineitem", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	lo, hi := int32(vec.MustParseDate("1994-01-01").Int), int32(vec.MustParseDate("1995-01-01").Int)
	sum := new(big.Int)
	for {
		rec, err := g.Next()
		if err == io.EOF {
			return sum
		}
		if err != nil {
			t.Fatal(err)
		}
		idx := func(name string) int { return rec.Schema().FieldIndices(name)[0] }
		qty := rec.Column(idx("l_quantity")).(*array.Decimal64)
		price := rec.Column(idx("l_extendedprice")).(*array.Decimal64)
		disc := rec.Column(idx("l_discount")).(*array.Decimal64)
		ship := rec.Column(idx("l_shipdate")).(*array.Date32)
		for i := 0; i < int(rec.NumRows()); i++ {
			d := int32(ship.Value(i))
			if d >= lo && d < hi && disc.Value(i) >= 5 && disc.Value(i) <= 7 && qty.Value(i) < 2400 {
				sum.Add(sum, big.NewInt(int64(price.Value(i))*int64(disc.Value(i))))
			}
		}
		rec.Release()
	}
}

// run runs f on every store and returns the sum of the first output column over all rows,
// and the stats of each run.
func run(t *testing.T, stores []*storage.Store, f *exec.Fragment, opts fragment.Options) (*big.Int, []exec.FragmentStats) {
	t.Helper()
	sum := new(big.Int)
	var stats []exec.FragmentStats
	for _, st := range stores {
		tb, fs := collect(t, st, f, opts)
		for _, row := range tb.Rows {
			if !row[0].Null {
				sum.Add(sum, bigOf(row[0].Decimal()))
			}
		}
		stats = append(stats, fs)
	}
	return sum, stats
}

// collect runs f on a store and returns all its output rows and its stats.
func collect(t *testing.T, st *storage.Store, f *exec.Fragment, opts fragment.Options) (*vec.Table, exec.FragmentStats) {
	t.Helper()
	ctx := context.Background()
	snap := st.Snapshot()
	s, err := runFragment(ctx, snap, f, nil, opts)
	snap.Release()
	if err != nil {
		t.Fatal(err)
	}
	tb := &vec.Table{}
	for {
		rec, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if rec == nil {
			break
		}
		err = tb.AppendRecord(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	stats := s.Stats()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return tb, stats
}

func bigOf(v vec.Int128) *big.Int {
	b, _ := new(big.Int).SetString(v.String(), 10)
	return b
}

// TestQ6 checks a scan + filter + partial aggregate against a plain loop over the
// generator's rows, with one store and with the segments dealt over two, with 1 and 2
// workers; and that the date zone maps skip row groups of the clustered lineitem.
func TestQ6(t *testing.T) {
	want := q6Want(t)
	one, two := load(t, 1), load(t, 2)
	for _, threads := range []int{1, 2} {
		opts := fragment.Options{Threads: threads}
		got, st := run(t, one, q6(), opts)
		if got.Cmp(want) != 0 {
			t.Fatalf("one store, %d threads: revenue %s, want %s", threads, got, want)
		}
		s := st[0]
		if s.RowGroups == 0 || s.RowGroupsEliminated == 0 || s.RowGroupsEliminated >= s.RowGroups {
			t.Errorf("zone maps: %d of %d row groups eliminated", s.RowGroupsEliminated, s.RowGroups)
		}
		if s.RowsScanned == 0 || s.RowsScanned >= 60175 || s.RowsProduced == 0 || s.Workers != threads {
			t.Errorf("stats %+v", s)
		}
		got2, st2 := run(t, two, q6(), opts)
		if got2.Cmp(want) != 0 {
			t.Fatalf("two stores, %d threads: revenue %s, want %s", threads, got2, want)
		}
		if st2[0].RowGroups == 0 || st2[1].RowGroups == 0 || st2[0].RowGroups+st2[1].RowGroups != s.RowGroups {
			t.Errorf("two stores hold %d + %d row groups, one store %d", st2[0].RowGroups, st2[1].RowGroups, s.RowGroups)
		}
	}
	// Without zone predicates nothing is eliminated, and the answer is the same.
	f := q6()
	f.Scan.Zone = nil
	got, st := run(t, one, f, fragment.Options{Threads: 2})
	if got.Cmp(want) != 0 || st[0].RowGroupsEliminated != 0 || st[0].RowsScanned != 60175 {
		t.Errorf("no zone predicates: revenue %s (want %s), stats %+v", got, want, st[0])
	}
}

// TestBuildSide runs a join step against records shipped with the fragment: a semi join of
// lineitem's ship dates with one date, counted, against a plain loop.
func TestBuildSide(t *testing.T) {
	stores := load(t, 1)
	b := array.NewDate32Builder(memory.DefaultAllocator)
	b.Append(arrow.Date32(vec.MustParseDate("1995-03-15").Int))
	arr := b.NewArray()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "d", Type: arrow.FixedWidthTypes.Date32}}, nil), []arrow.Array{arr}, 1)
	defer rec.Release()
	arr.Release()
	f := &exec.Fragment{
		Scan:   exec.Scan{Table: "lineitem", Columns: []string{"l_shipdate"}, Types: []vec.Type{vec.DateType}},
		Builds: []exec.BuildSide{{Types: []vec.Type{vec.DateType}}},
		Steps: []exec.Step{
			{Join: &exec.JoinStep{Build: 0, Spec: exec.JoinSpec{Kind: exec.JoinSemi, ProbeKeys: []int{0}, BuildKeys: []int{0}}}},
			{Aggregate: &exec.AggStep{Spec: exec.AggSpec{Aggs: []exec.Aggregate{{Func: exec.AggCountStar}}}}},
		},
	}
	ctx := context.Background()
	snap := stores[0].Snapshot()
	defer snap.Release()
	s, err := runFragment(ctx, snap, f, [][]arrow.RecordBatch{{rec}}, fragment.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int64
	for {
		r, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r == nil {
			break
		}
		for i := 0; i < int(r.NumRows()); i++ {
			n += r.Column(0).(*array.Int64).Value(i)
		}
		r.Release()
	}
	// The plain loop.
	var want int64
	sc, _ := tpch.NewScale(sf)
	g, _ := tpch.NewGenerator(sc, "lineitem", 1, 1)
	defer g.Close()
	day := arrow.Date32(vec.MustParseDate("1995-03-15").Int)
	for {
		r, err := g.Next()
		if err != nil {
			break
		}
		ship := r.Column(r.Schema().FieldIndices("l_shipdate")[0]).(*array.Date32)
		for i := 0; i < ship.Len(); i++ {
			if ship.Value(i) == day {
				want++
			}
		}
		r.Release()
	}
	if n != want || n == 0 {
		t.Fatalf("%d lineitems shipped on 1995-03-15, want %d", n, want)
	}
}

// TestBadFragments checks that unknown tables and columns, type mismatches and a memory
// limit give errors that name the problem.
func TestBadFragments(t *testing.T) {
	stores := load(t, 1)
	ctx := context.Background()
	snap := stores[0].Snapshot()
	defer snap.Release()
	cases := []struct {
		f    *exec.Fragment
		want string
	}{
		{&exec.Fragment{Scan: exec.Scan{Table: "nosuch", Columns: []string{"x"}, Types: []vec.Type{vec.Int64Type}}}, "nosuch"},
		{&exec.Fragment{Scan: exec.Scan{Table: "lineitem", Columns: []string{"nosuch"}, Types: []vec.Type{vec.Int64Type}}}, "no column nosuch"},
		{&exec.Fragment{Scan: exec.Scan{Table: "lineitem", Columns: []string{"l_quantity"}, Types: []vec.Type{vec.Int64Type}}}, "l_quantity is decimal(15,2) in storage"},
		{&exec.Fragment{Scan: exec.Scan{Table: "lineitem", Columns: []string{"l_quantity"}, Types: []vec.Type{money}},
			Steps: []exec.Step{{Filter: expr.ColRef(0)}}}, "not bool"},
	}
	for _, c := range cases {
		_, err := runFragment(ctx, snap, c.f, nil, fragment.Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
	// Grouping every lineitem by its comment needs more than 64 KiB.
	f := &exec.Fragment{
		Scan:  exec.Scan{Table: "lineitem", Columns: []string{"l_comment"}, Types: []vec.Type{vec.StringType}},
		Steps: []exec.Step{{Aggregate: &exec.AggStep{Spec: exec.AggSpec{GroupBy: []int{0}}}}},
	}
	s, err := runFragment(ctx, snap, f, nil, fragment.Options{Threads: 1, QueryMemory: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for {
		r, err := s.Next(ctx)
		if err != nil {
			if !errors.Is(err, exec.ErrMemoryLimit) {
				t.Fatalf("error %v, want the memory limit", err)
			}
			return
		}
		if r == nil {
			t.Fatal("no memory limit error")
		}
		r.Release()
	}
}

// TestSharedPool runs a grouping over every order key (15 000 groups, so the hash table
// and the sums outgrow their first arrays) several times with one shared pool, as the
// daemon does: every run gives the rows a run without the pool gives, and the pool serves
// the later runs from what the earlier ones gave back.
func TestSharedPool(t *testing.T) {
	stores := load(t, 1)
	f := &exec.Fragment{
		Scan: exec.Scan{Table: "lineitem", Columns: []string{"l_orderkey", "l_quantity", "l_extendedprice"},
			Types: []vec.Type{vec.Int64Type, money, money}},
		Steps: []exec.Step{{Aggregate: &exec.AggStep{Final: true, Spec: exec.AggSpec{GroupBy: []int{0},
			Aggs: []exec.Aggregate{{Func: exec.AggSum, Col: 1}, {Func: exec.AggAvg, Col: 2}, {Func: exec.AggCountStar}}}}}},
	}
	rows := func(opts fragment.Options) string {
		t.Helper()
		tb, _ := collect(t, stores[0], f, opts)
		var lines []string
		for _, row := range tb.Rows {
			var cells []string
			for _, d := range row {
				cells = append(cells, vec.FormatCell(d))
			}
			lines = append(lines, strings.Join(cells, " | "))
		}
		slices.Sort(lines)
		if len(lines) != 15_000 {
			t.Fatalf("%d groups, want SF 0.01's 15 000 orders", len(lines))
		}
		return strings.Join(lines, "\n")
	}
	want := rows(fragment.Options{Threads: 2})
	pool := vec.NewScribblingPool(256 << 20)
	for i := range 3 {
		if got := rows(fragment.Options{Threads: 2, Pool: pool}); got != want {
			t.Fatalf("run %d with the shared pool differs from a run without it", i)
		}
	}
	if s := pool.Stats(); (s.Gets-s.Misses) == 0 || s.Idle == 0 {
		t.Fatalf("the shared pool recycled nothing: %+v", s)
	}
}

// runFragment validates f, as primproc's door does, and runs it.
func runFragment(ctx context.Context, snap *storage.Snapshot, f *exec.Fragment, builds [][]arrow.RecordBatch, opts fragment.Options) (*fragment.Stream, error) {
	v, err := f.Validate()
	if err != nil {
		return nil, err
	}
	return fragment.Run(ctx, snap, nil, v, builds, opts)
}

// TestTopNBound runs top-N fragments over lineitem (SF 0.01: 59 segments of 1024 rows,
// clustered by ship date within each) and checks their keys against a full scan sorted
// here, and that the scan skipped row groups by the top-N's cutoff where the first key is a
// plain scan column, whichever order the segments were written in.
func TestTopNBound(t *testing.T) {
	one := load(t, 1)[0]
	cols := []string{"l_orderkey", "l_shipdate", "l_quantity"}
	types := []vec.Type{vec.Int64Type, vec.DateType, money}
	lowQty := exec.Step{Filter: expr.Call(expr.OpLt, expr.ColRef(2), expr.Const(vec.MustParseDecimal("10")))}
	cases := []struct {
		name   string
		filter bool
		key    exec.SortKey
		limit  int64
		offset int64
		skips  bool
	}{
		{"orderkey ascending", false, exec.SortKey{Col: 0}, 10, 0, true},
		{"orderkey descending", false, exec.SortKey{Col: 0, Desc: true}, 10, 0, true},
		{"shipdate descending, filtered, offset", true, exec.SortKey{Col: 1, Desc: true}, 7, 5, true},
		{"quantity (a decimal), where every row group holds the least values", false, exec.SortKey{Col: 2}, 3000, 0, false},
	}
	base := &exec.Fragment{Scan: exec.Scan{Table: "lineitem", Columns: cols, Types: types}}
	all, _ := collect(t, one, base, fragment.Options{Threads: 1})
	filtered := &exec.Fragment{Scan: base.Scan, Steps: []exec.Step{lowQty}}
	low, _ := collect(t, one, filtered, fragment.Options{Threads: 1})
	for _, c := range cases {
		rows := all.Rows
		if c.filter {
			rows = low.Rows
		}
		keys := make([]vec.Datum, len(rows))
		for i, r := range rows {
			keys[i] = r[c.key.Col]
		}
		slices.SortFunc(keys, func(a, b vec.Datum) int {
			if c.key.Desc {
				return cmpDatums(t, b, a)
			}
			return cmpDatums(t, a, b)
		})
		want := keys[c.offset : c.offset+c.limit]
		for _, threads := range []int{1, 2} {
			f := &exec.Fragment{Scan: base.Scan}
			if c.filter {
				f.Steps = append(f.Steps, lowQty)
			}
			f.Steps = append(f.Steps, exec.Step{TopN: &exec.TopNStep{Keys: []exec.SortKey{c.key}, Limit: c.limit, Offset: c.offset}})
			got, st := collect(t, one, f, fragment.Options{Threads: threads})
			if int64(len(got.Rows)) != c.limit {
				t.Fatalf("%s, %d threads: %d rows, want %d", c.name, threads, len(got.Rows), c.limit)
			}
			for i, r := range got.Rows {
				if cmpDatums(t, r[c.key.Col], want[i]) != 0 {
					t.Fatalf("%s, %d threads: row %d key %v, want %v", c.name, threads, i, r[c.key.Col], want[i])
				}
			}
			skipped := st.RowGroupsEliminated > 0
			if skipped != c.skips || st.RowsScanned >= int64(len(all.Rows)) == c.skips {
				t.Errorf("%s, %d threads: %d of %d row groups skipped, %d rows scanned", c.name, threads, st.RowGroupsEliminated, st.RowGroups, st.RowsScanned)
			}
		}
	}
}

func cmpDatums(t *testing.T, a, b vec.Datum) int {
	t.Helper()
	c, err := vec.CompareDatums(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestClusteredAggregate: lineitem loaded in l_orderkey order (each segment its own run of
// orders, sorted by l_shipdate within) groups by l_orderkey segment by segment, with the
// rows of the one worker's aggregation, and its stats count the rows grouped so; by
// l_shipdate, whose ranges every segment shares, it merges as before.
func TestClusteredAggregate(t *testing.T) {
	one := load(t, 1)[0]
	cols := []string{"l_orderkey", "l_shipdate", "l_quantity"}
	types := []vec.Type{vec.Int64Type, vec.DateType, money}
	for _, c := range []struct {
		name      string
		key       int
		clustered bool
	}{{"l_orderkey", 0, true}, {"l_shipdate", 1, false}} {
		f := &exec.Fragment{Scan: exec.Scan{Table: "lineitem", Columns: cols, Types: types}, Steps: []exec.Step{
			{Aggregate: &exec.AggStep{Final: true, Spec: exec.AggSpec{GroupBy: []int{c.key},
				Aggs: []exec.Aggregate{{Func: exec.AggSum, Col: 2}, {Func: exec.AggCountStar}, {Func: exec.AggAvg, Col: 2}}}}},
			{Filter: expr.Call(expr.OpGt, expr.ColRef(2), expr.Const(vec.Int64Datum(2)))},
		}}
		want, _ := collect(t, one, f, fragment.Options{Threads: 1})
		wantRows := strings.Split(want.String(), "\n")
		slices.Sort(wantRows)
		for _, threads := range []int{2, 3} {
			got, st := collect(t, one, f, fragment.Options{Threads: threads})
			gotRows := strings.Split(got.String(), "\n")
			slices.Sort(gotRows)
			if !slices.Equal(gotRows, wantRows) || len(wantRows) < 100 {
				t.Fatalf("%s, %d threads: %d rows, want %d (equal: %v)", c.name, threads, len(gotRows), len(wantRows), slices.Equal(gotRows, wantRows))
			}
			if grouped := st.RowsGroupedInUnits; c.clustered != (grouped > st.RowsScanned/2) || grouped > st.RowsScanned {
				t.Errorf("%s, %d threads: %d of %d rows grouped within their segments", c.name, threads, grouped, st.RowsScanned)
			}
		}
	}
}
