package primproc

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/internal/daemon"
	"github.com/colinkdb/colink/internal/rusage"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/storage"
)

// StatsReply is the END payload of the stats request (link.Stats).
type StatsReply = link.Stats

// stats answers with this process's CPU time, context switches and memory, the column
// cache's and the link's counters, and per-method request counts.
func (d *Daemon) stats(ctx context.Context, st *ipc.Stream) error {
	rep, err := d.Stats()
	if err != nil {
		return ipc.Errorf(ipc.CodeInternal, "stats: %v", err)
	}
	b, err := msgpack.Marshal(&rep)
	if err != nil {
		return ipc.Errorf(ipc.CodeInternal, "stats: %v", err)
	}
	return st.CloseSend(b)
}

// usage answers usage inline (it only reads counters and /proc/self/statm): the counters a
// statement's CPU deltas are taken from, and the catalog version.
func (d *Daemon) usage(ctx context.Context, args []byte) ([]byte, error) {
	ru, err := rusage.Self()
	if err != nil {
		return nil, ipc.Errorf(ipc.CodeInternal, "usage: %v", err)
	}
	u := link.Usage{PID: os.Getpid(), Rusage: ru.Map(), RSSBytes: daemon.ResidentBytes(), Memory: d.memoryStats()}
	if d.store != nil {
		snap := d.store.Snapshot()
		u.Version = snap.Version()
		snap.Release()
	}
	b, err := msgpack.Marshal(&u)
	if err != nil {
		return nil, ipc.Errorf(ipc.CodeInternal, "usage: %v", err)
	}
	return b, nil
}

// Stats returns the daemon's counters, as the stats call answers them (and the metrics
// endpoint exports them).
func (d *Daemon) Stats() (link.Stats, error) {
	ru, err := rusage.Self()
	if err != nil {
		return link.Stats{}, err
	}
	rep := link.Stats{
		PID: os.Getpid(), Name: d.cfg.Name, Uptime: time.Since(d.started), Goroutines: runtime.NumGoroutine(),
		Threads: d.cfg.Threads, QueryMem: d.cfg.QueryMemory, RSSBytes: daemon.ResidentBytes(), HeapBytes: heapBytes(),
		Rusage: ru.Map(), Link: d.srv.Stats(), DataDir: d.cfg.DataDir, Methods: map[string]link.MethodCounts{},
	}
	if d.store != nil {
		snap := d.store.Snapshot()
		rep.Version, rep.Tables = snap.Version(), len(snap.Tables())
		rep.Prepared = len(snap.Prepared())
		rep.Pins, rep.Compact = d.pins.count(), d.compactions.Load()
		snap.Release()
		rep.Cache = cacheStatsOf(d.store.CacheStats())
	}
	rep.Memory = d.memoryStats()
	for name, c := range d.methods {
		rep.Methods[name] = link.MethodCounts{Calls: c.calls.Load(), Errors: c.errors.Load(), Active: c.active.Load(), WallNs: c.wallNs.Load()}
	}
	return rep, nil
}

func cacheStatsOf(c storage.CacheStats) link.CacheStats {
	return link.CacheStats{Capacity: c.Capacity, Used: c.Used, Entries: c.Entries, Hits: c.Hits, Misses: c.Misses,
		Evictions: c.Evictions, BytesFromCache: c.BytesFromCache, BytesDecoded: c.BytesDecoded, BytesFromDisk: c.BytesFromDisk}
}

// memoryStats reads the daemon's memory against its budgets.
func (d *Daemon) memoryStats() link.MemoryStats {
	m := link.MemoryStats{QueryUsed: d.budget.Used(), QueryLimit: d.budget.Limit(), PoolIdle: d.pool.Stats().Idle,
		SoftLimit: daemon.SoftLimit()}
	if d.store != nil {
		ms := d.store.MemoryStats()
		m.OffHeap, m.OffHeapInUse = ms.Mapped, ms.InUse
	}
	m.Heap, m.HeapHeld = daemon.GoHeap()
	return m
}

// heapBytes is the Go heap's live and not yet swept bytes.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// dropCache empties the column cache, as ColumnStore's calFlushCache() does, and with
// page_cache also the kernel's cached pages of the segment files, so that the next scans
// are cold.
func (d *Daemon) dropCache(ctx context.Context, st *ipc.Stream) error {
	var a link.DropCacheArgs
	if err := st.DecodeArgs(&a); err != nil {
		return err
	}
	before := d.store.CacheStats()
	if err := d.store.DropCache(a.PageCache); err != nil {
		return ipc.Errorf(ipc.CodeInternal, "dropcache: %v", err)
	}
	b, err := msgpack.Marshal(link.DropCacheEnd{Entries: before.Entries, Bytes: before.Used, PageCache: a.PageCache})
	if err != nil {
		return fmt.Errorf("dropcache: %w", err)
	}
	d.log.Debug("primproc: cache dropped", "entries", before.Entries, "bytes", before.Used, "page_cache", a.PageCache)
	return st.CloseSend(b)
}
