package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
)

// Differential tests: operators against naive row-at-a-time reference implementations,
// on random tables with NULLs, duplicate keys, many distinct keys (hash table growth) and
// random batch boundaries.

var randTypes = []vec.Type{vec.Int64Type, vec.StringType, vec.Decimal(15, 2)}

func randTable(r *rand.Rand, rows, keyDomain int, nullPct int) *vec.Table {
	t := &vec.Table{Names: []string{"k", "s", "v"}, Types: randTypes}
	for i := 0; i < rows; i++ {
		row := make([]vec.Datum, 3)
		row[0] = vec.Int64Datum(int64(r.IntN(keyDomain)))
		row[1] = vec.StringDatum(fmt.Sprintf("s%d", r.IntN(keyDomain)))
		row[2] = vec.DecimalDatum(vec.I128(r.Int64N(20001)-10000), 15, 2)
		for c := range row {
			if r.IntN(100) < nullPct {
				row[c] = vec.NullDatum(randTypes[c])
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// scribbleNulls writes random values into the payload slots of b's NULL rows, as kernels
// that produce a NULL may leave them (package vec: a NULL's payload is unspecified), so
// that every operator the random tests run must ignore what lies under a null bit.
func scribbleNulls(r *rand.Rand, b *vec.Batch) {
	for _, v := range b.Cols {
		if v.Nulls == nil {
			continue
		}
		if v.Type.ID == vec.String {
			var offs []int32
			var data []byte
			offs = append(offs, 0)
			for i := range v.Nulls {
				if v.Nulls[i] {
					data = append(data, fmt.Sprintf("j%07d", r.IntN(10000000))[:1+r.IntN(8)]...)
				} else {
					data = append(data, v.String(i)...)
				}
				offs = append(offs, int32(len(data)))
			}
			v.Offsets, v.Bytes = offs, data
			continue
		}
		for i, null := range v.Nulls {
			if !null {
				continue
			}
			switch v.Type.ID {
			case vec.Int32, vec.Date32:
				v.I32[i] = int32(r.Uint32())
			case vec.Int64, vec.Decimal64:
				v.I64[i] = int64(r.Uint64())
			case vec.Decimal128:
				v.D128[i] = vec.Int128{Lo: r.Uint64(), Hi: int64(r.Uint64())}
			case vec.Float64:
				v.F64[i] = r.NormFloat64()
			case vec.Bool:
				v.Bool[i] = r.IntN(2) == 0
			}
		}
	}
}

// randSource splits a table into random batches, some with a selection vector, with
// garbage under every NULL.
func randSource(r *rand.Rand, t *vec.Table) Operator {
	var batches []*vec.Batch
	for s := 0; s < len(t.Rows); {
		e := min(len(t.Rows), s+1+r.IntN(40))
		if r.IntN(2) == 0 {
			batches = append(batches, t.Batch(s, e))
		} else {
			b := vec.NewBatch(t.Types)
			var sel []int32
			for i := s; i < e; i++ {
				for c := range t.Types {
					b.Cols[c].AppendDatum(t.Rows[(i*7)%len(t.Rows)][c]) // decoy
					b.Cols[c].AppendDatum(t.Rows[i][c])
				}
				sel = append(sel, int32(2*(i-s)+1))
			}
			b.N, b.Sel = 2*(e-s), sel
			batches = append(batches, b)
		}
		s = e
	}
	for _, b := range batches {
		scribbleNulls(r, b)
	}
	return NewBatchSource(t.Types, batches...)
}

func rowString(row []vec.Datum) string {
	parts := make([]string, len(row))
	for i, d := range row {
		parts[i] = vec.FormatCell(d)
	}
	return strings.Join(parts, "|")
}

func sortedRows(rows [][]vec.Datum) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = rowString(r)
	}
	slices.Sort(out)
	return out
}

func datumEq(a, b vec.Datum) bool {
	if a.Null || b.Null {
		return false
	}
	c, err := vec.CompareDatums(a, b)
	return err == nil && c == 0
}

// residualRef is the reference of the residual (< p.v b.v): NULL is not TRUE.
func residualRef(p, b []vec.Datum) bool {
	if p[2].Null || b[2].Null {
		return false
	}
	c, _ := vec.CompareDatums(p[2], b[2])
	return c < 0
}

func nulls(n int) []vec.Datum {
	out := make([]vec.Datum, n)
	for i := range out {
		out[i] = vec.NullDatum(randTypes[i%len(randTypes)])
	}
	return out
}

// joinRef computes a join by nested loops with SQL semantics.
func joinRef(kind JoinKind, probe, build *vec.Table, keys []int, residual bool) []string {
	match := func(p, b []vec.Datum) bool {
		for _, k := range keys {
			if !datumEq(p[k], b[k]) {
				return false
			}
		}
		return !residual || residualRef(p, b)
	}
	var out [][]vec.Datum
	buildHit := make([]bool, len(build.Rows))
	for _, p := range probe.Rows {
		hit := false
		for bi, b := range build.Rows {
			if match(p, b) {
				hit = true
				buildHit[bi] = true
				if kind == JoinInner || kind == JoinLeftOuter || kind == JoinRightOuter {
					out = append(out, append(slices.Clone(p), b...))
				}
			}
		}
		switch kind {
		case JoinLeftOuter:
			if !hit {
				out = append(out, append(slices.Clone(p), nulls(3)...))
			}
		case JoinSemi:
			if hit {
				out = append(out, p)
			}
		case JoinAnti:
			if !hit {
				out = append(out, p)
			}
		case JoinMark:
			// keys[:len-1] correlate; the last key is the IN comparison.
			in := keys[len(keys)-1]
			var set [][]vec.Datum
			for _, b := range build.Rows {
				ok := !residual || residualRef(p, b)
				for _, k := range keys[:len(keys)-1] {
					ok = ok && datumEq(p[k], b[k])
				}
				if ok {
					set = append(set, b)
				}
			}
			mark := vec.BoolDatum(false)
			for _, b := range set {
				if datumEq(p[in], b[in]) {
					mark = vec.BoolDatum(true)
					break
				}
				if p[in].Null || b[in].Null {
					mark = vec.NullDatum(vec.BoolType)
				}
			}
			out = append(out, append(slices.Clone(p), mark))
		}
	}
	if kind == JoinRightOuter {
		for bi, b := range build.Rows {
			if !buildHit[bi] {
				out = append(out, append(nulls(3), b...))
			}
		}
	}
	return sortedRows(out)
}

func TestJoinRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	kinds := []JoinKind{JoinInner, JoinLeftOuter, JoinRightOuter, JoinSemi, JoinAnti, JoinMark}
	for iter := 0; iter < 24; iter++ {
		domain := []int{3, 20, 2000}[iter%3]
		probe := randTable(r, r.IntN(300), domain, 10)
		if iter%2 == 1 {
			for _, row := range probe.Rows {
				if row[0].Null {
					row[0] = vec.Int64Datum(0)
				}
			}
			slices.SortStableFunc(probe.Rows, func(x, y []vec.Datum) int { return cmpOrdered(x[0].Int, y[0].Int) })
		}
		build := randTable(r, r.IntN(1500/(1+iter%3*5)), domain, 10)
		keys := [][]int{{0}, {1}, {0, 1}}[r.IntN(3)]
		residual := r.IntN(2) == 0
		for _, kind := range kinds {
			spec := JoinSpec{Kind: kind, ProbeKeys: keys, BuildKeys: keys}
			if kind == JoinMark && len(keys) > 1 {
				spec.MarkKeys = 1
			}
			if residual {
				spec.Residual = expr.Call(expr.OpLt, expr.ColRef(2), expr.ColRef(5))
			}
			j, err := NewHashJoin(randSource(r, probe), []Operator{randSource(r, build)}, randTypes, spec, NewBudget(0))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Collect(context.Background(), j, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := joinRef(kind, probe, build, keys, residual)
			if g := sortedRows(got.Rows); !slices.Equal(g, want) {
				t.Fatalf("iter %d %s keys %v residual %v: %d rows, want %d\ngot  %v\nwant %v", iter, kind, keys, residual,
					len(g), len(want), head(g), head(want))
			}
		}
	}
}

func boolCmpInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func head(s []string) []string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

// aggRef groups by columns 0 and 1 (NULLs group together) and computes count(*),
// count(v), sum(v), min(v), max(v), avg(v), min(s), max(s), count(distinct k).
func aggRef(t *vec.Table) []string {
	type acc struct {
		key      []vec.Datum
		n, nv    int64
		sum      vec.Int128
		min, max vec.Datum
		smin     vec.Datum
		smax     vec.Datum
		ks       map[int64]bool
	}
	groups := map[string]*acc{}
	var order []string
	for _, row := range t.Rows {
		k := rowString(row[:2])
		a := groups[k]
		if a == nil {
			a = &acc{key: row[:2], min: vec.NullDatum(randTypes[2]), max: vec.NullDatum(randTypes[2]),
				smin: vec.NullDatum(vec.StringType), smax: vec.NullDatum(vec.StringType), ks: map[int64]bool{}}
			groups[k] = a
			order = append(order, k)
		}
		a.n++
		if v := row[2]; !v.Null {
			a.nv++
			a.sum, _ = a.sum.Add(v.Decimal())
			if a.min.Null || v.Int < a.min.Int {
				a.min = v
			}
			if a.max.Null || v.Int > a.max.Int {
				a.max = v
			}
		}
		if s := row[1]; !s.Null {
			if a.smin.Null || s.Str < a.smin.Str {
				a.smin = s
			}
			if a.smax.Null || s.Str > a.smax.Str {
				a.smax = s
			}
		}
		if !row[0].Null {
			a.ks[row[0].Int] = true
		}
	}
	var out [][]vec.Datum
	for _, k := range order {
		a := groups[k]
		sum, avg := vec.NullDatum(vec.Decimal(38, 2)), vec.NullDatum(vec.Decimal(38, 6))
		if a.nv > 0 {
			sum = vec.DecimalDatum(a.sum, 38, 2)
			num, _ := a.sum.Mul(vec.Pow10(4))
			q, _ := num.QuoRound(vec.I128(a.nv))
			avg = vec.DecimalDatum(q, 38, 6)
		}
		row := append(slices.Clone(a.key), vec.Int64Datum(a.n), vec.Int64Datum(a.nv), sum, a.min, a.max, avg,
			a.smin, a.smax, vec.Int64Datum(int64(len(a.ks))))
		out = append(out, row)
	}
	return sortedRows(out)
}

func TestAggregateRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	spec := AggSpec{GroupBy: []int{0, 1}, Aggs: []Aggregate{
		{Func: AggCountStar}, {Func: AggCount, Col: 2}, {Func: AggSum, Col: 2}, {Func: AggMin, Col: 2},
		{Func: AggMax, Col: 2}, {Func: AggAvg, Col: 2}, {Func: AggMin, Col: 1}, {Func: AggMax, Col: 1}}}
	distinct := AggSpec{GroupBy: spec.GroupBy, Aggs: append(slices.Clone(spec.Aggs), Aggregate{Func: AggCount, Col: 0, Distinct: true})}
	for iter := 0; iter < 30; iter++ {
		domain := []int{2, 30, 3000}[iter%3]
		tab := randTable(r, r.IntN(5000), domain, 15)
		if iter%2 == 1 {
			// Clustered keys: runs of equal keys are looked up once.
			slices.SortStableFunc(tab.Rows, func(x, y []vec.Datum) int {
				if x[0].Null || y[0].Null {
					return boolCmpInt(y[0].Null) - boolCmpInt(x[0].Null)
				}
				return cmpOrdered(x[0].Int, y[0].Int)
			})
			if iter%4 == 1 {
				for _, row := range tab.Rows {
					if row[0].Null {
						row[0] = vec.Int64Datum(-1)
					}
				}
			}
		}
		want := aggRef(tab)
		// One phase, with COUNT(DISTINCT).
		a, err := NewHashAggregate(randSource(r, tab), distinct, AggComplete, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Collect(context.Background(), a, nil)
		if err != nil {
			t.Fatal(err)
		}
		if g := sortedRows(got.Rows); !slices.Equal(g, want) {
			t.Fatalf("iter %d complete: %d groups, want %d\ngot  %v\nwant %v", iter, len(g), len(want), head(g), head(want))
		}
		// Partial over three random parts, merged in two steps, finalised.
		cut1 := r.IntN(len(tab.Rows) + 1)
		cut2 := cut1 + r.IntN(len(tab.Rows)-cut1+1)
		var parts []Operator
		for _, rg := range [][2]int{{0, cut1}, {cut1, cut2}, {cut2, len(tab.Rows)}} {
			sub := &vec.Table{Names: tab.Names, Types: tab.Types, Rows: tab.Rows[rg[0]:rg[1]]}
			var src Operator = NewBatchSource(tab.Types)
			if len(sub.Rows) > 0 {
				src = randSource(r, sub)
			}
			p, err := NewHashAggregate(src, spec, AggPartial, nil)
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, p)
		}
		m1, _ := NewConcat(parts[0], parts[1])
		merged, err := NewHashAggregate(m1, spec, AggMerge, nil)
		if err != nil {
			t.Fatal(err)
		}
		all, _ := NewConcat(merged, parts[2])
		final, err := NewParallelAggregate(all, spec, AggFinal, 1+r.IntN(3), nil)
		if pa, ok := final.(*ParallelAggregate); ok && r.IntN(2) == 0 {
			pa.minRows = 0 // deal even these small inputs out
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err = Collect(context.Background(), final, nil)
		if err != nil {
			t.Fatal(err)
		}
		var trimmed []string
		for _, w := range want {
			trimmed = append(trimmed, w[:strings.LastIndexByte(w, '|')])
		}
		if g := sortedRows(got.Rows); !slices.Equal(g, trimmed) {
			t.Fatalf("iter %d two-phase:\ngot  %v\nwant %v", iter, head(g), head(trimmed))
		}
	}
}

// TestSortTopNRandom checks Sort, TopN (with its store compaction) and Limit against
// slices.SortStableFunc, NULLs first ascending.
func TestSortTopNRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for iter := 0; iter < 20; iter++ {
		tab := randTable(r, r.IntN(6000), []int{5, 5000}[iter%2], 10)
		keys := []SortKey{{Col: 2, Desc: r.IntN(2) == 0}, {Col: 1}, {Col: 0, Desc: true}}
		order, _ := newRowOrder(keys, randTypes)
		b := tab.Batch(0, len(tab.Rows))
		idx := make([]int, len(tab.Rows))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(x, y int) int { return order.compare(b.Cols, x, b.Cols, y) })
		var want []string
		for _, i := range idx {
			want = append(want, rowString(tab.Rows[i]))
		}
		s, _ := NewSort(randSource(r, tab), keys, nil)
		got, err := Collect(context.Background(), s, nil)
		if err != nil {
			t.Fatal(err)
		}
		var g []string
		for _, row := range got.Rows {
			g = append(g, rowString(row))
		}
		// Rows equal on all keys may come in any order; compare key columns only.
		keyOnly := func(rows []string) []string {
			out := make([]string, len(rows))
			for i, s := range rows {
				f := strings.Split(s, "|")
				out[i] = f[2] + "|" + f[1] + "|" + f[0]
			}
			return out
		}
		if !slices.Equal(keyOnly(g), keyOnly(want)) {
			t.Fatalf("iter %d sort differs", iter)
		}
		limit, offset := int64(r.IntN(300)), int64(r.IntN(50))
		tn, _ := NewTopN(randSource(r, tab), keys, limit, offset, nil)
		got, err = Collect(context.Background(), tn, nil)
		if err != nil {
			t.Fatal(err)
		}
		lo := min(int(offset), len(want))
		hi := min(int(offset+limit), len(want))
		g = g[:0]
		for _, row := range got.Rows {
			g = append(g, rowString(row))
		}
		if !slices.Equal(keyOnly(g), keyOnly(want[lo:hi])) {
			t.Fatalf("iter %d topn %d offset %d: %d rows, want %d", iter, limit, offset, len(g), hi-lo)
		}
	}
}

