package vec

// Helpers for kernels that write a Vec they own (after Prepare), shared by exec/expr's
// operators and exec/fn's functions.

// StringWriter appends a string Vec's values in ascending row order, giving each row it
// skips the empty string, so that the offsets stay in Arrow layout (a skipped row is NULL
// or not computed; its payload is unspecified).
type StringWriter struct {
	v    *Vec
	next int
}

// Begin starts writing v, prepared as a string Vec.
func (w *StringWriter) Begin(v *Vec) { w.v, w.next = v, 0 }

// Gap closes every row before i as empty.
func (w *StringWriter) Gap(i int) {
	o := w.v.Offsets
	l := int32(len(w.v.Bytes))
	for ; w.next < i; w.next++ {
		o[w.next+1] = l
	}
}

// Put appends row i's value.
func (w *StringWriter) Put(i int32, s []byte) {
	w.Gap(int(i))
	w.v.Bytes = append(w.v.Bytes, s...)
	w.v.Offsets[i+1] = int32(len(w.v.Bytes))
	w.next = int(i) + 1
}

// End records that row i's bytes were appended to v.Bytes directly (after Gap(i)).
func (w *StringWriter) End(i int32) {
	w.v.Offsets[i+1] = int32(len(w.v.Bytes))
	w.next = int(i) + 1
}

// Finish closes the rows up to n and keeps the grown buffer for the next Prepare.
func (w *StringWriter) Finish(n int) {
	w.Gap(n)
	w.v.FinishString()
}

// SetNull marks row i NULL, giving v an all-false Nulls of n entries first if it has none.
func (v *Vec) SetNull(n int, i int32) {
	if v.Nulls == nil {
		v.PrepareNulls(n)
	}
	v.Nulls[i] = true
}

// CopyRows copies the listed rows of src to dst.
func CopyRows[T any](dst, src []T, rows []int32) {
	for _, i := range rows {
		dst[i] = src[i]
	}
}

// RowsFitPrecision64 reports whether every listed value of o has at most p digits (unscaled
// Decimal64 values).
func RowsFitPrecision64(o []int64, rows []int32, p int32) bool {
	lim := Pow10Int64(p)
	var bad bool
	for _, i := range rows {
		v := o[i]
		bad = bad || v >= lim || v <= -lim
	}
	return !bad
}
