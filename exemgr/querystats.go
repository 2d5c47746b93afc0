package exemgr

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exemgr/frontend"
	"github.com/colinkdb/colink/internal/daemon"
	"github.com/colinkdb/colink/internal/rusage"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/sql/physical"
)

// QueryStats are the statistics of one statement, what SHOW QUERY STATS returns for the
// session's previous statement (see the contract in the README): one ProcessStats for
// exemgr, then one per primproc in configuration order.
type QueryStats struct {
	Statement string
	Pushdown  string // the pushdown level the statement was planned at (physical.Pushdown)
	Elapsed   time.Duration
	Rows      int64 // rows returned to the client
	Error     string
	Processes []ProcessStats
}

// ProcessStats is one process's share of a statement.
type ProcessStats struct {
	Process   string // "exemgr", "primproc0", …
	Peer      string // the primproc's URL as configured; "" for exemgr
	Transport string // the link's transport to the primproc; "" for exemgr
	// Usage is the process's getrusage delta over the statement (the whole process: with
	// statements running concurrently, it includes theirs).
	Usage rusage.Usage
	// Link counters, from exemgr's side of the connections to the primproc (the exemgr row
	// holds their totals): bytes and batches exemgr → primproc (out) and back (in), frames
	// both ways, read and write syscalls.
	BytesOut, BytesIn, BatchesOut, BatchesIn, Frames, Syscalls int64
	// Shared memory (transport shm; zero on the others): the batch bodies' bytes that
	// crossed in the rings each way (counted in BytesOut and BytesIn too), batches sent on
	// the socket for want of ring space, and socket writes that woke the peer for ring
	// batches.
	RingBytesOut, RingBytesIn, RingFallbacks, RingWakeups int64
	// From the fragments' END reports (the exemgr row holds their totals).
	Fragments, RowsScanned, RowGroups, RowGroupsEliminated, CacheBytes, DiskBytes int64
	// Memory: the statement's peak query memory in the process (a primproc's: its
	// largest fragment's), and the process's memory when the statement ended.
	QueryPeak int64
	Memory    link.MemoryStats
	RSS       int64
}

// usageTimeout bounds the usage calls that open and close a statement.
const usageTimeout = 5 * time.Second

// recorder takes the snapshots a statement's statistics are the difference of.
type recorder struct {
	e        *Engine
	text     string
	pushdown physical.Pushdown
	start    time.Time
	ru0      rusage.Usage
	pm0      []*link.Usage // per primproc; nil until begin has run
	link0    []ipc.ClientStats
}

// newRecorder starts recording a statement of st's: exemgr's own usage now.
func (e *Engine) newRecorder(text string, st *session) *recorder {
	r := &recorder{e: e, text: text, pushdown: e.pushdown(st), start: time.Now()}
	r.ru0, _ = rusage.Self()
	return r
}

// begin asks every primproc for its usage (its rusage and catalog version) and then takes
// the link's counters, so that the usage calls' own traffic is not counted. It fails, fast,
// if a primproc cannot be reached.
func (r *recorder) begin(ctx context.Context) ([]uint64, error) {
	pm, err := r.e.primprocUsage(ctx)
	if err != nil {
		return nil, err
	}
	r.pm0 = pm
	r.link0 = r.e.linkSnapshots()
	versions := make([]uint64, len(pm))
	for i, st := range pm {
		versions[i] = st.Version
	}
	return versions, nil
}

// primprocUsage calls usage on every primproc at once, waiting at most the engine's
// primproc timeout for a connection.
func (e *Engine) primprocUsage(stmt context.Context) ([]*link.Usage, error) {
	ctx, cancel := context.WithTimeout(stmt, e.cfg.PrimProcTimeout)
	defer cancel()
	out := make([]*link.Usage, len(e.cl))
	errs := make([]error, len(e.cl))
	var wg sync.WaitGroup
	for i, c := range e.cl {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = c.Usage(ctx)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && stmt.Err() != nil {
			// The statement was killed, or its client left, while the call waited: that,
			// not the primproc, is the reason (1317), though the primproc is named.
			return nil, fmt.Errorf("primproc %s: %w", e.cl[i].Peer(), context.Cause(stmt))
		}
		if err != nil {
			return nil, &peerError{peer: e.cl[i].Peer(), why: e.em.Down()[e.cl[i].Peer()], err: err}
		}
	}
	return out, nil
}

