// Command ipcbench measures the link against a plain socket of the same kind, in the manner
// of Kudu's rpc-bench: this process is the client, a primproc (started as a child, or a
// running one with --connect) the server, in sync, async and stream modes; the stream mode
// also against a single-core memcpy and Arrow Flight (DoGet from a Go Flight server). The
// benchmark is package dbt3/ipcbench; this command parses its flags, and is also the raw
// and the Flight baselines' server when the benchmark re-executes it with
// ipcbench.RawServerArg or ipcbench.FlightServerArg.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/dbt3/ipcbench"
	"github.com/colinkdb/colink/internal/daemon"
	"github.com/colinkdb/colink/ipc"
)

func main() {
	// IPCBENCH_CPUPROFILE_DIR=dir makes the client and the server children write a CPU
	// profile there (client.prof, __serve-raw.prof, __serve-flight.prof); primproc has
	// --debug-listen.
	role := "client"
	servers := map[string]func(io.Reader, io.Writer) error{ipcbench.RawServerArg: ipcbench.ServeRaw, ipcbench.FlightServerArg: ipcbench.ServeFlight}
	if len(os.Args) > 1 && servers[os.Args[1]] != nil {
		role = os.Args[1]
	}
	if dir := os.Getenv("IPCBENCH_CPUPROFILE_DIR"); dir != "" {
		if f, err := os.Create(filepath.Join(dir, role+".prof")); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	code := 0
	if role != "client" {
		if err := servers[role](os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "ipcbench server:", err)
			code = 1
		}
	} else {
		code = run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	}
	pprof.StopCPUProfile()
	os.Exit(code)
}

// run parses the flags and runs the benchmark: exit status 0, 1 if it failed, 2 for bad
// flags.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c ipcbench.Config
	fs := pflag.NewFlagSet("ipcbench", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringSliceVar(&c.Modes, "mode", []string{"sync", "async", "stream"}, "modes to run: sync, async, stream")
	fs.StringSliceVar(&c.Transports, "transport", []string{"tcp", "unix"}, "transports (tcp, unix, shm), alternated within each round; shm has the link only (no plain-socket or Flight baseline)")
	fs.BoolVar(&c.Raw, "raw", false, "also run the same traffic over a plain socket of the same kind and print link/raw ratios")
	fs.IntVar(&c.Repeat, "repeat", 3, "rounds; each round runs every mode, transport and implementation once, in alternating order")
	fs.IntVar(&c.Chunks, "chunks", 4, "split each trial into this many chunks, alternating the implementations chunk by chunk")
	fs.DurationVar(&c.Duration, "duration", 2*time.Second, "length of a sync or async trial")
	fs.DurationVar(&c.Warmup, "warmup", 300*time.Millisecond, "unmeasured warm-up before each sync or async trial")
	fs.IntVar(&c.Clients, "clients", 1, "sync: client goroutines, one call outstanding each")
	fs.IntVar(&c.Inflight, "inflight", 64, "async: calls in flight")
	fs.IntVar(&c.Payload, "payload", 64, "sync and async: request and reply payload bytes")
	fs.StringVar(&c.Method, "method", ipc.MethodEcho, "sync and async: the link method called (ipc.echo: the link's built-in echo; echo: primproc's)")
	fs.IntVar(&c.ConnsPerPeer, "conns-per-peer", 1, "link connections to primproc (raw async uses as many sockets; the raw and Flight streams min(--streams, this))")
	fs.IntVar(&c.Streams, "streams", 1, "stream: concurrent streams")
	fs.IntVar(&c.StreamWindow, "stream-window", 0, "stream: the credit the link's client grants each stream, in bytes: how far the producer may run ahead (default: the link's, 16 MiB)")
	fs.Int64Var(&c.StreamBytes, "stream-bytes", 2e9, "stream: bytes to move per trial")
	var writeKiB []int
	fs.IntSliceVar(&writeKiB, "raw-write-kib", []int{64, 256, 1024, 4096}, "stream with --raw: the raw server's write sizes in KiB, one raw trial each; the fastest is the raw of link/raw (empty: one write a message)")
	fs.BoolVar(&c.Flight, "flight", true, "stream over tcp and unix: also stream the same batches by Arrow Flight (DoGet from a Go Flight server in a child process, gRPC defaults but for the message size limit) over a socket of the same kind, and print link/flight ratios (shm's link against Flight over unix)")
	fs.BoolVar(&c.Memcpy, "memcpy", true, "stream: also time a single-core copy of the same bytes into a recycled buffer each round, and report every transport's fraction of its rate")
	fs.IntVar(&c.Synth.Rows, "rows", 65536, "stream: rows per batch")
	fs.IntVar(&c.Synth.Int64Cols, "int64-cols", 4, "stream: int64 columns")
	fs.IntVar(&c.Synth.StringCols, "string-cols", 1, "stream: string columns")
	fs.IntVar(&c.Synth.StringLen, "string-len", 40, "stream: bytes per string")
	fs.BoolVar(&c.Synth.Dict, "dict", false, "stream: dictionary-encode the string columns")
	fs.StringVar(&c.Connect, "connect", "", "use the primproc at this tcp:// URL (its unix socket is found by the handshake) instead of starting one")
	fs.StringVar(&c.Bin, "bin", "", "directory holding the primproc binary to start (default: built from the source tree when run inside it, else beside ipcbench, else on PATH)")
	fs.StringVar(&c.JSONPath, "json", "", "write every trial and the summary to this file as JSON")
	version := daemon.VersionFlag(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: ipcbench [flags]\n\nMeasures the link against a plain socket (--raw), and in the stream mode against a single-core\nmemcpy (--memcpy) and Arrow Flight (--flight): Flight's DoGet moves the same Arrow IPC bodies in\nprotobuf FlightData messages over gRPC's HTTP/2 framing and flow control, the link in its own\nframes under its credit flow control (over shm, batch bodies through shared-memory rings).\n\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return 0
		}
		fmt.Fprintln(stderr, "ipcbench:", err)
		return 2
	}
	if *version {
		daemon.PrintVersion(stdout, "ipcbench")
		return 0
	}
	for _, k := range writeKiB {
		c.RawWriteSizes = append(c.RawWriteSizes, k<<10)
	}
	if err := c.Validate(); err != nil {
		fmt.Fprintln(stderr, "ipcbench:", err)
		return 2
	}
	c.Command = strings.Join(append([]string{"ipcbench"}, args...), " ")
	if err := ipcbench.Run(ctx, c, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "ipcbench:", err)
		return 1
	}
	return 0
}
