// Command exemgr runs colink's execution manager: it serves MySQL clients (TCP and
// optionally a unix socket), plans their SQL against the catalog the primprocs report, and
// runs it — fragments on every primproc over the link, the rest in exemgr. It keeps its link
// connections alive with heartbeats and reconnects. Exit status: 0 after a clean shutdown
// (SIGTERM or SIGINT: running queries are cancelled, sessions closed), 1 on a runtime
// failure (such as a MySQL port in use), 2 on bad flags or configuration (a corrupt views
// file in --data-dir, a users file others may read). It logs "exemgr: serving" once it
// accepts MySQL clients on every listener. With --data-dir, the views users create survive
// restarts and crashes.
package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/exemgr"
	"github.com/colinkdb/colink/exemgr/frontend"
	"github.com/colinkdb/colink/internal/buildinfo"
	"github.com/colinkdb/colink/internal/daemon"
	"github.com/colinkdb/colink/internal/metrics"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/sql/opt"
)

func main() {
	daemon.LazyFree(slog.Default()) // before anything is opened: it may exec
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := pflag.NewFlagSet("exemgr", pflag.ContinueOnError)
	var (
		cfg       exemgr.Config
		ecfg      exemgr.EngineConfig
		fcfg      = frontend.DefaultConfig()
		transport string
		logLevel  = fs.String("log-level", "info", "log level: debug, info, warn or error")
		logFormat = fs.String("log-format", "text", "log format: text or json")
		version   = daemon.VersionFlag(fs)
		debugAddr = fs.String("debug-listen", "", "serve Go's profiles (net/http/pprof) on this address; a bare :port binds loopback (default: off)")
		metricsAt = fs.String("metrics-listen", "", "serve Prometheus metrics at http://ADDR/metrics (statements, errors by code and latency; the link per primproc and transport; memory); a bare :port binds loopback (default: off)")
	)
	fs.StringArrayVar(&cfg.PrimProcs, "primproc", nil, "primproc to connect to, repeatable: tcp://host:port or unix:///path (default "+exemgr.DefaultPrimProc+")")
	fs.StringVar(&transport, "transport", string(ipc.DefaultTransport), "link transport: tcp, unix (the primproc's unix socket, found through its hello), shm (that socket with batch bodies in shared memory) or auto (shm, else unix for a local primproc, else tcp)")
	daemon.ByteSizeVar(fs, &cfg.Limits.ShmSize, "shm-size", ipc.DefaultShmSize, "64MiB", "each shared-memory segment of a link connection over transport shm or auto (two a connection, one a direction)")
	fs.IntVar(&cfg.ConnsPerPeer, "conns-per-peer", 2, "link connections to each primproc")
	fs.StringVar(&cfg.AuthTokenFile, "auth-token-file", "", "file holding the shared secret for TCP primprocs (mode 0600, >= 16 bytes)")
	fs.IntSliceVar(&cfg.AllowUIDs, "allow-uid", nil, "uid a primproc's unix socket may belong to besides exemgr's own, repeatable")
	fs.StringVar(&cfg.Compression, "compression", "", "Arrow body compression on the link: lz4 or zstd (default none)")
	fs.StringVar(&cfg.Name, "name", "", "name shown to primprocs (default exemgr@host pid N)")
	fs.DurationVar(&cfg.Limits.HeartbeatInterval, "heartbeat-interval", ipc.DefaultHeartbeatInterval, "ping a connection silent for this long")
	fs.DurationVar(&cfg.Limits.HeartbeatTimeout, "heartbeat-timeout", ipc.DefaultHeartbeatTimeout, "declare a primproc dead after this long without a byte from it")
	fs.IntVar(&cfg.Limits.StreamWindow, "stream-window", ipc.DefaultStreamWindow, "flow-control credit granted to each stream, bytes")
	fcfg.RegisterFlags(fs)
	fs.StringVar(&ecfg.Database, "database", exemgr.DefaultDatabase, "name of the database that holds the primprocs' tables (and the views)")
	daemon.ByteSizeVar(fs, &ecfg.QueryMemory, "query-memory", exemgr.DefaultQueryMemory(), "an eighth of physical memory, at most 4GiB",
		"memory bound of each query: exemgr's operators and build sides, and each primproc's share (e.g. 512MiB, 4GiB; 0 = unbounded); a query over it fails with error 1041")
	daemon.ByteSizeVar(fs, &ecfg.QueryMemoryTotal, "query-memory-total", 0, "--query-memory",
		"memory all queries may hold in exemgr together; over it a query fails with error 1041")
	daemon.ByteSizeVar(fs, &ecfg.PmMaxMemorySmallSide, "pm-max-memory-small-side", opt.DefaultPmMaxMemorySmallSide, "",
		"largest estimated join build side broadcast to the primprocs (PM join); larger ones join in exemgr (UM join)")
	fs.Var(&ecfg.Pushdown, "pushdown", "how much of each query the primprocs run: full (every filter, projection, join probe, partial aggregate and top-N they can), filter (scan, filter and project; joins, aggregation and sorts in exemgr) or scan (scan and project only; filters in exemgr too); a session may SET colink_pushdown")
	fs.IntVar(&ecfg.Threads, "threads", runtime.GOMAXPROCS(0), "build sides of one fragment exemgr computes at once (sibling broadcasts overlap); 1 computes them one after the other")
	fs.StringVar(&ecfg.SecureFilePriv, "secure-file-priv", "",
		"directory LOAD DATA INFILE (not LOCAL) may read server-side files from, like mysqld's; empty (the default, unlike mysqld's) refuses them all, and LOAD DATA LOCAL INFILE still works")
	fs.StringVar(&ecfg.DataDir, "data-dir", "", "directory of exemgr's own state (the views, in views.json), created if missing; empty keeps views in memory only, lost at a restart")
	poolIdle := fs.Duration("pool-idle", 30*time.Second, "every this long, sweep the result pool and give an idle exemgr's free memory back to the OS")
	fs.DurationVar(&ecfg.PrimProcTimeout, "primproc-timeout", exemgr.DefaultPrimProcTimeout, "how long a statement waits for a primproc without a live connection before failing")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: exemgr [flags]\n\nRuns colink's execution manager. Compiled-in default transport: %s.\n\n%s", ipc.DefaultTransport, fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return daemon.ExitOK
		}
		fmt.Fprintln(os.Stderr, "exemgr:", err)
		return daemon.ExitUsage
	}
	if *version {
		daemon.PrintVersion(os.Stdout, "exemgr")
		return daemon.ExitOK
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "exemgr: unexpected arguments %q\n", fs.Args())
		return daemon.ExitUsage
	}
	log, err := daemon.NewLogger(*logLevel, *logFormat)
	if err != nil {
		fmt.Fprintln(os.Stderr, "exemgr:", err)
		return daemon.ExitUsage
	}
	daemon.LogBuild(log, "exemgr")
	// Signals are taken from here on: a SIGTERM while the daemon still starts (its link
	// clients may already log a peer up) is a clean shutdown, not the default action
	// that kills the process.
	ctx, stop := daemon.SignalContext(log)
	defer stop()
	if cfg.Transport, err = ipc.ParseTransport(transport); err != nil {
		fmt.Fprintln(os.Stderr, "exemgr: --transport:", err)
		return daemon.ExitUsage
	}
	cfg.Logger = log
	fcfg.Logger = log
	build := buildinfo.Read()
	fcfg.ServerVersion, fcfg.VersionComment = frontend.ServerVersionFor(build), frontend.VersionCommentFor(build)
	ecfg.Logger = log
	// The ready line: drivers and scripts wait for it before the first connection.
	fcfg.Ready = func(addrs []net.Addr) {
		var mysql []string
		for _, a := range addrs {
			mysql = append(mysql, a.Network()+"://"+a.String())
		}
		log.Info("exemgr: serving", "mysql", mysql, "pid", os.Getpid())
	}
	if ecfg.Threads < 1 {
		fmt.Fprintln(os.Stderr, "exemgr: --threads must be at least 1")
		return daemon.ExitUsage
	}
	if err := frontend.CheckMaxAllowedPacket(fcfg.MaxAllowedPacket); err != nil {
		fmt.Fprintln(os.Stderr, "exemgr:", err)
		return daemon.ExitUsage
	}
	if err := fcfg.CheckTimeouts(); err != nil {
		fmt.Fprintln(os.Stderr, "exemgr:", err)
		return daemon.ExitUsage
	}
	if err := exemgr.CheckSecureFilePriv(ecfg.SecureFilePriv); err != nil {
		fmt.Fprintln(os.Stderr, "exemgr:", err)
		return daemon.ExitUsage
	}
	if fcfg.UsersFile != "" {
		// Read here, so that a bad users file (world-readable, malformed) is a configuration
		// error (exit 2), not a failure to serve.
		if fcfg.Users, err = frontend.LoadUsers(fcfg.UsersFile); err != nil {
			fmt.Fprintln(os.Stderr, "exemgr:", err)
			return daemon.ExitUsage
		}
	}
	if *poolIdle <= 0 {
		fmt.Fprintln(os.Stderr, "exemgr: need --pool-idle > 0")
		return daemon.ExitUsage
	}
	cfg.PoolIdle = *poolIdle
	em, err := exemgr.New(cfg)
	if err != nil {
		log.Error("exemgr: cannot start", "err", err)
		return daemon.ExitUsage
	}
	if ecfg.DataDir == "" {
		log.Info("exemgr: no --data-dir: views are kept in memory only and will not survive a restart")
	}
	var reg *prometheus.Registry
	if *metricsAt != "" {
		reg = metrics.NewRegistry("exemgr")
		fcfg.Statements = metrics.NewStatements(reg)
	}
	engine, err := exemgr.NewEngine(em, ecfg)
	if err != nil {
		em.Close()
		log.Error("exemgr: cannot start", "err", err)
		return daemon.ExitUsage
	}
	defer engine.Close()
	engine.MemoryPlan(cfg.Limits.StreamWindow).Apply(log)
	srv, err := frontend.Listen(fcfg, engine)
	if err != nil {
		em.Close()
		log.Error("exemgr: cannot serve MySQL clients", "err", err)
		return daemon.ExitFailure
	}
	if *debugAddr != "" {
		if _, err := daemon.ServeDebug(ctx, *debugAddr, log); err != nil {
			log.Error("exemgr: cannot start", "err", err)
			return daemon.ExitUsage
		}
	}
	if reg != nil {
		reg.MustRegister(metrics.NewCollector(func() metrics.Snapshot {
			links, mem := engine.MetricsSnapshot()
			snap := metrics.Snapshot{Memory: &mem}
			for _, l := range links {
				snap.Link = append(snap.Link, metrics.ClientSide(l))
			}
			return snap
		}))
		if _, err := metrics.Serve(ctx, *metricsAt, reg, log); err != nil {
			em.Close()
			log.Error("exemgr: cannot start", "err", err)
			return daemon.ExitUsage
		}
	}
	if err := em.Run(ctx, engine.Service(srv), engine.Reclaim(*poolIdle)); err != nil {
		log.Error("exemgr: failed", "err", err)
		return daemon.ExitFailure
	}
	return daemon.ExitOK
}
