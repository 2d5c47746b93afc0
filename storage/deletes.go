package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/internal/atomicfile"
)

// A delete file marks deleted rows of one segment: "CLDV", a little-endian uint32 format
// (1), a uint64 row count, then one bit per row in little-endian uint64 words. Delete files
// are immutable; a later delete writes a new file holding the union, and the catalog switches
// to it atomically.
const (
	deleteMagic      = "CLDV"
	deleteFormat     = 1
	deleteHeaderSize = 16
)

// bitmap is a set of row ordinals within a segment.
type bitmap []uint64

func (b bitmap) has(i int64) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }

// countRange counts the set bits in [lo, hi).
func (b bitmap) countRange(lo, hi int64) int64 {
	var n int64
	for i := lo; i < hi; {
		w := b[i>>6] >> (uint(i) & 63)
		span := min(64-(i&63), hi-i)
		if span < 64 {
			w &= (1 << uint(span)) - 1
		}
		n += int64(bits.OnesCount64(w))
		i += span
	}
	return n
}

func encodeDeletes(rows int64, b bitmap) []byte {
	out := make([]byte, deleteHeaderSize+8*len(b))
	copy(out, deleteMagic)
	binary.LittleEndian.PutUint32(out[4:], deleteFormat)
	binary.LittleEndian.PutUint64(out[8:], uint64(rows))
	for i, w := range b {
		binary.LittleEndian.PutUint64(out[deleteHeaderSize+8*i:], w)
	}
	return out
}

// deletes returns the segment's delete bitmap (nil when it has none), reading and verifying
// its file on first use; bitmaps are kept until their file becomes obsolete.
func (s *Store) deletes(sm *segmentMeta) (bitmap, error) {
	dm := sm.Deletes
	if dm == nil {
		return nil, nil
	}
	s.mu.Lock()
	b, ok := s.dels[dm.File]
	s.mu.Unlock()
	if ok {
		return b, nil
	}
	b, err := s.readBitmap(dm.File, dm.Size, dm.CRC, sm.Rows)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.dels[dm.File] = b
	s.mu.Unlock()
	return b, nil
}

// readBitmap reads and verifies a delete file (rel, relative to the store) of a segment of
// rows rows whose catalog entry records size and crc.
func (s *Store) readBitmap(rel string, size int64, crc uint32, rows int64) (bitmap, error) {
	p := filepath.Join(s.dir, filepath.FromSlash(rel))
	bad := func(format string, args ...any) error {
		return &CorruptionError{File: p, Detail: fmt.Sprintf(format, args...)}
	}
	data, err := os.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, bad("the file is missing")
	case err != nil:
		return nil, fmt.Errorf("storage: read delete file: %w", err)
	case int64(len(data)) != size:
		return nil, bad("size is %d bytes, the catalog records %d (truncated or overwritten)", len(data), size)
	case crc32c(data) != crc:
		return nil, bad("checksum mismatch (%08x, catalog records %08x)", crc32c(data), crc)
	case string(data[:4]) != deleteMagic || binary.LittleEndian.Uint32(data[4:]) != deleteFormat ||
		int64(binary.LittleEndian.Uint64(data[8:])) != rows || len(data) != deleteHeaderSize+8*int((rows+63)/64):
		return nil, bad("not a delete file for a segment of %d rows", rows)
	}
	b := make(bitmap, (rows+63)/64)
	for i := range b {
		b[i] = binary.LittleEndian.Uint64(data[deleteHeaderSize+8*i:])
	}
	return b, nil
}