// closingUsage takes the primprocs' usage at a statement's end, for its CPU deltas, from
// the primprocs whose connections that carried the statement are all still live; the others
// get nil (as does one whose call fails). A connection that ended meanwhile means the link
// failed (the primproc is down, frozen or restarted): asking it would hold the statement's
// answer, its error included, for a redial or for a frozen primproc's other connection to
// time out, and its CPU delta would mean little anyway.
func (e *Engine) closingUsage(before, after []ipc.ClientStats) []*link.Usage {
	ctx, cancel := context.WithTimeout(context.Background(), usageTimeout)
	defer cancel()
	out := make([]*link.Usage, len(e.cl))
	var wg sync.WaitGroup
	for i, c := range e.cl {
		if sameConns(before[i], after[i]) {
			wg.Go(func() { out[i], _ = c.Usage(ctx) })
		}
	}
	wg.Wait()
	return out
}

// sameConns reports whether every connection in before is still live in after.
func sameConns(before, after ipc.ClientStats) bool {
	live := make(map[uint64]bool, len(after.Conns))
	for _, c := range after.Conns {
		live[c.ID] = true
	}
	for _, c := range before.Conns {
		if !live[c.ID] {
			return false
		}
	}
	return true
}

// linkSnapshots returns exemgr's counters of its connections to every primproc.
func (e *Engine) linkSnapshots() []ipc.ClientStats {
	out := make([]ipc.ClientStats, len(e.cl))
	for i, c := range e.cl {
		out[i] = c.Link().Snapshot(ipc.StatsOptions{})
	}
	return out
}

// finish takes the closing snapshots and computes the statement's statistics. rows is what
// the client received; qs, if not nil, is the plan's run.
func (r *recorder) finish(rows int64, qs *physical.QueryStats, failure error) *QueryStats {
	elapsed := time.Since(r.start)
	ru1, _ := rusage.Self()
	out := &QueryStats{Statement: r.text, Pushdown: r.pushdown.String(), Elapsed: elapsed, Rows: rows}
	if failure != nil {
		_, _, out.Error = frontend.AsMySQL(failure)
	}
	em := ProcessStats{Process: "exemgr", Usage: ru1.Sub(r.ru0), Memory: r.e.memoryStats(), RSS: daemon.ResidentBytes()}
	if qs != nil {
		em.QueryPeak = qs.PeakMemory
	}
	var link1 []ipc.ClientStats
	var pm1 []*link.Usage
	if r.pm0 != nil {
		link1 = r.e.linkSnapshots()
		pm1 = r.e.closingUsage(r.link0, link1) // a primproc not asked leaves its CPU unknown (0)
	}
	for i, c := range r.e.cl {
		p := ProcessStats{Process: processName(i), Peer: c.Peer()}
		if r.pm0 != nil {
			linkDelta(&p, r.link0[i], link1[i])
			if pm1 != nil && pm1[i] != nil && r.pm0[i] != nil && pm1[i].PID == r.pm0[i].PID {
				p.Usage = rusage.FromMap(pm1[i].Rusage).Sub(rusage.FromMap(r.pm0[i].Rusage))
			}
			if pm1 != nil && pm1[i] != nil {
				p.Memory, p.RSS = pm1[i].Memory, pm1[i].RSSBytes
			}
		}
		if qs != nil {
			for _, f := range qs.Fragments {
				if i >= len(f.Streams) {
					continue
				}
				st := f.Streams[i]
				p.Fragments++
				p.RowsScanned += st.RowsScanned
				p.RowGroups += int64(st.RowGroups)
				p.RowGroupsEliminated += int64(st.RowGroupsEliminated)
				p.CacheBytes += st.BytesFromCache
				p.DiskBytes += st.BytesFromDisk
				p.QueryPeak = max(p.QueryPeak, st.PeakMemory)
			}
		}
		em.BytesOut += p.BytesOut
		em.BytesIn += p.BytesIn
		em.BatchesOut += p.BatchesOut
		em.BatchesIn += p.BatchesIn
		em.Frames += p.Frames
		em.Syscalls += p.Syscalls
		em.RingBytesOut += p.RingBytesOut
		em.RingBytesIn += p.RingBytesIn
		em.RingFallbacks += p.RingFallbacks
		em.RingWakeups += p.RingWakeups
		em.Fragments += p.Fragments
		em.RowsScanned += p.RowsScanned
		em.RowGroups += p.RowGroups
		em.RowGroupsEliminated += p.RowGroupsEliminated
		em.CacheBytes += p.CacheBytes
		em.DiskBytes += p.DiskBytes
		out.Processes = append(out.Processes, p)
	}
	out.Processes = append([]ProcessStats{em}, out.Processes...)
	return out
}

