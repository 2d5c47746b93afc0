// Package testref finds, for tests, the TPC-H reference data kept beside the repository
// (../shared/tpch from its root: the official checksums, reference data, query templates
// and answers). The product never reads it; a user's checkout may not have it, so a test
// that needs it skips, unless COLINK_REQUIRE_REFERENCE is set (as CI sets it), when a
// missing directory fails the test instead of hiding it.
//
// A skip shows only under go test -v, so the first skip of a go test run also says so on
// the terminal, once for the whole run (see announceSkips).
package testref

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// RequireEnv is the environment variable that turns a missing reference into a failure.
const RequireEnv = "COLINK_REQUIRE_REFERENCE"

// Root is the repository root (the nearest directory above the working directory with a
// go.mod whose parent holds shared/), or "" if none is found.
func Root() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "..", "shared")); err == nil {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// TPCH returns the path of ../shared/tpch joined with elem (e.g. "answers", "sf0.01"), or
// skips t (fails it under RequireEnv) if that path does not exist.
func TPCH(t testing.TB, elem ...string) string {
	t.Helper()
	path, err := Path(elem...)
	if err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("TPC-H reference data: %v (%s is set)", err, RequireEnv)
		}
		announceSkips(t.Name(), err)
		t.Skipf("TPC-H reference data not available: %v", err)
	}
	return path
}

// Path is TPCH without a test: the path, or an error saying what is missing.
func Path(elem ...string) (string, error) {
	root := Root()
	if root == "" {
		return "", &missingError{what: "../shared beside the repository root"}
	}
	path := filepath.Join(append([]string{root, "..", "shared", "tpch"}, elem...)...)
	if _, err := os.Stat(path); err != nil {
		return "", &missingError{what: path, err: err}
	}
	return path, nil
}

type missingError struct {
	what string
	err  error
}

func (e *missingError) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return e.what + " not found"
}

func (e *missingError) Unwrap() error { return e.err }

// announceSkips tells the terminal, once per go test run, that tests skip for want of the
// reference data. go test prints nothing of a passing package's tests but its ok line, and
// runs each package's test binary as its own child, so the once is a marker file named by
// the go command's process (its pid and start time, so that a reused pid is a new run).
// Without a terminal (CI, a pipe) it says nothing; go test -v shows every skip anyway.
func announceSkips(test string, cause error) {
	run := goTestRun()
	if run == "" {
		return
	}
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer tty.Close()
	announceOnce(tty, filepath.Join(os.TempDir(), "colink-testref-"+run), test, cause)
}

// announceOnce writes the message to w unless marker exists, and creates marker; it
// reports whether it wrote. Two packages racing are settled by O_EXCL.
func announceOnce(w io.Writer, marker, test string, cause error) bool {
	f, err := os.OpenFile(marker, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false
	}
	f.Close()
	fmt.Fprintf(w, "colink tests: TPC-H's reference data is not beside this checkout (%v), so the tests "+
		"that check the official answers, dbgen's checksums and the reference files skip, "+
		"%s the first of them; 'go test -v ./... | grep \"reference data\"' lists them all. "+
		"Put TPC-H's reference directory at ../shared/tpch to run them.\n", cause, test)
	return true
}

// goTestRun names the go command running this test binary: its parent's pid and start
// time from /proc, or "" where /proc is not there.
func goTestRun() string {
	ppid := os.Getppid()
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(ppid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) is in parentheses and may hold spaces: fields count
	// from the last ')'. The start time is field 22.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return ""
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 20 {
		return ""
	}
	return strconv.Itoa(ppid) + "-" + fields[19]
}
