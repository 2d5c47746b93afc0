package physical

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/sql/plan"
)

// ExecOptions tune a run of a plan.
type ExecOptions struct {
	// QueryMemory bounds the memory exemgr's operators and broadcast build sides hold, in
	// bytes (0: unlimited). Going over it fails the query with exec.ErrMemoryLimit.
	QueryMemory int64
	// BatchRows bounds the batches exemgr's operators exchange (default 1024).
	BatchRows int
	// OutputRows bounds the rows of each result record (default 65536).
	OutputRows int
	// Alloc provides the result records' buffers (default: a recycling pool).
	Alloc memory.Allocator
	// Shared, if set, is the budget every query of the daemon draws on together: the
	// query's own budget (QueryMemory) is its child.
	Shared *exec.Budget
	// Threads is how many build sides of one fragment exemgr computes at once (each is a
	// plan of its own, usually another fragment's rows gathered from the primprocs); 1 or
	// less computes them one after the other.
	Threads int
}

// run is the state of one execution of a plan.
type run struct {
	ctx    context.Context
	runner Runner
	opts   ExecOptions
	budget *exec.Budget
	stats  statsCollector

	mu     sync.Mutex
	bcasts map[*Broadcast]*bcastData
}

// bcastData is a broadcast's materialized records.
type bcastData struct {
	recs  []arrow.RecordBatch
	rows  int64
	bytes int64
	acct  *exec.Account
}

// Result streams a plan's result rows.
type Result struct {
	r      *run
	schema *arrow.Schema
	mat    *exec.Materializer
	start  time.Time
	end    time.Time
	closed bool
}

// Execute runs the plan: it computes the parameters (scalar subqueries), then returns the
// result stream. The fragments start when the stream is first read. Close the result, also
// after an error.
func (p *Plan) Execute(ctx context.Context, runner Runner, opts ExecOptions) (*Result, error) {
	if opts.BatchRows <= 0 {
		opts.BatchRows = vec.DefaultBatchRows
	}
	if opts.OutputRows <= 0 {
		opts.OutputRows = 64 * vec.DefaultBatchRows
	}
	if opts.Alloc == nil {
		opts.Alloc = vec.NewPool(0)
	}
	r := &run{ctx: ctx, runner: runner, opts: opts, budget: opts.Shared.Child(opts.QueryMemory, nil),
		bcasts: map[*Broadcast]*bcastData{}}
	res := &Result{r: r, schema: p.Schema, start: time.Now()}
	for _, pg := range p.params {
		if err := r.computeParams(ctx, pg); err != nil {
			res.Close()
			return nil, err
		}
	}
	root, err := p.Root.open(r)
	if err != nil {
		res.Close()
		return nil, err
	}
	res.mat = exec.NewMaterializer(root, p.Schema, opts.OutputRows, opts.Alloc)
	return res, nil
}

// computeParams runs a parameter group's subplan and sets its constants.
func (r *run) computeParams(ctx context.Context, pg *paramGroup) error {
	op, err := pg.node.open(r)
	if err != nil {
		return err
	}
	row, err := exec.SingleRow(ctx, op)
	if err != nil {
		return err
	}
	if row == nil && !pg.single {
		return fmt.Errorf("physical: parameter group %d yielded no row", pg.id)
	}
	for i, slot := range pg.slots {
		d := vec.NullDatum(slot.Value.Type)
		if row != nil {
			d = row[i]
		}
		if d.Type != slot.Value.Type {
			return fmt.Errorf("physical: parameter %s is %s, planned as %s", pg.names[i], d.Type, slot.Value.Type)
		}
		slot.Value = d
	}
	return nil
}

// Schema is the result's schema.
func (res *Result) Schema() *arrow.Schema { return res.schema }

// Next returns the next result record (the caller releases it), or nil at the end.
func (res *Result) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if res.closed {
		return nil, fmt.Errorf("physical: result read after Close")
	}
	rec, err := res.mat.Next(ctx)
	if rec == nil && err == nil && res.end.IsZero() {
		res.end = time.Now()
	}
	return rec, err
}

