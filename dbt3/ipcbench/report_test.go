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
