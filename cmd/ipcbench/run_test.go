package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colinkdb/colink/dbt3/ipcbench"
	"github.com/colinkdb/colink/internal/testbin"
)

// A short real run against a primproc over unix and shm: the shm trials move the stream's
// batch bodies through the rings, and the link's ratios pair shm with unix.
func TestRunShm(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs primproc")
	}
	dir := testbin.TempDir(t)
	testbin.Build(t, dir, "./cmd/primproc")
	testbin.Build(t, dir, "./cmd/exemgr")
	self := testbin.Build(t, dir, "./cmd/ipcbench")
	out := filepath.Join(dir, "ipcbench.json")
	start := time.Now()
	cmd := exec.Command(self, "--bin", dir, "--mode", "sync,stream", "--transport", "unix,shm", "--repeat", "1", "--chunks", "1",
		"--duration", "200ms", "--warmup", "50ms", "--stream-bytes", "50000000", "--raw", "--raw-write-kib", "64,1024", "--json", out)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
	}
	t.Logf("ipcbench over unix and shm: %v", time.Since(start))
	for _, want := range []string{"| stream | shm | link |", "| stream | shm/unix link |", "rings, stream over shm, per trial:", "| stream | - | memcpy |", "| stream | link/memcpy shm |", "raw stream over unix by write size: 64 KiB", "| stream | link/raw unix |"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("output lacks %q:\n%s", want, b)
		}
	}
	rows, err := ipcbench.ReadSummary(out)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rows {
		if r.Mode == "stream" && r.Transport == "shm" {
			found = true
			if r.Rate.Median <= 0 || r.RingBytes.Median < 40e6 || r.RingShare.Median < 0.9 || r.RingFallbacks.N != 1 || r.ClientCPU.N != 1 || r.ServerCS.N != 1 {
				t.Errorf("stream over shm: %+v", r)
			}
		}
	}
	if !found {
		t.Errorf("no stream over shm in %+v", rows)
	}
}

// A short real run of the stream mode with the Flight baseline over tcp and unix: Flight's
// rows (a server child of this binary's) have rates and both ends' CPU, and the link/flight
// ratios are in the report.
func TestRunFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs primproc")
	}
	dir := testbin.TempDir(t)
	testbin.Build(t, dir, "./cmd/primproc")
	testbin.Build(t, dir, "./cmd/exemgr")
	self := testbin.Build(t, dir, "./cmd/ipcbench")
	out := filepath.Join(dir, "ipcbench.json")
	start := time.Now()
	cmd := exec.Command(self, "--bin", dir, "--mode", "stream", "--transport", "tcp,unix", "--repeat", "1", "--chunks", "2",
		"--stream-bytes", "30000000", "--memcpy=false", "--json", out)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
	}
	t.Logf("ipcbench with flight over tcp and unix: %v", time.Since(start))
	for _, want := range []string{"| stream | tcp | flight |", "| stream | unix | flight |", "| stream | link/flight tcp |", "| stream | link/flight unix |", "| stream | unix/tcp flight |"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("output lacks %q:\n%s", want, b)
		}
	}
	rows, err := ipcbench.ReadSummary(out)
	if err != nil {
		t.Fatal(err)
	}
	flights := map[string]bool{}
	for _, r := range rows {
		if r.Impl != "flight" {
			continue
		}
		flights[r.Transport] = true
		if r.Mode != "stream" || r.Rate.Median <= 0 || r.MRowsPerS.Median <= 0 || r.ClientCPU.Median <= 0 || r.ServerCPU.Median <= 0 || r.P50US.Median <= 0 {
			t.Errorf("flight over %s: %+v", r.Transport, r)
		}
	}
	if !flights["tcp"] || !flights["unix"] || len(flights) != 2 {
		t.Errorf("flight rows over %v, want tcp and unix", flights)
	}
}
