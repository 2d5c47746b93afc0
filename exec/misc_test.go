package exec

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
)

func mustParse(s string) *expr.Expr { return expr.MustParse(s, nil) }

func intTable(t *testing.T, n int) *vec.Table {
	t.Helper()
	tab := &vec.Table{Names: []string{"x"}, Types: []vec.Type{vec.Int64Type}}
	for i := 0; i < n; i++ {
		tab.Rows = append(tab.Rows, []vec.Datum{vec.Int64Datum(int64(i))})
	}
	return tab
}

func recordsOf(tab *vec.Table, per int) []arrow.RecordBatch {
	var out []arrow.RecordBatch
	for s := 0; s < len(tab.Rows); s += per {
		rb := vec.NewRecordBuilder(vec.SchemaOf(tab.Names, tab.Types), tab.Types, nil)
		rb.Append(tab.Batch(s, min(s+per, len(tab.Rows))))
		out = append(out, rb.Finish())
	}
	return out
}

func TestScalarSubquery(t *testing.T) {
	ctx := context.Background()
	one := intTable(t, 1)
	d, err := ScalarSubquery(ctx, NewBatchSource(one.Types, one.Batch(0, 1)))
	if err != nil || d.Int != 0 || d.Null {
		t.Fatalf("one row: %v %v", d, err)
	}
	d, err = ScalarSubquery(ctx, NewBatchSource(one.Types))
	if err != nil || !d.Null || d.Type != vec.Int64Type {
		t.Fatalf("no rows: %v %v", d, err)
	}
	two := intTable(t, 2)
	for _, split := range []bool{false, true} {
		var src Operator = NewBatchSource(two.Types, two.Batch(0, 2))
		if split {
			src = NewBatchSource(two.Types, two.Batch(0, 1), two.Batch(1, 2))
		}
		_, err = ScalarSubquery(ctx, src)
		var ve *vec.Error
		if !errors.As(err, &ve) || ve.Code != 1242 || ve.Error() != "Subquery returns more than 1 row" {
			t.Fatalf("two rows (split %v): %v", split, err)
		}
	}
	wide := &vec.Table{Names: []string{"a", "b"}, Types: []vec.Type{vec.Int64Type, vec.Int64Type}}
	if _, err := ScalarSubquery(ctx, NewBatchSource(wide.Types)); err == nil {
		t.Fatal("two columns accepted")
	}
}

func TestLimitEdges(t *testing.T) {
	tab := intTable(t, 10)
	cases := []struct {
		limit, offset int64
		want          []int64
	}{
		{3, 0, []int64{0, 1, 2}},
		{3, 8, []int64{8, 9}},
		{0, 0, nil},
		{-1, 7, []int64{7, 8, 9}},
		{5, 20, nil},
	}
	for _, c := range cases {
		for _, size := range []int{1, 3, 10} {
			var batches []*vec.Batch
			for s := 0; s < 10; s += size {
				batches = append(batches, tab.Batch(s, min(s+size, 10)))
			}
			l, err := NewLimit(NewBatchSource(tab.Types, batches...), c.limit, c.offset)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Collect(context.Background(), l, nil)
			if err != nil {
				t.Fatal(err)
			}
			var vals []int64
			for _, r := range got.Rows {
				vals = append(vals, r[0].Int)
			}
			if !slices.Equal(vals, c.want) {
				t.Errorf("limit %d offset %d batches of %d: %v, want %v", c.limit, c.offset, size, vals, c.want)
			}
		}
	}
}

// TestMergeStreams gathers several streams concurrently and checks every row arrives once;
// an error in one stream is reported.
func TestMergeStreams(t *testing.T) {
	ctx := context.Background()
	var streams []RecordStream
	var all []arrow.RecordBatch
	for s := 0; s < 4; s++ {
		tab := intTable(t, 1000)
		for i := range tab.Rows {
			tab.Rows[i][0] = vec.Int64Datum(int64(s*1000 + i))
		}
		recs := recordsOf(tab, 97)
		all = append(all, recs...)
		streams = append(streams, Records(recs...))
	}
	defer func() {
		for _, r := range all {
			r.Release()
		}
	}()
	p := MergeStreams(ctx, streams...)
	src := NewSource(p, []vec.Type{vec.Int64Type}, 0)
	got, err := Collect(ctx, src, nil)
	p.Close()
	if err != nil {
		t.Fatal(err)
	}
	var vals []int
	for _, r := range got.Rows {
		vals = append(vals, int(r[0].Int))
	}
	slices.Sort(vals)
	for i, v := range vals {
		if v != i {
			t.Fatalf("row %d is %d (of %d rows)", i, v, len(vals))
		}
	}
	if len(vals) != 4000 {
		t.Fatalf("%d rows", len(vals))
	}
	boom := errors.New("link broke")
	failing := RecordStreamFunc(func(ctx context.Context) (arrow.RecordBatch, error) { return nil, boom })
	p = MergeStreams(ctx, Records(all[:3]...), failing)
	var gotErr error
	for {
		rec, err := p.Next(ctx)
		if err != nil {
			gotErr = err
			break
		}
		if rec == nil {
			break
		}
		rec.Release()
	}
	p.Close()
	if !errors.Is(gotErr, boom) {
		t.Fatalf("error %v", gotErr)
	}
	// Concatenated streams keep their order.
	cs := NewSource(ConcatStreams(Records(all[:2]...), Records(all[2:4]...)), []vec.Type{vec.Int64Type}, 0)
	got, err = Collect(ctx, cs, nil)
	if err != nil || len(got.Rows) != 4*97 || got.Rows[0][0].Int != 0 || got.Rows[97*3][0].Int != 97*3 {
		t.Fatalf("concat streams: %v %d rows", err, len(got.Rows))
	}
}

func TestFormatBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{1<<20 - 1, "1024.0 KiB"}, {1 << 20, "1.0 MiB"}, {3 << 29, "1.5 GiB"}, {5 << 40, "5120.0 GiB"},
	} {
		if got := FormatBytes(c.n); got != c.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestBudget(t *testing.T) {
	b := NewBudget(1000)
	a1, a2 := b.NewAccount("one"), b.NewAccount("two")
	if err := a1.Resize(600); err != nil {
		t.Fatal(err)
	}
	err := a2.Resize(500)
	if !errors.Is(err, ErrMemoryLimit) || a2.Size() != 0 {
		t.Fatalf("over budget: %v, size %d", err, a2.Size())
	}
	want := "query memory limit exceeded: two needs 500 B more with 600 B in use, limit is 1000 B"
	if err.Error() != want {
		t.Fatalf("message %q", err)
	}
	if err := a1.Resize(100); err != nil {
		t.Fatal(err)
	}
	if err := a2.Resize(500); err != nil {
		t.Fatal(err)
	}
	a1.Close()
	a2.Close()
	if b.Used() != 0 || b.Peak() != 600 {
		t.Fatalf("used %d peak %d", b.Used(), b.Peak())
	}
	var nilBudget *Budget
	if err := nilBudget.NewAccount("x").Resize(1 << 40); err != nil {
		t.Fatal(err)
	}
}

// TestJoinBuildOverBudget: a build side over the budget fails the join cleanly.
func TestJoinBuildOverBudget(t *testing.T) {
	tab := intTable(t, 5000)
	budget := NewBudget(16 << 10)
	j, err := NewHashJoin(NewBatchSource(tab.Types, tab.Batch(0, 10)), []Operator{NewBatchSource(tab.Types, tab.Batch(0, 5000))},
		tab.Types, JoinSpec{Kind: JoinInner, ProbeKeys: []int{0}, BuildKeys: []int{0}}, budget)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Collect(context.Background(), j, nil)
	if !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("error %v", err)
	}
	if budget.Used() != 0 {
		t.Fatalf("%d bytes left charged", budget.Used())
	}
}

