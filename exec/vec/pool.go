package vec

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/internal/bufpool"
)

// Pool is the recycling Arrow allocator operators and fragments take their buffers from:
// colink's one buffer pool (package bufpool), safe for concurrent use, so one pool may
// serve every query of a daemon. Allocate returns zeroed memory, as Arrow's builders
// expect; Sweep, called every interval, lets go of what lay unused the whole interval.
//
// MakeSlice and FreeSlice take typed arrays (hash indexes, aggregate states) from a pool.
type Pool = bufpool.Pool

// PoolStats counts a pool's work.
type PoolStats = bufpool.Stats

// NewPool returns a pool on the Go heap that keeps at most retain bytes of free buffers
// (0: 256 MiB).
func NewPool(retain int64) *Pool { return bufpool.New(bufpool.Options{Retain: retain}) }

// NewScribblingPool is NewPool for tests: every buffer freed is filled with 0xA5 bytes
// before it is kept, so that code reading memory after giving it back computes garbage
// rather than the right answer by luck.
func NewScribblingPool(retain int64) *Pool {
	return bufpool.New(bufpool.Options{Retain: retain, Scribble: true})
}

var _ memory.Allocator = (*Pool)(nil)

// Plain is the element types a Pool's memory may hold as a typed array: fixed-size values
// without pointers (the garbage collector does not scan a pool's buffers, which may lie
// outside its heap).
type Plain interface {
	~bool | ~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float64 | Int128
}

// MakeSlice returns a zeroed slice of n Ts from p, or from the Go heap if p is nil. Its
// capacity may be larger than n; the elements past n are not zeroed. Give it back with
// FreeSlice.
func MakeSlice[T Plain](p *Pool, n int) []T {
	if p == nil {
		return make([]T, n)
	}
	s := makeSliceDirty[T](p, n)
	clear(s)
	return s
}

// FreeSlice returns s's array (a slice MakeSlice returned, or any heap array nothing else
// refers to) to p; with a nil p it does nothing. Nothing may use s afterwards.
func FreeSlice[T Plain](p *Pool, s []T) {
	if p == nil || cap(s) == 0 {
		return
	}
	size := int(unsafe.Sizeof(*new(T)))
	p.Free(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), cap(s)*size))
}

// GrowSlice returns s with length at least n (the elements past its old length zeroed),
// moving it to a larger array from p, at least twice as large, when its capacity is too
// small; the old array then goes back to p.
func GrowSlice[T Plain](p *Pool, s []T, n int) []T {
	if n <= len(s) {
		return s
	}
	if n <= cap(s) {
		old := len(s)
		s = s[:n]
		clear(s[old:])
		return s
	}
	ns := makeSliceDirty[T](p, max(n, 2*cap(s), 16))[:n]
	copy(ns, s)
	clear(ns[len(s):])
	FreeSlice(p, s)
	return ns
}

// makeSliceDirty is MakeSlice without the zeroing: the contents are whatever the pool's
// buffer held. GrowSlice copies the old elements over the front and zeroes only the new
// ones up to the length asked, since growth within the capacity zeroes what it exposes:
// clearing the whole array first cost Q18's aggregation states a tenth of primproc's time.
func makeSliceDirty[T Plain](p *Pool, n int) []T {
	if p == nil {
		return make([]T, n)
	}
	size := int(unsafe.Sizeof(*new(T)))
	b := p.Get(n * size)
	if cap(b) == 0 {
		return make([]T, n)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), cap(b)/size)[:n]
}

// reserveFrom returns s with room for n more elements, in a larger array from p (at least
// twice as large) when it has not; the old array then goes back to p.
func reserveFrom[T Plain](p *Pool, s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	l := len(s)
	return GrowSlice(p, s, max(l+n, 2*cap(s)))[:l]
}

// ReserveFrom is Reserve for an append-mode Vec whose arrays a pool recycles: it makes
// room for n more values, taking larger arrays from p and giving p the old ones. (A
// string column's bytes grow by append as before.)
func (v *Vec) ReserveFrom(p *Pool, n int) {
	switch v.Type.ID {
	case Bool:
		v.Bool = reserveFrom(p, v.Bool, n)
	case Int32, Date32:
		v.I32 = reserveFrom(p, v.I32, n)
	case Int64, Decimal64, Datetime:
		v.I64 = reserveFrom(p, v.I64, n)
	case Decimal128:
		v.D128 = reserveFrom(p, v.D128, n)
	case Float64:
		v.F64 = reserveFrom(p, v.F64, n)
	case String:
		v.Offsets = reserveFrom(p, v.Offsets, n)
	}
	if v.Nulls != nil {
		v.Nulls = reserveFrom(p, v.Nulls, n)
	}
}

// Recycle gives an append-mode Vec's arrays to p and leaves it empty. Nothing may use the
// old values (or views of them) afterwards. With a nil p it does nothing.
func (v *Vec) Recycle(p *Pool) {
	if p == nil {
		return
	}
	FreeSlice(p, v.Bool)
	FreeSlice(p, v.I32)
	FreeSlice(p, v.I64)
	FreeSlice(p, v.D128)
	FreeSlice(p, v.F64)
	FreeSlice(p, v.Offsets)
	FreeSlice(p, v.Bytes)
	FreeSlice(p, v.Nulls)
	*v = Vec{Type: v.Type}
	if v.Type.ID == String {
		v.Offsets = []int32{0}
	}
}
