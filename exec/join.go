package exec

import (
	"context"
	"fmt"
	"hash/maphash"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
)

// JoinKind is a hash join's kind. The probe side is the streamed input; the build side is
// hashed in memory (in primproc, the small side broadcast with the fragment).
type JoinKind string

// The join kinds.
const (
	JoinInner      JoinKind = "inner"       // matching pairs: probe columns ++ build columns
	JoinLeftOuter  JoinKind = "left_outer"  // inner + unmatched probe rows with NULL build columns
	JoinRightOuter JoinKind = "right_outer" // inner + unmatched build rows with NULL probe columns (one prober only)
	JoinSemi       JoinKind = "semi"        // probe rows with a match (EXISTS, IN): probe columns
	JoinAnti       JoinKind = "anti"        // probe rows without a match (NOT EXISTS): probe columns
	JoinMark       JoinKind = "mark"        // every probe row + a boolean "x IN (build)" in three-valued logic
)

// JoinSpec describes a hash join. ProbeKeys[i] = BuildKeys[i] are the equi-join keys
// (column indexes of each side; their types must be identical). Residual, if not nil, is an
// extra condition over the probe columns followed by the build columns that a pair must
// satisfy (TRUE) to match.
//
// For a mark join, the last MarkKeys key pairs are the IN comparison (x IN (SELECT y ...)),
// compared with SQL's NULL semantics: the mark is TRUE if some build row matches, else
// NULL if a NULL on either side of those keys could have matched, else FALSE (FALSE, too,
// for an empty build side). The other key pairs and the residual select which build rows
// belong to the probe row's set (a correlated subquery's WHERE). MarkKeys 0 means all keys.
type JoinSpec struct {
	Kind      JoinKind   `msgpack:"kind"`
	ProbeKeys []int      `msgpack:"probe_keys"`
	BuildKeys []int      `msgpack:"build_keys"`
	Residual  *expr.Expr `msgpack:"residual,omitempty"`
	MarkKeys  int        `msgpack:"mark_keys,omitempty"`
}

// OutputTypes is the join's output layout for the two sides' types.
func (s JoinSpec) OutputTypes(probe, build []vec.Type) []vec.Type {
	switch s.Kind {
	case JoinSemi, JoinAnti:
		return probe
	case JoinMark:
		return append(append([]vec.Type(nil), probe...), vec.BoolType)
	}
	return append(append([]vec.Type(nil), probe...), build...)
}

// Validate checks the spec against the sides' types.
func (s JoinSpec) Validate(probe, build []vec.Type) error {
	switch s.Kind {
	case JoinInner, JoinLeftOuter, JoinRightOuter, JoinSemi, JoinAnti, JoinMark:
	default:
		return fmt.Errorf("join: unknown kind %q", s.Kind)
	}
	if len(s.ProbeKeys) == 0 || len(s.ProbeKeys) != len(s.BuildKeys) {
		return fmt.Errorf("join: %d probe keys and %d build keys", len(s.ProbeKeys), len(s.BuildKeys))
	}
	for i, p := range s.ProbeKeys {
		b := s.BuildKeys[i]
		if p < 0 || p >= len(probe) {
			return fmt.Errorf("join: probe key column #%d does not exist (probe side has %d columns)", p, len(probe))
		}
		if b < 0 || b >= len(build) {
			return fmt.Errorf("join: build key column #%d does not exist (build side has %d columns)", b, len(build))
		}
		if probe[p] != build[b] {
			return fmt.Errorf("join: key %d compares %s (probe #%d) with %s (build #%d); cast one side", i, probe[p], p, build[b], b)
		}
	}
	if s.MarkKeys < 0 || s.MarkKeys > len(s.ProbeKeys) {
		return fmt.Errorf("join: %d mark keys of %d keys", s.MarkKeys, len(s.ProbeKeys))
	}
	if s.Residual != nil {
		t, err := expr.TypeOf(s.Residual, append(append([]vec.Type(nil), probe...), build...))
		if err != nil {
			return fmt.Errorf("join residual: %w", err)
		}
		if t.ID != vec.Bool {
			return fmt.Errorf("join residual is %s, not bool", t)
		}
	}
	return nil
}

