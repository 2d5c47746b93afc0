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
