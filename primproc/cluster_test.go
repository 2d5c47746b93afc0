package primproc

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/storage"
)

var clusterSchema = arrow.NewSchema([]arrow.Field{
	{Name: "d", Type: arrow.FixedWidthTypes.Date32},
	{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "price", Type: &arrow.Decimal64Type{Precision: 15, Scale: 2}},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64},
	{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
}, nil)

// testRow is one row of clusterSchema, for the reference sort.
type testRow struct {
	d     int32
	n     *int32
	s     *string
	price int64
	f     float64
	b     *bool
	id    int64
}

func (r testRow) String() string {
	str := func(p any) string {
		switch v := p.(type) {
		case *int32:
			if v != nil {
				return fmt.Sprint(*v)
			}
		case *string:
			if v != nil {
				return *v
			}
		case *bool:
			if v != nil {
				return fmt.Sprint(*v)
			}
		}
		return "NULL"
	}
	return fmt.Sprintf("%d,%s,%s,%d,%g,%s,%d", r.d, str(r.n), str(r.s), r.price, r.f, str(r.b), r.id)
}

func randomRecords(t *testing.T, r *rand.Rand, sizes []int) ([]arrow.RecordBatch, []testRow) {
	t.Helper()
	var recs []arrow.RecordBatch
	var rows []testRow
	id := int64(0)
	for _, n := range sizes {
		b := array.NewRecordBuilder(memory.DefaultAllocator, clusterSchema)
		for range n {
			row := testRow{d: int32(r.IntN(20)), price: int64(r.IntN(7)) - 3, f: float64(r.IntN(5)) / 2, id: id}
			id++
			b.Field(0).(*array.Date32Builder).Append(arrow.Date32(row.d))
			if r.IntN(4) == 0 {
				b.Field(1).AppendNull()
			} else {
				v := int32(r.IntN(6))
				row.n = &v
				b.Field(1).(*array.Int32Builder).Append(v)
			}
			if r.IntN(5) == 0 {
				b.Field(2).AppendNull()
			} else {
				v := strings.Repeat("x", r.IntN(3)) + string(rune('a'+r.IntN(4)))
				row.s = &v
				b.Field(2).(*array.StringBuilder).Append(v)
			}
			b.Field(3).(*array.Decimal64Builder).Append(decimal.Decimal64(row.price))
			b.Field(4).(*array.Float64Builder).Append(row.f)
			if r.IntN(3) == 0 {
				b.Field(5).AppendNull()
			} else {
				v := r.IntN(2) == 0
				row.b = &v
				b.Field(5).(*array.BooleanBuilder).Append(v)
			}
			b.Field(6).(*array.Int64Builder).Append(row.id)
			rows = append(rows, row)
		}
		rec := b.NewRecordBatch()
		b.Release()
		recs = append(recs, rec)
	}
	return recs, rows
}

// compareRows orders reference rows by the named keys, NULLs first.
func compareRows(keys []string) func(a, b testRow) int {
	nullsFirst := func(an, bn bool) (int, bool) {
		switch {
		case an && bn:
			return 0, true
		case an:
			return -1, true
		case bn:
			return 1, true
		}
		return 0, false
	}
	b2i := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	return func(a, b testRow) int {
		for _, k := range keys {
			c := 0
			switch k {
			case "d":
				c = cmp.Compare(a.d, b.d)
			case "n":
				if n, ok := nullsFirst(a.n == nil, b.n == nil); ok {
					c = n
				} else {
					c = cmp.Compare(*a.n, *b.n)
				}
			case "s":
				if n, ok := nullsFirst(a.s == nil, b.s == nil); ok {
					c = n
				} else {
					c = cmp.Compare(*a.s, *b.s)
				}
			case "price":
				c = cmp.Compare(a.price, b.price)
			case "f":
				c = cmp.Compare(a.f, b.f)
			case "b":
				if n, ok := nullsFirst(a.b == nil, b.b == nil); ok {
					c = n
				} else {
					c = cmp.Compare(b2i(*a.b), b2i(*b.b))
				}
			case "id":
				c = cmp.Compare(a.id, b.id)
			}
			if c != 0 {
				return c
			}
		}
		return 0
	}
}

func rowsOf(recs []arrow.RecordBatch) []string {
	var out []string
	for _, rec := range recs {
		for i := 0; i < int(rec.NumRows()); i++ {
			var f []string
			for c := 0; c < int(rec.NumCols()); c++ {
				col := rec.Column(c)
				switch {
				case col.IsNull(i):
					f = append(f, "NULL")
				case col.DataType().ID() == arrow.DECIMAL64:
					f = append(f, fmt.Sprint(int64(col.(*array.Decimal64).Value(i))))
				case col.DataType().ID() == arrow.DATE32:
					f = append(f, fmt.Sprint(int32(col.(*array.Date32).Value(i))))
				default:
					f = append(f, col.ValueStr(i))
				}
			}
			out = append(out, strings.Join(f, ","))
		}
	}
	return out
}

