package ipcbench

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/colinkdb/colink/dbt3/measure"
	"github.com/colinkdb/colink/internal/atomicfile"
)

// Row is the summary of one mode over one transport by one implementation ("link", "raw",
// "flight" or "memcpy"): its rate in Unit (req/s, or GB/s for a stream) and each end's CPU in CPUUnit (µs/req
// or s/GB), as the JSON's "summary" holds it.
type Row struct {
	Mode      string `json:"mode"`
	Transport string `json:"transport"`
	Impl      string `json:"impl"`
	// WriteSize is the raw stream server's write size (bytes; 0: a message a write); of a
	// sweep (Config.RawWriteSizes), Best marks the fastest, the one link/raw is taken against.
	WriteSize      int          `json:"write_size,omitempty"`
	Best           bool         `json:"best,omitempty"`
	Unit           string       `json:"unit"` // of Rate
	Rate           measure.Stat `json:"rate"`
	MRowsPerS      measure.Stat `json:"mrows_per_s,omitempty"`
	ClientCPU      measure.Stat `json:"client_cpu"` // µs per request, or s per GB
	ServerCPU      measure.Stat `json:"server_cpu"`
	CPUUnit        string       `json:"cpu_unit"`
	ClientCS       measure.Stat `json:"client_cs_per_op"` // voluntary + involuntary, per request or per batch
	ServerCS       measure.Stat `json:"server_cs_per_op"`
	ClientVolCS    measure.Stat `json:"client_voluntary_cs_per_op"`
	ClientInvolCS  measure.Stat `json:"client_involuntary_cs_per_op"`
	ServerVolCS    measure.Stat `json:"server_voluntary_cs_per_op"`
	ServerInvolCS  measure.Stat `json:"server_involuntary_cs_per_op"`
	P50US          measure.Stat `json:"p50_us"`
	P99US          measure.Stat `json:"p99_us"`
	SyscallsPerOp  measure.Stat `json:"client_syscalls_per_op,omitempty"`
	SrvSyscallsOp  measure.Stat `json:"server_syscalls_per_op,omitempty"`
	StreamsPerConn string       `json:"streams_per_conn,omitempty"`
	// Link over shm: the bytes through the rings per trial, their share of all the bytes
	// the link moved (rings and sockets), and the batches sent on the socket for want of
	// ring space per trial.
	RingBytes     measure.Stat `json:"ring_bytes,omitzero"`
	RingShare     measure.Stat `json:"ring_share,omitzero"`
	RingFallbacks measure.Stat `json:"ring_fallbacks,omitzero"`
	// RingWakeups is the wake-ups sent per ring batch: under 1 where batches shared a write.
	RingWakeups measure.Stat `json:"ring_wakeups_per_batch,omitzero"`
}

type ratio struct {
	Mode  string       `json:"mode"`
	What  string       `json:"what"` // "link/raw tcp", "link/flight unix", "shm link/flight unix", "unix/tcp link", "shm/unix link", "link/memcpy tcp", …
	Ratio measure.Stat `json:"ratio"`
}

type report struct {
	Command  string            `json:"command"`
	Host     map[string]string `json:"host"`
	Config   map[string]any    `json:"config"`
	MsgBytes int64             `json:"stream_message_bytes"`
	Rows     []Row             `json:"summary"`
	Ratios   []ratio           `json:"ratios"`
	Trials   []*trial          `json:"trials"`
}

