//go:build colink_testhooks

package primproc

import (
	"fmt"
	"log/slog"
	"os"
	"slices"
	"syscall"
)

// Test hooks, compiled in only with the colink_testhooks build tag: no release build, no
// `go build ./...` and no `dbt3` child sets it, so the environment variable below does
// nothing in a binary built without it (testhook_off.go). With the tag, the variable
// COLINK_TESTHOOK_CRASH=<point> makes primproc kill itself with SIGKILL at that point, so
// that an end-to-end test can crash it at exactly the moment it cares about:
//
//	write-committed    a one-phase write's commit is durable; its END is not yet sent
//	write-prepared     a two-phase write's prepare is durable; its END is not yet sent
//	resolve-committed  a prepared transaction's commit is durable; the answer is not yet sent
const testHookEnv = "COLINK_TESTHOOK_CRASH"

// testCrashPoint reads the crash point from the environment; an unknown one is an error.
func testCrashPoint(log *slog.Logger) (string, error) {
	log.Warn("primproc: built with test hooks (tag colink_testhooks); not for production use", "env", testHookEnv)
	crashPoints := []string{crashWriteCommitted, crashWritePrepared, crashResolveCommitted}
	p := os.Getenv(testHookEnv)
	if p != "" && !slices.Contains(crashPoints, p) {
		return "", fmt.Errorf("%s=%q: want one of %v", testHookEnv, p, crashPoints)
	}
	return p, nil
}

// crashAt kills the process with SIGKILL if point is the configured crash point.
func (d *Daemon) crashAt(point string) {
	if d.crashPoint != point {
		return
	}
	d.log.Warn("primproc: test hook: killing this process", "point", point, "pid", os.Getpid())
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is asynchronous: nothing may run on until it lands
}
