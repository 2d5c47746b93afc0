package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
)

// Snapshot is what a daemon's collector reads at each scrape: its link counters, and,
// where the daemon has them, its memory against its bounds, its column cache's counters and
// its requests per method.
type Snapshot struct {
	Link    []LinkSide
	Memory  *link.MemoryStats
	Cache   *link.CacheStats
	Methods map[string]link.MethodCounts
}

// LinkSide is one side's counters of its link connections by transport: a client's to one
// peer (exemgr's to a primproc, Peer its URL), or a server's from all its clients (Peer "").
// ByTransport only grows: ended connections stay counted.
type LinkSide struct {
	Side         string // "client" or "server"
	Peer         string
	Up           bool // a client: at least one connection is live
	Conns        int  // live connections
	DialFailures uint64
	ByTransport  map[string]ipc.LinkTotals
}

// ClientSide is c's LinkSide.
func ClientSide(c ipc.ClientStats) LinkSide {
	return LinkSide{Side: "client", Peer: c.Peer, Up: c.Up, Conns: len(c.Conns), DialFailures: c.Failures, ByTransport: c.ByTransport}
}

// ServerSide is s's LinkSide.
func ServerSide(s ipc.ServerStats) LinkSide {
	return LinkSide{Side: "server", Up: true, Conns: s.ConnsOpen, ByTransport: s.ByTransport}
}

// NewCollector returns the collector of a daemon whose counters read returns.
func NewCollector(read func() Snapshot) prometheus.Collector { return &collector{read: read} }

type collector struct{ read func() Snapshot }

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil)
}

