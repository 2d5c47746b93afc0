// Package ipcbench owns colink's benchmark of the link, in the manner of Kudu's rpc-bench:
// a client (the calling process) against a primproc in another process, in three modes,
// each optionally side by side with the same traffic over a plain socket of the same kind
// (Config.Raw) and, in the stream mode, with a single-core memcpy (Config.Memcpy) and
// Arrow Flight (Config.Flight), over tcp, unix and shm alternately (shm: the link only, as
// neither baseline has a socket of its kind; its trials also count the bytes through the
// rings), reporting throughput, latency percentiles (a log-linear histogram), and each
// process's CPU time and context switches per request (or per GB). cmd/ipcbench is its
// command; "dbt3 compare" runs that command's stream mode and reads its JSON with
// ReadSummary.
//
//	sync:   Clients goroutines, one call outstanding each (echo of Payload bytes)
//	async:  Inflight calls in flight
//	stream: synthetic batches (default 64k rows of 4 int64 and 1 ~40-byte string column)
//
// sync and async call Method, by default ipc.echo, the link's built-in echo (answered
// inline by the server's reading goroutine without allocating, as the raw server's echo);
// "echo" is primproc's own. Each trial is split into Chunks chunks and the implementations
// alternate chunk by chunk, so load from other processes falls on all alike and a ratio
// taken within a round compares like with like.
//
// The raw baseline speaks a minimal protocol over a plain socket of the same kind: echo of
// [u32 length][payload] messages, replies buffered while more requests are buffered
// (pipelined requests share writes, as the link's do); stream: the same Arrow IPC message
// the link's synth sends, [u64 length][message] in one write each, read by a goroutine into
// a few recycled buffers ahead of a consumer that takes each whole message. async and stream
// use as many sockets as the link has connections (stream: min(Streams, connections), each
// socket cycling through one distinct copy of the message per stream it stands for, as the
// link's server holds one batch per stream).
//
// The Flight baseline (Config.Flight, stream mode over tcp and unix) is Arrow Flight's
// DoGet from a Go Flight server (arrow-go's flight package on gRPC, every gRPC setting its
// default but the message size limit, raised so that a batch passes) streaming the same
// synth batch, one per call as the link's server holds one per stream, over
// min(Streams, connections) gRPC connections carrying Streams concurrent calls; the client
// decodes each batch with Flight's record reader and counts its bytes as the link's trial
// does (the synth message's size a batch). What differs is the protocol: Flight sends each
// batch as a protobuf FlightData (the IPC metadata, then the body copied into the message)
// in HTTP/2 DATA frames under gRPC's window flow control; the link sends the same Arrow
// IPC message in its own frames under its credit flow control (over shm, the body through
// a ring). Both serve from the link's listeners (ipc.Listen), so their sockets have the same
// options. The link is taken against Flight over the same kind of socket, and shm's link
// against Flight over unix (link/flight tcp, link/flight unix, shm link/flight unix).
//
// Run starts primproc itself (a child process, the binary found by dbt3/cluster) or uses a
// running one (Config.Connect). The raw and Flight baselines' servers are always children:
// Run re-executes the running program with RawServerArg or FlightServerArg as its only
// argument, and that program's main must then call ServeRaw or ServeFlight.
package ipcbench
