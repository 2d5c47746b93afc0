// Package metrics owns colink's Prometheus endpoint, which both daemons serve with
// --metrics-listen, and the collectors behind it. The collectors read, at scrape time, the
// counters the daemons keep anyway (the ones the stats call and SHOW QUERY STATS report):
// the link's per peer and transport, the column cache's, the memory against each bound,
// primproc's requests per method. Only exemgr's statement counters and latency histogram
// are counted for the endpoint itself, one observation per statement. A daemon nobody
// scrapes pays nothing else.
package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/colinkdb/colink/internal/buildinfo"
	"github.com/colinkdb/colink/internal/daemon"
)

// Namespace prefixes every colink metric.
const Namespace = "colink"

// NewRegistry returns a registry holding the Go runtime's and the process's collectors and
// colink_build_info (1, labelled with the program and its build).
func NewRegistry(program string) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	in := buildinfo.Read()
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "build_info", Help: "the running binary's build; always 1",
		ConstLabels: prometheus.Labels{"program": program, "version": in.Version, "revision": in.ShortRevision(), "go_version": in.GoVersion},
	})
	build.Set(1)
	reg.MustRegister(build)
	return reg
}

// Serve serves reg's metrics at /metrics on addr (a bare ":port" binds loopback only) until
// ctx ends, in the OpenMetrics format to scrapers that ask for it and Prometheus's text
// format otherwise. It listens before returning, so a bad address fails the daemon's start.
func Serve(ctx context.Context, addr string, reg *prometheus.Registry, log *slog.Logger) (net.Addr, error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true, ErrorLog: slogPrinter{log}}))
	a, err := daemon.ServeHTTP(ctx, "--metrics-listen", addr, mux, log)
	if err != nil {
		return nil, err
	}
	log.Info("serving metrics", "url", "http://"+a.String()+"/metrics")
	return a, nil
}

// slogPrinter is promhttp's error log on a slog logger.
type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Println(v ...any) { p.log.Warn("metrics: " + fmt.Sprint(v...)) }
