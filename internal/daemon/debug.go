package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	rpprof "runtime/pprof"
	"sync"
	"time"
)

// LoopbackAddr resolves the value of a listen flag (--debug-listen, --metrics-listen): a
// bare ":port" (or "port") binds loopback only; any other host is taken as given (0.0.0.0
// exposes the endpoint on purpose).
func LoopbackAddr(flag, addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		if _, perr := net.LookupPort("tcp", addr); perr == nil {
			return net.JoinHostPort("127.0.0.1", addr), nil
		}
		return "", fmt.Errorf("%s %q: want host:port or :port", flag, addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// ServeDebug serves Go's profiles (net/http/pprof: /debug/pprof/, profile, heap, goroutine,
// trace, …) on addr until ctx ends, and a CPU profile bracketed by POST
// /debug/colink/cpuprofile/start and /stop (the stop's body is the profile). It listens before returning, so a bad address fails the
// daemon's start; serving errors after that are logged.
func ServeDebug(ctx context.Context, addr string, log *slog.Logger) (net.Addr, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	prof := &cpuProfiler{}
	mux.HandleFunc("POST /debug/colink/cpuprofile/start", prof.start)
	mux.HandleFunc("POST /debug/colink/cpuprofile/stop", prof.stop)
	a, err := ServeHTTP(ctx, "--debug-listen", addr, mux, log)
	if err != nil {
		return nil, err
	}
	log.Info("serving profiles", "url", "http://"+a.String()+"/debug/pprof/")
	return a, nil
}

// ServeHTTP serves h on addr, the value of the listen flag named flag (resolved by
// LoopbackAddr), until ctx ends. It listens before returning, so a bad address fails the
// daemon's start; serving errors after that are logged.
func ServeHTTP(ctx context.Context, flag, addr string, h http.Handler, log *slog.Logger) (net.Addr, error) {
	addr, err := LoopbackAddr(flag, addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(flag+" listener failed", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return ln.Addr(), nil
}

// cpuProfiler serves a CPU profile bracketed by two requests, start and stop, so that a
// driver profiles exactly one query however long it runs (net/http/pprof's profile takes a
// duration instead). One profile runs at a time, and one left running stops by itself after
// maxProfile, so that a vanished driver cannot leave it growing.
type cpuProfiler struct {
	mu    sync.Mutex
	buf   *bytes.Buffer // the running profile's, nil when none runs
	timer *time.Timer
}

// maxProfile bounds a profile nobody stops.
const maxProfile = 10 * time.Minute

func (p *cpuProfiler) start(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.buf != nil {
		http.Error(w, "a CPU profile is already running: stop it first", http.StatusConflict)
		return
	}
	buf := &bytes.Buffer{}
	if err := rpprof.StartCPUProfile(buf); err != nil {
		http.Error(w, "cannot start a CPU profile: "+err.Error(), http.StatusConflict)
		return
	}
	p.buf = buf
	p.timer = time.AfterFunc(maxProfile, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.buf == buf {
			rpprof.StopCPUProfile()
			p.buf = nil
		}
	})
	w.WriteHeader(http.StatusNoContent)
}

func (p *cpuProfiler) stop(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.buf == nil {
		http.Error(w, "no CPU profile is running (none was started, or it ran past "+maxProfile.String()+")", http.StatusConflict)
		return
	}
	rpprof.StopCPUProfile()
	p.timer.Stop()
	buf := p.buf
	p.buf = nil
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(buf.Bytes())
}
