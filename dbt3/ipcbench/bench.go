package ipcbench

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/internal/rusage"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
)

// usage is one process's CPU and context switches over a trial.
type usage struct {
	UserUS int64 `json:"user_us"`
	SysUS  int64 `json:"sys_us"`
	Nvcsw  int64 `json:"nvcsw"`
	Nivcsw int64 `json:"nivcsw"`
}

func toUsage(u rusage.Usage) usage {
	return usage{UserUS: u.User.Microseconds(), SysUS: u.Sys.Microseconds(), Nvcsw: u.Voluntary, Nivcsw: u.Involuntary}
}

// trial is one measured run of one mode over one transport by one implementation.
type trial struct {
	Mode      string `json:"mode"`
	Transport string `json:"transport"`
	Impl      string `json:"impl"` // "link", "raw", "flight" or "memcpy"
	// WriteSize is the raw stream server's write size in bytes (0: a message a write).
	WriteSize int     `json:"write_size,omitempty"`
	Round     int     `json:"round"`
	WallS     float64 `json:"wall_s"`
	Ops       int64   `json:"ops"`   // calls (sync, async) or batches (stream)
	Bytes     int64   `json:"bytes"` // stream: Arrow IPC message bytes received
	Rows      int64   `json:"rows"`
	Client    usage   `json:"client"`
	Server    usage   `json:"server"`
	P50US     float64 `json:"p50_us"` // per call; stream: between batches
	P99US     float64 `json:"p99_us"`
	// Link only: the client connections' syscalls and frames, and streams per connection.
	ReadSyscalls  uint64 `json:"read_syscalls,omitempty"`
	WriteSyscalls uint64 `json:"write_syscalls,omitempty"`
	// Link only: primproc's read(2) and writev(2) calls over all its connections (the
	// stats requests that read them add a few).
	ServerReadSyscalls  uint64   `json:"server_read_syscalls,omitempty"`
	ServerWriteSyscalls uint64   `json:"server_write_syscalls,omitempty"`
	FramesOut           uint64   `json:"frames_out,omitempty"`
	WriteRounds         uint64   `json:"write_rounds,omitempty"`
	CreditStallUS       int64    `json:"credit_stall_us,omitempty"`
	StreamsPer          []uint64 `json:"streams_per_conn,omitempty"`
	// Link only: the bytes that crossed the client's sockets (both ways), and over shm the
	// batch bodies that crossed the rings (both ways), their RBATCH frames, and the batches
	// either end sent on the socket for want of ring space, and the socket writes that
	// carried RBATCH frames (the wake-ups either end sent: a batch queued while the peer
	// was being woken rides the same write, and needs none of its own).
	SocketBytes   uint64 `json:"socket_bytes,omitempty"`
	RingBytes     uint64 `json:"ring_bytes,omitempty"`
	RingBatches   uint64 `json:"ring_batches,omitempty"`
	RingFallbacks uint64 `json:"ring_fallbacks,omitempty"`
	RingWakeups   uint64 `json:"ring_wakeups,omitempty"`

	h *hist // latencies, merged over chunks
}

func (t *trial) setHist(h *hist) {
	t.h = h
	t.P50US, t.P99US = us(h.quantile(0.5)), us(h.quantile(0.99))
}

