package storage

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// RowIDColumn names the pseudo column a scan may request among its columns: an Int64 that
// identifies each row by its segment and ordinal within the segment — the handle a DELETE
// carries from the scan that found a row to Txn.Delete. No stored column may have this name
// (MySQL, too, reserves _rowid).
const RowIDColumn = "_rowid"

// A row ID packs, from the most significant bit: a zero sign bit, an 8-bit tag the scan's
// caller chooses (a primproc puts its position in the cluster there, so that IDs from
// several primprocs do not collide), a 27-bit segment ID and a 28-bit row ordinal.
const (
	rowIDRowBits = 28
	rowIDSegBits = 27
	rowIDTagBits = 8

	// MaxRowIDSegment and MaxRowIDRow bound what a row ID can name.
	MaxRowIDSegment = 1<<rowIDSegBits - 1
	MaxRowIDRow     = 1<<rowIDRowBits - 1
)

// MakeRowID packs a tag, a segment ID and a row ordinal into a row ID.
func MakeRowID(tag uint8, segment uint64, row int64) (int64, error) {
	if segment > MaxRowIDSegment || row < 0 || row > MaxRowIDRow {
		return 0, fmt.Errorf("storage: segment %d row %d does not fit a row ID (segment ≤ %d, row ≤ %d)", segment, row, MaxRowIDSegment, MaxRowIDRow)
	}
	return int64(tag)<<(rowIDSegBits+rowIDRowBits) | int64(segment)<<rowIDRowBits | row, nil
}

// SplitRowID unpacks a row ID. It fails for a negative ID.
func SplitRowID(id int64) (tag uint8, segment uint64, row int64, err error) {
	if id < 0 {
		return 0, 0, 0, fmt.Errorf("storage: %d is not a row ID", id)
	}
	return uint8(id >> (rowIDSegBits + rowIDRowBits)), uint64(id>>rowIDRowBits) & MaxRowIDSegment, id & MaxRowIDRow, nil
}

// rowIDColumn returns the row IDs of a row group's rows.
func rowIDColumn(tag uint8, ref RowGroupRef, mem memory.Allocator) (arrow.Array, error) {
	first, err := MakeRowID(tag, ref.Segment, ref.FirstRow)
	if err != nil {
		return nil, err
	}
	if _, err := MakeRowID(tag, ref.Segment, ref.FirstRow+ref.Rows-1); err != nil {
		return nil, err
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(ref.Rows) * 8)
	ids := arrow.Int64Traits.CastFromBytes(buf.Bytes())
	for i := range ids {
		ids[i] = first + int64(i)
	}
	d := array.NewData(arrow.PrimitiveTypes.Int64, int(ref.Rows), []*memory.Buffer{nil, buf}, nil, 0, 0)
	buf.Release()
	defer d.Release()
	return array.MakeFromData(d), nil
}

// GroupRowIDs sorts row IDs into per-segment row ordinals for Txn.Delete, checking that
// every ID carries tag.
func GroupRowIDs(ids []int64, tag uint8, into map[uint64][]int64) error {
	for _, id := range ids {
		t, seg, row, err := SplitRowID(id)
		if err != nil {
			return err
		}
		if t != tag {
			return fmt.Errorf("storage: row ID %d belongs to tag %d, not %d", id, t, tag)
		}
		into[seg] = append(into[seg], row)
	}
	return nil
}
