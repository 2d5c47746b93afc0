package exec

import "sync"

// KeyBound is how far a fragment's top-N has got on its first sort key, for the scan to skip
// row groups that cannot hold a row it would keep: once a worker's top-N holds its N rows,
// the worst of them is a cutoff, and a row group whose every key sorts after the cutoff (its
// least key above it, ascending; its greatest below it, descending) holds only rows beaten
// by N others. Workers offer their cutoffs and the bound keeps the tightest; the scan asks
// before reading each row group. "select l_orderkey from lineitem order by 1 limit 100" then
// reads the row groups of the first segment and skips the rest.
//
// A bound exists only where the first sort key is a column of the scan of an integer-class
// type (integers, dates, decimals held in 64 bits, datetimes), carried unchanged through
// the steps before the top-N: filters, joins (which keep the probe's columns first) and
// projections that pass it on.
type KeyBound struct {
	col  int // the scan column the key reads
	desc bool
	// Offers come once per compaction of a worker's top-N and questions once per row
	// group: a mutex costs nothing here.
	mu  sync.Mutex
	set bool
	cut int64
}

// newKeyBound returns the bound for a fragment whose first blocking step, step split, is a
// top-N, or nil where the bound cannot apply.
func newKeyBound(f *Fragment, split int) *KeyBound {
	if split < 0 || split >= len(f.Steps) || f.Steps[split].TopN == nil || len(f.Steps[split].TopN.Keys) == 0 {
		return nil
	}
	key := f.Steps[split].TopN.Keys[0]
	col := scanColumnOf(f, split, key.Col)
	if col < 0 || !intClass(f.Scan.Types[col]) {
		return nil
	}
	return &KeyBound{col: col, desc: key.Desc}
}

// Col is the scan column whose zone maps the bound is checked against.
func (b *KeyBound) Col() int { return b.col }

// Desc reports whether the key sorts descending.
func (b *KeyBound) Desc() bool { return b.desc }

// offer tightens the bound to a worker's cutoff.
func (b *KeyBound) offer(v int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.set || (!b.desc && v < b.cut) || (b.desc && v > b.cut) {
		b.cut, b.set = v, true
	}
}

// Excludes reports whether a row group whose key values lie in [lo, hi], and may include
// NULLs if mayNull, cannot hold a row the top-N keeps. NULLs sort first ascending (MySQL's
// order), so a group that may hold them is never skipped ascending.
func (b *KeyBound) Excludes(lo, hi int64, mayNull bool) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case !b.set:
		return false
	case b.desc:
		return hi < b.cut
	}
	return !mayNull && lo > b.cut
}
