package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
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
// trace, …) on addr until ctx ends. It listens before returning, so a bad address fails the
// daemon's start; serving errors after that are logged.
func ServeDebug(ctx context.Context, addr string, log *slog.Logger) (net.Addr, error) {
	addr, err := LoopbackAddr("--debug-listen", addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--debug-listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("debug listener failed", "addr", ln.Addr().String(), "err", err)
		}
	}()
	log.Info("serving profiles", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	return ln.Addr(), nil
}
