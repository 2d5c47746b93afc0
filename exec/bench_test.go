package exec

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/internal/lineitem"
	"github.com/colinkdb/colink/exec/vec"
)

// benchRows is the synthetic lineitem size (COLINK_BENCH_ROWS overrides; SF 1 is ~6M).
func benchRows() int {
	if s := os.Getenv("COLINK_BENCH_ROWS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	}
	return 4_000_000
}

// q1Fragment is TPC-H Q1 as a planner would lower it, computing the common subexpression
// l_extendedprice*(1-l_discount) once in a first projection.
func q1Fragment() *Fragment {
	return &Fragment{
		Scan: lineitemScan(),
		Steps: []Step{
			{Filter: mustExpr("(<= l_shipdate (date_sub date'1998-12-01' 90 day))")},
			{Project: []*expr.Expr{mustExpr("l_returnflag"), mustExpr("l_linestatus"), mustExpr("l_quantity"),
				mustExpr("l_extendedprice"), mustExpr("(* l_extendedprice (- 1 l_discount))"),
				mustExpr("l_tax"), mustExpr("l_discount")}},
			{Project: []*expr.Expr{expr.ColRef(0), expr.ColRef(1), expr.ColRef(2), expr.ColRef(3), expr.ColRef(4),
				expr.Call(expr.OpMul, expr.ColRef(4), expr.Call(expr.OpAdd, expr.Const(vec.Int64Datum(1)), expr.ColRef(5))),
				expr.ColRef(6)}},
			{Aggregate: &AggStep{Spec: AggSpec{GroupBy: []int{0, 1}, Aggs: []Aggregate{
				{Func: AggSum, Col: 2}, {Func: AggSum, Col: 3}, {Func: AggSum, Col: 4}, {Func: AggSum, Col: 5},
				{Func: AggAvg, Col: 2}, {Func: AggAvg, Col: 3}, {Func: AggAvg, Col: 6}, {Func: AggCountStar}}}}},
		},
	}
}

// benchFragment runs f over recs b.N times and reports rows/s (wall) and rows per CPU
// second of the workers (rows/s per core).
func benchFragment(b *testing.B, f *Fragment, recs []arrow.RecordBatch, threads int, builds ...[]arrow.RecordBatch) {
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	pool := vec.NewPool(0)
	var cpu, wall int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := validateAndBuild(f, &sharedSource{recs: recs}, builds, Options{Threads: threads, Alloc: pool})
		if err != nil {
			b.Fatal(err)
		}
		for {
			rec, err := p.Next(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			if rec == nil {
				break
			}
			rec.Release()
		}
		p.Close()
		st := p.Stats()
		cpu += st.WorkerCPUNanos
		wall += st.WallNanos
	}
	b.StopTimer()
	total := float64(rows) * float64(b.N)
	b.ReportMetric(total/(float64(wall)/1e9)/1e6, "Mrows/s")
	if cpu > 0 {
		b.ReportMetric(total/(float64(cpu)/1e9)/1e6, "Mrows/cpu-s")
	}
	b.ReportMetric(0, "ns/op")
}

func BenchmarkQ6(b *testing.B) {
	recs := lineitem.Generate(benchRows(), 65536, 42)
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) { benchFragment(b, q6Fragment(), recs, threads) })
	}
}

func BenchmarkQ1(b *testing.B) {
	recs := lineitem.Generate(benchRows(), 65536, 42)
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) { benchFragment(b, q1Fragment(), recs, threads) })
	}
}

// BenchmarkTopN is the seed query's shape: SELECT l_orderkey ... ORDER BY 1 LIMIT 100.
func BenchmarkTopN(b *testing.B) {
	recs := lineitem.Generate(benchRows(), 65536, 42)
	f := &Fragment{Scan: lineitemScan(), Steps: []Step{
		{Project: []*expr.Expr{mustExpr("l_orderkey")}},
		{TopN: &TopNStep{Keys: []SortKey{{Col: 0, Desc: true}}, Limit: 100}},
	}}
	benchFragment(b, f, recs, 1)
}

