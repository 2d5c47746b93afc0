// Command exemgr runs colink's execution manager: it connects to every primproc over the
// link, keeps the connections alive with heartbeats and reconnects, and (once the front end
// is wired in) serves MySQL clients. Exit status: 0 after a clean shutdown (SIGTERM or
// SIGINT), 1 on a runtime failure, 2 on bad flags or configuration.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/exemgr"
	"github.com/colinkdb/colink/internal/daemon"
	"github.com/colinkdb/colink/ipc"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	fs := pflag.NewFlagSet("exemgr", pflag.ContinueOnError)
	var (
		cfg       exemgr.Config
		transport string
		logLevel  = fs.String("log-level", "info", "log level: debug, info, warn or error")
		logFormat = fs.String("log-format", "text", "log format: text or json")
	)
	fs.StringArrayVar(&cfg.PrimProcs, "primproc", nil, "primproc to connect to, repeatable: tcp://host:port or unix:///path (default "+exemgr.DefaultPrimProc+")")
	fs.StringVar(&transport, "transport", string(ipc.DefaultTransport), "link transport: tcp, unix (the primproc's unix socket, found through its hello) or auto (unix for a local primproc, else tcp)")
	fs.IntVar(&cfg.ConnsPerPeer, "conns-per-peer", 2, "link connections to each primproc")
	fs.StringVar(&cfg.AuthTokenFile, "auth-token-file", "", "file holding the shared secret for TCP primprocs (mode 0600, >= 16 bytes)")
	fs.IntSliceVar(&cfg.AllowUIDs, "allow-uid", nil, "uid a primproc's unix socket may belong to besides exemgr's own, repeatable")
	fs.StringVar(&cfg.Compression, "compression", "", "Arrow body compression on the link: lz4 or zstd (default none)")
	fs.StringVar(&cfg.Name, "name", "", "name shown to primprocs (default exemgr@host pid N)")
	fs.DurationVar(&cfg.Limits.HeartbeatInterval, "heartbeat-interval", ipc.DefaultHeartbeatInterval, "ping a connection silent for this long")
	fs.DurationVar(&cfg.Limits.HeartbeatTimeout, "heartbeat-timeout", ipc.DefaultHeartbeatTimeout, "declare a primproc dead after this long without a byte from it")
	fs.IntVar(&cfg.Limits.StreamWindow, "stream-window", ipc.DefaultStreamWindow, "flow-control credit granted to each stream, bytes")
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
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "exemgr: unexpected arguments %q\n", fs.Args())
		return daemon.ExitUsage
	}
	log, err := daemon.NewLogger(*logLevel, *logFormat)
	if err != nil {
		fmt.Fprintln(os.Stderr, "exemgr:", err)
		return daemon.ExitUsage
	}
	if cfg.Transport, err = ipc.ParseTransport(transport); err != nil {
		fmt.Fprintln(os.Stderr, "exemgr: --transport:", err)
		return daemon.ExitUsage
	}
	cfg.Logger = log
	em, err := exemgr.New(cfg)
	if err != nil {
		log.Error("exemgr: cannot start", "err", err)
		return daemon.ExitUsage
	}
	ctx, stop := daemon.SignalContext(log)
	defer stop()
	if err := em.Run(ctx); err != nil {
		log.Error("exemgr: failed", "err", err)
		return daemon.ExitFailure
	}
	return daemon.ExitOK
}
