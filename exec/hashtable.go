package exec

import (
	"bytes"
	"hash/maphash"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/colinkdb/colink/exec/vec"
)

// hashTable maps distinct key tuples to dense ids 0..n-1, in insertion order. Keys are
// stored column-wise. It serves hash aggregation (ids are groups), DISTINCT, and the build
// side of hash joins.
//
// The index is open addressing with linear probing over one array of 64-bit slots: a slot
// holds the upper 32 bits of its key's hash (a tag) and id+1 in the lower 32 (0: empty).
// A key's home slot is given by the top bits of its hash, so the tag alone places it: the
// index grows by reading its slots in order and writing the larger one almost in order,
// without the keys' hashes (which are not kept). A lookup touches one slot line and, only
// when the tag matches, the key itself, so a probe costs about one cache miss where a
// chained table costs three (bucket, chain entry, key). The load factor stays at most 1/2.
//
// Lookups are vectorized: all rows of a batch find their candidate slots first, then the
// candidates' keys are compared one key column at a time with typed loops. NULL keys are
// equal to each other here (GROUP BY semantics); joins drop NULL keys before looking up.
//
// With a pool, the index and the key columns' arrays come from it, and release gives them
// back.
type hashTable struct {
	types   []vec.Type
	keys    []*vec.Vec // append-mode, one row per id
	n       int        // keys (ids) so far
	slots   []uint64   // tag<<32 | id+1, 0 for an empty slot
	mask    uint64     // len(slots)-1
	shift   uint       // a hash's home slot is h >> shift
	seed    maphash.Seed
	acct    *Account
	pool    *vec.Pool // nil: the Go heap
	keyRoom int       // with a pool: the key columns have room for this many keys
	// direct, when set, is a second index of a complete table with one integer key and no
	// NULL key: direct[k-directLo] is key k's id+1 (0: absent). It is set only when the
	// keys span at most twice the hashed index's slots (TPC-H's keys are dense, so a
	// join on one looks its rows up without hashing, and probe keys that ascend, as
	// lineitem's l_orderkey does, read it in order), and dropped by the next insert.
	direct   []int32
	directLo int64
	// filter, when set, is a bitmap of the keys of a complete table with one integer key
	// and no NULL key that has no direct index: bit k-filterLo is set when key k is
	// present. It is set only when the keys are sparse in a span of at most maxFilterSpan,
	// so that a selective join (Q17's 204 parts among 200,000) turns most probes away with
	// one bit read from cache instead of a hash and a slot read from memory; dropped, as
	// direct is, by the next insert.
	filter   []uint64
	filterLo int64
	// filterCol is the key column the filter covers: with several, the sparsest integer
	// one (buildColumnFilter).
	filterCol int
	// stale says the keys were inserted through the direct index alone (buildKeysDirect),
	// so the hashed index does not hold them yet: ensureIndex builds it, under indexMu,
	// the first time a hashed lookup or an insert needs it (a finished table may be probed
	// by many workers at once).
	stale   atomic.Bool
	indexMu sync.Mutex
}

const (
	slotIDBits = 1<<32 - 1 // the id+1 half of a slot
	minSlots   = 1024
)

func newHashTable(types []vec.Type, acct *Account, pool *vec.Pool) *hashTable {
	t := &hashTable{types: types, seed: maphash.MakeSeed(), acct: acct, pool: pool}
	for _, ty := range types {
		t.keys = append(t.keys, vec.NewVec(ty))
	}
	t.rehash(minSlots)
	return t
}

// len is the number of distinct keys.
func (t *hashTable) len() int { return t.n }

// reserve makes room for n more keys without regrowing the index or the key columns.
func (t *hashTable) reserve(n int) {
	t.ensureIndex()
	want := t.n + n
	if 2*want > len(t.slots) {
		t.rehash(slotsFor(want))
	}
	if t.pool != nil {
		t.growKeys(n)
		return
	}
	for _, k := range t.keys {
		k.Reserve(n)
	}
}

// growKeys makes room in the key columns for n more keys, with arrays from the pool.
func (t *hashTable) growKeys(n int) {
	if t.n+n <= t.keyRoom {
		return
	}
	for _, k := range t.keys {
		k.ReserveFrom(t.pool, n)
	}
	t.keyRoom = t.n + n
}

