package storage

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
)

// cacheKey names one decoded column chunk: (segment, row group, column).
type cacheKey struct {
	seg     uint64
	rg, col int32
}

// cacheEntry is a cached column, or a load in flight (ready not yet closed) that other
// readers of the same key wait for instead of decoding it again.
type cacheEntry struct {
	key        cacheKey
	arr        arrow.Array // the cache's own reference; set before ready is closed
	size       int64
	gen        uint64 // cache generation when the load started
	ready      chan struct{}
	err        error
	prev, next *cacheEntry // LRU list; nil while in flight
	listed     bool
	waiters    bool // other readers wait for this load: it is cached whatever admission says
}

// columnCache keeps decoded columns, least recently used evicted first, within a byte budget.
// A column handed to a reader carries its own reference (Retain), so eviction only drops the
// cache's reference and never frees an array that a running scan still uses.
//
// When a loaded column would evict, it is admitted only if it has been read more often
// lately than the column it would evict first (TinyLFU's admission, with exact counts:
// the cache holds thousands of columns, not millions). A plain LRU keeps nothing when the
// queries' columns cycle through more than the budget (SF 10's 22 queries read ~11 GiB of
// decoded columns): each load evicts the column needed soonest. With admission a cycle
// leaves the cache as it is, and the columns in it hit on every round; a column read more
// often than the cycle's, or the cache's least recent ones as they age, get in.
type columnCache struct {
	capacity int64

	mu      sync.Mutex
	entries map[cacheKey]*cacheEntry
	head    cacheEntry // sentinel: head.next is the most recently used
	used    int64
	gen     uint64 // bumped by drop: loads started before it are not cached

	// freq counts each key's reads, cached or not, halved every agePeriod reads so that
	// the counts follow the recent past.
	freq  map[cacheKey]uint32
	reads int

	hits, misses, evictions          atomic.Int64
	bytesHit, bytesLoaded, bytesDisk atomic.Int64
}

func newColumnCache(capacity int64) *columnCache {
	c := &columnCache{capacity: capacity, entries: make(map[cacheKey]*cacheEntry), freq: make(map[cacheKey]uint32)}
	c.head.next, c.head.prev = &c.head, &c.head
	return c
}

func (c *columnCache) unlink(e *cacheEntry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next, e.listed = nil, nil, false
}

func (c *columnCache) pushFront(e *cacheEntry) {
	e.prev, e.next = &c.head, c.head.next
	c.head.next.prev = e
	c.head.next = e
	e.listed = true
}

// agePeriod is the reads after which the counts are halved: several times the columns a
// cache holds, so that a column's count spans a few rounds of a query mix.
func (c *columnCache) agePeriod() int { return max(4096, 8*len(c.entries)) }

// count records a read of key.
func (c *columnCache) count(key cacheKey) {
	c.freq[key]++
	if c.reads++; c.reads >= c.agePeriod() {
		c.reads = 0
		for k, n := range c.freq {
			if n /= 2; n == 0 {
				delete(c.freq, k)
			} else {
				c.freq[k] = n
			}
		}
	}
}

// admits reports whether a column of size bytes under key may be cached: it fits, or it
// has been read more often than the least recently used column it would evict.
func (c *columnCache) admits(key cacheKey, size int64) bool {
	if c.used+size <= c.capacity {
		return true
	}
	victim := c.head.prev
	return victim != &c.head && c.freq[key] > c.freq[victim.key]
}

// loadFunc decodes a column from disk, returning the array (one reference, passed to the
// caller) and the file bytes read.
type loadFunc func() (arrow.Array, int64, error)

