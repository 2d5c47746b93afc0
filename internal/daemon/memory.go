package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/colinkdb/colink/internal/units"
)

// Budget is one named share of a daemon's memory: the column cache, query memory, a
// recycling pool's idle bound, the link's windows.
type Budget struct {
	Name  string
	Bytes int64
	// OffHeap budgets live outside the Go heap (mapped buffers) and are left out of the
	// runtime's soft limit.
	OffHeap bool
}

// MemoryPlan is a daemon's resident memory as the sum of its budgets plus a stated overhead
// (the runtime, code, goroutine stacks, small objects). Its Go heap part sets the runtime's
// soft memory limit, so that the garbage collector works before the kernel has to.
type MemoryPlan struct {
	Budgets  []Budget
	Overhead int64
}

// DefaultOverhead is what a daemon holds besides its budgets, measured idle on the
// reference machine with a margin: ~60 MiB resident at start, ~150 MiB after serving.
const DefaultOverhead = 256 << 20

// Total is the resident bound: every budget plus the overhead.
func (p MemoryPlan) Total() int64 {
	n := p.Overhead
	for _, b := range p.Budgets {
		n += b.Bytes
	}
	return n
}

// HeapLimit is the Go heap's share: the on-heap budgets plus the overhead.
func (p MemoryPlan) HeapLimit() int64 {
	n := p.Overhead
	for _, b := range p.Budgets {
		if !b.OffHeap {
			n += b.Bytes
		}
	}
	return n
}

// String lists the budgets for the start-up log line.
func (p MemoryPlan) String() string {
	var parts []string
	for _, b := range p.Budgets {
		where := ""
		if b.OffHeap {
			where = " off-heap"
		}
		parts = append(parts, fmt.Sprintf("%s %s%s", b.Name, units.FormatBytes(b.Bytes), where))
	}
	parts = append(parts, "overhead "+units.FormatBytes(p.Overhead))
	return strings.Join(parts, ", ")
}

// GCPercent is the garbage collector's target (GOGC) a daemon runs with unless GOGC says
// otherwise: the heap may grow by half its live size between collections, not by all of
// it. A daemon's heap is mostly large pointer-free buffers (hash tables, aggregate states,
// column vectors), which a collection does not scan, so collecting twice as often costs
// little, while the headroom is resident at the peak: at SF 10, one pass of the 22 queries
// raised primproc's VmHWM by 1.00 GiB past the column cache at GOGC 50 and 1.25 GiB at 100
// (madvdontneed=1, one primproc, 9 GiB cache; totals 21.1 s and 20.6 s).
const GCPercent = 50

// Apply sets the runtime's soft memory limit to the plan's heap share, unless GOMEMLIMIT
// is set (the operator's choice wins), and the collector's target to GCPercent unless GOGC
// is set, and logs the plan. It returns the limit in force.
func (p MemoryPlan) Apply(log *slog.Logger) int64 {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	limit := p.HeapLimit()
	if env := os.Getenv("GOMEMLIMIT"); env != "" {
		limit = debug.SetMemoryLimit(-1)
		log.Info("memory plan", "budgets", p.String(), "resident_bound", units.FormatBytes(p.Total()),
			"go_soft_limit", units.FormatBytes(limit), "from", "GOMEMLIMIT="+env)
		return limit
	}
	debug.SetMemoryLimit(limit)
	log.Info("memory plan", "budgets", p.String(), "resident_bound", units.FormatBytes(p.Total()),
		"go_soft_limit", units.FormatBytes(limit))
	if total := PhysicalMemory(); total > 0 && p.Total() > total*9/10 {
		log.Warn("memory plan exceeds 90% of physical memory; lower the budgets", "resident_bound",
			units.FormatBytes(p.Total()), "physical", units.FormatBytes(total))
	}
	return limit
}

// SoftLimit is the runtime's soft memory limit now (math.MaxInt64: none).
func SoftLimit() int64 { return debug.SetMemoryLimit(-1) }

// PhysicalMemory is the machine's memory in bytes (0 if unknown).
func PhysicalMemory() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil || si.Totalram == 0 {
		return 0
	}
	total := uint64(si.Totalram) * uint64(si.Unit)
	if total > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(total)
}

// ResidentBytes is the process's resident set size now (0 if /proc is unavailable).
func ResidentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// GoHeap returns the Go heap's live objects and the memory the runtime holds for the heap
// (in use or free, not yet returned to the operating system).
func GoHeap() (live, held int64) {
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}
	metrics.Read(s)
	var v [3]int64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = int64(s[i].Value.Uint64())
		}
	}
	return v[0], v[0] + v[1] + v[2]
}