// release gives the pool the index and the key columns; the table is then empty and must
// not be used (nor views of its keys). Without a pool it does nothing.
func (t *hashTable) release() {
	if t == nil || t.pool == nil {
		return
	}
	vec.FreeSlice(t.pool, t.slots)
	t.slots = nil
	t.dropDirect()
	for _, k := range t.keys {
		k.Recycle(t.pool)
	}
	t.n, t.keyRoom = 0, 0
}

// reset empties the table for new keys, with an index of the given number of slots (a
// power of two): a partial aggregation that flushes its groups reuses one small table.
// With a pool, the key columns' arrays go back to it; without, they are kept.
func (t *hashTable) reset(slots int) {
	t.stale.Store(false)
	t.dropDirect()
	for _, k := range t.keys {
		if t.pool != nil {
			k.Recycle(t.pool)
		} else {
			k.Reset()
		}
	}
	t.n, t.keyRoom = 0, 0
	if len(t.slots) == slots {
		clear(t.slots)
		return
	}
	vec.FreeSlice(t.pool, t.slots)
	t.slots = nil
	t.rehash(slots)
}

// sizeForProbes enlarges the index of a table that is complete, so that looking up an
// absent key (most probes of a selective join) meets an empty slot at once instead of
// after a run of others: load at most 1/8 while the index stays within 4 MiB, else 1/4
// within 32 MiB, else as it is.
func (t *hashTable) sizeForProbes() {
	if t.stale.Load() {
		return // only the direct index holds the keys, and it is complete
	}
	for _, c := range []struct{ perKey, maxSlots int }{{8, 1 << 19}, {4, 1 << 22}} {
		want := slotsFor(c.perKey / 2 * t.n)
		if want <= c.maxSlots {
			if want > len(t.slots) {
				t.rehash(want)
			}
			break
		}
	}
	t.buildDirect()
}

// buildDirect sets the direct index of a complete table whose one key is an integer
// without NULLs, when keySpan finds the keys dense enough (the direct index, 4 bytes a
// slot, then takes at most the hashed one's memory: the orders of TPC-H, a quarter of the
// span of o_orderkey, fit).
func (t *hashTable) buildDirect() {
	t.dropDirect()
	if len(t.keys) > 1 && t.n > 0 {
		t.buildColumnFilter()
		return
	}
	if len(t.keys) != 1 || t.n == 0 {
		return
	}
	k := t.keys[0]
	if k.Nulls != nil {
		return
	}
	rows := vec.MakeSlice[int32](t.pool, t.n)
	for i := range rows {
		rows[i] = int32(i)
	}
	lo, hi, ok := keySpan(k, rows, t.n)
	vec.FreeSlice(t.pool, rows)
	if !ok {
		t.buildFilter(k, lo, hi)
		return
	}
	span := uint64(hi - lo)
	d := vec.MakeSlice[int32](t.pool, int(span)+1)
	if k.Type.ID == vec.Int32 || k.Type.ID == vec.Date32 {
		for g, v := range k.I32[:t.n] {
			d[int64(v)-lo] = int32(g) + 1
		}
	} else {
		for g, v := range k.I64[:t.n] {
			d[v-lo] = int32(g) + 1
		}
	}
	t.direct, t.directLo = d, lo
}

// maxFilterSpan bounds the key span of a filter: 64 Mi bits, 8 MiB, so that the orders of
// SF 10 (o_orderkey spans 60 M) get one. A bit read from an L3-sized bitmap still costs
// less than the hashed lookup it saves, which misses in a table of millions of keys.
const maxFilterSpan = 1 << 26

// buildFilter sets the filter of a complete table whose one key, k, an integer column
// without NULLs, spans [lo, hi], when the span is within maxFilterSpan and at least four
// times the keys (denser, most probes find a key and the bit read is wasted).
func (t *hashTable) buildFilter(k *vec.Vec, lo, hi int64) {
	isInt := k.Type.ID == vec.Int64 || k.Type.ID == vec.Decimal64 || k.Type.ID == vec.Datetime || k.Type.ID == vec.Int32 || k.Type.ID == vec.Date32
	span := uint64(hi-lo) + 1
	if !isInt || span > maxFilterSpan || span < 4*uint64(t.n) {
		return
	}
	t.filter, t.filterLo, t.filterCol = t.keyBitmap(k, lo, span), lo, 0
}

