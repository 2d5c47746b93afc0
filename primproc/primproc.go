// Package primproc owns the primitive processor daemon: its configuration, the store of
// table segments it opens (package storage), its listeners on the link, and the methods it
// serves there:
//
//	load       a client uploads a table's rows as Arrow batches; they commit atomically
//	catalog    tables, Arrow schemas, row counts, segments and zone-map summaries
//	fragment   run an exec.Fragment next to the data (package primproc/fragment), with
//	           join build sides uploaded on the same stream; stream the output batches
//	write      one statement's rows to insert, or row IDs to delete, in one table; committed
//	           at once or prepared for a two-phase commit
//	resolve    commit or abort a prepared write, or ask for its state
//	pin, unpin hold a snapshot for a query, so that all its fragments read one version
//	dropcache  empty the column cache (and optionally the OS page cache of the segments)
//	stats      the process's CPU, context switches, memory, cache, link and per-method counters
//	echo, synth  the link's own test and benchmark primitives
//
// The messages are defined in package link and specified in link/PROTOCOL.md; link is
// also the client side. A malformed request fails its own
// stream with an ERROR naming the problem; the daemon serves on. After writes, a background
// compactor rewrites a table's small and delete-heavy segments (storage.Compact).
//
// Memory: the daemon keeps one recycling pool (vec.Pool) for all its fragments: their output
// records' buffers and their hash tables', aggregate states' and join tables' arrays come
// from it and go back to it, so that a query reuses the warm memory of the ones before
// instead of faulting in fresh pages. The pool keeps at most Config.PoolSize bytes between
// queries, and what lies unused for Config.PoolIdle goes back to the operating system.
package primproc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/bufpool"
	"github.com/colinkdb/colink/internal/daemon"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/storage"
)

// DefaultPort is primproc's default TCP port.
const DefaultPort = 8620

// DefaultDataDir is where a primproc keeps its tables unless told otherwise (relative to
// the working directory).
const DefaultDataDir = "data/pm0"

// Config configures a primproc.
type Config struct {
	// DataDir is the store's directory. Empty serves no data: only the link's own
	// primitives (echo, synth, stats), as link benchmarks want; the data methods then fail
	// with "unavailable". The command's --data-dir defaults to DefaultDataDir.
	DataDir string
	// CacheSize bounds the column cache in bytes (0: storage.DefaultCacheSize(); negative:
	// no cache).
	CacheSize int64
	// Threads is the number of workers a fragment runs on (0: all cores).
	Threads int
	// QueryMemory bounds each query's memory: its build sides, hash tables, sorts and
	// aggregates (0: unbounded). A query over it fails with an error saying so.
	QueryMemory int64
	// QueryMemoryTotal bounds all queries' memory together (0: QueryMemory; negative:
	// unbounded). A query whose charge would take the sum over it fails with 1041.
	QueryMemoryTotal int64
	// PoolSize bounds the bytes of free buffers the fragments' shared recycling pool keeps
	// between queries (0: DefaultPoolSize; negative: keep none).
	PoolSize int64
	// PoolIdle is how long a free buffer may lie unused in the pool before it is let go
	// (it goes between PoolIdle and twice that; 0: DefaultPoolIdle). Every PoolIdle, a
	// daemon with no request running returns its free memory to the OS (daemon.Reclaimer).
	PoolIdle time.Duration
	// RowGroupRows, SegmentRows and Compression lay out newly loaded segments (0/"":
	// storage's defaults).
	RowGroupRows, SegmentRows int
	Compression               string

	Listen          []string      // endpoint URLs; DefaultListen() if empty
	AuthTokenFile   string        // shared secret for TCP clients
	AllowUIDs       []int         // unix clients allowed besides this process's uid
	Name            string        // for peers' logs; "primproc@host pid N" if empty
	Limits          ipc.Limits    // link limits
	MaxShmConns     int           // link connections holding shared memory at once (ipc.DefaultMaxShmConns)
	ShutdownTimeout time.Duration // how long in-flight streams may run after SIGTERM (default 5s)
	Logger          *slog.Logger
	// Ready, if set, is called with the bound endpoints once every listener is up.
	Ready func(endpoints []string)
	// PinTTL is how long a query's snapshot pin may go unused before it is dropped
	// (DefaultPinTTL if 0).
	PinTTL time.Duration
	// Compaction is the policy of the background compactor, which rewrites a table's small
	// and delete-heavy segments after writes; NoCompaction turns it off.
	Compaction   storage.CompactionPolicy
	NoCompaction bool
}