// TestClusterSort sorts random records (NULLs, strings, several keys, records of
// different sizes, a slice) by each key set and compares with a stable reference sort.
func TestClusterSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	recs, rows := randomRecords(t, r, []int{0, 1, 37, 200, 5})
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	sl := recs[3].NewSlice(10, 150) // a slice with a non-zero offset
	defer sl.Release()
	input := []arrow.RecordBatch{recs[0], recs[1], recs[2], sl, recs[4]}
	ref := slices.Concat(rows[:1+37], rows[1+37+10:1+37+150], rows[1+37+200:])
	for _, keys := range [][]string{{"d"}, {"n"}, {"s"}, {"price"}, {"f"}, {"b"}, {"s", "d"}, {"b", "n", "price"}, {"d", "id"}} {
		t.Run(strings.Join(keys, ","), func(t *testing.T) {
			idx := make([]int, len(keys))
			for i, k := range keys {
				idx[i] = clusterSchema.FieldIndices(k)[0]
			}
			c := newClusterer(clusterSchema, idx, 1<<20, 64, memory.DefaultAllocator)
			c.recs = input
			for _, rec := range input {
				c.rows += rec.NumRows()
			}
			perm, err := c.sortedOrder()
			if err != nil {
				t.Fatal(err)
			}
			g := newGatherer(input, memory.DefaultAllocator)
			var out []arrow.RecordBatch
			for off := 0; off < len(perm); off += 64 {
				rec, err := g.gather(clusterSchema, perm[off:min(off+64, len(perm))])
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, rec)
			}
			got := rowsOf(out)
			for _, rec := range out {
				rec.Release()
			}
			want := slices.Clone(ref)
			slices.SortStableFunc(want, compareRows(keys))
			var ws []string
			for _, w := range want {
				ws = append(ws, w.String())
			}
			if !slices.Equal(got, ws) {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(ws, "\n"))
			}
		})
	}
}

// TestClustererSegments writes records through a clusterer into a store: every segment
// holds segRows rows (the last fewer), sorted by the key, and all rows arrive.
func TestClustererSegments(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	recs, rows := randomRecords(t, r, []int{130, 7, 250, 1, 90})
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	st, err := storage.Open(t.TempDir(), storage.Options{RowGroupRows: 25, SegmentRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	tx := st.Begin()
	w, err := tx.Replace("t", clusterSchema)
	if err != nil {
		t.Fatal(err)
	}
	c := newClusterer(clusterSchema, []int{0}, 100, 25, memory.DefaultAllocator)
	for _, rec := range recs {
		if err := c.add(ctx, w, rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.flush(ctx, w); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	snap := st.Snapshot()
	defer snap.Release()
	ti, _ := snap.Table("t")
	var all []string
	for i, seg := range ti.Segments {
		wantRows := int64(100)
		if i == len(ti.Segments)-1 {
			wantRows = int64(len(rows)) - 100*int64(len(ti.Segments)-1)
		}
		if seg.Rows != wantRows || seg.RowGroups != int((wantRows+24)/25) {
			t.Errorf("segment %d: %d rows in %d row groups", i, seg.Rows, seg.RowGroups)
		}
		sc, err := snap.Scan(storage.ScanRequest{Table: "t", Columns: []string{"d", "n", "s", "price", "f", "b", "id"}, Segments: []uint64{seg.ID}})
		if err != nil {
			t.Fatal(err)
		}
		var segRecs []arrow.RecordBatch
		for _, ref := range sc.RowGroups() {
			rec, err := sc.Read(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			segRecs = append(segRecs, rec)
		}
		prev := int32(-1)
		for _, rec := range segRecs {
			for _, d := range rec.Column(0).(*array.Date32).Date32Values() {
				if int32(d) < prev {
					t.Errorf("segment %d is not sorted by d", i)
				}
				prev = int32(d)
			}
		}
		all = append(all, rowsOf(segRecs)...)
		for _, rec := range segRecs {
			rec.Release()
		}
		sc.Close()
	}
	var want []string
	for _, row := range rows {
		want = append(want, row.String())
	}
	slices.Sort(all)
	slices.Sort(want)
	if !slices.Equal(all, want) {
		for i := range all {
			if all[i] != want[i] {
				t.Errorf("first difference: stored %q, written %q", all[i], want[i])
				break
			}
		}
		t.Errorf("rows changed by clustering: %d stored, %d written", len(all), len(want))
	}
}
