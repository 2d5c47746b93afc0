package vec

import (
	"bytes"
	"fmt"
	"strconv"
)

// DefaultBatchRows is the number of rows operators put in a batch unless told otherwise:
// large enough to amortise per-batch work, small enough that a batch's columns stay in cache.
const DefaultBatchRows = 1024

// Vec is one column of values. See the package comment for which payload field is used.
//
// A Vec either views memory it does not own (an Arrow array, another Vec's storage) or owns
// recycled buffers (after Prepare, or when used for appending). Kernels only write into a
// Vec they own; Prepare switches a Vec to its own buffers without reallocating them.
type Vec struct {
	Type    Type
	I32     []int32
	I64     []int64
	F64     []float64
	D128    []Int128
	Bool    []bool
	Offsets []int32
	Bytes   []byte
	Nulls   []bool

	own ownBufs
}

// ownBufs are the buffers a Vec reuses across batches.
type ownBufs struct {
	i32   []int32
	i64   []int64
	f64   []float64
	d128  []Int128
	bools []bool
	offs  []int32
	bytes []byte
	nulls []bool
}

// NewVec returns an empty Vec of type t (ready for appending).
func NewVec(t Type) *Vec {
	v := &Vec{Type: t}
	if t.ID == String {
		v.Offsets = []int32{0}
	}
	return v
}

// Prepare makes v's payload an owned slice of n values (contents unspecified; for strings,
// Offsets has n+1 entries, Offsets[0] = 0, and Bytes is empty with its capacity kept) and
// clears Nulls.
func (v *Vec) Prepare(t Type, n int) {
	v.Type = t
	v.Nulls = nil
	switch t.ID {
	case Int32, Date32:
		v.own.i32 = grow(v.own.i32, n)
		v.I32 = v.own.i32[:n]
	case Int64, Decimal64, Datetime:
		v.own.i64 = grow(v.own.i64, n)
		v.I64 = v.own.i64[:n]
	case Float64:
		v.own.f64 = grow(v.own.f64, n)
		v.F64 = v.own.f64[:n]
	case Decimal128:
		v.own.d128 = grow(v.own.d128, n)
		v.D128 = v.own.d128[:n]
	case Bool:
		v.own.bools = grow(v.own.bools, n)
		v.Bool = v.own.bools[:n]
	case String:
		v.own.offs = grow(v.own.offs, n+1)
		v.Offsets = v.own.offs[:n+1]
		v.Offsets[0] = 0
		v.Bytes = v.own.bytes[:0]
	}
}

// grow returns s with capacity for at least n elements, keeping nothing when it must
// reallocate (callers overwrite the contents).
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n, max(n, 2*cap(s)))
}

// PrepareNulls gives v an owned, all-false Nulls of n entries and returns it.
func (v *Vec) PrepareNulls(n int) []bool {
	v.own.nulls = grow(v.own.nulls, n)
	nl := v.own.nulls[:n]
	clear(nl)
	v.Nulls = nl
	return nl
}

// FinishString records that v.Bytes (an owned buffer that string kernels appended to) may
// have been reallocated, so the next Prepare reuses the larger buffer.
func (v *Vec) FinishString() { v.own.bytes = v.Bytes[:0] }

// IsNull reports whether row i is NULL.
func (v *Vec) IsNull(i int) bool { return v.Nulls != nil && v.Nulls[i] }

// String returns row i's bytes (valid while v is).
func (v *Vec) String(i int) []byte { return v.Bytes[v.Offsets[i]:v.Offsets[i+1]] }

// Len is the number of values of an append-mode Vec.
func (v *Vec) Len() int {
	switch v.Type.ID {
	case Int32, Date32:
		return len(v.I32)
	case Int64, Decimal64, Datetime:
		return len(v.I64)
	case Float64:
		return len(v.F64)
	case Decimal128:
		return len(v.D128)
	case Bool:
		return len(v.Bool)
	case String:
		return len(v.Offsets) - 1
	}
	return 0
}

