package main

import (
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/sys/unix"
)

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// progressBar returns a progress bar of total units on e's stderr, or nil when stderr is
// not a terminal. unit names what is counted, for the rate ("rows"; "": the count alone).
func (e *env) progressBar(total int64, desc, unit string) *progressbar.ProgressBar {
	if !e.stderrTerminal {
		return nil
	}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(e.stderr),
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
