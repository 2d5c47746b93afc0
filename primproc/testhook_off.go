//go:build !colink_testhooks

package primproc

import "log/slog"

// testCrashPoint is the test hooks' crash point (testhook.go): none without the
// colink_testhooks build tag, whatever the environment says.
func testCrashPoint(*slog.Logger) (string, error) { return "", nil }

// crashAt does nothing without the colink_testhooks build tag.
func (d *Daemon) crashAt(string) {}