// JoinTable is a hashed build side. Once finished it is read-only and may be probed by
// many HashJoins (workers) at once. With a budget that carries a pool, its index, keys,
// rows and row chains come from the pool, and Release gives them back.
type JoinTable struct {
	types    []vec.Type
	keyCols  []int
	ht       *hashTable
	store    *rowStore
	first    []int32 // per key id: first build row
	last     []int32 // per key id: last build row (while building)
	nextRow  []int32 // per build row: next row with the same key, or -1
	nullRows []int32 // build rows with a NULL in some key column
	unique   bool    // every key has exactly one build row
	acct     *Account
	pool     *vec.Pool // nil: the Go heap

	scratch probeScratch
	ids     []int32
	ident   []int32
	live    []int32
	keyVecs []*vec.Vec
}

// NewJoinTable starts a build side of the given column types hashed on keyCols.
func NewJoinTable(types []vec.Type, keyCols []int, budget *Budget) (*JoinTable, error) {
	t := &JoinTable{types: types, keyCols: keyCols, store: newRowStore(types), unique: true,
		acct: budget.NewAccount("hash join build side"), pool: budget.Pool()}
	var kt []vec.Type
	for _, c := range keyCols {
		if c < 0 || c >= len(types) {
			return nil, fmt.Errorf("join: build key column #%d does not exist (build side has %d columns)", c, len(types))
		}
		kt = append(kt, types[c])
	}
	t.ht = newHashTable(kt, nil, t.pool)
	t.keyVecs = make([]*vec.Vec, len(keyCols))
	return t, nil
}

// Types is the build side's column types.
func (t *JoinTable) Types() []vec.Type { return t.types }

// Rows is the number of build rows.
func (t *JoinTable) Rows() int { return t.store.len() }

// Add appends a batch of build rows.
func (t *JoinTable) Add(b *vec.Batch) error {
	if err := b.CheckTypes(t.types); err != nil {
		return fmt.Errorf("join build side: %w", err)
	}
	rows := activeRowsOf(b.Sel, b.N, &t.ident)
	base := int32(t.store.len())
	t.store.appendBatch(b)
	for k, c := range t.keyCols {
		t.keyVecs[k] = b.Cols[c]
	}
	live := rows
	if anyNulls(t.keyVecs) {
		live = t.live[:0]
		for k, i := range rows {
			if rowHasNull(t.keyVecs, i) {
				t.nullRows = append(t.nullRows, base+int32(k))
			} else {
				live = append(live, i)
			}
		}
		t.live = live
	}
	t.scratch.prepare(b.N)
	t.ids = growTo(t.ids[:0], b.N)
	hashRows(t.keyVecs, live, t.scratch.h, t.ht.seed)
	if err := t.ht.findOrInsert(t.keyVecs, live, t.ids, &t.scratch, nil); err != nil {
		return err
	}
	t.first = vec.GrowSlice(t.pool, t.first, t.ht.len())
	t.last = vec.GrowSlice(t.pool, t.last, t.ht.len())
	t.nextRow = vec.GrowSlice(t.pool, t.nextRow, t.store.len())
	// Build rows are numbered in the order of the batch's active rows; first and last
	// hold row+1 (0: none yet).
	k := 0
	for idx, i := range rows {
		r := base + int32(idx)
		t.nextRow[r] = -1
		if k < len(live) && live[k] == i {
			k++
			t.chain(t.ids[i], r)
		}
	}
	return t.acct.Resize(t.memSize())
}

// AddRecord appends an Arrow record of build rows.
func (t *JoinTable) AddRecord(rec arrow.RecordBatch) error {
	var b vec.Batch
	for start := 0; start < int(rec.NumRows()); start += 64 * vec.DefaultBatchRows {
		end := min(start+64*vec.DefaultBatchRows, int(rec.NumRows()))
		if err := b.ViewRecord(rec, t.types, start, end); err != nil {
			return fmt.Errorf("join build side: %w", err)
		}
		if err := t.Add(&b); err != nil {
			return err
		}
	}
	return nil
}

