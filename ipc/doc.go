// Package ipc owns the link between colink's daemons: endpoints and transports (TCP, unix
// sockets, the Linux abstract namespace, and shm: shared-memory rings beside a unix
// socket), the frame format and its pure decoder, the handshake (version check,
// SO_PEERCRED, shared-secret challenge), multiplexed streams with
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
//	cl, _ := ipc.NewClient("tcp://127.0.0.1:8620", ipc.ClientConfig{Transport: ipc.TransportShm})
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
// land in a buffer pool (colink's one pool, internal/bufpool), which keeps at most its
// Retain bound of unused buffers and releases those unused for its IdleTime; a server or
// client without one makes a pool of DefaultPoolIdle bytes and DefaultPoolIdleTime.
//
// # The core and the loop
//
// A connection is two layers, in the manner of etcd's raft and nats-server's parser.
//
// The core (type core, core*.go) is the protocol of one connection as a state machine. It
// takes events — bytes received, a timer tick, the peer's process state when asked for it,
// and the local operations (open, call, send, consume, close-send, cancel, close, finish) —
// and answers with actions: frames queued for writing, streams to wake, calls completed,
// streams to start handlers for, inline requests to run, the next time it wants a tick,
// and the connection's failure. It has no goroutines, no locks and no clock of its own:
// every event carries now, and every deadline it keeps (the handshake's, the heartbeat's,
// the silence verdict's, a stream's delayed credit grant) comes back as the one next
// deadline it wants a tick at. It owns the frame decoding state (decoder, over the pure
// DecodeHeader), the handshake, the stream table and every stream's protocol state (open,
// half-closed, ended; credit granted and used; received frames queued for the
// application), the pending unary calls, connection state (handshaking, open, failed and
// why), liveness (last byte in and out, the ping due, the one silence rule below) and the
// close and cancel protocol. Its output is an ordered queue of write rounds (outQueue):
// control frames copied, data frames referencing the sender's buffers, PING and PONG in an
// urgent lane ahead of what has not begun to be written. Tests drive it with no network
// and no clock at all: the data-driven scripts under testdata/core, and the fuzz targets
// that feed it whole sessions.
//
// The silence rule is one rule, the same in the handshake and after it: a peer silent for
// HeartbeatTimeout (counting bytes waiting unread in the socket as signs of life) is
// judged — a peer of unknown process has failed; a local one is asked about (the core's
// action checkPeer) and has failed if its process is stopped or gone, or if it stays
// silent for localPeerSilenceFactor timeouts while running. It applies on an open
// connection and while a client waits for the server's handshake frames; the handshake
// deadline applies to both sides until the handshake completes.
//
// The loop (Conn, Stream; conn.go, stream.go, readrole.go) owns the socket and the
// goroutines, and feeds the core under one mutex (Conn.mu), executing the actions outside
// it: a reader (on a server a goroutine of its own; on a client whichever goroutine waits
// for input, see readrole.go) reads into the decoder's buffer and reports the bytes; a
// combining writer writes each round with one writev (a goroutine that finds nobody
// writing writes its own frames and everyone's queued meanwhile; goroutines that must not
// block leave theirs to a background flusher); one timer delivers the ticks; the streams'
// goroutines wait on channels the actions signal. Conn.mu guards the core, the writer's
// bookkeeping and the client's read role; no syscall and no user code runs under it.
//
// # Shared memory
//
// Transport shm (and auto, which prefers it) carries batch bodies through shared memory
// on a unix socket (shm*.go, ring.go; PROTOCOL.md, "Shared memory"). The hellos agree on
// it; the server creates a sealed, pre-faulted memfd segment per direction and passes both
// with its hello (SCM_RIGHTS). Each is a single-producer, single-consumer byte ring. A
// sender copies a batch's body into a ring region (its one copy) and queues an RBATCH
// frame, the region's descriptor and the Arrow metadata, on the socket, which stays the
// one ordered channel and the wake-up; a body that does not fit goes on the socket as a
// BATCH, so a full ring never blocks. The core checks every descriptor against its own
// state (ringRx.accept) and hands the body to the application in place; the region goes
// back when the batch is released, in any order, the tail advancing over the released
// prefix. Flow control, the stream table, cancellation, the handshake and liveness are the
// core's, unchanged: credit counts a batch's bytes whichever way its body travels. The
// segments are reference counted: unmapped once the connection has ended and the
// application has released every batch over them.
package ipc
