package tpch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// formatArrowRow formats row i of rec as a .tbl line, from the Arrow values alone.
func formatArrowRow(dst []byte, rec arrow.RecordBatch, i int) []byte {
	for c := 0; c < int(rec.NumCols()); c++ {
		name := rec.Schema().Field(c).Name
		switch col := rec.Column(c).(type) {
		case *array.Int64:
			dst = appendInt(dst, col.Value(i))
		case *array.Int32:
			dst = appendInt(dst, int64(col.Value(i)))
		case *array.Decimal64:
			v := int64(col.Value(i))
			if name == "l_quantity" { // dbgen prints the quantity as a whole number
				dst = appendInt(dst, v/100)
			} else {
				dst = appendMoney(dst, v)
			}
		case *array.Date32:
			dst = append(dst, col.Value(i).ToTime().Format("2006-01-02")...)
		case *array.String:
			dst = append(dst, col.Value(i)...)
		default:
			panic(fmt.Sprintf("column %s: unexpected %T", name, col))
		}
		dst = append(dst, '|')
	}
	return append(dst, '\n')
}

// TestArrowMatchesTbl checks, for every table at SF 0.01 (and a refresh set), that the
// Arrow batches hold exactly the rows of the .tbl text, batch by bounded batch.
func TestArrowMatchesTbl(t *testing.T) {
	sc := mustScale(t, "0.01")
	type source struct {
		name string
		make func(...GeneratorOption) (*Generator, error)
	}
	var sources []source
	for _, table := range TableNames() {
		sources = append(sources, source{table, func(o ...GeneratorOption) (*Generator, error) {
			return NewGenerator(sc, table, 2, 3, o...)
		}})
	}
	for _, table := range []string{"orders", "lineitem"} {
		sources = append(sources, source{table + ".u2", func(o ...GeneratorOption) (*Generator, error) {
			return NewRefreshGenerator(sc, table, 2, o...)
		}})
	}
	for _, s := range sources {
		const batchRows = 997
		tg, err := s.make(WithBatchRows(batchRows))
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := tg.WriteTbl(&want); err != nil {
			t.Fatal(err)
		}
		ag, err := s.make(WithBatchRows(batchRows))
		if err != nil {
			t.Fatal(err)
		}
		if !ag.Schema().Equal(mustTable(t, ag.Table()).ArrowSchema()) {
			t.Fatalf("%s: generator schema differs from the table's", s.name)
		}
		var got []byte
		batches := 0
		for {
			rec, err := ag.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if rec.NumRows() > batchRows || rec.NumRows() == 0 {
				t.Fatalf("%s: batch of %d rows (bound %d)", s.name, rec.NumRows(), batchRows)
			}
			for i := 0; i < int(rec.NumRows()); i++ {
				got = formatArrowRow(got, rec, i)
			}
			rec.Release()
			batches++
		}
		ag.Close()
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: Arrow rows differ from .tbl rows:\n%s", s.name, firstDiff(string(got), want.String()))
		}
		if want.Len() > 0 && batches == 0 {
			t.Errorf("%s: no batches", s.name)
		}
	}
}

func mustTable(t *testing.T, name string) *Table {
	tab, ok := LookupTable(name)
	if !ok {
		t.Fatalf("no table %s", name)
	}
	return tab
}

// TestGeneratorRecyclesBuffers checks that released batches' buffers are reused (after the
// first batches nothing new comes from the Go allocator) and that every allocation is
// freed with the size it was allocated with.
func TestGeneratorRecyclesBuffers(t *testing.T) {
	rec := newRecycler(64 << 20)
	mem := memory.NewCheckedAllocator(rec)
	g, err := NewGenerator(mustScale(t, "0.01"), "lineitem", 1, 1, WithBatchRows(1000), WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	batches := 0
	for {
		b, err := g.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b.Release()
		batches++
	}
	g.Close()
	mem.AssertSize(t, 0)
	// One batch needs 16 value buffers and 6 string data buffers.
	if batches < 50 || rec.fresh > 2*22 {
		t.Errorf("%d batches took %d fresh buffers; want at most two batches' worth", batches, rec.fresh)
	}
}

// TestParquetRoundTrip writes lineitem and nation as Parquet and reads them back through
// pqarrow: the same rows, decimals as INT64-backed DECIMAL(15,2), with statistics.
func TestParquetRoundTrip(t *testing.T) {
	sc := mustScale(t, "0.01")
	dir := t.TempDir()
	if err := Generate(context.Background(), Options{Scale: sc, Dir: dir, Format: FormatParquet, NoSync: true,
		Tables: []string{"lineitem", "nation"}}); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"lineitem", "nation"} {
		g, _ := NewGenerator(sc, table, 1, 1)
		var want bytes.Buffer
		if err := g.WriteTbl(&want); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(filepath.Join(dir, table+".parquet"))
		if err != nil {
			t.Fatal(err)
		}
		pr, err := file.NewParquetReader(f)
		if err != nil {
			t.Fatal(err)
		}
		md := pr.MetaData()
		for c := 0; c < md.Schema.NumColumns(); c++ {
			col := md.Schema.Column(c)
			if col.LogicalType().String() == "Decimal(precision=15, scale=2)" && col.PhysicalType().String() != "INT64" {
				t.Errorf("%s.%s: decimal stored as %s, want INT64", table, col.Name(), col.PhysicalType())
			}
			cc, err := md.RowGroup(0).ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			if ok, _ := cc.StatsSet(); !ok {
				t.Errorf("%s.%s: no statistics", table, col.Name())
			}
		}
		fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 4096}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		rr, err := fr.GetRecordReader(context.Background(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		for rr.Next() {
			rec := narrowDecimals(t, rr.RecordBatch())
			for i := 0; i < int(rec.NumRows()); i++ {
				got = formatArrowRow(got, rec, i)
			}
			rec.Release()
		}
		rr.Release()
		f.Close()
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s.parquet rows differ from .tbl:\n%s", table, firstDiff(string(got), want.String()))
		}
	}
}

// narrowDecimals turns the Decimal128 columns pqarrow reads back into Decimal64 ones.
func narrowDecimals(t *testing.T, rec arrow.RecordBatch) arrow.RecordBatch {
	cols := make([]arrow.Array, rec.NumCols())
	fields := rec.Schema().Fields()
	for i := range cols {
		d, ok := rec.Column(i).(*array.Decimal128)
		if !ok {
			cols[i] = rec.Column(i)
			cols[i].Retain()
			continue
		}
		typ := d.DataType().(*arrow.Decimal128Type)
		nt := &arrow.Decimal64Type{Precision: typ.Precision, Scale: typ.Scale}
		b := array.NewDecimal64Builder(memory.DefaultAllocator, nt)
		for j := 0; j < d.Len(); j++ {
			v := d.Value(j)
			if v.HighBits() != 0 && v.HighBits() != -1 {
				t.Fatalf("decimal %v does not fit 64 bits", v)
			}
			b.Append(decimal64(int64(v.LowBits())))
		}
		cols[i] = b.NewArray()
		b.Release()
		fields[i].Type = nt
	}
	out := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return out
}