func summarize(o Config, trials []*trial, msgBytes int64) *report {
	rep := &report{MsgBytes: msgBytes, Config: map[string]any{
		"modes": o.Modes, "transports": o.Transports, "raw": o.Raw, "repeat": o.Repeat, "chunks": o.Chunks,
		"duration": o.Duration.String(), "clients": o.Clients, "inflight": o.Inflight, "payload": o.Payload, "method": o.Method,
		"conns_per_peer": o.ConnsPerPeer, "streams": o.Streams, "stream_bytes": o.StreamBytes, "synth": o.Synth,
		"connect": o.Connect, "memcpy": o.Memcpy, "raw_write_sizes": o.RawWriteSizes, "flight": o.Flight,
		"stream_window": o.StreamWindow,
	}}
	type key struct {
		mode, tr, impl string
		ws             int
	}
	groups := map[key][]*trial{}
	var order []key
	for _, t := range trials {
		k := key{t.Mode, t.Transport, t.Impl, t.WriteSize}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], t)
	}
	sort.SliceStable(order, func(i, j int) bool {
		return slices.Index(o.Modes, order[i].mode) < slices.Index(o.Modes, order[j].mode)
	})
	for _, k := range order {
		ts := groups[k]
		r := Row{Mode: k.mode, Transport: k.tr, Impl: k.impl, WriteSize: k.ws}
		var rate, mrows, ccpu, scpu, ccs, scs, cv, ci, sv, si, p50, p99, sys, ssys, ring, share, fallbacks, wakeups []float64
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
				if t.Transport == "shm" {
					ring = append(ring, float64(t.RingBytes))
					share = append(share, float64(t.RingBytes)/float64(max(t.RingBytes+t.SocketBytes, 1)))
					fallbacks = append(fallbacks, float64(t.RingFallbacks))
					if t.RingBatches > 0 {
						wakeups = append(wakeups, float64(t.RingWakeups)/float64(t.RingBatches))
					}
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
		r.Rate, r.MRowsPerS, r.ClientCPU, r.ServerCPU = measure.Summarize(rate), measure.Summarize(mrows), measure.Summarize(ccpu), measure.Summarize(scpu)
		r.ClientCS, r.ServerCS, r.P50US, r.P99US = measure.Summarize(ccs), measure.Summarize(scs), measure.Summarize(p50), measure.Summarize(p99)
		r.ClientVolCS, r.ClientInvolCS, r.ServerVolCS, r.ServerInvolCS = measure.Summarize(cv), measure.Summarize(ci), measure.Summarize(sv), measure.Summarize(si)
		r.SyscallsPerOp, r.SrvSyscallsOp = measure.Summarize(sys), measure.Summarize(ssys)
		r.RingBytes, r.RingShare, r.RingFallbacks = measure.Summarize(ring), measure.Summarize(share), measure.Summarize(fallbacks)
		r.RingWakeups = measure.Summarize(wakeups)
		if k.impl == "link" && len(ts[len(ts)-1].StreamsPer) > 1 {
			r.StreamsPerConn = fmt.Sprint(ts[len(ts)-1].StreamsPer)
		}
		rep.Rows = append(rep.Rows, r)
	}
	// Of a raw stream's write sizes, the fastest (by median rate) stands for raw.
	bestWS := map[[2]string]int{}
	bestRate := map[[2]string]float64{}
	sweeps := map[[2]string]int{}
	for _, r := range rep.Rows {
		if mt := [2]string{r.Mode, r.Transport}; r.Impl == "raw" {
			sweeps[mt]++
			if rate, ok := bestRate[mt]; !ok || r.Rate.Median > rate {
				bestRate[mt], bestWS[mt] = r.Rate.Median, r.WriteSize
			}
		}
	}
	for i, r := range rep.Rows {
		if mt := [2]string{r.Mode, r.Transport}; r.Impl == "raw" && sweeps[mt] > 1 && bestWS[mt] == r.WriteSize {
			rep.Rows[i].Best = true
		}
	}
	// Ratios are taken within a round (trials run back to back), then summarised.
	find := func(mode, tr, impl string, round int) *trial {
		ws := 0
		if impl == "raw" {
			ws = bestWS[[2]string{mode, tr}]
		}
		for _, t := range groups[key{mode, tr, impl, ws}] {
			if t.Round == round {
				return t
			}
		}
		return nil
	}
	for _, mode := range o.Modes {
		add := func(what string, num, den func(round int) *trial) {
			var xs []float64
			for round := range o.Repeat {
				a, b := num(round), den(round)
				if a != nil && b != nil && b.rate() > 0 {
					xs = append(xs, a.rate()/b.rate())
				}
			}
			if len(xs) > 0 {
				rep.Ratios = append(rep.Ratios, ratio{Mode: mode, What: what, Ratio: measure.Summarize(xs)})
			}
		}
		for _, tr := range o.Transports {
			add("link/raw "+tr, func(r int) *trial { return find(mode, tr, "link", r) }, func(r int) *trial { return find(mode, tr, "raw", r) })
		}
		// The link against Flight over a socket of the same kind, and shm's link (Flight has
		// no shm) against Flight over the unix socket, the socket shm's link keeps beside its
		// rings.
		for _, tr := range o.Transports {
			add("link/flight "+tr, func(r int) *trial { return find(mode, tr, "link", r) }, func(r int) *trial { return find(mode, tr, "flight", r) })
		}
		add("shm link/flight unix", func(r int) *trial { return find(mode, "shm", "link", r) }, func(r int) *trial { return find(mode, "unix", "flight", r) })
		// Each transport's stream as a fraction of the memcpy baseline's rate, per round.
		for _, tr := range o.Transports {
			for _, impl := range []string{"link", "raw", "flight"} {
				add(impl+"/memcpy "+tr, func(r int) *trial { return find(mode, tr, impl, r) }, func(r int) *trial { return find(mode, memcpyTransport, "memcpy", r) })
			}
		}
		for _, pair := range transportPairs(o.Transports) {
			for _, impl := range []string{"link", "raw", "flight"} {
				add(pair[0]+"/"+pair[1]+" "+impl, func(r int) *trial { return find(mode, pair[0], impl, r) }, func(r int) *trial { return find(mode, pair[1], impl, r) })
			}
		}
	}
	return rep
}

