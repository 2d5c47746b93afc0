package load

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/textparse"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/tpch"
)

// tblChunk is a range of lines of a .tbl file.
type tblChunk struct {
	path       string
	start, end int64 // byte offsets: [start, end)
	firstLine  int64 // 1-based number of the line at start
}

// tblTable cuts a table's .tbl files into chunks of chunkRows lines (by finding the byte
// offset of every chunkRows-th line), so chunks are parsed in parallel and dealt.
func (p loadPlan) tblTable(name string, paths []string) (link.TableLoad, error) {
	def, _ := tpch.LookupTable(name)
	var chunks []tblChunk
	var lines int64
	for _, path := range paths {
		cs, n, err := splitLines(path, p.chunkRows)
		if err != nil {
			return link.TableLoad{}, err
		}
		chunks = append(chunks, cs...)
		lines += n
	}
	// A table big enough for every primproc but in fewer chunks than primprocs: cut finer.
	if len(chunks) < p.primprocs && lines >= int64(p.primprocs)*p.minShare {
		chunks = chunks[:0]
		per := (lines + int64(p.primprocs) - 1) / int64(p.primprocs)
		for _, path := range paths {
			cs, _, err := splitLines(path, per)
			if err != nil {
				return link.TableLoad{}, err
			}
			chunks = append(chunks, cs...)
		}
	}
	schema := def.ArrowSchema()
	return link.TableLoad{Table: name, Schema: schema, Chunks: len(chunks), EstimatedRows: lines,
		Open: func(k int) (link.ChunkReader, error) {
			return openTblChunk(def, schema, chunks[k])
		}}, nil
}

// splitLines returns path's lines as chunks of at most per lines, and the line count.
func splitLines(path string, per int64) ([]tblChunk, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var chunks []tblChunk
	cur := tblChunk{path: path, firstLine: 1}
	var off, lines, inChunk int64
	lastNL := true
	buf := make([]byte, 1<<20)
	for {
		n, err := f.Read(buf)
		b := buf[:n]
		if n > 0 {
			lastNL = b[n-1] == '\n'
		}
		for len(b) > 0 {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				off += int64(len(b))
				break
			}
			off += int64(i + 1)
			b = b[i+1:]
			lines++
			if inChunk++; inChunk == per {
				cur.end = off
				chunks = append(chunks, cur)
				cur = tblChunk{path: path, start: off, firstLine: lines + 1}
				inChunk = 0
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", path, err)
		}
	}
	if off > cur.start { // the last chunk, possibly ending in a line without a newline
		cur.end = off
		chunks = append(chunks, cur)
		if !lastNL {
			lines++
		}
	}
	return chunks, lines, nil
}

// tblReader parses one chunk of a .tbl file into record batches of the table's schema.
type tblReader struct {
	def    *tpch.Table
	schema *arrow.Schema
	chunk  tblChunk
	f      *os.File
	r      *bufio.Reader
	line   int64 // number of the next line
	left   int64 // bytes of the chunk not yet read
	b      *array.RecordBuilder
	fields [][]byte
}

func openTblChunk(def *tpch.Table, schema *arrow.Schema, c tblChunk) (*tblReader, error) {
	f, err := os.Open(c.path)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(c.start, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", c.path, err)
	}
	return &tblReader{def: def, schema: schema, chunk: c, f: f, r: bufio.NewReaderSize(io.LimitReader(f, c.end-c.start), 1<<20),
		line: c.firstLine, left: c.end - c.start, b: array.NewRecordBuilder(memory.DefaultAllocator, schema)}, nil
}

func (t *tblReader) Close() {
	t.f.Close()
	t.b.Release()
}

// Next parses up to tpch.DefaultBatchRows lines.
func (t *tblReader) Next() (arrow.RecordBatch, error) {
	rows := 0
	for rows < tpch.DefaultBatchRows {
		line, err := t.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return nil, fmt.Errorf("%s line %d: longer than %d bytes", t.chunk.path, t.line, t.r.Size())
		}
		if len(line) == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s line %d: %w", t.chunk.path, t.line, err)
		}
		if err := t.parseLine(line); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", t.chunk.path, t.line, err)
		}
		t.line++
		rows++
		if err == io.EOF {
			break
		}
	}
	if rows == 0 {
		return nil, nil
	}
	return t.b.NewRecordBatch(), nil
}

// parseLine appends one dbgen line: the columns separated by '|', with a trailing '|'.
func (t *tblReader) parseLine(line []byte) error {
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	line = bytes.TrimSuffix(line, []byte("|"))
	t.fields = t.fields[:0]
	for {
		i := bytes.IndexByte(line, '|')
		if i < 0 {
			t.fields = append(t.fields, line)
			break
		}
		t.fields = append(t.fields, line[:i])
		line = line[i+1:]
	}
	if len(t.fields) != len(t.def.Columns) {
		return fmt.Errorf("%d fields, table %s has %d columns", len(t.fields), t.def.Name, len(t.def.Columns))
	}
	// Parse every field before appending any, so a bad line leaves the builders aligned.
	var vals [16]int64
	for i, c := range t.def.Columns {
		s := t.fields[i]
		var err error
		switch c.Type.Kind {
		case tpch.KindInt32, tpch.KindInt64:
			vals[i], err = textparse.Int(s, textparse.NoSpace)
			if err == nil && c.Type.Kind == tpch.KindInt32 && int64(int32(vals[i])) != vals[i] {
				err = fmt.Errorf("out of range")
			}
		case tpch.KindDecimal:
			var d vec.Int128
			d, err = vec.ParseDecimalScale(s, int32(c.Type.Scale))
			if err == nil && (!d.IsInt64() || !vec.FitsPrecision64(int64(d.Lo), int32(c.Type.Precision))) {
				err = fmt.Errorf("does not fit %s", c.Type.SQL())
			}
			vals[i] = int64(d.Lo)
		case tpch.KindDate:
			var days int32
			days, err = vec.ParseDate(s)
			vals[i] = int64(days)
		case tpch.KindChar, tpch.KindVarchar:
			if n := len([]rune(string(s))); n > c.Type.Length {
				err = fmt.Errorf("%d characters, longer than %s", n, c.Type.SQL())
			}
		}
		if err != nil {
			return fmt.Errorf("column %s (%s): %q: %v", c.Name, c.Type.SQL(), s, err)
		}
	}
	for i, c := range t.def.Columns {
		switch fb := t.b.Field(i).(type) {
		case *array.Int32Builder:
			fb.Append(int32(vals[i]))
		case *array.Int64Builder:
			fb.Append(vals[i])
		case *array.Decimal64Builder:
			fb.Append(decimal.Decimal64(vals[i]))
		case *array.Date32Builder:
			fb.Append(arrow.Date32(vals[i]))
		case *array.StringBuilder:
			fb.BinaryBuilder.Append(t.fields[i])
		default:
			return fmt.Errorf("column %s: no parser for %s", c.Name, c.Type.SQL())
		}
	}
	return nil
}
