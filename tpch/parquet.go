package tpch

import (
	"bufio"
	"fmt"
	"io"
	"runtime"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
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
// encoded where it pays, with column statistics, decimals as INT64 DECIMAL(15,2), dates as
// INT32 DATE, strings as UTF-8 byte arrays.
//
// The schema comes from pqarrow (with the decimals widened to Decimal128, the type pqarrow
// maps to Parquet decimals), but the values go to parquet's column writers directly: each
// incoming batch is encoded into the current buffered row group at once, its columns in
// parallel (up to GOMAXPROCS goroutines), so the sink holds only encoded pages, never Arrow
// batches. pqarrow's FileWriter encodes a file's columns one after another on one
// goroutine, which made lineitem's writer the bottleneck.
type parquetSink struct {
	buf     *bufio.Writer
	w       *file.Writer
	rgw     file.BufferedRowGroupWriter // the row group being filled, or nil
	rows    int64                       // rows in rgw
	workers int
	scratch [][]parquet.ByteArray // per worker
}

func newParquetSink(w io.Writer, t tableID) (*parquetSink, error) {
	def, _ := LookupTable(t.String())
	fields := def.ArrowSchema().Fields()
	for i, f := range fields {
		if d, ok := f.Type.(*arrow.Decimal64Type); ok {
			fields[i].Type = &arrow.Decimal128Type{Precision: d.Precision, Scale: d.Scale}
		}
	}
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
	sc, err := pqarrow.ToParquet(arrow.NewSchema(fields, nil), props, pqarrow.DefaultWriterProps())
	if err != nil {
		return nil, fmt.Errorf("parquet schema: %w", err)
	}
	// The buffer also keeps w's Close from the parquet writer, which would close the file
	// before it is synced and renamed.
	buf := bufio.NewWriterSize(w, 1<<20)
	fw, err := file.NewParquetWriterWithError(buf, sc.Root(), file.WithWriterProps(props))
	if err != nil {
		return nil, fmt.Errorf("parquet writer: %w", err)
	}
	workers := min(runtime.GOMAXPROCS(0), len(fields))
	return &parquetSink{buf: buf, w: fw, workers: workers, scratch: make([][]parquet.ByteArray, workers)}, nil
}

// write appends a batch of the table's Arrow schema; the caller keeps ownership of rec.
func (p *parquetSink) write(rec arrow.RecordBatch) error {
	for off := int64(0); off < rec.NumRows(); {
		if p.rgw == nil {
			rgw, err := p.w.AppendBufferedRowGroupChecked()
			if err != nil {
				return err
			}
			p.rgw, p.rows = rgw, 0
		}
		n := min(rec.NumRows()-off, ParquetRowGroupRows-p.rows)
		part := rec
		if off > 0 || n < rec.NumRows() {
			part = rec.NewSlice(off, off+n)
		}
		err := p.encode(part)
		if part != rec {
			part.Release()
		}
		if err != nil {
			return err
		}
		p.rows += n
		off += n
		if p.rows == ParquetRowGroupRows {
			if err := p.rgw.Close(); err != nil {
				return err
			}
			p.rgw = nil
		}
	}
	return nil
}

// encode writes rec's columns into the current row group, in parallel.
func (p *parquetSink) encode(rec arrow.RecordBatch) error {
	ncols := int(rec.NumCols())
	errs := make([]error, ncols)
	var wg sync.WaitGroup
	for w := range p.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := w; c < ncols; c += p.workers {
				cw, err := p.rgw.Column(c)
				if err == nil {
					p.scratch[w], err = writeParquetColumn(cw, rec.Column(c), p.scratch[w])
				}
				errs[c] = err
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// writeParquetColumn writes one Arrow column's values to a column chunk writer of the
// matching physical type.
func writeParquetColumn(cw file.ColumnChunkWriter, a arrow.Array, scratch []parquet.ByteArray) ([]parquet.ByteArray, error) {
	var err error
	switch a := a.(type) {
	case *array.Int32:
		_, err = cw.(*file.Int32ColumnChunkWriter).WriteBatch(a.Int32Values(), nil, nil)
	case *array.Date32:
		v := a.Date32Values()
		_, err = cw.(*file.Int32ColumnChunkWriter).WriteBatch(unsafe.Slice((*int32)(unsafe.SliceData(v)), len(v)), nil, nil)
	case *array.Int64:
		_, err = cw.(*file.Int64ColumnChunkWriter).WriteBatch(a.Int64Values(), nil, nil)
	case *array.Decimal64:
		v := a.Values()
		_, err = cw.(*file.Int64ColumnChunkWriter).WriteBatch(unsafe.Slice((*int64)(unsafe.SliceData(v)), len(v)), nil, nil)
	case *array.String:
		scratch = scratch[:0]
		for i := 0; i < a.Len(); i++ {
			s := a.Value(i) // aliases the array's data; the writer copies what it keeps
			scratch = append(scratch, unsafe.Slice(unsafe.StringData(s), len(s)))
		}
		_, err = cw.(*file.ByteArrayColumnChunkWriter).WriteBatch(scratch, nil, nil)
	default:
		err = fmt.Errorf("parquet: no writer for %s", a.DataType())
	}
	return scratch, err
}

func (p *parquetSink) close() error {
	if p.rgw != nil {
		if err := p.rgw.Close(); err != nil {
			return err
		}
		p.rgw = nil
	}
	if err := p.w.Close(); err != nil {
		return err
	}
	return p.buf.Flush()
}