// BenchmarkGroupByOrderKey is a high-cardinality partial aggregation (Q18's inner shape).
func BenchmarkGroupByOrderKey(b *testing.B) {
	recs := lineitem.Generate(benchRows(), 65536, 42)
	f := &Fragment{Scan: lineitemScan(), Steps: []Step{
		{Aggregate: &AggStep{Spec: AggSpec{GroupBy: []int{lineitem.OrderKey}, Aggs: []Aggregate{{Func: AggSum, Col: lineitem.Quantity}}}}},
	}}
	benchFragment(b, f, recs, 1)
}

// BenchmarkJoinProbe probes a 150k-row unique build side with every lineitem row (Q3's
// fragment C shape) and counts.
func BenchmarkJoinProbe(b *testing.B) {
	recs := lineitem.Generate(benchRows(), 65536, 42)
	build := buildRecords(nil, int64(benchRows())*3/4)
	f := &Fragment{Scan: lineitemScan(), Builds: []BuildSide{{Types: []vec.Type{vec.Int64Type, vec.StringType}}},
		Steps: []Step{
			{Join: &JoinStep{Build: 0, Spec: JoinSpec{Kind: JoinInner, ProbeKeys: []int{lineitem.OrderKey}, BuildKeys: []int{0}}}},
			{Aggregate: &AggStep{Spec: AggSpec{GroupBy: []int{9}, Aggs: []Aggregate{{Func: AggSum, Col: lineitem.ExtendedPrice}}}}},
		}}
	benchFragment(b, f, recs, 1, build)
}

// BenchmarkTopNString is `select l_comment from lineitem order by 1 limit 100` (CS2): a
// top-N over strings of 10 to 43 characters.
func BenchmarkTopNString(b *testing.B) {
	recs := commentRecords(benchRows(), 65536, 7)
	f := &Fragment{Scan: Scan{Table: "lineitem", Columns: []string{"l_comment"}, Types: []vec.Type{vec.StringType}},
		Steps: []Step{{TopN: &TopNStep{Keys: []SortKey{{Col: 0}}, Limit: 100}}}}
	benchFragment(b, f, recs, 1)
}

// commentRecords makes records of one string column like l_comment: lower-case words,
// 10 to 43 bytes.
func commentRecords(rows, perRecord int, seed uint64) []arrow.RecordBatch {
	words := []string{"furiously", "quickly", "carefully", "blithely", "slyly", "final", "regular",
		"express", "pending", "ironic", "deposits", "packages", "requests", "accounts", "ideas"}
	types := []vec.Type{vec.StringType}
	schema := vec.SchemaOf([]string{"l_comment"}, types)
	x := seed
	rnd := func() uint64 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return x
	}
	var out []arrow.RecordBatch
	for start := 0; start < rows; start += perRecord {
		n := min(perRecord, rows-start)
		v := vec.NewVec(vec.StringType)
		var s []byte
		for range n {
			s = s[:0]
			limit := 10 + int(rnd()%34)
			for len(s) < limit {
				if len(s) > 0 {
					s = append(s, ' ')
				}
				s = append(s, words[rnd()%uint64(len(words))]...)
			}
			v.AppendDatum(vec.StringDatum(string(s[:limit])))
		}
		rb := vec.NewRecordBuilder(schema, types, nil)
		rb.Append(&vec.Batch{Cols: []*vec.Vec{v}, N: n})
		out = append(out, rb.Finish())
	}
	return out
}

