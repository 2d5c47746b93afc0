// Command primproc runs colink's primitive processor daemon: it owns a store of table
// segments (--data-dir), listens on the link and serves load, catalog, fragment, dropcache
// and stats (see link/PROTOCOL.md). Exit status: 0 after a clean shutdown (SIGTERM or
// SIGINT; the store is closed), 1 on a runtime failure, 2 on bad flags or configuration
// (including a data directory another primproc holds).
package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/internal/daemon"
	"github.com/colinkdb/colink/internal/metrics"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/primproc"
	"github.com/colinkdb/colink/storage"
)

func main() {
	daemon.LazyFree(slog.Default()) // before anything is opened: it may exec
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := pflag.NewFlagSet("primproc", pflag.ContinueOnError)
	var (
		cfg       primproc.Config
		lim       ipc.Limits
		logLevel  = fs.String("log-level", "info", "log level: debug, info, warn or error")
		logFormat = fs.String("log-format", "text", "log format: text or json")
		version   = daemon.VersionFlag(fs)
		debugAddr = fs.String("debug-listen", "", "serve Go's profiles (net/http/pprof) on this address; a bare :port binds loopback (default: off)")
		metricsAt = fs.String("metrics-listen", "", "serve Prometheus metrics at http://ADDR/metrics (link per transport, cache, memory, requests per method); a bare :port binds loopback (default: off)")
	)
	fs.StringVar(&cfg.DataDir, "data-dir", primproc.DefaultDataDir, "directory of the tables' segment files and catalog (created if missing; one primproc per directory)")
	daemon.ByteSizeVar(fs, &cfg.CacheSize, "cache-size", storage.DefaultCacheSize(), "a quarter of physical memory",
		"column cache budget: bytes, or with a unit (512MiB, 8GiB); 0 disables caching")
	fs.IntVar(&cfg.Threads, "threads", runtime.GOMAXPROCS(0), "workers a fragment scans with")
	daemon.ByteSizeVar(fs, &cfg.QueryMemory, "query-memory", primproc.DefaultQueryMemory(), "an eighth of physical memory, at most 4GiB",
		"memory one query may hold on this primproc (build sides, hash tables, sorts, aggregates): bytes or with a unit; 0 means unbounded")
	daemon.ByteSizeVar(fs, &cfg.QueryMemoryTotal, "query-memory-total", 0, "--query-memory",
		"memory all queries may hold on this primproc together; over it a query fails with 1041")
	daemon.ByteSizeVar(fs, &cfg.PoolSize, "pool-size", primproc.DefaultPoolSize, "",
		"free buffers the fragments' shared recycling pool keeps between queries (hash tables, aggregate states, output batches); 0 keeps none")
	fs.DurationVar(&cfg.PoolIdle, "pool-idle", primproc.DefaultPoolIdle, "give back pooled buffers left unused this long (to twice as long)")
	fs.IntVar(&cfg.RowGroupRows, "row-group-rows", storage.DefaultRowGroupRows, "rows per row group (one zone map each) in newly loaded segments")
	fs.IntVar(&cfg.SegmentRows, "segment-rows", storage.DefaultSegmentRows, "rows per segment file in newly loaded tables")
	fs.StringVar(&cfg.Compression, "compression", storage.DefaultCompression, "codec of newly written segments: none, snappy, zstd or lz4")
	fs.DurationVar(&cfg.PinTTL, "pin-ttl", primproc.DefaultPinTTL, "drop a query's snapshot pin after it goes unused this long")
	fs.BoolVar(&cfg.NoCompaction, "no-compaction", false, "never rewrite small or delete-heavy segments after writes")
	fs.Int64Var(&cfg.Compaction.SmallRows, "compact-small-rows", 0, "a segment with fewer live rows is small (default segment-rows/8)")
	fs.IntVar(&cfg.Compaction.MinSmall, "compact-min-small", 0, "merge a table's small segments once it has this many (default 4)")
	fs.StringArrayVar(&cfg.Listen, "listen", nil, "endpoint to listen on, repeatable: tcp://host:port, unix:///path or unix://@abstract (default "+fmt.Sprint(primproc.DefaultListen())+")")
	fs.StringVar(&cfg.AuthTokenFile, "auth-token-file", "", "file holding the shared secret TCP clients must prove (mode 0600, >= 16 bytes); required for a non-loopback TCP address")
	fs.IntSliceVar(&cfg.AllowUIDs, "allow-uid", nil, "uid allowed to connect over unix sockets besides primproc's own, repeatable")
	fs.StringVar(&cfg.Name, "name", "", "name shown to peers (default primproc@host pid N)")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", 0, "how long in-flight streams may finish after SIGTERM before they are canceled (default 5s)")
	fs.IntVar(&lim.MaxFrame, "max-frame", ipc.DefaultMaxFrame, "largest frame payload accepted, bytes")
	fs.IntVar(&lim.StreamWindow, "stream-window", ipc.DefaultStreamWindow, "flow-control credit granted to each stream, bytes")
	fs.IntVar(&lim.MaxStreams, "max-streams", ipc.DefaultMaxStreams, "concurrent streams per connection")
	fs.DurationVar(&lim.HeartbeatInterval, "heartbeat-interval", ipc.DefaultHeartbeatInterval, "ping a connection silent for this long")
	fs.DurationVar(&lim.HeartbeatTimeout, "heartbeat-timeout", ipc.DefaultHeartbeatTimeout, "drop a connection silent for this long")
	daemon.ByteSizeVar(fs, &lim.ShmSize, "shm-size", ipc.DefaultShmSize, "64MiB", "largest shared-memory segment created for a unix client asking for transport shm (two a connection, one a direction)")
	fs.IntVar(&cfg.MaxShmConns, "shm-conns", ipc.DefaultMaxShmConns, "link connections that may hold shared memory at once (each two --shm-size segments, resident); unix clients beyond it are served over the socket alone")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: primproc [flags]\n\nRuns colink's primitive processor on the link.\n\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return daemon.ExitOK
		}
		fmt.Fprintln(os.Stderr, "primproc:", err)
		return daemon.ExitUsage
	}
	if *version {
		daemon.PrintVersion(os.Stdout, "primproc")
		return daemon.ExitOK
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "primproc: unexpected arguments %q\n", fs.Args())
		return daemon.ExitUsage
	}
	log, err := daemon.NewLogger(*logLevel, *logFormat)
	if err != nil {
		fmt.Fprintln(os.Stderr, "primproc:", err)
		return daemon.ExitUsage
	}
	daemon.LogBuild(log, "primproc")
	// Signals are taken from here on: a SIGTERM while the daemon still starts (its link
	// clients may already log a peer up) is a clean shutdown, not the default action
	// that kills the process.
	ctx, stop := daemon.SignalContext(log)
	defer stop()
	cfg.Limits, cfg.Logger = lim, log
	if cfg.CacheSize == 0 {
		cfg.CacheSize = -1 // --cache-size 0: no cache (storage reads 0 as its default)
	}
	if cfg.PoolSize == 0 {
		cfg.PoolSize = -1 // --pool-size 0: keep nothing (primproc reads 0 as its default)
	}
	if cfg.PoolIdle <= 0 {
		fmt.Fprintf(os.Stderr, "primproc: need --pool-idle > 0\n")
		return daemon.ExitUsage
	}
	if cfg.Threads < 1 || cfg.RowGroupRows < 1 || cfg.SegmentRows < cfg.RowGroupRows {
		fmt.Fprintf(os.Stderr, "primproc: need --threads >= 1 and 1 <= --row-group-rows <= --segment-rows\n")
		return daemon.ExitUsage
	}
	d, err := primproc.New(cfg)
	if err != nil {
		log.Error("primproc: cannot start", "err", err)
		return daemon.ExitUsage
	}
	d.MemoryPlan().Apply(log)
	if *debugAddr != "" {
		if _, err := daemon.ServeDebug(ctx, *debugAddr, log); err != nil {
			log.Error("primproc: cannot start", "err", err)
			return daemon.ExitUsage
		}
	}
	if *metricsAt != "" {
		reg := metrics.NewRegistry("primproc")
		reg.MustRegister(metrics.NewCollector(func() metrics.Snapshot {
			st, err := d.Stats()
			if err != nil {
				log.Warn("primproc: metrics", "err", err)
			}
			return metrics.Snapshot{Link: []metrics.LinkSide{metrics.ServerSide(st.Link)}, Memory: &st.Memory, Cache: &st.Cache, Methods: st.Methods}
		}))
		if _, err := metrics.Serve(ctx, *metricsAt, reg, log); err != nil {
			log.Error("primproc: cannot start", "err", err)
			return daemon.ExitUsage
		}
	}
	if err := d.Run(ctx); err != nil {
		log.Error("primproc: failed", "err", err)
		return daemon.ExitFailure
	}
	return daemon.ExitOK
}
