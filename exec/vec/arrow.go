package vec

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// viewSlice reinterprets an Arrow buffer as a typed slice of rows [off, off+n).
func viewSlice[T any](buf *memory.Buffer, off, n int) []T {
	if buf == nil || n == 0 {
		return nil
	}
	b := buf.Bytes()
	var z T
	size := int(unsafe.Sizeof(z))
	all := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/size)
	return all[off : off+n]
}

// ViewArrow makes v a zero-copy view of rows [start, end) of an Arrow array of type t
// (validity and booleans, which Arrow packs as bits, are unpacked into v's own buffers).
// The array must outlive every use of the view.
func (v *Vec) ViewArrow(t Type, arr arrow.Array, start, end int) error {
	data := arr.Data()
	want, err := FromArrow(arr.DataType())
	if err != nil {
		return err
	}
	if want.ID != t.ID || want.Scale != t.Scale {
		return fmt.Errorf("vec: arrow column is %s, expected %s", want, t)
	}
	if end > arr.Len() || start < 0 || start > end {
		return fmt.Errorf("vec: rows [%d,%d) outside an array of %d", start, end, arr.Len())
	}
	v.Type = t
	n := end - start
	off := data.Offset() + start
	bufs := data.Buffers()
	switch t.ID {
	case Int32, Date32:
		v.I32 = viewSlice[int32](bufs[1], off, n)
	case Int64, Decimal64, Datetime:
		v.I64 = viewSlice[int64](bufs[1], off, n)
	case Float64:
		v.F64 = viewSlice[float64](bufs[1], off, n)
	case Decimal128:
		v.D128 = viewSlice[Int128](bufs[1], off, n)
	case Bool:
		v.own.bools = grow(v.own.bools, n)
		out := v.own.bools[:n]
		var bits []byte
		if n > 0 { // an empty array may have no values buffer
			bits = bufs[1].Bytes()
		}
		for i := range out {
			j := off + i
			out[i] = bits[j>>3]&(1<<(j&7)) != 0
		}
		v.Bool = out
	case String:
		v.Offsets = viewSlice[int32](bufs[1], off, n+1)
		if n == 0 && v.Offsets == nil {
			v.Offsets = []int32{0}
		}
		if bufs[2] != nil {
			v.Bytes = bufs[2].Bytes()
		} else {
			v.Bytes = nil
		}
	}
	v.Nulls = nil
	if arr.NullN() > 0 && bufs[0] != nil {
		v.own.nulls = grow(v.own.nulls, n)
		nl := v.own.nulls[:n]
		bits := bufs[0].Bytes()
		anyNull := false
		for i := range nl {
			j := off + i
			nl[i] = bits[j>>3]&(1<<(j&7)) == 0
			anyNull = anyNull || nl[i]
		}
		if anyNull {
			v.Nulls = nl
		}
	}
	return nil
}

// ViewRecord makes b a view of rows [start, end) of rec, whose columns must have the given
// types. b's Vecs are reused.
func (b *Batch) ViewRecord(rec arrow.RecordBatch, types []Type, start, end int) error {
	if int(rec.NumCols()) != len(types) {
		return fmt.Errorf("vec: record has %d columns, expected %d", rec.NumCols(), len(types))
	}
	if len(b.Cols) != len(types) {
		b.Cols = make([]*Vec, len(types))
	}
	for i := range types {
		if b.Cols[i] == nil {
			b.Cols[i] = NewVec(types[i])
		}
		if err := b.Cols[i].ViewArrow(types[i], rec.Column(i), start, end); err != nil {
			return fmt.Errorf("column %d (%s): %w", i, rec.ColumnName(i), err)
		}
	}
	b.N = end - start
	b.Sel = nil
	return nil
}

// RecordBuilder accumulates batches' active rows into Arrow record batches whose buffers
// come from an allocator (a Pool recycles them once the consumer releases the record).
type RecordBuilder struct {
	schema *arrow.Schema
	types  []Type
	alloc  memory.Allocator
	cols   []colBuilder
	rows   int
}

