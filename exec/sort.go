package exec

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/colinkdb/colink/exec/vec"
)

// SortKey orders by column Col, descending when Desc. NULLs sort as MySQL sorts them: as
// the smallest value (first ascending, last descending).
type SortKey struct {
	Col  int  `msgpack:"col"`
	Desc bool `msgpack:"desc,omitempty"`
}

// valueCmp compares row i of a with row j of b (same type).
type valueCmp func(a *vec.Vec, i int, b *vec.Vec, j int) int

func cmpOrdered[T int32 | int64 | float64](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func comparatorFor(t vec.Type) (valueCmp, error) {
	var cmp valueCmp
	switch t.ID {
	case vec.Int32, vec.Date32:
		cmp = func(a *vec.Vec, i int, b *vec.Vec, j int) int { return cmpOrdered(a.I32[i], b.I32[j]) }
	case vec.Int64, vec.Decimal64:
		cmp = func(a *vec.Vec, i int, b *vec.Vec, j int) int { return cmpOrdered(a.I64[i], b.I64[j]) }
	case vec.Float64:
		cmp = func(a *vec.Vec, i int, b *vec.Vec, j int) int { return cmpOrdered(a.F64[i], b.F64[j]) }
	case vec.Decimal128:
		cmp = func(a *vec.Vec, i int, b *vec.Vec, j int) int { return a.D128[i].Cmp(b.D128[j]) }
	case vec.String:
		cmp = func(a *vec.Vec, i int, b *vec.Vec, j int) int { return bytes.Compare(a.String(i), b.String(j)) }
	case vec.Bool:
		cmp = func(a *vec.Vec, i int, b *vec.Vec, j int) int { return int(b2u8(a.Bool[i])) - int(b2u8(b.Bool[j])) }
	default:
		return nil, fmt.Errorf("cannot order by %s", t)
	}
	return func(a *vec.Vec, i int, b *vec.Vec, j int) int {
		an, bn := a.IsNull(i), b.IsNull(j)
		if an || bn {
			switch {
			case an && bn:
				return 0
			case an:
				return -1
			}
			return 1
		}
		return cmp(a, i, b, j)
	}, nil
}

// rowOrder compares rows by a list of sort keys.
type rowOrder struct {
	keys []SortKey
	cmps []valueCmp
}

func newRowOrder(keys []SortKey, types []vec.Type) (*rowOrder, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("no sort keys")
	}
	o := &rowOrder{keys: keys}
	for _, k := range keys {
		if k.Col < 0 || k.Col >= len(types) {
			return nil, fmt.Errorf("sort key column #%d does not exist (input has %d columns)", k.Col, len(types))
		}
		c, err := comparatorFor(types[k.Col])
		if err != nil {
			return nil, err
		}
		o.cmps = append(o.cmps, c)
	}
	return o, nil
}

// compare orders row i of columns a against row j of columns b.
func (o *rowOrder) compare(a []*vec.Vec, i int, b []*vec.Vec, j int) int {
	for k, key := range o.keys {
		c := o.cmps[k](a[key.Col], i, b[key.Col], j)
		if c != 0 {
			if key.Desc {
				return -c
			}
			return c
		}
	}
	return 0
}

// rowStore buffers rows column-wise (append-mode vectors).
type rowStore struct {
	types []vec.Type
	cols  []*vec.Vec
}

func newRowStore(types []vec.Type) *rowStore {
	s := &rowStore{types: types}
	for _, t := range types {
		s.cols = append(s.cols, vec.NewVec(t))
	}
	return s
}

func (s *rowStore) len() int {
	if len(s.cols) == 0 {
		return 0
	}
	return s.cols[0].Len()
}

func (s *rowStore) appendBatch(b *vec.Batch) {
	for c, v := range s.cols {
		v.AppendFrom(b.Cols[c], b.Sel, b.N)
	}
}

func (s *rowStore) appendRow(cols []*vec.Vec, i int) {
	for c, v := range s.cols {
		v.AppendRow(cols[c], i)
	}
}

func (s *rowStore) memSize() int64 {
	var n int64
	for _, c := range s.cols {
		n += c.MemSize()
	}
	return n
}

// emitter hands out rows of a rowStore in a given order, a batch at a time.
type emitter struct {
	order []int32
	pos   int
	out   vec.Batch
	vecs  []*vec.Vec
}

func (e *emitter) next(s *rowStore, batchRows int) *vec.Batch {
	if e.pos >= len(e.order) {
		return nil
	}
	end := min(e.pos+batchRows, len(e.order))
	idx := e.order[e.pos:end]
	e.pos = end
	if e.vecs == nil {
		for range s.cols {
			e.vecs = append(e.vecs, &vec.Vec{})
		}
	}
	for c, v := range e.vecs {
		v.Gather(s.cols[c], idx)
	}
	e.out = vec.Batch{Cols: e.vecs, N: len(idx)}
	return &e.out
}

// Sort orders its whole input (buffered, charged to the budget).
type Sort struct {
	input     Operator
	order     *rowOrder
	acct      *Account
	store     *rowStore
	batchRows int
	sorted    bool
	em        emitter
}

// NewSort sorts input by keys.
func NewSort(input Operator, keys []SortKey, budget *Budget) (*Sort, error) {
	o, err := newRowOrder(keys, input.Types())
	if err != nil {
		return nil, fmt.Errorf("sort: %w", err)
	}
	return &Sort{input: input, order: o, acct: budget.NewAccount("sort"), store: newRowStore(input.Types()),
		batchRows: vec.DefaultBatchRows}, nil
}