// TestPackedKeysRandom compares grouping through packed keys with the general hash table,
// including NULL keys and strings that outgrow the first batch's width mid-stream.
func TestPackedKeysRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	types := []vec.Type{vec.StringType, vec.Int32Type, vec.BoolType, vec.Int64Type}
	spec := AggSpec{GroupBy: []int{0, 1, 2}, Aggs: []Aggregate{{Func: AggCountStar}, {Func: AggSum, Col: 3}}}
	for iter := 0; iter < 40; iter++ {
		tab := &vec.Table{Names: []string{"s", "i", "b", "v"}, Types: types}
		n := r.IntN(3000)
		maxLen := 1 + r.IntN(3)
		for row := 0; row < n; row++ {
			if row == n/2 && iter%2 == 0 {
				maxLen += 4 // longer strings later: the packer must give up cleanly
			}
			s := strings.Repeat(string(rune('a'+r.IntN(3))), 1+r.IntN(maxLen))
			d := []vec.Datum{vec.StringDatum(s), vec.Int32Datum(int32(r.IntN(4) - 2)), vec.BoolDatum(r.IntN(2) == 0),
				vec.Int64Datum(r.Int64N(100))}
			for c := 0; c < 3; c++ {
				if r.IntN(10) == 0 {
					d[c] = vec.NullDatum(types[c])
				}
			}
			tab.Rows = append(tab.Rows, d)
		}
		var outs []string
		for _, packed := range []bool{true, false} {
			a, err := NewHashAggregate(randSource(r, tab), spec, AggComplete, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !packed {
				a.packer = nil
			} else if a.packer == nil {
				t.Fatal("keys not packable")
			}
			got, err := Collect(context.Background(), a, nil)
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, strings.Join(sortedRows(got.Rows), "\n"))
		}
		if outs[0] != outs[1] {
			t.Fatalf("iter %d: packed\n%s\ngeneral\n%s", iter, outs[0], outs[1])
		}
	}
}