type colBuilder struct {
	t        Type
	validity []byte // nil until the first NULL
	values   []byte // fixed-width values, or string offsets
	data     []byte // string bytes
	nulls    int
}

// NewRecordBuilder returns a builder for records of the given schema; types must match the
// schema's fields.
func NewRecordBuilder(schema *arrow.Schema, types []Type, alloc memory.Allocator) *RecordBuilder {
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	rb := &RecordBuilder{schema: schema, types: types, alloc: alloc, cols: make([]colBuilder, len(types))}
	for i, t := range types {
		rb.cols[i].t = t
	}
	return rb
}

// Rows is the number of rows appended since the last Finish.
func (rb *RecordBuilder) Rows() int { return rb.rows }

// Schema is the records' schema.
func (rb *RecordBuilder) Schema() *arrow.Schema { return rb.schema }

// ensure grows an allocator-owned buffer to at least need bytes, keeping its contents.
// Buffers keep the length Allocate gave them, since Free must receive exactly that slice.
func (rb *RecordBuilder) ensure(b []byte, need int) []byte {
	if len(b) >= need {
		return b
	}
	size := max(need, 2*len(b), 4096)
	nb := rb.alloc.Allocate(size)
	if b != nil {
		copy(nb, b)
		rb.alloc.Free(b)
	}
	return nb
}

// Append adds b's active rows.
func (rb *RecordBuilder) Append(b *Batch) {
	n := b.Len()
	if n == 0 {
		return
	}
	for c := range rb.cols {
		rb.appendCol(&rb.cols[c], b.Cols[c], b.Sel, b.N, n)
	}
	rb.rows += n
}

func (rb *RecordBuilder) appendCol(cb *colBuilder, v *Vec, sel []int32, bn, n int) {
	at := rb.rows
	end := at + n
	w := cb.t.Width()
	switch cb.t.ID {
	case Bool:
		cb.values = rb.ensure(cb.values, (end+7)/8)
		bits := cb.values
		k := at
		if sel == nil {
			for i := 0; i < n; i++ {
				setBit(bits, k, v.Bool[i])
				k++
			}
		} else {
			for _, i := range sel {
				setBit(bits, k, v.Bool[i])
				k++
			}
		}
	case String:
		cb.values = rb.ensure(cb.values, (end+1)*4)
		offs := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(cb.values))), end+1)
		if at == 0 {
			offs[0] = 0
		}
		pos := int(offs[at])
		need := 0
		if sel == nil {
			need = int(v.Offsets[n] - v.Offsets[0])
		} else {
			for _, i := range sel {
				need += int(v.Offsets[i+1] - v.Offsets[i])
			}
		}
		cb.data = rb.ensure(cb.data, pos+need)
		k := at
		if sel == nil {
			copy(cb.data[pos:], v.Bytes[v.Offsets[0]:v.Offsets[n]])
			base := int32(pos) - v.Offsets[0]
			for i := 1; i <= n; i++ {
				offs[k+i] = v.Offsets[i] + base
			}
		} else {
			for _, i := range sel {
				pos += copy(cb.data[pos:], v.Bytes[v.Offsets[i]:v.Offsets[i+1]])
				k++
				offs[k] = int32(pos)
			}
		}
	default:
		cb.values = rb.ensure(cb.values, end*w)
		switch cb.t.ID {
		case Int32, Date32:
			copyTyped(cb.values, at, v.I32, sel, n)
		case Int64, Decimal64, Datetime:
			copyTyped(cb.values, at, v.I64, sel, n)
		case Float64:
			copyTyped(cb.values, at, v.F64, sel, n)
		case Decimal128:
			copyTyped(cb.values, at, v.D128, sel, n)
		}
	}
	if v.Nulls == nil && cb.validity == nil {
		return
	}
	if cb.validity == nil {
		cb.validity = rb.ensure(nil, (end+7)/8)
		for i := 0; i < at; i++ {
			setBit(cb.validity, i, true)
		}
	} else {
		cb.validity = rb.ensure(cb.validity, (end+7)/8)
	}
	k := at
	if sel == nil {
		for i := 0; i < n; i++ {
			valid := !v.IsNull(i)
			setBit(cb.validity, k, valid)
			if !valid {
				cb.nulls++
			}
			k++
		}
	} else {
		for _, i := range sel {
			valid := !v.IsNull(int(i))
			setBit(cb.validity, k, valid)
			if !valid {
				cb.nulls++
			}
			k++
		}
	}
}

