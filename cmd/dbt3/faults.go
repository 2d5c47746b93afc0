package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	daemons "github.com/colinkdb/colink/dbt3/cluster"
	"github.com/colinkdb/colink/dbt3/faults"
)

// runFaults implements "dbt3 faults".
func runFaults(ctx context.Context, e *env, args []string) error {
	fs := pflag.NewFlagSet("faults", pflag.ContinueOnError)
	cfg := faults.DefaultConfig()
	var (
		out, bin string
		keep     bool
		list     bool
		verbose  bool
	)
	fs.StringVar(&cfg.SF, "sf", cfg.SF, "scale factor of the TPC-H data loaded once for all faults")
	fs.IntVar(&cfg.Tries, "tries", cfg.Tries, "tries of each fault over each transport")
	fs.StringSliceVar(&cfg.Transports, "transports", cfg.Transports, "transports to run every fault over: tcp, unix")
	fs.StringSliceVar(&cfg.Faults, "faults", nil, "faults to run (default all; --list names them)")
	fs.IntVar(&cfg.Primprocs, "primprocs", cfg.Primprocs, "primprocs (two-phase commits need two)")
	fs.StringVar(&out, "out", filepath.Join("results", "faults.md"), "Markdown report; the JSON goes beside it (.json)")
	fs.StringVar(&bin, "bin", "", "directory holding primproc, exemgr and primproc-colink_testhooks (default: built from the source tree)")
	fs.DurationVar(&cfg.HeartbeatInterval, "heartbeat-interval", cfg.HeartbeatInterval, "the daemons' --heartbeat-interval")
	fs.DurationVar(&cfg.HeartbeatTimeout, "heartbeat-timeout", cfg.HeartbeatTimeout, "the daemons' --heartbeat-timeout")
	fs.DurationVar(&cfg.NetWriteTimeout, "net-write-timeout", cfg.NetWriteTimeout, "exemgr's --net-write-timeout (whole seconds)")
	fs.DurationVar(&cfg.PoolIdle, "pool-idle", cfg.PoolIdle, "the daemons' --pool-idle; memory checks wait two of them")
	fs.DurationVar(&cfg.Slack, "slack", cfg.Slack, "added to every time bound a loaded machine could stretch")
	fs.DurationVar(&cfg.HangTimeout, "hang-timeout", cfg.HangTimeout, "a statement or wait not done in this long is a hang")
	fs.IntVar(&cfg.IdleConnections, "idle-connections", cfg.IdleConnections, "idle MySQL sessions of idle-connections")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the random moments and bytes")
	fs.BoolVar(&keep, "keep", false, "keep the daemons' data and logs (kept anyway when a try fails)")
	fs.BoolVar(&list, "list", false, "print the faults and their pass criteria, and exit")
	fs.BoolVarP(&verbose, "verbose", "v", false, "log each step on stderr")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: dbt3 faults [--tries N] [--sf F] [--transports tcp,unix] [--faults a,b] [--out results/faults.md]")
		fmt.Fprintln(e.stderr, `
The fault suite. Starts the primprocs and exemgr from this tree's binaries, loads TPC-H
once, then runs every fault N times over each transport: kill -9 and SIGSTOP of each daemon
mid-query, kill -9 mid-write and at a commit's crash points, garbage and oversized input on
both daemons' ports, a thousand idle sessions, a client that never reads its result. Each
try is classified (right, clear error, unclear error, wrong answer, hang, died) against the
fault's criterion; the table goes to --out (Markdown, and JSON beside it) and to stdout.
Exits 1 if any try failed.`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, e, args); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return usagef("%v", err)
	}
	if list {
		for _, f := range faults.Describe(cfg) {
			fmt.Fprintf(e.stdout, "%s\n  does:   %s\n  passes: %s\n\n", f.Name, f.Summary, f.Criterion)
		}
		return nil
	}
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	bins, err := daemons.FindBinaries(ctx, bin, log)
	if err != nil {
		if bin != "" {
			return usagef("--bin: %v", err)
		}
		return err
	}
	if cfg.TestHookPrimproc, err = daemons.TestHookPrimproc(ctx, bin, log); err != nil {
		return err
	}
	runDir, err := os.MkdirTemp("", "colink-faults-")
	if err != nil {
		return err
	}
	cfg.Binaries, cfg.RunDir, cfg.Log = bins, runDir, log
	cfg.Load = func(ctx context.Context, endpoints []string) error {
		largs := []string{"--sf", cfg.SF}
		for _, ep := range endpoints {
			largs = append(largs, "--primproc", ep)
		}
		// dbt3 load's report lines go to stderr: stdout is for the table.
		return runLoad(ctx, &env{stdout: e.stderr, stderr: e.stderr, stderrTerminal: e.stderrTerminal}, largs)
	}
	cfg.OnTrial = func(fault, transport string, t faults.Trial) {
		line := fmt.Sprintf("%-22s %-4s try %2d: %s", fault, transport, t.Try, t.Outcome)
		if t.Seconds > 0 {
			line += fmt.Sprintf(" in %.2fs", t.Seconds)
		}
		if len(t.Failures) > 0 {
			line += " — FAILED: " + strings.Join(t.Failures, "; ")
		}
		fmt.Fprintln(e.stderr, line)
	}
	rep, err := faults.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "dbt3: the daemons' logs are in %s\n", runDir)
		if errors.Is(err, context.Canceled) {
			return errors.New("interrupted; the daemons are stopped")
		}
		return err
	}
	rep.Command = "dbt3 faults " + strings.Join(args, " ")
	if dir := filepath.Dir(out); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	jsonPath := strings.TrimSuffix(out, filepath.Ext(out)) + ".json"
	if err := rep.WriteMarkdownFile(out); err != nil {
		return err
	}
	if err := rep.WriteJSON(jsonPath); err != nil {
		return err
	}
	if err := rep.WriteMarkdown(e.stdout); err != nil {
		return err
	}
	failed := rep.Failed()
	fmt.Fprintf(e.stdout, "\nWrote %s and %s in %v.\n", out, jsonPath, time.Duration(rep.Seconds*float64(time.Second)).Round(time.Second))
	if failed > 0 || keep {
		fmt.Fprintf(e.stderr, "dbt3: the daemons' data and logs are in %s\n", runDir)
	} else {
		os.RemoveAll(runDir)
	}
	if failed > 0 {
		return fmt.Errorf("%d tries failed; see %s", failed, out)
	}
	return nil
}
