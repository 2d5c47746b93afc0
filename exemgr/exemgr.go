// Package exemgr owns the execution manager daemon: its configuration, the pool of link
// clients it keeps to every primproc (one ipc.Client per peer, each with a few
// connections), peer health, the daemon's lifecycle, and the SQL engine behind the MySQL
// front end (exemgr/frontend), which runs as a service for the daemon's lifetime.
//
// The Engine plans each statement with package sql against the catalog the primprocs
// report (refreshed whenever a primproc's catalog version changes, which every statement
// checks as it starts) and the views exemgr keeps (durably in its data directory, when it has
// one: viewstore.go), cuts it into fragments with sql/physical, and runs them on every
// primproc over the link (linkRunner: build sides streamed up under
// flow control, outputs gathered, work cancelled with the statement). It records what each
// statement cost — its own and each primproc's CPU, the link's traffic per peer, the
// fragments' scan counters — for SHOW QUERY STATS, and answers ColumnStore's
// select calFlushCache(). It runs the refresh functions' INSERT, DELETE and LOAD DATA as
// distributed transactions over the primprocs, and gives every query one snapshot per
// primproc so that it sees each of them whole or not at all (dml.go).
package exemgr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/colinkdb/colink/internal/bufpool"
	"github.com/colinkdb/colink/ipc"
)

// DefaultPrimProc is the primproc a default exemgr connects to.
const DefaultPrimProc = "tcp://127.0.0.1:8620"

// Config configures an exemgr.
type Config struct {
	PrimProcs     []string      // primproc URLs; DefaultPrimProc if empty
	Transport     ipc.Transport // tcp, unix or auto; ipc.DefaultTransport if empty
	ConnsPerPeer  int           // link connections per primproc (default 2)
	AuthTokenFile string        // shared secret for TCP primprocs that demand one
	AllowUIDs     []int         // uids a primproc's unix socket may belong to besides ours
	Compression   string        // "", "lz4" or "zstd" on the link
	Limits        ipc.Limits
	// PoolIdle is how long the link's receive buffers may lie unused before they are let
	// go (0: the link's default).
	PoolIdle time.Duration
	Name     string
	Logger   *slog.Logger
}

// Service is something that runs inside the daemon until ctx is done, e.g. a front end. A
// service returning an error stops the daemon.
type Service func(ctx context.Context, em *ExeMgr) error

// ExeMgr is a running execution manager's link side.
type ExeMgr struct {
	cfg   Config
	log   *slog.Logger
	peers []*ipc.Client
	// linkPool holds every link connection's receive buffers; it ages them out itself.
	linkPool *bufpool.Pool

	mu   sync.Mutex
	down map[string]error // peers without a live connection, and why
}

// New validates cfg and starts connecting to every primproc in the background.
func New(cfg Config) (*ExeMgr, error) {
	if len(cfg.PrimProcs) == 0 {
		cfg.PrimProcs = []string{DefaultPrimProc}
	}
	if cfg.Transport == "" {
		cfg.Transport = ipc.DefaultTransport
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Name == "" {
		host, _ := os.Hostname()
		cfg.Name = fmt.Sprintf("exemgr@%s pid %d", host, os.Getpid())
	}
	var token []byte
	if cfg.AuthTokenFile != "" {
		var err error
		if token, err = ipc.ReadTokenFile(cfg.AuthTokenFile); err != nil {
			return nil, err
		}
	}
	em := &ExeMgr{cfg: cfg, log: cfg.Logger, down: map[string]error{}}
	// One receive pool for every connection: what one primproc's results freed serves
	// another's.
	idle := ipc.DefaultPoolIdleTime
	if cfg.PoolIdle > 0 {
		idle = cfg.PoolIdle
	}
	pool := bufpool.New(bufpool.Options{Retain: ipc.DefaultPoolIdle, IdleTime: idle})
	em.linkPool = pool
	for _, p := range cfg.PrimProcs {
		em.down[p] = errors.New("not connected yet")
		cl, err := ipc.NewClient(p, ipc.ClientConfig{
			Transport: cfg.Transport, ConnsPerPeer: cfg.ConnsPerPeer, Name: cfg.Name, AuthToken: token,
			AllowUIDs: cfg.AllowUIDs, Compression: cfg.Compression, Limits: cfg.Limits, Logger: cfg.Logger,
			OnState: em.onState, Pool: pool,
		})
		if err != nil {
			em.Close()
			return nil, err
		}
		em.peers = append(em.peers, cl)
	}
	return em, nil
}

// ShmBytes is the most shared memory exemgr's link clients map at once (0 unless the
// transport asks for it): two segments per connection to each primproc.
func (em *ExeMgr) ShmBytes() int64 {
	c := ipc.ClientConfig{Transport: em.cfg.Transport, ConnsPerPeer: em.cfg.ConnsPerPeer, Limits: em.cfg.Limits}
	return c.ShmBytes(len(em.cfg.PrimProcs))
}

func (em *ExeMgr) onState(ev ipc.PeerEvent) {
	em.mu.Lock()
	if ev.Up {
		delete(em.down, ev.Peer)
	} else {
		em.down[ev.Peer] = ev.Err
	}
	em.mu.Unlock()
	if ev.Up {
		em.log.Info("exemgr: primproc up", "primproc", ev.Peer, "transport", ev.Transport, "endpoint", ev.Endpoint)
	} else {
		em.log.Warn("exemgr: primproc down", "primproc", ev.Peer, "err", ev.Err)
	}
}

// Peers returns one link client per primproc, in configuration order.
func (em *ExeMgr) Peers() []*ipc.Client { return em.peers }

// Down returns the primprocs without a live connection and why.
func (em *ExeMgr) Down() map[string]error {
	em.mu.Lock()
	defer em.mu.Unlock()
	out := make(map[string]error, len(em.down))
	for k, v := range em.down {
		out[k] = v
	}
	return out
}

// Run runs the services until ctx is done or one of them fails, then closes the link.
func (em *ExeMgr) Run(ctx context.Context, services ...Service) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	em.log.Info("exemgr: started", "primprocs", em.cfg.PrimProcs, "transport", em.cfg.Transport, "conns_per_peer", em.cfg.ConnsPerPeer)
	var wg sync.WaitGroup
	for _, svc := range services {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := svc(ctx, em); err != nil && ctx.Err() == nil {
				cancel(err)
			}
		}()
	}
	<-ctx.Done()
	wg.Wait()
	em.log.Info("exemgr: shutting down")
	em.Close()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// Close closes every link client; open streams fail.
func (em *ExeMgr) Close() {
	for _, p := range em.peers {
		p.Close()
	}
}
