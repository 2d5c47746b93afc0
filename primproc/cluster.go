package primproc

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/storage"
)

// clusterer buffers one segment's worth of a load's rows, sorts them by the cluster key and
// writes them as one segment, so that each row group of the segment covers a narrow range of
// the key and zone maps on it become selective. It holds at most segRows input rows (the
// records are retained, not copied) plus one output row group.
type clusterer struct {
	schema  *arrow.Schema
	keys    []int // column indexes of the cluster key, most significant first
	segRows int64
	outRows int // rows per output record (a row group)
	mem     memory.Allocator

	recs   []arrow.RecordBatch
	rows   int64
	sortNs int64
}

func newClusterer(schema *arrow.Schema, keys []int, segRows int64, outRows int, mem memory.Allocator) *clusterer {
	return &clusterer{schema: schema, keys: keys, segRows: segRows, outRows: max(outRows, 1), mem: mem}
}

// add buffers rec's rows, writing a sorted segment through w each time segRows are held.
func (c *clusterer) add(ctx context.Context, w *storage.TableWriter, rec arrow.RecordBatch) error {
	n := rec.NumRows()
	for off := int64(0); off < n; {
		take := min(n-off, c.segRows-c.rows)
		c.recs = append(c.recs, rec.NewSlice(off, off+take))
		c.rows += take
		off += take
		if c.rows >= c.segRows {
			if err := c.flush(ctx, w); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush sorts the buffered rows and writes them as one segment.
func (c *clusterer) flush(ctx context.Context, w *storage.TableWriter) error {
	defer c.release()
	if c.rows == 0 {
		return nil
	}
	start := time.Now()
	perm := c.sortedOrder()
	c.sortNs += int64(time.Since(start))
	g := newGatherer(c.recs, c.mem)
	for off := 0; off < len(perm); off += c.outRows {
		end := min(off+c.outRows, len(perm))
		t := time.Now()
		out, err := g.gather(c.schema, perm[off:end])
		c.sortNs += int64(time.Since(t))
		if err != nil {
			return err
		}
		err = w.Write(ctx, out)
		out.Release()
		if err != nil {
			return err
		}
	}
	return w.FinishSegment()
}

func (c *clusterer) release() {
	for _, r := range c.recs {
		r.Release()
	}
	c.recs, c.rows = c.recs[:0], 0
}

// rowRef packs a buffered row's record index (high 32 bits) and row (low 32 bits).
type rowRef uint64

func (r rowRef) rec() int { return int(r >> 32) }
func (r rowRef) row() int { return int(uint32(r)) }

// sortedOrder returns the buffered rows in cluster-key order (NULLs first, ties in arrival
// order: the sort is stable).
func (c *clusterer) sortedOrder() []rowRef {
	perm := make([]rowRef, 0, c.rows)
	for ri, r := range c.recs {
		for i := 0; i < int(r.NumRows()); i++ {
			perm = append(perm, rowRef(uint64(ri)<<32|uint64(i)))
		}
	}
	// Fast paths for one integer-like key without NULLs: a counting sort when the keys span
	// a range not much wider than the row count (dates: a few thousand days), else a sort of
	// (key, position) pairs. Both are stable.
	if len(c.keys) == 1 {
		if keys, ok := intKeys(c.recs, c.keys[0], len(perm)); ok {
			if countingSort(keys, perm) {
				return perm
			}
			type kp struct {
				k int64
				p rowRef
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
			return perm
		}
	}
	cmps := make([]func(a, b rowRef) int, len(c.keys))
	for i, k := range c.keys {
		cmps[i] = columnComparator(c.recs, k)
	}
	slices.SortStableFunc(perm, func(a, b rowRef) int {
		for _, f := range cmps {
			if c := f(a, b); c != 0 {
				return c
			}
		}
		return 0
	})
	return perm
}

// countingSort reorders perm (in arrival order, keys[i] being perm[i]'s key) stably by key
// when the keys' range is at most 4 times their count (plus 1024); it reports whether it
// did.
func countingSort(keys []int64, perm []rowRef) bool {
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

// intKeys extracts column col of every record as int64s, if it is integer-like and has no
// NULLs.
func intKeys(recs []arrow.RecordBatch, col, n int) ([]int64, bool) {
	keys := make([]int64, 0, n)
	for _, r := range recs {
		a := r.Column(col)
		if a.NullN() > 0 {
			return nil, false
		}
		switch a := a.(type) {
		case *array.Int32:
			for _, v := range a.Int32Values() {
				keys = append(keys, int64(v))
			}
		case *array.Date32:
			for _, v := range a.Date32Values() {
				keys = append(keys, int64(v))
			}
		case *array.Int64:
			keys = append(keys, a.Int64Values()...)
		case *array.Decimal64:
			for i := 0; i < a.Len(); i++ {
				keys = append(keys, int64(a.Value(i)))
			}
		default:
			return nil, false
		}
	}
	return keys, true
}

// columnComparator compares two buffered rows by one column, NULLs first.
func columnComparator(recs []arrow.RecordBatch, col int) func(a, b rowRef) int {
	arrs := make([]arrow.Array, len(recs))
	for i, r := range recs {
		arrs[i] = r.Column(col)
	}
	nulls := func(a, b rowRef) (int, bool) {
		an, bn := arrs[a.rec()].IsNull(a.row()), arrs[b.rec()].IsNull(b.row())
		switch {
		case an && bn:
			return 0, true
		case an:
			return -1, true
		case bn:
			return 1, true
		}
		return 0, false
	}
	var value func(a, b rowRef) int
	switch arrs[0].(type) {
	case *array.Int32:
		value = func(a, b rowRef) int {
			return cmp.Compare(arrs[a.rec()].(*array.Int32).Value(a.row()), arrs[b.rec()].(*array.Int32).Value(b.row()))
		}
	case *array.Date32:
		value = func(a, b rowRef) int {
			return cmp.Compare(arrs[a.rec()].(*array.Date32).Value(a.row()), arrs[b.rec()].(*array.Date32).Value(b.row()))
		}
	case *array.Int64:
		value = func(a, b rowRef) int {
			return cmp.Compare(arrs[a.rec()].(*array.Int64).Value(a.row()), arrs[b.rec()].(*array.Int64).Value(b.row()))
		}
	case *array.Decimal64:
		value = func(a, b rowRef) int {
			return cmp.Compare(arrs[a.rec()].(*array.Decimal64).Value(a.row()), arrs[b.rec()].(*array.Decimal64).Value(b.row()))
		}
	case *array.Float64:
		value = func(a, b rowRef) int {
			return cmp.Compare(arrs[a.rec()].(*array.Float64).Value(a.row()), arrs[b.rec()].(*array.Float64).Value(b.row()))
		}
	case *array.String:
		value = func(a, b rowRef) int {
			return cmp.Compare(arrs[a.rec()].(*array.String).Value(a.row()), arrs[b.rec()].(*array.String).Value(b.row()))
		}
	case *array.Binary:
		value = func(a, b rowRef) int {
			return cmp.Compare(string(arrs[a.rec()].(*array.Binary).Value(a.row())), string(arrs[b.rec()].(*array.Binary).Value(b.row())))
		}
	case *array.Boolean:
		b2i := func(v bool) int {
			if v {
				return 1
			}
			return 0
		}
		value = func(a, b rowRef) int {
			return cmp.Compare(b2i(arrs[a.rec()].(*array.Boolean).Value(a.row())), b2i(arrs[b.rec()].(*array.Boolean).Value(b.row())))
		}
	default:
		value = func(a, b rowRef) int { return 0 }
	}
	return func(a, b rowRef) int {
		if c, ok := nulls(a, b); ok {
			return c
		}
		return value(a, b)
	}
}

// clusterable reports whether a column type can be a cluster key.
func clusterable(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT32, arrow.DATE32, arrow.INT64, arrow.DECIMAL64, arrow.FLOAT64, arrow.STRING, arrow.BINARY, arrow.BOOL:
		return true
	}
	return false
}

// gatherer copies rows picked from several records (of one schema) into new records.
type gatherer struct {
	recs []arrow.RecordBatch
	mem  memory.Allocator
}

func newGatherer(recs []arrow.RecordBatch, mem memory.Allocator) *gatherer {
	return &gatherer{recs: recs, mem: mem}
}

// gather builds a record of the rows perm names, in that order.
func (g *gatherer) gather(schema *arrow.Schema, perm []rowRef) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for ci, f := range schema.Fields() {
		a, err := g.gatherColumn(f.Type, ci, perm)
		if err != nil {
			return nil, fmt.Errorf("cluster: column %s: %w", f.Name, err)
		}
		cols[ci] = a
	}
	return array.NewRecordBatch(schema, cols, int64(len(perm))), nil
}

func (g *gatherer) gatherColumn(dt arrow.DataType, ci int, perm []rowRef) (arrow.Array, error) {
	n := len(perm)
	srcs := make([]arrow.ArrayData, len(g.recs))
	anyNull := false
	for i, r := range g.recs {
		// The array's NullN, not the data's: a slice's data has an unknown (-1) count until
		// the array computes it.
		anyNull = r.Column(ci).NullN() > 0 || anyNull
		srcs[i] = r.Column(ci).Data()
	}
	var validity *memory.Buffer
	nulls := 0
	if anyNull {
		validity = memory.NewResizableBuffer(g.mem)
		validity.Resize(int(bitutil.BytesForBits(int64(n))))
		bits := validity.Bytes()
		clear(bits)
		for i, p := range perm {
			d := srcs[p.rec()]
			if d.NullN() == 0 || bitutil.BitIsSet(bufBytes(d.Buffers()[0]), d.Offset()+p.row()) {
				bitutil.SetBit(bits, i)
			} else {
				nulls++
			}
		}
	}
	var buffers []*memory.Buffer
	switch dt.ID() {
	case arrow.BOOL:
		vals := memory.NewResizableBuffer(g.mem)
		vals.Resize(int(bitutil.BytesForBits(int64(n))))
		out := vals.Bytes()
		clear(out)
		for i, p := range perm {
			d := srcs[p.rec()]
			if bitutil.BitIsSet(bufBytes(d.Buffers()[1]), d.Offset()+p.row()) {
				bitutil.SetBit(out, i)
			}
		}
		buffers = []*memory.Buffer{validity, vals}
	case arrow.INT32, arrow.DATE32:
		buffers = []*memory.Buffer{validity, gatherFixed[int32](g.mem, srcs, perm)}
	case arrow.INT64, arrow.DECIMAL64, arrow.FLOAT64:
		buffers = []*memory.Buffer{validity, gatherFixed[int64](g.mem, srcs, perm)}
	case arrow.STRING, arrow.BINARY:
		offsets := make([][]int32, len(srcs))
		datas := make([][]byte, len(srcs))
		var srcBytes, srcRows int64
		for i, d := range srcs {
			if d.Len() == 0 {
				continue
			}
			offsets[i] = arrow.Int32Traits.CastFromBytes(bufBytes(d.Buffers()[1]))[d.Offset() : d.Offset()+d.Len()+1]
			datas[i] = bufBytes(d.Buffers()[2])
			srcBytes += int64(offsets[i][d.Len()] - offsets[i][0])
			srcRows += int64(d.Len())
		}
		offs := memory.NewResizableBuffer(g.mem)
		offs.Resize((n + 1) * 4)
		o := arrow.Int32Traits.CastFromBytes(offs.Bytes())
		// One pass: append each row's bytes to a buffer sized for the rows' average length.
		out := make([]byte, 0, srcBytes*int64(n)/max(srcRows, 1)*9/8+64)
		for i, p := range perm {
			so := offsets[p.rec()]
			o[i] = int32(len(out))
			out = append(out, datas[p.rec()][so[p.row()]:so[p.row()+1]]...)
		}
		if len(out) > math.MaxInt32 {
			offs.Release()
			if validity != nil {
				validity.Release()
			}
			return nil, fmt.Errorf("%d bytes of strings in one row group exceed 2 GiB", len(out))
		}
		o[n] = int32(len(out))
		buffers = []*memory.Buffer{validity, offs, memory.NewBufferBytes(out)}
	default:
		if validity != nil {
			validity.Release()
		}
		return nil, fmt.Errorf("type %s cannot be clustered", dt)
	}
	ad := array.NewData(dt, n, buffers, nil, nulls, 0)
	for _, b := range buffers {
		if b != nil {
			b.Release()
		}
	}
	defer ad.Release()
	return array.MakeFromData(ad), nil
}

// gatherFixed copies fixed-width values of type T.
func gatherFixed[T int32 | int64](mem memory.Allocator, srcs []arrow.ArrayData, perm []rowRef) *memory.Buffer {
	var zero T
	width := int(unsafeSizeof(zero))
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(perm) * width)
	out := castSlice[T](buf.Bytes())
	views := make([][]T, len(srcs))
	for i, d := range srcs {
		if d.Len() > 0 {
			views[i] = castSlice[T](bufBytes(d.Buffers()[1]))[d.Offset():]
		}
	}
	for i, p := range perm {
		out[i] = views[p.rec()][p.row()]
	}
	return buf
}

// bufBytes is b's bytes, nil for a nil buffer (an empty array may have none).
func bufBytes(b *memory.Buffer) []byte {
	if b == nil {
		return nil
	}
	return b.Bytes()
}
