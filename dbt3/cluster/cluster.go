// Package cluster owns colink's daemons as children of a dbt3 driver. It finds (or builds)
// the primproc and exemgr binaries; starts N primprocs, each over its own data directory and
// listening on loopback TCP and on a unix socket at once; starts one exemgr per link
// transport a measurement asks for, all at once over the same primprocs (a primproc's data
// and cache do not depend on how exemgr reaches it), each on its own MySQL socket; waits
// until each daemon
// is ready; and stops them all — SIGTERM to each child's own process group, SIGKILL after a
// grace period — leaving no process and no socket file behind. A daemon that fails to start
// is reported with its own last log lines (StartError); one that dies later, likewise
// (DiedError). Each daemon's whole log is kept in the run directory.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/colinkdb/colink/dbt3"
)

// Config configures a cluster.
type Config struct {
	Binaries Binaries
	// DataDirs has one data directory per primproc; its length is the number of primprocs.
	DataDirs []string
	// RunDir holds the daemons' logs and, unless SocketDir is set, their unix sockets. It
	// must exist; a short path keeps socket paths under the kernel's 107 bytes.
	RunDir    string
	SocketDir string
	// BasePort: primproc i listens on 127.0.0.1:BasePort+i; 0 picks free ports.
	BasePort int
	// Threads is each primproc's --threads; 0 leaves its default (all cores).
	Threads      int
	PrimProcArgs []string // extra primproc flags
	ExeMgrArgs   []string // extra exemgr flags
	// StartTimeout bounds each daemon's start (default 30 s).
	StartTimeout time.Duration
	// StopGrace is how long a daemon may take to stop after SIGTERM (default 10 s).
	StopGrace time.Duration
	Log       *slog.Logger
}

// Cluster is running primprocs and, once Serve was called, an exemgr per transport.
type Cluster struct {
	cfg       Config
	log       *slog.Logger
	primprocs []*proc
	endpoints []string // the primprocs' TCP link URLs
	exemgrs   map[string]*proc
	order     []string // the exemgrs' transports, in the order they started

	stopOnce sync.Once
	stopErr  error
}

// Start starts the primprocs and waits until each serves. On failure, whatever started is
// stopped again.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if len(cfg.DataDirs) == 0 {
		return nil, errors.New("cluster: no primproc data directories")
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = 10 * time.Second
	}
	if cfg.SocketDir == "" {
		cfg.SocketDir = cfg.RunDir
	}
	if st, err := os.Stat(cfg.RunDir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("cluster: run directory %q is not a directory", cfg.RunDir)
	}
	c := &Cluster{cfg: cfg, log: cfg.Log, exemgrs: map[string]*proc{}}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	ports, err := c.ports(len(cfg.DataDirs))
	if err != nil {
		return nil, err
	}
	for i, dir := range cfg.DataDirs {
		name := "primproc" + strconv.Itoa(i)
		tcp := "tcp://127.0.0.1:" + strconv.Itoa(ports[i])
		sock := filepath.Join(cfg.SocketDir, name+".sock")
		args := []string{"--data-dir", dir, "--listen", tcp, "--listen", "unix://" + sock, "--name", name}
		if cfg.Threads > 0 {
			args = append(args, "--threads", strconv.Itoa(cfg.Threads))
		}
		args = append(args, cfg.PrimProcArgs...)
		p, err := startProc(name, cfg.Binaries.PrimProc, args, filepath.Join(cfg.RunDir, name+".log"), "primproc: serving")
		if err != nil {
			c.Stop()
			return nil, err
		}
		p.files = []string{sock}
		c.primprocs = append(c.primprocs, p)
		c.endpoints = append(c.endpoints, tcp)
	}
	for _, p := range c.primprocs {
		if err := c.waitLog(ctx, p, "primproc: serving", 1); err != nil {
			c.Stop()
			return nil, err
		}
		c.log.Info("cluster: primproc serving", "name", p.name, "pid", p.pid())
	}
	return c, nil
}

// ports returns n loopback ports: BasePort, BasePort+1, … or free ones.
func (c *Cluster) ports(n int) ([]int, error) {
	out := make([]int, n)
	if c.cfg.BasePort > 0 {
		for i := range out {
			out[i] = c.cfg.BasePort + i
		}
		return out, nil
	}
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for i := range out {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("cluster: find a free port: %w", err)
		}
		lns = append(lns, l)
		out[i] = l.Addr().(*net.TCPAddr).Port
	}
	return out, nil
}

