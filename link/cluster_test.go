package link

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/storage/ndv"
)

func datum(v int64) *vec.Datum { d := vec.Int64Datum(v); return &d }

func catalogOf(name string, tables ...Table) *Catalog {
	c := &Catalog{CatalogEnd: CatalogEnd{Name: name, Tables: tables}, Schemas: map[string]*arrow.Schema{}}
	for _, t := range tables {
		fields := make([]arrow.Field, len(t.Columns))
		for i, col := range t.Columns {
			fields[i] = arrow.Field{Name: col.Name, Type: arrow.PrimitiveTypes.Int64, Nullable: col.Nullable}
		}
		c.Schemas[t.Name] = arrow.NewSchema(fields, nil)
	}
	return c
}

func col(name string, nulls int64, lo, hi *vec.Datum) Column {
	return Column{Name: name, Type: vec.Int64Type, Nullable: true, Nulls: nulls, Min: lo, Max: hi}
}

func fmtCol(c Column) string {
	s := func(d *vec.Datum) string {
		if d == nil {
			return "?"
		}
		return d.String()
	}
	return fmt.Sprintf("%s nulls=%d [%s,%s]", c.Name, c.Nulls, s(c.Min), s(c.Max))
}

// TestMerge adds up shares: counts add, ranges widen, a share of only NULLs or no rows
// leaves the range alone, an unknown range makes the merged one unknown, a table missing on
// a primproc is reported.
func TestMerge(t *testing.T) {
	a := catalogOf("pm0",
		Table{Name: "t", Rows: 10, Segments: 1, RowGroups: 2, Bytes: 100, Columns: []Column{
			col("x", 0, datum(5), datum(9)), col("y", 10, nil, nil), col("z", 0, datum(1), datum(2)), col("w", -1, datum(0), datum(0))}},
		Table{Name: "only0", Rows: 1, Columns: []Column{col("k", 0, datum(1), datum(1))}})
	b := catalogOf("pm1",
		Table{Name: "t", Rows: 5, Deleted: 1, Segments: 2, RowGroups: 3, Bytes: 50, Columns: []Column{
			col("x", 2, datum(-3), datum(7)), col("y", 1, datum(4), datum(4)), col("z", 0, nil, nil), col("w", 0, datum(3), datum(8))}})
	c := catalogOf("pm2",
		Table{Name: "t", Columns: []Column{col("x", 0, nil, nil), col("y", 0, nil, nil), col("z", 0, nil, nil), col("w", 0, nil, nil)}})
	m, err := Merge([]*Catalog{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	tb := m.Table("t")
	if tb.Rows != 15 || tb.Deleted != 1 || tb.Segments != 3 || tb.RowGroups != 5 || tb.Bytes != 150 {
		t.Errorf("counts: %+v", tb)
	}
	want := []string{"x nulls=2 [-3,9]", "y nulls=11 [4,4]", "z nulls=0 [?,?]", "w nulls=-1 [0,8]"}
	for i, w := range want {
		if got := fmtCol(tb.Columns[i]); got != w {
			t.Errorf("column %d: %s, want %s", i, got, w)
		}
	}
	if p := m.Partial["only0"]; len(p) != 2 || p[0] != "pm1" || p[1] != "pm2" {
		t.Errorf("partial: %v", m.Partial)
	}
	if a.Table("t").Columns[0].Min.Int != 5 {
		t.Error("Merge changed its input")
	}

	bad := catalogOf("pm3", Table{Name: "t", Columns: []Column{col("other", 0, nil, nil)}})
	if _, err := MergeCatalogs([]*Catalog{a, bad}); err == nil {
		t.Error("merging different columns succeeded")
	}
}

// sketchOf encodes the sketch of the integers lo..hi-1.
func sketchOf(t *testing.T, lo, hi int64) []byte {
	var s ndv.Sketch
	for v := lo; v < hi; v++ {
		s.AddHash(ndv.HashInt64(v))
	}
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMergeSketches merges distinct-value sketches: overlapping shares count a value once,
// a share without rows adds nothing, a share with values but no sketch makes the count
// unknown, and a malformed sketch is an error naming the primproc.
func TestMergeSketches(t *testing.T) {
	withSketch := func(c Column, b []byte) Column { c.NDVSketch = b; return c }
	a := catalogOf("pm0", Table{Name: "t", Rows: 3000, Columns: []Column{
		withSketch(col("k", 0, nil, nil), sketchOf(t, 0, 3000)),
		withSketch(col("g", 0, nil, nil), sketchOf(t, 0, 25)),
		withSketch(col("u", 0, nil, nil), sketchOf(t, 0, 10))}})
	b := catalogOf("pm1", Table{Name: "t", Rows: 3000, Columns: []Column{
		withSketch(col("k", 0, nil, nil), sketchOf(t, 2000, 5000)),
		withSketch(col("g", 0, nil, nil), sketchOf(t, 0, 25)),
		col("u", 0, nil, nil)}})
	empty := catalogOf("pm2", Table{Name: "t", Columns: []Column{col("k", 0, nil, nil), col("g", 0, nil, nil), col("u", 0, nil, nil)}})
	m, err := MergeCatalogs([]*Catalog{a, b, empty})
	if err != nil {
		t.Fatal(err)
	}
	cols := m.Table("t").Columns
	for i, want := range []float64{5000, 25, 0} {
		got := cols[i].Distinct
		if want == 0 && (got != 0 || cols[i].NDVSketch != nil) || want > 0 && (got < 0.97*want || got > 1.03*want) {
			t.Errorf("column %s: %v distinct values, want %v", cols[i].Name, got, want)
		}
	}
	if s, err := ndv.Decode(cols[0].NDVSketch); err != nil || s.Estimate() != cols[0].Distinct {
		t.Errorf("merged sketch: %v", err)
	}
	// One primproc alone keeps its estimate.
	one, err := MergeCatalogs([]*Catalog{a})
	if err != nil {
		t.Fatal(err)
	}
	if d := one.Table("t").Columns[1].Distinct; d < 24 || d > 26 {
		t.Errorf("one primproc: %v distinct values, want 25", d)
	}
	bad := catalogOf("pm3", Table{Name: "t", Rows: 1, Columns: []Column{
		withSketch(col("k", 0, nil, nil), []byte{1, 12, 0xff}), col("g", 0, nil, nil), col("u", 0, nil, nil)}})
	if _, err := MergeCatalogs([]*Catalog{a, bad}); err == nil || !strings.Contains(err.Error(), "pm3") {
		t.Errorf("malformed sketch: %v", err)
	}
}