// keyBitmap is the bitmap of the table's keys in column k, an integer column without
// NULLs whose values lie in [lo, lo+span): bit v-lo is set when v is present.
func (t *hashTable) keyBitmap(k *vec.Vec, lo int64, span uint64) []uint64 {
	f := vec.MakeSlice[uint64](t.pool, int((span+63)/64))
	if k.Type.ID == vec.Int32 || k.Type.ID == vec.Date32 {
		for _, v := range k.I32[:t.n] {
			o := uint64(int64(v) - lo)
			f[o>>6] |= 1 << (o & 63)
		}
	} else {
		for _, v := range k.I64[:t.n] {
			o := uint64(v - lo)
			f[o>>6] |= 1 << (o & 63)
		}
	}
	return f
}

// buildColumnFilter sets the filter of a complete table with several key columns on the
// integer column without NULLs whose values are sparsest in their span, if at most a
// quarter of it: a probe whose value of that column is absent cannot match. Q9 joins
// lineitem to the partsupp rows of its green parts on (l_suppkey, l_partkey): every
// supplier is among them, but only 108 K of SF 10's 2 M parts, so the bitmap of p_partkey
// (256 KiB) turns 19 of 20 probes away before the composite key is hashed.
func (t *hashTable) buildColumnFilter() {
	var best []uint64
	var bestLo int64
	bestCol, bestDensity := -1, 0.25
	for c, k := range t.keys {
		if k.Nulls != nil {
			continue
		}
		lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
		switch k.Type.ID {
		case vec.Int64, vec.Decimal64, vec.Datetime:
			for _, v := range k.I64[:t.n] {
				lo, hi = min(lo, v), max(hi, v)
			}
		case vec.Int32, vec.Date32:
			for _, v := range k.I32[:t.n] {
				lo, hi = min(lo, int64(v)), max(hi, int64(v))
			}
		default:
			continue
		}
		span := uint64(hi-lo) + 1
		if span > maxFilterSpan {
			continue
		}
		f := t.keyBitmap(k, lo, span)
		set := 0
		for _, w := range f {
			set += bits.OnesCount64(w)
		}
		if d := float64(set) / float64(span); d <= bestDensity {
			if best != nil {
				vec.FreeSlice(t.pool, best)
			}
			best, bestLo, bestCol, bestDensity = f, lo, c, d
		} else {
			vec.FreeSlice(t.pool, f)
		}
	}
	if best != nil {
		t.filter, t.filterLo, t.filterCol = best, bestLo, bestCol
	}
}

// filterRows appends to out the listed rows whose key the filter does not rule out and
// returns it; it reports false, having done nothing, when the table has no filter or keys
// are not of the table's key types. Listed rows must not be NULL.
func (t *hashTable) filterRows(keys []*vec.Vec, rows, out []int32) ([]int32, bool) {
	c := t.filterCol
	if t.filter == nil || len(keys) != len(t.types) || keys[c].Type.ID != t.types[c].ID {
		return out, false
	}
	f, lo := t.filter, t.filterLo
	n := uint64(len(f)) * 64
	switch k := keys[c]; k.Type.ID {
	case vec.Int64, vec.Decimal64, vec.Datetime:
		x := k.I64
		for _, i := range rows {
			if o := uint64(x[i] - lo); o < n && f[o>>6]&(1<<(o&63)) != 0 {
				out = append(out, i)
			}
		}
	default: // Int32, Date32
		x := k.I32
		for _, i := range rows {
			if o := uint64(int64(x[i]) - lo); o < n && f[o>>6]&(1<<(o&63)) != 0 {
				out = append(out, i)
			}
		}
	}
	return out, true
}

