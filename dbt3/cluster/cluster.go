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
	"syscall"
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
	// MySQLTCP has exemgr take MySQL clients on a loopback TCP port too (picked free at
	// Start and kept across exemgr's restarts), besides its unix socket.
	MySQLTCP bool
	// StartTimeout bounds each daemon's start (default 30 s).
	StartTimeout time.Duration
	// Profiling starts every daemon with --debug-listen on a free loopback port, for
	// StartProfiles and StopProfiles.
	Profiling bool
	// StopGrace is how long a daemon may take to stop after SIGTERM (default 10 s).
	StopGrace time.Duration
	Log       *slog.Logger
}

// Cluster is running primprocs and, once Serve (or UseTransport) was called, an exemgr per
// transport. One goroutine drives it: its methods are not safe for concurrent use.
type Cluster struct {
	cfg       Config
	log       *slog.Logger
	primprocs []*proc
	primArgs  [][]string // each primproc's arguments, for a restart
	endpoints []string   // the primprocs' TCP link URLs
	exemgrs   map[string]*proc
	order     []string // the exemgrs' transports, in the order they started
	mysqlTCP  string   // "127.0.0.1:port" with Config.MySQLTCP, else ""; the first exemgr (order[0]) has it

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
	// The free ports are picked together, so that exemgr's cannot be a primproc's.
	free, err := freePorts(len(cfg.DataDirs) + 1)
	if err != nil {
		return nil, err
	}
	ports := free[:len(cfg.DataDirs)]
	if cfg.BasePort > 0 {
		for i := range ports {
			ports[i] = cfg.BasePort + i
		}
	}
	if cfg.MySQLTCP {
		c.mysqlTCP = "127.0.0.1:" + strconv.Itoa(free[len(cfg.DataDirs)])
	}
	for i, dir := range cfg.DataDirs {
		name := "primproc" + strconv.Itoa(i)
		tcp := "tcp://127.0.0.1:" + strconv.Itoa(ports[i])
		sock := filepath.Join(cfg.SocketDir, name+".sock")
		args := []string{"--data-dir", dir, "--listen", tcp, "--listen", "unix://" + sock, "--name", name}
		if cfg.Threads > 0 {
			args = append(args, "--threads", strconv.Itoa(cfg.Threads))
		}
		debug, err := c.debugArgs()
		if err != nil {
			c.Stop()
			return nil, err
		}
		args = append(append(args, debug...), cfg.PrimProcArgs...)
		p, err := startProc(name, cfg.Binaries.PrimProc, args, nil, filepath.Join(cfg.RunDir, name+".log"), "primproc: serving")
		if err != nil {
			c.Stop()
			return nil, err
		}
		p.debug = debugAddr(debug)
		p.files = []string{sock}
		c.primprocs = append(c.primprocs, p)
		c.primArgs = append(c.primArgs, args)
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

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	out := make([]int, n)
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

// Serve starts an exemgr for each transport ("tcp", "unix" or "shm": exemgr dials the TCP
// endpoint and, for unix and shm, switches to the socket the primproc announces, for shm
// then setting up the shared-memory rings over it) that is not
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
	listen := "unix://" + sock
	if c.mysqlTCP != "" && len(c.exemgrs) == 0 {
		listen += "," + c.mysqlTCP // the first exemgr of a set holds the one TCP address
	}
	args := []string{"--transport", transport, "--mysql-listen", listen, "--name", "exemgr-" + transport}
	for _, ep := range c.endpoints {
		args = append(args, "--primproc", ep)
	}
	debug, err := c.debugArgs()
	if err != nil {
		return err
	}
	args = append(append(args, debug...), c.cfg.ExeMgrArgs...)
	const linkUp, serving = "exemgr: primproc up", "exemgr: serving"
	p, err := startProc("exemgr-"+transport, c.cfg.Binaries.ExeMgr, args, nil, filepath.Join(c.cfg.RunDir, "exemgr-"+transport+".log"), linkUp, serving)
	if err != nil {
		return err
	}
	p.files = []string{sock}
	p.debug = debugAddr(debug)
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

// UseTransport stops every exemgr running and starts the one of transport alone (as
// Serve does), returning its MySQL socket: a fault injector works on one exemgr at a time.
func (c *Cluster) UseTransport(ctx context.Context, transport string) (string, error) {
	for _, tr := range c.order {
		if err := c.exemgrs[tr].stop(c.cfg.StopGrace); err != nil {
			c.log.Warn("cluster: exemgr stop", "transport", tr, "err", err)
		}
		delete(c.exemgrs, tr)
	}
	c.order = nil
	if err := c.startExeMgr(ctx, transport); err != nil {
		return "", err
	}
	return c.MySQLSocket(transport), nil
}

// Transport is the transport of the one running exemgr ("" with none or several).
func (c *Cluster) Transport() string {
	if len(c.order) != 1 {
		return ""
	}
	return c.order[0]
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

// MySQLAddr is where the one running exemgr (UseTransport) takes MySQL clients: its
// loopback TCP address for "tcp" ("" without Config.MySQLTCP), else its unix socket (for
// "unix" and for "shm", which has no port of its own).
func (c *Cluster) MySQLAddr(kind string) string {
	if kind == "tcp" {
		return c.mysqlTCP
	}
	if tr := c.Transport(); tr != "" {
		return c.MySQLSocket(tr)
	}
	return ""
}

// Primprocs is the number of primprocs.
func (c *Cluster) Primprocs() int { return len(c.primprocs) }

// PrimprocName is primproc i's name ("primproc0", …), as PIDs and Signal know it.
func (c *Cluster) PrimprocName(i int) string { return c.primprocs[i].name }

// UnixEndpoint is the unix socket primproc i listens on besides its TCP endpoint.
func (c *Cluster) UnixEndpoint(i int) string { return "unix://" + c.primprocs[i].files[0] }

// byName finds a running or exited daemon: "exemgr", "primproc0", ….
func (c *Cluster) byName(name string) (*proc, error) {
	if name == "exemgr" {
		if len(c.order) != 1 {
			return nil, fmt.Errorf("cluster: %d exemgrs run; name one by transport (exemgr-tcp, …)", len(c.order))
		}
		return c.exemgrs[c.order[0]], nil
	}
	for _, tr := range c.order {
		if p := c.exemgrs[tr]; p.name == name {
			return p, nil
		}
	}
	for _, p := range c.primprocs {
		if p.name == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("cluster: no daemon %q", name)
}

// LogPath is the file holding a daemon's log (all its lives: a restart appends).
func (c *Cluster) LogPath(name string) (string, error) {
	p, err := c.byName(name)
	if err != nil {
		return "", err
	}
	return p.logPath, nil
}

// Signal sends sig to the daemon's process alone (a fault injection: SIGSTOP, SIGCONT,
// SIGKILL). Check reports a daemon it killed as dead until it is restarted.
func (c *Cluster) Signal(name string, sig syscall.Signal) error {
	p, err := c.byName(name)
	if err != nil {
		return err
	}
	if err := p.exitErr(); err != nil {
		return fmt.Errorf("cluster: %s is not running (%v)", name, err)
	}
	if err := syscall.Kill(p.pid(), sig); err != nil {
		return fmt.Errorf("cluster: signal %v to %s: %w", sig, name, err)
	}
	return nil
}

// Kill kills the daemon with SIGKILL and waits, up to timeout, until it has exited.
func (c *Cluster) Kill(name string, timeout time.Duration) error {
	p, err := c.byName(name)
	if err != nil {
		return err
	}
	if p.exitErr() == nil {
		// A stopped process dies of SIGKILL too.
		if err := syscall.Kill(p.pid(), syscall.SIGKILL); err != nil {
			return fmt.Errorf("cluster: kill %s: %w", name, err)
		}
	}
	if err := c.WaitExit(name, timeout); err != nil {
		return fmt.Errorf("%w after SIGKILL", err)
	}
	return nil
}

// WaitExit waits, up to timeout, until the daemon has exited.
func (c *Cluster) WaitExit(name string, timeout time.Duration) error {
	p, err := c.byName(name)
	if err != nil {
		return err
	}
	select {
	case <-p.exited:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("cluster: %s (pid %d) has not exited within %v", name, p.pid(), timeout)
	}
}

// RestartPrimproc starts primproc i again, on the same data directory, endpoints and flags,
// and waits until it serves. Its previous process must have exited (Kill). bin, if set,
// replaces the primproc binary for this life (a build with test hooks), and env is added to
// its environment.
func (c *Cluster) RestartPrimproc(ctx context.Context, i int, bin string, env []string) error {
	old := c.primprocs[i]
	if old.exitErr() == nil {
		return fmt.Errorf("cluster: restart %s: it is still running", old.name)
	}
	old.stop(0) // removes its socket files; the process is gone
	if bin == "" {
		bin = c.cfg.Binaries.PrimProc
	}
	p, err := startProc(old.name, bin, c.primArgs[i], env, old.logPath, "primproc: serving")
	if err != nil {
		return err
	}
	p.files = old.files
	c.primprocs[i] = p
	if err := c.waitLog(ctx, p, "primproc: serving", 1); err != nil {
		return err
	}
	c.log.Info("cluster: primproc restarted", "name", p.name, "pid", p.pid(), "bin", bin)
	return nil
}

// Running reports whether the named daemon's process has not exited.
func (c *Cluster) Running(name string) bool {
	p, err := c.byName(name)
	return err == nil && p.exitErr() == nil
}
