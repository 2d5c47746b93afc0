package exec

import (
	"math/bits"

	"github.com/colinkdb/colink/exec/vec"
)

// keyPacker packs a row's group-by keys into one uint64 when they are short strings
// (flags, modes, codes), 32-bit integers, dates or booleans and fit in 64 bits together, so
// that low-cardinality grouping (TPC-H Q1's two flags) probes a small open-addressing map
// of words instead of hashing and comparing each column. Every column packs as a NULL bit
// followed by its value; a string as its length then its bytes. String widths come from
// the first batch; a later, longer string switches the aggregation to the general path for
// good (the general hash table holds every group either way).
type keyPacker struct {
	cols []packCol
	ok   bool
}

type packCol struct {
	id     vec.TypeID
	maxLen int  // strings
	lenBit uint // strings: bits of the length field
	shift  uint // bit offset of the column's NULL bit
}

// newKeyPacker returns a packer for the key types, or nil if some type cannot be packed.
func newKeyPacker(types []vec.Type) *keyPacker {
	p := &keyPacker{}
	for _, t := range types {
		switch t.ID {
		case vec.String, vec.Int32, vec.Date32, vec.Bool:
		default:
			return nil
		}
		p.cols = append(p.cols, packCol{id: t.ID})
	}
	return p
}

// layout fixes the string widths from a first batch; it reports whether the keys fit.
func (p *keyPacker) layout(keys []*vec.Vec, rows []int32) bool {
	var shift uint
	for c := range p.cols {
		pc := &p.cols[c]
		pc.shift = shift
		switch pc.id {
		case vec.String:
			k := keys[c]
			for _, i := range rows {
				pc.maxLen = max(pc.maxLen, int(k.Offsets[i+1]-k.Offsets[i]))
			}
			pc.maxLen = max(pc.maxLen, 1)
			pc.lenBit = uint(bits.Len(uint(pc.maxLen)))
			shift += 1 + pc.lenBit + 8*uint(pc.maxLen)
		case vec.Int32, vec.Date32:
			shift += 33
		case vec.Bool:
			shift += 2
		}
	}
	p.ok = shift <= 64
	return p.ok
}

// pack writes each row's packed keys into out; false means a string was too long.
func (p *keyPacker) pack(keys []*vec.Vec, rows []int32, out []uint64) bool {
	for _, i := range rows {
		out[i] = 0
	}
	for c := range p.cols {
		pc := &p.cols[c]
		k := keys[c]
		s := pc.shift
		switch pc.id {
		case vec.String:
			offs, data := k.Offsets, k.Bytes
			if pc.maxLen == 1 {
				// One-character flags: the length bit, then the byte.
				for _, i := range rows {
					o := offs[i]
					l := offs[i+1] - o
					if l > 1 {
						return false
					}
					w := uint64(l)
					if l == 1 {
						w |= uint64(data[o]) << 1
					}
					out[i] |= w << (s + 1)
				}
				break
			}
			for _, i := range rows {
				b := data[offs[i]:offs[i+1]]
				if len(b) > pc.maxLen {
					return false
				}
				w := uint64(len(b))
				for j, ch := range b {
					w |= uint64(ch) << (pc.lenBit + 8*uint(j))
				}
				out[i] |= w << (s + 1)
			}
		case vec.Int32, vec.Date32:
			x := k.I32
			for _, i := range rows {
				out[i] |= uint64(uint32(x[i])) << (s + 1)
			}
		case vec.Bool:
			x := k.Bool
			for _, i := range rows {
				out[i] |= uint64(b2u8(x[i])) << (s + 1)
			}
		}
		if k.Nulls != nil {
			// A NULL is its NULL bit alone: clear the value's bits, set the flag.
			var width uint
			switch pc.id {
			case vec.String:
				width = pc.lenBit + 8*uint(pc.maxLen)
			case vec.Int32, vec.Date32:
				width = 32
			case vec.Bool:
				width = 1
			}
			mask := (uint64(1)<<(width+1) - 1) << s
			for _, i := range rows {
				if k.Nulls[i] {
					out[i] = out[i]&^mask | 1<<s
				}
			}
		}
	}
	return true
}

// wordMap maps packed keys to group ids (open addressing, linear probing).
type wordMap struct {
	keys []uint64
	ids  []int32 // id + 1; 0 is an empty slot
	mask uint64
	n    int
}

func newWordMap() *wordMap {
	return &wordMap{keys: make([]uint64, 64), ids: make([]int32, 64), mask: 63}
}

func (m *wordMap) get(k uint64) int32 {
	for s := mix64(k) & m.mask; ; s = (s + 1) & m.mask {
		id := m.ids[s]
		if id == 0 {
			return -1
		}
		if m.keys[s] == k {
			return id - 1
		}
	}
}

func (m *wordMap) put(k uint64, id int32) {
	if 2*(m.n+1) > len(m.keys) {
		old := *m
		m.keys = make([]uint64, 2*len(old.keys))
		m.ids = make([]int32, 2*len(old.ids))
		m.mask = uint64(len(m.keys) - 1)
		m.n = 0
		for s, oid := range old.ids {
			if oid != 0 {
				m.put(old.keys[s], oid-1)
			}
		}
	}
	s := mix64(k) & m.mask
	for m.ids[s] != 0 {
		s = (s + 1) & m.mask
	}
	m.keys[s], m.ids[s] = k, id+1
	m.n++
}

func (m *wordMap) memSize() int64 { return int64(len(m.keys))*8 + int64(len(m.ids))*4 }
