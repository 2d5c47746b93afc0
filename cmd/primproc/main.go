// Command primproc runs colink's primitive processor daemon: it listens on the link and
// serves fragments (for now the built-in echo, synth and stats primitives). Exit status: 0
// after a clean shutdown (SIGTERM or SIGINT), 1 on a runtime failure, 2 on bad flags or
// configuration.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/internal/daemon"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/primproc"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	fs := pflag.NewFlagSet("primproc", pflag.ContinueOnError)
	var (
		cfg       primproc.Config
		lim       ipc.Limits
		logLevel  = fs.String("log-level", "info", "log level: debug, info, warn or error")
		logFormat = fs.String("log-format", "text", "log format: text or json")
	)
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
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "primproc: unexpected arguments %q\n", fs.Args())
		return daemon.ExitUsage
	}
	log, err := daemon.NewLogger(*logLevel, *logFormat)
	if err != nil {
		fmt.Fprintln(os.Stderr, "primproc:", err)
		return daemon.ExitUsage
	}
	cfg.Limits, cfg.Logger = lim, log
	d, err := primproc.New(cfg)
	if err != nil {
		log.Error("primproc: cannot start", "err", err)
		return daemon.ExitUsage
	}
	ctx, stop := daemon.SignalContext(log)
	defer stop()
	if err := d.Run(ctx); err != nil {
		log.Error("primproc: failed", "err", err)
		return daemon.ExitFailure
	}
	return daemon.ExitOK
}
