package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/csv"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/colinkdb/colink/dbt3"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/link"
)

// ImportSpec is what "dbt3 import" reads: a user's Parquet or CSV files, all rows of one new
// table. The table is created on every primproc (each commits its share atomically, as a
// load does), its rows cut into chunks dealt round robin across them.
type ImportSpec struct {
	Table string
	Files []string // all .parquet, or all .csv
	// Columns declares the table's columns, "name type [not null], …", in the types a
	// table stores (int, bigint, decimal(p,s) with p <= 18, double, date, char(n),
	// varchar(n), text, boolean). Required for CSV; for Parquet the file's schema gives
	// them by default.
	Columns string
	Header  bool // CSV: each file's first line names the columns and is skipped
	Comma   rune // CSV: the field separator (0: ',')
	Replace bool // replace a table of that name; without it an existing table is an error
}

// Import imports spec's files into a new table through the primprocs of cfg (its SF, From
// and Tables are not used), with a progress bar on a terminal.
func Import(ctx context.Context, cfg Config, spec ImportSpec, out dbt3.Output) error {
	if spec.Table == "" {
		return dbt3.Usagef("--table is required")
	}
	if len(spec.Files) == 0 {
		return dbt3.Usagef("name the Parquet or CSV files to import")
	}
	kind := ""
	for _, f := range spec.Files {
		k := strings.ToLower(filepath.Ext(f))
		if k != ".parquet" && k != ".csv" {
			return dbt3.Usagef("%s: want a .parquet or .csv file", f)
		}
		if kind != "" && k != kind {
			return dbt3.Usagef("%s: the files must be all Parquet or all CSV", f)
		}
		kind = k
		if st, err := os.Stat(f); err != nil || st.IsDir() {
			return dbt3.Usagef("%s: not a readable file", f)
		}
	}
	var schema *arrow.Schema
	if spec.Columns != "" {
		cols, err := parseColumns(spec.Columns)
		if err != nil {
			return dbt3.Usagef("--columns: %v", err)
		}
		if schema, err = link.SchemaFromColumns(cols); err != nil {
			return dbt3.Usagef("--columns: %v", err)
		}
	}
	s, err := connect(ctx, cfg, "dbt3 import", out)
	if err != nil {
		return err
	}
	defer s.close()
	var tl link.TableLoad
	if kind == ".parquet" {
		tl, err = s.plan.parquetImport(spec, schema)
	} else {
		if schema == nil {
			return dbt3.Usagef("--columns is required for CSV files: declare the table's columns, e.g. --columns 'id int not null, name varchar(20)'")
		}
		tl, err = s.plan.csvImport(spec, schema)
	}
	if err != nil {
		return err
	}
	tl.Table, tl.Mode = spec.Table, link.ModeCreate
	if spec.Replace {
		tl.Mode = link.ModeReplace
	}
	return s.run(ctx, []link.TableLoad{tl}, cfg, "dbt3 import", out)
}

// parseColumns reads "name type [not null], …" (commas inside a type's parentheses do not
// separate columns).
func parseColumns(s string) ([]link.ColumnDef, error) {
	var parts []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	parts = append(parts, s[start:])
	var out []link.ColumnDef
	for _, p := range parts {
		f := strings.Fields(p)
		if len(f) < 2 {
			return nil, fmt.Errorf("%q: want a column's name and type", strings.TrimSpace(p))
		}
		c := link.ColumnDef{Name: f[0], SQLType: strings.Join(f[1:], ""), Nullable: true}
		if low := strings.ToLower(strings.Join(f[1:], " ")); strings.HasSuffix(low, " not null") {
			c.SQLType, c.Nullable = strings.Join(f[1:len(f)-2], ""), false
		}
		out = append(out, c)
	}
	return out, nil
}

// sqlTypeOfArrow is the stored SQL type for a Parquet file's column, or an error naming it.
func sqlTypeOfArrow(f arrow.Field) (string, error) {
	switch t := f.Type.(type) {
	case *arrow.Int8Type, *arrow.Int16Type, *arrow.Int32Type, *arrow.Uint8Type, *arrow.Uint16Type:
		return "int", nil
	case *arrow.Int64Type, *arrow.Uint32Type:
		return "bigint", nil
	case *arrow.Float32Type, *arrow.Float64Type:
		return "double", nil
	case *arrow.Decimal128Type:
		if t.Precision > vec.MaxDecimal64Precision {
			return "", fmt.Errorf("column %s is DECIMAL(%d,%d): stored decimals have at most %d digits", f.Name, t.Precision, t.Scale, vec.MaxDecimal64Precision)
		}
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale), nil
	case *arrow.Decimal64Type:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale), nil
	case *arrow.Date32Type:
		return "date", nil
	case *arrow.TimestampType:
		// Read as the wall-clock time it holds (a zone's instant in UTC), its unit's digits.
		switch t.Unit {
		case arrow.Second:
			return "datetime", nil
		case arrow.Millisecond:
			return "datetime(3)", nil
		}
		return "datetime(6)", nil
	case *arrow.StringType, *arrow.LargeStringType:
		return "text", nil
	case *arrow.BooleanType:
		return "boolean", nil
	}
	return "", fmt.Errorf("column %s is %s, which colink does not store (int, bigint, decimal, double, date, timestamp, string, boolean)", f.Name, f.Type)
}

