package ipc

import (
	"context"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// The built-in ipc.stats request reports the server's per-connection and per-stream
// counters, which agree with what the client counted on its side.
func TestStatsRequest(t *testing.T) {
	env := startServer(t, ServerConfig{Name: "statsd"})
	cl := newTestClient(t, env.unix, ClientConfig{Transport: TransportUnix, ConnsPerPeer: 1})
	ctx := context.Background()
	conn := cl.Conns()[0]

	st, err := conn.Open(ctx, "gen", mpMap("n", 5, "rows", 100), true)
	if err != nil {
		t.Fatal(err)
	}
	recvAll(t, st, nil)
	st.Close()
	blk, err := conn.Open(ctx, "block", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	defer blk.Close()

	mine := cl.Snapshot(StatsOptions{Streams: true})
	rep, err := conn.RemoteStats(ctx, StatsOptions{Streams: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Name != "statsd" || len(rep.Instance) != 32 || rep.ConnsOpen < 1 {
		t.Fatalf("server identity: %+v", rep)
	}
	sc, ok := rep.Conn(rep.Caller)
	if !ok {
		t.Fatalf("caller conn %d not among %d conns", rep.Caller, len(rep.Conns))
	}
	if len(mine.Conns) != 1 {
		t.Fatalf("client snapshot has %d conns", len(mine.Conns))
	}
	cc := mine.Conns[0]
	switch {
	case sc.Role != "server" || cc.Role != "client":
		t.Fatalf("roles %q/%q", sc.Role, cc.Role)
	case sc.BatchesOut != 5 || cc.BatchesIn != 5:
		t.Fatalf("batches: server sent %d, client received %d, want 5", sc.BatchesOut, cc.BatchesIn)
	case sc.BytesIn < cc.BytesOut || sc.FramesIn < cc.FramesOut:
		t.Fatalf("server received %d bytes/%d frames, client had sent %d/%d", sc.BytesIn, sc.FramesIn, cc.BytesOut, cc.FramesOut)
	case sc.BytesOut > cc.BytesIn+uint64(HeaderSize+64):
		// Before the reply is written the server has sent what the client had read, plus
		// at most a pong.
		t.Fatalf("server sent %d bytes, client had received %d", sc.BytesOut, cc.BytesIn)
	case sc.ReadSyscalls == 0 || sc.WriteSyscalls == 0 || sc.StreamsOpened < 3:
		t.Fatalf("server counters: %+v", sc)
	case rep.Totals.BatchesOut < 5 || rep.Totals.Conns < 1:
		t.Fatalf("totals: %+v", rep.Totals)
	}
	methods := map[string]StreamStats{}
	for _, s := range sc.Streams {
		methods[s.Method] = s
	}
	if _, ok := methods["block"]; !ok {
		t.Fatalf("server streams %+v lack the open block stream", sc.Streams)
	}
	if _, ok := methods[MethodStats]; !ok {
		t.Fatalf("server streams %+v lack the stats stream itself", sc.Streams)
	}
	if len(cc.Streams) != 1 || cc.Streams[0].Method != "block" || cc.Streams[0].ID != blk.ID() {
		t.Fatalf("client streams %+v, want the block stream %d", cc.Streams, blk.ID())
	}

	// The wire form is a msgpack map with the documented keys.
	end, err := conn.Call(ctx, MethodStats, mpMap())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := msgpack.Unmarshal(end, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "instance", "up_ns", "conns_open", "totals", "conns", "pool", "caller_conn"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("stats reply lacks %q: %v", k, m)
		}
	}
	conns := m["conns"].([]any)
	c0 := conns[0].(map[string]any)
	for _, k := range []string{"id", "role", "bytes_in", "bytes_out", "frames_in", "frames_out", "batches_in", "batches_out", "read_syscalls", "write_syscalls", "credit_stall_ns", "streams"} {
		if _, ok := c0[k]; !ok {
			t.Fatalf("conn stats lack %q: %v", k, c0)
		}
	}
	if rep2, err := cl.RemoteStats(ctx, StatsOptions{}); err != nil || len(rep2.Conns) == 0 || rep2.Conns[0].Streams != nil {
		t.Fatalf("stats without streams: %v %+v", err, rep2)
	}
}

func TestReservedMethodNames(t *testing.T) {
	s := NewServer(ServerConfig{})
	for _, name := range []string{MethodStats, "ipc.other", ""} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("registering %q did not panic", name)
				}
			}()
			s.Handle(name, func(context.Context, *Stream) error { return nil })
		}()
	}
}

func TestEchoMethod(t *testing.T) {
	srv, _ := newPipeServer(t, Limits{})
	c := pipePair(t, srv, ClientConfig{})
	for _, args := range [][]byte{nil, mpAppendStr(nil, "hello")} {
		end, err := c.Call(context.Background(), MethodEcho, args)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := msgpack.Unmarshal(end, &m); err != nil {
			t.Fatal(err)
		}
		if v, ok := m["echo"]; !ok || (args != nil && v != "hello") || (args == nil && v != nil) {
			t.Fatalf("echo of %x: %v", args, m)
		}
	}
}
