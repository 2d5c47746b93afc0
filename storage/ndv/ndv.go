// Package ndv owns colink's distinct-value sketches: a HyperLogLog of 2^12 registers per
// column that storage fills as it writes a segment, keeps in the catalog, and that the
// primprocs and their clients merge (register-wise maximum) to estimate a column's number of
// distinct values (NDV) over any set of segments without double counting a value that
// several segments or primprocs hold.
//
// A value enters as a 64-bit hash: integers (and dates, decimals as their unscaled integer,
// booleans as 0/1) through HashInt64, doubles through HashFloat64, strings and binary values
// through HashBytes (XXH3-64). The hashes are part of the stored format: a sketch written by
// one process merges with a sketch written by another only because both hash alike.
//
// The estimate is Ertl's improved raw estimator ("New cardinality estimation algorithms for
// HyperLogLog sketches", 2017), which needs no bias tables and is accurate from one value to
// far beyond 2^40: its relative standard error is about 1.04/sqrt(4096) = 1.6%.
package ndv

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"

	"github.com/zeebo/xxh3"
)

// Precision is log2 of the number of registers.
const Precision = 12

// Registers is the number of registers of a sketch.
const Registers = 1 << Precision

// maxRank is the largest register value: the 64-Precision hash bits below the index all
// zero.
const maxRank = 64 - Precision + 1

// Sketch is a HyperLogLog sketch. The zero value is an empty sketch; a Sketch is 4 KiB and
// not safe for concurrent use.
type Sketch struct {
	reg [Registers]uint8
}

// HashInt64 is the hash of an integer value: the 64-bit finaliser of MurmurHash3, a
// bijection whose output bits each depend on every input bit.
func HashInt64(v int64) uint64 {
	x := uint64(v)
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// HashFloat64 is the hash of a double: of its bits, with -0 taken as 0 and every NaN as one
// value.
func HashFloat64(f float64) uint64 {
	switch {
	case f == 0:
		f = 0
	case f != f:
		f = math.NaN()
	}
	return HashInt64(int64(math.Float64bits(f)))
}

// HashBytes is the hash of a string or binary value (XXH3-64, seed 0).
func HashBytes(b []byte) uint64 { return xxh3.Hash(b) }

// HashString is HashBytes of a string.
func HashString(s string) uint64 { return xxh3.HashString(s) }

// AddHash adds a value by its hash.
func (s *Sketch) AddHash(h uint64) {
	i := h >> (64 - Precision)
	w := h << Precision
	r := uint8(maxRank)
	if w != 0 {
		r = uint8(bits.LeadingZeros64(w) + 1)
	}
	if r > s.reg[i] {
		s.reg[i] = r
	}
}

// AddInt64s adds integer values; valid, when not nil, is an Arrow validity bitmap whose bit
// off+i says whether vals[i] is a value (not NULL).
func (s *Sketch) AddInt64s(vals []int64, valid []byte, off int) {
	for i, v := range vals {
		if valid == nil || isSet(valid, off+i) {
			s.AddHash(HashInt64(v))
		}
	}
}

// AddInt32s adds integer values (see AddInt64s). An int32 hashes as the same int64.
func (s *Sketch) AddInt32s(vals []int32, valid []byte, off int) {
	for i, v := range vals {
		if valid == nil || isSet(valid, off+i) {
			s.AddHash(HashInt64(int64(v)))
		}
	}
}

// AddFloat64s adds doubles (see AddInt64s).
func (s *Sketch) AddFloat64s(vals []float64, valid []byte, off int) {
	for i, v := range vals {
		if valid == nil || isSet(valid, off+i) {
			s.AddHash(HashFloat64(v))
		}
	}
}

// AddBytes adds the n byte-array values of an Arrow string or binary array: value i is
// data[offsets[i]:offsets[i+1]] (see AddInt64s for valid and off).
func (s *Sketch) AddBytes(data []byte, offsets []int32, n int, valid []byte, off int) {
	for i := range n {
		if valid == nil || isSet(valid, off+i) {
			s.AddHash(xxh3.Hash(data[offsets[i]:offsets[i+1]]))
		}
	}
}

func isSet(bitmap []byte, i int) bool { return bitmap[i>>3]&(1<<(i&7)) != 0 }

// Merge adds o's values to s: afterwards s estimates the distinct values of the union.
func (s *Sketch) Merge(o *Sketch) {
	for i, r := range o.reg {
		if r > s.reg[i] {
			s.reg[i] = r
		}
	}
}

// Empty reports whether no value was added.
func (s *Sketch) Empty() bool {
	for _, r := range s.reg {
		if r != 0 {
			return false
		}
	}
	return true
}

// Estimate returns the estimated number of distinct values added.
func (s *Sketch) Estimate() float64 {
	var hist [maxRank + 1]int
	for _, r := range s.reg {
		hist[r]++
	}
	if hist[0] == Registers {
		return 0
	}
	const m = float64(Registers)
	z := m * tau(1-float64(hist[maxRank])/m)
	for k := maxRank - 1; k >= 1; k-- {
		z = 0.5 * (z + float64(hist[k]))
	}
	z += m * sigma(float64(hist[0])/m)
	const alphaInf = 0.7213475204444817 // 1 / (2 ln 2)
	return alphaInf * m * m / z
}

// sigma is Ertl's σ(x) = x + Σ_{k≥1} x^(2^k) 2^(k−1), the correction for empty registers.
func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += x * y
		y += y
		if z == prev {
			return z
		}
	}
}

