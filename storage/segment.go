package storage

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// parquetTrailer is the length of a Parquet file's tail: a 4-byte footer length and "PAR1".
const parquetTrailer = 8

// segment is the open handle of one segment file. It opens lazily; opening verifies the
// file's size and footer checksum against the catalog, and every column chunk read through it
// is checked against its CRC-32C, so corrupt bytes never reach a decoder unnoticed.
type segment struct {
	path  string
	table string
	meta  *segmentMeta
	alloc memory.Allocator

	mu     sync.Mutex
	f      *os.File
	rdr    *file.Reader
	chunks map[int64]chunkRef // column chunk start offset → expected extent and checksum
}

type chunkRef struct {
	length  int64
	crc     uint32
	rg, col int
}

func (sg *segment) corrupt(format string, args ...any) error {
	return &CorruptionError{File: sg.path, Detail: fmt.Sprintf(format, args...)}
}

// reader returns the segment's Parquet reader, opening and verifying the file on first use.
// Failures are not remembered: a later call tries again.
func (sg *segment) reader() (*file.Reader, error) {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	if sg.rdr != nil {
		return sg.rdr, nil
	}
	f, err := os.Open(sg.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, sg.corrupt("the file is missing")
		}
		return nil, fmt.Errorf("storage: open segment: %w", err)
	}
	md, err := sg.verifyFooter(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	sg.f = f
	props := parquet.NewReaderProperties(sg.alloc)
	// Unbuffered: each column chunk is read with exactly one ReadAt of its whole extent,
	// which is what lets ReadAt verify the chunk's checksum.
	props.BufferedStreamEnabled = false
	rdr, err := file.NewParquetReader(sg, file.WithMetadata(md), file.WithReadProps(props))
	if err != nil {
		f.Close()
		sg.f = nil
		return nil, sg.corrupt("%v", err)
	}
	sg.rdr = rdr
	return rdr, nil
}

// verifyFooter checks size and footer checksum, parses the footer and matches it against
// the catalog's description of the segment, and indexes the column chunks.
func (sg *segment) verifyFooter(f *os.File) (*metadata.FileMetaData, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("storage: stat segment %s: %w", sg.path, err)
	}
	size := st.Size()
	if size != sg.meta.Size {
		return nil, sg.corrupt("size is %d bytes, the catalog records %d (truncated or overwritten)", size, sg.meta.Size)
	}
	if size < 2*parquetTrailer {
		return nil, sg.corrupt("too small (%d bytes) to be a Parquet file", size)
	}
	var tail [parquetTrailer]byte
	if _, err := f.ReadAt(tail[:], size-parquetTrailer); err != nil {
		return nil, fmt.Errorf("storage: read segment %s: %w", sg.path, err)
	}
	metaLen := int64(binary.LittleEndian.Uint32(tail[:4]))
	if string(tail[4:]) != "PAR1" || metaLen <= 0 || metaLen > size-2*parquetTrailer {
		return nil, sg.corrupt("no valid Parquet footer at the end of the file")
	}
	footer := make([]byte, metaLen+parquetTrailer)
	if _, err := f.ReadAt(footer, size-int64(len(footer))); err != nil {
		return nil, fmt.Errorf("storage: read segment %s: %w", sg.path, err)
	}
	if got := crc32c(footer); got != sg.meta.FooterCRC {
		return nil, sg.corrupt("footer checksum mismatch (%08x, catalog records %08x)", got, sg.meta.FooterCRC)
	}
	md, err := metadata.NewFileMetaData(footer[:metaLen], nil)
	if err != nil {
		return nil, sg.corrupt("footer: %v", err)
	}
	if md.NumRowGroups() != len(sg.meta.RowGroups) || md.NumRows != sg.meta.Rows {
		return nil, sg.corrupt("footer describes %d row groups and %d rows, the catalog %d and %d",
			md.NumRowGroups(), md.NumRows, len(sg.meta.RowGroups), sg.meta.Rows)
	}
	chunks, err := chunkExtents(md, size)
	if err != nil {
		return nil, sg.corrupt("%v", err)
	}
	sg.chunks = make(map[int64]chunkRef, len(chunks))
	for _, c := range chunks {
		g := sg.meta.RowGroups[c.rg]
		if c.col >= len(g.ChunkCRCs) {
			return nil, sg.corrupt("footer has more columns than the catalog")
		}
		c.crc = g.ChunkCRCs[c.col]
		sg.chunks[c.start] = c.chunkRef
	}
	return md, nil
}