// DefaultListen returns the default endpoints: loopback TCP on DefaultPort and a unix socket
// in a per-user directory under the temp dir.
func DefaultListen() []string {
	return []string{
		"tcp://127.0.0.1:" + strconv.Itoa(DefaultPort),
		"unix://" + filepath.Join(os.TempDir(), "colink-"+strconv.Itoa(os.Getuid()), "primproc-"+strconv.Itoa(DefaultPort)+".sock"),
	}
}

// Daemon is a configured primproc: its store, a link server with its handlers, and its
// listeners.
type Daemon struct {
	cfg       Config
	log       *slog.Logger
	store     *storage.Store
	layout    storage.Options // the store's effective layout options
	srv       *ipc.Server
	listeners []*ipc.Listener
	started   time.Time
	methods   map[string]*methodCounter // written only by register

	loadMu  sync.Mutex
	loading map[string]uint32 // table → stream id of the load writing it

	pins *pins // snapshots pinned for queries

	pool     *vec.Pool     // the fragments' recycling pool, shared by all
	linkPool *bufpool.Pool // the link connections' receive buffers; it ages them out itself
	budget   *exec.Budget  // all queries' memory, shared: every fragment's budget is its child

	// bg is canceled when the daemon stops: background work (compaction) ends.
	bg       context.Context
	bgCancel context.CancelFunc

	compactMu      sync.Mutex
	compactDue     map[string]bool // tables to look at
	compacting     bool            // the compactor goroutine runs
	compactStopped bool
	compactWG      sync.WaitGroup
	compactions    atomic.Int64

	// crashPoint is where a test kills the process (testhook.go); always empty in a
	// build without the colink_testhooks tag.
	crashPoint string
}

// The test hooks' crash points (testhook.go).
const (
	crashWriteCommitted   = "write-committed"
	crashWritePrepared    = "write-prepared"
	crashResolveCommitted = "resolve-committed"
)

// methodCounter counts one method's requests.
type methodCounter struct {
	calls, errors, active, wallNs atomic.Int64
}

