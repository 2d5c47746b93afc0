// Command ipcbench measures the link in the manner of Kudu's rpc-bench: a client (this
// process) against a primproc in another process, in three modes, each optionally side by
// side with the same traffic over a plain socket of the same kind (--raw), over tcp and unix
// sockets alternately, reporting throughput, latency percentiles, and each process's CPU time
// and context switches per request (or per GB).
//
//	sync:   --clients goroutines, one call outstanding each (echo of --payload bytes)
//	async:  --inflight calls in flight
//	stream: synthetic batches (default 64k rows of 4 int64 and 1 ~40-byte string column)
//
// sync and async call --method, by default ipc.echo, the link's built-in echo (answered
// inline by the server's reading goroutine without allocating, as the raw server's echo);
// "echo" is primproc's own. Each trial is split into --chunks chunks and the link and raw
// alternate chunk by chunk, so load from other processes falls on both alike and a ratio
// taken within a round compares like with like.
//
// The raw baseline (--raw) speaks a minimal protocol over a plain socket of the same kind:
// echo of [u32 length][payload] messages, replies buffered while more requests are buffered
// (pipelined requests share writes, as the link's do); stream: the same Arrow IPC message
// the link's synth sends, [u64 length][message] in one write each, read by a goroutine into
// a few recycled buffers ahead of a consumer that takes each whole message. async and stream
// use as many sockets as the link has connections (stream: min(--streams, connections), each
// socket cycling through one distinct copy of the message per stream it stands for, as the
// link's server holds one batch per stream).
//
// ipcbench starts primproc itself (re-executing itself as a primproc child) or uses a
// running one (--connect). The raw baseline's server is always a child.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/colinkdb/colink/dbt3/cluster"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
)

type options struct {
	modes       []string
	transports  []string
	raw         bool
	repeat      int
	chunks      int
	duration    time.Duration
	warmup      time.Duration
	clients     int
	inflight    int
	payload     int
	method      string
	conns       int
	streams     int
	streamBytes int64
	synth       link.SynthArgs
	bin         string // directory of the primproc binary ("": build or find it)
	connect     string
	jsonPath    string
}