// AddRecords appends Arrow records of build rows and finishes the table. A large build
// side is hashed in bulk:
// every row is stored and hashed first (on two threads), then the rows are inserted
// partition by partition of the hash index, so that each partition's slots stay in cache
// instead of every insert missing it.
func (t *JoinTable) AddRecords(recs []arrow.RecordBatch) error {
	var n int
	for _, rec := range recs {
		n += int(rec.NumRows())
	}
	if n < bulkBuildRows {
		t.reserve(n)
		for _, rec := range recs {
			if err := t.AddRecord(rec); err != nil {
				return err
			}
		}
		return t.Finish()
	}
	// The hashed index is sized below, once it is known that a direct one will not do.
	t.reserveRows(n)
	base := t.store.len()
	var b vec.Batch
	for _, rec := range recs {
		for start := 0; start < int(rec.NumRows()); start += 64 * vec.DefaultBatchRows {
			end := min(start+64*vec.DefaultBatchRows, int(rec.NumRows()))
			if err := b.ViewRecord(rec, t.types, start, end); err != nil {
				return fmt.Errorf("join build side: %w", err)
			}
			t.store.appendBatch(&b)
		}
	}
	total := t.store.len()
	for k, c := range t.keyCols {
		t.keyVecs[k] = t.store.cols[c]
	}
	rows := vec.MakeSlice[int32](t.pool, n)[:0]
	nulls := anyNulls(t.keyVecs)
	for r := int32(base); r < int32(total); r++ {
		if nulls && rowHasNull(t.keyVecs, r) {
			t.nullRows = append(t.nullRows, r)
			continue
		}
		rows = append(rows, r)
	}
	if len(t.keyVecs) == 1 && t.ht.len() == 0 {
		if lo, hi, ok := keySpan(t.keyVecs[0], rows, len(rows)); ok {
			defer vec.FreeSlice(t.pool, rows)
			return t.addDirect(rows, lo, hi, base, total)
		}
	}
	t.ht.reserve(n)
	h := vec.MakeSlice[uint64](t.pool, total)
	if err := hashParallel(t.keyVecs, rows, h, t.ht.seed); err != nil {
		vec.FreeSlice(t.pool, h)
		vec.FreeSlice(t.pool, rows)
		return err
	}
	order := t.ht.partitionRows(rows, h)
	t.first = vec.GrowSlice(t.pool, t.first, t.ht.len()+len(rows))
	t.last = vec.GrowSlice(t.pool, t.last, t.ht.len()+len(rows))
	t.nextRow = vec.GrowSlice(t.pool, t.nextRow, total)
	for r := base; r < total; r++ {
		t.nextRow[r] = -1
	}
	// The keys and hashes, gathered into insertion order by loops whose cache misses
	// overlap, are then read in order by the inserts.
	keys := make([]*vec.Vec, len(t.keyVecs))
	for k, kv := range t.keyVecs {
		keys[k] = &vec.Vec{}
		keys[k].Gather(kv, order)
	}
	ph := vec.MakeSlice[uint64](t.pool, len(order))
	for k, r := range order {
		ph[k] = h[r]
	}
	// The working arrays go back to the pool once the rows are inserted.
	defer func() {
		for _, k := range keys {
			k.Recycle(t.pool)
		}
		vec.FreeSlice(t.pool, ph)
		vec.FreeSlice(t.pool, h)
		if len(order) > 0 && len(rows) > 0 && &order[0] != &rows[0] {
			vec.FreeSlice(t.pool, order)
		}
		vec.FreeSlice(t.pool, rows)
	}()
	// The working arrays are charged while they live.
	work := int64(cap(rows)+len(order))*4 + int64(len(h)+len(ph))*8
	for _, k := range keys {
		work += k.MemSize()
	}
	if err := t.acct.Resize(t.memSize() + work); err != nil {
		return err
	}
	for k, r := range order {
		g, _ := t.ht.lookupOrInsert(keys, int32(k), ph[k])
		t.chain(g, r)
	}
	t.first, t.last = t.first[:t.ht.len()], t.last[:t.ht.len()]
	return t.Finish()
}

// addDirect is AddRecords' insert for one integer key over a dense span [lo, hi]: the keys
// go through a direct index alone, in row order, without hashing (see
// hashTable.buildKeysDirect); rows are the stored rows base…total-1 whose key is not NULL.
func (t *JoinTable) addDirect(rows []int32, lo, hi int64, base, total int) error {
	ids := vec.MakeSlice[int32](t.pool, len(rows))
	defer vec.FreeSlice(t.pool, ids)
	if err := t.acct.Resize(t.memSize() + int64(len(ids))*4 + (hi-lo+1)*4); err != nil {
		return err
	}
	t.ht.buildKeysDirect(t.keyVecs[0], rows, lo, hi, ids)
	t.first = vec.GrowSlice(t.pool, t.first, t.ht.len())
	t.last = vec.GrowSlice(t.pool, t.last, t.ht.len())
	t.nextRow = vec.GrowSlice(t.pool, t.nextRow, total)
	for r := base; r < total; r++ {
		t.nextRow[r] = -1
	}
	for k, r := range rows {
		t.chain(ids[k], r)
	}
	t.first, t.last = t.first[:t.ht.len()], t.last[:t.ht.len()]
	return t.Finish()
}