func processName(i int) string { return "primproc" + strconv.Itoa(i) }

// Status is SHOW STATUS's part of exemgr's counters: the link's to the primprocs (every
// connection since the start, by transport summed), the primprocs up, and the memory the
// running queries hold.
func (e *Engine) Status() []frontend.Variable {
	var t ipc.LinkTotals
	up := 0
	for _, c := range e.linkSnapshots() {
		if c.Up {
			up++
		}
		for _, bt := range c.ByTransport {
			t.BytesIn += bt.BytesIn
			t.BytesOut += bt.BytesOut
			t.BatchesIn += bt.BatchesIn
			t.BatchesOut += bt.BatchesOut
			t.FramesIn += bt.FramesIn
			t.FramesOut += bt.FramesOut
			t.StreamsOpened += bt.StreamsOpened
			t.RingBytesIn += bt.RingBytesIn
		}
	}
	mem := e.memoryStats()
	n := func(name string, v uint64) frontend.Variable {
		return frontend.Variable{Name: name, Value: strconv.FormatUint(v, 10), Numeric: true}
	}
	return []frontend.Variable{
		n("Colink_link_bytes_received", t.BytesIn), n("Colink_link_bytes_sent", t.BytesOut),
		n("Colink_link_batches_received", t.BatchesIn), n("Colink_link_batches_sent", t.BatchesOut),
		n("Colink_link_frames_received", t.FramesIn), n("Colink_link_frames_sent", t.FramesOut),
		n("Colink_link_streams_opened", t.StreamsOpened), n("Colink_link_ring_bytes_received", t.RingBytesIn),
		n("Colink_primprocs", uint64(len(e.cl))), n("Colink_primprocs_up", uint64(up)),
		n("Colink_statements_running", uint64(max(e.active.Load(), 0))),
		n("Colink_query_memory_used", uint64(max(mem.QueryUsed, 0))),
	}
}

// MetricsSnapshot returns exemgr's counters for its metrics endpoint: the link's to each
// primproc, and its memory against its bounds.
func (e *Engine) MetricsSnapshot() (links []ipc.ClientStats, mem link.MemoryStats) {
	return e.linkSnapshots(), e.memoryStats()
}

// memoryStats is exemgr's own memory against its budgets (no off-heap memory: exemgr keeps
// no column cache).
func (e *Engine) memoryStats() link.MemoryStats {
	m := link.MemoryStats{QueryUsed: e.budget.Used(), QueryLimit: e.budget.Limit(), PoolIdle: e.pool.Stats().Idle,
		SoftLimit: daemon.SoftLimit()}
	m.Heap, m.HeapHeld = daemon.GoHeap()
	return m
}

// linkDelta sets p's link counters to what the connections carried between two snapshots.
// Connections are matched by id: one that reconnected in between counts from zero.
func linkDelta(p *ProcessStats, before, after ipc.ClientStats) {
	prev := make(map[uint64]ipc.ConnStats, len(before.Conns))
	for _, c := range before.Conns {
		prev[c.ID] = c
	}
	for _, c := range after.Conns {
		b := prev[c.ID]
		if p.Transport == "" {
			p.Transport = c.Transport
		}
		p.BytesOut += int64(c.BytesOut - b.BytesOut)
		p.BytesIn += int64(c.BytesIn - b.BytesIn)
		p.BatchesOut += int64(c.BatchesOut - b.BatchesOut)
		p.BatchesIn += int64(c.BatchesIn - b.BatchesIn)
		p.Frames += int64(c.FramesIn - b.FramesIn + c.FramesOut - b.FramesOut)
		p.Syscalls += int64(c.ReadSyscalls - b.ReadSyscalls + c.WriteSyscalls - b.WriteSyscalls)
		p.RingBytesOut += int64(c.RingBytesOut - b.RingBytesOut)
		p.RingBytesIn += int64(c.RingBytesIn - b.RingBytesIn)
		p.RingFallbacks += int64(c.RingFallbacks - b.RingFallbacks)
		p.RingWakeups += int64(c.RingWakeups - b.RingWakeups)
	}
}