// keySpan returns the smallest and largest of the listed rows' values of k, an integer
// column (the listed rows must not be NULL), and whether a direct index over them is worth
// building for a table of n keys: their span at most twice the slots a hashed index of n
// keys would have, or, however sparse, under directSmallSpan (the 396 suppliers of
// Germany among TPC-H's 10,000 at SF 1: a 40 KB array, probed by 800,000 partsupp rows).
func keySpan(k *vec.Vec, rows []int32, n int) (lo, hi int64, ok bool) {
	if len(rows) == 0 {
		return 0, 0, false
	}
	switch k.Type.ID {
	case vec.Int64, vec.Decimal64, vec.Datetime:
		x := k.I64
		lo, hi = x[rows[0]], x[rows[0]]
		for _, r := range rows {
			lo, hi = min(lo, x[r]), max(hi, x[r])
		}
	case vec.Int32, vec.Date32:
		x := k.I32
		lo, hi = int64(x[rows[0]]), int64(x[rows[0]])
		for _, r := range rows {
			lo, hi = min(lo, int64(x[r])), max(hi, int64(x[r]))
		}
	default:
		return 0, 0, false
	}
	return lo, hi, uint64(hi-lo) < max(2*uint64(slotsFor(n)), directSmallSpan)
}

// directSmallSpan is the span of keys below which a direct index is built whatever their
// density: 64 Ki slots, 256 KiB, within a core's L2 cache.
const directSmallSpan = 1 << 16

// buildKeysDirect inserts the listed rows' keys of an empty table with one integer key
// through a direct index over [lo, hi] alone, setting ids[k] to the id of rows[k]'s key,
// and leaves the hashed index stale (ensureIndex builds it if it is ever needed). Keys must
// be the table's one column, and the listed rows' not NULL and within [lo, hi].
func (t *hashTable) buildKeysDirect(k *vec.Vec, rows []int32, lo, hi int64, ids []int32) {
	d := vec.MakeSlice[int32](t.pool, int(hi-lo)+1)
	st := t.keys[0]
	if t.pool != nil {
		t.growKeys(len(rows))
	}
	switch k.Type.ID {
	case vec.Int64, vec.Decimal64, vec.Datetime:
		x := k.I64
		for n, r := range rows {
			o := x[r] - lo
			g := d[o] - 1
			if g < 0 {
				g = int32(t.n)
				st.I64 = append(st.I64, x[r])
				t.n++
				d[o] = g + 1
			}
			ids[n] = g
		}
	default: // Int32, Date32
		x := k.I32
		for n, r := range rows {
			o := int64(x[r]) - lo
			g := d[o] - 1
			if g < 0 {
				g = int32(t.n)
				st.I32 = append(st.I32, x[r])
				t.n++
				d[o] = g + 1
			}
			ids[n] = g
		}
	}
	t.direct, t.directLo = d, lo
	t.stale.Store(true)
}

// ensureIndex builds the hashed index of keys inserted through the direct index alone.
func (t *hashTable) ensureIndex() {
	if !t.stale.Load() {
		return
	}
	t.indexMu.Lock()
	defer t.indexMu.Unlock()
	if !t.stale.Load() {
		return
	}
	rows := make([]int32, t.n)
	for i := range rows {
		rows[i] = int32(i)
	}
	h := make([]uint64, t.n)
	hashRows(t.keys, rows, h, t.seed)
	vec.FreeSlice(t.pool, t.slots)
	t.slots = nil
	t.rehash(slotsFor(t.n))
	for g, hv := range h {
		p := hv >> t.shift
		for t.slots[p] != 0 {
			p = (p + 1) & t.mask
		}
		t.slots[p] = hv&^slotIDBits | uint64(g+1)
	}
	t.stale.Store(false)
}

// dropDirect gives back the direct index and the filter, which an insert makes stale.
func (t *hashTable) dropDirect() {
	if t.direct != nil {
		vec.FreeSlice(t.pool, t.direct)
		t.direct = nil
	}
	if t.filter != nil {
		vec.FreeSlice(t.pool, t.filter)
		t.filter = nil
	}
}

// findDirect is find through the direct index, without hashes: it reports false, having
// done nothing, when the table has none or keys are not the one integer column it indexes.
// Listed rows must not be NULL.
func (t *hashTable) findDirect(keys []*vec.Vec, rows []int32, ids []int32) bool {
	if t.direct == nil || len(keys) != 1 || keys[0].Type.ID != t.types[0].ID {
		return false
	}
	d, lo := t.direct, t.directLo
	n := uint64(len(d))
	switch k := keys[0]; k.Type.ID {
	case vec.Int64, vec.Decimal64, vec.Datetime:
		x := k.I64
		for _, i := range rows {
			ids[i] = -1
			if o := uint64(x[i] - lo); o < n {
				ids[i] = d[o] - 1
			}
		}
	case vec.Int32, vec.Date32:
		x := k.I32
		for _, i := range rows {
			ids[i] = -1
			if o := uint64(int64(x[i]) - lo); o < n {
				ids[i] = d[o] - 1
			}
		}
	default:
		return false
	}
	return true
}

