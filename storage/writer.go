package storage

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/colinkdb/colink/storage/ndv"
)

// ErrConflict is wrapped by commit errors caused by a concurrent change to the same table
// (it was replaced or dropped after this transaction started changing it).
var ErrConflict = errors.New("storage: conflicting concurrent change")

// ErrNotDurable is wrapped by the error of a commit (or prepare, or resolution of a prepared
// transaction) that took effect — the new catalog is in place and new snapshots see the
// change — but whose final directory fsync failed, so that a crash may still undo it.
var ErrNotDurable = errors.New("storage: the change is applied but not known to be durable (a crash may undo it)")

// Txn groups changes that become visible together, atomically and durably, at Commit:
// replacing or dropping tables, appending segments, deleting rows. Files it writes stay
// invisible until then; Abort (or a crash) discards them. A Txn pins the snapshot it began
// from until Commit or Abort, so every Txn must end in one of them. A Txn and its writers
// are used by one goroutine; separate Txns may run concurrently and commit one at a time.
type Txn struct {
	store   *Store
	base    *Snapshot // the version the transaction's table references were taken from
	ops     []txnOp
	writers []*TableWriter
	files   []string // absolute paths written, removed on abort
	done    bool

	deletes     map[uint64]*pendingDelete // by segment id
	deleteOrder []uint64
	deleted     int64 // rows newly marked by Delete
}

type opKind uint8

const (
	opReplace opKind = iota + 1
	opAppend
	opDrop
	opCompact
)

type txnOp struct {
	kind    opKind
	table   string
	baseID  uint64 // opAppend, opDrop: the incarnation the change applies to
	writer  *TableWriter
	schema  *arrow.Schema
	compact *compaction // opCompact: the segments the writer's rows replace
}

// Begin starts a transaction.
func (s *Store) Begin() *Txn {
	return &Txn{store: s, base: s.Snapshot()}
}

// Replace creates the table, or replaces all of its contents and schema, with the rows
// written to the returned writer.
func (tx *Txn) Replace(table string, sc *arrow.Schema) (*TableWriter, error) {
	if err := tx.usable(); err != nil {
		return nil, err
	}
	if !identifier.MatchString(table) {
		return nil, fmt.Errorf("storage: table name %q is not an identifier (letters, digits, _ and $, at most 64)", table)
	}
	kinds, err := validateSchema(sc)
	if err != nil {
		return nil, fmt.Errorf("storage: table %q: %w", table, err)
	}
	w, err := tx.newWriter(table, sc, kinds)
	if err != nil {
		return nil, err
	}
	tx.ops = append(tx.ops, txnOp{kind: opReplace, table: table, writer: w, schema: sc})
	return w, nil
}

// Append adds the rows written to the returned writer to an existing table, as new segments.
func (tx *Txn) Append(table string) (*TableWriter, error) {
	if err := tx.usable(); err != nil {
		return nil, err
	}
	t := tx.base.cat.table(table)
	if t == nil {
		return nil, fmt.Errorf("%w: %q", ErrNoTable, table)
	}
	w, err := tx.newWriter(table, t.schema, t.kinds)
	if err != nil {
		return nil, err
	}
	tx.ops = append(tx.ops, txnOp{kind: opAppend, table: table, baseID: t.ID, writer: w})
	return w, nil
}

// Drop removes the table.
func (tx *Txn) Drop(table string) error {
	if err := tx.usable(); err != nil {
		return err
	}
	t := tx.base.cat.table(table)
	if t == nil {
		return fmt.Errorf("%w: %q", ErrNoTable, table)
	}
	tx.ops = append(tx.ops, txnOp{kind: opDrop, table: table, baseID: t.ID})
	return nil
}

func (tx *Txn) usable() error {
	if tx.done {
		return errors.New("storage: transaction already committed or aborted")
	}
	return nil
}

