package ipcbench

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	arrowipc "github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/vmihailenco/msgpack/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
)

// FlightServerArg is the hidden argument with which Run re-executes the running program as
// the Flight baseline's server (Config.Flight), a process of its own as the raw server is:
// the program's main must then call ServeFlight.
const FlightServerArg = "__serve-flight"

// ServeFlight is the Flight baseline's server, the life of a child process Run started, as
// ServeRaw's (the same READY line, RUSAGE requests and end at stdin's close): a gRPC server
// with Arrow Flight's service on a loopback TCP port and a unix socket, whose DoGet streams
// synth batches (flightService.DoGet).
func ServeFlight(stdin io.Reader, stdout io.Writer) error {
	return serveChild(stdin, stdout, serveFlight)
}

// flightMaxMsg is the largest gRPC message either end of the Flight baseline takes: above
// the largest synth batch (link.SynthArgs.Validate caps one at 512 MiB), since a client's
// default (4 MiB received) is less than the default 5 MB batch. It is the only gRPC setting
// changed from its default.
const flightMaxMsg = 1 << 30

// serveFlight serves Flight on the endpoints of urls with one gRPC server until ctx ends.
// The listeners are the link's (ipc.Listen: on unix sockets the same larger send buffer as
// the link's and the raw server's), so the three differ in protocol, not in socket options.
func serveFlight(ctx context.Context, urls []string, ready chan<- []string) error {
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(flightMaxMsg), grpc.MaxSendMsgSize(flightMaxMsg))
	defer srv.Stop() // closes the listeners
	flight.RegisterFlightServiceServer(srv, &flightService{})
	var eps []string
	errc := make(chan error, len(urls))
	for _, u := range urls {
		ep, err := ipc.ParseEndpoint(u)
		if err != nil {
			return err
		}
		ln, err := ipc.Listen(ep, false)
		if err != nil {
			return err
		}
		eps = append(eps, ln.Endpoint().String())
		go func() { errc <- srv.Serve(ln) }()
	}
	ready <- eps
	select {
	case <-ctx.Done():
		return nil
	case err := <-errc:
		return fmt.Errorf("flight server: %w", err)
	}
}

// flightService is the Flight baseline's service: DoGet only (the rest answer
// Unimplemented).
type flightService struct {
	flight.BaseFlightServer
}

// DoGet streams the batches a ticket (link.SynthArgs, msgpack) asks for: Batches copies of
// one synth batch, built once per call as the link's synth builds one per stream, written
// by Flight's record writer: the schema's FlightData, then one FlightData a batch (its IPC
// metadata in data_header, its body in data_body), which gRPC frames over HTTP/2.
func (*flightService) DoGet(tkt *flight.Ticket, fs flight.FlightService_DoGetServer) error {
	var a link.SynthArgs
	if err := msgpack.Unmarshal(tkt.GetTicket(), &a); err != nil {
		return status.Errorf(codes.InvalidArgument, "ticket: %v", err)
	}
	a.Defaults()
	if err := a.Validate(); err != nil {
		return status.Errorf(codes.InvalidArgument, "synth: %v", err)
	}
	rec := link.SynthBatch(memory.DefaultAllocator, a)
	defer rec.Release()
	w := flight.NewRecordWriter(fs, arrowipc.WithSchema(rec.Schema()))
	for range a.Batches {
		if err := w.Write(rec); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

// flightTarget is the gRPC target of a server child's endpoint URL: host:port for tcp://,
// and a unix:/// URL as it is (gRPC's unix scheme takes the absolute path alike).
func flightTarget(url string) string {
	if rest, ok := strings.CutPrefix(url, "tcp://"); ok {
		return rest
	}
	return url
}

// runFlight runs a stream trial against the Flight server: Streams concurrent DoGet calls
// over min(Streams, ConnsPerPeer) gRPC connections (one each: a gRPC client connection is
// one HTTP/2 connection, its calls multiplexed as the link's streams are over its
// connections), each carrying its per-stream share of the trial's batches.
func (b *bench) runFlight(ctx context.Context, t *trial) error {
	target := flightTarget(b.url(t.Transport, "flight"))
	cls := make([]flight.Client, min(b.cfg.Streams, b.cfg.ConnsPerPeer))
	for i := range cls {
		cl, err := flight.NewClientWithMiddleware(target, nil, nil,
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(flightMaxMsg)))
		if err != nil {
			return fmt.Errorf("flight client %s: %w", target, err)
		}
		defer cl.Close()
		cls[i] = cl
	}
	per := b.streamBatches()
	// gRPC connects at the first call: warm every connection, unmeasured, as the link's
	// client is up and warmed before its trial.
	for _, cl := range cls {
		if _, err := flightStream(ctx, cl, b.cfg.Synth, max(2, per/10), nil); err != nil {
			return err
		}
	}
	return b.measureStreams(ctx, t, b.cfg.Streams, func(i int, h *hist) (int64, error) {
		return flightStream(ctx, cls[i%len(cls)], b.cfg.Synth, per, h)
	})
}

// flightStream gets batches synth batches (a's shape) by one DoGet on cl and receives them
// the way a consumer of the link does: each decoded into a record (by Flight's record
// reader, over the received message's buffers), its arrival recorded in h (if set), and
// released (the reader releases each record at the next one). It returns the batches
// received, checking each has a.Rows rows and that none is missing.
func flightStream(ctx context.Context, cl flight.Client, a link.SynthArgs, batches int, h *hist) (int64, error) {
	a.Batches = batches
	tkt, err := msgpack.Marshal(a)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the call if it is left before its end
	st, err := cl.DoGet(ctx, &flight.Ticket{Ticket: tkt})
	if err != nil {
		return 0, fmt.Errorf("flight DoGet: %w", err)
	}
	last := time.Now()
	rdr, err := flight.NewRecordReader(st)
	if err != nil {
		return 0, fmt.Errorf("flight stream: %w", err)
	}
	defer rdr.Release()
	var n int64
	for rdr.Next() {
		if rows := rdr.RecordBatch().NumRows(); rows != int64(a.Rows) {
			return n, fmt.Errorf("flight stream: batch %d has %d rows, want %d", n, rows, a.Rows)
		}
		n++
		now := time.Now()
		if h != nil {
			h.record(now.Sub(last))
		}
		last = now
	}
	if err := rdr.Err(); err != nil {
		return n, fmt.Errorf("flight stream: %w", err)
	}
	if n != int64(batches) {
		return n, fmt.Errorf("flight stream: %d batches, want %d", n, batches)
	}
	return n, nil
}
