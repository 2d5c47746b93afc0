package ipcbench

import (
	"path/filepath"
	"testing"
	"time"
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
	if got := cfg.implsFor("shm"); len(got) != 1 || got[0] != "link" {
		t.Errorf("impls for shm %v", got)
	}
	gb := map[string]int64{"tcp": 1e9, "unix": 2e9, "shm": 4e9}
	var trials []*trial
	for round := range 2 {
		for _, tr := range cfg.Transports {
			for _, impl := range cfg.implsFor(tr) {
				tl := &trial{Mode: "stream", Transport: tr, Impl: impl, Round: round, WallS: 1, Ops: 100, Bytes: gb[tr]}
				if impl == "raw" {
					tl.Bytes *= 2
				}
				if tr == "shm" {
					tl.RingBytes, tl.SocketBytes, tl.RingFallbacks = 3e9, 1e9, uint64(round)
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
			if r.RingBytes.Median != 3e9 || r.RingShare.Median != 0.75 || r.RingFallbacks.Max != 1 || r.RingFallbacks.N != 2 {
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
