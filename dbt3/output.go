package dbt3

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/colinkdb/colink/internal/rusage"
)

// Output is where one of dbt3's jobs (a command's work: gen, load, query, the drivers, the
// comparison, the fault suite) writes: its results to Stdout, progress and notes to Stderr.
type Output struct {
	Stdout, Stderr io.Writer
	// StderrTerminal says whether Stderr is a terminal (progress bars go there only then).
	StderrTerminal bool
}

// ToStderr returns o with its results going to Stderr too: a job run as a step of another
// (the comparison's load) keeps Stdout for the outer job's table.
func (o Output) ToStderr() Output {
	o.Stdout = o.Stderr
	return o
}

// Logger returns a text logger on o's Stderr: at level Info when verbose (each step and
// sample), else Warn.
func (o Output) Logger(verbose bool) *slog.Logger {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(o.Stderr, &slog.HandlerOptions{Level: level}))
}

// ProgressBar returns a progress bar of total units on o's Stderr, or nil when Stderr is
// not a terminal. unit names what is counted, for the rate ("rows"; "": the count alone).
func (o Output) ProgressBar(total int64, desc, unit string) *progressbar.ProgressBar {
	if !o.StderrTerminal {
		return nil
	}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(o.Stderr),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionFullWidth(),
		progressbar.OptionClearOnFinish(),
	}
	if unit != "" {
		opts = append(opts, progressbar.OptionSetItsString(unit), progressbar.OptionShowIts())
	}
	return progressbar.NewOptions64(total, opts...)
}

// UsageError marks an error in what a job was asked to do — a bad setting, an unusable
// directory or file, a daemon that would not start with the flags given — as opposed to a
// failure while doing it: dbt3 prints it with a pointer to the command's --help and exits
// with status 2. Its message names the dbt3 flag it comes from.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a *UsageError with the formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// IsUsage reports whether err is, or wraps, a *UsageError.
func IsUsage(err error) bool {
	var ue *UsageError
	return errors.As(err, &ue)
}

// UsageLine formats this process's resource use so far with the wall time elapsed, as every
// dbt3 report line does ("wall 1.20s user 2.01s sys 0.30s maxrss 410 MiB ctxsw …").
func UsageLine(wall time.Duration) string {
	u, _ := rusage.Self() // zero if getrusage fails
	return fmt.Sprintf("wall %.2fs user %.2fs sys %.2fs maxrss %d MiB ctxsw %d voluntary %d involuntary",
		wall.Seconds(), u.User.Seconds(), u.Sys.Seconds(), u.MaxRSSKiB>>10, u.Voluntary, u.Involuntary)
}

// EnsureWritableDir creates dir if needed and checks that files can be created in it; its
// errors are *UsageError naming --out.
func EnsureWritableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &UsageError{fmt.Errorf("--out: %w", err)}
	}
	f, err := os.CreateTemp(dir, ".dbt3-write-check-*")
	if err != nil {
		return &UsageError{fmt.Errorf("--out: directory %s is not writable: %w", dir, err)}
	}
	f.Close()
	if err := os.Remove(filepath.Clean(f.Name())); err != nil {
		return &UsageError{err}
	}
	return nil
}