type chunkExtent struct {
	start int64
	chunkRef
}

// chunkExtents lists every column chunk's byte range, computed as the Parquet reader computes
// it (dictionary page first when present), in file order.
func chunkExtents(md *metadata.FileMetaData, size int64) ([]chunkExtent, error) {
	var out []chunkExtent
	for rg := 0; rg < md.NumRowGroups(); rg++ {
		rgm := md.RowGroup(rg)
		if rgm.NumColumns() != md.Schema.NumColumns() {
			return nil, fmt.Errorf("row group %d has %d columns, schema %d", rg, rgm.NumColumns(), md.Schema.NumColumns())
		}
		for col := 0; col < rgm.NumColumns(); col++ {
			cc, err := rgm.ColumnChunk(col)
			if err != nil {
				return nil, fmt.Errorf("row group %d column %d: %w", rg, col, err)
			}
			start := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && start > cc.DictionaryPageOffset() {
				start = cc.DictionaryPageOffset()
			}
			n := cc.TotalCompressedSize()
			if start < 4 || n <= 0 || start+n > size {
				return nil, fmt.Errorf("row group %d column %d extent [%d,+%d) lies outside the file", rg, col, start, n)
			}
			out = append(out, chunkExtent{start: start, chunkRef: chunkRef{length: n, rg: rg, col: col}})
		}
	}
	return out, nil
}

// ReadAt serves the Parquet reader. Only whole column chunks are read, and each is verified.
func (sg *segment) ReadAt(p []byte, off int64) (int, error) {
	c, ok := sg.chunks[off]
	if !ok || c.length != int64(len(p)) {
		return 0, sg.corrupt("unexpected read of %d bytes at offset %d: not a column chunk the footer describes", len(p), off)
	}
	n, err := sg.f.ReadAt(p, off)
	if n < len(p) {
		if err == nil || err == io.EOF {
			return n, sg.corrupt("short read at offset %d (truncated?)", off)
		}
		return n, fmt.Errorf("storage: read %s: %w", sg.path, err)
	}
	if got := crc32c(p); got != c.crc {
		return 0, sg.corrupt("checksum mismatch in row group %d column %d (%08x, catalog records %08x)", c.rg, c.col, got, c.crc)
	}
	return n, nil
}

// Seek exists for parquet.ReaderAtSeeker; the reader only asks for the size.
func (sg *segment) Seek(offset int64, whence int) (int64, error) {
	if whence == io.SeekEnd && offset == 0 {
		return sg.meta.Size, nil
	}
	return 0, fmt.Errorf("storage: segment %s: unsupported seek", sg.path)
}

func (sg *segment) close() {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	if sg.f != nil {
		sg.f.Close()
	}
	sg.f, sg.rdr, sg.chunks = nil, nil, nil
}

