package ipc

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// MethodStats is the link's built-in stats request: every Server answers it, with its
// ServerStats as the END payload (see PROTOCOL.md, "Reserved methods"). Its args are an
// optional msgpack map {"streams": bool}: include each open stream's counters (default
// true).
const MethodStats = "ipc.stats"

// MethodEcho is the link's built-in echo: a unary method every Server answers with END
// {"echo": args}, inline and without allocating. It checks that a peer is up and serves as
// the benchmark call that costs nothing beyond the link.
const MethodEcho = "ipc.echo"

func serveEcho(ctx context.Context, args, end []byte) ([]byte, error) {
	end = append(end, 0x81, 0xa4, 'e', 'c', 'h', 'o') // {"echo": ...}
	if len(args) == 0 {
		return append(end, 0xc0), nil
	}
	return append(end, args...), nil
}

// reservedPrefix starts the names of methods the link itself serves.
const reservedPrefix = "ipc."

func checkMethodName(method string) {
	if method == "" {
		panic("ipc: empty method name")
	}
	if strings.HasPrefix(method, reservedPrefix) {
		panic("ipc: method names starting with " + reservedPrefix + " are reserved for the link: " + method)
	}
}

// StatsOptions choose what a stats snapshot includes.
type StatsOptions struct {
	Streams bool // each open stream's counters, in ConnStats.Streams
}

// ServerStats are a server's counters: the ipc.stats reply, and what a daemon's own stats
// embed.
type ServerStats struct {
	Name               string        `json:"name" msgpack:"name"`
	Instance           string        `json:"instance" msgpack:"instance"` // hex of the hello's instance
	Up                 time.Duration `json:"up_ns" msgpack:"up_ns"`
	ConnsOpen          int           `json:"conns_open" msgpack:"conns_open"`
	ConnsAccepted      uint64        `json:"conns_accepted" msgpack:"conns_accepted"`
	RejectedHandshakes uint64        `json:"rejected_handshakes" msgpack:"rejected_handshakes"`
	// Totals sum the counters of every connection since the server started, live or ended;
	// ByTransport splits them by the connections' transports ("tcp", "unix", "shm").
	Totals      LinkTotals            `json:"totals" msgpack:"totals"`
	ByTransport map[string]LinkTotals `json:"by_transport,omitempty" msgpack:"by_transport,omitempty"`
	Conns       []ConnStats           `json:"conns" msgpack:"conns"`
	Pool        PoolStats             `json:"pool" msgpack:"pool"`
	// Caller is, in an ipc.stats reply, the server-side id of the connection that asked.
	Caller uint64 `json:"caller_conn,omitempty" msgpack:"caller_conn,omitempty"`
}

// Conn returns the counters of the connection with the given id, if it is live.
func (s *ServerStats) Conn(id uint64) (ConnStats, bool) {
	for _, c := range s.Conns {
		if c.ID == id {
			return c, true
		}
	}
	return ConnStats{}, false
}

// Traffic are the byte, frame and batch counters of a connection, a stream or a sum of them.
type Traffic struct {
	BytesIn    uint64 `json:"bytes_in" msgpack:"bytes_in"`
	BytesOut   uint64 `json:"bytes_out" msgpack:"bytes_out"`
	FramesIn   uint64 `json:"frames_in" msgpack:"frames_in"`
	FramesOut  uint64 `json:"frames_out" msgpack:"frames_out"`
	BatchesIn  uint64 `json:"batches_in" msgpack:"batches_in"`
	BatchesOut uint64 `json:"batches_out" msgpack:"batches_out"`
}

func (t *Traffic) add(o Traffic) {
	t.BytesIn += o.BytesIn
	t.BytesOut += o.BytesOut
	t.FramesIn += o.FramesIn
	t.FramesOut += o.FramesOut
	t.BatchesIn += o.BatchesIn
	t.BatchesOut += o.BatchesOut
}

// LinkTotals sum connections' counters.
type LinkTotals struct {
	Conns uint64 `json:"conns" msgpack:"conns"`
	Traffic
	ReadSyscalls  uint64        `json:"read_syscalls" msgpack:"read_syscalls"`
	WriteSyscalls uint64        `json:"write_syscalls" msgpack:"write_syscalls"`
	WriteRounds   uint64        `json:"write_rounds" msgpack:"write_rounds"`
	CreditStall   time.Duration `json:"credit_stall_ns" msgpack:"credit_stall_ns"`
	CreditWaits   uint64        `json:"credit_waits" msgpack:"credit_waits"`
	StreamsOpened uint64        `json:"streams_opened" msgpack:"streams_opened"`
	LateFrames    uint64        `json:"late_frames" msgpack:"late_frames"`
	// The socket's share of the bytes, and the shared-memory rings' counters (see ConnStats).
	SocketBytesIn  uint64 `json:"socket_bytes_in" msgpack:"socket_bytes_in"`
	SocketBytesOut uint64 `json:"socket_bytes_out" msgpack:"socket_bytes_out"`
	RingBytesIn    uint64 `json:"ring_bytes_in" msgpack:"ring_bytes_in"`
	RingBytesOut   uint64 `json:"ring_bytes_out" msgpack:"ring_bytes_out"`
	RingBatchesIn  uint64 `json:"ring_batches_in" msgpack:"ring_batches_in"`
	RingBatchesOut uint64 `json:"ring_batches_out" msgpack:"ring_batches_out"`
	RingFallbacks  uint64 `json:"ring_fallbacks" msgpack:"ring_fallbacks"`
	RingWakeups    uint64 `json:"ring_wakeups" msgpack:"ring_wakeups"`
	PingsSent      uint64 `json:"pings_sent" msgpack:"pings_sent"`
	PongsIn        uint64 `json:"pongs_in" msgpack:"pongs_in"`
}

