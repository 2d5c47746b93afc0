package bench

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/colinkdb/colink/dbt3/ipcbench"
	"github.com/colinkdb/colink/dbt3/report"
)

// streamCosts runs ipcbench's stream mode (the binary bin, a process of its own) over the
// transports against the running primproc at primprocURL (the one the queries used, its
// data and cache untouched: the stream is synthetic), repeat rounds of streamBytes each, and
// returns the link's CPU per GB (both ends) and wall time per GB for each transport, with
// the command it ran. Only the link is measured (--flight=false: its Flight baseline would
// double the stream's time for figures nothing here reads).
func streamCosts(ctx context.Context, bin, primprocURL, dir string, transports []string, repeat int, streamBytes int64) (map[string]report.StreamCost, string, error) {
	out := filepath.Join(dir, "ipcbench-stream.json")
	args := []string{"--mode", "stream", "--transport", strings.Join(transports, ","), "--repeat", strconv.Itoa(repeat),
		"--stream-bytes", strconv.FormatInt(streamBytes, 10), "--connect", primprocURL, "--flight=false", "--json", out}
	command := "ipcbench " + strings.Join(args, " ")
	cmd := exec.CommandContext(ctx, bin, args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, command, fmt.Errorf("%s: %w\n%s", command, err, b)
	}
	rows, err := ipcbench.ReadSummary(out)
	if err != nil {
		return nil, command, err
	}
	costs := map[string]report.StreamCost{}
	for _, r := range rows {
		if r.Mode != "stream" || r.Impl != "link" {
			continue
		}
		if r.Unit != "GB/s" || r.CPUUnit != "s/GB" || r.Rate.Median <= 0 {
			return nil, command, fmt.Errorf("%s: stream over %s in %q and %q, want GB/s and s/GB", out, r.Transport, r.Unit, r.CPUUnit)
		}
		costs[r.Transport] = report.StreamCost{CPU: r.ClientCPU.Median + r.ServerCPU.Median, Wall: 1 / r.Rate.Median}
	}
	for _, tr := range transports {
		if _, ok := costs[tr]; !ok {
			return nil, command, fmt.Errorf("%s: no stream figure for %s", out, tr)
		}
	}
	return costs, command, nil
}
