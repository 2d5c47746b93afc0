// Package daemon owns what colink's daemon mains share: the exit codes, logger setup from
// flags, signal handling for clean shutdown, and the byte-size flag value (ByteSize).
package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Exit codes of colink's daemons.
const (
	ExitOK      = 0 // clean shutdown
	ExitFailure = 1 // a runtime failure: listening failed, serving failed
	ExitUsage   = 2 // bad flags or configuration
)

// NewLogger returns a text (or json) slog logger on stderr at the named level. Its lines go
// through a stallWriter: a stderr nobody reads drops lines instead of stopping the daemon.
func NewLogger(level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	var newHandler func(io.Writer) slog.Handler
	switch format {
	case "text", "":
		newHandler = func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, opts) }
	case "json":
		newHandler = func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, opts) }
	default:
		return nil, fmt.Errorf("--log-format %q: want text or json", format)
	}
	return slog.New(newHandler(newStallWriter(os.Stderr, newHandler))), nil
}

// SignalContext returns a context canceled by SIGTERM or SIGINT; a second signal exits at
// once with status 1.
func SignalContext(log *slog.Logger) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		sig := <-ch
		log.Info("signal received; shutting down", "signal", sig.String())
		cancel()
		sig = <-ch
		log.Error("second signal; exiting now", "signal", sig.String())
		os.Exit(ExitFailure)
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel()
	}
}