// Commit finishes every writer, makes the files durable, and publishes a new catalog version
// holding all of the transaction's changes. On error nothing of the transaction is visible.
func (tx *Txn) Commit(ctx context.Context) error {
	if err := tx.usable(); err != nil {
		return err
	}
	if err := tx.finishWriters(ctx); err != nil {
		tx.Abort()
		return err
	}

	s := tx.store
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	cur := s.catalog()
	next, err := tx.apply(cur)
	if err == nil {
		err = tx.applyDeletes(next)
	}
	if err != nil {
		tx.Abort()
		return err
	}
	published, err := s.installCatalog(next)
	if !published {
		// The old catalog is in place and names none of the transaction's files.
		tx.Abort()
		return fmt.Errorf("storage: commit: %w", err)
	}
	// From here on the catalog names the files: they are never removed as the
	// transaction's, even if the commit is in doubt (err wraps ErrNotDurable).
	tx.finish()
	if err != nil {
		return fmt.Errorf("storage: commit: %w", err)
	}
	return nil
}

// finishWriters closes every writer and makes its segment files' directory entries durable.
func (tx *Txn) finishWriters(ctx context.Context) error {
	for _, w := range tx.writers {
		if err := w.Close(ctx); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	dirs := map[string]bool{}
	for _, w := range tx.writers {
		if len(w.segments) > 0 {
			dirs[w.dir] = true
		}
	}
	for d := range dirs {
		if err := tx.store.fault(stepSegmentDirSync); err != nil {
			return fmt.Errorf("fsync directory %s: %w", d, err)
		}
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// apply builds the next catalog version from cur and the transaction's operations.
func (tx *Txn) apply(cur *catalog) (*catalog, error) {
	next := cur.clone()
	next.Version = cur.Version + 1
	for _, op := range tx.ops {
		t := next.table(op.table)
		if op.kind == opReplace || op.kind == opDrop {
			if p := cur.preparedOn(op.table); p != nil {
				return nil, fmt.Errorf("%w: table %q has a prepared transaction (%s) waiting for its outcome", ErrConflict, op.table, p.ID)
			}
		}
		switch op.kind {
		case opReplace:
			nt := &tableMeta{Name: op.table, ID: next.NextTableID, Fields: schemaToJSON(op.schema),
				Segments: op.writer.segments, schema: op.schema, kinds: op.writer.kinds}
			next.NextTableID++
			next.setTable(op.table, nt)
		case opAppend:
			if t == nil || t.ID != op.baseID {
				return nil, fmt.Errorf("%w: table %q was replaced or dropped while rows were appended to it", ErrConflict, op.table)
			}
			nt := *t
			nt.Segments = append(append([]*segmentMeta(nil), t.Segments...), op.writer.segments...)
			next.setTable(op.table, &nt)
		case opDrop:
			if t == nil || t.ID != op.baseID {
				return nil, fmt.Errorf("%w: table %q was replaced or dropped concurrently", ErrConflict, op.table)
			}
			next.setTable(op.table, nil)
		case opCompact:
			nt, err := op.compact.apply(next, t, op.writer.segments)
			if err != nil {
				return nil, err
			}
			next.setTable(op.table, nt)
		}
	}
	next.NextSegmentID = max(next.NextSegmentID, tx.store.nextSegmentID.Load())
	return next, nil
}

// Abort discards the transaction and removes the files it wrote.
func (tx *Txn) Abort() {
	if tx.done {
		return
	}
	for _, w := range tx.writers {
		w.abort()
	}
	for _, f := range tx.files {
		os.Remove(f)
	}
	tx.finish()
}

func (tx *Txn) finish() {
	tx.done = true
	tx.base.Release()
}

// TableWriter streams Arrow records into new segment files of one table. Records may have
// any number of rows; they are cut into row groups of Options.RowGroupRows and segments of
// Options.SegmentRows. It holds at most about one row group of input (the records' slices are
// retained, not copied) plus that row group's encoded pages.
type TableWriter struct {
	tx     *Txn
	table  string
	dir    string // absolute directory of the table's segment files
	schema *arrow.Schema
	kinds  []colKind
	pqs    *schema.Schema
	props  *parquet.WriterProperties

	cur      *segmentWriter
	segments []*segmentMeta // finished segments
	rows     int64
	closed   bool
	err      error // sticky: a failed write poisons the writer
}

func (tx *Txn) newWriter(table string, sc *arrow.Schema, kinds []colKind) (*TableWriter, error) {
	s := tx.store
	group, err := parquetSchema(sc, kinds)
	if err != nil {
		return nil, fmt.Errorf("storage: table %q: %w", table, err)
	}
	cdc, _ := codec(s.opts.Compression)
	props := parquet.NewWriterProperties(
		parquet.WithCompression(cdc),
		parquet.WithStats(true),
		parquet.WithMaxRowGroupLength(int64(s.opts.RowGroupRows)),
		parquet.WithStoreDecimalAsInteger(true),
		parquet.WithCreatedBy("colink storage"),
		parquet.WithAllocator(s.alloc),
	)
	dir := filepath.Join(s.dir, "tables", table)
	if err := ensureDir(s.dir, filepath.Join("tables", table)); err != nil {
		return nil, err
	}
	w := &TableWriter{tx: tx, table: table, dir: dir, schema: sc, kinds: kinds, pqs: schema.NewSchema(group), props: props}
	tx.writers = append(tx.writers, w)
	return w, nil
}

// ensureDir creates rel (and its parents) under root, fsyncing each parent whose entries
// changed so the new directories survive a crash.
func ensureDir(root, rel string) error {
	cur := root
	for _, part := range splitPath(rel) {
		next := filepath.Join(cur, part)
		if _, err := os.Stat(next); err == nil {
			cur = next
			continue
		}
		if err := os.Mkdir(next, 0o755); err != nil && !os.IsExist(err) {
			return fmt.Errorf("storage: create %s: %w", next, err)
		}
		if err := syncDir(cur); err != nil {
			return err
		}
		cur = next
	}
	return nil
}

func splitPath(rel string) []string {
	var parts []string
	for rel != "" && rel != "." {
		dir, base := filepath.Split(filepath.Clean(rel))
		parts = append([]string{base}, parts...)
		rel = filepath.Clean(dir)
		if rel == "/" {
			break
		}
	}
	return parts
}

// Rows is the number of rows written so far.
func (w *TableWriter) Rows() int64 { return w.rows }

// Write adds the record's rows. Its columns must match the table's names and types (field
// metadata may differ); a non-nullable column must have no nulls.
func (w *TableWriter) Write(ctx context.Context, rec arrow.Record) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("storage: write to a closed table writer")
	}
	if err := w.checkRecord(rec); err != nil {
		return err
	}
	n := rec.NumRows()
	for off := int64(0); off < n; {
		if err := ctx.Err(); err != nil {
			return err
		}
		if w.cur == nil {
			if err := w.startSegment(); err != nil {
				return w.fail(err)
			}
		}
		take := min(n-off, w.cur.spaceInGroup(), w.cur.spaceInSegment())
		piece := rec
		if off != 0 || take != n {
			piece = rec.NewSlice(off, off+take)
		} else {
			piece.Retain()
		}
		if err := w.cur.add(piece); err != nil {
			return w.fail(err)
		}
		off += take
		w.rows += take
		if w.cur.spaceInSegment() == 0 {
			if err := w.finishSegment(); err != nil {
				return w.fail(err)
			}
		}
	}
	return nil
}

// FinishSegment ends the current segment now, so the next rows start a new one (a loader
// dealing segments to several primprocs cuts where it switches).
func (w *TableWriter) FinishSegment() error {
	if w.err != nil {
		return w.err
	}
	if w.cur == nil {
		return nil
	}
	if err := w.finishSegment(); err != nil {
		return w.fail(err)
	}
	return nil
}

// Close finishes the last segment. Commit calls it for writers not yet closed.
func (w *TableWriter) Close(ctx context.Context) error {
	if w.closed {
		return w.err
	}
	if err := w.FinishSegment(); err != nil {
		return err
	}
	w.closed = true
	return nil
}

func (w *TableWriter) fail(err error) error {
	w.err = fmt.Errorf("storage: write table %q: %w", w.table, err)
	return w.err
}

func (w *TableWriter) abort() {
	if w.cur != nil {
		w.cur.abort()
		w.cur = nil
	}
	w.closed = true
	if w.err == nil {
		w.err = errors.New("storage: transaction aborted")
	}
}

func (w *TableWriter) checkRecord(rec arrow.Record) error {
	sc := rec.Schema()
	if sc.NumFields() != w.schema.NumFields() {
		return fmt.Errorf("storage: table %q has %d columns, the record %d", w.table, w.schema.NumFields(), sc.NumFields())
	}
	for i, f := range w.schema.Fields() {
		g := sc.Field(i)
		if g.Name != f.Name || !arrow.TypeEqual(g.Type, f.Type) {
			return fmt.Errorf("storage: table %q column %d is %s %s, the record has %s %s", w.table, i, f.Name, f.Type, g.Name, g.Type)
		}
		if !f.Nullable && rec.Column(i).NullN() > 0 {
			return fmt.Errorf("storage: table %q column %s is NOT NULL but the record has %d nulls", w.table, f.Name, rec.Column(i).NullN())
		}
	}
	return nil
}

func (w *TableWriter) startSegment() error {
	s := w.tx.store
	id := s.nextSegmentID.Add(1) - 1
	name := fmt.Sprintf("seg-%08d.parquet", id)
	abs := filepath.Join(w.dir, name)
	f, err := os.OpenFile(abs, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("create segment: %w", err)
	}
	w.tx.files = append(w.tx.files, abs)
	bw := bufio.NewWriterSize(f, 1<<20)
	kv := metadata.NewKeyValueMetadata()
	kv.Append(segmentSchemaKey, schemaJSON(w.schema))
	pw, err := file.NewParquetWriterWithError(bw, w.pqs.Root(), file.WithWriterProps(w.props), file.WithWriteMetadata(kv))
	if err != nil {
		f.Close()
		return fmt.Errorf("create segment %s: %w", abs, err)
	}
	w.cur = &segmentWriter{
		w: w, id: id, rel: path.Join("tables", w.table, name), abs: abs, f: f, bw: bw, pw: pw,
		groupRows: int64(s.opts.RowGroupRows), segRows: int64(s.opts.SegmentRows),
		sketches: make([]ndv.Sketch, len(w.kinds)),
	}
	w.cur.startEncoder()
	return nil
}

func (w *TableWriter) finishSegment() error {
	sw := w.cur
	w.cur = nil
	meta, err := sw.finish()
	if err != nil {
		sw.abort()
		return err
	}
	if meta != nil {
		w.segments = append(w.segments, meta)
	}
	return nil
}

// segmentWriter writes one segment file. Row groups are encoded by a goroutine of their
// own while the caller fills the next one, so a load overlaps producing rows with encoding
// them; at most two row groups of input are held (the one filling, the one encoding).
type segmentWriter struct {
	w        *TableWriter
	id       uint64
	rel, abs string
	f        *os.File
	bw       *bufio.Writer
	pw       *file.Writer

	groupRows, segRows int64
	pending            []arrow.Record // slices making up the row group being filled
	pendingRows        int64
	rows               int64 // rows handed to the encoder

	groups     chan []arrow.Record // to the encoder; unbuffered
	encDone    chan struct{}       // closed when the encoder has exited
	encErr     error               // the encoder's first error; read after encDone
	encFailed  atomic.Bool
	groupsDone bool // groups is closed

	// sketches holds, per column, the distinct-value sketch of the rows encoded so far;
	// only the encoder goroutine touches it until stopEncoder returns.
	sketches []ndv.Sketch

	// Scratch of the encoder goroutine.
	defLevels []int16             // definition levels for nullable columns
	byteVals  []parquet.ByteArray // values for dictionary-encoded byte arrays
}

func (sw *segmentWriter) startEncoder() {
	sw.groups = make(chan []arrow.Record)
	sw.encDone = make(chan struct{})
	go func() {
		defer close(sw.encDone)
		for g := range sw.groups {
			if sw.encErr == nil {
				if err := sw.encodeGroup(g); err != nil {
					sw.encErr = err
					sw.encFailed.Store(true)
				}
			}
			for _, r := range g {
				r.Release()
			}
		}
	}()
}

// stopEncoder closes the encoder's queue, waits for it and returns its error.
func (sw *segmentWriter) stopEncoder() error {
	if !sw.groupsDone {
		sw.groupsDone = true
		close(sw.groups)
	}
	<-sw.encDone
	return sw.encErr
}

func (sw *segmentWriter) spaceInGroup() int64 { return sw.groupRows - sw.pendingRows }
func (sw *segmentWriter) spaceInSegment() int64 {
	return sw.segRows - sw.rows - sw.pendingRows
}

func (sw *segmentWriter) add(rec arrow.Record) error {
	sw.pending = append(sw.pending, rec)
	sw.pendingRows += rec.NumRows()
	if sw.pendingRows == sw.groupRows {
		return sw.handOff()
	}
	return nil
}

// handOff passes the pending row group to the encoder (waiting while it encodes the previous).
func (sw *segmentWriter) handOff() error {
	if sw.pendingRows == 0 {
		return nil
	}
	if sw.encFailed.Load() {
		sw.releasePending()
		return sw.stopEncoder()
	}
	sw.groups <- sw.pending
	sw.pending = nil
	sw.rows += sw.pendingRows
	sw.pendingRows = 0
	return nil
}

func (sw *segmentWriter) releasePending() {
	for _, r := range sw.pending {
		r.Release()
	}
	sw.pending = sw.pending[:0]
	sw.pendingRows = 0
}

// encodeGroup writes one row group, column by column. It runs on the encoder goroutine.
func (sw *segmentWriter) encodeGroup(group []arrow.Record) error {
	rg, err := sw.pw.AppendRowGroupChecked()
	if err != nil {
		return err
	}
	for c := range sw.w.kinds {
		cw, err := rg.NextColumn()
		if err != nil {
			return err
		}
		for _, rec := range group {
			if err := sw.writeColumn(cw, rec.Column(c), sw.w.kinds[c]); err != nil {
				return fmt.Errorf("column %s: %w", sw.w.schema.Field(c).Name, err)
			}
			addToSketch(&sw.sketches[c], rec.Column(c))
		}
	}
	return rg.Close()
}

// writeColumn feeds one array to a column chunk writer straight from the array's buffers.
func (sw *segmentWriter) writeColumn(cw file.ColumnChunkWriter, arr arrow.Array, kind colKind) error {
	d := arr.Data()
	n, off := d.Len(), d.Offset()
	if n == 0 {
		return nil
	}
	var def []int16
	var valid []byte
	if cw.Descr().MaxDefinitionLevel() > 0 {
		if cap(sw.defLevels) < n {
			sw.defLevels = make([]int16, n)
		}
		def = sw.defLevels[:n]
		if arr.NullN() == 0 {
			for i := range def {
				def[i] = 1
			}
		} else {
			valid = d.Buffers()[0].Bytes()
			for i := range def {
				def[i] = 0
				if bitutil.BitIsSet(valid, off+i) {
					def[i] = 1
				}
			}
		}
	}
	var err error
	switch wr := cw.(type) {
	case *file.Int32ColumnChunkWriter:
		vals := arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())[off : off+n]
		if valid != nil {
			_, err = wr.WriteBatchSpacedWithError(vals, def, nil, valid, int64(off))
		} else {
			_, err = wr.WriteBatch(vals, def, nil)
		}
	case *file.Int64ColumnChunkWriter: // int64 and decimal64 share the layout
		vals := arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())[off : off+n]
		if valid != nil {
			_, err = wr.WriteBatchSpacedWithError(vals, def, nil, valid, int64(off))
		} else {
			_, err = wr.WriteBatch(vals, def, nil)
		}
	case *file.Float64ColumnChunkWriter:
		vals := arrow.Float64Traits.CastFromBytes(d.Buffers()[1].Bytes())[off : off+n]
		if valid != nil {
			_, err = wr.WriteBatchSpacedWithError(vals, def, nil, valid, int64(off))
		} else {
			_, err = wr.WriteBatch(vals, def, nil)
		}
	case *file.BooleanColumnChunkWriter:
		bits := d.Buffers()[1].Bytes()
		if valid != nil {
			_, err = wr.WriteBitmapBatchSpacedWithError(bits, int64(off), n, def, nil, valid, int64(off))
		} else {
			_, err = wr.WriteBitmapBatch(bits, int64(off), n, def, nil)
		}
	case *file.ByteArrayColumnChunkWriter:
		var offsets []int32
		switch a := arr.(type) {
		case *array.String:
			offsets = a.ValueOffsets()
		case *array.Binary:
			offsets = a.ValueOffsets()
		default:
			return fmt.Errorf("unexpected array %T for a byte array column", arr)
		}
		var data []byte
		if b := d.Buffers()[2]; b != nil {
			data = b.Bytes()
		}
		if wr.SupportsArrowOffsets() { // plain encoding reads Arrow's buffers directly
			if valid != nil {
				_, err = wr.WriteBatchSpacedArrow(data, offsets, def, nil, valid, int64(off))
			} else {
				_, err = wr.WriteBatchArrow(data, offsets, def, nil)
			}
			break
		}
		// The dictionary encoder takes value slices; the scratch slice is reused.
		if cap(sw.byteVals) < n {
			sw.byteVals = make([]parquet.ByteArray, n)
		}
		vals := sw.byteVals[:n]
		for i := range vals {
			vals[i] = data[offsets[i]:offsets[i+1]:offsets[i+1]]
		}
		if valid != nil {
			_, err = wr.WriteBatchSpacedWithError(vals, def, nil, valid, int64(off))
		} else {
			_, err = wr.WriteBatch(vals, def, nil)
		}
		clear(vals) // drop references to the record's buffer
	default:
		return fmt.Errorf("no writer for column kind %d (%T)", kind, cw)
	}
	return err
}

