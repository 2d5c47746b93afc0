package main

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
	Mode      string  `json:"mode"`
	Transport string  `json:"transport"`
	Impl      string  `json:"impl"` // "link" or "raw"
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

type bench struct {
	opt      options
	chunkDur time.Duration // a sync or async chunk's measured time: --duration / --chunks
	warm     time.Duration // the current chunk's warm-up
	raw      *child
	tcpURL   string
	unixURL  string
	ctl      *ipc.Client // for stats requests
	msgBytes int64       // size of one synth batch message
	quiet    *slog.Logger
}

func (b *bench) serverUsage(impl string) (rusage.Usage, error) {
	if impl == "raw" {
		return b.raw.rusage()
	}
	// The primproc (ours or a running one): its daemon-level stats carry "rusage" (rusage.Usage.Map); only
	// that key is read, so the rest of its reply may change freely.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
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
	if impl == "raw" {
		if transport == "unix" {
			return b.raw.unix
		}
		return b.raw.tcp
	}
	if transport == "unix" {
		return b.unixURL
	}
	return b.tcpURL
}

// measure runs body between two usage snapshots of both processes.
func (b *bench) measure(t *trial, body func() error) error {
	s0, err := b.serverUsage(t.Impl)
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
	s1, err := b.serverUsage(t.Impl)
	if err != nil {
		return fmt.Errorf("server usage: %w", err)
	}
	t.Client = toUsage(c1.Sub(c0))
	t.Server = toUsage(s1.Sub(s0))
	return nil
}

func (b *bench) run(mode, transport, impl string, round int) (*trial, error) {
	t := &trial{Mode: mode, Transport: transport, Impl: impl, Round: round}
	var err error
	if impl == "link" {
		err = b.runLink(t)
	} else {
		err = b.runRaw(t)
	}
	return t, err
}

func (b *bench) newLinkClient(transport string) (*ipc.Client, error) {
	tr := ipc.TransportTCP
	if transport == "unix" {
		tr = ipc.TransportUnix
	}
	cl, err := ipc.NewClient(b.url(transport, "link"), ipc.ClientConfig{Transport: tr, ConnsPerPeer: b.opt.conns, Name: "ipcbench", Logger: b.quiet})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := cl.WaitUp(ctx); err != nil {
		cl.Close()
		return nil, err
	}
	// Wait for every connection of the pool, so the spread is measured over all of them.
	for i := 0; i < 100 && len(cl.Conns()) < b.opt.conns; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	return cl, nil
}

// callers runs n goroutines calling fn until the duration elapses; fn records latencies.
func callers(n int, d time.Duration, fn func(h *hist) error) (int64, *hist, error) {
	var stop atomic.Bool
	var wg sync.WaitGroup
	var ops atomic.Int64
	hs := make([]*hist, n)
	errs := make([]error, n)
	timer := time.AfterFunc(d, func() { stop.Store(true) })
	defer timer.Stop()
	for i := range n {
		hs[i] = &hist{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if err := fn(hs[i]); err != nil {
					errs[i] = err
					stop.Store(true)
					return
				}
				ops.Add(1)
			}
		}()
	}
	wg.Wait()
	total := &hist{}
	for i, h := range hs {
		total.merge(h)
		if errs[i] != nil {
			return 0, nil, errs[i]
		}
	}
	return ops.Load(), total, nil
}

