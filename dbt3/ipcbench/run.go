package ipcbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/colinkdb/colink/dbt3/cluster"
	"github.com/colinkdb/colink/dbt3/measure"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
)

// Config is what a run measures; cmd/ipcbench's flags set it field by field.
type Config struct {
	Modes      []string // sync, async, stream, in the order each round runs them
	Transports []string // tcp, unix, shm, alternated within each round
	// Raw also runs the same traffic over a plain socket of the same kind, for link/raw
	// ratios (tcp and unix: shm has no plain-socket equivalent).
	Raw bool
	// Repeat is the number of rounds; each runs every mode, transport and implementation
	// once, in alternating order.
	Repeat int
	// Chunks splits each trial into this many chunks, the implementations alternating
	// chunk by chunk.
	Chunks   int
	Duration time.Duration // length of a sync or async trial
	Warmup   time.Duration // unmeasured warm-up before each sync or async trial
	Clients  int           // sync: client goroutines, one call outstanding each
	Inflight int           // async: calls in flight
	Payload  int           // sync and async: request and reply payload bytes
	Method   string        // sync and async: the link method called
	// ConnsPerPeer is the number of link connections to primproc (raw async uses as many
	// sockets).
	ConnsPerPeer int
	Streams      int   // stream: concurrent streams
	StreamBytes  int64 // stream: bytes to move per trial
	// StreamWindow is the credit the link's client grants each stream, in bytes (0:
	// ipc.DefaultStreamWindow): how much a producer may send ahead of the consumer.
	StreamWindow int
	// Memcpy also times, in each round of the stream mode, a single-core copy of the same
	// bytes (the same messages, one after another) into a recycled buffer: the bound of
	// any transport's copy, for transport/memcpy fractions.
	Memcpy bool
	// Flight also streams the same batches in the stream mode over tcp and unix by Arrow
	// Flight: DoGet from a Go Flight server (a child process, FlightServerArg) over a socket
	// of the same kind, for link/flight ratios (shm's link against Flight over unix).
	Flight bool
	// RawWriteSizes are the write sizes (bytes) the raw stream's server writes each message
	// in, one raw trial each, alternated with the others; the fastest is the raw baseline
	// (link/raw). Empty: one write per message.
	RawWriteSizes []int
	// Synth is the stream's batch (its zero fields take link.SynthArgs' defaults).
	Synth link.SynthArgs
	// Bin is the directory holding the primproc binary to start ("": dbt3/cluster finds
	// or builds it).
	Bin string
	// Connect is a running primproc's tcp:// URL to use instead of starting one; its unix
	// socket is found by the handshake.
	Connect string
	// JSONPath, if set, is where every trial and the summary are written as JSON.
	JSONPath string
	// Command is the command line recorded in the report.
	Command string
}

// transports are the link transports a run may measure, in the order their ratios pair
// them: each against those before it (unix/tcp, shm/tcp, shm/unix).
var transports = []string{"tcp", "unix", "shm"}

// implRun is an implementation a trial runs: "link", "raw" (the raw stream's server writing
// in writes of writeSize bytes, 0: a message a write) or "flight".
type implRun struct {
	impl      string
	writeSize int
}

func (i implRun) String() string {
	if i.writeSize > 0 {
		return fmt.Sprintf("%s/%dKiB", i.impl, i.writeSize>>10)
	}
	return i.impl
}

// implsFor returns the implementations a trial of mode over transport runs: the link; with
// Config.Raw the plain socket of the same kind (the raw stream once per RawWriteSizes); in
// the stream mode with Config.Flight, Flight over a socket of the same kind. shm has only
// the link: neither baseline has a socket of its kind.
func (c *Config) implsFor(mode, transport string) []implRun {
	out := []implRun{{impl: "link"}}
	if transport == "shm" {
		return out
	}
	switch {
	case !c.Raw:
	case mode != "stream" || len(c.RawWriteSizes) == 0:
		out = append(out, implRun{impl: "raw"})
	default:
		for _, ws := range c.RawWriteSizes {
			out = append(out, implRun{impl: "raw", writeSize: ws})
		}
	}
	if c.Flight && mode == "stream" {
		out = append(out, implRun{impl: "flight"})
	}
	return out
}

// flightRuns reports whether any trial runs Flight: the Flight server is started only then.
func (c *Config) flightRuns() bool {
	for _, m := range c.Modes {
		for _, tr := range c.Transports {
			if slices.ContainsFunc(c.implsFor(m, tr), func(i implRun) bool { return i.impl == "flight" }) {
				return true
			}
		}
	}
	return false
}

// Validate checks the settings before anything starts; its messages name cmd/ipcbench's
// flags.
func (c *Config) Validate() error {
	for _, m := range c.Modes {
		if m != "sync" && m != "async" && m != "stream" {
			return fmt.Errorf("--mode %q: want sync, async or stream", m)
		}
	}
	for _, t := range c.Transports {
		if !slices.Contains(transports, t) {
			return fmt.Errorf("--transport %q: want tcp, unix or shm", t)
		}
	}
	for _, ws := range c.RawWriteSizes {
		if ws < 1<<10 || ws > 64<<20 {
			return fmt.Errorf("--raw-write-kib: %d KiB: want 1..65536", ws>>10)
		}
	}
	if c.Repeat < 1 || c.Chunks < 1 || c.Clients < 1 || c.Inflight < 1 || c.ConnsPerPeer < 1 || c.Streams < 1 || c.Payload < 0 || c.Payload > 1<<20 {
		return errors.New("--repeat, --clients, --inflight, --conns-per-peer and --streams must be >= 1, --payload 0..1MiB")
	}
	return nil
}

