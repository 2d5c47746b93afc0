package storage

import (
	"time"

	"github.com/colinkdb/colink/internal/bufpool"
)

// decodeIdle is how long the decode pool keeps a buffer nobody uses: long enough to carry
// buffers from a cache drop (or a query's evictions) into the decodes that follow, short
// enough that an idle daemon hands the memory back.
const decodeIdle = 10 * time.Second

// DecodePoolRetain is the idle bound of a store's decode pool for a cache of cacheSize
// bytes: a sixteenth of it, 64 MiB to 512 MiB.
func DecodePoolRetain(cacheSize int64) int64 { return min(512<<20, max(64<<20, cacheSize/16)) }

// decodePool returns the pool a store decodes columns into: off the Go heap (the column
// cache is most of a primproc's memory, and on the heap the garbage collector would let the
// heap grow to twice the cache before collecting), recycling up to DecodePoolRetain of
// buffers freed by evictions and cache drops, so that decodes after a drop reuse memory
// that is already mapped instead of faulting in fresh pages.
func decodePool(cacheSize int64) *bufpool.Pool {
	return bufpool.New(bufpool.Options{
		Retain:   DecodePoolRetain(cacheSize),
		IdleTime: decodeIdle,
		OffHeap:  true,
	})
}

// MemoryStats are the store's memory outside the Go heap.
type MemoryStats struct {
	// Mapped is the decode pool's bytes mapped off the heap: the cached columns, arrays
	// scans still hold, and idle recycled buffers.
	Mapped int64
	// InUse is the part of Mapped in arrays: cached, or held by scans.
	InUse int64
	// Idle is the decode pool's recycled buffers waiting for reuse (on the heap or off).
	Idle int64
}

// MemoryStats reports the decode pool's memory (zero with a caller's Allocator).
func (s *Store) MemoryStats() MemoryStats {
	if s.pool == nil {
		return MemoryStats{}
	}
	st := s.pool.Stats()
	return MemoryStats{Mapped: st.Mapped, InUse: st.MappedInUse, Idle: st.Idle}
}