// TestDistinctRandom checks DISTINCT over all columns against a set of the rows' texts:
// NULLs with different garbage under them are one value.
func TestDistinctRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	for iter := 0; iter < 20; iter++ {
		tab := randTable(r, r.IntN(4000), []int{2, 40, 3000}[iter%3], 20)
		seen := map[string]bool{}
		var want []string
		for _, row := range tab.Rows {
			if k := rowString(row); !seen[k] {
				seen[k] = true
				want = append(want, k)
			}
		}
		slices.Sort(want)
		got, err := Collect(context.Background(), NewDistinct(randSource(r, tab), nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		if g := sortedRows(got.Rows); !slices.Equal(g, want) {
			t.Fatalf("iter %d: %d distinct rows, want %d\ngot  %v\nwant %v", iter, len(g), len(want), head(g), head(want))
		}
	}
}

// TestSortRecordsRandom: SortRecords orders held records as the Sort operator orders rows
// (NULLs first ascending), ties in arrival order, through both its integer fast paths and
// its general comparison.
func TestSortRecordsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for iter := 0; iter < 20; iter++ {
		tab := randTable(r, r.IntN(3000), []int{5, 4000}[iter%2], []int{0, 10}[iter%3%2])
		var keys []SortKey
		switch iter % 4 {
		case 0:
			keys = []SortKey{{Col: 0}}
		case 1:
			keys = []SortKey{{Col: 0, Desc: true}}
		case 2:
			keys = []SortKey{{Col: 1}, {Col: 2, Desc: true}}
		default:
			keys = []SortKey{{Col: 2}}
		}
		var recs []arrow.RecordBatch
		var rows [][][]vec.Datum // per record, its rows
		for s := 0; s < len(tab.Rows); {
			e := min(len(tab.Rows), s+1+r.IntN(700))
			sub := &vec.Table{Names: tab.Names, Types: tab.Types, Rows: tab.Rows[s:e]}
			recs = append(recs, recordsOf(sub, e-s)...)
			rows = append(rows, tab.Rows[s:e])
			s = e
		}
		perm, err := SortRecords(recs, keys)
		if err != nil {
			t.Fatal(err)
		}
		order, _ := newRowOrder(keys, randTypes)
		b := tab.Batch(0, len(tab.Rows))
		idx := make([]int, len(tab.Rows))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(x, y int) int { return order.compare(b.Cols, x, b.Cols, y) })
		if len(perm) != len(idx) {
			t.Fatalf("iter %d: %d rows, want %d", iter, len(perm), len(idx))
		}
		for i, p := range perm {
			if got, want := rowString(rows[p.Rec()][p.Row()]), rowString(tab.Rows[idx[i]]); got != want {
				t.Fatalf("iter %d (keys %v): row %d is %s, want %s", iter, keys, i, got, want)
			}
		}
		for _, rec := range recs {
			rec.Release()
		}
	}
}
