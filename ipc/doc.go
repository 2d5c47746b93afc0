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
package ipc