func (t *LinkTotals) add(c *ConnStats) {
	t.Conns++
	t.Traffic.add(c.Traffic)
	t.ReadSyscalls += c.ReadSyscalls
	t.WriteSyscalls += c.WriteSyscalls
	t.WriteRounds += c.WriteRounds
	t.CreditStall += c.CreditStall
	t.CreditWaits += c.CreditWaits
	t.StreamsOpened += c.StreamsOpened
	t.LateFrames += c.LateFrames
	t.SocketBytesIn += c.SocketBytesIn
	t.SocketBytesOut += c.SocketBytesOut
	t.RingBytesIn += c.RingBytesIn
	t.RingBytesOut += c.RingBytesOut
	t.RingBatchesIn += c.RingBatchesIn
	t.RingBatchesOut += c.RingBatchesOut
	t.RingFallbacks += c.RingFallbacks
	t.RingWakeups += c.RingWakeups
	t.PingsSent += c.PingsSent
	t.PongsIn += c.PongsIn
}

// addTo adds c's counters to the totals of c's transport in by.
func addTo(by map[string]LinkTotals, c *ConnStats) {
	t := by[c.Transport]
	t.add(c)
	by[c.Transport] = t
}

// StreamStats returns the counters of the streams open on the connection, by id.
func (c *Conn) StreamStats() []StreamStats {
	c.mu.Lock()
	out := make([]StreamStats, 0, len(c.core.streams))
	for _, cs := range c.core.streams {
		out = append(out, c.core.streamStats(cs))
	}
	c.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (c *Conn) snapshot(opts StatsOptions) ConnStats {
	st := c.Stats()
	if opts.Streams {
		st.Streams = c.StreamStats()
	}
	return st
}

// serveStats answers MethodStats.
func (s *Server) serveStats(ctx context.Context, st *Stream) error {
	args := struct {
		Streams *bool `msgpack:"streams"`
	}{}
	if err := st.DecodeArgs(&args); err != nil {
		return err
	}
	opts := StatsOptions{Streams: args.Streams == nil || *args.Streams}
	rep := s.Snapshot(opts)
	rep.Caller = st.Conn().id
	b, err := msgpack.Marshal(&rep)
	if err != nil {
		return Errorf(CodeInternal, "%s: %v", MethodStats, err)
	}
	return st.CloseSend(b)
}

// RemoteStats asks the server at the other end of the connection for its counters (the
// ipc.stats request). The reply's Caller names this connection on the server's side.
func (c *Conn) RemoteStats(ctx context.Context, opts StatsOptions) (ServerStats, error) {
	return decodeStatsReply(c.Call(ctx, MethodStats, statsArgs(opts)))
}

// RemoteStats asks the peer for its counters (the ipc.stats request) over the least
// loaded connection.
func (c *Client) RemoteStats(ctx context.Context, opts StatsOptions) (ServerStats, error) {
	return decodeStatsReply(c.Call(ctx, MethodStats, statsArgs(opts)))
}

func statsArgs(opts StatsOptions) []byte {
	b := mpAppendMapHeader(nil, 1)
	return mpAppendBool(mpAppendStr(b, "streams"), opts.Streams)
}

func decodeStatsReply(end []byte, err error) (ServerStats, error) {
	var st ServerStats
	if err != nil {
		return st, err
	}
	if err := msgpack.Unmarshal(end, &st); err != nil {
		return st, fmt.Errorf("%s reply: %w", MethodStats, err)
	}
	return st, nil
}

// PoolStats are the receive-buffer pool's counters, as the ipc.stats reply carries them.
type PoolStats struct {
	Gets      int64 `json:"gets" msgpack:"gets"`             // buffers handed out
	Misses    int64 `json:"misses" msgpack:"misses"`         // of which freshly allocated
	IdleBytes int64 `json:"idle_bytes" msgpack:"idle_bytes"` // bytes held idle now
	// Released counts the idle bytes given back to the garbage collector: aged out,
	// trimmed, or over a lowered bound.
	Released int64 `json:"released_bytes" msgpack:"released_bytes"`
}

// ClientStats are a client's own counters for its peer.
type ClientStats struct {
	Peer     string      `json:"peer" msgpack:"peer"`
	Up       bool        `json:"up" msgpack:"up"`
	Failures uint64      `json:"dial_failures" msgpack:"dial_failures"`
	Totals   LinkTotals  `json:"totals" msgpack:"totals"` // over the live connections
	Conns    []ConnStats `json:"conns" msgpack:"conns"`
	// ByTransport sums every connection's counters since the client started, live or
	// ended, by transport: unlike Totals they only grow (what a metrics counter needs).
	ByTransport map[string]LinkTotals `json:"by_transport,omitempty" msgpack:"by_transport,omitempty"`
}

// Snapshot returns the client's counters: each live connection's (with its open streams'
// if opts.Streams) and their sum.
func (c *Client) Snapshot(opts StatsOptions) ClientStats {
	c.mu.Lock()
	st := ClientStats{Peer: c.peer.String(), Up: c.up > 0, Failures: c.failures, ByTransport: maps.Clone(c.closedBy)}
	c.mu.Unlock()
	if st.ByTransport == nil {
		st.ByTransport = map[string]LinkTotals{}
	}
	for _, conn := range c.Conns() {
		cs := conn.snapshot(opts)
		st.Totals.add(&cs)
		addTo(st.ByTransport, &cs)
		st.Conns = append(st.Conns, cs)
	}
	return st
}