// slotsFor is the index size for n keys: a power of two at least 2n.
func slotsFor(n int) int {
	s := minSlots
	for s < 2*n {
		s *= 2
	}
	return s
}

// regionSlots is the size of the index regions partitionRows groups rows by: 32 K slots,
// 256 KiB, which stay in a core's cache while their rows are inserted.
const regionSlots = 1 << 15

// partitionRows returns rows reordered by the region of the index their hash starts
// probing in (a stable counting sort), so that inserting them in that order touches one
// region at a time. Rows are unchanged when the index is a single region.
func (t *hashTable) partitionRows(rows []int32, h []uint64) []int32 {
	t.ensureIndex()
	nparts := len(t.slots) / regionSlots
	if nparts <= 1 {
		return rows
	}
	shift := t.shift + uint(bits.TrailingZeros(regionSlots))
	counts := make([]int32, nparts+1)
	for _, r := range rows {
		counts[h[r]>>shift+1]++
	}
	for p := 1; p <= nparts; p++ {
		counts[p] += counts[p-1]
	}
	out := make([]int32, len(rows))
	for _, r := range rows {
		p := h[r] >> shift
		out[counts[p]] = r
		counts[p]++
	}
	return out
}

// probeScratch is per-caller working memory for lookups (a table may be probed by many
// workers at once; the table itself is then read-only).
type probeScratch struct {
	h       []uint64
	pos     []uint64 // per row: the slot of its current candidate
	home    []uint64 // per row: the contents of its home slot
	diff    []uint8
	toCheck []int32
	misses  []int32
}

func (s *probeScratch) prepare(n int) {
	if cap(s.h) < n {
		c := max(n, 2*cap(s.h))
		s.h = make([]uint64, n, c)
		s.pos = make([]uint64, n, c)
		s.diff = make([]uint8, n, c)
		s.home = make([]uint64, n, c)
	}
	s.h, s.pos, s.diff, s.home = s.h[:n], s.pos[:n], s.diff[:n], s.home[:n]
}

// find sets ids[i], for each listed row, to the id of its key or -1; s.h must hold the rows'
// hashes (hashRows with t.seed).
func (t *hashTable) find(keys []*vec.Vec, rows []int32, ids []int32, s *probeScratch) {
	t.ensureIndex()
	h, pos, diff := s.h, s.pos, s.diff
	slots, mask, shift := t.slots, t.mask, t.shift
	// Each row probes to the first slot with its tag (or an empty slot: absent); only those
	// candidates have their keys compared. The home slots are loaded first by a loop without
	// branches, so that their cache misses overlap instead of waiting behind mispredicted
	// branches.
	home := s.home
	for _, i := range rows {
		home[i] = slots[h[i]>>shift]
	}
	toCheck := s.toCheck[:0]
	for _, i := range rows {
		if t.probe(i, h[i], h[i]>>shift, home[i], ids, pos) {
			diff[i] = 0
			toCheck = append(toCheck, i)
		}
	}
	for len(toCheck) > 0 {
		for c, k := range keys {
			t.compareColumn(c, k, toCheck, ids, diff)
		}
		again := toCheck[:0]
		for _, i := range toCheck {
			if diff[i] == 0 {
				continue
			}
			// Equal tags, different keys: probe on.
			p := (pos[i] + 1) & mask
			if t.probe(i, h[i], p, slots[p], ids, pos) {
				diff[i] = 0
				again = append(again, i)
			}
		}
		toCheck = again
	}
	s.toCheck = toCheck
}

// probe walks row i's probe sequence from slot p (whose contents are sl) to the first slot
// with the tag of hash h, setting ids[i] and pos[i] to its id and position and reporting
// true, or to an empty slot, setting ids[i] to -1.
func (t *hashTable) probe(i int32, h, p, sl uint64, ids []int32, pos []uint64) bool {
	tag := h &^ slotIDBits
	for {
		if sl == 0 {
			ids[i] = -1
			return false
		}
		if sl&^slotIDBits == tag {
			ids[i] = int32(sl&slotIDBits) - 1
			pos[i] = p
			return true
		}
		p = (p + 1) & t.mask
		sl = t.slots[p]
	}
}

