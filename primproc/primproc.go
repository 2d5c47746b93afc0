// Package primproc owns the primitive processor daemon: its configuration, its listeners on
// the link, and the handlers it serves. Until the engine lands it serves the built-in
// primitives the link's tests and benchmarks use: echo, synth and stats.
package primproc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/colinkdb/colink/ipc"
)

// DefaultPort is primproc's default TCP port.
const DefaultPort = 8620

// Config configures a primproc.
type Config struct {
	Listen          []string      // endpoint URLs; DefaultListen() if empty
	AuthTokenFile   string        // shared secret for TCP clients
	AllowUIDs       []int         // unix clients allowed besides this process's uid
	Name            string        // for peers' logs; "primproc@host pid N" if empty
	Limits          ipc.Limits    // link limits
	ShutdownTimeout time.Duration // how long in-flight streams may run after SIGTERM (default 5s)
	Logger          *slog.Logger
	// Ready, if set, is called with the bound endpoints once every listener is up.
	Ready func(endpoints []string)
}

// DefaultListen returns the default endpoints: loopback TCP on DefaultPort and a unix socket
// in a per-user directory under the temp dir.
func DefaultListen() []string {
	return []string{
		"tcp://127.0.0.1:" + strconv.Itoa(DefaultPort),
		"unix://" + filepath.Join(os.TempDir(), "colink-"+strconv.Itoa(os.Getuid()), "primproc-"+strconv.Itoa(DefaultPort)+".sock"),
	}
}

// Daemon is a configured primproc: a link server with its handlers and listeners.
type Daemon struct {
	cfg       Config
	log       *slog.Logger
	srv       *ipc.Server
	listeners []*ipc.Listener
	started   time.Time
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
	var token []byte
	if cfg.AuthTokenFile != "" {
		var err error
		if token, err = ipc.ReadTokenFile(cfg.AuthTokenFile); err != nil {
			return nil, err
		}
	}
	d := &Daemon{cfg: cfg, log: cfg.Logger, started: time.Now()}
	d.srv = ipc.NewServer(ipc.ServerConfig{
		Name: cfg.Name, AuthToken: token, AllowUIDs: cfg.AllowUIDs, Limits: cfg.Limits, Logger: cfg.Logger,
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
	return d, nil
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
	d.log.Info("primproc: serving", "endpoints", d.Endpoints(), "methods", d.srv.Methods(), "pid", os.Getpid())
	if d.cfg.Ready != nil {
		d.cfg.Ready(d.Endpoints())
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
		if serveErr == nil {
			serveErr = errors.New("listeners closed")
		}
		d.log.Error("primproc: serving failed", "err", serveErr)
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
	d.log.Info("primproc: stopped")
	return serveErr
}

// Run is New followed by Daemon.Run.
func Run(ctx context.Context, cfg Config) error {
	d, err := New(cfg)
	if err != nil {
		return err
	}
	return d.Run(ctx)
}
