package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/textparse"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/tpch"
)

// clusterKeys are the columns each table's segments are sorted by when --cluster is on:
// the dates TPC-H's predicates range over. dbgen writes rows in key order with random
// dates, which leaves every row group spanning all seven years; sorted, a row group spans
// weeks and zone maps skip most of them for a date range.
var clusterKeys = map[string][]string{
	"lineitem": {"l_shipdate"},
	"orders":   {"o_orderdate"},
}

// runLoad implements "dbt3 load": TPC-H tables, generated in process or read from .tbl or
// Parquet files, streamed over the link into the primprocs.
func runLoad(ctx context.Context, e *env, args []string) error {
	fs := pflag.NewFlagSet("load", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: dbt3 load (--sf F | --from DIR) --primproc EP [--primproc EP ...] [--tables t1,t2] [--transport tcp|unix|auto]")
		fmt.Fprintln(e.stderr, `
Loads TPC-H tables into primprocs over the link, replacing each table atomically on every
primproc. With --sf the rows are generated in process (dbgen-identical, every core); with
--from they are read from DIR's .tbl files (dbgen's text: name.tbl or name.tbl.1, .2, ...)
or Parquet files (name.parquet or name.K.parquet, as "dbt3 gen --format parquet" writes).

Every table is cut into chunks of about --chunk-rows rows (default: the primprocs' segment
size), dealt round robin across the primprocs, the first chunk of the t-th table to
primproc t mod N: each primproc holds a share of every table and a table is the union of
the shares. That makes every join a primproc can do correct as long as its build side is
complete (exemgr gathers it from all primprocs and broadcasts it) and the probe side is
the primproc's share. lineitem is clustered by l_shipdate and orders by o_orderdate within
each segment (--cluster=false keeps dbgen's order).`)
		fs.PrintDefaults()
	}
	sf := fs.String("sf", "", "scale factor to generate (as dbt3 gen's --sf)")
	from := fs.String("from", "", "directory of .tbl or .parquet files to load instead of generating")
	var primprocs []string
	fs.StringArrayVar(&primprocs, "primproc", nil, "primproc endpoint URL, repeatable (tcp://host:port, unix:///path)")
	tables := fs.StringSlice("tables", nil, "tables to load (default all eight; with --from, all found)")
	transport := fs.String("transport", "auto", "link transport: tcp, unix or auto")
	tokenFile := fs.String("auth-token-file", "", "shared secret for TCP primprocs that require one")
	chunkRows := fs.Int64("chunk-rows", 0, "rows per dealt chunk (default: the smallest segment size among the primprocs)")
	workers := fs.Int("workers", 0, "chunks generated or parsed at once (default: GOMAXPROCS)")
	cluster := fs.Bool("cluster", true, "sort lineitem by l_shipdate and orders by o_orderdate within each segment")
	heartbeat := fs.Duration("heartbeat-timeout", ipc.DefaultHeartbeatTimeout, "give up on a primproc silent for this long")
	stats := fs.Bool("stats", false, "print wall and CPU time of dbt3 and of the primprocs at the end")
	if err := parseFlags(fs, e, args); err != nil {
		return err
	}
	if (*sf == "") == (*from == "") {
		return usagef("give exactly one of --sf and --from")
	}
	if len(primprocs) == 0 {
		return usagef("--primproc is required")
	}
	tr := ipc.Transport(*transport)
	switch tr {
	case ipc.TransportTCP, ipc.TransportUnix, ipc.TransportAuto:
	default:
		return usagef("--transport %q: want tcp, unix or auto", *transport)
	}
	if *chunkRows < 0 {
		return usagef("--chunk-rows %d: must be positive", *chunkRows)
	}
	names, err := tableNames(*tables)
	if err != nil {
		return err
	}
	var scale tpch.Scale
	if *sf != "" {
		if scale, err = tpch.ParseScale(*sf); err != nil {
			return usagef("--sf: %v", err)
		}
	} else if st, err := os.Stat(*from); err != nil || !st.IsDir() {
		return usagef("--from %s: not a directory", *from)
	}
	cfg := ipc.ClientConfig{Transport: tr, Name: "dbt3 load",
		Logger: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Limits: ipc.Limits{HeartbeatTimeout: *heartbeat}}
	if *tokenFile != "" {
		if cfg.AuthToken, err = ipc.ReadTokenFile(*tokenFile); err != nil {
			return usagef("--auth-token-file: %v", err)
		}
	}
	// Generated rows draw their comments from dbgen's text pool, 300 MiB of sentences built
	// once per process: about 1 s of CPU whatever the scale factor, the whole of a small
	// load's fixed cost. It is built before any upload opens, so that no table's load time
	// (which the primprocs measure from the upload's start) includes it.
	var poolTime time.Duration
	if *sf != "" {
		start := time.Now()
		g, err := tpch.NewGenerator(scale, "region", 1, 1)
		if err != nil {
			return err
		}
		g.Close()
		poolTime = time.Since(start)
	}
	var cl link.Cluster
	defer func() {
		for _, c := range cl {
			c.Close()
		}
	}()
	for _, ep := range primprocs {
		c, err := link.Dial(ep, cfg)
		if err != nil {
			return usagef("--primproc %s: %v", ep, err)
		}
		cl = append(cl, c)
	}

	// The primprocs' layout sets the default chunk size.
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var layout struct{ segRows, groupRows int64 }
	for _, c := range cl {
		cat, err := c.Catalog(cctx)
		if err != nil {
			return err
		}
		if layout.segRows == 0 || int64(cat.Layout.SegmentRows) < layout.segRows {
			layout.segRows, layout.groupRows = int64(cat.Layout.SegmentRows), int64(cat.Layout.RowGroupRows)
		}
	}
	if *chunkRows == 0 {
		*chunkRows = layout.segRows
	}
	plan := loadPlan{chunkRows: *chunkRows, minShare: layout.groupRows, primprocs: len(cl)}

	var loads []link.TableLoad
	if *sf != "" {
		if names == nil {
			names = tpch.TableNames()
		}
		for _, name := range names {
			loads = append(loads, plan.generated(scale, name))
		}
	} else {
		if loads, err = plan.files(*from, names); err != nil {
			return err
		}
	}
	if *cluster {
		for i := range loads {
			loads[i].ClusterBy = clusterKeys[loads[i].Table]
		}
	}

	var total int64
	for _, l := range loads {
		total += l.EstimatedRows
	}
	opts := link.LoadOptions{Workers: *workers}
	bar := e.progressBar(total, fmt.Sprintf("loading into %d primproc(s)", len(cl)), "rows")
	if bar != nil {
		opts.Progress = func(n int64) { _ = bar.Add64(n) }
	}
	pm0, _ := cl.Stats(cctx)
	start := time.Now()
	results, err := cl.Load(ctx, loads, opts)
	wall := time.Since(start)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	for _, r := range results {
		fmt.Fprintf(e.stdout, "%-9s %10d rows %4d segments  %.2fs\n", r.Table, r.Rows, r.Segments(), r.Elapsed().Seconds())
	}
	if *stats || e.stderrTerminal {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		pm1, _ := cl.Stats(sctx)
		fmt.Fprintf(e.stderr, "dbt3 load: %s\n", usageReport(selfUsage(), wall))
		if poolTime > 0 {
			fmt.Fprintf(e.stderr, "dbt3 load: the generator's text pool took %.2fs before that\n", poolTime.Seconds())
		}
		for i := range pm1 {
			if i >= len(pm0) || pm0[i] == nil || pm1[i] == nil {
				continue
			}
			d := pm1[i].Usage().Sub(pm0[i].Usage())
			fmt.Fprintf(e.stderr, "primproc %s: user %.2fs sys %.2fs ctxsw %d voluntary %d involuntary rss %d MiB\n",
				cl[i].Peer(), d.User.Seconds(), d.Sys.Seconds(), d.Voluntary, d.Involuntary, pm1[i].RSSBytes>>20)
		}
	}
	return nil
}