// add merges chunk u (the same mode, transport and implementation) into t.
func (t *trial) add(u *trial) {
	t.WallS += u.WallS
	t.Ops += u.Ops
	t.Bytes += u.Bytes
	t.Rows += u.Rows
	for _, p := range [][2]*usage{{&t.Client, &u.Client}, {&t.Server, &u.Server}} {
		p[0].UserUS += p[1].UserUS
		p[0].SysUS += p[1].SysUS
		p[0].Nvcsw += p[1].Nvcsw
		p[0].Nivcsw += p[1].Nivcsw
	}
	t.ReadSyscalls += u.ReadSyscalls
	t.WriteSyscalls += u.WriteSyscalls
	t.ServerReadSyscalls += u.ServerReadSyscalls
	t.ServerWriteSyscalls += u.ServerWriteSyscalls
	t.FramesOut += u.FramesOut
	t.WriteRounds += u.WriteRounds
	t.CreditStallUS += u.CreditStallUS
	t.SocketBytes += u.SocketBytes
	t.RingBytes += u.RingBytes
	t.RingBatches += u.RingBatches
	t.RingFallbacks += u.RingFallbacks
	t.RingWakeups += u.RingWakeups
	for i, n := range u.StreamsPer {
		if i < len(t.StreamsPer) {
			t.StreamsPer[i] += n
		} else {
			t.StreamsPer = append(t.StreamsPer, n)
		}
	}
	if u.h != nil {
		if t.h == nil {
			t.h = &hist{}
		}
		t.h.merge(u.h)
		t.setHist(t.h)
	}
}

// rate is the trial's headline: req/s, or GB/s for stream.
func (t *trial) rate() float64 {
	if t.Mode == "stream" {
		return float64(t.Bytes) / t.WallS / 1e9
	}
	return float64(t.Ops) / t.WallS
}

// bench is one Run's state: its settings, the servers it measures and the client it asks
// for their statistics.
type bench struct {
	cfg      Config
	chunkDur time.Duration // a sync or async chunk's measured time: Duration / Chunks
	warm     time.Duration // the current chunk's warm-up
	raw      *child        // the raw server (Config.Raw)
	flight   *child        // the Flight server (Config.flightRuns)
	tcpURL   string
	unixURL  string
	ctl      *ipc.Client // for stats requests
	msgBytes int64       // size of one synth batch message
	quiet    *slog.Logger
}

func (b *bench) serverUsage(ctx context.Context, impl string) (rusage.Usage, error) {
	switch impl {
	case "raw":
		return b.raw.rusage()
	case "flight":
		return b.flight.rusage()
	}
	// The primproc (ours or a running one): its daemon-level stats carry "rusage" (rusage.Usage.Map); only
	// that key is read, so the rest of its reply may change freely.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	end, err := b.ctl.Call(ctx, "stats", nil)
	if err != nil {
		return rusage.Usage{}, err
	}
	var rep struct {
		Rusage map[string]int64 `msgpack:"rusage"`
	}
	if err := msgpack.Unmarshal(end, &rep); err != nil {
		return rusage.Usage{}, err
	}
	if rep.Rusage == nil {
		return rusage.Usage{}, fmt.Errorf("primproc's stats reply has no rusage")
	}
	return rusage.FromMap(rep.Rusage), nil
}

func (b *bench) url(transport, impl string) string {
	if impl == "raw" || impl == "flight" { // a child of ours
		c := b.raw
		if impl == "flight" {
			c = b.flight
		}
		if transport == "unix" {
			return c.unix
		}
		return c.tcp
	}
	if transport == "unix" || transport == "shm" {
		return b.unixURL
	}
	return b.tcpURL
}

// measure runs body between two usage snapshots of both processes.
func (b *bench) measure(ctx context.Context, t *trial, body func() error) error {
	s0, err := b.serverUsage(ctx, t.Impl)
	if err != nil {
		return fmt.Errorf("server usage: %w", err)
	}
	c0, _ := rusage.Self()
	start := time.Now()
	if err := body(); err != nil {
		return err
	}
	t.WallS = time.Since(start).Seconds()
	c1, _ := rusage.Self()
	s1, err := b.serverUsage(ctx, t.Impl)
	if err != nil {
		return fmt.Errorf("server usage: %w", err)
	}
	t.Client = toUsage(c1.Sub(c0))
	t.Server = toUsage(s1.Sub(s0))
	return nil
}

// measureCalls runs a sync or async chunk: run for the warm-up, then before (if set), then
// run measured for the chunk's duration; t gets the calls and their latencies.
func (b *bench) measureCalls(ctx context.Context, t *trial, run func(d time.Duration) (int64, *hist, error), before func()) error {
	if _, _, err := run(b.warm); err != nil {
		return err
	}
	if before != nil {
		before()
	}
	var h *hist
	err := b.measure(ctx, t, func() error {
		var err error
		t.Ops, h, err = run(b.chunkDur)
		return err
	})
	if err != nil {
		return err
	}
	t.setHist(h)
	return nil
}

