package exec

// FragmentStats is what a primproc reports for one run of a fragment: the pipeline's
// counters (Stats) and those of the storage scan under it. It travels in the end frame of
// the fragment's stream; exemgr adds them up per query.
type FragmentStats struct {
	Stats `msgpack:",inline"`
	// RowGroups is the number of row groups in the scanned segments; RowGroupsEliminated of
	// those were skipped by zone maps (or because every row in them is deleted).
	RowGroups           int `msgpack:"row_groups"`
	RowGroupsEliminated int `msgpack:"row_groups_eliminated"`
	// Column chunks served from the column cache and decoded from segment files, and their
	// bytes (decoded bytes from the cache, file bytes from disk).
	CacheHits      int64 `msgpack:"cache_hits"`
	CacheMisses    int64 `msgpack:"cache_misses"`
	BytesFromCache int64 `msgpack:"bytes_from_cache"`
	BytesFromDisk  int64 `msgpack:"bytes_from_disk"`
}

// Add adds o's counters to s. Workers add up; wall time and peak memory take the maximum.
func (s *FragmentStats) Add(o FragmentStats) {
	s.RowsScanned += o.RowsScanned
	s.BatchesScanned += o.BatchesScanned
	s.BytesScanned += o.BytesScanned
	s.RowsProduced += o.RowsProduced
	s.BatchesProduced += o.BatchesProduced
	s.BytesProduced += o.BytesProduced
	s.WorkerCPUNanos += o.WorkerCPUNanos
	s.WallNanos = max(s.WallNanos, o.WallNanos)
	s.PeakMemory = max(s.PeakMemory, o.PeakMemory)
	s.Workers += o.Workers
	s.RowsGroupedInUnits += o.RowsGroupedInUnits
	s.RowGroups += o.RowGroups
	s.RowGroupsEliminated += o.RowGroupsEliminated
	s.CacheHits += o.CacheHits
	s.CacheMisses += o.CacheMisses
	s.BytesFromCache += o.BytesFromCache
	s.BytesFromDisk += o.BytesFromDisk
	s.Steps = addSteps(s.Steps, o.Steps)
}