// finish flushes the last row group, closes and fsyncs the file, and describes it for the
// catalog. It returns nil meta for a segment that received no rows (and removes the file).
func (sw *segmentWriter) finish() (*segmentMeta, error) {
	if err := sw.handOff(); err != nil {
		return nil, err
	}
	if err := sw.stopEncoder(); err != nil {
		return nil, err
	}
	if sw.rows == 0 {
		sw.abort()
		return nil, nil
	}
	if err := sw.pw.Close(); err != nil {
		return nil, fmt.Errorf("close segment %s: %w", sw.abs, err)
	}
	if err := sw.bw.Flush(); err != nil {
		return nil, fmt.Errorf("write segment %s: %w", sw.abs, err)
	}
	if err := sw.w.tx.store.fault(stepSegmentSync); err != nil {
		return nil, fmt.Errorf("fsync segment %s: %w", sw.abs, err)
	}
	if err := sw.f.Sync(); err != nil {
		return nil, fmt.Errorf("fsync segment %s: %w", sw.abs, err)
	}
	if err := sw.f.Close(); err != nil {
		return nil, fmt.Errorf("close segment %s: %w", sw.abs, err)
	}
	sw.f = nil
	md, err := sw.pw.FileMetadata()
	if err != nil {
		return nil, err
	}
	whole, footer, chunkCRCs, size, err := fileChecksums(sw.abs, md)
	if err != nil {
		return nil, fmt.Errorf("checksum segment %s: %w", sw.abs, err)
	}
	meta := &segmentMeta{ID: sw.id, File: sw.rel, Rows: md.NumRows, Size: size, FileCRC: whole, FooterCRC: footer}
	for c := range sw.sketches {
		b, err := sw.sketches[c].MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("segment %s: distinct-value sketch of column %d: %w", sw.abs, c, err)
		}
		meta.Sketches = append(meta.Sketches, b)
	}
	sw.sketches = nil
	for g := 0; g < md.NumRowGroups(); g++ {
		rgm := md.RowGroup(g)
		gm := rowGroupMeta{Rows: rgm.NumRows(), ChunkCRCs: chunkCRCs[g], Zones: make([]zoneMap, len(sw.w.kinds))}
		for c, k := range sw.w.kinds {
			cc, err := rgm.ColumnChunk(c)
			if err != nil {
				return nil, err
			}
			gm.Zones[c] = zoneFromStats(cc, k)
		}
		meta.RowGroups = append(meta.RowGroups, gm)
	}
	return meta, nil
}