// Reset empties an append-mode Vec, keeping its capacity.
func (v *Vec) Reset() {
	v.I32, v.I64, v.F64, v.D128, v.Bool = v.I32[:0], v.I64[:0], v.F64[:0], v.D128[:0], v.Bool[:0]
	if v.Type.ID == String {
		if cap(v.Offsets) == 0 {
			v.Offsets = []int32{0}
		}
		v.Offsets = v.Offsets[:1]
		v.Offsets[0] = 0
		v.Bytes = v.Bytes[:0]
	}
	v.Nulls = nil
}

// MemSize is the approximate memory footprint of an append-mode Vec's capacity, for memory
// accounting.
func (v *Vec) MemSize() int64 {
	return int64(cap(v.I32))*4 + int64(cap(v.I64))*8 + int64(cap(v.F64))*8 + int64(cap(v.D128))*16 +
		int64(cap(v.Bool)) + int64(cap(v.Offsets))*4 + int64(cap(v.Bytes)) + int64(cap(v.Nulls))
}

// Datum returns row i as a Datum (a slow path for scalar results, tests and debugging).
func (v *Vec) Datum(i int) Datum {
	if v.IsNull(i) {
		return NullDatum(v.Type)
	}
	switch v.Type.ID {
	case Bool:
		return BoolDatum(v.Bool[i])
	case Int32:
		return Int32Datum(v.I32[i])
	case Date32:
		return DateDatum(v.I32[i])
	case Datetime:
		return DatetimeDatum(v.I64[i])
	case Int64:
		return Int64Datum(v.I64[i])
	case Decimal64:
		return Datum{Type: v.Type, Int: v.I64[i]}
	case Decimal128:
		return Datum{Type: v.Type, Int: int64(v.D128[i].Lo), Hi: v.D128[i].Hi}
	case Float64:
		return Float64Datum(v.F64[i])
	case String:
		return StringDatum(string(v.String(i)))
	}
	return NullDatum(v.Type)
}

// AppendText appends row i as MySQL's text protocol shows it (see Datum.AppendText)
// without building a Datum; NULL appends "NULL" (callers that must distinguish NULL check
// IsNull first).
func (v *Vec) AppendText(dst []byte, i int) []byte {
	if v.IsNull(i) {
		return append(dst, "NULL"...)
	}
	switch v.Type.ID {
	case Bool:
		if v.Bool[i] {
			return append(dst, '1')
		}
		return append(dst, '0')
	case Int32:
		return strconv.AppendInt(dst, int64(v.I32[i]), 10)
	case Int64:
		return strconv.AppendInt(dst, v.I64[i], 10)
	case Decimal64:
		return AppendDecimal64(dst, v.I64[i], v.Type.Scale)
	case Decimal128:
		return v.D128[i].AppendDecimal(dst, v.Type.Scale)
	case Float64:
		return AppendFloat(dst, v.F64[i])
	case Date32:
		return AppendDate(dst, v.I32[i])
	case Datetime:
		return AppendDatetime(dst, v.I64[i], -1)
	case String:
		return append(dst, v.String(i)...)
	}
	return dst
}

// Fill makes v an owned vector of n copies of d (a constant's vector).
func (v *Vec) Fill(d Datum, n int) {
	v.Prepare(d.Type, n)
	if d.Null {
		nl := v.PrepareNulls(n)
		for i := range nl {
			nl[i] = true
		}
		if d.Type.ID == String {
			clear(v.Offsets)
		}
		return
	}
	switch d.Type.ID {
	case Bool:
		for i := range v.Bool {
			v.Bool[i] = d.Int != 0
		}
	case Int32, Date32:
		for i := range v.I32 {
			v.I32[i] = int32(d.Int)
		}
	case Int64, Decimal64, Datetime:
		for i := range v.I64 {
			v.I64[i] = d.Int
		}
	case Decimal128:
		x := d.Decimal()
		for i := range v.D128 {
			v.D128[i] = x
		}
	case Float64:
		for i := range v.F64 {
			v.F64[i] = d.Float
		}
	case String:
		// Every row views the same bytes: offsets 0..len for row 0 would break the layout
		// rule (ascending offsets), so the constant is repeated n times.
		for i := 0; i < n; i++ {
			v.Bytes = append(v.Bytes, d.Str...)
			v.Offsets[i+1] = int32(len(v.Bytes))
		}
		v.FinishString()
	}
}

