package exec

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"unsafe"

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
	case vec.Int64, vec.Decimal64, vec.Datetime:
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
	return o.compareFrom(0, a, i, b, j)
}

// compareFrom compares by the keys from the k-th on.
func (o *rowOrder) compareFrom(from int, a []*vec.Vec, i int, b []*vec.Vec, j int) int {
	for k := from; k < len(o.keys); k++ {
		key := o.keys[k]
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

// rowsCmp returns a comparison of rows a and b of cols by the order, specialised for the
// first key: without NULLs in its column, that key is compared on the typed slice directly
// (no per-value closure or NULL checks); only ties go on to the other keys.
func (o *rowOrder) rowsCmp(cols []*vec.Vec) func(a, b int32) int {
	generic := func(a, b int32) int { return o.compare(cols, int(a), cols, int(b)) }
	key := o.keys[0]
	col := cols[key.Col]
	if col.Nulls != nil {
		return generic
	}
	var rest func(a, b int32) int
	if len(o.keys) > 1 {
		rest = func(a, b int32) int { return o.compareFrom(1, cols, int(a), cols, int(b)) }
	}
	switch col.Type.ID {
	case vec.Int64, vec.Decimal64, vec.Datetime:
		return typedCmp(col.I64, key.Desc, rest)
	case vec.Int32, vec.Date32:
		return typedCmp(col.I32, key.Desc, rest)
	case vec.Float64:
		return typedCmp(col.F64, key.Desc, rest)
	case vec.String:
		offs, data := col.Offsets, col.Bytes
		sign := 1
		if key.Desc {
			sign = -1
		}
		return func(a, b int32) int {
			c := bytes.Compare(data[offs[a]:offs[a+1]], data[offs[b]:offs[b+1]])
			if c != 0 || rest == nil {
				return sign * c
			}
			return rest(a, b)
		}
	}
	return generic
}

func typedCmp[T int32 | int64 | float64](x []T, desc bool, rest func(a, b int32) int) func(a, b int32) int {
	if desc {
		return func(a, b int32) int {
			if c := cmpOrdered(x[b], x[a]); c != 0 || rest == nil {
				return c
			}
			return rest(a, b)
		}
	}
	return func(a, b int32) int {
		if c := cmpOrdered(x[a], x[b]); c != 0 || rest == nil {
			return c
		}
		return rest(a, b)
	}
}

// sortRows sorts perm, ascending row numbers of cols, by the order, ties kept in row order
// (a stable result from pdqsort: ties compare by row). Without NULLs in the first key's
// column, the rows are sorted as (key, row) pairs — the key a number, or a string's first
// 16 bytes — so that most comparisons read one small array instead of the columns.
func (o *rowOrder) sortRows(perm []int32, cols []*vec.Vec) {
	key := o.keys[0]
	col := cols[key.Col]
	var rest func(a, b int32) int
	if len(o.keys) > 1 {
		rest = func(a, b int32) int { return o.compareFrom(1, cols, int(a), cols, int(b)) }
	}
	if col.Nulls == nil {
		switch col.Type.ID {
		case vec.Int64, vec.Decimal64, vec.Datetime:
			sortPairs(perm, col.I64, key.Desc, rest)
			return
		case vec.Int32, vec.Date32:
			sortPairs(perm, col.I32, key.Desc, rest)
			return
		case vec.Float64:
			sortPairs(perm, col.F64, key.Desc, rest)
			return
		case vec.String:
			sortStrings(perm, col, key.Desc, rest)
			return
		}
	}
	cmp := o.rowsCmp(cols)
	slices.SortFunc(perm, func(a, b int32) int {
		if c := cmp(a, b); c != 0 {
			return c
		}
		return int(a) - int(b)
	})
}

type keyedRow[T int32 | int64 | float64] struct {
	k T
	r int32
}

// prefixedRow is a row of a string sort key with the string's first 16 bytes as two
// big-endian words (which order as the bytes do).
type prefixedRow struct {
	hi, lo uint64
	r      int32
}

// sortScratch is the memory sortRows(perm, cols) allocates besides perm: its (key, row)
// pairs, one per row, when the first key's column has no NULLs.
func (o *rowOrder) sortScratch(cols []*vec.Vec, rows int) int64 {
	col := cols[o.keys[0].Col]
	if col.Nulls != nil {
		return 0
	}
	var per uintptr
	switch col.Type.ID {
	case vec.Int64, vec.Decimal64, vec.Datetime:
		per = unsafe.Sizeof(keyedRow[int64]{})
	case vec.Int32, vec.Date32:
		per = unsafe.Sizeof(keyedRow[int32]{})
	case vec.Float64:
		per = unsafe.Sizeof(keyedRow[float64]{})
	case vec.String:
		per = unsafe.Sizeof(prefixedRow{})
	}
	return int64(per) * int64(rows)
}

// tieBreak orders rows a and b whose first keys are equal: by the other keys, then by row.
func tieBreak(a, b int32, rest func(a, b int32) int) int {
	if rest != nil {
		if c := rest(a, b); c != 0 {
			return c
		}
	}
	return int(a) - int(b)
}

// sortPairs sorts ascending rows perm by x[row] (then rest, then row).
func sortPairs[T int32 | int64 | float64](perm []int32, x []T, desc bool, rest func(a, b int32) int) {
	pairs := make([]keyedRow[T], len(perm))
	for p, r := range perm {
		pairs[p] = keyedRow[T]{x[r], r}
	}
	sign := 1
	if desc {
		sign = -1
	}
	slices.SortFunc(pairs, func(a, b keyedRow[T]) int {
		if c := sign * cmpOrdered(a.k, b.k); c != 0 {
			return c
		}
		return tieBreak(a.r, b.r, rest)
	})
	for p := range pairs {
		perm[p] = pairs[p].r
	}
}

// sortStrings sorts ascending rows perm by a string column, as prefixedRows: only equal
// prefixes compare the whole strings.
func sortStrings(perm []int32, col *vec.Vec, desc bool, rest func(a, b int32) int) {
	offs, data := col.Offsets, col.Bytes
	word := func(s []byte) uint64 {
		var w uint64
		for k := 0; k < 8; k++ {
			w <<= 8
			if k < len(s) {
				w |= uint64(s[k])
			}
		}
		return w
	}
	pairs := make([]prefixedRow, len(perm))
	for p, r := range perm {
		s := data[offs[r]:offs[r+1]]
		var lo uint64
		if len(s) > 8 {
			lo = word(s[8:])
		}
		pairs[p] = prefixedRow{word(s), lo, r}
	}
	sign := 1
	if desc {
		sign = -1
	}
	slices.SortFunc(pairs, func(a, b prefixedRow) int {
		switch {
		case a.hi != b.hi:
			if a.hi < b.hi {
				return -sign
			}
			return sign
		case a.lo != b.lo:
			if a.lo < b.lo {
				return -sign
			}
			return sign
		}
		if c := sign * bytes.Compare(data[offs[a.r]:offs[a.r+1]], data[offs[b.r]:offs[b.r+1]]); c != 0 {
			return c
		}
		return tieBreak(a.r, b.r, rest)
	})
	for p := range pairs {
		perm[p] = pairs[p].r
	}
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

// Sort orders its whole input (buffered, charged to the budget, as are the permutation
// and the sort's (key, row) pairs while they live).
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
		// Charged before they are allocated: the permutation and sortRows' pairs.
		n := s.store.len()
		kept := s.store.memSize() + int64(n)*4
		if err := s.acct.Resize(kept + s.order.sortScratch(s.store.cols, n)); err != nil {
			return nil, err
		}
		perm := make([]int32, n)
		for i := range perm {
			perm[i] = int32(i)
		}
		s.order.sortRows(perm, s.store.cols)
		s.em.order = perm
		if err := s.acct.Resize(kept); err != nil { // the pairs are garbage now
			return nil, err
		}
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
	idx, perm []int32   // compaction's identity and permutation
	spare     *rowStore // the store compaction writes the kept rows to
	tmp       vec.Vec   // compaction's gathered column
	haveCut   bool
	cutRow    int // the cutoff's row in store (valid when haveCut)
	done      bool
	em        emitter
	bound     *KeyBound // if set, offered every new cutoff's first key
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
	case vec.Int64, vec.Decimal64, vec.Datetime:
		cand = prefilterTyped(col.I64, cut.I64[t.cutRow], sign, rows, cand, full)
	case vec.Int32, vec.Date32:
		cand = prefilterTyped(col.I32, cut.I32[t.cutRow], sign, rows, cand, full)
	case vec.Float64:
		cand = prefilterTyped(col.F64, cut.F64[t.cutRow], sign, rows, cand, full)
	case vec.String:
		c := cut.String(t.cutRow)
		offs, data := col.Offsets, col.Bytes
		for _, i := range rows {
			if r := sign * bytes.Compare(data[offs[i]:offs[i+1]], c); r < 0 || (r == 0 && full(i)) {
				cand = append(cand, i)
			}
		}
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
	return t.charge(0)
}

// charge sets the account to the memory the top-N holds (both stores and the row lists)
// plus extra.
func (t *TopN) charge(extra int64) error {
	n := t.store.memSize() + extra +
		int64(cap(t.ident)+cap(t.cand)+cap(t.idx)+cap(t.perm))*4
	if t.spare != nil {
		n += t.spare.memSize()
	}
	return t.acct.Resize(n)
}

// compact keeps the store's best Offset+Limit rows (sorted when final), the worst of them
// last, as the cutoff.
func (t *TopN) compact(final bool) {
	n := t.store.len()
	k := int(min(int64(n), t.limit+t.offset))
	idx := identity(&t.idx, n)
	idx = append(t.perm[:0], idx...)
	t.perm = idx
	cols := t.store.cols
	cmp := t.order.rowsCmp(cols)
	if final {
		t.order.sortRows(idx, cols)
	} else if k < n {
		nthElement(idx, k-1, cmp)
	}
	// The kept rows move to the spare store, which becomes the store; the old one is
	// emptied to be the next spare (no allocation per compaction).
	ns := t.spare
	if ns == nil {
		ns = newRowStore(t.store.types)
	}
	for c := range ns.cols {
		ns.cols[c].Reset()
		t.tmp.Gather(cols[c], idx[:k])
		ns.cols[c].AppendFrom(&t.tmp, nil, k)
	}
	t.spare, t.store = t.store, ns
	t.haveCut = int64(k) == t.limit+t.offset && k > 0
	t.cutRow = k - 1
	if t.bound != nil && t.haveCut {
		if c := t.store.cols[t.order.keys[0].Col]; !c.IsNull(t.cutRow) {
			switch c.Type.ID {
			case vec.Int32, vec.Date32:
				t.bound.offer(int64(c.I32[t.cutRow]))
			case vec.Int64, vec.Decimal64, vec.Datetime:
				t.bound.offer(c.I64[t.cutRow])
			}
		}
	}
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
		// The final compaction sorts: its row lists and pairs are charged before they
		// are allocated.
		n := t.store.len()
		if err := t.charge(int64(2*n)*4 + t.order.sortScratch(t.store.cols, n)); err != nil {
			return nil, err
		}
		t.compact(true)
		if err := t.charge(int64(t.store.len()) * 4); err != nil { // + the order below
			return nil, err
		}
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