// transportPairs returns the pairs of the run's transports whose ratios are reported, the
// numerator first: each transport against each one before it in transports (unix/tcp,
// shm/tcp, shm/unix).
func transportPairs(run []string) [][2]string {
	var out [][2]string
	for i, a := range transports {
		for _, b := range transports[:i] {
			if slices.Contains(run, a) && slices.Contains(run, b) {
				out = append(out, [2]string{a, b})
			}
		}
	}
	return out
}

func fmtStat(s measure.Stat, prec int) string {
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
	fmt.Fprintf(w, "Medians of %v rounds, (min–max); each trial ran as %v chunks alternating with the other implementations'. CPU and context switches per request (stream: CPU per GB, switches per batch).\n\n", rep.Config["repeat"], rep.Config["chunks"])
	fmt.Fprintln(w, "| mode | transport | impl | rate | client CPU | server CPU | client cs/op (vol+invol) | server cs/op | p50 µs | p99 µs | client syscalls/op | server syscalls/op |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	swept := map[string][]Row{} // by mode and transport: a raw stream's write sizes
	for _, r := range rep.Rows {
		impl := r.Impl
		if r.Impl == "raw" && r.WriteSize > 0 {
			k := r.Mode + " over " + r.Transport
			swept[k] = append(swept[k], r)
			if !r.Best && !onlySize(rep.Rows, r) {
				continue // in the sweep's line below
			}
			impl = fmt.Sprintf("raw (%s writes)", sizeText(r.WriteSize))
		}
		rate := fmtStat(r.Rate, 0) + " " + r.Unit
		if r.Unit == "GB/s" {
			rate = fmtStat(r.Rate, 2) + " GB/s, " + fmtStat(r.MRowsPerS, 1) + " Mrows/s"
		}
		cpuPrec := 1
		if r.CPUUnit == "s/GB" {
			cpuPrec = 3
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s %s | %s %s | %s | %s | %s | %s | %s | %s |\n",
			r.Mode, r.Transport, impl, rate,
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
	for _, k := range slices.Sorted(maps.Keys(swept)) {
		if rows := swept[k]; len(rows) > 1 {
			var parts []string
			for _, r := range rows {
				p := sizeText(r.WriteSize) + " " + fmtStat(r.Rate, 2) + " GB/s"
				if r.Best {
					p += " (best: the raw of link/raw)"
				}
				parts = append(parts, p)
			}
			fmt.Fprintf(w, "\nraw %s by write size: %s\n", k, strings.Join(parts, ", "))
		}
	}
	for _, r := range rep.Rows {
		if r.RingBytes.N > 0 {
			fmt.Fprintf(w, "\nrings, %s over %s, per trial: %s GB through the rings, %s of the link's bytes, %s batches on the socket for want of ring space",
				r.Mode, r.Transport, fmtStat(scaled(r.RingBytes, 1e-9), 3), fmtStat(scaled(r.RingShare, 100), 1)+" %", fmtStat(r.RingFallbacks, 0))
			if r.RingWakeups.N > 0 {
				fmt.Fprintf(w, ", %s wake-ups per ring batch (a batch queued while a write was under way shares it and sends none)", fmtStat(r.RingWakeups, 2))
			}
			fmt.Fprintln(w)
		}
	}
	for _, r := range rep.Rows {
		if r.StreamsPerConn != "" {
			fmt.Fprintf(w, "\nstreams per connection, %s over %s (last round): %s\n", r.Mode, r.Transport, r.StreamsPerConn)
		}
	}
}

// onlySize reports whether r is the only write size of its raw mode and transport.
func onlySize(rows []Row, r Row) bool {
	n := 0
	for _, x := range rows {
		if x.Impl == "raw" && x.Mode == r.Mode && x.Transport == r.Transport {
			n++
		}
	}
	return n == 1
}

// sizeText is a write size: "64 KiB", "1 MiB".
func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// scaled is s with its figures multiplied by k.
func scaled(s measure.Stat, k float64) measure.Stat {
	s.Median, s.Min, s.Max = s.Median*k, s.Min*k, s.Max*k
	return s
}

func writeJSON(path string, rep *report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'), 0o644)
}

// ReadSummary reads the summary rows of a run's JSON (Config.JSONPath).
func ReadSummary(path string) ([]Row, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep struct {
		Rows []Row `json:"summary"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rep.Rows, nil
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
	h["loadavg_at_end"] = measure.LoadAverage()
	return h
}
