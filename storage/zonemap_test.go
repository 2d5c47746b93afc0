package storage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
)

// zoneTable is the table testdata/zonemaps scans: 1000 rows in 10 row groups of 100 (two
// segments of 500). Row r holds:
//
//	id    int64          r
//	d     date32         1995-01-01 + r/10 days   (row group g: 1995-01-01+10g … +9)
//	price decimal(15,2)  r + 0.05
//	s     utf8           fmt("s%04d", r)
//	f     float64        r / 2
//	n     int32 null     NULL in row group 3, NULL on even rows of row group 4, else r
//	flag  bool           r < 500
func zoneTable(t *testing.T) *Store {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32},
		{Name: "price", Type: &arrow.Decimal64Type{Precision: 15, Scale: 2}},
		{Name: "s", Type: arrow.BinaryTypes.String},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64},
		{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	base := int32(time.Date(1995, 1, 1, 0, 0, 0, 0, time.UTC).Unix() / 86400)
	for r := 0; r < 1000; r++ {
		b.Field(0).(*array.Int64Builder).Append(int64(r))
		b.Field(1).(*array.Date32Builder).Append(arrow.Date32(base + int32(r/10)))
		b.Field(2).(*array.Decimal64Builder).Append(decimal.Decimal64(int64(r)*100 + 5))
		b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("s%04d", r))
		b.Field(4).(*array.Float64Builder).Append(float64(r) / 2)
		if g := r / 100; g == 3 || (g == 4 && r%2 == 0) {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.Int32Builder).Append(int32(r))
		}
		b.Field(6).(*array.BooleanBuilder).Append(r < 500)
	}
	rec := b.NewRecord()
	defer rec.Release()
	s := openTest(t, t.TempDir(), Options{RowGroupRows: 100, SegmentRows: 500})
	tx := s.Begin()
	w, err := tx.Replace("z", sc)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestZoneMaps runs testdata/zonemaps: each case is "eliminate" with a conjunction of
// predicates as input; the output lists the row groups that survive elimination (numbered
// 0–9 across both segments) and the scan's counters, or the planning error.
func TestZoneMaps(t *testing.T) {
	s := zoneTable(t)
	snap := s.Snapshot()
	defer snap.Release()
	ti, _ := snap.Table("z")
	rgIndex := map[[2]uint64]int{}
	n := 0
	for _, sg := range ti.Segments {
		for g := 0; g < sg.RowGroups; g++ {
			rgIndex[[2]uint64{sg.ID, uint64(g)}] = n
			n++
		}
	}
	datadriven.RunTest(t, "testdata/zonemaps", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "eliminate" {
			d.Fatalf(t, "unknown command %s", d.Cmd)
		}
		preds, err := parsePredicates(d.Input)
		if err != nil {
			return "parse error: " + err.Error()
		}
		sc, err := snap.Scan(ScanRequest{Table: "z", Columns: []string{"id"}, Predicates: preds})
		if err != nil {
			return "error: " + err.Error()
		}
		defer sc.Close()
		var kept []string
		var rows int64
		for _, ref := range sc.RowGroups() {
			kept = append(kept, strconv.Itoa(rgIndex[[2]uint64{ref.Segment, uint64(ref.RowGroup)}]))
			rows += ref.Rows
		}
		st := sc.Stats()
		return fmt.Sprintf("kept [%s] rows %d; eliminated %d of %d", strings.Join(kept, " "), rows, st.RowGroupsEliminated, st.RowGroups)
	})
}

// parsePredicates reads "col op literal [and …]". Literals: 12, -3, 0.05 (decimal, scale from
// the digits), 1.5f (float), 'text', date'1995-03-15', (a, b, …) after in; also "col is null"
// and "col is not null".
func parsePredicates(s string) ([]Predicate, error) {
	var out []Predicate
	for _, part := range strings.Split(s, " and ") {
		f := strings.Fields(part)
		if len(f) < 3 {
			return nil, fmt.Errorf("cannot parse %q", part)
		}
		p := Predicate{Column: f[0]}
		rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(part), f[0]))
		switch {
		case rest == "is null":
			p.Op = OpIsNull
			out = append(out, p)
			continue
		case rest == "is not null":
			p.Op = OpIsNotNull
			out = append(out, p)
			continue
		}
		ops := map[string]Op{"=": OpEq, "<>": OpNe, "<": OpLt, "<=": OpLe, ">": OpGt, ">=": OpGe, "in": OpIn}
		op, ok := ops[f[1]]
		if !ok {
			return nil, fmt.Errorf("unknown operator %q", f[1])
		}
		p.Op = op
		lit := strings.TrimSpace(strings.TrimPrefix(rest, f[1]))
		var lits []string
		if op == OpIn {
			lit = strings.TrimSuffix(strings.TrimPrefix(lit, "("), ")")
			for _, l := range strings.Split(lit, ",") {
				lits = append(lits, strings.TrimSpace(l))
			}
		} else {
			lits = []string{lit}
		}
		for _, l := range lits {
			v, err := parseLiteral(l)
			if err != nil {
				return nil, err
			}
			p.Values = append(p.Values, v)
		}
		out = append(out, p)
	}
	return out, nil
}

