// Package testref finds, for tests, the TPC-H reference data kept beside the repository
// (../shared/tpch from its root: the official checksums, reference data, query templates
// and answers). The product never reads it; a user's checkout may not have it, so a test
// that needs it skips, unless COLINK_REQUIRE_REFERENCE is set (as CI sets it), when a
// missing directory fails the test instead of hiding it.
package testref

import (
	"os"
	"path/filepath"
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