func main() {
	// IPCBENCH_CPUPROFILE_DIR=dir makes the client and the raw server child write a CPU
	// profile there (client.prof, __serve-raw.prof); primproc has --debug-listen.
	role := "client"
	if len(os.Args) > 1 && os.Args[1] == roleRaw {
		role = os.Args[1]
	}
	if dir := os.Getenv("IPCBENCH_CPUPROFILE_DIR"); dir != "" {
		if f, err := os.Create(filepath.Join(dir, role+".prof")); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	if role != "client" {
		code := serveChild(role)
		pprof.StopCPUProfile()
		os.Exit(code)
	}
	code := run(os.Args[1:], os.Stdout)
	pprof.StopCPUProfile()
	os.Exit(code)
}

func run(args []string, out io.Writer) int {
	var o options
	fs := pflag.NewFlagSet("ipcbench", pflag.ContinueOnError)
	fs.StringSliceVar(&o.modes, "mode", []string{"sync", "async", "stream"}, "modes to run: sync, async, stream")
	fs.StringSliceVar(&o.transports, "transport", []string{"tcp", "unix"}, "transports, alternated within each round")
	fs.BoolVar(&o.raw, "raw", false, "also run the same traffic over a plain socket of the same kind and print link/raw ratios")
	fs.IntVar(&o.repeat, "repeat", 3, "rounds; each round runs every mode, transport and implementation once, in alternating order")
	fs.IntVar(&o.chunks, "chunks", 4, "split each trial into this many chunks, alternating the implementations chunk by chunk")
	fs.DurationVar(&o.duration, "duration", 2*time.Second, "length of a sync or async trial")
	fs.DurationVar(&o.warmup, "warmup", 300*time.Millisecond, "unmeasured warm-up before each sync or async trial")
	fs.IntVar(&o.clients, "clients", 1, "sync: client goroutines, one call outstanding each")
	fs.IntVar(&o.inflight, "inflight", 64, "async: calls in flight")
	fs.IntVar(&o.payload, "payload", 64, "sync and async: request and reply payload bytes")
	fs.StringVar(&o.method, "method", ipc.MethodEcho, "sync and async: the link method called (ipc.echo: the link's built-in echo; echo: primproc's)")
	fs.IntVar(&o.conns, "conns-per-peer", 1, "link connections to primproc (raw async uses as many sockets)")
	fs.IntVar(&o.streams, "streams", 1, "stream: concurrent streams")
	fs.Int64Var(&o.streamBytes, "stream-bytes", 2e9, "stream: bytes to move per trial")
	fs.IntVar(&o.synth.Rows, "rows", 65536, "stream: rows per batch")
	fs.IntVar(&o.synth.Int64Cols, "int64-cols", 4, "stream: int64 columns")
	fs.IntVar(&o.synth.StringCols, "string-cols", 1, "stream: string columns")
	fs.IntVar(&o.synth.StringLen, "string-len", 40, "stream: bytes per string")
	fs.BoolVar(&o.synth.Dict, "dict", false, "stream: dictionary-encode the string columns")
	fs.StringVar(&o.connect, "connect", "", "use the primproc at this tcp:// URL (its unix socket is found by the handshake) instead of starting one")
	fs.StringVar(&o.bin, "bin", "", "directory holding the primproc binary to start (default: built from the source tree when run inside it, else beside ipcbench, else on PATH)")
	fs.StringVar(&o.jsonPath, "json", "", "write every trial and the summary to this file as JSON")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: ipcbench [flags]\n\nMeasures the link against a plain socket.\n\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return 0
		}
		fmt.Fprintln(os.Stderr, "ipcbench:", err)
		return 2
	}
	for _, m := range o.modes {
		if m != "sync" && m != "async" && m != "stream" {
			fmt.Fprintf(os.Stderr, "ipcbench: --mode %q: want sync, async or stream\n", m)
			return 2
		}
	}
	for _, t := range o.transports {
		if t != "tcp" && t != "unix" {
			fmt.Fprintf(os.Stderr, "ipcbench: --transport %q: want tcp or unix\n", t)
			return 2
		}
	}
	if o.repeat < 1 || o.chunks < 1 || o.clients < 1 || o.inflight < 1 || o.conns < 1 || o.streams < 1 || o.payload < 0 || o.payload > 1<<20 {
		fmt.Fprintln(os.Stderr, "ipcbench: --repeat, --clients, --inflight, --conns-per-peer and --streams must be >= 1, --payload 0..1MiB")
		return 2
	}
	o.synth.Defaults()
	if err := benchMain(o, out, strings.Join(append([]string{"ipcbench"}, args...), " ")); err != nil {
		fmt.Fprintln(os.Stderr, "ipcbench:", err)
		return 1
	}
	return 0
}