// measureStreams runs n streams at once, measured together (stream i records its batches'
// arrivals in h and returns how many it received); t gets the batches, their bytes and rows,
// and the arrivals' latencies.
func (b *bench) measureStreams(ctx context.Context, t *trial, n int, stream func(i int, h *hist) (int64, error)) error {
	hs := make([]*hist, n)
	err := b.measure(ctx, t, func() error {
		var wg sync.WaitGroup
		errs := make([]error, n)
		counts := make([]int64, n)
		for i := range n {
			hs[i] = &hist{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				counts[i], errs[i] = stream(i, hs[i])
			}()
		}
		wg.Wait()
		for i := range errs {
			if errs[i] != nil {
				return errs[i]
			}
			t.Ops += counts[i]
		}
		return nil
	})
	if err != nil {
		return err
	}
	h := &hist{}
	for _, x := range hs {
		h.merge(x)
	}
	t.setHist(h)
	t.Bytes = t.Ops * b.msgBytes
	t.Rows = t.Ops * int64(b.cfg.Synth.Rows)
	return nil
}

// runMemcpy times the memcpy baseline of a stream trial (Config.Memcpy): the trial's
// bytes, message by message, copied by this goroutine from msg into one recycled buffer.
func (b *bench) runMemcpy(msg []byte, round int) *trial {
	t := &trial{Mode: "stream", Transport: memcpyTransport, Impl: "memcpy", Round: round}
	n := b.streamBatches() * b.cfg.Streams * b.cfg.Chunks
	dst := make([]byte, len(msg))
	copy(dst, msg) // fault the buffer in, unmeasured
	h := &hist{}
	c0, _ := rusage.Self()
	start := time.Now()
	last := start
	for range n {
		copy(dst, msg)
		now := time.Now()
		h.record(now.Sub(last))
		last = now
	}
	t.WallS = time.Since(start).Seconds()
	c1, _ := rusage.Self()
	t.Client = toUsage(c1.Sub(c0))
	t.Ops, t.Bytes, t.Rows = int64(n), int64(n)*int64(len(msg)), int64(n)*int64(b.cfg.Synth.Rows)
	t.setHist(h)
	return t
}

// memcpyTransport is the memcpy baseline's trials' transport: none.
const memcpyTransport = "-"

func (b *bench) run(ctx context.Context, mode, transport string, impl implRun, round int) (*trial, error) {
	t := &trial{Mode: mode, Transport: transport, Impl: impl.impl, WriteSize: impl.writeSize, Round: round}
	var err error
	switch impl.impl {
	case "link":
		err = b.runLink(ctx, t)
	case "flight":
		err = b.runFlight(ctx, t)
	default:
		err = b.runRaw(ctx, t)
	}
	return t, err
}

func (b *bench) newLinkClient(ctx context.Context, transport string) (*ipc.Client, error) {
	tr, err := ipc.ParseTransport(transport)
	if err != nil {
		return nil, err
	}
	cl, err := ipc.NewClient(b.url(transport, "link"), ipc.ClientConfig{Transport: tr, ConnsPerPeer: b.cfg.ConnsPerPeer, Name: "ipcbench", Logger: b.quiet,
		Limits: ipc.Limits{StreamWindow: b.cfg.StreamWindow}})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := cl.WaitUp(ctx); err != nil {
		cl.Close()
		return nil, err
	}
	// Wait for every connection of the pool, so the spread is measured over all of them.
	for i := 0; i < 100 && len(cl.Conns()) < b.cfg.ConnsPerPeer; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	// A peer without shared memory would give shm the plain unix socket: not what the
	// trial is for.
	for _, s := range cl.Stats() {
		if tr == ipc.TransportShm && s.Transport != "shm" {
			cl.Close()
			return nil, fmt.Errorf("transport shm: connection %d runs over %s (the peer offers no shared memory?)", s.ID, s.Transport)
		}
	}
	return cl, nil
}