// compareColumn sets diff[i] for rows whose key column c differs from id ids[i]'s.
func (t *hashTable) compareColumn(c int, k *vec.Vec, rows []int32, ids []int32, diff []uint8) {
	st := t.keys[c]
	if k.Nulls != nil || st.Nulls != nil {
		t.compareColumnNulls(c, k, rows, ids, diff)
		return
	}
	switch k.Type.ID {
	case vec.Int32, vec.Date32:
		a, b := k.I32, st.I32
		for _, i := range rows {
			diff[i] |= b2u8(a[i] != b[ids[i]])
		}
	case vec.Int64, vec.Decimal64, vec.Datetime:
		a, b := k.I64, st.I64
		for _, i := range rows {
			diff[i] |= b2u8(a[i] != b[ids[i]])
		}
	case vec.Decimal128:
		a, b := k.D128, st.D128
		for _, i := range rows {
			diff[i] |= b2u8(a[i] != b[ids[i]])
		}
	case vec.Float64:
		a, b := k.F64, st.F64
		for _, i := range rows {
			x, y := a[i], b[ids[i]]
			diff[i] |= b2u8(x != y && (x == x || y == y))
		}
	case vec.Bool:
		a, b := k.Bool, st.Bool
		for _, i := range rows {
			diff[i] |= b2u8(a[i] != b[ids[i]])
		}
	case vec.String:
		ao, ad, bo, bd := k.Offsets, k.Bytes, st.Offsets, st.Bytes
		for _, i := range rows {
			if diff[i] != 0 {
				continue
			}
			g := ids[i]
			sa, sb := ad[ao[i]:ao[i+1]], bd[bo[g]:bo[g+1]]
			if len(sa) != len(sb) {
				diff[i] = 1
				continue
			}
			if len(sa) > 16 {
				diff[i] = b2u8(!bytes.Equal(sa, sb))
				continue
			}
			// Short keys (flags, modes, codes): compare inline rather than call memequal.
			for k := range sa {
				if sa[k] != sb[k] {
					diff[i] = 1
					break
				}
			}
		}
	}
}

// compareColumnNulls is compareColumn for columns with NULLs: NULL equals NULL and differs
// from every value.
func (t *hashTable) compareColumnNulls(c int, k *vec.Vec, rows []int32, ids []int32, diff []uint8) {
	st := t.keys[c]
	for _, i := range rows {
		if diff[i] == 0 && !vec.RowsEqual(k, int(i), st, int(ids[i])) {
			diff[i] = 1
		}
	}
}

// findOrInsert sets ids[i] for each listed row, inserting keys not yet present. The rows
// that inserted a new key are appended to *inserted (if not nil), in row order.
func (t *hashTable) findOrInsert(keys []*vec.Vec, rows []int32, ids []int32, s *probeScratch, inserted *[]int32) error {
	t.find(keys, rows, ids, s)
	h := s.h
	grew := false
	for _, i := range rows {
		if ids[i] >= 0 {
			continue
		}
		// An earlier row of this batch may have inserted the key.
		g, added := t.lookupOrInsert(keys, i, h[i])
		if added {
			grew = true
			if inserted != nil {
				*inserted = append(*inserted, i)
			}
		}
		ids[i] = g
	}
	if grew {
		return t.acct.Resize(t.memSize())
	}
	return nil
}

// lookupOrInsert returns the id of row i's key, inserting it if absent.
func (t *hashTable) lookupOrInsert(keys []*vec.Vec, i int32, h uint64) (int32, bool) {
	tag := h &^ slotIDBits
	p := h >> t.shift
	single := len(keys) == 1 && keys[0].Nulls == nil && t.keys[0].Nulls == nil
	for {
		sl := t.slots[p]
		if sl == 0 {
			break
		}
		if sl&^slotIDBits == tag {
			g := int32(sl&slotIDBits) - 1
			if t.keyEqual(keys, i, g, single) {
				return g, false
			}
		}
		p = (p + 1) & t.mask
	}
	g := t.appendKey(keys, i)
	t.slots[p] = tag | uint64(g+1)
	if 2*t.n > len(t.slots) {
		t.rehash(2 * len(t.slots))
	}
	return g, true
}

