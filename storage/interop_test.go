package storage

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/colinkdb/colink/tpch"
)

// TestSegmentsReadableElsewhere reads a lineitem segment as a generic Parquet reader would
// (pqarrow, knowing nothing of colink): Parquet types are the standard ones DuckDB maps to
// BIGINT, INTEGER, DECIMAL(15,2), DATE and VARCHAR, values match, and the file carries the
// Arrow schema with its colink.sql_type metadata.
func TestSegmentsReadableElsewhere(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, testOptions())
	lineitem, _ := tpch.LookupTable("lineitem")
	sc := lineitem.ArrowSchema()
	loadTable(t, s, "lineitem", sc, 4, 2500, 2500)
	snap := s.Snapshot()
	ti, _ := snap.Table("lineitem")
	snap.Release()
	path := filepath.Join(dir, ti.Segments[0].File)

	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	type want struct {
		phys    parquet.Type
		logical string
	}
	for i, c := range lineitem.Columns {
		col := pf.MetaData().Schema.Column(i)
		var w want
		switch c.Type.Kind {
		case tpch.KindInt32:
			w = want{parquet.Types.Int32, "Int(bitWidth=32, isSigned=true)"}
		case tpch.KindInt64:
			w = want{parquet.Types.Int64, "Int(bitWidth=64, isSigned=true)"}
		case tpch.KindDecimal:
			w = want{parquet.Types.Int64, "Decimal(precision=15, scale=2)"}
		case tpch.KindDate:
			w = want{parquet.Types.Int32, "Date"}
		default:
			w = want{parquet.Types.ByteArray, "String"}
		}
		if col.PhysicalType() != w.phys || col.LogicalType().String() != w.logical || col.SchemaNode().RepetitionType() != parquet.Repetitions.Required {
			t.Errorf("%s: %s %s %s, want %s %s required", c.Name, col.PhysicalType(), col.LogicalType(), col.SchemaNode().RepetitionType(), w.phys, w.logical)
		}
		if _, ok := col.LogicalType().(schema.NoLogicalType); ok {
			t.Errorf("%s has no logical type", c.Name)
		}
	}
	var fields []fieldJSON
	if v := pf.MetaData().KeyValueMetadata().FindValue(segmentSchemaKey); v == nil {
		t.Fatal("segment has no schema metadata")
	} else if err := json.Unmarshal([]byte(*v), &fields); err != nil {
		t.Fatal(err)
	}
	stored, err := schemaFromJSON(fields)
	if err != nil || !stored.Equal(sc) || !stored.Field(15).Metadata.Equal(sc.Field(15).Metadata) {
		t.Fatalf("schema in file %v (%v), want %v", stored, err, sc)
	}

	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 20}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if tbl.NumRows() != ti.Segments[0].Rows {
		t.Fatalf("pqarrow read %d rows, want %d", tbl.NumRows(), ti.Segments[0].Rows)
	}
	for c, f := range sc.Fields() {
		var row int64
		for _, ch := range tbl.Column(c).Data().Chunks() {
			for i := 0; i < ch.Len(); i++ {
				var got any
				switch a := ch.(type) {
				case *array.Decimal128:
					dt := a.DataType().(*arrow.Decimal128Type)
					if dt.Precision != 15 || dt.Scale != 2 {
						t.Fatalf("%s read as %s", f.Name, dt)
					}
					got = int64(a.Value(i).LowBits())
				default:
					got = cellValue(ch, i)
				}
				if want := genValue(f, 4, row, c); got != want {
					t.Fatalf("%s row %d: pqarrow read %v, want %v", f.Name, row, got, want)
				}
				row++
			}
		}
	}
}