// get returns the column for key with a reference the caller must Release, from the cache or
// by calling load. hit tells which; diskBytes is the file bytes read when it was loaded.
func (c *columnCache) get(ctx context.Context, key cacheKey, load loadFunc) (arr arrow.Array, hit bool, diskBytes int64, err error) {
	counted := false
	for {
		c.mu.Lock()
		if !counted {
			c.count(key)
			counted = true
		}
		e := c.entries[key]
		if e == nil {
			break // load it ourselves, below, still holding the lock
		}
		if e.listed {
			c.unlink(e)
			c.pushFront(e)
			e.arr.Retain()
			c.mu.Unlock()
			c.hits.Add(1)
			c.bytesHit.Add(e.size)
			return e.arr, true, 0, nil
		}
		e.waiters = true
		c.mu.Unlock()
		select { // another reader is loading it
		case <-e.ready:
		case <-ctx.Done():
			return nil, false, 0, ctx.Err()
		}
		if e.err != nil {
			return nil, false, 0, e.err
		}
		// Loaded: go round again to take a reference under the lock (it may have been
		// evicted or not cached at all, in which case we load it ourselves).
	}
	e := &cacheEntry{key: key, gen: c.gen, ready: make(chan struct{})}
	c.entries[key] = e
	c.mu.Unlock()

	c.misses.Add(1)
	arr, diskBytes, err = load()

	c.mu.Lock()
	defer c.mu.Unlock()
	defer close(e.ready)
	if err != nil {
		e.err = err
		delete(c.entries, key)
		return nil, false, 0, err
	}
	size := arraySize(arr)
	c.bytesLoaded.Add(size)
	c.bytesDisk.Add(diskBytes)
	if c.entries[key] != e || e.gen != c.gen || size > c.capacity || !e.waiters && !c.admits(key, size) {
		// Dropped meanwhile, cannot be cached, or not admitted: the caller gets the only
		// reference.
		if c.entries[key] == e {
			delete(c.entries, key)
		}
		return arr, false, diskBytes, nil
	}
	e.arr, e.size = arr, size
	arr.Retain() // one reference for the cache, one for the caller
	c.pushFront(e)
	c.used += size
	for c.used > c.capacity && c.head.prev != &c.head {
		c.evictLocked(c.head.prev)
	}
	return arr, false, diskBytes, nil
}

func (c *columnCache) evictLocked(e *cacheEntry) {
	c.unlink(e)
	delete(c.entries, e.key)
	c.used -= e.size
	e.arr.Release()
	c.evictions.Add(1)
}

// drop empties the cache; loads in flight finish but are not kept.
func (c *columnCache) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.freq)
	c.reads = 0
	for e := c.head.next; e != &c.head; {
		next := e.next
		c.unlink(e)
		delete(c.entries, e.key)
		c.used -= e.size
		e.arr.Release()
		e = next
	}
}

// dropSegment removes a segment's columns (its file is gone).
func (c *columnCache) dropSegment(seg uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if k.seg != seg {
			continue
		}
		delete(c.entries, k)
		if e.listed {
			c.unlink(e)
			c.used -= e.size
			e.arr.Release()
		}
	}
}

// CacheStats are the column cache's counters since the store was opened.
type CacheStats struct {
	Capacity       int64 // budget in bytes
	Used           int64 // bytes of decoded columns held
	Entries        int   // columns held
	Hits, Misses   int64 // column lookups served from memory / decoded from disk
	Evictions      int64
	BytesFromCache int64 // decoded bytes served from memory
	BytesDecoded   int64 // decoded bytes produced by misses
	BytesFromDisk  int64 // file bytes read by misses
}

func (c *columnCache) stats() CacheStats {
	c.mu.Lock()
	st := CacheStats{Capacity: c.capacity, Used: c.used}
	for _, e := range c.entries {
		if e.listed {
			st.Entries++
		}
	}
	c.mu.Unlock()
	st.Hits, st.Misses, st.Evictions = c.hits.Load(), c.misses.Load(), c.evictions.Load()
	st.BytesFromCache, st.BytesDecoded, st.BytesFromDisk = c.bytesHit.Load(), c.bytesLoaded.Load(), c.bytesDisk.Load()
	return st
}

// arraySize is the memory an array's buffers occupy (their capacity).
func arraySize(a arrow.Array) int64 {
	var n int64
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b != nil {
				// The memory the buffer holds, not the bytes it uses: an allocator rounds
				// a request up to its size class, and the cache's budget is of memory.
				n += int64(cap(b.Buf()))
			}
		}
		for _, ch := range d.Children() {
			walk(ch)
		}
	}
	walk(a.Data())
	return n
}

// CacheStats reports the column cache's counters.
func (s *Store) CacheStats() CacheStats { return s.cache.stats() }

// DropCache empties the column cache, as ColumnStore's calFlushCache() does, so that the next
// scans decode from the segment files. With pageCache set it also asks the kernel to drop the
// segment files' pages (posix_fadvise DONTNEED), so those reads come from the device.
// Running scans are unaffected: the columns they hold stay valid.
func (s *Store) DropCache(pageCache bool) error {
	s.cache.drop()
	if !pageCache {
		return nil
	}
	return s.dropPageCache()
}