func parseLiteral(l string) (Value, error) {
	switch {
	case strings.HasPrefix(l, "date'"):
		tm, err := time.Parse("2006-01-02", strings.TrimSuffix(strings.TrimPrefix(l, "date'"), "'"))
		if err != nil {
			return Value{}, err
		}
		return DateOf(tm.Year(), tm.Month(), tm.Day()), nil
	case strings.HasPrefix(l, "'"):
		return Str(strings.TrimSuffix(strings.TrimPrefix(l, "'"), "'")), nil
	case strings.HasSuffix(l, "f"):
		v, err := strconv.ParseFloat(strings.TrimSuffix(l, "f"), 64)
		return Float(v), err
	case strings.Contains(l, "."):
		i := strings.Index(l, ".")
		v, err := strconv.ParseInt(l[:i]+l[i+1:], 10, 64)
		return Decimal(v, int32(len(l)-i-1)), err
	}
	v, err := strconv.ParseInt(l, 10, 64)
	return Int(v), err
}

// TestColumnRanges folds zoneTable's row-group zone maps into per-column ranges.
func TestColumnRanges(t *testing.T) {
	s := zoneTable(t)
	snap := s.Snapshot()
	defer snap.Release()
	got, err := snap.ColumnRanges("z")
	if err != nil {
		t.Fatal(err)
	}
	base := int64(time.Date(1995, 1, 1, 0, 0, 0, 0, time.UTC).Unix() / 86400)
	want := []ColumnRange{
		{HasRange: true, MinInt: 0, MaxInt: 999},
		{HasRange: true, MinInt: base, MaxInt: base + 99},
		{HasRange: true, MinInt: 5, MaxInt: 99905},
		{HasRange: true, MinString: "s0000", MaxString: "s0999"},
		{HasRange: true, MinFloat: 0, MaxFloat: 499.5},
		{Nulls: 150, HasRange: true, MinInt: 0, MaxInt: 999},
		{HasRange: true, MinInt: 0, MaxInt: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("%d ranges, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("column %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if _, err := snap.ColumnRanges("nope"); !errors.Is(err, ErrNoTable) {
		t.Errorf("unknown table: %v", err)
	}
}

// TestColumnSketches checks the distinct-value estimates of zoneTable's columns (two
// segments) against the true counts, and that they survive reopening the store and a
// compaction.
func TestColumnSketches(t *testing.T) {
	s := zoneTable(t)
	// Column: id d price s f n flag; n has 150 NULLs and 850 distinct values.
	want := []float64{1000, 100, 1000, 1000, 1000, 850, 2}
	check := func(what string, s *Store) {
		t.Helper()
		snap := s.Snapshot()
		defer snap.Release()
		sks, err := snap.ColumnSketches("z")
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			if sks[i] == nil {
				t.Errorf("%s: column %d has no sketch", what, i)
				continue
			}
			if got := sks[i].Estimate(); math.Abs(got-w) > 0.03*w+0.5 {
				t.Errorf("%s: column %d: %.1f distinct values, want %v", what, i, got, w)
			}
		}
	}
	check("loaded", s)
	dir := s.Dir()
	s.Close()
	s = openTest(t, dir, Options{RowGroupRows: 100, SegmentRows: 500})
	check("reopened", s)
	snap := s.Snapshot()
	if _, err := snap.ColumnSketches("nope"); !errors.Is(err, ErrNoTable) {
		t.Errorf("unknown table: %v", err)
	}
	snap.Release()
	// The decoded sketches are cached per segment, and forgotten with the segment.
	if len(s.sketches) != 2 {
		t.Errorf("%d segments' sketches cached, want 2", len(s.sketches))
	}
	tx := s.Begin()
	if err := tx.Drop("z"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(s.sketches) != 0 {
		t.Errorf("%d segments' sketches cached after the table was dropped", len(s.sketches))
	}
}

// TestAddMissingSketches upgrades a store written before sketches were kept: its columns
// have no sketches until AddMissingSketches computes them from the segments' rows.
func TestAddMissingSketches(t *testing.T) {
	s := zoneTable(t)
	dir := s.Dir()
	s.Close()
	old, err := readCatalog(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range old.Tables {
		for _, sg := range tb.Segments {
			sg.Sketches = nil
		}
	}
	if _, err := writeCatalog(dir, old, nil); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir, Options{RowGroupRows: 100, SegmentRows: 500})
	snap := s.Snapshot()
	sks, err := snap.ColumnSketches("z")
	snap.Release()
	if err != nil || sks[0] != nil {
		t.Fatalf("a store without sketches: %v, %v", sks[0], err)
	}
	ctx := context.Background()
	res, err := s.AddMissingSketches(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Segments != 2 || res.Rows != 1000 || res.Version != old.Version+1 {
		t.Errorf("result %+v", res)
	}
	snap = s.Snapshot()
	sks, err = snap.ColumnSketches("z")
	snap.Release()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{1000, 100, 1000, 1000, 1000, 850, 2} {
		if sks[i] == nil || math.Abs(sks[i].Estimate()-want) > 0.03*want+0.5 {
			t.Errorf("column %d: %v, want %v distinct values", i, sks[i], want)
		}
	}
	if res, err := s.AddMissingSketches(ctx); err != nil || res.Segments != 0 || res.Version != 0 {
		t.Errorf("second run: %+v, %v", res, err)
	}
	checkRows := func(s *Store) {
		snap := s.Snapshot()
		defer snap.Release()
		ti, _ := snap.Table("z")
		if ti.Rows != 1000 {
			t.Errorf("%d rows", ti.Rows)
		}
	}
	checkRows(s)
	s.Close()
	s = openTest(t, dir, Options{RowGroupRows: 100, SegmentRows: 500})
	checkRows(s)
	snap = s.Snapshot()
	if sks, _ := snap.ColumnSketches("z"); sks[0] == nil {
		t.Error("the sketches did not survive reopening")
	}
	snap.Release()
}

// TestIntRange checks what a scan tells of a row group's zone map for the integer-class
// columns a top-N bound compares (id, d, n with its NULLs) and that it declines the others.
func TestIntRange(t *testing.T) {
	s := zoneTable(t)
	snap := s.Snapshot()
	defer snap.Release()
	sc, err := snap.Scan(ScanRequest{Table: "z", Columns: []string{"n", "id", "s", "f", RowIDColumn, "price"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	refs := sc.RowGroups()
	if len(refs) != 10 {
		t.Fatalf("%d row groups, want 10", len(refs))
	}
	for g, ref := range refs {
		lo, hi, mayNull, ok := sc.IntRange(ref, 1) // id
		if !ok || lo != int64(100*g) || hi != int64(100*g+99) || mayNull {
			t.Errorf("group %d id: %d %d %v %v", g, lo, hi, mayNull, ok)
		}
		lo, hi, mayNull, ok = sc.IntRange(ref, 0) // n: NULL in group 3, on even rows of 4
		switch g {
		case 3:
			if ok {
				t.Errorf("group 3 n (all NULL): a range %d %d", lo, hi)
			}
		case 4:
			if !ok || lo != 401 || hi != 499 || !mayNull {
				t.Errorf("group 4 n: %d %d %v %v", lo, hi, mayNull, ok)
			}
		default:
			if !ok || mayNull || lo != int64(100*g) {
				t.Errorf("group %d n: %d %d %v %v", g, lo, hi, mayNull, ok)
			}
		}
		if lo, hi, _, ok := sc.IntRange(ref, 5); !ok || lo != int64(100*g)*100+5 {
			t.Errorf("group %d price (unscaled): %d %d %v", g, lo, hi, ok)
		}
		for _, i := range []int{2, 3, 4, 6, -1} { // string, double, row ID, out of range
			if _, _, _, ok := sc.IntRange(ref, i); ok {
				t.Errorf("group %d column %d: a range", g, i)
			}
		}
	}
}
