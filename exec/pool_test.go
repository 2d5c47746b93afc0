package exec

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/internal/lineitem"
	"github.com/colinkdb/colink/exec/vec"
)

// TestFragmentsWithPool runs fragments whose hash tables, aggregate states and join
// tables outgrow their first arrays (over 100 k groups, a bulk-built join table) with a
// budget that carries a recycling pool, as primproc runs them: one after another and two at
// once over the same pool, which scribbles over every buffer it gets back. Each must give
// the rows it gives without a pool, and the pool must have served later runs from what
// earlier ones gave back.
func TestFragmentsWithPool(t *testing.T) {
	recs := lineitem.Generate(bulkBuildRows+10_000, 20_000, 11)
	build := buildFromLineitem(t, recs)
	defer func() {
		for _, r := range build {
			r.Release()
		}
	}()
	builds := [][]arrow.RecordBatch{build}
	buildTypes := []vec.Type{vec.Int64Type, vec.StringType}
	frags := map[string]*Fragment{
		"aggregate by order": {
			Scan: lineitemScan(),
			Steps: []Step{{Aggregate: &AggStep{Final: true, Spec: AggSpec{GroupBy: []int{lineitem.OrderKey}, Aggs: []Aggregate{
				{Func: AggSum, Col: lineitem.Quantity}, {Func: AggAvg, Col: lineitem.ExtendedPrice},
				{Func: AggMin, Col: lineitem.ShipDate}, {Func: AggMax, Col: lineitem.Tax}, {Func: AggCountStar}}}}}},
		},
		"final aggregate by order and flag": {
			Scan: lineitemScan(),
			Steps: []Step{
				{Project: []*expr.Expr{expr.ColRef(lineitem.OrderKey), expr.ColRef(lineitem.ReturnFlag),
					mustExpr("(* l_extendedprice (- 1 l_discount))"), expr.ColRef(lineitem.LineStatus)}},
				{Aggregate: &AggStep{Final: true, Spec: AggSpec{GroupBy: []int{0, 1}, Aggs: []Aggregate{
					{Func: AggSum, Col: 2}, {Func: AggMax, Col: 3}, {Func: AggCount, Col: 2}}}}},
			},
		},
		"distinct count": {
			Scan: lineitemScan(),
			Steps: []Step{{Aggregate: &AggStep{Final: true, Spec: AggSpec{GroupBy: []int{lineitem.LineStatus},
				Aggs: []Aggregate{{Func: AggCount, Col: lineitem.OrderKey, Distinct: true}}}}}},
		},
		"join with a bulk-built table": {
			Scan:   lineitemScan(),
			Builds: []BuildSide{{Types: buildTypes}},
			Steps: []Step{
				{Join: &JoinStep{Build: 0, Spec: JoinSpec{Kind: JoinInner, ProbeKeys: []int{lineitem.OrderKey}, BuildKeys: []int{0}}}},
				{Aggregate: &AggStep{Final: true, Spec: AggSpec{GroupBy: []int{lineitem.ReturnFlag, 9}, Aggs: []Aggregate{
					{Func: AggSum, Col: lineitem.Quantity}, {Func: AggCountStar}}}}},
			},
		},
	}
	pool := vec.NewScribblingPool(1 << 30)
	seed := maphash.MakeSeed()
	for name, f := range frags {
		t.Run(name, func(t *testing.T) {
			builds := builds[:len(f.Builds)]
			want, err := runPooled(f, recs, builds, nil, seed)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				got, err := runPooled(f, recs, builds, pool, seed)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("with the pool: %s, without: %s", got, want)
				}
			}
			if testing.Short() {
				return
			}
			var wg sync.WaitGroup
			var outs [2]string
			var errs [2]error
			for i := range outs {
				wg.Go(func() { outs[i], errs[i] = runPooled(f, recs, builds, pool, seed) })
			}
			wg.Wait()
			for i := range outs {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				if outs[i] != want {
					t.Fatalf("concurrent run %d with the pool: %s, without: %s", i, outs[i], want)
				}
			}
		})
	}
	if s := pool.Stats(); (s.Gets-s.Misses) == 0 || s.Idle == 0 {
		t.Fatalf("the pool recycled nothing: %+v", s)
	}
}