// readColumn decodes one column chunk into an Arrow array of the table's type. It returns the
// array and the number of file bytes read.
func (sg *segment) readColumn(rg, col int, field arrow.Field, kind colKind) (arrow.Array, int64, error) {
	rdr, err := sg.reader()
	if err != nil {
		return nil, 0, err
	}
	rgr := rdr.RowGroup(rg)
	cc, err := rgr.MetaData().ColumnChunk(col)
	if err != nil {
		return nil, 0, sg.corrupt("row group %d column %d: %v", rg, col, err)
	}
	n := rgr.NumRows()
	if kind == kindString || kind == kindBinary {
		ccr, err := rgr.Column(col)
		if err != nil {
			return nil, 0, wrapRead(sg, rg, field.Name, err)
		}
		arr, err := readByteArrays(ccr.(*file.ByteArrayColumnChunkReader), n, field, sg.alloc)
		ccr.Close() // releases the page buffers
		if err != nil {
			return nil, 0, wrapRead(sg, rg, field.Name, err)
		}
		return arr, cc.TotalCompressedSize(), nil
	}
	pages, err := rgr.GetColumnPageReader(col)
	if err != nil {
		return nil, 0, wrapRead(sg, rg, field.Name, err)
	}
	descr := rdr.MetaData().Schema.Column(col)
	level := file.LevelInfo{NullSlotUsage: 1}
	if field.Nullable {
		level.DefLevel = 1
	}
	rr := file.NewRecordReader(descr, level, field.Type, sg.alloc, rdr.BufferPool())
	defer rr.Release()
	if err := rr.(file.RecordReaderWithError).SetPageReaderWithError(pages); err != nil {
		return nil, 0, wrapRead(sg, rg, field.Name, err)
	}
	if err := rr.Reserve(n); err != nil {
		return nil, 0, err
	}
	for read := int64(0); read < n; {
		k, err := rr.ReadRecords(n - read)
		if err != nil {
			return nil, 0, wrapRead(sg, rg, field.Name, err)
		}
		if k == 0 {
			return nil, 0, sg.corrupt("row group %d column %q ends after %d of %d rows", rg, field.Name, read, n)
		}
		read += k
	}
	arr, err := transfer(rr, field.Type, kind)
	if err != nil {
		return nil, 0, wrapRead(sg, rg, field.Name, err)
	}
	if int64(arr.Len()) != n {
		arr.Release()
		return nil, 0, sg.corrupt("row group %d column %q decoded %d values, expected %d", rg, field.Name, arr.Len(), n)
	}
	return arr, cc.TotalCompressedSize(), nil
}

// byteArrayBatch is how many values readByteArrays decodes per call into its scratch slices.
const byteArrayBatch = 4096