// Types implements Operator.
func (s *Sort) Types() []vec.Type { return s.input.Types() }

// Init implements Operator.
func (s *Sort) Init(ctx context.Context) error { return s.input.Init(ctx) }

// Next implements Operator.
func (s *Sort) Next(ctx context.Context) (*vec.Batch, error) {
	if !s.sorted {
		s.sorted = true
		for {
			b, err := s.input.Next(ctx)
			if err != nil {
				return nil, err
			}
			if b == nil {
				break
			}
			s.store.appendBatch(b)
			if err := s.acct.Resize(s.store.memSize()); err != nil {
				return nil, err
			}
		}
		n := s.store.len()
		perm := make([]int32, n)
		for i := range perm {
			perm[i] = int32(i)
		}
		if err := s.acct.Resize(s.store.memSize() + int64(n)*4); err != nil {
			return nil, err
		}
		cols := s.store.cols
		slices.SortStableFunc(perm, func(a, b int32) int { return s.order.compare(cols, int(a), cols, int(b)) })
		s.em.order = perm
	}
	return s.em.next(s.store, s.batchRows), nil
}

// Close implements Operator.
func (s *Sort) Close() error {
	s.acct.Close()
	return s.input.Close()
}

// TopN keeps the first Offset+Limit rows of its input in sort order (a heap whose top is
// the worst row kept) and emits rows [Offset, Offset+Limit) of them, sorted. As a partial
// top-N (Offset 0) it runs on every primproc; exemgr's final TopN merges their outputs.
type TopN struct {
	input     Operator
	order     *rowOrder
	limit     int64
	offset    int64
	acct      *Account
	store     *rowStore
	heap      []int32 // slots in store
	batchRows int
	ident     []int32
	done      bool
	em        emitter
}

// NewTopN returns the top-N operator.
func NewTopN(input Operator, keys []SortKey, limit, offset int64, budget *Budget) (*TopN, error) {
	o, err := newRowOrder(keys, input.Types())
	if err != nil {
		return nil, fmt.Errorf("top-n: %w", err)
	}
	if limit < 0 || offset < 0 {
		return nil, fmt.Errorf("top-n: negative limit %d or offset %d", limit, offset)
	}
	return &TopN{input: input, order: o, limit: limit, offset: offset, acct: budget.NewAccount("top-n"),
		store: newRowStore(input.Types()), batchRows: vec.DefaultBatchRows}, nil
}

// Types implements Operator.
func (t *TopN) Types() []vec.Type { return t.input.Types() }

// Init implements Operator.
func (t *TopN) Init(ctx context.Context) error { return t.input.Init(ctx) }

// worse reports whether slot a sorts after slot b.
func (t *TopN) worse(a, b int32) bool {
	return t.order.compare(t.store.cols, int(a), t.store.cols, int(b)) > 0
}

func (t *TopN) up(i int) {
	h := t.heap
	for i > 0 {
		p := (i - 1) / 2
		if !t.worse(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (t *TopN) down(i int) {
	h := t.heap
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && t.worse(h[r], h[l]) {
			m = r
		}
		if !t.worse(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (t *TopN) add(b *vec.Batch) error {
	k := t.limit + t.offset
	rows := activeRowsOf(b.Sel, b.N, &t.ident)
	for _, i := range rows {
		if int64(len(t.heap)) < k {
			t.store.appendRow(b.Cols, int(i))
			t.heap = append(t.heap, int32(t.store.len()-1))
			t.up(len(t.heap) - 1)
			continue
		}
		top := t.heap[0]
		if t.order.compare(b.Cols, int(i), t.store.cols, int(top)) >= 0 {
			continue
		}
		// The replaced slot becomes garbage in the store; compact when garbage dominates.
		t.store.appendRow(b.Cols, int(i))
		t.heap[0] = int32(t.store.len() - 1)
		t.down(0)
		if t.store.len() > 2*len(t.heap)+vec.DefaultBatchRows {
			t.compact()
		}
	}
	return t.acct.Resize(t.store.memSize() + int64(cap(t.heap))*4)
}

// compact rewrites the store to hold only the heap's slots.
func (t *TopN) compact() {
	ns := newRowStore(t.store.types)
	tmp := make([]*vec.Vec, len(ns.cols))
	for c := range tmp {
		tmp[c] = &vec.Vec{}
		tmp[c].Gather(t.store.cols[c], t.heap)
		ns.cols[c].AppendFrom(tmp[c], nil, len(t.heap))
	}
	for i := range t.heap {
		t.heap[i] = int32(i)
	}
	t.store = ns
}

// Next implements Operator.
func (t *TopN) Next(ctx context.Context) (*vec.Batch, error) {
	if !t.done {
		t.done = true
		if t.limit > 0 {
			for {
				b, err := t.input.Next(ctx)
				if err != nil {
					return nil, err
				}
				if b == nil {
					break
				}
				if err := t.add(b); err != nil {
					return nil, err
				}
			}
		}
		order := slices.Clone(t.heap)
		cols := t.store.cols
		slices.SortStableFunc(order, func(a, b int32) int { return t.order.compare(cols, int(a), cols, int(b)) })
		if int64(len(order)) > t.offset {
			order = order[t.offset:]
		} else {
			order = nil
		}
		t.em.order = order
	}
	return t.em.next(t.store, t.batchRows), nil
}

// Close implements Operator.
func (t *TopN) Close() error {
	t.acct.Close()
	return t.input.Close()
}