// Finish readies a complete table for probing (its index sized for lookups; see
// hashTable.sizeForProbes). Rows may still be added afterwards.
func (t *JoinTable) Finish() error {
	t.ht.sizeForProbes()
	return t.acct.Resize(t.memSize())
}

// chain appends build row r to key g's rows.
func (t *JoinTable) chain(g, r int32) {
	if t.first[g] == 0 {
		t.first[g] = r + 1
	} else {
		t.nextRow[t.last[g]-1] = r
		t.unique = false
	}
	t.last[g] = r + 1
}

// bulkBuildRows is the build side size from which AddRecords hashes in bulk.
const bulkBuildRows = 1 << 17

// hashParallel is hashRows over two halves of rows at once. A panic in the second
// goroutine becomes its error (the caller's own half panics on the caller's goroutine).
func hashParallel(keys []*vec.Vec, rows []int32, h []uint64, seed maphash.Seed) error {
	half := len(rows) / 2
	done := make(chan error, 1)
	go func() {
		var err error
		defer func() { done <- err }()
		defer RecoverTo(context.Background(), "join build hashing", &err)
		hashRows(keys, rows[half:], h, seed)
	}()
	hashRows(keys, rows[:half], h, seed)
	return <-done
}

// AddOperator appends every row of an operator (initialising and closing it).
func (t *JoinTable) AddOperator(ctx context.Context, op Operator) error {
	if err := op.Init(ctx); err != nil {
		op.Close()
		return err
	}
	for {
		b, err := op.Next(ctx)
		if err != nil {
			op.Close()
			return err
		}
		if b == nil {
			break
		}
		if err := t.Add(b); err != nil {
			op.Close()
			return err
		}
	}
	return op.Close()
}

// reserve makes room for n more build rows: the hash index, key and row columns, and the
// per-key and per-row chains are sized once instead of regrown while adding.
func (t *JoinTable) reserve(n int) {
	t.ht.reserve(n)
	t.reserveRows(n)
}

// reserveRows is reserve without the hash index.
func (t *JoinTable) reserveRows(n int) {
	rows := t.store.len() + n
	if t.pool != nil {
		for _, c := range t.store.cols {
			c.ReserveFrom(t.pool, n)
		}
		t.first = vec.GrowSlice(t.pool, t.first, rows)[:len(t.first)]
		t.last = vec.GrowSlice(t.pool, t.last, rows)[:len(t.last)]
		t.nextRow = vec.GrowSlice(t.pool, t.nextRow, rows)[:len(t.nextRow)]
		return
	}
	for _, c := range t.store.cols {
		c.Reserve(n)
	}
	t.first = reserve(t.first, rows)
	t.last = reserve(t.last, rows)
	t.nextRow = reserve(t.nextRow, rows)
}

func reserve[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s
	}
	return append(make([]T, 0, n), s...)
}

// Release returns the table's memory charge to the budget and its arrays to the pool; the
// table must not be used afterwards (nor be probed: every prober must have finished).
func (t *JoinTable) Release() {
	if t.pool != nil {
		t.ht.release()
		for _, c := range t.store.cols {
			c.Recycle(t.pool)
		}
		for _, s := range [][]int32{t.first, t.last, t.nextRow} {
			vec.FreeSlice(t.pool, s)
		}
		t.first, t.last, t.nextRow = nil, nil, nil
	}
	t.acct.Close()
}

func (t *JoinTable) memSize() int64 {
	return t.ht.memSize() + t.store.memSize() + int64(cap(t.first)+cap(t.last)+cap(t.nextRow)+cap(t.nullRows))*4
}

// firstRow returns the first build row of key id g.
func (t *JoinTable) firstRow(g int32) int32 { return t.first[g] - 1 }

func anyNulls(vs []*vec.Vec) bool {
	for _, v := range vs {
		if v.Nulls != nil {
			return true
		}
	}
	return false
}

func rowHasNull(vs []*vec.Vec, i int32) bool {
	for _, v := range vs {
		if v.Nulls != nil && v.Nulls[i] {
			return true
		}
	}
	return false
}

// nullVec makes v an owned vector of n NULLs of type t.
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