// readByteArrays decodes a BYTE_ARRAY column chunk of n rows into a String or Binary array.
// The decoder yields slices into its current page (or dictionary) buffers, valid until the next
// call (ReadBatchInPage, unlike ReadBatch, does not clone every value); they are copied straight
// into the array's data buffer, whose size is extrapolated from the first batch. This is much
// cheaper than a builder append per value for TPC-H's short dictionary-encoded strings.
func readByteArrays(cr *file.ByteArrayColumnChunkReader, n int64, field arrow.Field, mem memory.Allocator) (arrow.Array, error) {
	offsets := memory.NewResizableBuffer(mem)
	data := memory.NewResizableBuffer(mem)
	var valid *memory.Buffer
	defer func() { releaseBuffers(offsets, data, valid) }()
	offsets.Resize(int(n+1) * 4)
	offs := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
	offs[0] = 0
	var (
		vals  = make([]parquet.ByteArray, byteArrayBatch)
		defs  []int16
		bits  []byte
		nulls int
		size  int // bytes of data used
	)
	if field.Nullable {
		defs = make([]int16, byteArrayBatch)
		valid = memory.NewResizableBuffer(mem)
		valid.Resize(int(bitutil.BytesForBits(n)))
		bits = valid.Bytes()
		clear(bits)
	}
	for row := int64(0); row < n; {
		total, nv, err := cr.ReadBatchInPage(min(byteArrayBatch, n-row), vals, defs, nil)
		if err != nil {
			return nil, err
		}
		if total == 0 {
			return nil, fmt.Errorf("column chunk ends after %d of %d rows", row, n)
		}
		need := size
		for _, v := range vals[:nv] {
			need += len(v)
		}
		if need > math.MaxInt32 {
			return nil, fmt.Errorf("row group holds over 2 GiB of string data")
		}
		if need > data.Cap() {
			grow := max(need, 2*data.Cap())
			if row == 0 && total > 0 { // extrapolate the first batch to the whole chunk
				grow = max(need, int(float64(need)/float64(total)*float64(n)*1.1))
			}
			data.Reserve(grow)
		}
		data.ResizeNoShrink(need)
		buf := data.Bytes()
		v := 0
		for i := int64(0); i < total; i++ {
			if defs != nil && defs[i] == 0 {
				nulls++
			} else {
				size += copy(buf[size:], vals[v])
				v++
				if bits != nil {
					bitutil.SetBit(bits, int(row+i))
				}
			}
			offs[row+i+1] = int32(size)
		}
		clear(vals[:nv]) // drop references into the decoder's pages
		row += total
	}
	if slack := data.Cap() - size; slack > size/4+4096 {
		data.Resize(size) // give back a poor extrapolation's excess
	}
	d := array.NewData(field.Type, int(n), []*memory.Buffer{valid, offsets, data}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

func wrapRead(sg *segment, rg int, col string, err error) error {
	var ce *CorruptionError
	if errors.As(err, &ce) {
		return err // already names the file
	}
	// A decoder failing on checksummed bytes means the writer and reader disagree, or memory
	// is bad; either way the file cannot be read correctly.
	return sg.corrupt("row group %d column %q: %v", rg, col, err)
}

// transfer turns the record reader's decoded buffers into an array of the table's type
// without copying: Parquet INT64 DECIMAL values are already Decimal64's int64 layout, and
// INT32 DATE values Date32's.
func transfer(rr file.RecordReader, dt arrow.DataType, kind colKind) (arrow.Array, error) {
	switch kind {
	case kindBool:
		bits := rr.ReleaseValidBits()
		values := rr.(file.BooleanRecordReader).ReleaseValueBitmap()
		d := array.NewData(dt, rr.ValuesWritten(), []*memory.Buffer{bits, values}, nil, int(rr.NullCount()), 0)
		releaseBuffers(bits, values)
		defer d.Release()
		return array.MakeFromData(d), nil
	default:
		bits := rr.ReleaseValidBits()
		values := rr.ReleaseValues()
		d := array.NewData(dt, rr.ValuesWritten(), []*memory.Buffer{bits, values}, nil, int(rr.NullCount()), 0)
		releaseBuffers(bits, values)
		defer d.Release()
		return array.MakeFromData(d), nil
	}
}

func releaseBuffers(bufs ...*memory.Buffer) {
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
}

// fileChecksums reads a finished segment file once, a buffer at a time, and returns the
// CRC-32C of the whole file, of its footer, and of every column chunk ([row group][column]).
func fileChecksums(path string, md *metadata.FileMetaData) (whole, footer uint32, chunks [][]uint32, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, 0, nil, 0, err
	}
	size = st.Size()
	extents, err := chunkExtents(md, size)
	if err != nil {
		return 0, 0, nil, 0, err
	}
	slices.SortFunc(extents, func(a, b chunkExtent) int { return cmp.Compare(a.start, b.start) })
	sums := make([]uint32, len(extents))
	buf := make([]byte, 1<<20)
	first := 0 // extents before it end before the current buffer
	for off := int64(0); off < size; {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if n == 0 {
			return 0, 0, nil, 0, fmt.Errorf("read %s at %d: %w", path, off, err)
		}
		piece, end := buf[:n], off+int64(n)
		whole = crc32.Update(whole, castagnoli, piece)
		for j := first; j < len(extents) && extents[j].start < end; j++ {
			lo, hi := max(extents[j].start, off), min(extents[j].start+extents[j].length, end)
			if lo < hi {
				sums[j] = crc32.Update(sums[j], castagnoli, piece[lo-off:hi-off])
			}
		}
		for first < len(extents) && extents[first].start+extents[first].length <= end {
			first++
		}
		off = end
	}
	var tail [parquetTrailer]byte
	if _, err := f.ReadAt(tail[:], size-parquetTrailer); err != nil {
		return 0, 0, nil, 0, err
	}
	metaLen := int64(binary.LittleEndian.Uint32(tail[:4]))
	fb := make([]byte, metaLen+parquetTrailer)
	if _, err := f.ReadAt(fb, size-int64(len(fb))); err != nil {
		return 0, 0, nil, 0, err
	}
	footer = crc32c(fb)
	chunks = make([][]uint32, md.NumRowGroups())
	for g := range chunks {
		chunks[g] = make([]uint32, md.Schema.NumColumns())
	}
	for j, e := range extents {
		chunks[e.rg][e.col] = sums[j]
	}
	return whole, footer, chunks, size, nil
}