// waitLog waits until p has logged a line containing w n times.
func (c *Cluster) waitLog(ctx context.Context, p *proc, w string, n int) error {
	deadline := time.After(c.cfg.StartTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for p.count(w) < n {
		select {
		case <-p.exited:
			return p.startError(p.exitErr().Error())
		case <-deadline:
			return p.startError(fmt.Sprintf("not ready within %v (no %q in its log)", c.cfg.StartTimeout, w))
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// LinkEndpoints returns the primprocs' TCP link URLs, in order (for dbt3 load).
func (c *Cluster) LinkEndpoints() []string { return append([]string(nil), c.endpoints...) }

// Serve starts an exemgr for each transport ("tcp" or "unix": exemgr dials the TCP
// endpoint and, for unix, switches to the socket the primproc announces) that is not
// running yet, all over the same primprocs, and waits until each takes MySQL clients and
// has its links up; it returns their endpoints by transport. The primprocs keep running.
func (c *Cluster) Serve(ctx context.Context, transports []string) (map[string]dbt3.Endpoint, error) {
	out := map[string]dbt3.Endpoint{}
	for _, tr := range transports {
		if _, ok := c.exemgrs[tr]; !ok {
			if err := c.startExeMgr(ctx, tr); err != nil {
				return nil, err
			}
		}
		out[tr] = dbt3.Endpoint{Addr: c.MySQLSocket(tr), PIDs: c.PIDs(tr)}
	}
	return out, nil
}

// MySQLSocket is where the exemgr of transport takes MySQL clients.
func (c *Cluster) MySQLSocket(transport string) string {
	return filepath.Join(c.cfg.SocketDir, "exemgr-"+transport+".sock")
}

// startExeMgr starts the exemgr of transport and waits until it serves.
func (c *Cluster) startExeMgr(ctx context.Context, transport string) error {
	if err := c.Check(); err != nil {
		return err
	}
	sock := c.MySQLSocket(transport)
	args := []string{"--transport", transport, "--mysql-listen", "unix://" + sock, "--name", "exemgr-" + transport}
	for _, ep := range c.endpoints {
		args = append(args, "--primproc", ep)
	}
	args = append(args, c.cfg.ExeMgrArgs...)
	const linkUp, serving = "exemgr: primproc up", "exemgr: serving"
	p, err := startProc("exemgr-"+transport, c.cfg.Binaries.ExeMgr, args, filepath.Join(c.cfg.RunDir, "exemgr-"+transport+".log"), linkUp, serving)
	if err != nil {
		return err
	}
	p.files = []string{sock}
	c.exemgrs[transport] = p
	c.order = append(c.order, transport)
	// exemgr logs its ready line once it accepts on every listener; until then the socket
	// file may exist (bound) and yet refuse connections (not yet listening). The ping then
	// checks that it answers MySQL.
	if err := c.waitLog(ctx, p, serving, 1); err != nil {
		return err
	}
	if err := c.waitMySQL(ctx, p, sock); err != nil {
		return err
	}
	// The front end may answer before the links are up; the first query would then wait
	// for them inside its measurement. exemgr logs each link as it comes up.
	if err := c.waitLog(ctx, p, linkUp, len(c.endpoints)); err != nil {
		var se *StartError
		if !errors.As(err, &se) || p.exitErr() != nil {
			return err
		}
		c.log.Warn("cluster: exemgr did not log every link up; going on", "transport", transport, "want", len(c.endpoints), "seen", p.count(linkUp))
	}
	c.log.Info("cluster: exemgr ready", "transport", transport, "pid", p.pid(), "mysql", sock)
	return nil
}

// waitMySQL waits until exemgr answers a MySQL ping.
func (c *Cluster) waitMySQL(ctx context.Context, p *proc, sock string) error {
	deadline := time.Now().Add(c.cfg.StartTimeout)
	var lastErr error
	for time.Now().Before(deadline) {
		if err := p.exitErr(); err != nil {
			return p.startError(err.Error())
		}
		if _, err := os.Stat(sock); err == nil {
			dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			conn, err := dbt3.Dial(dctx, sock, "")
			cancel()
			if err == nil {
				conn.Close()
				return nil
			}
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.exited:
		case <-time.After(50 * time.Millisecond):
		}
	}
	reason := fmt.Sprintf("no MySQL answer on %s within %v", sock, c.cfg.StartTimeout)
	if lastErr != nil {
		reason += " (" + lastErr.Error() + ")"
	}
	return p.startError(reason)
}

// PIDs returns the pids by process name of the primprocs and, as "exemgr", of the
// exemgr of transport (if it runs).
func (c *Cluster) PIDs(transport string) map[string]int {
	out := map[string]int{}
	for _, p := range c.primprocs {
		out[p.name] = p.pid()
	}
	if p := c.exemgrs[transport]; p != nil {
		out["exemgr"] = p.pid()
	}
	return out
}

// RunDir is where the daemons' logs are.
func (c *Cluster) RunDir() string { return c.cfg.RunDir }

// Check returns a DiedError for the first daemon found to have exited.
func (c *Cluster) Check() error {
	procs := append([]*proc(nil), c.primprocs...)
	for _, tr := range c.order {
		procs = append(procs, c.exemgrs[tr])
	}
	for _, p := range procs {
		if err := p.exitErr(); err != nil {
			return &DiedError{Name: p.name, Err: err, Log: p.tail(), LogPath: p.logPath}
		}
	}
	return nil
}

// Stop stops the exemgrs, then the primprocs, and removes their socket files. It is safe to call
// more than once; later calls return the first's result.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		var errs []error
		for _, tr := range c.order {
			errs = append(errs, c.exemgrs[tr].stop(c.cfg.StopGrace))
		}
		var wg sync.WaitGroup
		perr := make([]error, len(c.primprocs))
		for i, p := range c.primprocs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				perr[i] = p.stop(c.cfg.StopGrace)
			}()
		}
		wg.Wait()
		c.stopErr = errors.Join(append(errs, perr...)...)
		c.log.Info("cluster: stopped", "err", c.stopErr)
	})
	return c.stopErr
}
