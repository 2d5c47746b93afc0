package exec

import (
	"bytes"
	"hash/maphash"

	"github.com/colinkdb/colink/exec/vec"
)

// hashTable maps distinct key tuples to dense ids 0..n-1, in insertion order. Keys are
// stored column-wise; collisions chain through next. It serves hash aggregation (ids are
// groups), DISTINCT, and the build side of hash joins.
//
// Lookups are vectorized: all rows of a batch walk their chains together, comparing one
// key column at a time with typed loops. NULL keys are equal to each other here (GROUP BY
// semantics); joins drop NULL keys before looking up.
type hashTable struct {
	types   []vec.Type
	keys    []*vec.Vec // append-mode, one row per id
	hashes  []uint64   // per id
	next    []int32    // per id: next id in the chain + 1 (0 ends it)
	buckets []int32    // head id + 1 (0: empty)
	mask    uint64
	seed    maphash.Seed
	acct    *Account
}

func newHashTable(types []vec.Type, acct *Account) *hashTable {
	t := &hashTable{types: types, seed: maphash.MakeSeed(), acct: acct}
	for _, ty := range types {
		t.keys = append(t.keys, vec.NewVec(ty))
	}
	t.buckets = make([]int32, 1024)
	t.mask = 1023
	return t
}

// len is the number of distinct keys.
func (t *hashTable) len() int { return len(t.hashes) }

// probeScratch is per-caller working memory for lookups (a table may be probed by many
// workers at once; the table itself is then read-only).
type probeScratch struct {
	h       []uint64
	diff    []uint8
	toCheck []int32
	misses  []int32
}

func (s *probeScratch) prepare(n int) {
	if cap(s.h) < n {
		s.h = make([]uint64, n, max(n, 2*cap(s.h)))
		s.diff = make([]uint8, n, max(n, 2*cap(s.diff)))
	}
	s.h, s.diff = s.h[:n], s.diff[:n]
}

// find sets ids[i], for each listed row, to the id of its key or -1; s.h must hold the rows'
// hashes (hashRows with t.seed).
func (t *hashTable) find(keys []*vec.Vec, rows []int32, ids []int32, s *probeScratch) {
	h, diff := s.h, s.diff
	hashes, next := t.hashes, t.next
	// Walk each row's chain to the first id with an equal hash; only those candidates have
	// their keys compared (with typed loops, one column at a time).
	toCheck := s.toCheck[:0]
	for _, i := range rows {
		hi := h[i]
		g := t.buckets[hi&t.mask] - 1
		for g >= 0 && hashes[g] != hi {
			g = next[g] - 1
		}
		ids[i] = g
		if g >= 0 {
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
			// Equal hashes, different keys: continue down the chain.
			hi := h[i]
			g := next[ids[i]] - 1
			for g >= 0 && hashes[g] != hi {
				g = next[g] - 1
			}
			ids[i] = g
			if g >= 0 {
				diff[i] = 0
				again = append(again, i)
			}
		}
		toCheck = again
	}
	s.toCheck = toCheck
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
	case vec.Int64, vec.Decimal64:
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
		g := t.lookupOne(keys, i, h[i])
		if g < 0 {
			g = t.insertOne(keys, i, h[i])
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

func (t *hashTable) lookupOne(keys []*vec.Vec, i int32, h uint64) int32 {
	if len(keys) == 1 && keys[0].Nulls == nil && t.keys[0].Nulls == nil {
		// One key column without NULLs: compare typed payloads directly.
		k, st := keys[0], t.keys[0]
		switch k.Type.ID {
		case vec.Int64, vec.Decimal64:
			v := k.I64[i]
			for g := t.buckets[h&t.mask] - 1; g >= 0; g = t.next[g] - 1 {
				if t.hashes[g] == h && st.I64[g] == v {
					return g
				}
			}
			return -1
		case vec.Int32, vec.Date32:
			v := k.I32[i]
			for g := t.buckets[h&t.mask] - 1; g >= 0; g = t.next[g] - 1 {
				if t.hashes[g] == h && st.I32[g] == v {
					return g
				}
			}
			return -1
		}
	}
	for g := t.buckets[h&t.mask] - 1; g >= 0; g = t.next[g] - 1 {
		if t.hashes[g] != h {
			continue
		}
		eq := true
		for c, k := range keys {
			if !vec.RowsEqual(k, int(i), t.keys[c], int(g)) {
				eq = false
				break
			}
		}
		if eq {
			return g
		}
	}
	return -1
}

func (t *hashTable) insertOne(keys []*vec.Vec, i int32, h uint64) int32 {
	g := int32(len(t.hashes))
	if len(keys) == 1 && keys[0].Nulls == nil && t.keys[0].Nulls == nil && keys[0].Type.ID == vec.Int64 {
		t.keys[0].I64 = append(t.keys[0].I64, keys[0].I64[i])
	} else {
		for c, k := range keys {
			t.keys[c].AppendRow(k, int(i))
		}
	}
	t.hashes = append(t.hashes, h)
	b := h & t.mask
	t.next = append(t.next, t.buckets[b])
	t.buckets[b] = g + 1
	if len(t.hashes) > len(t.buckets)*3/4 {
		t.rehash(2 * len(t.buckets))
	}
	return g
}

func (t *hashTable) rehash(n int) {
	t.buckets = make([]int32, n)
	t.mask = uint64(n - 1)
	for g, h := range t.hashes {
		b := h & t.mask
		t.next[g] = t.buckets[b]
		t.buckets[b] = int32(g) + 1
	}
}

func (t *hashTable) memSize() int64 {
	n := int64(cap(t.hashes))*8 + int64(cap(t.next))*4 + int64(cap(t.buckets))*4
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
	if len(rows) == 0 || k.Nulls != nil || (k.Type.ID != vec.Int64 && k.Type.ID != vec.Decimal64) {
		return heads, false
	}
	x := k.I64
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
