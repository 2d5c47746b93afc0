package exec

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec/vec"
)

// RowRef names a row of a list of records: the record's index (high 32 bits) and the row
// within it (low 32 bits).
type RowRef uint64

// Rec is the record's index.
func (r RowRef) Rec() int { return int(r >> 32) }

// Row is the row within the record.
func (r RowRef) Row() int { return int(uint32(r)) }

// SortRecords returns every row of recs (of one schema) in the keys' order, as the Sort
// operator orders them (NULLs first ascending), ties in arrival order: it is the sort of
// rows already held as records, without copying them, for a caller that then gathers them
// (primproc clusters each loaded segment by its date this way). One integer-like key without
// NULLs, the common case, is counting-sorted when its values span a range not much wider
// than the rows (dates: a few thousand days), else sorted as (key, position) pairs.
func SortRecords(recs []arrow.RecordBatch, keys []SortKey) ([]RowRef, error) {
	if len(recs) == 0 {
		return nil, nil
	}
	types, err := vec.TypesFromSchema(recs[0].Schema())
	if err != nil {
		return nil, fmt.Errorf("sort records: %w", err)
	}
	order, err := newRowOrder(keys, types)
	if err != nil {
		return nil, fmt.Errorf("sort records: %w", err)
	}
	var n int
	for _, r := range recs {
		n += int(r.NumRows())
	}
	perm := make([]RowRef, 0, n)
	for ri, r := range recs {
		for i := 0; i < int(r.NumRows()); i++ {
			perm = append(perm, RowRef(uint64(ri)<<32|uint64(i)))
		}
	}
	if len(keys) == 1 {
		if ks, ok := intKeys(recs, keys[0].Col, n); ok {
			if keys[0].Desc {
				for i := range ks {
					ks[i] = -ks[i] // within int64: the keys came from 32-bit or decimal64 values
				}
			}
			if !countingSort(ks, perm) {
				pairSort(ks, perm)
			}
			return perm, nil
		}
	}
	views := make([]vec.Batch, len(recs))
	for i, r := range recs {
		if err := views[i].ViewRecord(r, types, 0, int(r.NumRows())); err != nil {
			return nil, fmt.Errorf("sort records: %w", err)
		}
	}
	slices.SortStableFunc(perm, func(a, b RowRef) int {
		return order.compare(views[a.Rec()].Cols, a.Row(), views[b.Rec()].Cols, b.Row())
	})
	return perm, nil
}

// countingSort reorders perm (in arrival order, keys[i] being perm[i]'s key) stably by key
// when the keys' range is at most 4 times their count (plus 1024); it reports whether it
// did.
func countingSort(keys []int64, perm []RowRef) bool {
	if len(keys) == 0 {
		return true
	}
	lo, hi := keys[0], keys[0]
	for _, k := range keys {
		lo, hi = min(lo, k), max(hi, k)
	}
	if span := uint64(hi - lo); hi-lo < 0 || span > 4*uint64(len(keys))+1024 {
		return false
	}
	counts := make([]int, hi-lo+2)
	for _, k := range keys {
		counts[k-lo+1]++
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	src := slices.Clone(perm)
	for i, k := range keys {
		perm[counts[k-lo]] = src[i]
		counts[k-lo]++
	}
	return true
}

// pairSort orders perm stably by keys as (key, position) pairs.
func pairSort(keys []int64, perm []RowRef) {
	type kp struct {
		k int64
		p RowRef
	}
	pairs := make([]kp, len(perm))
	for i := range perm {
		pairs[i] = kp{keys[i], perm[i]}
	}
	slices.SortFunc(pairs, func(a, b kp) int {
		if c := cmp.Compare(a.k, b.k); c != 0 {
			return c
		}
		return cmp.Compare(a.p, b.p)
	})
	for i := range pairs {
		perm[i] = pairs[i].p
	}
}

// intKeys extracts column col of every record as int64s, if it is integer-like (int32,
// date, int64, decimal64) and has no NULLs.
func intKeys(recs []arrow.RecordBatch, col, n int) ([]int64, bool) {
	keys := make([]int64, 0, n)
	var v vec.Vec
	for _, r := range recs {
		a := r.Column(col)
		if a.NullN() > 0 {
			return nil, false
		}
		t, err := vec.FromArrow(a.DataType())
		if err != nil {
			return nil, false
		}
		switch t.ID {
		case vec.Int32, vec.Date32, vec.Int64, vec.Decimal64, vec.Datetime:
		default:
			return nil, false
		}
		if err := v.ViewArrow(t, a, 0, a.Len()); err != nil {
			return nil, false
		}
		if t.ID == vec.Int32 || t.ID == vec.Date32 {
			for _, x := range v.I32 {
				keys = append(keys, int64(x))
			}
		} else {
			keys = append(keys, v.I64...)
		}
	}
	return keys, true
}