// Delete marks rows of a segment deleted when the transaction commits. Rows are ordinals
// within the segment (RowGroupRef.FirstRow plus the row's index in its row group); rows
// already deleted stay deleted. Deletes of one transaction are merged with each other and
// with deletes committed meanwhile by others.
func (tx *Txn) Delete(table string, segment uint64, rows []int64) error {
	if err := tx.usable(); err != nil {
		return err
	}
	t := tx.base.cat.table(table)
	if t == nil {
		return fmt.Errorf("%w: %q", ErrNoTable, table)
	}
	i := slices.IndexFunc(t.Segments, func(s *segmentMeta) bool { return s.ID == segment })
	if i < 0 {
		return fmt.Errorf("storage: table %q has no segment %d", table, segment)
	}
	sm := t.Segments[i]
	base, err := tx.store.deletes(sm)
	if err != nil {
		return err
	}
	if tx.deletes == nil {
		tx.deletes = map[uint64]*pendingDelete{}
	}
	pd := tx.deletes[segment]
	if pd == nil {
		pd = &pendingDelete{table: table, baseID: t.ID, rows: sm.Rows, bits: make(bitmap, (sm.Rows+63)/64)}
		tx.deletes[segment] = pd
		tx.deleteOrder = append(tx.deleteOrder, segment)
	}
	for _, r := range rows {
		if r < 0 || r >= sm.Rows {
			return fmt.Errorf("storage: delete of row %d of segment %d, which has %d rows", r, segment, sm.Rows)
		}
		if pd.bits.has(r) {
			continue
		}
		pd.bits[r>>6] |= 1 << (uint(r) & 63)
		if base == nil || !base.has(r) {
			tx.deleted++
		}
	}
	return nil
}

// Deleted counts the rows the transaction's deletes mark that were live in the version it
// began from.
func (tx *Txn) Deleted() int64 { return tx.deleted }

type pendingDelete struct {
	table  string
	baseID uint64
	rows   int64
	bits   bitmap
}

