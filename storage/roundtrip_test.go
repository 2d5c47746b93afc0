package storage

import (
	"github.com/colinkdb/colink/exec/vec"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/colinkdb/colink/tpch"
)

// allKindsSchema has one nullable and one non-nullable column of every storable type.
func allKindsSchema() *arrow.Schema {
	types := []arrow.DataType{
		arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Date32,
		&arrow.Decimal64Type{Precision: 15, Scale: 2}, &arrow.Decimal64Type{Precision: 18, Scale: 0},
		&arrow.Decimal64Type{Precision: 4, Scale: 4},
		arrow.BinaryTypes.String, arrow.BinaryTypes.Binary,
	}
	var fields []arrow.Field
	for i, dt := range types {
		fields = append(fields,
			arrow.Field{Name: "c" + string(rune('a'+i)), Type: dt},
			arrow.Field{Name: "n" + string(rune('a'+i)), Type: dt, Nullable: true,
				Metadata: arrow.NewMetadata([]string{vec.SQLTypeKey, "x"}, []string{"whatever", "y"})})
	}
	return arrow.NewSchema(fields, nil)
}

func TestRoundTrip(t *testing.T) {
	type tc struct {
		name   string
		schema *arrow.Schema
		rows   int64
		batch  int64
	}
	var cases []tc
	for _, tb := range tpch.Tables() {
		cases = append(cases, tc{"tpch_" + tb.Name, tb.ArrowSchema(), 7321, 1500})
	}
	cases = append(cases,
		tc{"all_kinds", allKindsSchema(), 4500, 333},
		tc{"one_row", allKindsSchema(), 1, 10},
		tc{"exact_segments", allKindsSchema(), 6000, 6000},
	)
	dir := t.TempDir()
	s := openTest(t, dir, testOptions())
	for i, c := range cases {
		loadTable(t, s, c.name, c.schema, uint64(i), c.rows, c.batch)
	}
	check := func(s *Store) {
		snap := s.Snapshot()
		defer snap.Release()
		for i, c := range cases {
			ti, err := snap.Table(c.name)
			if err != nil {
				t.Fatal(err)
			}
			if !ti.Schema.Equal(c.schema) {
				t.Errorf("%s: schema\n%s\nwant\n%s", c.name, ti.Schema, c.schema)
			}
			for j, f := range ti.Schema.Fields() {
				if !f.Metadata.Equal(c.schema.Field(j).Metadata) {
					t.Errorf("%s.%s: metadata %v, want %v", c.name, f.Name, f.Metadata, c.schema.Field(j).Metadata)
				}
			}
			wantSegs := int((c.rows + 2999) / 3000)
			if len(ti.Segments) != wantSegs {
				t.Errorf("%s: %d segments, want %d", c.name, len(ti.Segments), wantSegs)
			}
			checkTable(t, s, c.name, uint64(i), c.rows)
		}
	}
	check(s)
	s.Close()
	check(openTest(t, dir, testOptions())) // from disk, through a fresh catalog and cache
}
