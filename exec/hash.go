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
// Equal keys hash equally whatever batch they come from, and whether or not their column
// may hold NULLs; a NULL hashes to a fixed value, whatever its payload slot holds (see
// package vec: a NULL's payload is unspecified, and this is the one place keys are hashed).
func hashRows(keys []*vec.Vec, rows []int32, h []uint64, seed maphash.Seed) {
	for _, i := range rows {
		h[i] = hashSeed0
	}
	for _, k := range keys {
		if k.Nulls != nil {
			hashColumnNulls(k, rows, h, seed)
			continue
		}
		hashColumn(k, rows, h, seed)
	}
}

// hashColumn mixes column v's values of the listed rows into h; v has no NULLs.
func hashColumn(v *vec.Vec, rows []int32, h []uint64, seed maphash.Seed) {
	switch v.Type.ID {
	case vec.Int32, vec.Date32:
		x := v.I32
		for _, i := range rows {
			h[i] = mix64(h[i] ^ uint64(int64(x[i])))
		}
	case vec.Int64, vec.Decimal64, vec.Datetime:
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
			h[i] = mixFloat(h[i], x[i])
		}
	case vec.Bool:
		x := v.Bool
		for _, i := range rows {
			h[i] = mix64(h[i] ^ uint64(b2u8(x[i])+1))
		}
	case vec.String:
		for _, i := range rows {
			h[i] = mixString(h[i], v.String(int(i)), seed)
		}
	}
}

// hashColumnNulls is hashColumn for a column with NULLs: a non-NULL row mixes exactly as
// hashColumn mixes it, and a NULL row mixes hashNull instead of its payload, so that every
// NULL of the column lands in one group, one partition and one hash-join bucket.
func hashColumnNulls(v *vec.Vec, rows []int32, h []uint64, seed maphash.Seed) {
	nulls := v.Nulls
	for _, i := range rows {
		if nulls[i] {
			h[i] = mix64(h[i] ^ hashNull)
			continue
		}
		switch v.Type.ID {
		case vec.Int32, vec.Date32:
			h[i] = mix64(h[i] ^ uint64(int64(v.I32[i])))
		case vec.Int64, vec.Decimal64, vec.Datetime:
			h[i] = mix64(h[i] ^ uint64(v.I64[i]))
		case vec.Decimal128:
			h[i] = mix64(mix64(h[i]^v.D128[i].Lo) ^ uint64(v.D128[i].Hi))
		case vec.Float64:
			h[i] = mixFloat(h[i], v.F64[i])
		case vec.Bool:
			h[i] = mix64(h[i] ^ uint64(b2u8(v.Bool[i])+1))
		case vec.String:
			h[i] = mixString(h[i], v.String(int(i)), seed)
		}
	}
}

// mixFloat mixes a DOUBLE into h: -0 hashes as 0 and every NaN as one NaN, since they
// compare equal as keys.
func mixFloat(h uint64, f float64) uint64 {
	if f == 0 {
		f = 0
	} else if f != f {
		f = math.NaN()
	}
	return mix64(h ^ math.Float64bits(f))
}

// mixString mixes a string into h. Short strings (flags, modes, codes) are packed into a
// word with their length: one mix instead of a call.
func mixString(h uint64, s []byte, seed maphash.Seed) uint64 {
	if len(s) <= 8 {
		var w uint64
		for k, c := range s {
			w |= uint64(c) << (8 * k)
		}
		return mix64(h ^ w ^ uint64(len(s))<<59 ^ 0x2545f4914f6cdd1d)
	}
	return mix64(h ^ maphash.Bytes(seed, s))
}

func b2u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