func copyTyped[T any](dst []byte, at int, src []T, sel []int32, n int) {
	out := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(dst))), at+n)[at:]
	if sel == nil {
		copy(out, src[:n])
		return
	}
	for k, i := range sel {
		out[k] = src[i]
	}
}

func setBit(bits []byte, i int, v bool) {
	if v {
		bits[i>>3] |= 1 << (i & 7)
	} else {
		bits[i>>3] &^= 1 << (i & 7)
	}
}

// Finish returns the accumulated rows as a record (the caller releases it) and resets the
// builder. With no rows it returns an empty record.
func (rb *RecordBuilder) Finish() arrow.RecordBatch {
	n := rb.rows
	arrs := make([]arrow.Array, len(rb.cols))
	for c := range rb.cols {
		cb := &rb.cols[c]
		var validity *memory.Buffer
		if cb.validity != nil && cb.nulls > 0 {
			validity = rb.wrap(cb.validity, (n+7)/8)
		} else if cb.validity != nil {
			rb.alloc.Free(cb.validity)
		}
		var bufs []*memory.Buffer
		switch cb.t.ID {
		case String:
			if cb.values == nil {
				cb.values = rb.ensure(nil, 4)
				cb.values[0], cb.values[1], cb.values[2], cb.values[3] = 0, 0, 0, 0
			}
			offs := rb.wrap(cb.values, (n+1)*4)
			var data *memory.Buffer
			if cb.data != nil {
				end := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(cb.values))), n+1)[n]
				data = rb.wrap(cb.data, int(end))
			} else {
				data = memory.NewBufferBytes(nil)
			}
			bufs = []*memory.Buffer{validity, offs, data}
		case Bool:
			if cb.values == nil {
				cb.values = rb.ensure(nil, 1)
			}
			bufs = []*memory.Buffer{validity, rb.wrap(cb.values, (n+7)/8)}
		default:
			if cb.values == nil {
				cb.values = rb.ensure(nil, cb.t.Width())
			}
			bufs = []*memory.Buffer{validity, rb.wrap(cb.values, n*cb.t.Width())}
		}
		nulls := 0
		if validity != nil {
			nulls = cb.nulls
		}
		data := array.NewData(cb.t.Arrow(), n, bufs, nil, nulls, 0)
		arrs[c] = array.MakeFromData(data)
		data.Release()
		for _, b := range bufs {
			if b != nil {
				b.Release()
			}
		}
		*cb = colBuilder{t: cb.t}
	}
	rec := array.NewRecordBatch(rb.schema, arrs, int64(n))
	for _, a := range arrs {
		a.Release()
	}
	rb.rows = 0
	return rec
}

// wrap hands an allocator-owned buffer to Arrow; it returns to the allocator when released.
func (rb *RecordBuilder) wrap(b []byte, length int) *memory.Buffer {
	buf := memory.NewBufferWithAllocator(b, rb.alloc)
	buf.ResizeNoShrink(length)
	return buf
}

// Release returns any buffers held for unfinished rows.
func (rb *RecordBuilder) Release() {
	for c := range rb.cols {
		cb := &rb.cols[c]
		for _, b := range [][]byte{cb.validity, cb.values, cb.data} {
			if b != nil {
				rb.alloc.Free(b)
			}
		}
		*cb = colBuilder{t: cb.t}
	}
	rb.rows = 0
}

// RecordBytes is the total size of a record's buffers (the bytes it occupies on the link,
// before framing).
func RecordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, col := range rec.Columns() {
		n += dataBytes(col.Data())
	}
	return n
}

func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	return n
}