var (
	linkLabels = []string{"side", "peer", "transport"}

	descLinkBytes       = desc("link_bytes_total", "bytes the link carried (socket and shared-memory rings)", append(linkLabels, "direction")...)
	descLinkRingBytes   = desc("link_ring_bytes_total", "batch bodies the link carried through shared-memory rings", append(linkLabels, "direction")...)
	descLinkFrames      = desc("link_frames_total", "frames the link carried", append(linkLabels, "direction")...)
	descLinkBatches     = desc("link_batches_total", "Arrow record batches the link carried", append(linkLabels, "direction")...)
	descLinkSyscalls    = desc("link_syscalls_total", "read(2) and writev(2) calls on the link's sockets, EAGAIN included", append(linkLabels, "op")...)
	descLinkCreditStall = desc("link_credit_stall_seconds_total", "time senders waited for flow-control credit", linkLabels...)
	descLinkCreditWaits = desc("link_credit_waits_total", "waits for flow-control credit", linkLabels...)
	descLinkStreams     = desc("link_streams_opened_total", "streams opened", linkLabels...)
	descLinkFallbacks   = desc("link_ring_fallbacks_total", "batches sent on the socket for want of ring space", linkLabels...)
	descLinkWakeups     = desc("link_ring_wakeups_total", "socket writes that woke the peer for ring batches", linkLabels...)
	descLinkPings       = desc("link_heartbeat_pings_total", "heartbeat PINGs sent", linkLabels...)
	descLinkPongs       = desc("link_heartbeat_pongs_total", "heartbeat PONGs received", linkLabels...)
	descLinkConns       = desc("link_connections", "live link connections", "side", "peer")
	descLinkUp          = desc("link_peer_up", "1 while at least one connection to the peer is live", "peer")
	descLinkDialFails   = desc("link_dial_failures_total", "failed dial attempts to the peer", "peer")

	descMemory = desc("memory_bytes", "memory held, by what holds it: query (all queries' charges), pool_idle (idle recycled buffers), heap (live Go objects), heap_held (what the Go runtime holds for its heap), off_heap and off_heap_in_use (mapped outside the Go heap: the column cache's decode pool)", "kind")
	descBound  = desc("memory_bound_bytes", "the bounds memory is held against: query (--query-memory-total), go_soft_limit (the Go runtime's soft limit), cache (--cache-size); absent when unbounded", "bound")

	descCacheHits      = desc("cache_hits_total", "column cache lookups that found the column chunk")
	descCacheMisses    = desc("cache_misses_total", "column cache lookups that had to read and decode")
	descCacheEvictions = desc("cache_evictions_total", "column chunks evicted from the cache")
	descCacheBytes     = desc("cache_read_bytes_total", "bytes scans read, by source: cache, decoded (decoded on a miss), disk (read from segment files)", "source")
	descCacheUsed      = desc("cache_used_bytes", "bytes the column cache holds")
	descCacheEntries   = desc("cache_entries", "column chunks the cache holds")

	descRequests      = desc("requests_total", "link requests served, by method", "method")
	descRequestErrors = desc("request_errors_total", "link requests that ended with an ERROR, by method", "method")
	descRequestActive = desc("requests_active", "link requests running now, by method", "method")
	descRequestTime   = desc("request_seconds_total", "wall time of the link requests served, by method", "method")
)

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLinkBytes, descLinkRingBytes, descLinkFrames, descLinkBatches, descLinkSyscalls,
		descLinkCreditStall, descLinkCreditWaits, descLinkStreams, descLinkFallbacks, descLinkWakeups, descLinkPings, descLinkPongs,
		descLinkConns, descLinkUp, descLinkDialFails, descMemory, descBound, descCacheHits, descCacheMisses, descCacheEvictions,
		descCacheBytes, descCacheUsed, descCacheEntries, descRequests, descRequestErrors, descRequestActive, descRequestTime} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s := c.read()
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, side := range s.Link {
		gauge(descLinkConns, float64(side.Conns), side.Side, side.Peer)
		if side.Side == "client" {
			gauge(descLinkUp, b2f(side.Up), side.Peer)
			counter(descLinkDialFails, float64(side.DialFailures), side.Peer)
		}
		for tr, t := range side.ByTransport {
			l := []string{side.Side, side.Peer, tr}
			in, out := append(l[:3:3], "in"), append(l[:3:3], "out")
			counter(descLinkBytes, float64(t.BytesIn), in...)
			counter(descLinkBytes, float64(t.BytesOut), out...)
			counter(descLinkRingBytes, float64(t.RingBytesIn), in...)
			counter(descLinkRingBytes, float64(t.RingBytesOut), out...)
			counter(descLinkFrames, float64(t.FramesIn), in...)
			counter(descLinkFrames, float64(t.FramesOut), out...)
			counter(descLinkBatches, float64(t.BatchesIn), in...)
			counter(descLinkBatches, float64(t.BatchesOut), out...)
			counter(descLinkSyscalls, float64(t.ReadSyscalls), append(l[:3:3], "read")...)
			counter(descLinkSyscalls, float64(t.WriteSyscalls), append(l[:3:3], "write")...)
			counter(descLinkCreditStall, t.CreditStall.Seconds(), l...)
			counter(descLinkCreditWaits, float64(t.CreditWaits), l...)
			counter(descLinkStreams, float64(t.StreamsOpened), l...)
			counter(descLinkFallbacks, float64(t.RingFallbacks), l...)
			counter(descLinkWakeups, float64(t.RingWakeups), l...)
			counter(descLinkPings, float64(t.PingsSent), l...)
			counter(descLinkPongs, float64(t.PongsIn), l...)
		}
	}
	if m := s.Memory; m != nil {
		gauge(descMemory, float64(m.QueryUsed), "query")
		gauge(descMemory, float64(m.PoolIdle), "pool_idle")
		gauge(descMemory, float64(m.Heap), "heap")
		gauge(descMemory, float64(m.HeapHeld), "heap_held")
		gauge(descMemory, float64(m.OffHeap), "off_heap")
		gauge(descMemory, float64(m.OffHeapInUse), "off_heap_in_use")
		if m.QueryLimit > 0 {
			gauge(descBound, float64(m.QueryLimit), "query")
		}
		if m.SoftLimit > 0 {
			gauge(descBound, float64(m.SoftLimit), "go_soft_limit")
		}
	}
	if k := s.Cache; k != nil {
		counter(descCacheHits, float64(k.Hits))
		counter(descCacheMisses, float64(k.Misses))
		counter(descCacheEvictions, float64(k.Evictions))
		counter(descCacheBytes, float64(k.BytesFromCache), "cache")
		counter(descCacheBytes, float64(k.BytesDecoded), "decoded")
		counter(descCacheBytes, float64(k.BytesFromDisk), "disk")
		gauge(descCacheUsed, float64(k.Used))
		gauge(descCacheEntries, float64(k.Entries))
		if k.Capacity > 0 {
			gauge(descBound, float64(k.Capacity), "cache")
		}
	}
	for m, n := range s.Methods {
		counter(descRequests, float64(n.Calls), m)
		counter(descRequestErrors, float64(n.Errors), m)
		gauge(descRequestActive, float64(n.Active), m)
		counter(descRequestTime, time.Duration(n.WallNs).Seconds(), m)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Statements counts exemgr's statements: how many ended well and how many failed, by
// MySQL error code, and their latency.
type Statements struct {
	total    *prometheus.CounterVec
	errors   *prometheus.CounterVec
	duration prometheus.Histogram
}

// NewStatements registers the statement metrics with reg.
func NewStatements(reg prometheus.Registerer) *Statements {
	s := &Statements{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "statements_total",
			Help: "client statements ended, by status: ok or error"}, []string{"status"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "statement_errors_total",
			Help: "client statements that failed, by MySQL error code"}, []string{"code"}),
		// 100 µs to about 100 s: a point query to an SF 10 join.
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "statement_duration_seconds",
			Help: "client statements' elapsed time, from the statement's arrival to its last row", Buckets: prometheus.ExponentialBuckets(1e-4, 2.5, 16)}),
	}
	reg.MustRegister(s.total, s.errors, s.duration)
	return s
}

// ObserveStatement records one statement: its elapsed time and its MySQL error code (0 for
// one that succeeded).
func (s *Statements) ObserveStatement(elapsed time.Duration, code uint16) {
	s.duration.Observe(elapsed.Seconds())
	if code == 0 {
		s.total.WithLabelValues("ok").Inc()
		return
	}
	s.total.WithLabelValues("error").Inc()
	s.errors.WithLabelValues(strconv.Itoa(int(code))).Inc()
}