// appendKey stores row i's key as the next id and returns that id.
func (t *hashTable) appendKey(keys []*vec.Vec, i int32) int32 {
	t.ensureIndex()
	t.dropDirect()
	g := int32(t.n)
	if t.pool != nil && t.n == t.keyRoom {
		t.growKeys(max(t.n, 256))
	}
	if k := keys[0]; len(keys) == 1 && k.Nulls == nil && t.keys[0].Nulls == nil && (k.Type.ID == vec.Int64 || k.Type.ID == vec.Decimal64 || k.Type.ID == vec.Datetime) {
		t.keys[0].I64 = append(t.keys[0].I64, k.I64[i])
	} else {
		for c, k := range keys {
			t.keys[c].AppendRow(k, int(i))
		}
	}
	t.n++
	return g
}

// keyEqual compares row i of keys with stored key g; single says there is one key column
// and neither side has NULLs.
func (t *hashTable) keyEqual(keys []*vec.Vec, i, g int32, single bool) bool {
	if single {
		k, st := keys[0], t.keys[0]
		switch k.Type.ID {
		case vec.Int64, vec.Decimal64, vec.Datetime:
			return k.I64[i] == st.I64[g]
		case vec.Int32, vec.Date32:
			return k.I32[i] == st.I32[g]
		}
	}
	for c, k := range keys {
		if !vec.RowsEqual(k, int(i), t.keys[c], int(g)) {
			return false
		}
	}
	return true
}

// rehash rebuilds the index with n slots (a power of two, at most 2^32). The old slots are
// read in order; their homes in the new index ascend with them (the tags' top bits), so
// the writes sweep through it instead of scattering.
func (t *hashTable) rehash(n int) {
	old := t.slots
	t.slots = vec.MakeSlice[uint64](t.pool, n)
	t.mask = uint64(n - 1)
	t.shift = uint(64 - bits.TrailingZeros(uint(n)))
	slots, mask, shift := t.slots, t.mask, t.shift
	for _, sl := range old {
		if sl == 0 {
			continue
		}
		p := sl >> shift
		for slots[p] != 0 {
			p = (p + 1) & mask
		}
		slots[p] = sl
	}
	vec.FreeSlice(t.pool, old)
}

func (t *hashTable) memSize() int64 {
	n := int64(cap(t.slots))*8 + int64(cap(t.direct))*4 + int64(cap(t.filter))*8
	for _, k := range t.keys {
		n += k.MemSize()
	}
	return n
}

// runHeads appends to heads the rows whose single int64 key differs from the previous
// listed row's, and reports whether that skips enough rows to pay: data clustered on the
// key (lineitem by l_orderkey) then looks up each run of equal keys once. Afterwards
// fillRuns copies each run head's id to the rest of its run.
func runHeads(k *vec.Vec, rows []int32, heads []int32) ([]int32, bool) {
	if len(rows) == 0 || k.Nulls != nil || (k.Type.ID != vec.Int64 && k.Type.ID != vec.Decimal64 && k.Type.ID != vec.Datetime) {
		return heads, false
	}
	x := k.I64
	// A sample first: unclustered keys (partsupp's ps_suppkey) are told in 64 rows, not
	// after a pass over the whole batch that is then thrown away.
	if len(rows) > 2*runSample {
		repeats := 0
		for n := 1; n < runSample; n++ {
			if x[rows[n]] == x[rows[n-1]] {
				repeats++
			}
		}
		if repeats < runSample/4 {
			return heads, false
		}
	}
	heads = append(heads, rows[0])
	prev := x[rows[0]]
	for _, i := range rows[1:] {
		if v := x[i]; v != prev {
			heads = append(heads, i)
			prev = v
		}
	}
	return heads, len(heads) <= len(rows)*3/4
}

// runSample is how many rows runHeads looks at before it decides whether to look for runs.
const runSample = 64

// fillRuns gives every row the id of the run head before it (see runHeads).
func fillRuns(k *vec.Vec, rows []int32, ids []int32) {
	x := k.I64
	for n := 1; n < len(rows); n++ {
		i, p := rows[n], rows[n-1]
		if x[i] == x[p] {
			ids[i] = ids[p]
		}
	}
}