// AppendDatum appends one value to an append-mode Vec. The datum must have v's type.
func (v *Vec) AppendDatum(d Datum) {
	if d.Null {
		v.AppendNull()
		return
	}
	switch v.Type.ID {
	case Bool:
		v.Bool = append(v.Bool, d.Int != 0)
	case Int32, Date32:
		v.I32 = append(v.I32, int32(d.Int))
	case Int64, Decimal64, Datetime:
		v.I64 = append(v.I64, d.Int)
	case Decimal128:
		v.D128 = append(v.D128, d.Decimal())
	case Float64:
		v.F64 = append(v.F64, d.Float)
	case String:
		v.Bytes = append(v.Bytes, d.Str...)
		v.Offsets = append(v.Offsets, int32(len(v.Bytes)))
	}
	if v.Nulls != nil {
		v.Nulls = append(v.Nulls, false)
	}
}

// AppendNull appends a NULL to an append-mode Vec.
func (v *Vec) AppendNull() {
	n := v.Len()
	switch v.Type.ID {
	case Bool:
		v.Bool = append(v.Bool, false)
	case Int32, Date32:
		v.I32 = append(v.I32, 0)
	case Int64, Decimal64, Datetime:
		v.I64 = append(v.I64, 0)
	case Decimal128:
		v.D128 = append(v.D128, Int128{})
	case Float64:
		v.F64 = append(v.F64, 0)
	case String:
		v.Offsets = append(v.Offsets, int32(len(v.Bytes)))
	}
	if v.Nulls == nil {
		v.Nulls = make([]bool, n, max(2*n, 16))
	}
	v.Nulls = append(v.Nulls, true)
}

// AppendFrom appends src's active rows (sel, or 0..n-1 when sel is nil) to an append-mode
// Vec of the same type.
func (v *Vec) AppendFrom(src *Vec, sel []int32, n int) {
	before := v.Len()
	if sel == nil {
		switch v.Type.ID {
		case Bool:
			v.Bool = append(v.Bool, src.Bool[:n]...)
		case Int32, Date32:
			v.I32 = append(v.I32, src.I32[:n]...)
		case Int64, Decimal64, Datetime:
			v.I64 = append(v.I64, src.I64[:n]...)
		case Decimal128:
			v.D128 = append(v.D128, src.D128[:n]...)
		case Float64:
			v.F64 = append(v.F64, src.F64[:n]...)
		case String:
			base := int32(len(v.Bytes)) - src.Offsets[0]
			v.Bytes = append(v.Bytes, src.Bytes[src.Offsets[0]:src.Offsets[n]]...)
			for _, o := range src.Offsets[1 : n+1] {
				v.Offsets = append(v.Offsets, o+base)
			}
		}
	} else {
		switch v.Type.ID {
		case Bool:
			for _, i := range sel {
				v.Bool = append(v.Bool, src.Bool[i])
			}
		case Int32, Date32:
			for _, i := range sel {
				v.I32 = append(v.I32, src.I32[i])
			}
		case Int64, Decimal64, Datetime:
			for _, i := range sel {
				v.I64 = append(v.I64, src.I64[i])
			}
		case Decimal128:
			for _, i := range sel {
				v.D128 = append(v.D128, src.D128[i])
			}
		case Float64:
			for _, i := range sel {
				v.F64 = append(v.F64, src.F64[i])
			}
		case String:
			for _, i := range sel {
				v.Bytes = append(v.Bytes, src.Bytes[src.Offsets[i]:src.Offsets[i+1]]...)
				v.Offsets = append(v.Offsets, int32(len(v.Bytes)))
			}
		}
	}
	v.appendNullsFrom(src, sel, n, before)
}

