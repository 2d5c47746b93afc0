package exec

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/internal/lineitem"
	"github.com/colinkdb/colink/exec/vec"
)

// sharedSource hands out records to concurrent workers, as primproc's scan does.
type sharedSource struct {
	mu   sync.Mutex
	recs []arrow.RecordBatch
	i    int
}

func (s *sharedSource) Next(ctx context.Context) (arrow.RecordBatch, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.i >= len(s.recs) {
		return nil, nil
	}
	r := s.recs[s.i]
	s.i++
	r.Retain()
	return r, nil
}

func lineitemScan(zone ...ZonePredicate) Scan {
	return Scan{Table: "lineitem", Columns: lineitem.Names, Types: lineitem.Types(), Zone: zone}
}

func mustExpr(s string) *expr.Expr { return expr.MustParse(s, lineitem.Names) }

// runFragment runs f (after a msgpack round trip) over recs and returns its output.
func runFragment(t *testing.T, f *Fragment, recs []arrow.RecordBatch, builds [][]arrow.RecordBatch, opts Options) (*vec.Table, Stats, error) {
	t.Helper()
	raw, err := msgpack.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var g Fragment
	if err := msgpack.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	if g.String() != f.String() {
		t.Fatalf("msgpack round trip changed the fragment:\n%s\nvs\n%s", g.String(), f.String())
	}
	mem := memory.NewCheckedAllocator(vec.NewPool(0))
	opts.Alloc = mem
	p, err := validateAndBuild(&g, &sharedSource{recs: recs}, builds, opts)
	if err != nil {
		return nil, Stats{}, err
	}
	out := &vec.Table{Types: p.Types()}
	for i := range p.Types() {
		out.Names = append(out.Names, p.Schema().Field(i).Name)
	}
	for {
		rec, err := p.Next(context.Background())
		if err != nil {
			p.Close()
			return nil, p.Stats(), err
		}
		if rec == nil {
			break
		}
		if err := out.AppendRecord(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	mem.AssertSize(t, 0)
	return out, p.Stats(), nil
}

func bigDec(v vec.Int128) *big.Int {
	b := big.NewInt(v.Hi)
	b.Lsh(b, 64)
	return b.Add(b, new(big.Int).SetUint64(v.Lo))
}

// rows visits every generated row's columns as plain values.
type liRow struct {
	orderKey              int64
	qty, price, disc, tax int64
	flag, status          string
	ship                  int32
}

func eachRow(recs []arrow.RecordBatch, f func(r liRow)) {
	for _, rec := range recs {
		ok := rec.Column(lineitem.OrderKey).(*array.Int64)
		q := rec.Column(lineitem.Quantity).(*array.Decimal64)
		p := rec.Column(lineitem.ExtendedPrice).(*array.Decimal64)
		d := rec.Column(lineitem.Discount).(*array.Decimal64)
		tx := rec.Column(lineitem.Tax).(*array.Decimal64)
		rf := rec.Column(lineitem.ReturnFlag).(*array.String)
		ls := rec.Column(lineitem.LineStatus).(*array.String)
		sd := rec.Column(lineitem.ShipDate).(*array.Date32)
		for i := 0; i < int(rec.NumRows()); i++ {
			f(liRow{ok.Value(i), int64(q.Value(i)), int64(p.Value(i)), int64(d.Value(i)), int64(tx.Value(i)),
				rf.Value(i), ls.Value(i), int32(sd.Value(i))})
		}
	}
}

func q6Fragment() *Fragment {
	return &Fragment{
		Scan: lineitemScan(ZonePredicate{Col: lineitem.ShipDate, Op: expr.OpGe, Value: vec.MustParseDate("1994-01-01")}),
		Steps: []Step{
			{Filter: mustExpr("(and (>= l_shipdate date'1994-01-01') (< l_shipdate date'1995-01-01') (between l_discount 0.05 0.07) (< l_quantity 24))")},
			{Project: []*expr.Expr{mustExpr("(* l_extendedprice l_discount)")}},
			{Aggregate: &AggStep{Spec: AggSpec{Aggs: []Aggregate{{Func: AggSum, Col: 0}}}}},
		},
		Names: []string{"revenue_sum"},
	}
}

// TestFragmentQ6 checks a Q6-shaped fragment against a plain loop over the generated rows,
// with 1, 2 and 3 workers; the partial sum must be exact.
func TestFragmentQ6(t *testing.T) {
	recs := lineitem.Generate(100_000, 8192, 1)
	lo, hi := vec.DaysFromCivil(1994, 1, 1), vec.DaysFromCivil(1995, 1, 1)
	want := new(big.Int)
	eachRow(recs, func(r liRow) {
		if r.ship >= lo && r.ship < hi && r.disc >= 5 && r.disc <= 7 && r.qty < 2400 {
			want.Add(want, new(big.Int).Mul(big.NewInt(r.price), big.NewInt(r.disc)))
		}
	})
	for _, threads := range []int{1, 2, 3} {
		out, st, err := runFragment(t, q6Fragment(), recs, nil, Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		// A partial aggregate ending the fragment emits one partial row per worker.
		if len(out.Rows) != threads || out.Types[0] != vec.Decimal(38, 4) {
			t.Fatalf("threads %d: output %s", threads, out)
		}
		got := new(big.Int)
		for _, r := range out.Rows {
			if !r[0].Null {
				got.Add(got, bigDec(r[0].Decimal()))
			}
		}
		if got.Cmp(want) != 0 {
			t.Fatalf("threads %d: sum %s, want %s", threads, got, want)
		}
		if st.RowsScanned != 100_000 || st.RowsProduced != int64(threads) || st.Workers != threads {
			t.Fatalf("threads %d: stats %+v", threads, st)
		}
	}
}

// TestFragmentQ1 checks a Q1-shaped fragment with final aggregation against a Go map.
func TestFragmentQ1(t *testing.T) {
	recs := lineitem.Generate(60_000, 5000, 2)
	f := &Fragment{
		Scan: lineitemScan(),
		Steps: []Step{
			{Filter: mustExpr("(<= l_shipdate (date_sub date'1998-12-01' 90 day))")},
			{Project: []*expr.Expr{mustExpr("l_returnflag"), mustExpr("l_linestatus"), mustExpr("l_quantity"),
				mustExpr("l_extendedprice"), mustExpr("(* l_extendedprice (- 1 l_discount))"),
				mustExpr("(* (* l_extendedprice (- 1 l_discount)) (+ 1 l_tax))"), mustExpr("l_discount")}},
			{Aggregate: &AggStep{Final: true, Spec: AggSpec{GroupBy: []int{0, 1}, Aggs: []Aggregate{
				{Func: AggSum, Col: 2}, {Func: AggSum, Col: 3}, {Func: AggSum, Col: 4}, {Func: AggSum, Col: 5},
				{Func: AggAvg, Col: 2}, {Func: AggAvg, Col: 3}, {Func: AggAvg, Col: 6}, {Func: AggCountStar}}}}},
			{TopN: &TopNStep{Keys: []SortKey{{Col: 0}, {Col: 1}}, Limit: 100}},
		},
	}
	type acc struct {
		qty, price, disc, charge, dsum *big.Int
		n                              int64
	}
	groups := map[string]*acc{}
	cut := vec.DaysFromCivil(1998, 9, 2)
	eachRow(recs, func(r liRow) {
		if r.ship > cut {
			return
		}
		k := r.flag + "|" + r.status
		a := groups[k]
		if a == nil {
			a = &acc{new(big.Int), new(big.Int), new(big.Int), new(big.Int), new(big.Int), 0}
			groups[k] = a
		}
		dp := big.NewInt(r.price * (100 - r.disc))
		a.qty.Add(a.qty, big.NewInt(r.qty))
		a.price.Add(a.price, big.NewInt(r.price))
		a.disc.Add(a.disc, dp)
		a.charge.Add(a.charge, new(big.Int).Mul(dp, big.NewInt(100+r.tax)))
		a.dsum.Add(a.dsum, big.NewInt(r.disc))
		a.n++
	})
	avg := func(sum *big.Int, n int64) string { // scale +4, half away from zero (sums are positive)
		q := new(big.Int).Mul(sum, big.NewInt(10000))
		q.Add(q, big.NewInt(n/2))
		return q.Div(q, big.NewInt(n)).String()
	}
	var want []string
	for k, a := range groups {
		want = append(want, fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s|%s|%d", k, a.qty, a.price, a.disc, a.charge,
			avg(a.qty, a.n), avg(a.price, a.n), avg(a.dsum, a.n), a.n))
	}
	slices.Sort(want)
	for _, threads := range []int{1, 3} {
		out, _, err := runFragment(t, f, recs, nil, Options{Threads: threads, OutputRows: 2})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range out.Rows {
			got = append(got, fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s|%s|%s|%d", r[0].Str, r[1].Str,
				bigDec(r[2].Decimal()), bigDec(r[3].Decimal()), bigDec(r[4].Decimal()), bigDec(r[5].Decimal()),
				bigDec(r[6].Decimal()), bigDec(r[7].Decimal()), bigDec(r[8].Decimal()), r[9].Int))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("threads %d:\n%s\nwant\n%s", threads, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestFragmentTopNLimit checks partial top-N and limit combined across workers.
func TestFragmentTopNLimit(t *testing.T) {
	recs := lineitem.Generate(30_000, 1000, 3)
	type kv struct{ price, key int64 }
	var all []kv
	eachRow(recs, func(r liRow) { all = append(all, kv{r.price, r.orderKey}) })
	slices.SortStableFunc(all, func(a, b kv) int {
		if a.price != b.price {
			return -cmpOrdered(a.price, b.price)
		}
		return cmpOrdered(a.key, b.key)
	})
	f := &Fragment{
		Scan: lineitemScan(),
		Steps: []Step{
			{Project: []*expr.Expr{mustExpr("l_extendedprice"), mustExpr("l_orderkey")}},
			{TopN: &TopNStep{Keys: []SortKey{{Col: 0, Desc: true}, {Col: 1}}, Limit: 5, Offset: 2}},
		},
	}
	out, _, err := runFragment(t, f, recs, nil, Options{Threads: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range out.Rows {
		w := all[i+2]
		if r[0].Int != w.price || r[1].Int != w.key {
			t.Fatalf("row %d: %s, want %d %d", i, out, w.price, w.key)
		}
	}
	if len(out.Rows) != 5 {
		t.Fatalf("%d rows", len(out.Rows))
	}
	lim := &Fragment{Scan: lineitemScan(), Steps: []Step{{Limit: &LimitStep{Limit: 10, Offset: 3}}}}
	out, _, err = runFragment(t, lim, recs, nil, Options{Threads: 2})
	if err != nil || len(out.Rows) != 10 {
		t.Fatalf("limit: %v %d rows", err, len(out.Rows))
	}
}

// buildRecords makes a build side: every 7th order key with a priority string.
func buildRecords(_ testing.TB, maxKey int64) []arrow.RecordBatch {
	types := []vec.Type{vec.Int64Type, vec.StringType}
	tab := &vec.Table{Names: []string{"o_orderkey", "o_prio"}, Types: types}
	for k := int64(7); k <= maxKey; k += 7 {
		tab.Rows = append(tab.Rows, []vec.Datum{vec.Int64Datum(k), vec.StringDatum(fmt.Sprintf("P%d", k%3))})
	}
	rb := vec.NewRecordBuilder(vec.SchemaOf(tab.Names, types), types, nil)
	rb.Append(tab.Batch(0, len(tab.Rows)))
	return []arrow.RecordBatch{rb.Finish()}
}

// TestFragmentJoin probes a broadcast build side: inner join then partial aggregation,
// and a mark join (NOT IN) counted.
func TestFragmentJoin(t *testing.T) {
	recs := lineitem.Generate(40_000, 3000, 4)
	var maxKey int64
	want := map[string]int64{}
	var notIn int64
	eachRow(recs, func(r liRow) {
		maxKey = max(maxKey, r.orderKey)
		if r.orderKey%7 == 0 {
			want[fmt.Sprintf("P%d", r.orderKey%3)] += r.qty
		} else {
			notIn++
		}
	})
	builds := [][]arrow.RecordBatch{buildRecords(t, maxKey)}
	defer builds[0][0].Release()
	f := &Fragment{
		Scan:   lineitemScan(),
		Builds: []BuildSide{{Types: []vec.Type{vec.Int64Type, vec.StringType}}},
		Steps: []Step{
			{Join: &JoinStep{Build: 0, Spec: JoinSpec{Kind: JoinInner, ProbeKeys: []int{lineitem.OrderKey}, BuildKeys: []int{0}}}},
			{Project: []*expr.Expr{expr.ColRef(9), expr.ColRef(lineitem.Quantity)}},
			{Aggregate: &AggStep{Spec: AggSpec{GroupBy: []int{0}, Aggs: []Aggregate{{Func: AggSum, Col: 1}}}}},
		},
	}
	out, _, err := runFragment(t, f, recs, builds, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Partial rows (one per group per worker) add up to the totals.
	got := map[string]int64{}
	for _, r := range out.Rows {
		got[r[0].Str] += int64(r[1].Decimal().Lo)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("sums %v, want %v", got, want)
	}
	mark := &Fragment{
		Scan:   lineitemScan(),
		Builds: f.Builds,
		Steps: []Step{
			{Join: &JoinStep{Build: 0, Spec: JoinSpec{Kind: JoinMark, ProbeKeys: []int{lineitem.OrderKey}, BuildKeys: []int{0}}}},
			{Filter: expr.Call(expr.OpNot, expr.ColRef(8))},
			{Aggregate: &AggStep{Final: true, Spec: AggSpec{Aggs: []Aggregate{{Func: AggCountStar}}}}},
		},
	}
	out, _, err = runFragment(t, mark, recs, builds, Options{Threads: 3})
	if err != nil {
		t.Fatal(err)
	}
	if out.Rows[0][0].Int != notIn {
		t.Fatalf("NOT IN count %d, want %d", out.Rows[0][0].Int, notIn)
	}
}

// TestFragmentEmptyProject runs a projection to no columns, then COUNT(*): the empty
// projection must stay a step through the msgpack round trip (it is not "no projection").
func TestFragmentEmptyProject(t *testing.T) {
	recs := lineitem.Generate(5_000, 7, 2)
	f := &Fragment{
		Scan: lineitemScan(),
		Steps: []Step{
			{Project: []*expr.Expr{}},
			{Aggregate: &AggStep{Final: true, Spec: AggSpec{Aggs: []Aggregate{{Func: AggCountStar}}}}},
		},
	}
	out, _, err := runFragment(t, f, recs, nil, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Rows) != 1 || out.Rows[0][0].Int != 5_000 {
		t.Fatalf("COUNT(*) after an empty projection: %v, want 5000", out.Rows)
	}
}

// TestFragmentDistinct runs an aggregate over DISTINCT values (combined stream only).
func TestFragmentDistinct(t *testing.T) {
	recs := lineitem.Generate(20_000, 999, 5)
	want := map[string]map[int64]bool{}
	eachRow(recs, func(r liRow) {
		if want[r.flag] == nil {
			want[r.flag] = map[int64]bool{}
		}
		want[r.flag][r.orderKey] = true
	})
	f := &Fragment{
		Scan: lineitemScan(),
		Steps: []Step{
			{Aggregate: &AggStep{Final: true, Spec: AggSpec{GroupBy: []int{lineitem.ReturnFlag},
				Aggs: []Aggregate{{Func: AggCount, Col: lineitem.OrderKey, Distinct: true}}}}},
		},
	}
	out, _, err := runFragment(t, f, recs, nil, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Rows {
		if r[1].Int != int64(len(want[r[0].Str])) {
			t.Fatalf("%s: %d distinct, want %d", r[0].Str, r[1].Int, len(want[r[0].Str]))
		}
	}
}

// TestFragmentManyGroupsMerged: a final aggregation by l_orderkey (Q18's inner one) over
// enough rows that the workers' partial groups, which they deal into partitions merged
// after them (Partitioner), fill every partition: the sums are exact and every group
// comes out once, with 1, 2 and 3 workers.
func TestFragmentManyGroupsMerged(t *testing.T) {
	recs := lineitem.Generate(600_000, 4096, 11)
	want := map[int64]int64{}
	eachRow(recs, func(r liRow) { want[r.orderKey] += r.qty })
	if len(want) < parallelAggMinRows {
		t.Fatalf("%d groups: the merge would not be dealt out", len(want))
	}
	f := &Fragment{
		Scan: lineitemScan(),
		Steps: []Step{
			{Aggregate: &AggStep{Final: true, Spec: AggSpec{GroupBy: []int{lineitem.OrderKey},
				Aggs: []Aggregate{{Func: AggSum, Col: lineitem.Quantity}}}}},
		},
	}
	for _, threads := range []int{1, 2, 3} {
		out, _, err := runFragment(t, f, recs, nil, Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Rows) != len(want) {
			t.Fatalf("%d workers: %d groups, want %d", threads, len(out.Rows), len(want))
		}
		seen := map[int64]bool{}
		for _, r := range out.Rows {
			k := r[0].Int
			if seen[k] {
				t.Fatalf("%d workers: group %d twice", threads, k)
			}
			seen[k] = true
			if got := bigDec(r[1].Decimal()).Int64(); got != want[k] {
				t.Fatalf("%d workers: group %d: sum %d, want %d", threads, k, got, want[k])
			}
		}
	}
}

// TestFragmentValidation: bad fragments get errors that name the problem.
func TestFragmentValidation(t *testing.T) {
	two := []vec.Type{vec.Int64Type, vec.StringType}
	base := func() *Fragment {
		return &Fragment{Scan: Scan{Table: "t", Columns: []string{"a", "b"}, Types: slices.Clone(two)}}
	}
	cases := []struct {
		name string
		mod  func(f *Fragment)
		want string
	}{
		{"no table", func(f *Fragment) { f.Scan.Table = "" }, "names no table"},
		{"types", func(f *Fragment) { f.Scan.Types = two[:1] }, "2 columns and 1 types"},
		{"bad type", func(f *Fragment) { f.Scan.Types[0] = vec.Type{ID: vec.Decimal64, Precision: 40} }, "invalid decimal"},
		{"unknown column", func(f *Fragment) { f.Steps = []Step{{Filter: expr.Call(expr.OpEq, expr.ColRef(5), expr.ColRef(0))}} }, "column #5 does not exist"},
		{"mismatch", func(f *Fragment) {
			f.Steps = []Step{{Filter: expr.Call(expr.OpEq, expr.ColRef(0), expr.ColRef(1))}}
		}, "cannot compare int64 with string"},
		{"not bool", func(f *Fragment) { f.Steps = []Step{{Filter: expr.ColRef(0)}} }, "not bool"},
		{"empty step", func(f *Fragment) { f.Steps = []Step{{}} }, "exactly one operation"},
		{"two ops", func(f *Fragment) {
			f.Steps = []Step{{Filter: expr.Const(vec.BoolDatum(true)), Limit: &LimitStep{Limit: 1}}}
		}, "exactly one operation"},
		{"build index", func(f *Fragment) {
			f.Steps = []Step{{Join: &JoinStep{Build: 2, Spec: JoinSpec{Kind: JoinInner, ProbeKeys: []int{0}, BuildKeys: []int{0}}}}}
		}, "build side 2 does not exist"},
		{"key types", func(f *Fragment) {
			f.Builds = []BuildSide{{Types: []vec.Type{vec.Int32Type}}}
			f.Steps = []Step{{Join: &JoinStep{Build: 0, Spec: JoinSpec{Kind: JoinInner, ProbeKeys: []int{0}, BuildKeys: []int{0}}}}}
		}, "compares int64 (probe #0) with int32"},
		{"join kind", func(f *Fragment) {
			f.Builds = []BuildSide{{Types: []vec.Type{vec.Int64Type}}}
			f.Steps = []Step{{Join: &JoinStep{Build: 0, Spec: JoinSpec{Kind: "cross", ProbeKeys: []int{0}, BuildKeys: []int{0}}}}}
		}, `unknown kind "cross"`},
		{"agg column", func(f *Fragment) {
			f.Steps = []Step{{Aggregate: &AggStep{Spec: AggSpec{Aggs: []Aggregate{{Func: AggSum, Col: 9}}}}}}
		}, "column #9 does not exist"},
		{"sum of string", func(f *Fragment) {
			f.Steps = []Step{{Aggregate: &AggStep{Spec: AggSpec{Aggs: []Aggregate{{Func: AggSum, Col: 1}}}}}}
		}, "sum of string"},
		{"partial distinct", func(f *Fragment) {
			f.Steps = []Step{{Aggregate: &AggStep{Spec: AggSpec{Aggs: []Aggregate{{Func: AggCount, Col: 1, Distinct: true}}}}}}
		}, "set Final"},
		{"sort key", func(f *Fragment) {
			f.Steps = []Step{{TopN: &TopNStep{Keys: []SortKey{{Col: 3}}, Limit: 1}}}
		}, "sort key column #3 does not exist"},
		{"zone", func(f *Fragment) {
			f.Scan.Zone = []ZonePredicate{{Col: 1, Op: expr.OpLt, Value: vec.Int64Datum(3)}}
		}, "compares column #1 (string) with int64"},
		{"names", func(f *Fragment) { f.Names = []string{"x"} }, "1 output names for 2 columns"},
		{"cast", func(f *Fragment) {
			f.Steps = []Step{{Project: []*expr.Expr{expr.Cast(expr.ColRef(0), vec.DateType)}}}
		}, "cannot cast int64 to date"},
	}
	for _, c := range cases {
		f := base()
		c.mod(f)
		_, err := validateAndBuild(f, &sharedSource{}, make([][]arrow.RecordBatch, len(f.Builds)), Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, err, c.want)
		}
	}
	// A record whose columns do not have the declared types fails the stream, naming it.
	f := base()
	recs := lineitem.Generate(10, 10, 1)
	p, err := validateAndBuild(f, &sharedSource{recs: recs}, nil, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Next(context.Background())
	p.Close()
	if err == nil || !strings.Contains(err.Error(), "record has 8 columns, expected 2") {
		t.Fatalf("mismatched record: %v", err)
	}
}

// TestFragmentMemoryLimit: a group-by over its budget fails with ErrMemoryLimit, cleanly.
func TestFragmentMemoryLimit(t *testing.T) {
	recs := lineitem.Generate(50_000, 4096, 6)
	f := &Fragment{Scan: lineitemScan(), Steps: []Step{
		{Aggregate: &AggStep{Spec: AggSpec{GroupBy: []int{lineitem.OrderKey}, Aggs: []Aggregate{{Func: AggCountStar}}}}},
	}}
	final := &Fragment{Scan: lineitemScan(), Steps: []Step{
		{Aggregate: &AggStep{Final: true, Spec: f.Steps[0].Aggregate.Spec}},
	}}
	// The partial one over its workers' tables; the final one also over the partitions its
	// workers deal their groups into (a budget the tables alone fit in). Which charge fails
	// first depends on the two workers' timing: at 1 MiB a worker's table growing beside the
	// other's sometimes failed first (about 1 in 10); at 768 KiB the partitions' first
	// batches failed first in 400 of 400 runs.
	for _, c := range []struct {
		f     *Fragment
		limit int64
		what  string
	}{{f, 256 << 10, "hash aggregate"}, {final, 256 << 10, "hash aggregate"}, {final, 768 << 10, "aggregate partitions"}} {
		budget := NewBudget(c.limit)
		_, _, err := runFragment(t, c.f, recs, nil, Options{Threads: 2, Budget: budget})
		var ve *vec.Error
		if !errors.Is(err, ErrMemoryLimit) || !errors.As(err, &ve) || ve.Code != vec.CodeOutOfResources ||
			!strings.Contains(err.Error(), c.what) {
			t.Fatalf("limit %d: error %v, want the limit exceeded by the %s", c.limit, err, c.what)
		}
		if budget.Used() != 0 {
			t.Fatalf("limit %d: %d bytes still charged", c.limit, budget.Used())
		}
	}
}

// TestFragmentCancel: cancelling the stream stops the workers; Close returns promptly and
// leaves no goroutines behind.
func TestFragmentCancel(t *testing.T) {
	recs := lineitem.Generate(200_000, 1024, 7)
	before := runtime.NumGoroutine()
	f := &Fragment{Scan: lineitemScan(), Steps: []Step{{Project: []*expr.Expr{mustExpr("l_orderkey")}}}}
	p, err := validateAndBuild(f, &sharedSource{recs: recs}, nil, Options{Threads: 3, OutputRows: 1024})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rec, err := p.Next(ctx)
	if err != nil || rec == nil {
		t.Fatal(err)
	}
	rec.Release()
	cancel()
	if _, err := p.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %v", err)
	}
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	for i := 0; i < 50 && runtime.NumGoroutine() > before; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines left, %d before", n, before)
	}
}

func TestZoneMayMatch(t *testing.T) {
	d := vec.MustParseDate
	cases := []struct {
		op   expr.Op
		v    vec.Datum
		min  vec.Datum
		max  vec.Datum
		want bool
	}{
		{expr.OpLt, d("1995-01-01"), d("1995-01-01"), d("1995-12-31"), false},
		{expr.OpLe, d("1995-01-01"), d("1995-01-01"), d("1995-12-31"), true},
		{expr.OpGe, d("1996-01-01"), d("1995-01-01"), d("1995-12-31"), false},
		{expr.OpGt, d("1995-12-30"), d("1995-01-01"), d("1995-12-31"), true},
		{expr.OpEq, vec.Int64Datum(5), vec.Int64Datum(6), vec.Int64Datum(9), false},
		{expr.OpEq, vec.MustParseDecimal("0.06"), vec.DecimalDatum(vec.I128(5), 15, 2), vec.DecimalDatum(vec.I128(7), 15, 2), true},
		{expr.OpLt, vec.Int64Datum(24), vec.DecimalDatum(vec.I128(2400), 15, 2), vec.DecimalDatum(vec.I128(5000), 15, 2), false},
		{expr.OpLt, vec.Int64Datum(24), vec.NullDatum(vec.Int64Type), vec.NullDatum(vec.Int64Type), true},
	}
	for i, c := range cases {
		z := ZonePredicate{Col: 0, Op: c.op, Value: c.v}
		if got := z.MayMatch(c.min, c.max); got != c.want {
			t.Errorf("case %d: %s %s in [%s,%s]: %v", i, c.op, c.v, c.min, c.max, got)
		}
	}
}

// pipelineStream adapts a Pipeline to RecordStream for exemgr-side gathering.
type pipelineStream struct{ p *Pipeline }

func (s pipelineStream) Next(ctx context.Context) (arrow.RecordBatch, error) { return s.p.Next(ctx) }

// TestTwoPrimprocs runs Q1's partial fragment on two "primprocs" holding half the data each,
// gathers their streams as exemgr does (MergeStreams, final aggregation, sort), and checks
// the result equals one primproc's final aggregation over all of it.
func TestTwoPrimprocs(t *testing.T) {
	recs := lineitem.Generate(40_000, 2048, 8)
	ctx := context.Background()
	partial := q1Fragment() // ends with a partial aggregate
	spec := partial.Steps[len(partial.Steps)-1].Aggregate.Spec
	var streams []RecordStream
	var pipes []*Pipeline
	for half := 0; half < 2; half++ {
		part := recs[half*len(recs)/2 : (half+1)*len(recs)/2]
		p, err := validateAndBuild(partial, &sharedSource{recs: part}, nil, Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		pipes = append(pipes, p)
		streams = append(streams, pipelineStream{p})
	}
	gather := MergeStreams(ctx, streams...)
	final, err := NewHashAggregate(NewSource(gather, pipes[0].Types(), 0), spec, AggFinal, nil)
	if err != nil {
		t.Fatal(err)
	}
	sorted, err := NewSort(final, []SortKey{{Col: 0}, {Col: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Collect(ctx, sorted, nil)
	gather.Close()
	for _, p := range pipes {
		p.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	one := q1Fragment()
	one.Steps[len(one.Steps)-1].Aggregate.Final = true
	one.Steps = append(one.Steps, Step{TopN: &TopNStep{Keys: []SortKey{{Col: 0}, {Col: 1}}, Limit: 10}})
	want, _, err := runFragment(t, one, recs, nil, Options{Threads: 3})
	if err != nil {
		t.Fatal(err)
	}
	got.Names = want.Names
	if got.String() != want.String() || len(want.Rows) < 3 {
		t.Fatalf("two primprocs:\n%s\none:\n%s", got, want)
	}
}

// validateAndBuild is what a process running fragments does at its door: Validate, then
// BuildPipeline.
func validateAndBuild(f *Fragment, scan RecordStream, builds [][]arrow.RecordBatch, opts Options) (*Pipeline, error) {
	v, err := f.Validate()
	if err != nil {
		return nil, err
	}
	return BuildPipeline(v, scan, builds, opts)
}

// TestFragmentStepStats: a fragment that asks for step counters gets each step's rows and
// batches, with the workers' instances of a merged step counting time only (its rows are
// the merged groups'), at 1, 2 and 3 workers; one that does not ask gets none.
func TestFragmentStepStats(t *testing.T) {
	recs := lineitem.Generate(50_000, 4096, 5)
	var passing int64
	groups := map[int64]bool{}
	eachRow(recs, func(r liRow) {
		if r.qty < 24*100 { // l_quantity is DECIMAL(15,2)
			passing++
			groups[r.orderKey] = true
		}
	})
	f := &Fragment{
		Scan: lineitemScan(),
		Steps: []Step{
			{Filter: mustExpr("(< l_quantity 24)")},
			{Aggregate: &AggStep{Final: true, Spec: AggSpec{GroupBy: []int{lineitem.OrderKey},
				Aggs: []Aggregate{{Func: AggSum, Col: lineitem.Quantity}}}}},
		},
	}
	if _, st, err := runFragment(t, f, recs, nil, Options{Threads: 2}); err != nil || st.Steps != nil {
		t.Fatalf("without StepStats: steps %v, error %v", st.Steps, err)
	}
	f.StepStats = true
	for _, threads := range []int{1, 2, 3} {
		out, st, err := runFragment(t, f, recs, nil, Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Steps) != 2 {
			t.Fatalf("%d workers: %d step entries, want 2", threads, len(st.Steps))
		}
		if got := st.Steps[0].Rows; got != passing {
			t.Errorf("%d workers: the filter produced %d rows, want %d", threads, got, passing)
		}
		if got := st.Steps[1].Rows; got != int64(len(groups)) || got != int64(len(out.Rows)) {
			t.Errorf("%d workers: the aggregate produced %d rows, want %d groups (%d out)", threads, got, len(groups), len(out.Rows))
		}
		for i, s := range st.Steps {
			if s.Batches == 0 || s.Nanos <= 0 {
				t.Errorf("%d workers: step %d: %+v, want batches and time", threads, i, s)
			}
		}
	}
}