// BenchmarkJoinBuild hashes a 1.5M-row build side with unique BIGINT keys (Q9's orders
// broadcast at SF 1) and reports build rows per second.
func BenchmarkJoinBuild(b *testing.B) {
	const rows = 1_500_000
	types := []vec.Type{vec.Int64Type, vec.DateType}
	schema := vec.SchemaOf([]string{"o_orderkey", "o_orderdate"}, types)
	var recs []arrow.RecordBatch
	for start := 0; start < rows; start += 65536 {
		n := min(65536, rows-start)
		k, d := vec.NewVec(vec.Int64Type), vec.NewVec(vec.DateType)
		for i := range n {
			r := start + i
			k.AppendDatum(vec.Int64Datum(int64(r/8*32 + r%8 + 1)))
			d.AppendDatum(vec.Datum{Type: vec.DateType, Int: int64(8000 + r%2400)})
		}
		rb := vec.NewRecordBuilder(schema, types, nil)
		rb.Append(&vec.Batch{Cols: []*vec.Vec{k, d}, N: n})
		recs = append(recs, rb.Finish())
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t, err := NewJoinTable(types, []int{0}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := t.AddRecords(recs); err != nil {
			b.Fatal(err)
		}
		if t.Rows() != rows {
			b.Fatalf("%d rows", t.Rows())
		}
		t.Release()
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
}

// BenchmarkSort sorts 1M rows by one key (exemgr's ORDER BY without LIMIT): BIGINT keys
// in a random order, and l_comment-like strings.
func BenchmarkSort(b *testing.B) {
	const rows = 1 << 20
	strs := commentRecords(rows, 65536, 11)
	types := []vec.Type{vec.Int64Type}
	schema := vec.SchemaOf([]string{"k"}, types)
	var ints []arrow.RecordBatch
	x := uint64(1)
	for start := 0; start < rows; start += 65536 {
		v := vec.NewVec(vec.Int64Type)
		for range 65536 {
			x = x*6364136223846793005 + 1442695040888963407
			v.AppendDatum(vec.Int64Datum(int64(x >> 20)))
		}
		rb := vec.NewRecordBuilder(schema, types, nil)
		rb.Append(&vec.Batch{Cols: []*vec.Vec{v}, N: 65536})
		ints = append(ints, rb.Finish())
	}
	for _, c := range []struct {
		name string
		recs []arrow.RecordBatch
		t    vec.Type
	}{{"bigint", ints, vec.Int64Type}, {"string", strs, vec.StringType}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s, err := NewSort(NewSource(&sharedSource{recs: c.recs}, []vec.Type{c.t}, 0), []SortKey{{Col: 0}}, nil)
				if err != nil {
					b.Fatal(err)
				}
				if n := drainRows(b, s); n != rows {
					b.Fatalf("%d rows", n)
				}
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
		})
	}
}

// BenchmarkAggregateWorkers is exemgr's final aggregation of Q18's shape — 2M rows into
// 1.5M groups of a BIGINT key — on one worker (HashAggregate) and on two.
func BenchmarkAggregateWorkers(b *testing.B) {
	const rows, groups = 2_000_000, 1_500_000
	types := []vec.Type{vec.Int64Type, vec.Decimal(15, 2)}
	schema := vec.SchemaOf([]string{"k", "q"}, types)
	var recs []arrow.RecordBatch
	x := uint64(7)
	for start := 0; start < rows; start += 65536 {
		n := min(65536, rows-start)
		k, q := vec.NewVec(types[0]), vec.NewVec(types[1])
		for range n {
			x = x*6364136223846793005 + 1442695040888963407
			k.AppendDatum(vec.Int64Datum(int64((x >> 20) % groups)))
			q.AppendDatum(vec.Datum{Type: types[1], Int: int64(x>>50) + 100})
		}
		rb := vec.NewRecordBuilder(schema, types, nil)
		rb.Append(&vec.Batch{Cols: []*vec.Vec{k, q}, N: n})
		recs = append(recs, rb.Finish())
	}
	spec := AggSpec{GroupBy: []int{0}, Aggs: []Aggregate{{Func: AggSum, Col: 1}}}
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				a, err := NewParallelAggregate(NewSource(&sharedSource{recs: recs}, types, 0), spec, AggComplete, workers, nil)
				if err != nil {
					b.Fatal(err)
				}
				if n := drainRows(b, a); n < groups/2 { // 2M draws of 1.5M keys: about 1.1M distinct
					b.Fatalf("%d groups", n)
				}
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
		})
	}
}

// drainRows runs an operator to its end and returns the rows it produced.
func drainRows(b *testing.B, op Operator) int {
	ctx := context.Background()
	if err := op.Init(ctx); err != nil {
		b.Fatal(err)
	}
	n := 0
	for {
		bt, err := op.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if bt == nil {
			break
		}
		n += bt.N
	}
	if err := op.Close(); err != nil {
		b.Fatal(err)
	}
	return n
}
