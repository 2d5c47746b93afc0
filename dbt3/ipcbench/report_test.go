package ipcbench

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colinkdb/colink/dbt3/measure"
)

// The summary written as JSON reads back through ReadSummary, as dbt3 compare's stream check
// reads it: per mode, transport and implementation, the rate and each end's CPU in their
// units.
func TestSummaryRoundTrip(t *testing.T) {
	cfg := Config{Modes: []string{"stream"}, Transports: []string{"tcp", "unix"}, Repeat: 2, Chunks: 1, Duration: time.Second}
	var trials []*trial
	for round := range 2 {
		for i, tr := range cfg.Transports {
			trials = append(trials, &trial{Mode: "stream", Transport: tr, Impl: "link", Round: round,
				WallS: 1, Ops: 100, Bytes: int64(i+1) * 1e9, Rows: 100 * 65536,
				Client: usage{UserUS: 300_000}, Server: usage{SysUS: 100_000}})
		}
	}
	rep := summarize(cfg, trials, 1e7)
	path := filepath.Join(t.TempDir(), "ipcbench.json")
	if err := writeJSON(path, rep); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadSummary(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	for i, r := range rows {
		gb := float64(i + 1)
		if r.Mode != "stream" || r.Transport != cfg.Transports[i] || r.Impl != "link" || r.Unit != "GB/s" || r.CPUUnit != "s/GB" ||
			r.Rate.Median != gb || r.Rate.N != 2 || r.ClientCPU.Median != 0.3/gb || r.ServerCPU.Median != 0.1/gb {
			t.Errorf("row %d: %+v", i, r)
		}
	}
	if _, err := ReadSummary(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("a missing file read without error")
	}
}

// Over tcp, unix and shm the link's ratios pair each transport with those before it, raw
// pairs only where both have a plain socket, and shm's rows carry the rings' figures.
func TestSummaryThreeTransports(t *testing.T) {
	cfg := Config{Modes: []string{"stream"}, Transports: []string{"shm", "tcp", "unix"}, Raw: true, Memcpy: true, Repeat: 2, Chunks: 1}
	if got := cfg.implsFor("stream", "shm"); len(got) != 1 || got[0].impl != "link" {
		t.Errorf("impls for shm %v", got)
	}
	gb := map[string]int64{"tcp": 1e9, "unix": 2e9, "shm": 4e9}
	var trials []*trial
	for round := range 2 {
		for _, tr := range cfg.Transports {
			for _, impl := range cfg.implsFor("stream", tr) {
				tl := &trial{Mode: "stream", Transport: tr, Impl: impl.impl, Round: round, WallS: 1, Ops: 100, Bytes: gb[tr]}
				if impl.impl == "raw" {
					tl.Bytes *= 2
				}
				if tr == "shm" {
					tl.RingBytes, tl.SocketBytes, tl.RingFallbacks = 3e9, 1e9, uint64(round)
					tl.RingBatches, tl.RingWakeups = 400, 100+100*uint64(round) // 0.25 and 0.5 a batch
				}
				trials = append(trials, tl)
			}
		}
		trials = append(trials, &trial{Mode: "stream", Transport: memcpyTransport, Impl: "memcpy", Round: round, WallS: 1, Ops: 100, Bytes: 8e9})
	}
	rep := summarize(cfg, trials, 1e7)
	ratios := map[string]float64{}
	var whats []string
	for _, r := range rep.Ratios {
		ratios[r.What] = r.Ratio.Median
		whats = append(whats, r.What)
	}
	want := map[string]float64{"link/raw tcp": 0.5, "link/raw unix": 0.5, "unix/tcp link": 2, "unix/tcp raw": 2, "shm/tcp link": 4, "shm/unix link": 2,
		"link/memcpy tcp": 0.125, "raw/memcpy tcp": 0.25, "link/memcpy unix": 0.25, "raw/memcpy unix": 0.5, "link/memcpy shm": 0.5}
	if len(ratios) != len(want) {
		t.Errorf("ratios %v, want %v", whats, want)
	}
	for w, x := range want {
		if ratios[w] != x {
			t.Errorf("%s = %v, want %v", w, ratios[w], x)
		}
	}
	memcpyRow := false
	for _, r := range rep.Rows {
		if r.Impl == "memcpy" {
			memcpyRow = r.Rate.Median == 8 && r.Unit == "GB/s"
		}
		if r.Transport == "shm" {
			if r.RingBytes.Median != 3e9 || r.RingShare.Median != 0.75 || r.RingFallbacks.Max != 1 || r.RingFallbacks.N != 2 ||
				r.RingWakeups.Min != 0.25 || r.RingWakeups.Max != 0.5 {
				t.Errorf("shm row %+v", r)
			}
		} else if r.RingBytes.N != 0 {
			t.Errorf("%s %s has ring figures: %+v", r.Transport, r.Impl, r.RingBytes)
		}
	}
	if !memcpyRow {
		t.Errorf("no memcpy row at 8 GB/s in %+v", rep.Rows)
	}
}

// The raw stream's write-size sweep: every size is a row of the JSON, the fastest by median
// is marked best and is the raw that link/raw is taken against, round by round; the
// Markdown shows the best in the table and every size in one line.
func TestRawWriteSweep(t *testing.T) {
	sizes := []int{64 << 10, 256 << 10, 1 << 20, 4 << 20}
	cfg := Config{Modes: []string{"sync", "stream"}, Transports: []string{"tcp"}, Raw: true, RawWriteSizes: sizes, Repeat: 2, Chunks: 1}
	if got := cfg.implsFor("sync", "tcp"); len(got) != 2 || got[1] != (implRun{impl: "raw"}) {
		t.Errorf("sync impls %v", got)
	}
	if got := cfg.implsFor("stream", "tcp"); len(got) != 5 || got[3].writeSize != 1<<20 || got[3].String() != "raw/1024KiB" {
		t.Errorf("stream impls %v", got)
	}
	// GB/s by write size: 64 KiB 1, 256 KiB 3, 1 MiB 4 (round 1) and 3 (round 2), 4 MiB 2.5.
	rate := map[int][2]float64{64 << 10: {1, 1}, 256 << 10: {3, 3}, 1 << 20: {4, 3}, 4 << 20: {2.5, 2.5}}
	var trials []*trial
	for round := range 2 {
		trials = append(trials, &trial{Mode: "sync", Transport: "tcp", Impl: "link", Round: round, WallS: 1, Ops: 100},
			&trial{Mode: "sync", Transport: "tcp", Impl: "raw", Round: round, WallS: 1, Ops: 200},
			&trial{Mode: "stream", Transport: "tcp", Impl: "link", Round: round, WallS: 1, Ops: 100, Bytes: 1.5e9})
		for _, ws := range sizes {
			trials = append(trials, &trial{Mode: "stream", Transport: "tcp", Impl: "raw", WriteSize: ws, Round: round, WallS: 1, Ops: 100, Bytes: int64(rate[ws][round] * 1e9)})
		}
	}
	rep := summarize(cfg, trials, 1e7)
	var best []int
	raws := 0
	for _, r := range rep.Rows {
		if r.Mode == "stream" && r.Impl == "raw" {
			raws++
			if r.Best {
				best = append(best, r.WriteSize)
			}
		}
	}
	// Medians: 64 KiB 1, 256 KiB 3, 1 MiB 3.5, 4 MiB 2.5.
	if raws != 4 || len(best) != 1 || best[0] != 1<<20 {
		t.Fatalf("%d raw stream rows, best %v", raws, best)
	}
	ratios := map[string]measure.Stat{}
	for _, r := range rep.Ratios {
		ratios[r.Mode+" "+r.What] = r.Ratio
	}
	if st := ratios["stream link/raw tcp"]; st.N != 2 || st.Min != 1.5/4 || st.Max != 1.5/3 {
		t.Errorf("stream link/raw tcp %+v, want 0.375 and 0.5 against 1 MiB writes", st)
	}
	if st := ratios["sync link/raw tcp"]; st.Median != 0.5 {
		t.Errorf("sync link/raw tcp %+v", st)
	}
	var b strings.Builder
	writeMarkdown(&b, rep)
	md := b.String()
	for _, want := range []string{"| stream | tcp | raw (1 MiB writes) |", "| sync | tcp | raw |",
		"raw stream over tcp by write size: 64 KiB 1.00 (1.00–1.00) GB/s, 256 KiB 3.00 (3.00–3.00) GB/s, 1 MiB 3.50 (3.00–4.00) GB/s (best: the raw of link/raw), 4 MiB 2.50 (2.50–2.50) GB/s"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| raw (64 KiB writes) |") {
		t.Errorf("a slower write size in the table:\n%s", md)
	}
}

// Flight runs in the stream mode over tcp and unix only; the link is taken against it over
// the same kind of socket and, for shm, over unix, round by round; its rows have no syscall
// counts.
func TestSummaryFlight(t *testing.T) {
	cfg := Config{Modes: []string{"sync", "stream"}, Transports: []string{"tcp", "unix", "shm"}, Flight: true, Repeat: 2, Chunks: 1}
	for _, c := range []struct {
		mode, tr string
		want     []implRun
	}{
		{"stream", "tcp", []implRun{{impl: "link"}, {impl: "flight"}}},
		{"stream", "unix", []implRun{{impl: "link"}, {impl: "flight"}}},
		{"stream", "shm", []implRun{{impl: "link"}}},
		{"sync", "tcp", []implRun{{impl: "link"}}},
	} {
		if got := cfg.implsFor(c.mode, c.tr); !slices.Equal(got, c.want) {
			t.Errorf("impls for %s over %s: %v, want %v", c.mode, c.tr, got, c.want)
		}
	}
	withRaw := cfg
	withRaw.Raw, withRaw.RawWriteSizes = true, []int{64 << 10}
	if got := withRaw.implsFor("stream", "unix"); len(got) != 3 || got[1] != (implRun{impl: "raw", writeSize: 64 << 10}) || got[2].impl != "flight" {
		t.Errorf("impls with raw: %v", got)
	}
	for _, c := range []struct {
		cfg  Config
		want bool
	}{
		{cfg, true},
		{Config{Modes: []string{"sync", "async"}, Transports: []string{"tcp"}, Flight: true}, false},
		{Config{Modes: []string{"stream"}, Transports: []string{"shm"}, Flight: true}, false},
		{Config{Modes: []string{"stream"}, Transports: []string{"unix"}}, false},
	} {
		if got := c.cfg.flightRuns(); got != c.want {
			t.Errorf("flightRuns for %v over %v (flight %v): %v", c.cfg.Modes, c.cfg.Transports, c.cfg.Flight, got)
		}
	}
	// GB/s per round: the link 2 and 3 over tcp, 3 over unix, 8 over shm; Flight 0.5 and 1
	// over tcp, 1 and 1.5 over unix.
	link := map[string][2]float64{"tcp": {2, 3}, "unix": {3, 3}, "shm": {8, 8}}
	flight := map[string][2]float64{"tcp": {0.5, 1}, "unix": {1, 1.5}}
	var trials []*trial
	for round := range 2 {
		trials = append(trials, &trial{Mode: "sync", Transport: "tcp", Impl: "link", Round: round, WallS: 1, Ops: 100})
		for _, tr := range cfg.Transports {
			trials = append(trials, &trial{Mode: "stream", Transport: tr, Impl: "link", Round: round, WallS: 1, Ops: 100,
				Bytes: int64(link[tr][round] * 1e9), ReadSyscalls: 300})
			if gb, ok := flight[tr]; ok {
				trials = append(trials, &trial{Mode: "stream", Transport: tr, Impl: "flight", Round: round, WallS: 1, Ops: 100,
					Bytes: int64(gb[round] * 1e9), Client: usage{UserUS: 200_000}, Server: usage{SysUS: 100_000}})
			}
		}
	}
	rep := summarize(cfg, trials, 1e7)
	ratios := map[string]measure.Stat{}
	for _, r := range rep.Ratios {
		if r.Mode == "stream" {
			ratios[r.What] = r.Ratio
		} else if strings.Contains(r.What, "flight") {
			t.Errorf("%s ratio %s", r.Mode, r.What)
		}
	}
	for what, want := range map[string][2]float64{
		"link/flight tcp": {3, 4}, "link/flight unix": {2, 3}, "shm link/flight unix": {16.0 / 3, 8},
		"unix/tcp flight": {1.5, 2}, "unix/tcp link": {1, 1.5}, "shm/unix link": {8.0 / 3, 8.0 / 3},
	} {
		if st := ratios[what]; st.N != 2 || st.Min != want[0] || st.Max != want[1] {
			t.Errorf("%s: %+v, want %v..%v over 2 rounds", what, st, want[0], want[1])
		}
	}
	if _, ok := ratios["link/flight shm"]; ok {
		t.Error("a link/flight ratio over shm, which Flight has not")
	}
	flights := 0
	for _, r := range rep.Rows {
		if r.Impl != "flight" {
			continue
		}
		flights++
		if r.Mode != "stream" || r.Unit != "GB/s" || r.SyscallsPerOp.N != 0 || r.ClientCPU.N != 2 || r.ServerCPU.N != 2 {
			t.Errorf("flight row %+v", r)
		}
	}
	if flights != 2 {
		t.Errorf("%d flight rows, want tcp and unix", flights)
	}
	var b strings.Builder
	writeMarkdown(&b, rep)
	md := b.String()
	for _, want := range []string{"| stream | tcp | flight | 0.75 (0.50–1.00) GB/s", "| stream | unix | flight |", "| stream | shm link/flight unix | 6.67 (5.33–8.00) |", "| – | – |\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
