package exec

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
)

// keyedSource hands out its records in units of per records, each unit with the open
// interval of column 0's values that no other unit holds, computed from the records as a
// scan computes it from zone maps; refuse makes ClusterOn fail.
type keyedSource struct {
	sharedSource
	per    int
	refuse bool
	asked  int

	mu     sync.Mutex
	units  [][]arrow.RecordBatch
	ranges [][2]int64
	next   int
}

func (s *keyedSource) ClusterOn(col, workers int) bool {
	s.asked++
	if s.refuse || col != 0 {
		return false
	}
	var his []int64
	for start := 0; start < len(s.recs); start += s.per {
		unit := s.recs[start:min(start+s.per, len(s.recs))]
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		for _, rec := range unit {
			var b vec.Batch
			if err := b.ViewRecord(rec, []vec.Type{vec.Int64Type, vec.Int64Type, vec.StringType}, 0, int(rec.NumRows())); err != nil {
				panic(err)
			}
			for i := 0; i < b.N; i++ {
				if !b.Cols[0].IsNull(i) {
					lo, hi = min(lo, b.Cols[0].I64[i]), max(hi, b.Cols[0].I64[i])
				}
			}
		}
		s.units = append(s.units, unit)
		s.ranges = append(s.ranges, [2]int64{lo, hi})
		his = append(his, hi)
	}
	for i := range s.ranges {
		prev, next := int64(math.MinInt64), int64(math.MaxInt64)
		if i > 0 {
			prev = his[i-1]
		}
		if i+1 < len(s.ranges) {
			next = s.ranges[i+1][0]
		}
		s.ranges[i] = [2]int64{prev, next}
	}
	return len(s.units) >= workers
}

func (s *keyedSource) NextKeyed(ctx context.Context) ([]arrow.RecordBatch, int64, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next == len(s.units) {
		return nil, 0, 0, nil
	}
	i := s.next
	s.next++
	for _, rec := range s.units[i] {
		rec.Retain()
	}
	return s.units[i], s.ranges[i][0], s.ranges[i][1], nil
}

// clusteredInput is records of rows rows each: record r's keys run from r*step up over
// span values (neighbours overlap where span > step), every 37th key NULL, with a value
// and a label.
func clusteredInput(records, rows int, step, span int64) []arrow.RecordBatch {
	types := []vec.Type{vec.Int64Type, vec.Int64Type, vec.StringType}
	var batches []*vec.Batch
	for r := range records {
		k, v, s := vec.NewVec(types[0]), vec.NewVec(types[1]), vec.NewVec(types[2])
		for i := range rows {
			n := r*rows + i
			if n%37 == 0 {
				k.AppendDatum(vec.NullDatum(types[0]))
			} else {
				k.AppendDatum(vec.Int64Datum(int64(r)*step + int64(i*7919)%span))
			}
			v.AppendDatum(vec.Int64Datum(int64(n % 13)))
			s.AppendDatum(vec.StringDatum(fmt.Sprintf("l%d", n%7)))
		}
		batches = append(batches, &vec.Batch{Cols: []*vec.Vec{k, v, s}, N: rows})
	}
	var recs []arrow.RecordBatch
	for _, b := range batches {
		m := NewMaterializer(NewBatchSource(types, b), vec.SchemaOf([]string{"k", "v", "s"}, types), rows, memory.DefaultAllocator)
		for {
			rec, err := m.Next(context.Background())
			if err != nil {
				panic(err)
			}
			if rec == nil {
				break
			}
			recs = append(recs, rec)
		}
		m.Close()
	}
	return recs
}

