package tpch

import (
	"encoding/binary"
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// This file builds Arrow record batches from generated rows, writing column values straight
// into buffers that a recycling allocator hands out and takes back when a batch is released.

// recycler is a memory.Allocator that keeps freed buffers, by power-of-two capacity, for
// the next batch: generating a table allocates its batch buffers once, not once per batch.
// It returns zeroed, 64-byte aligned memory, as memory.GoAllocator does, and keeps at most
// limit bytes of freed buffers.
type recycler struct {
	mu    sync.Mutex
	free  [48][][]byte // by log2 of capacity
	held  int          // bytes in free
	limit int
	fresh int // buffers taken from the Go allocator, for tests
}

func newRecycler(limit int) *recycler { return &recycler{limit: limit} }

const bufAlign = 64

func sizeClass(n int) int {
	if n <= bufAlign {
		return 6
	}
	return bits.Len(uint(n - 1))
}

func (r *recycler) Allocate(n int) []byte {
	b := r.allocateRaw(n)
	clear(b)
	return b
}

// allocateRaw is Allocate without zeroing a recycled buffer, for callers that overwrite
// every byte they use.
func (r *recycler) allocateRaw(n int) []byte {
	c := sizeClass(n)
	r.mu.Lock()
	if k := len(r.free[c]); k > 0 {
		b := r.free[c][k-1]
		r.free[c] = r.free[c][:k-1]
		r.held -= cap(b)
		r.mu.Unlock()
		return b[:n]
	}
	r.fresh++
	r.mu.Unlock()
	raw := make([]byte, 1<<c+bufAlign)
	off := 0
	if rem := int(uintptrOf(raw) % bufAlign); rem != 0 {
		off = bufAlign - rem
	}
	return raw[off : off+n : off+1<<c]
}

func (r *recycler) Reallocate(n int, b []byte) []byte {
	if n <= cap(b) {
		old := len(b)
		b = b[:n]
		if n > old {
			clear(b[old:])
		}
		return b
	}
	nb := r.Allocate(n)
	copy(nb, b)
	r.Free(b)
	return nb
}

func (r *recycler) Free(b []byte) {
	c := bits.Len(uint(cap(b))) - 1
	if cap(b) != 1<<c || c < 6 || c >= len(r.free) {
		return // not one of ours; let the garbage collector have it
	}
	r.mu.Lock()
	if r.held+cap(b) <= r.limit {
		r.free[c] = append(r.free[c], b[:0])
		r.held += cap(b)
	}
	r.mu.Unlock()
}

// column is one column of a batch under construction. Its buffers come from the builder's
// allocator through memory.Buffer, so that whatever allocator a caller supplies sees the
// usual Allocate/Reallocate/Free pairs.
type column struct {
	width   int            // bytes per value of a fixed-width column; 0 for strings
	vals    *memory.Buffer // fixed-width values, or int32 offsets for strings
	data    *memory.Buffer // string bytes
	valsB   []byte         // vals.Buf()
	dataB   []byte         // data.Buf()
	dataLen int
	maxLen  int // expected bytes per value of a string column, to size data
}

// batchBuilder accumulates rows of one table into Arrow buffers.
type batchBuilder struct {
	mem     memory.Allocator
	table   tableID
	schema  *arrow.Schema
	cols    []column
	rows    int
	maxRows int
	started bool
	fmt     tblFormatter
	scratch []byte
}

func newBatchBuilder(t tableID, maxRows int, mem memory.Allocator) *batchBuilder {
	def, _ := LookupTable(t.String())
	b := &batchBuilder{mem: mem, table: t, schema: def.ArrowSchema(), maxRows: maxRows,
		fmt: newTblFormatter()}
	b.cols = make([]column, len(def.Columns))
	for i, c := range def.Columns {
		switch c.Type.Kind {
		case KindInt32, KindDate:
			b.cols[i].width = 4
		case KindInt64, KindDecimal:
			b.cols[i].width = 8
		case KindChar:
			b.cols[i].maxLen = c.Type.Length
		default:
			// Generated VARCHAR values average 5/8 of the declared length (dbgen draws
			// lengths uniformly from 0.4 to 1.6 times the mean); a batch's total stays
			// close to that, and str grows the buffer in the rare batch that needs more.
			b.cols[i].maxLen = c.Type.Length*11/16 + 1
		}
	}
	return b
}

func (b *batchBuilder) start() {
	for i := range b.cols {
		c := &b.cols[i]
		c.vals = memory.NewResizableBuffer(b.mem)
		if c.width > 0 {
			c.vals.Reserve(b.maxRows * c.width)
		} else {
			c.vals.Reserve((b.maxRows + 1) * 4)
			c.data = memory.NewResizableBuffer(b.mem)
			c.data.Reserve(b.maxRows * c.maxLen)
			c.dataB = c.data.Buf()
			c.dataLen = 0
		}
		c.valsB = c.vals.Buf()
	}
	b.rows = 0
	b.started = true
}

func (b *batchBuilder) i64(c int, v int64) {
	binary.LittleEndian.PutUint64(b.cols[c].valsB[b.rows*8:], uint64(v))
}

func (b *batchBuilder) i32(c int, v int64) {
	binary.LittleEndian.PutUint32(b.cols[c].valsB[b.rows*4:], uint32(int32(v)))
}

func (b *batchBuilder) date(c int, day int32) { b.i32(c, int64(day)+epochTo1992) }

func (b *batchBuilder) str(c int, s []byte) {
	col := &b.cols[c]
	if col.dataLen+len(s) > len(col.dataB) {
		col.data.Reserve(2*len(col.dataB) + len(s))
		col.dataB = col.data.Buf()
	}
	col.dataLen += copy(col.dataB[col.dataLen:], s)
	binary.LittleEndian.PutUint32(col.valsB[(b.rows+1)*4:], uint32(col.dataLen))
}

// full reports whether a unit of n more rows would not fit.
func (b *batchBuilder) full(n int) bool { return b.started && b.rows+n > b.maxRows }

// add appends the unit's rows of the builder's table.
func (b *batchBuilder) add(u *unit) {
	if !b.started {
		b.start()
	}
	d := b.fmt.d
	switch b.table {
	case tPart:
		p := &u.part
		b.i64(0, p.key)
		s := b.scratch[:0]
		for i, c := range p.name {
			if i > 0 {
				s = append(s, ' ')
			}
			s = append(s, d.colors.bytes[c]...)
		}
		b.str(1, s)
		s = appendInt(append(s[:0], "Manufacturer#"...), p.mfgr)
		b.str(2, s)
		s = appendInt(append(s[:0], "Brand#"...), p.brand)
		b.str(3, s)
		b.str(4, d.pTypes.bytes[p.typ])
		b.i32(5, p.size)
		b.str(6, d.pCntr.bytes[p.container])
		b.i64(7, p.retail)
		b.str(8, p.comment)
		b.scratch = s
		b.rows++
	case tPartsupp:
		for i := range u.part.ps {
			ps := &u.part.ps[i]
			b.i64(0, ps.partKey)
			b.i64(1, ps.suppKey)
			b.i32(2, ps.qty)
			b.i64(3, ps.cost)
			b.str(4, ps.comment)
			b.rows++
		}
	case tSupplier:
		s := &u.supp
		b.i64(0, s.key)
		b.scratch = appendPadded(append(b.scratch[:0], "Supplier#"...), s.key, 9)
		b.str(1, b.scratch)
		b.str(2, s.address)
		b.i32(3, s.nation)
		b.str(4, s.phone[:])
		b.i64(5, s.acctbal)
		b.str(6, s.comment)
		b.rows++
	case tCustomer:
		c := &u.cust
		b.i64(0, c.key)
		b.scratch = appendPadded(append(b.scratch[:0], "Customer#"...), c.key, 9)
		b.str(1, b.scratch)
		b.str(2, c.address)
		b.i32(3, c.nation)
		b.str(4, c.phone[:])
		b.i64(5, c.acctbal)
		b.str(6, d.mseg.bytes[c.segment])
		b.str(7, c.comment)
		b.rows++
	case tOrders:
		o := &u.order
		b.i64(0, o.key)
		b.i64(1, o.custKey)
		b.str(2, []byte{o.status})
		b.i64(3, o.total)
		b.date(4, o.date)
		b.str(5, d.oPrio.bytes[o.priority])
		b.scratch = appendPadded(append(b.scratch[:0], "Clerk#"...), o.clerk, 9)
		b.str(6, b.scratch)
		b.i32(7, 0)
		b.str(8, o.comment)
		b.rows++
	case tLineitem:
		o := &u.order
		for i := 0; i < o.lines; i++ {
			l := &o.line[i]
			b.i64(0, l.orderKey)
			b.i64(1, l.partKey)
			b.i64(2, l.suppKey)
			b.i32(3, l.number)
			b.i64(4, l.qty*100)
			b.i64(5, l.price)
			b.i64(6, l.discount)
			b.i64(7, l.tax)
			b.str(8, []byte{l.returnFlag})
			b.str(9, []byte{l.status})
			b.date(10, l.shipDate)
			b.date(11, l.commitDate)
			b.date(12, l.receiptDate)
			b.str(13, d.instruct.bytes[l.instruct])
			b.str(14, d.smode.bytes[l.mode])
			b.str(15, l.comment)
			b.rows++
		}
	case tNation:
		n := &u.nation
		b.i32(0, n.key)
		b.str(1, d.nations.bytes[n.key])
		b.i32(2, n.region)
		b.str(3, n.comment)
		b.rows++
	case tRegion:
		r := &u.region
		b.i32(0, r.key)
		b.str(1, d.regions.bytes[r.key])
		b.str(2, r.comment)
		b.rows++
	}
}

// finish returns the batch built so far (nil if it has no rows) and starts a new one on the
// next add. The batch owns its buffers; releasing it frees them to the allocator.
func (b *batchBuilder) finish() arrow.RecordBatch {
	if !b.started || b.rows == 0 {
		return nil
	}
	arrs := make([]arrow.Array, len(b.cols))
	for i := range b.cols {
		c := &b.cols[i]
		var bufs []*memory.Buffer
		if c.width > 0 {
			c.vals.ResizeNoShrink(b.rows * c.width)
			bufs = []*memory.Buffer{nil, c.vals}
		} else {
			c.vals.ResizeNoShrink((b.rows + 1) * 4)
			c.data.ResizeNoShrink(c.dataLen)
			bufs = []*memory.Buffer{nil, c.vals, c.data}
		}
		data := array.NewData(b.schema.Field(i).Type, b.rows, bufs, nil, 0, 0)
		for _, buf := range bufs[1:] {
			buf.Release() // data holds them now
		}
		arrs[i] = array.MakeFromData(data)
		data.Release()
		c.vals, c.data, c.valsB, c.dataB = nil, nil, nil, nil
	}
	rec := array.NewRecordBatch(b.schema, arrs, int64(b.rows))
	for _, a := range arrs {
		a.Release()
	}
	b.started = false
	b.rows = 0
	return rec
}

// discard frees the buffers of an unfinished batch.
func (b *batchBuilder) discard() {
	if !b.started {
		return
	}
	for i := range b.cols {
		c := &b.cols[i]
		if c.vals != nil {
			c.vals.Release()
		}
		if c.data != nil {
			c.data.Release()
		}
		c.vals, c.data, c.valsB, c.dataB = nil, nil, nil, nil
	}
	b.started = false
}