// runPooled runs f on two workers with a budget whose pool is pool (nil: none) and returns
// its row count and an order-independent digest of its rows (with seed).
func runPooled(f *Fragment, recs []arrow.RecordBatch, builds [][]arrow.RecordBatch, pool *vec.Pool, seed maphash.Seed) (string, error) {
	p, err := validateAndBuild(f, &sharedSource{recs: recs}, builds, Options{Threads: 2, Budget: NewBudgetPool(0, pool)})
	if err != nil {
		return "", err
	}
	defer p.Close()
	var rows int
	var sum uint64
	var b vec.Batch
	var line []byte
	for {
		rec, err := p.Next(context.Background())
		if err != nil {
			return "", err
		}
		if rec == nil {
			break
		}
		err = b.ViewRecord(rec, p.Types(), 0, int(rec.NumRows()))
		if err != nil {
			rec.Release()
			return "", err
		}
		for i := range b.N {
			line = line[:0]
			for _, v := range b.Cols {
				line = append(v.AppendText(line, i), '|')
			}
			sum += maphash.Bytes(seed, line)
		}
		rows += b.N
		rec.Release()
	}
	return fmt.Sprintf("%d rows, digest %x", rows, sum), nil
}

// buildFromLineitem is a build side of (l_orderkey, l_linestatus) over every row: more
// rows than bulkBuildRows, several per key.
func buildFromLineitem(t *testing.T, recs []arrow.RecordBatch) []arrow.RecordBatch {
	types := []vec.Type{vec.Int64Type, vec.StringType}
	schema := vec.SchemaOf([]string{"b_orderkey", "b_status"}, types)
	var out []arrow.RecordBatch
	all := lineitem.Types()
	for _, rec := range recs {
		var b vec.Batch
		if err := b.ViewRecord(rec, all, 0, int(rec.NumRows())); err != nil {
			t.Fatal(err)
		}
		rb := vec.NewRecordBuilder(schema, types, nil)
		rb.Append(&vec.Batch{Cols: []*vec.Vec{b.Cols[lineitem.OrderKey], b.Cols[lineitem.LineStatus]}, N: b.N})
		out = append(out, rb.Finish())
	}
	return out
}

// TestSharedBudget: a child's charges count against its parent too, and fail with 1041
// naming whichever limit they would pass; closing gives both back.
func TestSharedBudget(t *testing.T) {
	shared := NewSharedBudget(100, "--query-memory-total")
	a, b := shared.Child(80, nil), shared.Child(80, nil)
	aa, ba := a.NewAccount("hash table"), b.NewAccount("sort")
	if err := aa.Resize(60); err != nil {
		t.Fatal(err)
	}
	err := ba.Resize(60)
	var ve *vec.Error
	if !errors.As(err, &ve) || ve.Code != 1041 || !errors.Is(err, ErrMemoryLimit) || !strings.Contains(ve.Msg, "--query-memory-total") {
		t.Fatalf("over the shared limit: %v", err)
	}
	if b.Used() != 0 || shared.Used() != 60 {
		t.Fatalf("a failed charge was kept: child %d, shared %d", b.Used(), shared.Used())
	}
	if err := aa.Resize(90); err == nil || strings.Contains(err.Error(), "total") {
		t.Fatalf("over the child's own limit: %v", err)
	}
	if err := ba.Resize(40); err != nil {
		t.Fatal(err)
	}
	aa.Close()
	ba.Close()
	if shared.Used() != 0 || shared.Peak() != 100 {
		t.Fatalf("after closing: used %d peak %d", shared.Used(), shared.Peak())
	}
}