// appendNullsFrom extends v.Nulls for rows appended from src (before = v's old length).
func (v *Vec) appendNullsFrom(src *Vec, sel []int32, n int, before int) {
	if src.Nulls == nil {
		if v.Nulls != nil {
			k := n
			if sel != nil {
				k = len(sel)
			}
			for ; k > 0; k-- {
				v.Nulls = append(v.Nulls, false)
			}
		}
		return
	}
	if v.Nulls == nil {
		v.Nulls = make([]bool, before, max(2*before, 16))
	}
	if sel == nil {
		v.Nulls = append(v.Nulls, src.Nulls[:n]...)
	} else {
		for _, i := range sel {
			v.Nulls = append(v.Nulls, src.Nulls[i])
		}
	}
}

// Reserve makes room to append n more rows to an append-mode Vec without reallocating
// (for strings, room for n offsets; the bytes grow as they come).
func (v *Vec) Reserve(n int) {
	switch v.Type.ID {
	case Bool:
		v.Bool = reserve(v.Bool, n)
	case Int32, Date32:
		v.I32 = reserve(v.I32, n)
	case Int64, Decimal64, Datetime:
		v.I64 = reserve(v.I64, n)
	case Decimal128:
		v.D128 = reserve(v.D128, n)
	case Float64:
		v.F64 = reserve(v.F64, n)
	case String:
		v.Offsets = reserve(v.Offsets, n)
	}
	if v.Nulls != nil {
		v.Nulls = reserve(v.Nulls, n)
	}
}

func reserve[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	return append(make([]T, 0, len(s)+n), s...)
}

// AppendRow appends src's row i.
func (v *Vec) AppendRow(src *Vec, i int) {
	if src.IsNull(i) {
		v.AppendNull()
		return
	}
	switch v.Type.ID {
	case Bool:
		v.Bool = append(v.Bool, src.Bool[i])
	case Int32, Date32:
		v.I32 = append(v.I32, src.I32[i])
	case Int64, Decimal64, Datetime:
		v.I64 = append(v.I64, src.I64[i])
	case Decimal128:
		v.D128 = append(v.D128, src.D128[i])
	case Float64:
		v.F64 = append(v.F64, src.F64[i])
	case String:
		v.Bytes = append(v.Bytes, src.Bytes[src.Offsets[i]:src.Offsets[i+1]]...)
		v.Offsets = append(v.Offsets, int32(len(v.Bytes)))
	}
	if v.Nulls != nil {
		v.Nulls = append(v.Nulls, false)
	}
}

// Gather makes v an owned dense vector with v[k] = src[idx[k]].
func (v *Vec) Gather(src *Vec, idx []int32) {
	n := len(idx)
	v.Prepare(src.Type, n)
	switch src.Type.ID {
	case Bool:
		out := v.Bool[:n]
		for k, i := range idx {
			out[k] = src.Bool[i]
		}
	case Int32, Date32:
		out := v.I32[:n]
		for k, i := range idx {
			out[k] = src.I32[i]
		}
	case Int64, Decimal64, Datetime:
		out := v.I64[:n]
		for k, i := range idx {
			out[k] = src.I64[i]
		}
	case Decimal128:
		out := v.D128[:n]
		for k, i := range idx {
			out[k] = src.D128[i]
		}
	case Float64:
		out := v.F64[:n]
		for k, i := range idx {
			out[k] = src.F64[i]
		}
	case String:
		b := v.Bytes
		for k, i := range idx {
			b = append(b, src.Bytes[src.Offsets[i]:src.Offsets[i+1]]...)
			v.Offsets[k+1] = int32(len(b))
		}
		v.Bytes = b
		v.FinishString()
	}
	if src.Nulls != nil {
		nl := v.PrepareNulls(n)
		any := false
		for k, i := range idx {
			nl[k] = src.Nulls[i]
			any = any || src.Nulls[i]
		}
		if !any {
			v.Nulls = nil
		}
	}
}

