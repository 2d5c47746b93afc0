package tpch

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// ParquetRowGroupRows is the number of rows per Parquet row group (DuckDB's own row group
// size): small enough that a buffered row group stays a few MiB per file.
const ParquetRowGroupRows = 122880

// dictionaryColumns lists the columns with few distinct values, which Parquet stores
// dictionary encoded; keys, prices and comments are nearly unique and stay plain, which
// also spares the encoder a hash table of every value.
func dictionaryColumns() map[string]bool {
	m := map[string]bool{}
	for _, c := range []string{
		"p_mfgr", "p_brand", "p_type", "p_size", "p_container",
		"s_nationkey", "c_nationkey", "c_mktsegment",
		"o_orderstatus", "o_orderdate", "o_orderpriority", "o_clerk", "o_shippriority",
		"l_linenumber", "l_quantity", "l_discount", "l_tax", "l_returnflag", "l_linestatus",
		"l_shipdate", "l_commitdate", "l_receiptdate", "l_shipinstruct", "l_shipmode",
		"n_name", "n_regionkey", "r_name",
	} {
		m[c] = true
	}
	return m
}

// parquetSink writes one table's batches to a Parquet file: Snappy-compressed, dictionary
// encoded where it pays, with column statistics, and decimals stored as INT64 DECIMAL(15,2).
//
// pqarrow writes decimals from Decimal128 arrays, not from the Decimal64 arrays the engine
// uses, so the sink widens decimal columns on the way in; with StoreDecimalAsInteger the file
// holds them as 64-bit integers all the same.
type parquetSink struct {
	buf     *bufio.Writer
	w       *pqarrow.FileWriter
	schema  *arrow.Schema // the file's schema: the table's, with decimals as Decimal128
	decimal []bool        // which columns are widened
	mem     memory.Allocator
}

func newParquetSink(w io.Writer, t tableID) (*parquetSink, error) {
	def, _ := LookupTable(t.String())
	src := def.ArrowSchema()
	fields := src.Fields()
	dec := make([]bool, len(fields))
	for i, f := range fields {
		if d, ok := f.Type.(*arrow.Decimal64Type); ok {
			fields[i].Type = &arrow.Decimal128Type{Precision: d.Precision, Scale: d.Scale}
			dec[i] = true
		}
	}
	schema := arrow.NewSchema(fields, nil)
	opts := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithStoreDecimalAsInteger(true),
		parquet.WithMaxRowGroupLength(ParquetRowGroupRows),
		parquet.WithStats(true),
		parquet.WithDictionaryDefault(false),
		parquet.WithCreatedBy("colink dbt3 gen"),
	}
	dict := dictionaryColumns()
	for _, f := range fields {
		if dict[f.Name] {
			opts = append(opts, parquet.WithDictionaryFor(f.Name, true))
		}
	}
	props := parquet.NewWriterProperties(opts...)
	// The buffer also hides w's Close from pqarrow, which would close the file before it is
	// synced and renamed.
	buf := bufio.NewWriterSize(w, 1<<20)
	fw, err := pqarrow.NewFileWriter(schema, buf, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, fmt.Errorf("parquet writer: %w", err)
	}
	return &parquetSink{buf: buf, w: fw, schema: schema, decimal: dec, mem: memory.DefaultAllocator}, nil
}

// write appends a batch of the table's Arrow schema. The caller keeps ownership of rec.
func (p *parquetSink) write(rec arrow.RecordBatch) error {
	cols := make([]arrow.Array, rec.NumCols())
	for i := range cols {
		if p.decimal[i] {
			cols[i] = widenDecimal(rec.Column(i).(*array.Decimal64), p.schema.Field(i).Type, p.mem)
		} else {
			cols[i] = rec.Column(i)
			cols[i].Retain()
		}
	}
	wide := array.NewRecordBatch(p.schema, cols, rec.NumRows())
	for _, c := range cols {
		c.Release()
	}
	defer wide.Release()
	return p.w.WriteBuffered(wide)
}

func (p *parquetSink) close() error {
	if err := p.w.Close(); err != nil {
		return err
	}
	return p.buf.Flush()
}

// widenDecimal copies a Decimal64 array into a Decimal128 array of the same values.
func widenDecimal(a *array.Decimal64, typ arrow.DataType, mem memory.Allocator) arrow.Array {
	n := a.Len()
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * 16)
	out := buf.Bytes()
	for i := 0; i < n; i++ {
		v := int64(a.Value(i))
		binary.LittleEndian.PutUint64(out[i*16:], uint64(v))
		binary.LittleEndian.PutUint64(out[i*16+8:], uint64(v>>63))
	}
	data := array.NewData(typ, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	defer data.Release()
	return array.MakeFromData(data)
}