// queryStatsColumns are SHOW QUERY STATS' columns, in order: the contract's, then the
// statement's first characters and its error, if any.
var queryStatsColumns = []string{
	"process", "peer", "transport", "pushdown", "elapsed_us", "user_us", "sys_us", "nvcsw", "nivcsw",
	"bytes_out", "bytes_in", "batches_out", "batches_in", "frames", "syscalls",
	"ring_bytes_out", "ring_bytes_in", "ring_fallbacks", "ring_wakeups", "fragments",
	"rows_scanned", "row_groups_total", "row_groups_eliminated", "cache_bytes", "disk_bytes",
	"mem_query_peak", "mem_query_limit", "mem_heap", "mem_heap_held", "mem_soft_limit", "mem_off_heap",
	"mem_rss", "rows", "statement", "error",
}

// statementPrefix bounds the statement text SHOW QUERY STATS repeats.
const statementPrefix = 200

// queryStatsRecord is SHOW QUERY STATS' result: one row per process of qs (no rows if qs
// is nil: the session has run no statement yet).
func queryStatsRecord(qs *QueryStats) arrow.RecordBatch {
	fields := make([]arrow.Field, len(queryStatsColumns))
	for i, name := range queryStatsColumns {
		t := arrow.DataType(arrow.PrimitiveTypes.Int64)
		switch name {
		case "process", "peer", "transport", "pushdown", "statement", "error":
			t = arrow.BinaryTypes.String
		}
		fields[i] = arrow.Field{Name: name, Type: t}
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	if qs != nil {
		stmt := qs.Statement
		if r := []rune(stmt); len(r) > statementPrefix {
			stmt = string(r[:statementPrefix])
		}
		for _, p := range qs.Processes {
			rows := int64(0)
			if p.Process == "exemgr" {
				rows = qs.Rows
			}
			vals := map[string]any{
				"process": p.Process, "peer": p.Peer, "transport": p.Transport, "pushdown": qs.Pushdown,
				"elapsed_us": qs.Elapsed.Microseconds(), "user_us": p.Usage.User.Microseconds(),
				"sys_us": p.Usage.Sys.Microseconds(), "nvcsw": p.Usage.Voluntary, "nivcsw": p.Usage.Involuntary,
				"bytes_out": p.BytesOut, "bytes_in": p.BytesIn, "batches_out": p.BatchesOut,
				"batches_in": p.BatchesIn, "frames": p.Frames, "syscalls": p.Syscalls,
				"ring_bytes_out": p.RingBytesOut, "ring_bytes_in": p.RingBytesIn,
				"ring_fallbacks": p.RingFallbacks, "ring_wakeups": p.RingWakeups,
				"fragments": p.Fragments, "rows_scanned": p.RowsScanned, "row_groups_total": p.RowGroups,
				"row_groups_eliminated": p.RowGroupsEliminated, "cache_bytes": p.CacheBytes,
				"disk_bytes": p.DiskBytes, "rows": rows, "statement": stmt, "error": qs.Error,
				"mem_query_peak": p.QueryPeak, "mem_query_limit": p.Memory.QueryLimit, "mem_heap": p.Memory.Heap,
				"mem_heap_held": p.Memory.HeapHeld, "mem_soft_limit": p.Memory.SoftLimit, "mem_off_heap": p.Memory.OffHeap,
				"mem_rss": p.RSS,
			}
			for i, name := range queryStatsColumns {
				switch v := vals[name].(type) {
				case string:
					b.Field(i).(*array.StringBuilder).Append(v)
				case int64:
					b.Field(i).(*array.Int64Builder).Append(v)
				}
			}
		}
	}
	return b.NewRecordBatch()
}

// peerError is a primproc that could not be reached when a statement began.
type peerError struct {
	peer string
	why  error // the link's reason it is down, if it knows one
	err  error
}

// Error names the primproc once: the layers below each name it too (the link client's
// method errors, the link's dial errors), which reads as noise four times over.
func (e *peerError) Error() string {
	rest := strings.TrimPrefix(e.err.Error(), "primproc "+e.peer+": ")
	rest = strings.ReplaceAll(rest, e.peer+": ", "")
	if e.why != nil {
		why := strings.ReplaceAll(e.why.Error(), "peer "+e.peer, "it")
		return "primproc " + e.peer + " is down (" + why + "): " + rest
	}
	return "primproc " + e.peer + ": " + rest
}

func (e *peerError) Unwrap() error { return e.err }

// MySQLError implements frontend.MySQLError: 1105 with a message naming the primproc.
func (e *peerError) MySQLError() (uint16, string, string) {
	return frontend.ErrUnknownError, "HY000", e.Error()
}
