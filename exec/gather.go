package exec

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/colinkdb/colink/exec/vec"
)

// This file holds the operators a plan split across processes needs where its parts meet:
// Gather (the merged streams of a fragment running elsewhere), Deferred (records that exist
// only once something has run, such as a broadcast build side), MatchJoin (the end of a
// semi, anti or left join whose build side was the probed one) and CheckUnique (a scalar
// subquery's one-row-per-key rule).

// Gather merges the record streams of a fragment running on several processes into one
// operator. start opens the streams at Init (after whatever they need, such as build sides,
// is ready); done, if set, is called once at Close with the streams, before they are closed,
// so that the caller can collect their statistics. The streams' records must have types.
type Gather struct {
	types     []vec.Type
	batchRows int
	start     func(ctx context.Context) ([]RecordStream, error)
	done      func(streams []RecordStream)

	streams []RecordStream
	merged  *Parallel
	src     *Source
	closed  bool
}

// NewGather returns a Gather over the streams start opens.
func NewGather(types []vec.Type, batchRows int, start func(ctx context.Context) ([]RecordStream, error), done func([]RecordStream)) *Gather {
	return &Gather{types: types, batchRows: batchRows, start: start, done: done}
}

// Types implements Operator.
func (g *Gather) Types() []vec.Type { return g.types }

// Init implements Operator: it opens the streams and starts reading them, each on its own
// goroutine.
func (g *Gather) Init(ctx context.Context) error {
	streams, err := g.start(ctx)
	if err != nil {
		return err
	}
	g.streams = streams
	g.merged = MergeStreams(ctx, streams...)
	g.src = NewSource(g.merged, g.types, g.batchRows)
	return nil
}

// Next implements Operator.
func (g *Gather) Next(ctx context.Context) (*vec.Batch, error) { return g.src.Next(ctx) }