// timed is the shared state of a run that lasts d: the stop flag (set when d has passed, or
// at the first error), the operations done, the first error, and the latencies merged from
// every goroutine of the run.
type timed struct {
	stop  atomic.Bool
	ops   atomic.Int64
	wg    sync.WaitGroup
	mu    sync.Mutex
	total *hist
	err   error
	timer *time.Timer
}

func startTimed(d time.Duration) *timed {
	r := &timed{total: &hist{}}
	r.timer = time.AfterFunc(d, func() { r.stop.Store(true) })
	return r
}

// fail keeps err if it is the run's first and stops the run.
func (r *timed) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
	r.stop.Store(true)
}

// merge adds one goroutine's latencies to the run's.
func (r *timed) merge(h *hist) {
	r.mu.Lock()
	r.total.merge(h)
	r.mu.Unlock()
}

// wait waits for the run's goroutines and returns its operations, latencies and first error.
func (r *timed) wait() (int64, *hist, error) {
	r.wg.Wait()
	r.timer.Stop()
	return r.ops.Load(), r.total, r.err
}

// callers runs n goroutines calling fn until the duration elapses; fn records latencies.
func callers(n int, d time.Duration, fn func(h *hist) error) (int64, *hist, error) {
	r := startTimed(d)
	for range n {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			h := &hist{}
			defer r.merge(h)
			for !r.stop.Load() {
				if err := fn(h); err != nil {
					r.fail(err)
					return
				}
				r.ops.Add(1)
			}
		}()
	}
	return r.wait()
}

func (b *bench) runLink(ctx context.Context, t *trial) error {
	cl, err := b.newLinkClient(ctx, t.Transport)
	if err != nil {
		return err
	}
	defer cl.Close()
	var before []ipc.ConnStats
	var srvBefore ipc.LinkTotals
	snap := func() []ipc.ConnStats {
		srvBefore = b.serverLinkTotals(ctx)
		return cl.Stats()
	}
	switch t.Mode {
	case "sync":
		args := msgpackBin(make([]byte, b.cfg.Payload))
		call := func(h *hist) error {
			t0 := time.Now()
			_, err := cl.Call(ctx, b.cfg.Method, args)
			h.record(time.Since(t0))
			return err
		}
		run := func(d time.Duration) (int64, *hist, error) { return callers(b.cfg.Clients, d, call) }
		if err := b.measureCalls(ctx, t, run, func() { before = snap() }); err != nil {
			return err
		}
	case "async":
		args := msgpackBin(make([]byte, b.cfg.Payload))
		run := func(d time.Duration) (int64, *hist, error) {
			return linkPipelined(cl.Conns(), b.cfg.Method, b.cfg.Inflight, args, d)
		}
		if err := b.measureCalls(ctx, t, run, func() { before = snap() }); err != nil {
			return err
		}
	case "stream":
		per := b.streamBatches()
		stream := func(batches int, h *hist) (int64, error) {
			a := b.cfg.Synth
			a.Batches = batches
			raw, _ := msgpack.Marshal(a)
			st, err := cl.Open(ctx, "synth", raw, true)
			if err != nil {
				return 0, err
			}
			defer st.Close()
			var n int64
			last := time.Now()
			for {
				rec, err := st.Recv()
				if err == io.EOF {
					return n, nil
				}
				if err != nil {
					return n, err
				}
				n++
				now := time.Now()
				if h != nil {
					h.record(now.Sub(last))
				}
				last = now
				rec.Release()
			}
		}
		if _, err := stream(max(2, per/10), nil); err != nil { // warm the pools
			return err
		}
		before = snap()
		err := b.measureStreams(ctx, t, b.cfg.Streams, func(_ int, h *hist) (int64, error) { return stream(per, h) })
		if err != nil {
			return err
		}
	}
	after := cl.Stats()
	srvAfter := b.serverLinkTotals(ctx)
	t.ServerReadSyscalls = srvAfter.ReadSyscalls - srvBefore.ReadSyscalls
	t.ServerWriteSyscalls = srvAfter.WriteSyscalls - srvBefore.WriteSyscalls
	t.RingFallbacks = srvAfter.RingFallbacks - srvBefore.RingFallbacks
	t.RingWakeups = srvAfter.RingWakeups - srvBefore.RingWakeups
	byID := map[uint64]ipc.ConnStats{}
	for _, s := range before {
		byID[s.ID] = s
	}
	for _, s := range after {
		p := byID[s.ID]
		t.ReadSyscalls += s.ReadSyscalls - p.ReadSyscalls
		t.WriteSyscalls += s.WriteSyscalls - p.WriteSyscalls
		t.FramesOut += s.FramesOut - p.FramesOut
		t.WriteRounds += s.WriteRounds - p.WriteRounds
		t.CreditStallUS += (s.CreditStall - p.CreditStall).Microseconds()
		t.StreamsPer = append(t.StreamsPer, s.StreamsOpened-p.StreamsOpened)
		t.SocketBytes += s.SocketBytesIn + s.SocketBytesOut - p.SocketBytesIn - p.SocketBytesOut
		t.RingBytes += s.RingBytesIn + s.RingBytesOut - p.RingBytesIn - p.RingBytesOut
		t.RingBatches += s.RingBatchesIn + s.RingBatchesOut - p.RingBatchesIn - p.RingBatchesOut
		t.RingFallbacks += s.RingFallbacks - p.RingFallbacks
		t.RingWakeups += s.RingWakeups - p.RingWakeups
	}
	return nil
}