// Stats returns the run's statistics (complete once the result has been read to its end
// and closed).
func (res *Result) Stats() QueryStats {
	s := res.r.stats.snapshot()
	end := res.end
	if end.IsZero() {
		end = time.Now()
	}
	s.Elapsed = end.Sub(res.start)
	s.PeakMemory = res.r.budget.Peak()
	return s
}

// Close stops the plan's operators and fragments and releases its memory.
func (res *Result) Close() error {
	if res.closed {
		return nil
	}
	res.closed = true
	var err error
	if res.mat != nil {
		err = res.mat.Close()
	}
	if res.end.IsZero() {
		res.end = time.Now()
	}
	r := res.r
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.bcasts {
		for _, rec := range d.recs {
			rec.Release()
		}
		d.acct.Close()
	}
	r.bcasts = nil
	return err
}

// ReadAll reads the result to its end and returns its records (the caller releases them).
func (res *Result) ReadAll(ctx context.Context) ([]arrow.RecordBatch, error) {
	return exec.ReadAll(ctx, res)
}

// broadcast materializes a build side once per run.
func (r *run) broadcast(ctx context.Context, b *Broadcast) (_ *bcastData, err error) {
	// A build side runs on a goroutine of its own, out of reach of the caller's recover:
	// a panic fails the query (1105, stack to the context's logger), not the daemon.
	defer exec.RecoverTo(ctx, fmt.Sprintf("broadcast %d", b.ID), &err)
	r.mu.Lock()
	if d, ok := r.bcasts[b]; ok {
		r.mu.Unlock()
		return d, nil
	}
	r.mu.Unlock()
	op, err := b.Input.open(r)
	if err != nil {
		return nil, err
	}
	in := b.Input.Types()
	m := exec.NewMaterializer(op, vec.SchemaOf(nil, in), r.opts.OutputRows, nil)
	d := &bcastData{acct: r.budget.NewAccount(fmt.Sprintf("broadcast %d", b.ID))}
	// Until d is stored in r.bcasts, a failure (or a panic) releases what d holds.
	stored := false
	defer func() {
		if !stored {
			m.Close()
			for _, rec := range d.recs {
				rec.Release()
			}
			d.acct.Close()
		}
	}()
	for {
		rec, err := m.Next(ctx)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			break
		}
		if b.RowID {
			numbered := withRowNumbers(rec, d.rows)
			rec.Release()
			rec = numbered
		}
		d.recs = append(d.recs, rec)
		d.rows += rec.NumRows()
		d.bytes += vec.RecordBytes(rec)
		if err := d.acct.Resize(d.bytes); err != nil {
			return nil, err
		}
	}
	if err := m.Close(); err != nil {
		return nil, err
	}
	if b.uniqueKeys != nil {
		if err := checkUnique(d.recs, b.types, b.uniqueKeys); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bcasts == nil {
		return nil, fmt.Errorf("physical: broadcast %d computed after the result was closed", b.ID)
	}
	r.bcasts[b] = d
	stored = true
	return d, nil
}

