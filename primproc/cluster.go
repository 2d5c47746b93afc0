package primproc

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exec"
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
	perm, err := c.sortedOrder()
	if err != nil {
		return err
	}
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

// sortedOrder returns the buffered rows in cluster-key order (NULLs first, ties in arrival
// order: the sort is stable), by exec's sort of held records.
func (c *clusterer) sortedOrder() ([]exec.RowRef, error) {
	keys := make([]exec.SortKey, len(c.keys))
	for i, k := range c.keys {
		keys[i] = exec.SortKey{Col: k}
	}
	return exec.SortRecords(c.recs, keys)
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
func (g *gatherer) gather(schema *arrow.Schema, perm []exec.RowRef) (arrow.RecordBatch, error) {
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

func (g *gatherer) gatherColumn(dt arrow.DataType, ci int, perm []exec.RowRef) (arrow.Array, error) {
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
			d := srcs[p.Rec()]
			if d.NullN() == 0 || bitutil.BitIsSet(bufBytes(d.Buffers()[0]), d.Offset()+p.Row()) {
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
			d := srcs[p.Rec()]
			if bitutil.BitIsSet(bufBytes(d.Buffers()[1]), d.Offset()+p.Row()) {
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
			so := offsets[p.Rec()]
			o[i] = int32(len(out))
			out = append(out, datas[p.Rec()][so[p.Row()]:so[p.Row()+1]]...)
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
func gatherFixed[T int32 | int64](mem memory.Allocator, srcs []arrow.ArrayData, perm []exec.RowRef) *memory.Buffer {
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
		out[i] = views[p.Rec()][p.Row()]
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
