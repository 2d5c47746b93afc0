package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/colinkdb/colink/dbt3"
	"github.com/colinkdb/colink/dbt3/faults"
)

// runFaults implements "dbt3 faults".
func runFaults(ctx context.Context, out dbt3.Output, args []string) error {
	fs := newFlagSet("faults", out, "usage: dbt3 faults [--tries N] [--sf F] [--transports tcp,unix,shm] [--faults a,b] [--out results/faults.md]", `
The fault suite. Starts the primprocs and exemgr from this tree's binaries, loads TPC-H
once, then runs every fault N times over each transport: kill -9 and SIGSTOP of each daemon
mid-query, kill -9 mid-write and at a commit's crash points, garbage and oversized input on
both daemons' ports, a thousand idle sessions, a client that never reads its result. Over
tcp every local connection of a try is TCP, over unix a unix socket; over shm exemgr runs
with --transport shm (the primprocs' unix sockets with shared-memory rings), and the MySQL
clients and the bad input use the unix sockets, as shm has no port of its own. Each
try is classified (right, clear error, unclear error, wrong answer, hang, died) against the
fault's criterion; the table goes to --out (Markdown, and JSON beside it) and to stdout.
Exits 1 if any try failed.`)
	j := faults.Job{Config: faults.DefaultConfig()}
	cfg := &j.Config
	var list bool
	fs.StringVar(&cfg.SF, "sf", cfg.SF, "scale factor of the TPC-H data loaded once for all faults")
	fs.IntVar(&cfg.Tries, "tries", cfg.Tries, "tries of each fault over each transport")
	fs.StringSliceVar(&cfg.Transports, "transports", cfg.Transports, "transports to run every fault over: tcp, unix, shm (all three by default)")
	fs.StringSliceVar(&cfg.Faults, "faults", nil, "faults to run (default all; --list names them)")
	fs.IntVar(&cfg.Primprocs, "primprocs", cfg.Primprocs, "primprocs (two-phase commits need two)")
	fs.StringVar(&j.Out, "out", filepath.Join("results", "faults.md"), "Markdown report; the JSON goes beside it (.json)")
	fs.StringVar(&j.Bin, "bin", "", "directory holding primproc, exemgr and primproc-colink_testhooks (default: built from the source tree)")
	fs.DurationVar(&cfg.HeartbeatInterval, "heartbeat-interval", cfg.HeartbeatInterval, "the daemons' --heartbeat-interval")
	fs.DurationVar(&cfg.HeartbeatTimeout, "heartbeat-timeout", cfg.HeartbeatTimeout, "the daemons' --heartbeat-timeout")
	fs.DurationVar(&cfg.NetWriteTimeout, "net-write-timeout", cfg.NetWriteTimeout, "exemgr's --net-write-timeout (whole seconds)")
	fs.DurationVar(&cfg.PoolIdle, "pool-idle", cfg.PoolIdle, "the daemons' --pool-idle; memory checks wait two of them")
	fs.DurationVar(&cfg.Slack, "slack", cfg.Slack, "added to every time bound a loaded machine could stretch")
	fs.DurationVar(&cfg.HangTimeout, "hang-timeout", cfg.HangTimeout, "a statement or wait not done in this long is a hang")
	fs.IntVar(&cfg.IdleConnections, "idle-connections", cfg.IdleConnections, "idle MySQL sessions of idle-connections")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the random moments and bytes")
	fs.BoolVar(&j.Keep, "keep", false, "keep the daemons' data and logs (kept anyway when a try fails)")
	fs.BoolVar(&list, "list", false, "print the faults and their pass criteria, and exit")
	fs.BoolVarP(&j.Verbose, "verbose", "v", false, "log each step on stderr")
	if err := parseFlags(fs, out, args); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return &dbt3.UsageError{Err: err}
	}
	if list {
		for _, f := range faults.Describe(*cfg) {
			fmt.Fprintf(out.Stdout, "%s\n  does:   %s\n  passes: %s\n\n", f.Name, f.Summary, f.Criterion)
		}
		return nil
	}
	j.Command = "dbt3 faults " + strings.Join(args, " ")
	return faults.RunJob(ctx, j, out)
}