// serverLinkTotals returns primproc's link counters summed over all its connections (zero
// if they cannot be read).
func (b *bench) serverLinkTotals(ctx context.Context) ipc.LinkTotals {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := b.ctl.RemoteStats(ctx, ipc.StatsOptions{})
	if err != nil {
		return ipc.LinkTotals{}
	}
	return st.Totals
}

func (b *bench) streamBatches() int {
	total := int((b.cfg.StreamBytes/int64(b.cfg.Chunks) + b.msgBytes - 1) / b.msgBytes)
	return max(1, (total+b.cfg.Streams-1)/b.cfg.Streams)
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func msgpackBin(p []byte) []byte {
	out, _ := msgpack.Marshal(p)
	return out
}

func dialRaw(ctx context.Context, url string, mode byte) (net.Conn, error) {
	ep, err := ipc.ParseEndpoint(url)
	if err != nil {
		return nil, err
	}
	nc, err := ipc.Dial(ctx, ep)
	if err != nil {
		return nil, err
	}
	if _, err := nc.Write([]byte{mode}); err != nil {
		nc.Close()
		return nil, err
	}
	return nc, nil
}

func (b *bench) runRaw(ctx context.Context, t *trial) error {
	url := b.url(t.Transport, "raw")
	switch t.Mode {
	case "sync":
		conns := make([]net.Conn, b.cfg.Clients)
		readers := make([]*bufio.Reader, b.cfg.Clients)
		for i := range conns {
			nc, err := dialRaw(ctx, url, 'E')
			if err != nil {
				return err
			}
			defer nc.Close()
			conns[i], readers[i] = nc, bufio.NewReaderSize(nc, 64<<10)
		}
		msg := binary.LittleEndian.AppendUint32(nil, uint32(b.cfg.Payload))
		msg = append(msg, make([]byte, b.cfg.Payload)...)
		type state struct {
			nc  net.Conn
			r   *bufio.Reader
			buf []byte
		}
		var mu sync.Mutex
		idle := make([]*state, 0, len(conns))
		for i := range conns {
			idle = append(idle, &state{nc: conns[i], r: readers[i], buf: make([]byte, len(msg))})
		}
		take := func() *state { // each caller goroutine owns one socket for the whole run
			mu.Lock()
			defer mu.Unlock()
			s := idle[len(idle)-1]
			idle = idle[:len(idle)-1]
			return s
		}
		run := func(d time.Duration) (int64, *hist, error) {
			r := startTimed(d)
			for range conns {
				s := take()
				r.wg.Add(1)
				go func() {
					defer r.wg.Done()
					h := &hist{}
					defer func() {
						r.merge(h)
						mu.Lock()
						idle = append(idle, s)
						mu.Unlock()
					}()
					for !r.stop.Load() {
						t0 := time.Now()
						if _, err := s.nc.Write(msg); err != nil {
							r.fail(err)
							return
						}
						if _, err := io.ReadFull(s.r, s.buf); err != nil {
							r.fail(err)
							return
						}
						h.record(time.Since(t0))
						r.ops.Add(1)
					}
				}()
			}
			return r.wait()
		}
		if err := b.measureCalls(ctx, t, run, nil); err != nil {
			return err
		}
	case "async":
		run := func(d time.Duration) (int64, *hist, error) {
			return rawPipelined(ctx, url, b.cfg.ConnsPerPeer, b.cfg.Inflight, b.cfg.Payload, d)
		}
		if err := b.measureCalls(ctx, t, run, nil); err != nil {
			return err
		}
	case "stream":
		per := b.streamBatches()
		if _, err := rawStream(ctx, url, b.cfg.Synth, t.WriteSize, 1, max(2, per/10), nil); err != nil {
			return err
		}
		// The link multiplexes --streams streams over --conns-per-peer connections; a plain
		// socket carries one stream at a time, so the same batches go over
		// min(streams, conns) sockets, each carrying its share of the streams back to back,
		// from as many distinct copies of the message as it carries streams.
		socks := min(b.cfg.Streams, b.cfg.ConnsPerPeer)
		return b.measureStreams(ctx, t, socks, func(i int, h *hist) (int64, error) {
			share := b.cfg.Streams / socks
			if i < b.cfg.Streams%socks {
				share++
			}
			return rawStream(ctx, url, b.cfg.Synth, t.WriteSize, share, share*per, h)
		})
	}
	return nil
}

// linkPipelined keeps inflight calls outstanding over the connections for d, the same way
// rawPipelined drives a plain socket: per connection a sender queues a call (Conn.Go) for
// every token it holds and writes them with one Flush; replies come back to a callback on
// the connection's reading goroutine, which returns the token.
func linkPipelined(conns []*ipc.Conn, method string, inflight int, args []byte, d time.Duration) (int64, *hist, error) {
	r := startTimed(d)
	for c, conn := range conns {
		k := inflight / len(conns)
		if c < inflight%len(conns) {
			k++
		}
		if k == 0 {
			continue
		}
		tokens := make(chan struct{}, k)
		for range k {
			tokens <- struct{}{}
		}
		sent := make(chan time.Time, k)
		h := &hist{}
		done := func(end []byte, err error) {
			t0 := <-sent
			if err != nil {
				r.fail(err)
			} else {
				h.record(time.Since(t0))
				r.ops.Add(1)
			}
			tokens <- struct{}{}
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for !r.stop.Load() {
				<-tokens
				now := time.Now()
				n := 0
			more:
				for {
					sent <- now
					if err := conn.Go(method, args, false, done); err != nil {
						r.fail(err)
						return
					}
					n++
					select {
					case <-tokens:
					default:
						break more
					}
				}
				if err := conn.Flush(); err != nil {
					r.fail(err)
					return
				}
			}
			// Every call has been answered once all k tokens are back (a failed
			// connection answers its pending calls with the error).
			for range k {
				<-tokens
			}
			r.merge(h)
		}()
	}
	return r.wait()
}

// rawPipelined keeps inflight requests outstanding over conns sockets for d: per socket a
// writer sends requests while it holds tokens (coalescing those it can send at once into
// one write) and a reader takes the in-order replies back.
func rawPipelined(ctx context.Context, url string, conns, inflight, payload int, d time.Duration) (int64, *hist, error) {
	r := startTimed(d)
	msg := binary.LittleEndian.AppendUint32(nil, uint32(payload))
	msg = append(msg, make([]byte, payload)...)
	for c := range conns {
		k := inflight / conns
		if c < inflight%conns {
			k++
		}
		if k == 0 {
			continue
		}
		nc, err := dialRaw(ctx, url, 'E')
		if err != nil {
			r.fail(err) // stops the sockets already running
			return r.wait()
		}
		tokens := make(chan struct{}, k)
		for range k {
			tokens <- struct{}{}
		}
		sent := make(chan time.Time, k) // send times, in order
		r.wg.Add(2)
		go func() { // writer
			defer r.wg.Done()
			defer close(sent)
			buf := make([]byte, 0, k*len(msg))
			for !r.stop.Load() {
				<-tokens
				buf = append(buf[:0], msg...)
				now := time.Now()
				sent <- now
			more:
				for {
					select {
					case <-tokens:
						buf = append(buf, msg...)
						sent <- now
					default:
						break more
					}
				}
				if _, err := nc.Write(buf); err != nil {
					r.fail(err)
					return
				}
			}
		}()
		go func() { // reader
			defer r.wg.Done()
			defer nc.Close()
			h := &hist{}
			br := bufio.NewReaderSize(nc, 64<<10)
			reply := make([]byte, len(msg))
			for t0 := range sent {
				if _, err := io.ReadFull(br, reply); err != nil {
					if !r.stop.Load() {
						r.fail(err)
					}
					break
				}
				h.record(time.Since(t0))
				r.ops.Add(1)
				tokens <- struct{}{}
			}
			r.merge(h)
		}()
	}
	return r.wait()
}

// rawStreamBuffers is how many messages the raw stream reader may hold ahead of its
// consumer: about the link's default window (16 MiB) of the default 5 MB batches.
const rawStreamBuffers = 4

// rawStream asks the raw server for batches synth messages on one socket and receives them
// the way a consumer of the link does: a reader goroutine reads each [u64 length][message]
// into a buffer taken from a small recycled set (so it reads ahead while the consumer works,
// as the link's background reader does) and hands it over; the consumer (this goroutine)
// checks the message's framing, records its arrival and gives the buffer back. The bytes land
// whole in buffers a consumer could decode in place, as the link's do.
func rawStream(ctx context.Context, url string, a link.SynthArgs, writeSize, streams, batches int, h *hist) (int64, error) {
	nc, err := dialRaw(ctx, url, 'T')
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	a.Batches = batches
	req, _ := msgpack.Marshal(rawStreamRequest{Synth: a, Copies: streams, WriteSize: writeSize})
	if _, err := nc.Write(append(binary.LittleEndian.AppendUint32(nil, uint32(len(req))), req...)); err != nil {
		return 0, err
	}
	free := make(chan []byte, rawStreamBuffers)
	for range rawStreamBuffers {
		free <- nil
	}
	full := make(chan []byte, rawStreamBuffers)
	rerr := make(chan error, 1)
	go func() {
		defer close(full)
		var hdr [8]byte
		for {
			if _, err := io.ReadFull(nc, hdr[:]); err != nil {
				rerr <- err
				return
			}
			size := binary.LittleEndian.Uint64(hdr[:])
			if size == 0 {
				rerr <- nil
				return
			}
			buf := <-free
			if uint64(cap(buf)) < size {
				buf = make([]byte, size)
			}
			buf = buf[:size]
			if _, err := io.ReadFull(nc, buf); err != nil {
				rerr <- err
				return
			}
			full <- buf
		}
	}()
	var n int64
	last := time.Now()
	for buf := range full {
		if len(buf) < 8 || binary.LittleEndian.Uint32(buf) != 0xFFFFFFFF {
			nc.Close()
			go func() { // let the reader finish
				for range full {
				}
			}()
			return n, fmt.Errorf("raw stream: message %d is not an Arrow message", n)
		}
		n++
		now := time.Now()
		if h != nil {
			h.record(now.Sub(last))
		}
		last = now
		free <- buf
	}
	return n, <-rerr
}