// TestClusteredAggregate checks that a fragment grouping by a column its source ranges by
// unit gives the rows of the usual partitioned aggregation, with aggregates whose final
// form differs from their state (AVG), NULL keys and keys units share, a HAVING filter or
// a top-N after the aggregate, and 2 or 3 workers; that the units' rows inside their
// ranges were aggregated there and the shared ones were not; and that a source refusing
// to cluster aggregates as before.
func TestClusteredAggregate(t *testing.T) {
	recs := clusteredInput(12, 1500, 1000, 1300)
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	types := []vec.Type{vec.Int64Type, vec.Int64Type, vec.StringType}
	scan := Scan{Table: "t", Columns: []string{"k", "v", "s"}, Types: types}
	agg := Step{Aggregate: &AggStep{Final: true, Spec: AggSpec{GroupBy: []int{0}, Aggs: []Aggregate{
		{Func: AggSum, Col: 1}, {Func: AggCountStar}, {Func: AggAvg, Col: 1}, {Func: AggMin, Col: 2}}}}}
	filter := Step{Filter: expr.Call(expr.OpNe, expr.ColRef(1), expr.Const(vec.Int64Datum(3)))}
	having := Step{Filter: expr.Call(expr.OpGt, expr.ColRef(2), expr.Const(vec.Int64Datum(1)))}
	topn := Step{TopN: &TopNStep{Keys: []SortKey{{Col: 1, Desc: true}, {Col: 0}}, Limit: 50}}
	cases := []struct {
		name  string
		steps []Step
	}{
		{"aggregate", []Step{agg}},
		{"filter, aggregate, having", []Step{filter, agg, having}},
		{"aggregate, top-N", []Step{agg, topn}},
		{"projected key", []Step{{Project: []*expr.Expr{expr.ColRef(1), expr.ColRef(2), expr.ColRef(0)}},
			{Aggregate: &AggStep{Final: true, Spec: AggSpec{GroupBy: []int{2}, Aggs: []Aggregate{{Func: AggSum, Col: 0}}}}}}},
	}
	run := func(f *Fragment, src RecordStream, threads int) (string, *Pipeline) {
		t.Helper()
		v, err := f.Validate()
		if err != nil {
			t.Fatal(err)
		}
		mem := memory.NewCheckedAllocator(vec.NewPool(0))
		p, err := BuildPipeline(v, src, nil, Options{Threads: threads, Alloc: mem})
		if err != nil {
			t.Fatal(err)
		}
		out := &vec.Table{Types: p.Types()}
		for {
			rec, err := p.Next(context.Background())
			if err != nil {
				t.Fatal(err)
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
		lines := strings.Split(out.String(), "\n")
		slices.Sort(lines)
		return strings.Join(lines, "\n"), p
	}
	for _, c := range cases {
		f := &Fragment{Scan: scan, Steps: c.steps}
		want, _ := run(f, &sharedSource{recs: recs}, 2)
		if strings.Count(want, "\n") < 50 {
			t.Fatalf("%s: only %d rows", c.name, strings.Count(want, "\n"))
		}
		for _, threads := range []int{2, 3} {
			src := &keyedSource{sharedSource: sharedSource{recs: recs}, per: 2}
			got, p := run(f, src, threads)
			if got != want {
				t.Fatalf("%s, %d workers: clustered rows differ:\n%.2000s\nwant:\n%.2000s", c.name, threads, got, want)
			}
			if n := p.clusteredRows.Load(); src.asked != 1 || n == 0 || n >= int64(len(recs)*1500) {
				t.Fatalf("%s, %d workers: ClusterOn asked %d times, %d rows aggregated in their units", c.name, threads, src.asked, n)
			}
			refused := &keyedSource{sharedSource: sharedSource{recs: recs}, per: 2, refuse: true}
			if got, p := run(f, refused, threads); got != want || p.clusteredRows.Load() != 0 {
				t.Fatalf("%s, %d workers: refused clustering: %d rows clustered; rows equal: %v", c.name, threads, p.clusteredRows.Load(), got == want)
			}
		}
	}
}

// TestClusterPlanApplies: the plan exists for a final aggregation by a scan column of the
// integer class carried to it, and not otherwise.
func TestClusterPlanApplies(t *testing.T) {
	recs := clusteredInput(4, 10, 10, 10)
	types := []vec.Type{vec.Int64Type, vec.Int64Type, vec.StringType}
	scan := Scan{Table: "t", Columns: []string{"k", "v", "s"}, Types: types}
	aggBy := func(final bool, keys ...int) Step {
		return Step{Aggregate: &AggStep{Final: final, Spec: AggSpec{GroupBy: keys, Aggs: []Aggregate{{Func: AggCountStar}}}}}
	}
	cases := []struct {
		name  string
		steps []Step
		col   int // -1: none
	}{
		{"by the scan's integer", []Step{aggBy(true, 0)}, 0},
		{"by a string, then the integer", []Step{aggBy(true, 2, 0)}, 0},
		{"by a column the source cannot range", []Step{aggBy(true, 1)}, -1},
		{"through a filter and a projection", []Step{
			{Filter: expr.Call(expr.OpGt, expr.ColRef(1), expr.Const(vec.Int64Datum(1)))},
			{Project: []*expr.Expr{expr.ColRef(2), expr.ColRef(0)}}, aggBy(true, 1)}, 0},
		{"partial", []Step{aggBy(false, 0), {TopN: &TopNStep{Keys: []SortKey{{Col: 0}}, Limit: 3}}}, -1},
		{"no GROUP BY", []Step{aggBy(true)}, -1},
		{"a computed key", []Step{{Project: []*expr.Expr{expr.Call(expr.OpAdd, expr.ColRef(0), expr.Const(vec.Int64Datum(1)))}}, aggBy(true, 0)}, -1},
		{"DISTINCT", []Step{{Aggregate: &AggStep{Final: true, Spec: AggSpec{GroupBy: []int{0}, Aggs: []Aggregate{{Func: AggCount, Col: 1, Distinct: true}}}}}}, -1},
	}
	for _, c := range cases {
		v, err := (&Fragment{Scan: scan, Steps: c.steps}).Validate()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		src := &keyedSource{sharedSource: sharedSource{recs: recs}, per: 1}
		p, err := BuildPipeline(v, src, nil, Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		p.Close()
		switch {
		case c.col < 0 && p.cluster != nil:
			t.Errorf("%s: clustered on column %d", c.name, p.cluster.col)
		case c.col >= 0 && (p.cluster == nil || p.cluster.col != c.col):
			t.Errorf("%s: plan %+v, want column %d", c.name, p.cluster, c.col)
		}
	}
}