// New validates cfg, binds every listener and registers the handlers. Errors here are
// configuration errors (bad URL, unreadable token, address in use).
func New(cfg Config) (*Daemon, error) {
	if len(cfg.Listen) == 0 {
		cfg.Listen = DefaultListen()
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Name == "" {
		host, _ := os.Hostname()
		cfg.Name = fmt.Sprintf("primproc@%s pid %d", host, os.Getpid())
	}
	if cfg.Threads <= 0 {
		cfg.Threads = runtime.GOMAXPROCS(0)
	}
	if cfg.QueryMemory < 0 {
		return nil, fmt.Errorf("query memory %d: must not be negative", cfg.QueryMemory)
	}
	if cfg.PoolSize == 0 {
		cfg.PoolSize = DefaultPoolSize
	}
	if cfg.QueryMemoryTotal == 0 {
		cfg.QueryMemoryTotal = cfg.QueryMemory
	}
	if cfg.PoolIdle <= 0 {
		cfg.PoolIdle = DefaultPoolIdle
	}
	crashPoint, err := testCrashPoint(cfg.Logger)
	if err != nil {
		return nil, err
	}
	var token []byte
	if cfg.AuthTokenFile != "" {
		var err error
		if token, err = ipc.ReadTokenFile(cfg.AuthTokenFile); err != nil {
			return nil, err
		}
	}
	d := &Daemon{cfg: cfg, log: cfg.Logger, started: time.Now(), methods: map[string]*methodCounter{}, loading: map[string]uint32{},
		pins: newPins(cfg.PinTTL), compactDue: map[string]bool{}, pool: newPool(cfg.PoolSize), crashPoint: crashPoint,
		budget: exec.NewSharedBudget(max(cfg.QueryMemoryTotal, 0), "--query-memory-total")}
	d.bg, d.bgCancel = context.WithCancel(context.Background())
	// The link's receive buffers age out as the fragments' pool does.
	linkPool := bufpool.New(bufpool.Options{Retain: ipc.DefaultPoolIdle, IdleTime: cfg.PoolIdle})
	d.linkPool = linkPool
	d.srv = ipc.NewServer(ipc.ServerConfig{
		Name: cfg.Name, AuthToken: token, AllowUIDs: cfg.AllowUIDs, Limits: cfg.Limits, MaxShmConns: cfg.MaxShmConns,
		Logger: cfg.Logger, Pool: linkPool,
	})
	d.register()
	for _, u := range cfg.Listen {
		ep, err := ipc.ParseEndpoint(u)
		if err != nil {
			d.closeListeners()
			return nil, err
		}
		ln, err := ipc.Listen(ep, len(token) > 0)
		if err != nil {
			d.closeListeners()
			return nil, err
		}
		d.listeners = append(d.listeners, ln)
	}
	// The store opens after the listeners, so that a bad endpoint leaves the data
	// directory untouched (opening it removes leftovers of interrupted loads).
	d.layout = storage.Options{CacheSize: cfg.CacheSize, RowGroupRows: cfg.RowGroupRows,
		SegmentRows: cfg.SegmentRows, Compression: cfg.Compression, Logger: cfg.Logger}
	if cfg.DataDir == "" {
		return d, nil
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		d.closeListeners()
		return nil, fmt.Errorf("data directory: %w", err)
	}
	store, err := storage.Open(cfg.DataDir, d.layout)
	if err != nil {
		d.closeListeners()
		return nil, fmt.Errorf("open store %s: %w", cfg.DataDir, err)
	}
	d.store = store
	d.layout = effectiveLayout(d.layout)
	return d, nil
}

// effectiveLayout fills the layout options storage defaults.
func effectiveLayout(o storage.Options) storage.Options {
	if o.RowGroupRows == 0 {
		o.RowGroupRows = storage.DefaultRowGroupRows
	}
	if o.SegmentRows == 0 {
		o.SegmentRows = max(storage.DefaultSegmentRows, o.RowGroupRows)
	}
	if o.Compression == "" {
		o.Compression = storage.DefaultCompression
	}
	return o
}

// Store returns the daemon's store (nil without a data directory).
func (d *Daemon) Store() *storage.Store { return d.store }

// Close releases a daemon that New returned but Run never served: its listeners and store.
func (d *Daemon) Close() error {
	d.closeListeners()
	d.stopCompaction()
	d.pins.closeAll()
	if d.store != nil {
		return d.store.Close()
	}
	return nil
}

func (d *Daemon) closeListeners() {
	for _, ln := range d.listeners {
		ln.Close()
	}
}

// Endpoints returns the bound endpoints (a tcp port 0 resolved).
func (d *Daemon) Endpoints() []string {
	var out []string
	for _, ln := range d.listeners {
		out = append(out, ln.Endpoint().String())
	}
	return out
}

// Server returns the link server, e.g. to register more handlers before Run.
func (d *Daemon) Server() *ipc.Server { return d.srv }

// Run serves until ctx is done, then shuts down: listeners close (socket files are
// removed), in-flight streams get ShutdownTimeout to finish before they are canceled.
func (d *Daemon) Run(ctx context.Context) error {
	lns := make([]net.Listener, len(d.listeners))
	for i, ln := range d.listeners {
		lns[i] = ln
	}
	errc := make(chan error, 1)
	go func() { errc <- d.srv.Serve(lns...) }()
	// The ready line. Every listener has listened since New, so from here on a client's
	// connection is queued by the kernel and taken by Serve's accept loop: it is never
	// refused.
	d.log.Info("primproc: serving", "endpoints", d.Endpoints(), "methods", d.srv.Methods(), "pid", os.Getpid(),
		"data_dir", d.cfg.DataDir, "threads", d.cfg.Threads, "query_memory", d.cfg.QueryMemory)
	if d.cfg.Ready != nil {
		d.cfg.Ready(d.Endpoints())
	}
	if d.store != nil {
		d.compactWG.Add(1)
		go d.addMissingSketches()
	}
	var serveErr error
	sweep := time.NewTicker(time.Minute)
	defer sweep.Stop()
	trim := time.NewTicker(d.cfg.PoolIdle)
	defer trim.Stop()
	reclaim := d.reclaimer()
serve:
	for {
		select {
		case <-ctx.Done():
			break serve
		case now := <-sweep.C:
			d.pins.sweep(now)
		case <-trim.C:
			reclaim.Tick()
		case serveErr = <-errc:
			if serveErr == nil {
				serveErr = errors.New("listeners closed")
			}
			d.log.Error("primproc: serving failed", "err", serveErr)
			break serve
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), d.cfg.ShutdownTimeout)
	defer cancel()
	d.log.Info("primproc: shutting down", "grace", d.cfg.ShutdownTimeout)
	if err := d.srv.Shutdown(sctx); err != nil {
		d.log.Warn("primproc: shutdown", "err", err)
	}
	if serveErr == nil {
		<-errc
	}
	d.stopCompaction()
	d.pins.closeAll()
	if d.store != nil {
		if err := d.store.Close(); err != nil {
			d.log.Warn("primproc: closing the store", "err", err)
		}
	}
	d.log.Info("primproc: stopped")
	return serveErr
}

// DefaultPoolSize is the default bound of the free buffers the fragments' pool keeps.
const DefaultPoolSize = 256 << 20

// DefaultPoolIdle is how long a free buffer lies unused in the pool, by default, before it
// is let go.
const DefaultPoolIdle = 30 * time.Second

// newPool returns the fragments' pool: keeping at most size bytes, or nothing if size < 0.
func newPool(size int64) *vec.Pool {
	if size < 0 {
		size = 1 // a pool that keeps no buffer: every Free drops it
	}
	return vec.NewPool(size)
}

// reclaimer sweeps the fragments' pool every PoolIdle and returns an idle daemon's free
// memory to the OS.
func (d *Daemon) reclaimer() *daemon.Reclaimer {
	// The link's receive pool ages its buffers out on its own; what it lets go counts as
	// released too, so that it is collected and returned once idle.
	linkReleased := daemon.Released(func() int64 { return d.linkPool.Stats().Released })
	return &daemon.Reclaimer{Busy: d.busy, Started: d.requests, Sweeps: []func() int64{d.pool.Sweep, linkReleased}, MinFree: daemon.DefaultReclaimMinFree, Log: d.log}
}

// requests is the number of requests begun so far.
func (d *Daemon) requests() int64 {
	var n int64
	for _, c := range d.methods {
		n += c.calls.Load()
	}
	return n
}

// busy reports whether a request is running.
func (d *Daemon) busy() bool {
	for _, c := range d.methods {
		if c.active.Load() > 0 {
			return true
		}
	}
	return false
}

// linkStreamsBudgeted is how many streams' windows a daemon's memory plan sets aside: the
// fragments of a few concurrent queries, each with its window of batches in flight.
const linkStreamsBudgeted = 16

// MemoryPlan is the daemon's memory as its budgets: the column cache, the decode pool's
// idle buffers and the link's shared-memory segments off the Go heap; the queries' memory, the fragments' pool, the link's
// receive pool and windows on it; and the stated overhead. cmd/primproc sets the Go
// runtime's soft limit from it.
func (d *Daemon) MemoryPlan() daemon.MemoryPlan {
	window := int64(d.cfg.Limits.StreamWindow)
	if window <= 0 {
		window = ipc.DefaultStreamWindow
	}
	p := daemon.MemoryPlan{Overhead: daemon.DefaultOverhead}
	if d.store != nil {
		cache := d.store.CacheStats().Capacity
		p.Budgets = append(p.Budgets,
			daemon.Budget{Name: "column cache", Bytes: cache, OffHeap: true},
			daemon.Budget{Name: "decode pool", Bytes: storage.DecodePoolRetain(cache), OffHeap: true})
	}
	p.Budgets = append(p.Budgets,
		daemon.Budget{Name: "query memory", Bytes: d.budget.Limit()},
		daemon.Budget{Name: "fragment pool", Bytes: max(d.cfg.PoolSize, 0)},
		daemon.Budget{Name: "link receive pool", Bytes: ipc.DefaultPoolIdle},
		daemon.Budget{Name: "link windows", Bytes: linkStreamsBudgeted * window})
	shm := ipc.ServerConfig{Limits: d.cfg.Limits, MaxShmConns: d.cfg.MaxShmConns}.ShmBytes()
	if shm > 0 {
		p.Budgets = append(p.Budgets, daemon.Budget{Name: "shm segments", Bytes: shm, OffHeap: true})
	}
	return p
}

// Run is New followed by Daemon.Run.
func Run(ctx context.Context, cfg Config) error {
	d, err := New(cfg)
	if err != nil {
		return err
	}
	return d.Run(ctx)
}

// DefaultQueryMemory is --query-memory's default: an eighth of physical memory, at most
// 4 GiB (1 GiB if the memory size is unknown). With the column cache at a quarter, the
// defaults of primproc and exemgr together stay under 60% of the machine (see MemoryPlan).
func DefaultQueryMemory() int64 {
	total := daemon.PhysicalMemory()
	if total == 0 {
		return 1 << 30
	}
	return min(total/8, 4<<30)
}