// parquetImport plans the import of Parquet files: one chunk per about chunkRows rows of
// whole row groups, each converted to schema (nil: the first file's, in stored types).
func (p loadPlan) parquetImport(spec ImportSpec, schema *arrow.Schema) (link.TableLoad, error) {
	if schema == nil {
		pf, err := file.OpenParquetFile(spec.Files[0], false)
		if err != nil {
			return link.TableLoad{}, fmt.Errorf("%s: %w", spec.Files[0], err)
		}
		fsc, err := pqarrow.FromParquet(pf.MetaData().Schema, nil, pf.MetaData().KeyValueMetadata())
		pf.Close()
		if err != nil {
			return link.TableLoad{}, fmt.Errorf("%s: %w", spec.Files[0], err)
		}
		var cols []link.ColumnDef
		for _, f := range fsc.Fields() {
			t, err := sqlTypeOfArrow(f)
			if err != nil {
				return link.TableLoad{}, fmt.Errorf("%s: %w (declare the columns with --columns to convert it)", spec.Files[0], err)
			}
			cols = append(cols, link.ColumnDef{Name: f.Name, SQLType: t, Nullable: f.Nullable})
		}
		if schema, err = link.SchemaFromColumns(cols); err != nil {
			return link.TableLoad{}, fmt.Errorf("%s: %w", spec.Files[0], err)
		}
	}
	chunks, rows, err := p.parquetChunks(spec.Files)
	if err != nil {
		return link.TableLoad{}, err
	}
	return link.TableLoad{Schema: schema, Chunks: len(chunks), EstimatedRows: rows,
		Open: func(k int) (link.ChunkReader, error) {
			r, err := openParquetChunk(nil, chunks[k])
			if err != nil {
				return nil, err
			}
			return &castingReader{in: r, schema: schema, what: chunks[k].path}, nil
		}}, nil
}

// csvImport plans the import of CSV files: chunks of about chunkRows lines (a quoted field
// may hold the separator, not a line break), an empty field NULL.
func (p loadPlan) csvImport(spec ImportSpec, schema *arrow.Schema) (link.TableLoad, error) {
	type csvChunk struct {
		tblChunk
		header bool // the chunk starts with the file's header line
	}
	var chunks []csvChunk
	var rows int64
	for _, path := range spec.Files {
		cs, lines, err := splitLines(path, p.chunkRows)
		if err != nil {
			return link.TableLoad{}, err
		}
		for i, c := range cs {
			chunks = append(chunks, csvChunk{tblChunk: c, header: spec.Header && i == 0})
		}
		rows += lines
		if spec.Header && lines > 0 {
			rows--
		}
	}
	// The CSV reader parses decimals as decimal128; castingReader narrows them.
	var readFields []arrow.Field
	for _, f := range schema.Fields() {
		if d, ok := f.Type.(*arrow.Decimal64Type); ok {
			f.Type = &arrow.Decimal128Type{Precision: d.Precision, Scale: d.Scale}
		}
		readFields = append(readFields, f)
	}
	readSchema := arrow.NewSchema(readFields, nil)
	comma := spec.Comma
	if comma == 0 {
		comma = ','
	}
	return link.TableLoad{Schema: schema, Chunks: len(chunks), EstimatedRows: rows,
		Open: func(k int) (link.ChunkReader, error) {
			c := chunks[k]
			f, err := os.Open(c.path)
			if err != nil {
				return nil, err
			}
			r := csv.NewReader(io.NewSectionReader(f, c.start, c.end-c.start), readSchema,
				csv.WithComma(comma), csv.WithHeader(c.header), csv.WithNullReader(true, ""), csv.WithChunk(8192))
			what := fmt.Sprintf("%s (from line %d)", c.path, c.firstLine)
			return &castingReader{in: &csvChunkReader{r: r, f: f, columns: schema.NumFields()}, schema: schema, what: what}, nil
		}}, nil
}

// csvChunkReader reads one chunk's records.
type csvChunkReader struct {
	r       *csv.Reader
	f       *os.File
	columns int
}

func (c *csvChunkReader) Next() (rec arrow.RecordBatch, err error) {
	// arrow-go's reader (v18.8) converts a row's fields before it reports a row with more
	// fields than the schema, and indexes past its converters: a panic, here an error.
	defer func() {
		if p := recover(); p != nil {
			rec, err = nil, fmt.Errorf("a row has more fields than the %d columns", c.columns)
		}
	}()
	if c.r.Next() {
		rec := c.r.RecordBatch()
		rec.Retain()
		return rec, nil
	}
	if err := c.r.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return nil, nil
}

func (c *csvChunkReader) Close() {
	c.r.Release()
	c.f.Close()
}

// castingReader converts its input's records to schema: columns of another width or kind
// (int16, float32, large strings, decimal128) are cast to the stored type.
type castingReader struct {
	in     link.ChunkReader
	schema *arrow.Schema
	what   string
}

func (c *castingReader) Close() { c.in.Close() }

func (c *castingReader) Next() (arrow.RecordBatch, error) {
	rec, err := c.in.Next()
	if rec == nil || err != nil {
		if err != nil {
			err = fmt.Errorf("%s: %w", c.what, err)
		}
		return nil, err
	}
	defer rec.Release()
	out, err := conformColumns(c.schema, rec, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.what, err)
	}
	return out, nil
}