// Reclaimer gives an idle daemon's memory back to the operating system: on each Tick it
// sweeps the pools (releasing what lay unused since the last tick) and, when nothing is
// running (nor began since the last tick, with Started) and the sweeps released since it last collected (over however many ticks), or
// the Go runtime holds beyond its live heap, or the heap allocated since it last
// collected, at least MinFree bytes, or goroutines ended by the hundred since then
// (sessions that hung up: their stacks and buffers were live at the last collection and
// no allocation since counts them), collects and returns
// the free memory at once (debug.FreeOSMemory) instead of whenever the runtime's scavenger
// gets to it. Ticked every pool-idle interval, an idle daemon is back near its idle size
// within two intervals of its last query.
type Reclaimer struct {
	Busy func() bool
	// Started, if set, counts the requests the daemon has begun. Memory is returned only
	// after a whole tick interval in which none began: returning a few GB blocks the
	// process for half a second or more (the runtime scavenges under its heap lock), and
	// a tick that fell into the gap between two queries of a benchmark stalled primproc's
	// heartbeats past the peer's timeout (SF 10, Q18 right after another Q18).
	Started func() int64
	Sweeps  []func() int64
	MinFree int64
	Log     *slog.Logger
	// allocatedAt is heapAllocated at the last collection Tick made, and pending what the
	// sweeps released since; goroutinesAt the goroutines running then, or the most since
	// (Tick runs on one goroutine).
	allocatedAt, pending int64
	goroutinesAt         int
	startedAt            int64 // Started at the last tick
}

// goroutinesEnded is how many goroutines must have ended since the last collection for
// Tick to collect for them alone: a session holds a few tens of KiB (stack, buffers).
const goroutinesEnded = 100

// Released turns a cumulative count of bytes a pool gave back (such as an ipc.BufferPool's
// Stats().Released, which ages its buffers out on its own) into a Reclaimer sweep: each call
// returns what was released since the last.
func Released(total func() int64) func() int64 {
	last := total()
	return func() int64 {
		now := total()
		d := now - last
		last = now
		return d
	}
}

// heapAllocated is the bytes the Go heap has allocated since the process started.
func heapAllocated() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// Tick sweeps and reclaims once; it reports the pool bytes released and whether memory was
// returned to the OS.
func (r *Reclaimer) Tick() (released int64, returned bool) {
	for _, s := range r.Sweeps {
		released += s()
	}
	r.pending += released
	if r.Started != nil {
		n := r.Started()
		idle := n == r.startedAt
		r.startedAt = n
		if !idle {
			return released, false
		}
	}
	if r.Busy != nil && r.Busy() {
		return released, false
	}
	// Buffers the sweeps let go count as live until the next collection, as do the objects
	// a statement dropped (a cancelled one's buffers, say), and an idle daemon may not
	// collect again for minutes, its heap far from the next goal: so what the heap
	// allocated since Tick last collected counts as reclaimable too.
	live, held := GoHeap()
	allocated := heapAllocated()
	goroutines := runtime.NumGoroutine()
	r.goroutinesAt = max(r.goroutinesAt, goroutines)
	if held-live < r.MinFree && r.pending < r.MinFree && allocated-r.allocatedAt < r.MinFree &&
		r.goroutinesAt-goroutines < goroutinesEnded {
		return released, false
	}
	start := time.Now()
	debug.FreeOSMemory()
	took := time.Since(start)
	r.allocatedAt, r.pending, r.goroutinesAt = heapAllocated(), 0, runtime.NumGoroutine()
	if r.Log != nil {
		after, _ := GoHeap()
		level := slog.LevelDebug
		if took > 100*time.Millisecond {
			level = slog.LevelInfo // long enough to delay heartbeats: worth seeing
		}
		r.Log.Log(context.Background(), level, "idle: memory returned to the OS", "took", took.Round(time.Millisecond),
			"pools_released", released, "heap_held_before", held, "heap_held_after", after, "rss", ResidentBytes())
	}
	return released, true
}

// DefaultReclaimMinFree is Reclaimer.MinFree's usual value: below it, returning memory
// costs a collection for little.
const DefaultReclaimMinFree = 32 << 20

// lazyFreeSetting is the GODEBUG setting LazyFree adds: the runtime then returns a freed
// heap page with MADV_FREE rather than MADV_DONTNEED.
const lazyFreeSetting = "madvdontneed=0"

// LazyFree re-executes the daemon (same PID, arguments and environment) with
// GODEBUG=madvdontneed=0 unless GODEBUG already says either way; it returns only if it
// did not (the setting was there, or exec failed, which it logs).
//
// Why: the runtime's scavenger gives freed heap pages back to the kernel between queries,
// and with MADV_DONTNEED the next query that needs them faults each one in afresh, about
// 13 µs a page on the reference machine. At SF 10, Q18's aggregation tables took 70-400
// thousand such faults a run, 1-5 s of its 4-9 s. With MADV_FREE a page stays mapped until
// the kernel needs the memory, so a query that takes it again finds it; the peak resident
// set (VmHWM) is the same, only the resident set between queries stays near it, and the
// kernel reclaims those pages first, without writing them anywhere. The runtime reads the
// setting only at start, hence the exec.
func LazyFree(log *slog.Logger) {
	godebug := os.Getenv("GODEBUG")
	if strings.Contains(godebug, "madvdontneed=") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		log.Warn("cannot re-execute with GODEBUG="+lazyFreeSetting, "err", err)
		return
	}
	if godebug != "" {
		godebug += ","
	}
	env := []string{"GODEBUG=" + godebug + lazyFreeSetting}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GODEBUG=") { // the first of duplicates would win
			env = append(env, kv)
		}
	}
	err = unix.Exec(exe, os.Args, env)
	log.Warn("cannot re-execute with GODEBUG="+lazyFreeSetting, "exe", exe, "err", err)
}
