package pmclient

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/primproc/wire"
)

func datum(v int64) *vec.Datum { d := vec.Int64Datum(v); return &d }

func catalogOf(name string, tables ...wire.Table) *Catalog {
	c := &Catalog{Catalog: wire.Catalog{Name: name, Tables: tables}, Schemas: map[string]*arrow.Schema{}}
	for _, t := range tables {
		fields := make([]arrow.Field, len(t.Columns))
		for i, col := range t.Columns {
			fields[i] = arrow.Field{Name: col.Name, Type: arrow.PrimitiveTypes.Int64, Nullable: col.Nullable}
		}
		c.Schemas[t.Name] = arrow.NewSchema(fields, nil)
	}
	return c
}

func col(name string, nulls int64, lo, hi *vec.Datum) wire.Column {
	return wire.Column{Name: name, Type: vec.Int64Type, Nullable: true, Nulls: nulls, Min: lo, Max: hi}
}

func fmtCol(c wire.Column) string {
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
		wire.Table{Name: "t", Rows: 10, Segments: 1, RowGroups: 2, Bytes: 100, Columns: []wire.Column{
			col("x", 0, datum(5), datum(9)), col("y", 10, nil, nil), col("z", 0, datum(1), datum(2)), col("w", -1, datum(0), datum(0))}},
		wire.Table{Name: "only0", Rows: 1, Columns: []wire.Column{col("k", 0, datum(1), datum(1))}})
	b := catalogOf("pm1",
		wire.Table{Name: "t", Rows: 5, Deleted: 1, Segments: 2, RowGroups: 3, Bytes: 50, Columns: []wire.Column{
			col("x", 2, datum(-3), datum(7)), col("y", 1, datum(4), datum(4)), col("z", 0, nil, nil), col("w", 0, datum(3), datum(8))}})
	c := catalogOf("pm2",
		wire.Table{Name: "t", Columns: []wire.Column{col("x", 0, nil, nil), col("y", 0, nil, nil), col("z", 0, nil, nil), col("w", 0, nil, nil)}})
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

	bad := catalogOf("pm3", wire.Table{Name: "t", Columns: []wire.Column{col("other", 0, nil, nil)}})
	if _, err := MergeCatalogs([]*Catalog{a, bad}); err == nil {
		t.Error("merging different columns succeeded")
	}
}