// GatherAt makes v an owned vector of n rows, aligned with a batch of n rows: for each k,
// v[at[k]] = src[idx[k]] (idx[k] < 0 gives NULL); rows not listed in at are NULL. at must
// be ascending. Used to attach build-side columns to probe rows in place.
func (v *Vec) GatherAt(src *Vec, idx []int32, at []int32, n int) {
	v.gatherAt(src, idx, at, n, true)
}

// GatherListedAt is GatherAt for a batch whose selection is at: rows not listed are never
// read, so they are left unspecified rather than NULL, and v has no NULL bitmap unless src
// has one (every idx[k] must be ≥ 0). An inner join's build columns are gathered so: a
// bitmap that only marks the unselected rows would send every consumer down its NULL-aware
// path (hashing and comparing group keys row by row through RowsEqual: Q10's seven group
// keys from the build side).
func (v *Vec) GatherListedAt(src *Vec, idx []int32, at []int32, n int) {
	v.gatherAt(src, idx, at, n, false)
}

func (v *Vec) gatherAt(src *Vec, idx []int32, at []int32, n int, unlistedNull bool) {
	v.Prepare(src.Type, n)
	v.gatherValues(src, idx, at, n)
	if !unlistedNull && src.Nulls == nil {
		return
	}
	nl := v.PrepareNulls(n)
	if unlistedNull {
		for i := range nl {
			nl[i] = true
		}
	}
	allValid := !unlistedNull || len(idx) == n
	for k, i := range idx {
		if i >= 0 {
			null := src.IsNull(int(i))
			nl[at[k]] = null
			allValid = allValid && !null
		} else {
			allValid = false
		}
	}
	if allValid {
		v.Nulls = nil
	}
}

// gatherValues sets v[at[k]] = src[idx[k]] for each idx[k] ≥ 0, and the string offsets of
// every row (empty where nothing is gathered); v is prepared for n rows of src's type.
func (v *Vec) gatherValues(src *Vec, idx []int32, at []int32, n int) {
	switch src.Type.ID {
	case Bool:
		for k, i := range idx {
			if i >= 0 {
				v.Bool[at[k]] = src.Bool[i]
			}
		}
	case Int32, Date32:
		for k, i := range idx {
			if i >= 0 {
				v.I32[at[k]] = src.I32[i]
			}
		}
	case Int64, Decimal64, Datetime:
		for k, i := range idx {
			if i >= 0 {
				v.I64[at[k]] = src.I64[i]
			}
		}
	case Decimal128:
		for k, i := range idx {
			if i >= 0 {
				v.D128[at[k]] = src.D128[i]
			}
		}
	case Float64:
		for k, i := range idx {
			if i >= 0 {
				v.F64[at[k]] = src.F64[i]
			}
		}
	case String:
		b := v.Bytes
		prev := 0
		for k, i := range idx {
			p := int(at[k])
			for ; prev < p; prev++ {
				v.Offsets[prev+1] = int32(len(b))
			}
			if i >= 0 {
				b = append(b, src.Bytes[src.Offsets[i]:src.Offsets[i+1]]...)
			}
			v.Offsets[p+1] = int32(len(b))
			prev = p + 1
		}
		for ; prev < n; prev++ {
			v.Offsets[prev+1] = int32(len(b))
		}
		v.Bytes = b
		v.FinishString()
	}
}

// View makes v a view of rows [start, end) of src (no copy). v must not be written.
func (v *Vec) View(src *Vec, start, end int) {
	v.Type = src.Type
	v.Nulls = nil
	if src.Nulls != nil {
		v.Nulls = src.Nulls[start:end]
	}
	switch src.Type.ID {
	case Bool:
		v.Bool = src.Bool[start:end]
	case Int32, Date32:
		v.I32 = src.I32[start:end]
	case Int64, Decimal64, Datetime:
		v.I64 = src.I64[start:end]
	case Decimal128:
		v.D128 = src.D128[start:end]
	case Float64:
		v.F64 = src.F64[start:end]
	case String:
		v.Offsets = src.Offsets[start : end+1]
		v.Bytes = src.Bytes
	}
}