func benchMain(o options, out io.Writer, cmdline string) error {
	b := &bench{opt: o, quiet: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	msg, err := synthMessage(o.synth)
	if err != nil {
		return err
	}
	b.msgBytes = int64(len(msg))
	if o.connect != "" {
		b.tcpURL = o.connect
		b.unixURL = o.connect // reached with transport unix: discovered in the handshake
	} else {
		bins, err := cluster.FindBinaries(context.Background(), o.bin, b.quiet)
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
	if o.raw {
		b.raw, err = startChild(roleRaw)
		if err != nil {
			return err
		}
		defer b.raw.stop()
	}
	{ // stats requests: link counters, and the CPU of a primproc that is not our child
		b.ctl, err = ipc.NewClient(b.tcpURL, ipc.ClientConfig{Transport: ipc.TransportTCP, ConnsPerPeer: 1, Name: "ipcbench-stats", Logger: b.quiet})
		if err != nil {
			return err
		}
		defer b.ctl.Close()
	}
	impls := []string{"link"}
	if o.raw {
		impls = append(impls, "raw")
	}
	b.chunkDur = o.duration / time.Duration(o.chunks)
	loadStart := loadAvg()
	var trials []*trial
	for round := range o.repeat {
		for _, mode := range o.modes {
			ts := rotate(o.transports, round)
			for _, tr := range ts {
				// Each trial is run as --chunks chunks, the implementations alternating
				// chunk by chunk, so load from elsewhere on the machine falls on both alike.
				acc := map[string]*trial{}
				for chunk := range o.chunks {
					b.warm = o.warmup
					if chunk > 0 {
						b.warm = o.warmup / 4
					}
					for _, impl := range rotate(impls, round+indexOf(ts, tr)+chunk) {
						t, err := b.run(mode, tr, impl, round)
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
				for _, impl := range impls {
					t := acc[impl]
					fmt.Fprintf(os.Stderr, "round %d %-6s %-4s %-4s %s\n", round+1, mode, tr, impl, t.brief())
					trials = append(trials, t)
				}
			}
		}
	}
	rep := summarize(o, trials, b.msgBytes)
	rep.Command = cmdline
	rep.Host = hostInfo()
	rep.Host["loadavg_at_start"] = loadStart
	rep.Trials = trials
	writeMarkdown(out, rep)
	if o.jsonPath != "" {
		if err := writeJSON(o.jsonPath, rep); err != nil {
			return err
		}
	}
	return nil
}

func rotate(xs []string, k int) []string {
	out := slices.Clone(xs)
	if len(out) > 1 && k%2 == 1 {
		slices.Reverse(out)
	}
	return out
}

func indexOf(xs []string, x string) int { return slices.Index(xs, x) }

func (t *trial) brief() string {
	cpu := float64(t.Client.UserUS+t.Client.SysUS+t.Server.UserUS+t.Server.SysUS) / 1e6
	if t.Mode == "stream" {
		return fmt.Sprintf("%.2f GB/s %.1f Mrows/s cpu %.2fs p50 %.0fµs", t.rate(), float64(t.Rows)/t.WallS/1e6, cpu, t.P50US)
	}
	return fmt.Sprintf("%.0f req/s p50 %.1fµs p99 %.1fµs cpu %.2fs", t.rate(), t.P50US, t.P99US, cpu)
}

// ---- summary -----------------------------------------------------------------------------

type stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

func statOf(xs []float64) stat {
	if len(xs) == 0 {
		return stat{}
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stat{Median: m, Min: s[0], Max: s[len(s)-1], N: len(s)}
}

type row struct {
	Mode           string `json:"mode"`
	Transport      string `json:"transport"`
	Impl           string `json:"impl"`
	Unit           string `json:"unit"` // of Rate
	Rate           stat   `json:"rate"`
	MRowsPerS      stat   `json:"mrows_per_s,omitempty"`
	ClientCPU      stat   `json:"client_cpu"` // µs per request, or s per GB
	ServerCPU      stat   `json:"server_cpu"`
	CPUUnit        string `json:"cpu_unit"`
	ClientCS       stat   `json:"client_cs_per_op"` // voluntary + involuntary, per request or per batch
	ServerCS       stat   `json:"server_cs_per_op"`
	ClientVolCS    stat   `json:"client_voluntary_cs_per_op"`
	ClientInvolCS  stat   `json:"client_involuntary_cs_per_op"`
	ServerVolCS    stat   `json:"server_voluntary_cs_per_op"`
	ServerInvolCS  stat   `json:"server_involuntary_cs_per_op"`
	P50US          stat   `json:"p50_us"`
	P99US          stat   `json:"p99_us"`
	SyscallsPerOp  stat   `json:"client_syscalls_per_op,omitempty"`
	SrvSyscallsOp  stat   `json:"server_syscalls_per_op,omitempty"`
	StreamsPerConn string `json:"streams_per_conn,omitempty"`
}

type ratio struct {
	Mode  string `json:"mode"`
	What  string `json:"what"` // "link/raw tcp", "link/raw unix", "unix/tcp link", "unix/tcp raw"
	Ratio stat   `json:"ratio"`
}

type report struct {
	Command  string            `json:"command"`
	Host     map[string]string `json:"host"`
	Config   map[string]any    `json:"config"`
	MsgBytes int64             `json:"stream_message_bytes"`
	Rows     []row             `json:"summary"`
	Ratios   []ratio           `json:"ratios"`
	Trials   []*trial          `json:"trials"`
}

func summarize(o options, trials []*trial, msgBytes int64) *report {
	rep := &report{MsgBytes: msgBytes, Config: map[string]any{
		"modes": o.modes, "transports": o.transports, "raw": o.raw, "repeat": o.repeat, "chunks": o.chunks,
		"duration": o.duration.String(), "clients": o.clients, "inflight": o.inflight, "payload": o.payload, "method": o.method,
		"conns_per_peer": o.conns, "streams": o.streams, "stream_bytes": o.streamBytes, "synth": o.synth,
		"connect": o.connect,
	}}
	type key struct{ mode, tr, impl string }
	groups := map[key][]*trial{}
	var order []key
	for _, t := range trials {
		k := key{t.Mode, t.Transport, t.Impl}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], t)
	}
	sort.SliceStable(order, func(i, j int) bool {
		return slices.Index(o.modes, order[i].mode) < slices.Index(o.modes, order[j].mode)
	})
	for _, k := range order {
		ts := groups[k]
		r := row{Mode: k.mode, Transport: k.tr, Impl: k.impl}
		var rate, mrows, ccpu, scpu, ccs, scs, cv, ci, sv, si, p50, p99, sys, ssys []float64
		for _, t := range ts {
			ops := float64(max(t.Ops, 1))
			per := ops
			if t.Mode == "stream" {
				per = float64(t.Bytes) / 1e9 // CPU per GB
				mrows = append(mrows, float64(t.Rows)/t.WallS/1e6)
			}
			rate = append(rate, t.rate())
			ccpu = append(ccpu, float64(t.Client.UserUS+t.Client.SysUS)/per)
			scpu = append(scpu, float64(t.Server.UserUS+t.Server.SysUS)/per)
			ccs = append(ccs, float64(t.Client.Nvcsw+t.Client.Nivcsw)/ops)
			scs = append(scs, float64(t.Server.Nvcsw+t.Server.Nivcsw)/ops)
			cv = append(cv, float64(t.Client.Nvcsw)/ops)
			ci = append(ci, float64(t.Client.Nivcsw)/ops)
			sv = append(sv, float64(t.Server.Nvcsw)/ops)
			si = append(si, float64(t.Server.Nivcsw)/ops)
			p50 = append(p50, t.P50US)
			p99 = append(p99, t.P99US)
			if t.Impl == "link" {
				sys = append(sys, float64(t.ReadSyscalls+t.WriteSyscalls)/ops)
				if t.ServerReadSyscalls+t.ServerWriteSyscalls > 0 {
					ssys = append(ssys, float64(t.ServerReadSyscalls+t.ServerWriteSyscalls)/ops)
				}
			}
		}
		r.Unit, r.CPUUnit = "req/s", "µs/req"
		if k.mode == "stream" {
			r.Unit, r.CPUUnit = "GB/s", "s/GB"
			for i := range ccpu {
				ccpu[i] /= 1e6
				scpu[i] /= 1e6
			}
		}
		r.Rate, r.MRowsPerS, r.ClientCPU, r.ServerCPU = statOf(rate), statOf(mrows), statOf(ccpu), statOf(scpu)
		r.ClientCS, r.ServerCS, r.P50US, r.P99US = statOf(ccs), statOf(scs), statOf(p50), statOf(p99)
		r.ClientVolCS, r.ClientInvolCS, r.ServerVolCS, r.ServerInvolCS = statOf(cv), statOf(ci), statOf(sv), statOf(si)
		r.SyscallsPerOp, r.SrvSyscallsOp = statOf(sys), statOf(ssys)
		if k.impl == "link" && len(ts[len(ts)-1].StreamsPer) > 1 {
			r.StreamsPerConn = fmt.Sprint(ts[len(ts)-1].StreamsPer)
		}
		rep.Rows = append(rep.Rows, r)
	}
	// Ratios are taken within a round (trials run back to back), then summarised.
	find := func(mode, tr, impl string, round int) *trial {
		for _, t := range groups[key{mode, tr, impl}] {
			if t.Round == round {
				return t
			}
		}
		return nil
	}
	for _, mode := range o.modes {
		add := func(what string, num, den func(round int) *trial) {
			var xs []float64
			for round := range o.repeat {
				a, b := num(round), den(round)
				if a != nil && b != nil && b.rate() > 0 {
					xs = append(xs, a.rate()/b.rate())
				}
			}
			if len(xs) > 0 {
				rep.Ratios = append(rep.Ratios, ratio{Mode: mode, What: what, Ratio: statOf(xs)})
			}
		}
		for _, tr := range o.transports {
			add("link/raw "+tr, func(r int) *trial { return find(mode, tr, "link", r) }, func(r int) *trial { return find(mode, tr, "raw", r) })
		}
		for _, impl := range []string{"link", "raw"} {
			add("unix/tcp "+impl, func(r int) *trial { return find(mode, "unix", impl, r) }, func(r int) *trial { return find(mode, "tcp", impl, r) })
		}
	}
	return rep
}

func fmtStat(s stat, prec int) string {
	if s.N == 0 {
		return "–"
	}
	f := "%." + fmt.Sprint(prec) + "f"
	if s.N == 1 {
		return fmt.Sprintf(f, s.Median)
	}
	return fmt.Sprintf(f+" ("+f+"–"+f+")", s.Median, s.Min, s.Max)
}

func writeMarkdown(w io.Writer, rep *report) {
	fmt.Fprintf(w, "`%s`\n\n", rep.Command)
	fmt.Fprintf(w, "host: %s, %s CPUs, %s, %s; load average (1/5/15 min) %s at the start, %s at the end\n\n",
		rep.Host["cpu"], rep.Host["cpus"], rep.Host["kernel"], rep.Host["go"], rep.Host["loadavg_at_start"], rep.Host["loadavg_at_end"])
	fmt.Fprintf(w, "Medians of %v rounds, (min–max); each trial ran as %v chunks alternating with the other implementation's. CPU and context switches per request (stream: CPU per GB, switches per batch).\n\n", rep.Config["repeat"], rep.Config["chunks"])
	fmt.Fprintln(w, "| mode | transport | impl | rate | client CPU | server CPU | client cs/op (vol+invol) | server cs/op | p50 µs | p99 µs | client syscalls/op | server syscalls/op |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range rep.Rows {
		rate := fmtStat(r.Rate, 0) + " " + r.Unit
		if r.Unit == "GB/s" {
			rate = fmtStat(r.Rate, 2) + " GB/s, " + fmtStat(r.MRowsPerS, 1) + " Mrows/s"
		}
		cpuPrec := 1
		if r.CPUUnit == "s/GB" {
			cpuPrec = 3
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s %s | %s %s | %s | %s | %s | %s | %s | %s |\n",
			r.Mode, r.Transport, r.Impl, rate,
			fmtStat(r.ClientCPU, cpuPrec), r.CPUUnit, fmtStat(r.ServerCPU, cpuPrec), r.CPUUnit,
			fmtStat(r.ClientCS, 2), fmtStat(r.ServerCS, 2), fmtStat(r.P50US, 1), fmtStat(r.P99US, 1),
			fmtStat(r.SyscallsPerOp, 2), fmtStat(r.SrvSyscallsOp, 2))
	}
	if len(rep.Ratios) > 0 {
		fmt.Fprintln(w, "\n| mode | ratio | median (min–max), per round |")
		fmt.Fprintln(w, "| --- | --- | --- |")
		for _, r := range rep.Ratios {
			fmt.Fprintf(w, "| %s | %s | %s |\n", r.Mode, r.What, fmtStat(r.Ratio, 2))
		}
	}
	for _, r := range rep.Rows {
		if r.StreamsPerConn != "" {
			fmt.Fprintf(w, "\nstreams per connection, %s over %s (last round): %s\n", r.Mode, r.Transport, r.StreamsPerConn)
		}
	}
}

func writeJSON(path string, rep *report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func hostInfo() map[string]string {
	h := map[string]string{"go": runtime.Version(), "cpus": fmt.Sprint(runtime.NumCPU()), "date": time.Now().UTC().Format(time.RFC3339)}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				h["cpu"] = strings.TrimSpace(l[strings.Index(l, ":")+1:])
				break
			}
		}
	}
	if out, err := exec.Command("uname", "-r").Output(); err == nil {
		h["kernel"] = "linux " + strings.TrimSpace(string(out))
	}
	h["loadavg_at_end"] = loadAvg()
	return h
}

// loadAvg returns /proc/loadavg's 1, 5 and 15 minute averages.
func loadAvg() string {
	la, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(la))
	return strings.Join(f[:min(3, len(f))], " ")
}