// TestTopNLarge exercises the top-N store compaction with many replacing rows.
func TestTopNLarge(t *testing.T) {
	tab := intTable(t, 50_000)
	var batches []*vec.Batch
	for s := 0; s < 50_000; s += 1024 {
		batches = append(batches, tab.Batch(s, min(s+1024, 50_000)))
	}
	tn, err := NewTopN(NewBatchSource(tab.Types, batches...), []SortKey{{Col: 0, Desc: true}}, 100, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Collect(context.Background(), tn, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range got.Rows {
		if r[0].Int != int64(49_999-i) {
			t.Fatalf("row %d = %d", i, r[0].Int)
		}
	}
	if len(got.Rows) != 100 {
		t.Fatalf("%d rows", len(got.Rows))
	}
}

func ExampleBuildPipeline() {
	// SELECT x % 3 AS g, count(*) FROM t WHERE x >= 10 GROUP BY g, as a fragment.
	tab := &vec.Table{Names: []string{"x"}, Types: []vec.Type{vec.Int64Type}}
	for i := 0; i < 100; i++ {
		tab.Rows = append(tab.Rows, []vec.Datum{vec.Int64Datum(int64(i))})
	}
	recs := recordsOf(tab, 16)
	f := &Fragment{
		Scan: Scan{Table: "t", Columns: []string{"x"}, Types: tab.Types},
		Steps: []Step{
			{Filter: mustParse("(>= #0 10)")},
			{Project: []*expr.Expr{mustParse("(% #0 3)")}},
			{Aggregate: &AggStep{Final: true, Spec: AggSpec{GroupBy: []int{0}, Aggs: []Aggregate{{Func: AggCountStar}}}}},
			{TopN: &TopNStep{Keys: []SortKey{{Col: 0}}, Limit: 10}},
		},
		Names: []string{"g", "n"},
	}
	v, err := f.Validate()
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := BuildPipeline(v, &sharedSource{recs: recs}, nil, Options{Threads: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	out := &vec.Table{Names: f.Names, Types: p.Types()}
	for {
		rec, err := p.Next(context.Background())
		if err != nil || rec == nil {
			break
		}
		out.AppendRecord(rec)
		rec.Release()
	}
	fmt.Print(out)
	// Output:
	// g:int64 n:int64
	// 0 | 30
	// 1 | 30
	// 2 | 30
}

func TestNthElement(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for iter := 0; iter < 2000; iter++ {
		n := 1 + r.IntN(60)
		vals := make([]int, n)
		for i := range vals {
			vals[i] = r.IntN(1 + r.IntN(20))
		}
		idx := make([]int32, n)
		for i := range idx {
			idx[i] = int32(i)
		}
		k := r.IntN(n)
		nthElement(idx, k, func(a, b int32) int { return vals[a] - vals[b] })
		sorted := slices.Clone(vals)
		slices.Sort(sorted)
		if vals[idx[k]] != sorted[k] {
			t.Fatalf("n %d k %d: got %d want %d", n, k, vals[idx[k]], sorted[k])
		}
		for i := 0; i < k; i++ {
			if vals[idx[i]] > vals[idx[k]] {
				t.Fatalf("element before k is larger")
			}
		}
		for i := k + 1; i < n; i++ {
			if vals[idx[i]] < vals[idx[k]] {
				t.Fatalf("element after k is smaller")
			}
		}
		seen := map[int32]bool{}
		for _, i := range idx {
			seen[i] = true
		}
		if len(seen) != n {
			t.Fatal("not a permutation")
		}
	}
}

func TestFragmentStatsWire(t *testing.T) {
	a := FragmentStats{Stats: Stats{RowsScanned: 10, WorkerCPUNanos: 5, PeakMemory: 7, Workers: 2,
		Steps: []StepStats{{Rows: 4, Batches: 1, Nanos: 10}}}, RowGroups: 3, BytesFromDisk: 100}
	b := FragmentStats{Stats: Stats{RowsScanned: 1, WorkerCPUNanos: 1, PeakMemory: 9, Workers: 1,
		Steps: []StepStats{{Rows: 1, Batches: 1, Nanos: 5}, {Rows: 2, Batches: 2, Nanos: 3}}}, RowGroupsEliminated: 2, CacheHits: 4}
	a.Add(b)
	raw, err := msgpack.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back FragmentStats
	if err := msgpack.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	want := FragmentStats{Stats: Stats{RowsScanned: 11, WorkerCPUNanos: 6, PeakMemory: 9, Workers: 3,
		Steps: []StepStats{{Rows: 5, Batches: 2, Nanos: 15}, {Rows: 2, Batches: 2, Nanos: 3}}}, RowGroups: 3,
		RowGroupsEliminated: 2, CacheHits: 4, BytesFromDisk: 100}
	if !reflect.DeepEqual(back, want) {
		t.Fatalf("%+v, want %+v", back, want)
	}
}

// TestJoinExpansionStopsOnCancel: a probe batch whose keys all match many build rows expands
// into millions of pairs; a cancelled context stops the expansion at the next output batch,
// not after the last pair (a cancelled query's primproc workers ran on for minutes).
func TestJoinExpansionStopsOnCancel(t *testing.T) {
	const buildRows = 20_000
	tab := &vec.Table{Names: []string{"x"}, Types: []vec.Type{vec.Int64Type}}
	for range buildRows {
		tab.Rows = append(tab.Rows, []vec.Datum{vec.Int64Datum(7)})
	}
	var builds []*vec.Batch
	for s := 0; s < buildRows; s += 1024 {
		builds = append(builds, tab.Batch(s, min(s+1024, buildRows)))
	}
	// 1024 probe rows, each matching every build row: 20 million pairs.
	j, err := NewHashJoin(NewBatchSource(tab.Types, tab.Batch(0, 1024)), []Operator{NewBatchSource(tab.Types, builds...)},
		tab.Types, JoinSpec{Kind: JoinInner, ProbeKeys: []int{0}, BuildKeys: []int{0}}, NewBudget(0))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	ctx, cancel := context.WithCancel(context.Background())
	if err := j.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if b, err := j.Next(ctx); err != nil || b == nil {
		t.Fatalf("first batch: %v, %v", b, err)
	}
	cancel()
	if b, err := j.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("after the cancel: a batch of %d rows, %v; want context.Canceled", b.Len(), err)
	}
}