// tableNames validates --tables.
func tableNames(list []string) ([]string, error) {
	if list == nil {
		return nil, nil
	}
	var out []string
	for _, t := range list {
		t = strings.ToLower(strings.TrimSpace(t))
		if _, ok := tpch.LookupTable(t); !ok {
			return nil, usagef("--tables: unknown table %q (want some of %s)", t, strings.Join(tpch.TableNames(), ","))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// loadPlan decides how tables are cut into dealt chunks.
type loadPlan struct {
	chunkRows int64 // target rows per chunk
	minShare  int64 // a table of at least primprocs·minShare rows is spread over all primprocs
	primprocs int
}

// chunks is the number of chunks for a table of rows rows.
func (p loadPlan) chunks(rows int64) int {
	n := (rows + p.chunkRows - 1) / p.chunkRows
	if n < int64(p.primprocs) && rows >= int64(p.primprocs)*p.minShare {
		n = int64(p.primprocs)
	}
	return int(max(n, 1))
}

// generated loads a table from the generator: chunk k is dbgen's chunk k+1 of n.
func (p loadPlan) generated(sc tpch.Scale, name string) link.TableLoad {
	def, _ := tpch.LookupTable(name)
	rows, _ := sc.EstimatedRows(name)
	units, _ := sc.Units(name)
	n := min(p.chunks(rows), int(max(units, 1)))
	if name == "nation" || name == "region" {
		n = 1 // never divided
	}
	return link.TableLoad{Table: name, Schema: def.ArrowSchema(), Chunks: n, EstimatedRows: rows,
		Open: func(k int) (link.ChunkReader, error) {
			return tpch.NewGenerator(sc, name, k+1, n)
		}}
}

var tableFile = regexp.MustCompile(`^([a-z]+)(?:\.tbl(?:\.(\d+))?|(?:\.(\d+))?\.parquet)$`)

// files loads the tables found in dir (only those named, if any).
func (p loadPlan) files(dir string, names []string) ([]link.TableLoad, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, usagef("--from: %v", err)
	}
	type found struct {
		path string
		part int
	}
	byTable := map[string][]found{}
	for _, e := range ents {
		m := tableFile.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		if _, ok := tpch.LookupTable(m[1]); !ok {
			continue
		}
		part, _ := strconv.Atoi(m[2] + m[3])
		byTable[m[1]] = append(byTable[m[1]], found{filepath.Join(dir, e.Name()), part})
	}
	if names == nil {
		for _, t := range tpch.TableNames() {
			if byTable[t] != nil {
				names = append(names, t)
			}
		}
		if names == nil {
			return nil, usagef("--from %s: no TPC-H table files (name.tbl[.K] or name[.K].parquet)", dir)
		}
	}
	var out []link.TableLoad
	for _, name := range names {
		fs := byTable[name]
		if len(fs) == 0 {
			return nil, usagef("--from %s: no file for table %s", dir, name)
		}
		sort.Slice(fs, func(i, j int) bool { return fs[i].part < fs[j].part })
		parquet := strings.HasSuffix(fs[0].path, ".parquet")
		var paths []string
		for _, f := range fs {
			if strings.HasSuffix(f.path, ".parquet") != parquet {
				return nil, usagef("--from %s: table %s has both .tbl and .parquet files", dir, name)
			}
			paths = append(paths, f.path)
		}
		var l link.TableLoad
		if parquet {
			l, err = p.parquetTable(name, paths)
		} else {
			l, err = p.tblTable(name, paths)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

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
	var chunks []parquetChunk
	var rows int64
	for _, path := range paths {
		pf, err := file.OpenParquetFile(path, false)
		if err != nil {
			return link.TableLoad{}, fmt.Errorf("%s: %w", path, err)
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
	return link.TableLoad{Table: name, Schema: schema, Chunks: len(chunks), EstimatedRows: rows,
		Open: func(k int) (link.ChunkReader, error) {
			return openParquetChunk(schema, chunks[k])
		}}, nil
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
	rec, err := conformRecord(p.schema, p.rr.RecordBatch())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.path, err)
	}
	return rec, nil
}

// conformRecord returns rec's columns in schema's types: equal types pass through,
// decimal128 columns (pqarrow's reading of Parquet decimals) become decimal64.
func conformRecord(schema *arrow.Schema, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if int(rec.NumCols()) != schema.NumFields() {
		return nil, fmt.Errorf("%d columns, table has %d", rec.NumCols(), schema.NumFields())
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
		got := rec.Schema().Field(i)
		a := rec.Column(i)
		if got.Name != f.Name {
			return nil, fmt.Errorf("column %d is %s, want %s", i+1, got.Name, f.Name)
		}
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
