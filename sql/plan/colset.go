package plan

import (
	"math/bits"
	"strconv"
	"strings"
)

// ColSet is a set of column IDs. The zero value is empty; sets are values but share their
// storage, so Copy before changing a set that someone else holds.
type ColSet struct {
	words []uint64
}

// MakeColSet returns the set of the given IDs.
func MakeColSet(ids ...ColumnID) ColSet {
	var s ColSet
	for _, id := range ids {
		s.Add(id)
	}
	return s
}

// Add inserts id.
func (s *ColSet) Add(id ColumnID) {
	w := int(id) / 64
	for len(s.words) <= w {
		s.words = append(s.words, 0)
	}
	s.words[w] |= 1 << (uint(id) % 64)
}

// Remove deletes id.
func (s *ColSet) Remove(id ColumnID) {
	if w := int(id) / 64; w < len(s.words) {
		s.words[w] &^= 1 << (uint(id) % 64)
	}
}

// Has reports whether id is in the set.
func (s ColSet) Has(id ColumnID) bool {
	w := int(id) / 64
	return w < len(s.words) && s.words[w]&(1<<(uint(id)%64)) != 0
}

// Empty reports whether the set has no members.
func (s ColSet) Empty() bool {
	for _, w := range s.words {
		if w != 0 {
			return false
		}
	}
	return true
}

// Len is the number of members.
func (s ColSet) Len() int {
	n := 0
	for _, w := range s.words {
		n += bits.OnesCount64(w)
	}
	return n
}

// Copy returns an independent copy.
func (s ColSet) Copy() ColSet { return ColSet{words: append([]uint64(nil), s.words...)} }

// UnionWith adds the members of o.
func (s *ColSet) UnionWith(o ColSet) {
	for len(s.words) < len(o.words) {
		s.words = append(s.words, 0)
	}
	for i, w := range o.words {
		s.words[i] |= w
	}
}

// Union returns s ∪ o as a new set.
func (s ColSet) Union(o ColSet) ColSet {
	r := s.Copy()
	r.UnionWith(o)
	return r
}

// Intersection returns s ∩ o as a new set.
func (s ColSet) Intersection(o ColSet) ColSet {
	var r ColSet
	for i := 0; i < len(s.words) && i < len(o.words); i++ {
		if w := s.words[i] & o.words[i]; w != 0 {
			for len(r.words) <= i {
				r.words = append(r.words, 0)
			}
			r.words[i] = w
		}
	}
	return r
}

// Difference returns s \ o as a new set.
func (s ColSet) Difference(o ColSet) ColSet {
	r := s.Copy()
	for i := 0; i < len(r.words) && i < len(o.words); i++ {
		r.words[i] &^= o.words[i]
	}
	return r
}

// SubsetOf reports s ⊆ o.
func (s ColSet) SubsetOf(o ColSet) bool {
	for i, w := range s.words {
		var ow uint64
		if i < len(o.words) {
			ow = o.words[i]
		}
		if w&^ow != 0 {
			return false
		}
	}
	return true
}

// Intersects reports s ∩ o ≠ ∅.
func (s ColSet) Intersects(o ColSet) bool {
	for i := 0; i < len(s.words) && i < len(o.words); i++ {
		if s.words[i]&o.words[i] != 0 {
			return true
		}
	}
	return false
}

// Equals reports s = o.
func (s ColSet) Equals(o ColSet) bool { return s.SubsetOf(o) && o.SubsetOf(s) }

// Ordered returns the members in increasing order.
func (s ColSet) Ordered() []ColumnID {
	var out []ColumnID
	for i, w := range s.words {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			out = append(out, ColumnID(i*64+b))
			w &^= 1 << uint(b)
		}
	}
	return out
}

func (s ColSet) String() string {
	var b strings.Builder
	b.WriteByte('(')
	for i, id := range s.Ordered() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(id)))
	}
	b.WriteByte(')')
	return b.String()
}
