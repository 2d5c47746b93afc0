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

// TopN keeps the first Offset+Limit rows of its input in sort order and emits rows
// [Offset, Offset+Limit) of them, sorted. As a partial top-N (Offset 0) it runs on every
// primproc worker; exemgr's final TopN merges their outputs.
//
// Candidate rows are appended to a store in bulk; when the store holds about twice the rows
// needed it is sorted and cut back, and the worst row kept becomes a cutoff that later rows
// must beat. A typed loop over the first sort key rejects most rows of a batch without
// calling the general comparator.
type TopN struct {
	input     Operator
	order     *rowOrder
	limit     int64
	offset    int64
	acct      *Account
	store     *rowStore
	batchRows int
	ident     []int32
	cand      []int32
	haveCut   bool
	cutRow    int // the cutoff's row in store (valid when haveCut)
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

// prefilter keeps the rows that sort strictly before the cutoff.
func (t *TopN) prefilter(b *vec.Batch, rows []int32) []int32 {
	cand := t.cand[:0]
	key := t.order.keys[0]
	col := b.Cols[key.Col]
	cut := t.store.cols[key.Col]
	full := func(i int32) bool { return t.order.compare(b.Cols, int(i), t.store.cols, t.cutRow) < 0 }
	if col.Nulls != nil || cut.IsNull(t.cutRow) {
		for _, i := range rows {
			if full(i) {
				cand = append(cand, i)
			}
		}
		t.cand = cand
		return cand
	}
	sign := 1
	if key.Desc {
		sign = -1
	}
	switch col.Type.ID {
	case vec.Int64, vec.Decimal64:
		cand = prefilterTyped(col.I64, cut.I64[t.cutRow], sign, rows, cand, full)
	case vec.Int32, vec.Date32:
		cand = prefilterTyped(col.I32, cut.I32[t.cutRow], sign, rows, cand, full)
	case vec.Float64:
		cand = prefilterTyped(col.F64, cut.F64[t.cutRow], sign, rows, cand, full)
	default:
		for _, i := range rows {
			if full(i) {
				cand = append(cand, i)
			}
		}
	}
	t.cand = cand
	return cand
}

// prefilterTyped keeps rows whose first key beats the cutoff's, comparing fully on ties.
func prefilterTyped[T int32 | int64 | float64](x []T, c T, sign int, rows, cand []int32, full func(int32) bool) []int32 {
	if sign > 0 {
		for _, i := range rows {
			if v := x[i]; v < c || (v == c && full(i)) {
				cand = append(cand, i)
			}
		}
		return cand
	}
	for _, i := range rows {
		if v := x[i]; v > c || (v == c && full(i)) {
			cand = append(cand, i)
		}
	}
	return cand
}

func (t *TopN) add(b *vec.Batch) error {
	k := t.limit + t.offset
	rows := activeRowsOf(b.Sel, b.N, &t.ident)
	if t.haveCut {
		rows = t.prefilter(b, rows)
		if len(rows) == 0 {
			return nil
		}
	}
	for c, v := range t.store.cols {
		v.AppendFrom(b.Cols[c], rows, b.N)
	}
	if int64(t.store.len()) >= 2*k+int64(t.batchRows) {
		t.compact(false)
	}
	return t.acct.Resize(t.store.memSize())
}

// compact keeps the store's best Offset+Limit rows (sorted when final), the worst of them
// last, as the cutoff.
func (t *TopN) compact(final bool) {
	n := t.store.len()
	k := int(min(int64(n), t.limit+t.offset))
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	cols := t.store.cols
	cmp := func(a, b int32) int { return t.order.compare(cols, int(a), cols, int(b)) }
	if final {
		slices.SortStableFunc(idx, cmp)
	} else if k < n {
		nthElement(idx, k-1, cmp)
	}
	ns := newRowStore(t.store.types)
	tmp := &vec.Vec{}
	for c := range ns.cols {
		tmp.Gather(cols[c], idx[:k])
		ns.cols[c].AppendFrom(tmp, nil, k)
	}
	t.store = ns
	t.haveCut = int64(k) == t.limit+t.offset && k > 0
	t.cutRow = k - 1
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
		t.compact(true)
		order := make([]int32, 0, t.store.len())
		for i := int(t.offset); i < t.store.len(); i++ {
			order = append(order, int32(i))
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

// nthElement reorders idx so that idx[k] is the element a full sort would put there, with
// no greater element before it and no smaller one after (quickselect, median of three).
func nthElement(idx []int32, k int, cmp func(a, b int32) int) {
	lo, hi := 0, len(idx)-1
	for hi > lo {
		mid := lo + (hi-lo)/2
		if cmp(idx[mid], idx[lo]) < 0 {
			idx[mid], idx[lo] = idx[lo], idx[mid]
		}
		if cmp(idx[hi], idx[lo]) < 0 {
			idx[hi], idx[lo] = idx[lo], idx[hi]
		}
		if cmp(idx[hi], idx[mid]) < 0 {
			idx[hi], idx[mid] = idx[mid], idx[hi]
		}
		pivot := idx[mid]
		i, j := lo, hi
		for i <= j {
			for cmp(idx[i], pivot) < 0 {
				i++
			}
			for cmp(idx[j], pivot) > 0 {
				j--
			}
			if i <= j {
				idx[i], idx[j] = idx[j], idx[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}