// broadcasts materializes build sides, up to opts.Threads at once. The first failure
// cancels the others and is the one returned.
func (r *run) broadcasts(ctx context.Context, bs []*Broadcast) ([]*bcastData, error) {
	out := make([]*bcastData, len(bs))
	if r.opts.Threads <= 1 || len(bs) < 2 {
		for i, b := range bs {
			d, err := r.broadcast(ctx, b)
			if err != nil {
				return nil, err
			}
			out[i] = d
		}
		return out, nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errs := make([]error, len(bs))
	sem := make(chan struct{}, r.opts.Threads)
	var wg sync.WaitGroup
	for i, b := range bs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], errs[i] = r.broadcast(ctx, b) // broadcast recovers its own panics
			if errs[i] != nil {
				cancel(errs[i])
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// withRowNumbers returns rec with a BIGINT column numbering its rows from first.
func withRowNumbers(rec arrow.RecordBatch, first int64) arrow.RecordBatch {
	n := int(rec.NumRows())
	bld := array.NewInt64Builder(memory.DefaultAllocator)
	defer bld.Release()
	bld.Reserve(n)
	for i := 0; i < n; i++ {
		bld.UnsafeAppend(first + int64(i))
	}
	ids := bld.NewArray()
	defer ids.Release()
	fields := append(append([]arrow.Field(nil), rec.Schema().Fields()...),
		arrow.Field{Name: "row_number", Type: arrow.PrimitiveTypes.Int64})
	cols := append(append([]arrow.Array(nil), rec.Columns()...), ids)
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(n))
}

// checkUnique fails with MySQL's error 1242 if two rows share a value of the key columns
// (a scalar subquery that returns more than one row for an outer row). Rows with a NULL key
// match nothing and are ignored.
//
// It allocates per call, not per row: every row's key is encoded into one arena sized up
// front (fixed-width values as they are, strings length-prefixed, so that no two keys share
// an encoding), and an open-addressing table of twice the row count finds equal keys.
func checkUnique(recs []arrow.RecordBatch, types []vec.Type, keys []int) error {
	var rows, width int
	var b vec.Batch
	for _, rec := range recs {
		n := int(rec.NumRows())
		if err := b.ViewRecord(rec, types, 0, n); err != nil {
			return err
		}
		rows += n
		for _, k := range keys {
			c := b.Cols[k]
			if c.Type.ID == vec.String {
				width += int(c.Offsets[n]-c.Offsets[0]) + n*binary.MaxVarintLen32
			} else {
				width += n * keyWidth(c.Type)
			}
		}
	}
	size := 1
	for size < 2*rows {
		size *= 2
	}
	mask := uint64(size - 1)
	slots := make([]int32, size) // a key's number + 1; 0 is an empty slot
	hashes := make([]uint64, 0, rows)
	ends := make([]int, 0, rows) // key i is arena[ends[i-1]:ends[i]]
	arena := make([]byte, 0, width)
	seed := maphash.MakeSeed()
	for _, rec := range recs {
		if err := b.ViewRecord(rec, types, 0, int(rec.NumRows())); err != nil {
			return err
		}
	row:
		for i := 0; i < b.N; i++ {
			start := len(arena)
			for _, k := range keys {
				c := b.Cols[k]
				if c.IsNull(i) {
					arena = arena[:start]
					continue row
				}
				arena = appendKey(arena, c, i)
			}
			key := arena[start:]
			h := maphash.Bytes(seed, key)
			pos := h & mask
			for ; slots[pos] != 0; pos = (pos + 1) & mask {
				e := slots[pos] - 1
				if hashes[e] != h {
					continue
				}
				from := 0
				if e > 0 {
					from = ends[e-1]
				}
				if bytes.Equal(arena[from:ends[e]], key) {
					return &vec.Error{Code: vec.CodeSubqueryRows, SQLState: "21000", Msg: "Subquery returns more than 1 row"}
				}
			}
			hashes = append(hashes, h)
			ends = append(ends, len(arena))
			slots[pos] = int32(len(ends))
		}
	}
	return nil
}

// keyWidth is the size of a fixed-width value in checkUnique's key encoding.
func keyWidth(t vec.Type) int {
	switch t.ID {
	case vec.Bool:
		return 1
	case vec.Int32, vec.Date32:
		return 4
	case vec.Decimal128:
		return 16
	}
	return 8
}

// appendKey appends row i of c (not NULL) in checkUnique's key encoding. Values of one
// column compare equal exactly when their encodings do (a DOUBLE's -0 is written as 0).
func appendKey(dst []byte, c *vec.Vec, i int) []byte {
	switch c.Type.ID {
	case vec.Bool:
		if c.Bool[i] {
			return append(dst, 1)
		}
		return append(dst, 0)
	case vec.Int32, vec.Date32:
		return binary.LittleEndian.AppendUint32(dst, uint32(c.I32[i]))
	case vec.Int64, vec.Decimal64:
		return binary.LittleEndian.AppendUint64(dst, uint64(c.I64[i]))
	case vec.Decimal128:
		dst = binary.LittleEndian.AppendUint64(dst, c.D128[i].Lo)
		return binary.LittleEndian.AppendUint64(dst, uint64(c.D128[i].Hi))
	case vec.Float64:
		f := c.F64[i]
		if f == 0 {
			f = 0 // -0 = 0
		}
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
	case vec.String:
		s := c.String(i)
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		return append(dst, s...)
	}
	panic(fmt.Sprintf("physical: no key encoding for %s", c.Type))
}

func (n *Gather) open(r *run) (exec.Operator, error) {
	return &gatherOp{g: n, r: r}, nil
}

// gatherOp runs a Gather's fragment: it materializes the build sides, starts the fragment
// on every primproc and merges their streams.
type gatherOp struct {
	g       *Gather
	r       *run
	streams []Stream
	merged  *exec.Parallel
	src     *exec.Source
	bytes   int64 // broadcast bytes per primproc
	closed  bool
}

func (o *gatherOp) Types() []vec.Type { return o.g.types }

func (o *gatherOp) Init(ctx context.Context) error {
	f := o.g.Frag
	builds := make([][]arrow.RecordBatch, len(f.Builds))
	ds, err := o.r.broadcasts(ctx, f.Builds)
	if err != nil {
		return err
	}
	for i, d := range ds {
		builds[i] = d.recs
		o.bytes += d.bytes
	}
	streams, err := o.r.runner.Run(ctx, &f.Exec, builds)
	if err != nil {
		return fmt.Errorf("fragment %d: %w", f.ID, err)
	}
	rs := make([]exec.RecordStream, len(streams))
	for i, s := range streams {
		o.streams = append(o.streams, s)
		rs[i] = s
	}
	o.merged = exec.MergeStreams(ctx, rs...)
	o.src = exec.NewSource(o.merged, o.g.types, o.r.opts.BatchRows)
	return nil
}

func (o *gatherOp) Next(ctx context.Context) (*vec.Batch, error) {
	b, err := o.src.Next(ctx)
	if err != nil {
		return nil, fmt.Errorf("fragment %d: %w", o.g.Frag.ID, err)
	}
	return b, nil
}

func (o *gatherOp) Close() error {
	if o.closed {
		return nil
	}
	o.closed = true
	if o.src != nil {
		o.src.Close()
	}
	if o.merged != nil {
		o.merged.Close()
	}
	fr := FragmentRun{Fragment: o.g.Frag.ID, Table: o.g.Frag.Exec.Scan.Table,
		BytesBroadcast: o.bytes * int64(len(o.streams))}
	var err error
	for _, s := range o.streams {
		fr.Streams = append(fr.Streams, s.Stats())
		rows, batches, bytes := s.Received()
		fr.RowsReceived += rows
		fr.BatchesReceived += batches
		fr.BytesReceived += bytes
		if e := s.Close(); e != nil && err == nil {
			err = e
		}
	}
	if o.streams != nil {
		o.r.stats.addFragment(fr)
	}
	return err
}

func (n *MatchJoin) open(r *run) (exec.Operator, error) {
	in, err := n.Input.open(r)
	if err != nil {
		return nil, err
	}
	return &matchJoinOp{n: n, r: r, input: in, nb: len(n.Build.types) - 1}, nil
}

// matchJoinOp runs a MatchJoin; see there.
type matchJoinOp struct {
	n       *MatchJoin
	r       *run
	input   exec.Operator
	data    *bcastData
	matched []bool
	nb      int // build columns before the row number

	emitting bool
	rec, pos int
	view     vec.Batch
	out      vec.Batch
	sel      []int32
	nulls    []*vec.Vec
}

func (m *matchJoinOp) Types() []vec.Type { return m.n.types }

func (m *matchJoinOp) Init(ctx context.Context) error {
	d, err := m.r.broadcast(ctx, m.n.Build)
	if err != nil {
		return err
	}
	m.data = d
	m.matched = make([]bool, d.rows)
	return m.input.Init(ctx)
}

func (m *matchJoinOp) Next(ctx context.Context) (*vec.Batch, error) {
	for !m.emitting {
		b, err := m.input.Next(ctx)
		if err != nil {
			return nil, err
		}
		if b == nil {
			m.emitting = true
			break
		}
		ids := b.Cols[m.n.IDCol].I64
		if b.Sel != nil {
			for _, i := range b.Sel {
				m.matched[ids[i]] = true
			}
		} else {
			for _, id := range ids[:b.N] {
				m.matched[id] = true
			}
		}
		if m.n.Kind == plan.LeftJoin {
			m.out.Cols = append(m.out.Cols[:0], b.Cols[:m.n.IDCol]...)
			m.out.Sel, m.out.N = b.Sel, b.N
			return &m.out, nil
		}
	}
	want := m.n.Kind == plan.SemiJoin
	for m.rec < len(m.data.recs) {
		rec := m.data.recs[m.rec]
		n := int(rec.NumRows())
		if m.pos >= n {
			m.rec, m.pos = m.rec+1, 0
			continue
		}
		end := min(m.pos+m.r.opts.BatchRows, n)
		if err := m.view.ViewRecord(rec, m.n.Build.types, m.pos, end); err != nil {
			return nil, err
		}
		m.pos = end
		ids := m.view.Cols[m.nb].I64
		m.sel = m.sel[:0]
		for i := 0; i < m.view.N; i++ {
			if m.matched[ids[i]] == want {
				m.sel = append(m.sel, int32(i))
			}
		}
		if len(m.sel) == 0 {
			continue
		}
		m.out.Cols = append(m.out.Cols[:0], m.view.Cols[:m.nb]...)
		for k, t := range m.n.types[m.nb:] {
			if k >= len(m.nulls) {
				m.nulls = append(m.nulls, &vec.Vec{})
			}
			m.out.Cols = append(m.out.Cols, nullVec(m.nulls[k], t, m.view.N))
		}
		m.out.Sel, m.out.N = m.sel, m.view.N
		return &m.out, nil
	}
	return nil, nil
}

func (m *matchJoinOp) Close() error { return m.input.Close() }

// nullVec makes v a vector of n NULLs of type t.
func nullVec(v *vec.Vec, t vec.Type, n int) *vec.Vec {
	v.Prepare(t, n)
	if t.ID == vec.String {
		clear(v.Offsets)
	}
	nl := v.PrepareNulls(n)
	for i := range nl {
		nl[i] = true
	}
	return v
}

func (n *BroadcastScan) open(r *run) (exec.Operator, error) {
	return &broadcastScanOp{n: n, r: r}, nil
}

// broadcastScanOp reads a broadcast's records, materializing them at Init.
type broadcastScanOp struct {
	n   *BroadcastScan
	r   *run
	src *exec.Source
}

func (o *broadcastScanOp) Types() []vec.Type { return o.n.B.types }

func (o *broadcastScanOp) Init(ctx context.Context) error {
	d, err := o.r.broadcast(ctx, o.n.B)
	if err != nil {
		return err
	}
	o.src = exec.NewSource(exec.Records(d.recs...), o.n.B.types, o.r.opts.BatchRows)
	return nil
}

func (o *broadcastScanOp) Next(ctx context.Context) (*vec.Batch, error) { return o.src.Next(ctx) }

func (o *broadcastScanOp) Close() error {
	if o.src != nil {
		return o.src.Close()
	}
	return nil
}
