package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/colinkdb/colink/dbt3/report"
)

// ipcbenchSummary is the part of ipcbench's JSON the stream check reads: per mode,
// transport and implementation, the rate (GB/s for a stream) and each end's CPU (s/GB).
type ipcbenchSummary struct {
	Summary []struct {
		Mode      string `json:"mode"`
		Transport string `json:"transport"`
		Impl      string `json:"impl"`
		Unit      string `json:"unit"`
		CPUUnit   string `json:"cpu_unit"`
		Rate      struct {
			Median float64 `json:"median"`
		} `json:"rate"`
		ClientCPU struct {
			Median float64 `json:"median"`
		} `json:"client_cpu"`
		ServerCPU struct {
			Median float64 `json:"median"`
		} `json:"server_cpu"`
	} `json:"summary"`
}

// streamCosts runs ipcbench's stream mode over the transports against the running primproc
// at primprocURL (the one the queries used, its data and cache untouched: the stream is
// synthetic), repeat rounds of streamBytes each, and returns the link's CPU per GB (both
// ends) and wall time per GB for each transport, with the command it ran.
func streamCosts(ctx context.Context, ipcbench, primprocURL, dir string, transports []string, repeat int, streamBytes int64) (map[string]report.StreamCost, string, error) {
	out := filepath.Join(dir, "ipcbench-stream.json")
	args := []string{"--mode", "stream", "--transport", strings.Join(transports, ","), "--repeat", strconv.Itoa(repeat),
		"--stream-bytes", strconv.FormatInt(streamBytes, 10), "--connect", primprocURL, "--json", out}
	command := "ipcbench " + strings.Join(args, " ")
	cmd := exec.CommandContext(ctx, ipcbench, args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, command, fmt.Errorf("%s: %w\n%s", command, err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, command, err
	}
	var sum ipcbenchSummary
	if err := json.Unmarshal(data, &sum); err != nil {
		return nil, command, fmt.Errorf("%s: %w", out, err)
	}
	costs := map[string]report.StreamCost{}
	for _, r := range sum.Summary {
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
