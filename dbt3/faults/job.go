package faults

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/colinkdb/colink/dbt3"
	"github.com/colinkdb/colink/dbt3/cluster"
	"github.com/colinkdb/colink/dbt3/load"
)

// Job is the suite as "dbt3 faults" runs it: Config's settings (RunJob sets its Binaries,
// TestHookPrimproc, RunDir, Log, Load and OnTrial) and where the report goes.
type Job struct {
	Config
	Out     string // the Markdown report; the JSON goes beside it (.json)
	Bin     string // directory holding primproc, exemgr and primproc-colink_testhooks ("": built from the source tree)
	Keep    bool   // keep the daemons' data and logs (kept anyway when a try fails)
	Verbose bool   // log each step on stderr
	Command string // the command line, recorded in the report
}

// RunJob finds the binaries, runs the suite in a fresh run directory, loading the data with
// dbt3/load, prints a line per try on Stderr, writes the report to j.Out and its JSON beside
// it, and prints the table on Stdout. It returns an error if any try failed.
func RunJob(ctx context.Context, j Job, out dbt3.Output) error {
	cfg := j.Config
	if err := cfg.Validate(); err != nil {
		return &dbt3.UsageError{Err: err}
	}
	log := out.Logger(j.Verbose)
	bins, err := cluster.FindBinariesFlag(ctx, j.Bin, log)
	if err != nil {
		return err
	}
	if cfg.TestHookPrimproc, err = cluster.TestHookPrimproc(ctx, j.Bin, log); err != nil {
		return err
	}
	runDir, err := os.MkdirTemp("", "colink-faults-")
	if err != nil {
		return err
	}
	cfg.Binaries, cfg.RunDir, cfg.Log = bins, runDir, log
	cfg.Load = func(ctx context.Context, endpoints []string) error {
		lc := load.DefaultConfig()
		lc.SF, lc.Primprocs = cfg.SF, endpoints
		// The load's report lines go to stderr: stdout is for the table.
		return load.Run(ctx, lc, out.ToStderr())
	}
	cfg.OnTrial = func(fault, transport string, t Trial) {
		line := fmt.Sprintf("%-22s %-4s try %2d: %s", fault, transport, t.Try, t.Outcome)
		if t.Seconds > 0 {
			line += fmt.Sprintf(" in %.2fs", t.Seconds)
		}
		if len(t.Failures) > 0 {
			line += " — FAILED: " + strings.Join(t.Failures, "; ")
		}
		fmt.Fprintln(out.Stderr, line)
	}
	rep, err := Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(out.Stderr, "dbt3: the daemons' logs are in %s\n", runDir)
		if errors.Is(err, context.Canceled) {
			return errors.New("interrupted; the daemons are stopped")
		}
		return err
	}
	rep.Command = j.Command
	if dir := filepath.Dir(j.Out); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	jsonPath := strings.TrimSuffix(j.Out, filepath.Ext(j.Out)) + ".json"
	if err := rep.WriteMarkdownFile(j.Out); err != nil {
		return err
	}
	if err := rep.WriteJSON(jsonPath); err != nil {
		return err
	}
	if err := rep.WriteMarkdown(out.Stdout); err != nil {
		return err
	}
	failed := rep.Failed()
	fmt.Fprintf(out.Stdout, "\nWrote %s and %s in %v.\n", j.Out, jsonPath, time.Duration(rep.Seconds*float64(time.Second)).Round(time.Second))
	if failed > 0 || j.Keep {
		fmt.Fprintf(out.Stderr, "dbt3: the daemons' data and logs are in %s\n", runDir)
	} else {
		os.RemoveAll(runDir)
	}
	if failed > 0 {
		return fmt.Errorf("%d tries failed; see %s", failed, j.Out)
	}
	return nil
}