func (b *bench) runLink(t *trial) error {
	cl, err := b.newLinkClient(t.Transport)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx := context.Background()
	var before []ipc.ConnStats
	var srvBefore ipc.LinkTotals
	snap := func() []ipc.ConnStats {
		srvBefore = b.serverLinkTotals()
		return cl.Stats()
	}
	switch t.Mode {
	case "sync":
		args := msgpackBin(make([]byte, b.opt.payload))
		call := func(h *hist) error {
			t0 := time.Now()
			_, err := cl.Call(ctx, b.opt.method, args)
			h.record(time.Since(t0))
			return err
		}
		if _, _, err := callers(b.opt.clients, b.warm, call); err != nil {
			return err
		}
		var h *hist
		before = snap()
		err = b.measure(t, func() error {
			var err error
			t.Ops, h, err = callers(b.opt.clients, b.chunkDur, call)
			return err
		})
		if err != nil {
			return err
		}
		t.setHist(h)
	case "async":
		args := msgpackBin(make([]byte, b.opt.payload))
		run := func(d time.Duration) (int64, *hist, error) {
			return linkPipelined(cl.Conns(), b.opt.method, b.opt.inflight, args, d)
		}
		if _, _, err := run(b.warm); err != nil {
			return err
		}
		var h *hist
		before = snap()
		err = b.measure(t, func() error {
			var err error
			t.Ops, h, err = run(b.chunkDur)
			return err
		})
		if err != nil {
			return err
		}
		t.setHist(h)
	case "stream":
		per := b.streamBatches()
		stream := func(batches int, h *hist) (int64, error) {
			a := b.opt.synth
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
		hs := make([]*hist, b.opt.streams)
		before = snap()
		err = b.measure(t, func() error {
			var wg sync.WaitGroup
			errs := make([]error, b.opt.streams)
			counts := make([]int64, b.opt.streams)
			for i := range b.opt.streams {
				hs[i] = &hist{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					counts[i], errs[i] = stream(per, hs[i])
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
		t.Rows = t.Ops * int64(b.opt.synth.Rows)
	}
	after := cl.Stats()
	srvAfter := b.serverLinkTotals()
	t.ServerReadSyscalls = srvAfter.ReadSyscalls - srvBefore.ReadSyscalls
	t.ServerWriteSyscalls = srvAfter.WriteSyscalls - srvBefore.WriteSyscalls
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
	}
	return nil
}

// serverLinkTotals returns primproc's link counters summed over all its connections (zero
// if they cannot be read).
func (b *bench) serverLinkTotals() ipc.LinkTotals {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := b.ctl.RemoteStats(ctx, ipc.StatsOptions{})
	if err != nil {
		return ipc.LinkTotals{}
	}
	return st.Totals
}

func (b *bench) streamBatches() int {
	total := int((b.opt.streamBytes/int64(b.opt.chunks) + b.msgBytes - 1) / b.msgBytes)
	return max(1, (total+b.opt.streams-1)/b.opt.streams)
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func msgpackBin(p []byte) []byte {
	out, _ := msgpack.Marshal(p)
	return out
}

func dialRaw(url string, mode byte) (net.Conn, error) {
	ep, err := ipc.ParseEndpoint(url)
	if err != nil {
		return nil, err
	}
	nc, err := ipc.Dial(context.Background(), ep)
	if err != nil {
		return nil, err
	}
	if _, err := nc.Write([]byte{mode}); err != nil {
		nc.Close()
		return nil, err
	}
	return nc, nil
}

func (b *bench) runRaw(t *trial) error {
	url := b.url(t.Transport, "raw")
	switch t.Mode {
	case "sync":
		conns := make([]net.Conn, b.opt.clients)
		readers := make([]*bufio.Reader, b.opt.clients)
		for i := range conns {
			nc, err := dialRaw(url, 'E')
			if err != nil {
				return err
			}
			defer nc.Close()
			conns[i], readers[i] = nc, bufio.NewReaderSize(nc, 64<<10)
		}
		msg := binary.LittleEndian.AppendUint32(nil, uint32(b.opt.payload))
		msg = append(msg, make([]byte, b.opt.payload)...)
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
			var stop atomic.Bool
			var wg sync.WaitGroup
			var ops atomic.Int64
			total := &hist{}
			var firstErr error
			var emu sync.Mutex
			timer := time.AfterFunc(d, func() { stop.Store(true) })
			defer timer.Stop()
			for range conns {
				s := take()
				wg.Add(1)
				go func() {
					defer wg.Done()
					h := &hist{}
					defer func() {
						emu.Lock()
						total.merge(h)
						emu.Unlock()
						mu.Lock()
						idle = append(idle, s)
						mu.Unlock()
					}()
					for !stop.Load() {
						t0 := time.Now()
						if _, err := s.nc.Write(msg); err != nil {
							emu.Lock()
							firstErr = err
							emu.Unlock()
							stop.Store(true)
							return
						}
						if _, err := io.ReadFull(s.r, s.buf); err != nil {
							emu.Lock()
							firstErr = err
							emu.Unlock()
							stop.Store(true)
							return
						}
						h.record(time.Since(t0))
						ops.Add(1)
					}
				}()
			}
			wg.Wait()
			return ops.Load(), total, firstErr
		}
		if _, _, err := run(b.warm); err != nil {
			return err
		}
		var h *hist
		err := b.measure(t, func() error {
			var err error
			t.Ops, h, err = run(b.chunkDur)
			return err
		})
		if err != nil {
			return err
		}
		t.setHist(h)
	case "async":
		run := func(d time.Duration) (int64, *hist, error) {
			return rawPipelined(url, b.opt.conns, b.opt.inflight, b.opt.payload, d)
		}
		if _, _, err := run(b.warm); err != nil {
			return err
		}
		var h *hist
		err := b.measure(t, func() error {
			var err error
			t.Ops, h, err = run(b.chunkDur)
			return err
		})
		if err != nil {
			return err
		}
		t.setHist(h)
	case "stream":
		per := b.streamBatches()
		if _, err := rawStream(url, b.opt.synth, 1, max(2, per/10), nil); err != nil {
			return err
		}
		// The link multiplexes --streams streams over --conns-per-peer connections; a plain
		// socket carries one stream at a time, so the same batches go over
		// min(streams, conns) sockets, each carrying its share of the streams back to back,
		// from as many distinct copies of the message as it carries streams.
		socks := min(b.opt.streams, b.opt.conns)
		hs := make([]*hist, socks)
		err := b.measure(t, func() error {
			var wg sync.WaitGroup
			errs := make([]error, socks)
			counts := make([]int64, socks)
			for i := range socks {
				share := b.opt.streams / socks
				if i < b.opt.streams%socks {
					share++
				}
				hs[i] = &hist{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					counts[i], errs[i] = rawStream(url, b.opt.synth, share, share*per, hs[i])
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
		t.Rows = t.Ops * int64(b.opt.synth.Rows)
	}
	return nil
}

// linkPipelined keeps inflight calls outstanding over the connections for d, the same way
// rawPipelined drives a plain socket: per connection a sender queues a call (Conn.Go) for
// every token it holds and writes them with one Flush; replies come back to a callback on
// the connection's reading goroutine, which returns the token.
func linkPipelined(conns []*ipc.Conn, method string, inflight int, args []byte, d time.Duration) (int64, *hist, error) {
	var stop atomic.Bool
	var ops atomic.Int64
	var wg sync.WaitGroup
	total := &hist{}
	var mu sync.Mutex
	var firstErr error
	setErr := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		stop.Store(true)
	}
	timer := time.AfterFunc(d, func() { stop.Store(true) })
	defer timer.Stop()
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
				setErr(err)
			} else {
				h.record(time.Since(t0))
				ops.Add(1)
			}
			tokens <- struct{}{}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				<-tokens
				now := time.Now()
				n := 0
			more:
				for {
					sent <- now
					if err := conn.Go(method, args, false, done); err != nil {
						setErr(err)
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
					setErr(err)
					return
				}
			}
			// Every call has been answered once all k tokens are back (a failed
			// connection answers its pending calls with the error).
			for range k {
				<-tokens
			}
			mu.Lock()
			total.merge(h)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return ops.Load(), total, firstErr
}

// rawPipelined keeps inflight requests outstanding over conns sockets for d: per socket a
// writer sends requests while it holds tokens (coalescing those it can send at once into
// one write) and a reader takes the in-order replies back.
func rawPipelined(url string, conns, inflight, payload int, d time.Duration) (int64, *hist, error) {
	var stop atomic.Bool
	var ops atomic.Int64
	var wg sync.WaitGroup
	total := &hist{}
	var mu sync.Mutex
	var firstErr error
	setErr := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		stop.Store(true)
	}
	timer := time.AfterFunc(d, func() { stop.Store(true) })
	defer timer.Stop()
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
		nc, err := dialRaw(url, 'E')
		if err != nil {
			return 0, nil, err
		}
		tokens := make(chan struct{}, k)
		for range k {
			tokens <- struct{}{}
		}
		sent := make(chan time.Time, k) // send times, in order
		wg.Add(2)
		go func() { // writer
			defer wg.Done()
			defer close(sent)
			buf := make([]byte, 0, k*len(msg))
			for !stop.Load() {
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
					setErr(err)
					return
				}
			}
		}()
		go func() { // reader
			defer wg.Done()
			defer nc.Close()
			h := &hist{}
			r := bufio.NewReaderSize(nc, 64<<10)
			reply := make([]byte, len(msg))
			for t0 := range sent {
				if _, err := io.ReadFull(r, reply); err != nil {
					if !stop.Load() {
						setErr(err)
					}
					break
				}
				h.record(time.Since(t0))
				ops.Add(1)
				tokens <- struct{}{}
			}
			mu.Lock()
			total.merge(h)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return ops.Load(), total, firstErr
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
func rawStream(url string, a link.SynthArgs, streams, batches int, h *hist) (int64, error) {
	nc, err := dialRaw(url, 'T')
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	a.Batches = batches
	req, _ := msgpack.Marshal(rawStreamRequest{Synth: a, Copies: streams})
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