// tau is Ertl's τ(x) = (1 − x − Σ_{k≥1} (1 − x^(2^−k))² 2^−k) / 3, the correction for
// saturated registers.
func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		z -= (1 - x) * (1 - x) * y
		if z == prev {
			return z / 3
		}
	}
}

// formatVersion starts an encoded sketch; a change of hashing or layout changes it.
const formatVersion = 1

// MarshalBinary encodes the sketch: a version byte, the precision, and the registers
// compressed with DEFLATE (a sketch of few values is mostly zeros and shrinks to tens of
// bytes; one of millions to about 2 KiB).
func (s *Sketch) MarshalBinary() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte(formatVersion)
	buf.WriteByte(Precision)
	zw, err := flate.NewWriter(&buf, flate.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(s.reg[:]); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ErrFormat is wrapped by the errors of UnmarshalBinary.
var ErrFormat = errors.New("ndv: malformed sketch")

// UnmarshalBinary decodes what MarshalBinary wrote.
func (s *Sketch) UnmarshalBinary(b []byte) error {
	if len(b) < 2 {
		return fmt.Errorf("%w: %d bytes", ErrFormat, len(b))
	}
	if b[0] != formatVersion || b[1] != Precision {
		return fmt.Errorf("%w: version %d precision %d, this build reads version %d precision %d",
			ErrFormat, b[0], b[1], formatVersion, Precision)
	}
	zr := flate.NewReader(bytes.NewReader(b[2:]))
	defer zr.Close()
	if _, err := io.ReadFull(zr, s.reg[:]); err != nil {
		return fmt.Errorf("%w: registers: %v", ErrFormat, err)
	}
	var one [1]byte
	if n, err := zr.Read(one[:]); n != 0 || err != io.EOF {
		return fmt.Errorf("%w: not a stream of %d registers (%v)", ErrFormat, Registers, err)
	}
	for i, r := range s.reg {
		if r > maxRank {
			return fmt.Errorf("%w: register %d holds %d, above %d", ErrFormat, i, r, maxRank)
		}
	}
	return nil
}

// Decode returns the sketch b encodes.
func Decode(b []byte) (*Sketch, error) {
	s := new(Sketch)
	if err := s.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	return s, nil
}
