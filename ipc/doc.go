// Package ipc owns the link between colink's daemons: endpoints and transports (TCP, unix
// sockets, the Linux abstract namespace), the frame format and its pure decoder, the
// handshake (version check, SO_PEERCRED, shared-secret challenge), multiplexed streams with
// per-stream credit flow control, cancellation, deadlines and heartbeats, the Arrow record
// batch codec that writes each batch with one vectored write and reads it into recycled
// buffers, and the per-connection and per-stream counters.
//
// ipc imports nothing of the engine. The wire format is specified in PROTOCOL.md beside this
// file; the names below follow it.
//
// A server registers named handlers and serves listeners:
//
//	srv := ipc.NewServer(ipc.ServerConfig{Name: "primproc"})
//	srv.Handle("echo", func(ctx context.Context, st *ipc.Stream) error { ... })
//	ln, _ := ipc.Listen(ep, ipc.ListenConfig{})
//	go srv.Serve(ln)
//
// A client holds a small pool of connections to one peer and opens streams on them:
//
//	cl, _ := ipc.NewClient("tcp://127.0.0.1:8620", ipc.ClientConfig{Transport: ipc.TransportAuto})
//	st, _ := cl.Open(ctx, "synth", args, false)
//	for { rec, err := st.Recv(); ...; rec.Release() }
//
// Unary calls without waiting: cl.Go(method, args, flush, done) queues a REQUEST with FIN and
// calls done from the goroutine reading the connection; Call is the same call waited for. A
// server answers FIN requests for a method registered with HandleUnary (or, building the
// reply in place without allocating, HandleUnaryAppend) inline on its reading goroutine, and
// writes the replies to a burst of requests with one writev. Every server also answers the
// reserved methods ipc.echo and ipc.stats.
//
// Counters: Conn.Stats, Client.Snapshot (this side's), and the built-in ipc.stats request
// that every server answers (Client.RemoteStats, Server.Snapshot to embed in a daemon's own
// stats). Memory: each stream holds at most a window of unconsumed data, and the streams
// that can receive data are capped per connection by Limits.MaxConnBuffer. Received frames
// land in a BufferPool, which keeps at most its idle bound of unused buffers and releases
// those unused for its idle time (DefaultPoolIdleTime; BufferPool.SetIdleTime, SetMaxIdle
// and Trim adjust it).
package ipc
