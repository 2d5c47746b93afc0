package load

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/tpch"
)

// parquetChunk is a run of row groups of a Parquet file.
type parquetChunk struct {
	path   string
	groups []int
}

// parquetTable cuts a table's Parquet files into chunks of whole row groups holding about
// chunkRows rows.
func (p loadPlan) parquetTable(name string, paths []string) (link.TableLoad, error) {
	def, _ := tpch.LookupTable(name)
	schema := def.ArrowSchema()
	chunks, rows, err := p.parquetChunks(paths)
	if err != nil {
		return link.TableLoad{}, err
	}
	return link.TableLoad{Table: name, Schema: schema, Chunks: len(chunks), EstimatedRows: rows,
		Open: func(k int) (link.ChunkReader, error) {
			return openParquetChunk(schema, chunks[k])
		}}, nil
}

// parquetChunks cuts Parquet files into chunks of whole row groups of about chunkRows rows
// each, and counts their rows.
func (p loadPlan) parquetChunks(paths []string) ([]parquetChunk, int64, error) {
	var chunks []parquetChunk
	var rows int64
	for _, path := range paths {
		pf, err := file.OpenParquetFile(path, false)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", path, err)
		}
		cur := parquetChunk{path: path}
		var inChunk int64
		for g := 0; g < pf.NumRowGroups(); g++ {
			n := pf.MetaData().RowGroup(g).NumRows()
			cur.groups = append(cur.groups, g)
			inChunk += n
			rows += n
			if inChunk >= p.chunkRows {
				chunks = append(chunks, cur)
				cur, inChunk = parquetChunk{path: path}, 0
			}
		}
		if len(cur.groups) > 0 {
			chunks = append(chunks, cur)
		}
		pf.Close()
	}
	return chunks, rows, nil
}

// parquetReader reads a chunk's row groups and converts them to the table's schema.
type parquetReader struct {
	schema *arrow.Schema
	path   string
	pf     *file.Reader
	rr     pqarrow.RecordReader
}

func openParquetChunk(schema *arrow.Schema, c parquetChunk) (*parquetReader, error) {
	pf, err := file.OpenParquetFile(c.path, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.path, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: tpch.DefaultBatchRows}, memory.DefaultAllocator)
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("%s: %w", c.path, err)
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, c.groups)
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("%s: %w", c.path, err)
	}
	return &parquetReader{schema: schema, path: c.path, pf: pf, rr: rr}, nil
}

func (p *parquetReader) Close() {
	p.rr.Release()
	p.pf.Close()
}

func (p *parquetReader) Next() (arrow.RecordBatch, error) {
	if !p.rr.Next() {
		if err := p.rr.Err(); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: %w", p.path, err)
		}
		return nil, nil
	}
	if p.schema == nil { // the file's own types: the caller converts them
		rec := p.rr.RecordBatch()
		rec.Retain()
		return rec, nil
	}
	rec, err := conformRecord(p.schema, p.rr.RecordBatch())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.path, err)
	}
	return rec, nil
}

// conformRecord returns rec's columns in schema's types: equal types pass through,
// decimal128 columns (pqarrow's reading of Parquet decimals) become decimal64. The columns'
// names must be schema's.
func conformRecord(schema *arrow.Schema, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if int(rec.NumCols()) != schema.NumFields() {
		return nil, fmt.Errorf("%d columns, table has %d", rec.NumCols(), schema.NumFields())
	}
	for i, f := range schema.Fields() {
		if got := rec.Schema().Field(i); got.Name != f.Name {
			return nil, fmt.Errorf("column %d is %s, want %s", i+1, got.Name, f.Name)
		}
	}
	return conformColumns(schema, rec, false)
}

// conformColumns returns rec's columns, by position, in schema's types: equal types pass
// through, decimal128 becomes decimal64, and, with cast, any other type is cast by Arrow's
// safe casts (a user's file's int16 or float32); without, it is an error.
func conformColumns(schema *arrow.Schema, rec arrow.RecordBatch, cast bool) (arrow.RecordBatch, error) {
	if int(rec.NumCols()) != schema.NumFields() {
		return nil, fmt.Errorf("%d columns, the table has %d", rec.NumCols(), schema.NumFields())
	}
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, f := range schema.Fields() {
		a := rec.Column(i)
		switch {
		case arrow.TypeEqual(a.DataType(), f.Type):
			a.Retain()
			cols[i] = a
		case a.DataType().ID() == arrow.DECIMAL128 && f.Type.ID() == arrow.DECIMAL64:
			d, err := decimal128To64(a.(*array.Decimal128), f.Type.(*arrow.Decimal64Type))
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", f.Name, err)
			}
			cols[i] = d
		case cast:
			out, err := compute.CastArray(context.Background(), a, compute.SafeCastOptions(f.Type))
			if err != nil {
				return nil, fmt.Errorf("column %s: %s to %s: %w", f.Name, a.DataType(), vec.SQLTypeOf(f), err)
			}
			cols[i] = out
		default:
			return nil, fmt.Errorf("column %s is %s, want %s", f.Name, a.DataType(), f.Type)
		}
	}
	return array.NewRecordBatch(schema, cols, rec.NumRows()), nil
}

func decimal128To64(a *array.Decimal128, t *arrow.Decimal64Type) (arrow.Array, error) {
	in := a.DataType().(*arrow.Decimal128Type)
	if in.Scale != t.Scale {
		return nil, fmt.Errorf("decimal scale %d, want %d", in.Scale, t.Scale)
	}
	b := array.NewDecimal64Builder(memory.DefaultAllocator, t)
	defer b.Release()
	b.Reserve(a.Len())
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) {
			b.AppendNull()
			continue
		}
		v := a.Value(i)
		if fits := v.HighBits() == int64(v.LowBits())>>63; !fits || !vec.FitsPrecision64(int64(v.LowBits()), t.Precision) {
			return nil, fmt.Errorf("row %d: %s does not fit decimal(%d,%d)", i, v.ToString(in.Scale), t.Precision, t.Scale)
		}
		b.UnsafeAppend(decimal.Decimal64(int64(v.LowBits())))
	}
	return b.NewArray(), nil
}