// Run runs cfg.Repeat rounds of every mode over every transport, prints each trial's brief
// line on stderr and the summary as Markdown on stdout, and writes the JSON if asked. The
// children it starts (primproc, the raw and Flight servers) are stopped before it returns.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg.Synth.Defaults()
	b := &bench{cfg: cfg, quiet: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	msg, err := synthMessage(cfg.Synth)
	if err != nil {
		return err
	}
	b.msgBytes = int64(len(msg))
	if cfg.Connect != "" {
		b.tcpURL = cfg.Connect
		b.unixURL = cfg.Connect // reached with transport unix: discovered in the handshake
	} else {
		bins, err := cluster.FindBinaries(ctx, cfg.Bin, b.quiet)
		if err != nil {
			return err
		}
		pm, err := startPrimproc(bins.PrimProc)
		if err != nil {
			return err
		}
		defer pm.stop()
		b.tcpURL, b.unixURL = pm.tcp, pm.unix
	}
	if cfg.Raw {
		b.raw, err = startChild(RawServerArg, stderr)
		if err != nil {
			return err
		}
		defer b.raw.stop()
	}
	if cfg.flightRuns() {
		b.flight, err = startChild(FlightServerArg, stderr)
		if err != nil {
			return err
		}
		defer b.flight.stop()
	}
	{ // stats requests: link counters, and the CPU of a primproc that is not our child
		b.ctl, err = ipc.NewClient(b.tcpURL, ipc.ClientConfig{Transport: ipc.TransportTCP, ConnsPerPeer: 1, Name: "ipcbench-stats", Logger: b.quiet})
		if err != nil {
			return err
		}
		defer b.ctl.Close()
	}
	b.chunkDur = cfg.Duration / time.Duration(cfg.Chunks)
	loadStart := measure.LoadAverage()
	var trials []*trial
	for round := range cfg.Repeat {
		for _, mode := range cfg.Modes {
			ts := rotate(cfg.Transports, round)
			for _, tr := range ts {
				// Each trial is run as Chunks chunks, the implementations alternating
				// chunk by chunk, so load from elsewhere on the machine falls on both alike.
				acc := map[implRun]*trial{}
				for chunk := range cfg.Chunks {
					b.warm = cfg.Warmup
					if chunk > 0 {
						b.warm = cfg.Warmup / 4
					}
					for _, impl := range rotate(cfg.implsFor(mode, tr), round+slices.Index(ts, tr)+chunk) {
						t, err := b.run(ctx, mode, tr, impl, round)
						if err != nil {
							return fmt.Errorf("%s over %s (%s), round %d: %w", mode, tr, impl, round+1, err)
						}
						if acc[impl] == nil {
							acc[impl] = t
						} else {
							acc[impl].add(t)
						}
					}
				}
				for _, impl := range cfg.implsFor(mode, tr) {
					t := acc[impl]
					fmt.Fprintf(stderr, "round %d %-6s %-4s %-4s %s\n", round+1, mode, tr, impl.String(), t.brief())
					trials = append(trials, t)
				}
			}
			if mode == "stream" && cfg.Memcpy {
				t := b.runMemcpy(msg, round)
				fmt.Fprintf(stderr, "round %d %-6s %-4s %-4s %s\n", round+1, mode, "-", "memcpy", t.brief())
				trials = append(trials, t)
			}
		}
	}
	rep := summarize(cfg, trials, b.msgBytes)
	rep.Command = cfg.Command
	rep.Host = hostInfo()
	rep.Host["loadavg_at_start"] = loadStart
	rep.Trials = trials
	writeMarkdown(stdout, rep)
	if cfg.JSONPath != "" {
		if err := writeJSON(cfg.JSONPath, rep); err != nil {
			return err
		}
	}
	return nil
}

// rotate returns xs, reversed when k is odd: the order alternates from one turn to the next.
func rotate[T any](xs []T, k int) []T {
	out := slices.Clone(xs)
	if len(out) > 1 && k%2 == 1 {
		slices.Reverse(out)
	}
	return out
}

func (t *trial) brief() string {
	cpu := float64(t.Client.UserUS+t.Client.SysUS+t.Server.UserUS+t.Server.SysUS) / 1e6
	if t.Mode == "stream" {
		s := fmt.Sprintf("%.2f GB/s %.1f Mrows/s cpu %.2fs p50 %.0fµs", t.rate(), float64(t.Rows)/t.WallS/1e6, cpu, t.P50US)
		if t.Transport == "shm" {
			s += fmt.Sprintf(" ring %.2f GB fallbacks %d", float64(t.RingBytes)/1e9, t.RingFallbacks)
		}
		return s
	}
	return fmt.Sprintf("%.0f req/s p50 %.1fµs p99 %.1fµs cpu %.2fs", t.rate(), t.P50US, t.P99US, cpu)
}
