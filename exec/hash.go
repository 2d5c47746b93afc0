package exec

import (
	"hash/maphash"
	"math"

	"github.com/colinkdb/colink/exec/vec"
)

// mix64 is MurmurHash3's 64-bit finaliser: a bijection that spreads every input bit.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

const (
	hashSeed0 = 0x9e3779b97f4a7c15
	hashNull  = 0x5bd1e9955bd1e995
)

// hashRows combines the key columns' hashes of the listed rows into h (indexed by row).
// Equal keys hash equally whatever batch they come from; NULLs hash to a fixed value.
func hashRows(keys []*vec.Vec, rows []int32, h []uint64, seed maphash.Seed) {
	for _, i := range rows {
		h[i] = hashSeed0
	}
	for _, k := range keys {
		hashColumn(k, rows, h, seed)
	}
}

func hashColumn(v *vec.Vec, rows []int32, h []uint64, seed maphash.Seed) {
	switch v.Type.ID {
	case vec.Int32, vec.Date32:
		x := v.I32
		for _, i := range rows {
			h[i] = mix64(h[i] ^ uint64(int64(x[i])))
		}
	case vec.Int64, vec.Decimal64:
		x := v.I64
		for _, i := range rows {
			h[i] = mix64(h[i] ^ uint64(x[i]))
		}
	case vec.Decimal128:
		x := v.D128
		for _, i := range rows {
			h[i] = mix64(mix64(h[i]^x[i].Lo) ^ uint64(x[i].Hi))
		}
	case vec.Float64:
		x := v.F64
		for _, i := range rows {
			f := x[i]
			if f == 0 {
				f = 0 // -0 hashes as 0
			} else if f != f {
				f = math.NaN()
			}
			h[i] = mix64(h[i] ^ math.Float64bits(f))
		}
	case vec.Bool:
		x := v.Bool
		for _, i := range rows {
			h[i] = mix64(h[i] ^ uint64(b2u8(x[i])+1))
		}
	case vec.String:
		offs, data := v.Offsets, v.Bytes
		for _, i := range rows {
			s := data[offs[i]:offs[i+1]]
			if len(s) <= 8 {
				// Short strings are packed into a word with their length: one mix.
				var w uint64
				for k, c := range s {
					w |= uint64(c) << (8 * k)
				}
				h[i] = mix64(h[i] ^ w ^ uint64(len(s))<<59 ^ 0x2545f4914f6cdd1d)
				continue
			}
			h[i] = mix64(h[i] ^ maphash.Bytes(seed, s))
		}
	}
	if v.Nulls != nil {
		for _, i := range rows {
			if v.Nulls[i] {
				h[i] = mix64(h[i] ^ hashNull)
			}
		}
	}
}

func b2u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