func (sw *segmentWriter) abort() {
	sw.releasePending()
	sw.stopEncoder()
	if sw.f != nil {
		sw.f.Close()
		sw.f = nil
	}
	os.Remove(sw.abs)
}

// addToSketch adds an array's non-NULL values to a column's distinct-value sketch, reading
// the array's buffers directly: integers, dates and decimals (unscaled) as integers,
// booleans as 0 and 1.
func addToSketch(sk *ndv.Sketch, arr arrow.Array) {
	d := arr.Data()
	n, off := d.Len(), d.Offset()
	if n == 0 || arr.NullN() == n {
		return
	}
	var valid []byte
	if arr.NullN() > 0 {
		valid = d.Buffers()[0].Bytes()
	}
	switch a := arr.(type) {
	case *array.Int32:
		sk.AddInt32s(a.Int32Values(), valid, off)
	case *array.Date32:
		sk.AddInt32s(arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())[off:off+n], valid, off)
	case *array.Int64:
		sk.AddInt64s(a.Int64Values(), valid, off)
	case *array.Decimal64, *array.Timestamp:
		sk.AddInt64s(arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())[off:off+n], valid, off)
	case *array.Float64:
		sk.AddFloat64s(a.Float64Values(), valid, off)
	case *array.Boolean:
		for i := range n {
			if arr.IsValid(i) {
				v := int64(0)
				if a.Value(i) {
					v = 1
				}
				sk.AddHash(ndv.HashInt64(v))
			}
		}
	case *array.String:
		addBytes(sk, d, a.ValueOffsets(), n, valid, off)
	case *array.Binary:
		addBytes(sk, d, a.ValueOffsets(), n, valid, off)
	}
}