// Copy makes v an owned dense copy of src's active rows.
func (v *Vec) Copy(src *Vec, sel []int32, n int) {
	if sel != nil {
		v.Gather(src, sel)
		return
	}
	v.Prepare(src.Type, n)
	switch src.Type.ID {
	case Bool:
		copy(v.Bool, src.Bool[:n])
	case Int32, Date32:
		copy(v.I32, src.I32[:n])
	case Int64, Decimal64, Datetime:
		copy(v.I64, src.I64[:n])
	case Decimal128:
		copy(v.D128, src.D128[:n])
	case Float64:
		copy(v.F64, src.F64[:n])
	case String:
		base := src.Offsets[0]
		v.Bytes = append(v.Bytes, src.Bytes[base:src.Offsets[n]]...)
		for k := 1; k <= n; k++ {
			v.Offsets[k] = src.Offsets[k] - base
		}
		v.FinishString()
	}
	if src.Nulls != nil {
		copy(v.PrepareNulls(n), src.Nulls[:n])
	}
}

// RowsEqual reports whether rows i of a and j of b hold the same value (NULL equals NULL).
// Both must have the same type ID. A slow path for tests and rare cases.
func RowsEqual(a *Vec, i int, b *Vec, j int) bool {
	an, bn := a.IsNull(i), b.IsNull(j)
	if an || bn {
		return an == bn
	}
	switch a.Type.ID {
	case Bool:
		return a.Bool[i] == b.Bool[j]
	case Int32, Date32:
		return a.I32[i] == b.I32[j]
	case Int64, Decimal64, Datetime:
		return a.I64[i] == b.I64[j]
	case Decimal128:
		return a.D128[i] == b.D128[j]
	case Float64:
		return a.F64[i] == b.F64[j] || (a.F64[i] != a.F64[i] && b.F64[j] != b.F64[j])
	case String:
		return bytes.Equal(a.String(i), b.String(j))
	}
	return false
}

// Batch is a set of equal-length columns and an optional selection vector.
//
// N is the physical number of rows of every column; Sel, when not nil, lists the active
// rows (ascending, each < N). A batch an operator returns stays valid until that operator's
// next Next call; consumers that need it longer copy it.
type Batch struct {
	Cols []*Vec
	N    int
	Sel  []int32
}

// NewBatch returns an empty batch with one owned Vec per type.
func NewBatch(types []Type) *Batch {
	b := &Batch{Cols: make([]*Vec, len(types))}
	for i, t := range types {
		b.Cols[i] = NewVec(t)
	}
	return b
}

// Len is the number of active rows.
func (b *Batch) Len() int {
	if b.Sel != nil {
		return len(b.Sel)
	}
	return b.N
}

// Types lists the columns' types.
func (b *Batch) Types() []Type {
	out := make([]Type, len(b.Cols))
	for i, c := range b.Cols {
		out[i] = c.Type
	}
	return out
}

// CheckTypes verifies that a batch's columns have the expected types.
func (b *Batch) CheckTypes(want []Type) error {
	if len(b.Cols) != len(want) {
		return fmt.Errorf("vec: batch has %d columns, expected %d", len(b.Cols), len(want))
	}
	for i, c := range b.Cols {
		if c.Type != want[i] {
			return fmt.Errorf("vec: column %d is %s, expected %s", i, c.Type, want[i])
		}
	}
	return nil
}

// Rows calls f with each active row position in order.
func (b *Batch) Rows(f func(i int)) {
	if b.Sel != nil {
		for _, i := range b.Sel {
			f(int(i))
		}
		return
	}
	for i := 0; i < b.N; i++ {
		f(i)
	}
}