// applyDeletes writes the union of each touched segment's committed and pending deletes to a
// new delete file and points next's copy of the segment at it. Called under commitMu.
func (tx *Txn) applyDeletes(next *catalog) error {
	for _, segID := range tx.deleteOrder {
		pd := tx.deletes[segID]
		written, err := tx.store.mergeDeletes(next, pd.table, pd.baseID, segID, pd.bits)
		if written != "" {
			tx.files = append(tx.files, written)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// mergeDeletes marks the rows of bits deleted in next's copy of segment segID of table
// (incarnation tableID): it writes the union of the segment's committed deletes and bits to a
// new delete file, named by next.Version, and points the segment at it. written is the
// absolute path of the file it created, if any (for the caller to remove on failure). Called
// under commitMu.
func (s *Store) mergeDeletes(next *catalog, table string, tableID, segID uint64, bits bitmap) (written string, err error) {
	t := next.table(table)
	if t == nil || t.ID != tableID {
		return "", fmt.Errorf("%w: table %q was replaced or dropped while rows were deleted from it", ErrConflict, table)
	}
	i := slices.IndexFunc(t.Segments, func(s *segmentMeta) bool { return s.ID == segID })
	if i < 0 {
		return "", fmt.Errorf("%w: segment %d of %q is gone (compacted?)", ErrConflict, segID, table)
	}
	sm := t.Segments[i]
	union := slices.Clone(bits)
	old, err := s.deletes(sm)
	if err != nil {
		return "", err
	}
	for w := range old {
		union[w] |= old[w]
	}
	count := union.countRange(0, sm.Rows)
	if (old == nil && count == 0) || (old != nil && count == sm.Deletes.Count) {
		return "", nil // nothing new
	}
	data := encodeDeletes(sm.Rows, union)
	name := fmt.Sprintf("seg-%08d.del-%08d", segID, next.Version)
	rel := path.Join(path.Dir(sm.File), name)
	abs := filepath.Join(s.dir, filepath.FromSlash(rel))
	if err := s.writeDeleteFile(abs, data); err != nil {
		return abs, err // the rename may have happened: the caller removes abs
	}
	nsm := *sm
	nsm.Deletes = &deleteMeta{File: rel, Count: count, Size: int64(len(data)), CRC: crc32c(data)}
	nt := *t
	nt.Segments = slices.Clone(t.Segments)
	nt.Segments[i] = &nsm
	next.setTable(table, &nt)
	return abs, nil
}

// writeDeleteFile durably creates the delete file abs through a temporary file: fsynced,
// renamed into place, directory fsynced. An error or a crash never leaves a partial file
// under abs, so the delete set a catalog names is whole or absent. The name is new (it
// holds the version being committed), so nothing a catalog names is replaced.
func (s *Store) writeDeleteFile(abs string, data []byte) error {
	f, err := atomicfile.Create(abs)
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("storage: write %s: %w", abs, err)
	}
	if err := s.fault(stepDeleteFile); err != nil {
		return fmt.Errorf("storage: write %s: %w", abs, err)
	}
	if err := f.Commit(0o644); err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	return nil
}

// dropDeleted returns a copy of rec without the rows ref marks deleted.
func dropDeleted(rec arrow.Record, ref RowGroupRef, mem memory.Allocator) (arrow.Record, error) {
	keep := make([]int32, 0, ref.Rows-ref.Deleted)
	for i := int64(0); i < ref.Rows; i++ {
		if !ref.deleted.has(ref.FirstRow + i) {
			keep = append(keep, int32(i))
		}
	}
	cols := make([]arrow.Array, rec.NumCols())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, c := range rec.Columns() {
		arr, err := takeRows(c, keep, mem)
		if err != nil {
			return nil, err
		}
		cols[i] = arr
	}
	return array.NewRecord(rec.Schema(), cols, int64(len(keep))), nil
}

// takeRows copies the rows at the given (ascending) indexes of a storable column.
func takeRows(arr arrow.Array, idx []int32, mem memory.Allocator) (arrow.Array, error) {
	d := arr.Data()
	off := d.Offset()
	n := len(idx)
	var valid *memory.Buffer
	nulls := 0
	if arr.NullN() > 0 {
		valid = memory.NewResizableBuffer(mem)
		valid.Resize(int(bitutil.BytesForBits(int64(n))))
		vb := valid.Bytes()
		clear(vb)
		for j, i := range idx {
			if arr.IsValid(int(i)) {
				bitutil.SetBit(vb, j)
			} else {
				nulls++
			}
		}
	}
	var bufs []*memory.Buffer
	switch a := arr.(type) {
	case *array.String, *array.Binary:
		var offs []int32
		if s, ok := a.(*array.String); ok {
			offs = s.ValueOffsets()
		} else {
			offs = a.(*array.Binary).ValueOffsets()
		}
		src := d.Buffers()[2].Bytes()
		size := 0
		for _, i := range idx {
			size += int(offs[i+1] - offs[i])
		}
		ob := memory.NewResizableBuffer(mem)
		ob.Resize(4 * (n + 1))
		db := memory.NewResizableBuffer(mem)
		db.Resize(size)
		no := arrow.Int32Traits.CastFromBytes(ob.Bytes())
		dst := db.Bytes()
		pos := 0
		no[0] = 0
		for j, i := range idx {
			pos += copy(dst[pos:], src[offs[i]:offs[i+1]])
			no[j+1] = int32(pos)
		}
		bufs = []*memory.Buffer{valid, ob, db}
	case *array.Boolean:
		vb := memory.NewResizableBuffer(mem)
		vb.Resize(int(bitutil.BytesForBits(int64(n))))
		out := vb.Bytes()
		clear(out)
		for j, i := range idx {
			if a.Value(int(i)) {
				bitutil.SetBit(out, j)
			}
		}
		bufs = []*memory.Buffer{valid, vb}
	default:
		fw, ok := arr.DataType().(arrow.FixedWidthDataType)
		if !ok || fw.BitWidth()%8 != 0 {
			return nil, fmt.Errorf("storage: cannot filter a %s column", arr.DataType())
		}
		w := fw.BitWidth() / 8
		src := d.Buffers()[1].Bytes()[off*w:]
		vb := memory.NewResizableBuffer(mem)
		vb.Resize(n * w)
		dst := vb.Bytes()
		for j, i := range idx {
			copy(dst[j*w:(j+1)*w], src[int(i)*w:(int(i)+1)*w])
		}
		bufs = []*memory.Buffer{valid, vb}
	}
	nd := array.NewData(arr.DataType(), n, bufs, nil, nulls, 0)
	releaseBuffers(bufs...)
	defer nd.Release()
	return array.MakeFromData(nd), nil
}