func addBytes(sk *ndv.Sketch, d arrow.ArrayData, offsets []int32, n int, valid []byte, off int) {
	var data []byte
	if b := d.Buffers()[2]; b != nil {
		data = b.Bytes()
	}
	sk.AddBytes(data, offsets, n, valid, off)
}

// zoneFromStats turns a column chunk's Parquet statistics into a zone map. A chunk without
// usable statistics gets a zone map that eliminates nothing.
func zoneFromStats(cc *metadata.ColumnChunkMetaData, kind colKind) zoneMap {
	ok, err := cc.StatsSet()
	if !ok || err != nil {
		return zoneMap{Nulls: -1}
	}
	st, err := cc.Statistics()
	if err != nil || st == nil {
		return zoneMap{Nulls: -1}
	}
	z := zoneMap{Nulls: st.NullCount()}
	if !st.HasNullCount() {
		z.Nulls = -1
	}
	if !st.HasMinMax() {
		return z
	}
	switch s := st.(type) {
	case *metadata.Int32Statistics:
		z.HasMinMax, z.MinI, z.MaxI = true, int64(s.Min()), int64(s.Max())
	case *metadata.Int64Statistics:
		z.HasMinMax, z.MinI, z.MaxI = true, s.Min(), s.Max()
	case *metadata.BooleanStatistics:
		z.HasMinMax = true
		if s.Min() {
			z.MinI = 1
		}
		if s.Max() {
			z.MaxI = 1
		}
	case *metadata.Float64Statistics:
		if !math.IsNaN(s.Min()) && !math.IsNaN(s.Max()) && !math.IsInf(s.Min(), 0) && !math.IsInf(s.Max(), 0) {
			z.HasMinMax, z.MinF, z.MaxF = true, s.Min(), s.Max()
		}
	case *metadata.ByteArrayStatistics:
		z.HasMinMax, z.MinS, z.MaxS = true, string(s.Min()), string(s.Max())
	}
	return z.normalize(kind.zoneClass())
}