// Close implements Operator: it stops the readers, reports the streams (done) and closes
// them, returning the first stream's error.
func (g *Gather) Close() error {
	if g.closed {
		return nil
	}
	g.closed = true
	if g.src != nil {
		g.src.Close()
	}
	if g.merged != nil {
		g.merged.Close()
	}
	if g.done != nil && g.streams != nil {
		g.done(g.streams)
	}
	var err error
	for _, s := range g.streams {
		c, ok := s.(interface{ Close() error })
		if !ok {
			continue
		}
		if e := c.Close(); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// Deferred reads records that load produces at Init (a broadcast build side, computed once
// per query and shared); the records stay the loader's.
type Deferred struct {
	types     []vec.Type
	batchRows int
	load      func(ctx context.Context) ([]arrow.RecordBatch, error)
	src       *Source
}

// NewDeferred returns an operator over the records load returns.
func NewDeferred(types []vec.Type, batchRows int, load func(ctx context.Context) ([]arrow.RecordBatch, error)) *Deferred {
	return &Deferred{types: types, batchRows: batchRows, load: load}
}

// Types implements Operator.
func (d *Deferred) Types() []vec.Type { return d.types }

// Init implements Operator.
func (d *Deferred) Init(ctx context.Context) error {
	recs, err := d.load(ctx)
	if err != nil {
		return err
	}
	d.src = NewSource(Records(recs...), d.types, d.batchRows)
	return nil
}

// Next implements Operator.
func (d *Deferred) Next(ctx context.Context) (*vec.Batch, error) { return d.src.Next(ctx) }

// Close implements Operator.
func (d *Deferred) Close() error {
	if d.src != nil {
		return d.src.Close()
	}
	return nil
}

// MatchKind is what a MatchJoin emits of the build rows.
type MatchKind uint8

const (
	MatchSemi MatchKind = iota // the build rows that matched
	MatchAnti                  // the build rows that did not
	MatchLeft                  // the input's pairs, then the unmatched build rows with NULLs
)

// MatchJoin finishes a semi, anti or left join that hashed its left side and probed with
// the right: input carries, in column idCol, the row numbers of the build rows that found a
// match (for a left join, the matching pairs, build columns first). The build records (from
// load, at Init) end in a row-number column, which is not emitted. MatchJoin emits the build
// rows that matched (semi), those that did not (anti), or the input's pairs followed by the
// unmatched build rows with NULLs for the probe side's columns (left). types are its output
// types: the build's columns (without the row number), then, for a left join, the probe's.
type MatchJoin struct {
	input      Operator
	kind       MatchKind
	idCol      int
	buildTypes []vec.Type // with the row number last
	types      []vec.Type
	batchRows  int
	load       func(ctx context.Context) (recs []arrow.RecordBatch, rows int64, err error)

	recs    []arrow.RecordBatch
	matched []bool
	nb      int // build columns before the row number

	emitting bool
	rec, pos int
	view     vec.Batch
	out      vec.Batch
	sel      []int32
	nulls    []*vec.Vec
}

// NewMatchJoin returns a MatchJoin (see there).
func NewMatchJoin(input Operator, kind MatchKind, idCol int, buildTypes, types []vec.Type, batchRows int,
	load func(ctx context.Context) ([]arrow.RecordBatch, int64, error)) *MatchJoin {
	return &MatchJoin{input: input, kind: kind, idCol: idCol, buildTypes: buildTypes, types: types,
		batchRows: batchRows, load: load, nb: len(buildTypes) - 1}
}

// Types implements Operator.
func (m *MatchJoin) Types() []vec.Type { return m.types }

// Init implements Operator.
func (m *MatchJoin) Init(ctx context.Context) error {
	recs, rows, err := m.load(ctx)
	if err != nil {
		return err
	}
	m.recs = recs
	m.matched = make([]bool, rows)
	return m.input.Init(ctx)
}

// Next implements Operator.
func (m *MatchJoin) Next(ctx context.Context) (*vec.Batch, error) {
	for !m.emitting {
		b, err := m.input.Next(ctx)
		if err != nil {
			return nil, err
		}
		if b == nil {
			m.emitting = true
			break
		}
		ids := b.Cols[m.idCol].I64
		for _, i := range activeRowsOf(b.Sel, b.N, &m.sel) {
			id := ids[i]
			if id < 0 || id >= int64(len(m.matched)) {
				return nil, fmt.Errorf("match join: build row %d does not exist (the build side has %d)", id, len(m.matched))
			}
			m.matched[id] = true
		}
		if m.kind == MatchLeft {
			m.out.Cols = append(m.out.Cols[:0], b.Cols[:m.idCol]...)
			m.out.Sel, m.out.N = b.Sel, b.N
			return &m.out, nil
		}
	}
	want := m.kind == MatchSemi
	for m.rec < len(m.recs) {
		rec := m.recs[m.rec]
		n := int(rec.NumRows())
		if m.pos >= n {
			m.rec, m.pos = m.rec+1, 0
			continue
		}
		end := min(m.pos+m.batchRows, n)
		if err := m.view.ViewRecord(rec, m.buildTypes, m.pos, end); err != nil {
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
		for k, t := range m.types[m.nb:] {
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

// Close implements Operator.
func (m *MatchJoin) Close() error { return m.input.Close() }

// CheckUnique fails with MySQL's error 1242 if two rows of recs share a value of the key
// columns (a scalar subquery that returns more than one row for an outer row). Rows with a
// NULL key match nothing and are left out. Keys are hashed and compared as every other
// operator's are (hashRows, the hash table's equality).
func CheckUnique(recs []arrow.RecordBatch, types []vec.Type, keys []int) error {
	keyTypes := make([]vec.Type, len(keys))
	for i, k := range keys {
		keyTypes[i] = types[k]
	}
	ht := newHashTable(keyTypes, nil, nil)
	var total int
	for _, rec := range recs {
		total += int(rec.NumRows())
	}
	ht.reserve(total) // allocations per call, not per row: the index, the key columns
	for i, k := range keys {
		if types[k].ID != vec.String {
			continue
		}
		var n int
		for _, rec := range recs {
			n += stringDataLen(rec.Column(k))
		}
		ht.keys[i].Bytes = slices.Grow(ht.keys[i].Bytes, n)
	}
	maxRows := 0
	for _, rec := range recs {
		maxRows = max(maxRows, int(rec.NumRows()))
	}
	var (
		b       vec.Batch
		cols    = make([]*vec.Vec, len(keys))
		scratch probeScratch
		ids     = make([]int32, maxRows)
		rows    = make([]int32, 0, maxRows)
		fresh   = make([]int32, 0, maxRows)
	)
	scratch.prepare(maxRows)
	scratch.toCheck = make([]int32, 0, maxRows)
	for _, rec := range recs {
		n := int(rec.NumRows())
		if err := b.ViewRecord(rec, types, 0, n); err != nil {
			return err
		}
		rows = rows[:0]
	row:
		for i := 0; i < n; i++ {
			for _, k := range keys {
				if b.Cols[k].IsNull(i) {
					continue row
				}
			}
			rows = append(rows, int32(i))
		}
		for i, k := range keys {
			cols[i] = b.Cols[k]
		}
		scratch.prepare(n)
		hashRows(cols, rows, scratch.h, ht.seed)
		fresh = fresh[:0]
		if err := ht.findOrInsert(cols, rows, ids, &scratch, &fresh); err != nil {
			return err
		}
		if len(fresh) != len(rows) {
			return &vec.Error{Code: vec.CodeSubqueryRows, SQLState: "21000", Msg: "Subquery returns more than 1 row"}
		}
	}
	return nil
}

// stringDataLen is the bytes of a string column's values (0 for other columns).
func stringDataLen(a arrow.Array) int {
	if s, ok := a.(*array.String); ok {
		return len(s.ValueBytes())
	}
	return 0
}
