package storage

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func int64Array(mem memory.Allocator, n int) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for i := range n {
		b.Append(int64(i))
	}
	return b.NewArray()
}

// TestCacheLRU drives the cache directly: byte accounting, LRU order, admission (a column
// that would evict gets in only when read more often than the one it evicts), eviction
// while a reader holds the column, in-flight deduplication, errors not cached, drop.
func TestCacheLRU(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	ctx := context.Background()
	sample := int64Array(mem, 1000)
	colBytes := arraySize(sample) // an int64 array of 1000 values
	sample.Release()
	c := newColumnCache(3 * colBytes)
	loads := 0
	get := func(seg uint64) (arrow.Array, bool) {
		arr, hit, _, err := c.get(ctx, cacheKey{seg: seg}, func() (arrow.Array, int64, error) {
			loads++
			return int64Array(mem, 1000), 4096, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return arr, hit
	}
	steps := []struct {
		seg      uint64
		hit      bool
		resident []uint64 // most recent first, after the step
	}{
		{1, false, []uint64{1}},
		{2, false, []uint64{2, 1}},
		{3, false, []uint64{3, 2, 1}},
		{1, true, []uint64{1, 3, 2}},
		{4, false, []uint64{1, 3, 2}}, // read once, as often as 2, which it would evict: not admitted
		{4, false, []uint64{4, 1, 3}}, // read twice: evicts 2, the least recently used
		{2, false, []uint64{2, 4, 1}}, // read twice, 3 once: evicts 3
		{1, true, []uint64{1, 2, 4}},
	}
	var held arrow.Array
	for i, st := range steps {
		arr, hit := get(st.seg)
		if hit != st.hit {
			t.Fatalf("step %d: get(%d) hit=%v, want %v", i, st.seg, hit, st.hit)
		}
		if i == 1 {
			held = arr // keep segment 2's first array past its eviction
		} else {
			arr.Release()
		}
		var got []uint64
		for e := c.head.next; e != &c.head; e = e.next {
			got = append(got, e.key.seg)
		}
		if len(got) != len(st.resident) {
			t.Fatalf("step %d: resident %v, want %v", i, got, st.resident)
		}
		for j := range got {
			if got[j] != st.resident[j] {
				t.Fatalf("step %d: resident %v, want %v", i, got, st.resident)
			}
		}
		if c.used != int64(len(got))*colBytes {
			t.Fatalf("step %d: used %d, want %d", i, c.used, int64(len(got))*colBytes)
		}
	}
	// The evicted array the reader kept is intact.
	if v := held.(*array.Int64).Value(999); v != 999 {
		t.Fatalf("held array after eviction: %d", v)
	}
	held.Release()
	st := c.stats()
	if st.Hits != 2 || st.Misses != 6 || st.Evictions != 2 || st.Entries != 3 || st.BytesFromCache != 2*colBytes || st.BytesFromDisk != 6*4096 {
		t.Fatalf("stats %+v", st)
	}

	// A failed load is reported to its caller and not cached.
	boom := errors.New("boom")
	if _, _, _, err := c.get(ctx, cacheKey{seg: 9}, func() (arrow.Array, int64, error) { return nil, 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	arr9, hit9 := get(9)
	arr9.Release()
	if hit9 {
		t.Fatal("failed load was cached")
	}

	// A column larger than the whole cache is returned but not kept.
	big, hit, _, err := c.get(ctx, cacheKey{seg: 10}, func() (arrow.Array, int64, error) { return int64Array(mem, 4000), 0, nil })
	if err != nil || hit {
		t.Fatal(err, hit)
	}
	big.Release()
	if _, ok := c.entries[cacheKey{seg: 10}]; ok {
		t.Fatal("oversized column cached")
	}

	// Concurrent misses on one key load it once. (The cache is emptied first, so that the
	// column fits: readers that arrive after the load ends find it cached, whatever
	// admission would say of a full cache.)
	c.drop()
	loads = 0
	var wg sync.WaitGroup
	release := make(chan struct{})
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			arr, _, _, err := c.get(ctx, cacheKey{seg: 20}, func() (arrow.Array, int64, error) {
				<-release
				loads++
				return int64Array(mem, 10), 0, nil
			})
			if err != nil {
				t.Error(err)
				return
			}
			arr.Release()
		}()
	}
	close(release)
	wg.Wait()
	if loads != 1 {
		t.Fatalf("8 concurrent misses loaded %d times", loads)
	}

	c.drop()
	if st := c.stats(); st.Used != 0 || st.Entries != 0 {
		t.Fatalf("after drop: %+v", st)
	}
	mem.AssertSize(t, 0) // every reference was released exactly once
}

// TestCacheCycle reads 12 columns round after round through a cache that holds 10, as the
// queries of a mix cycle through more columns than the budget: a plain LRU misses every
// read after the first round; with admission the cache keeps 10 and they hit. A column read
// more often than the cycle's then gets in.
func TestCacheCycle(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	sample := int64Array(mem, 100)
	colBytes := arraySize(sample)
	sample.Release()
	c := newColumnCache(10 * colBytes)
	read := func(seg uint64) bool {
		arr, hit, _, err := c.get(context.Background(), cacheKey{seg: seg}, func() (arrow.Array, int64, error) {
			return int64Array(mem, 100), 0, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		arr.Release()
		return hit
	}
	hits, reads := 0, 0
	for round := range 6 {
		for seg := range uint64(12) {
			if read(seg) && round > 0 {
				hits++
			}
			if round > 0 {
				reads++
			}
		}
	}
	if hits*12 < reads*10 {
		t.Errorf("after the first round %d of %d reads hit; want 10 in 12", hits, reads)
	}
	// A column read more often than the cycle's (six times each) displaces one of them.
	for range 7 {
		read(99)
	}
	if !read(99) {
		t.Error("a column read more often than any other was not admitted")
	}
	c.drop()
	mem.AssertSize(t, 0)
}

// TestConcurrentScansWithDropCache runs scans on several goroutines, each checking the data it
// reads, while another goroutine keeps dropping the cache.
func TestConcurrentScansWithDropCache(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	opts := testOptions()
	opts.Allocator = mem
	opts.CacheSize = 200 << 10 // small: evictions happen too
	s := openTest(t, t.TempDir(), opts)
	sc := allKindsSchema()
	loadTable(t, s, "t", sc, 5, 12000, 2000)
	stop := make(chan struct{})
	var dropper sync.WaitGroup
	dropper.Add(1)
	go func() {
		defer dropper.Done()
		for {
			select {
			case <-stop:
				return
			default:
				if err := s.DropCache(false); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				if err := verifyTable(s, "t", 5, 12000); err != nil {
					t.Errorf("scanner %d: %v", g, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	dropper.Wait()
	st := s.CacheStats()
	if st.Used > st.Capacity {
		t.Errorf("cache uses %d bytes over its %d capacity", st.Used, st.Capacity)
	}
	if st.Hits == 0 || st.Misses == 0 {
		t.Errorf("expected both hits and misses: %+v", st)
	}
	s.DropCache(true)
	s.Close()
	mem.AssertSize(t, 0)
}

// TestScanStatsWarmCold checks that a scan's counters tell cached bytes from disk bytes.
func TestScanStatsWarmCold(t *testing.T) {
	s := openTest(t, t.TempDir(), testOptions())
	loadTable(t, s, "t", allKindsSchema(), 3, 5000, 5000)
	run := func() ScanStats {
		snap := s.Snapshot()
		defer snap.Release()
		sc, err := snap.Scan(ScanRequest{Table: "t", Columns: []string{"cc", "ci"}})
		if err != nil {
			t.Fatal(err)
		}
		defer sc.Close()
		if err := sc.ForEach(context.Background(), 2, func(RowGroupRef, arrow.Record) error { return nil }); err != nil {
			t.Fatal(err)
		}
		return sc.Stats()
	}
	cold := run()
	warm := run()
	if cold.CacheMisses != 10 || cold.CacheHits != 0 || cold.BytesFromDisk == 0 || cold.BytesFromCache != 0 || cold.RowsRead != 5000 {
		t.Errorf("cold scan stats %+v", cold)
	}
	if warm.CacheHits != 10 || warm.CacheMisses != 0 || warm.BytesFromDisk != 0 || warm.BytesFromCache != cold.BytesDecoded {
		t.Errorf("warm scan stats %+v (cold decoded %d)", warm, cold.BytesDecoded)
	}
	if err := s.DropCache(true); err != nil {
		t.Fatal(err)
	}
	if again := run(); again.CacheMisses != 10 {
		t.Errorf("after DropCache: %+v", again)
	}
}
