package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colinkdb/colink/dbt3"
)

func runArgs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), dbt3.Output{Stdout: &out, Stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func TestDispatch(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string // in stdout+stderr
	}{
		{nil, exitUsage, "usage: dbt3"},
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{[]string{"help"}, exitOK, "gen"},
		{[]string{"help", "gen"}, exitOK, "usage: dbt3 gen --sf F"},
		{[]string{"help", "frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{[]string{"version"}, exitOK, "dbt3 (devel) rev "},
		{[]string{"--version"}, exitOK, ", go1."},
		{[]string{"gen", "--help"}, exitOK, "--sf"},
		{[]string{"gen", "--bogus"}, exitUsage, "unknown flag"},
		{[]string{"gen", "--sf", "1.5", "--out", "x"}, exitUsage, "whole scale factors"},
		{[]string{"gen", "--sf", "abc", "--out", "x"}, exitUsage, "not a number"},
		{[]string{"gen", "--sf", "0.01"}, exitUsage, "--out is required"},
		{[]string{"gen", "--sf", "0.01", "--out", "x", "--tables", "lineitems"}, exitUsage, `unknown table "lineitems"`},
		{[]string{"gen", "--sf", "0.01", "--out", "x", "--format", "csv"}, exitUsage, "unknown format"},
		{[]string{"gen", "--sf", "0.01", "--out", "x", "--chunks", "0"}, exitUsage, "--chunks"},
		{[]string{"gen", "--sf", "0.01", "--out", "x", "--refresh", "-1"}, exitUsage, "--refresh"},
		{[]string{"gen", "--sf", "0.01", "--out", "x", "extra"}, exitUsage, "unexpected argument"},
		{[]string{"qgen"}, exitUsage, "--seed is required"},
		{[]string{"qgen", "--seed", "1", "--stream", "-2"}, exitUsage, "--stream"},
		{[]string{"qgen", "--seed", "1", "--sf", "0"}, exitUsage, "--sf"},
		{[]string{"faults", "--tries", "0"}, exitUsage, "tries 0"},
		{[]string{"faults", "--transports", "tcp,memfd"}, exitUsage, `transport "memfd"`},
		{[]string{"faults", "--transports", "shm", "--list"}, exitOK, "RBATCH"},
		{[]string{"faults", "--help"}, exitOK, "tcp, unix, shm (all three by default)"},
		{[]string{"faults", "--faults", "kill-everything"}, exitUsage, `unknown fault "kill-everything"`},
		{[]string{"faults", "--sf", "abc"}, exitUsage, "scale factor"},
		{[]string{"faults", "--list"}, exitOK, "slow-consumer\n  does:"},
	}
	for _, c := range cases {
		code, out, errs := runArgs(t, c.args...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("dbt3 %v: exit %d, output %q; want exit %d and %q", c.args, code, out+errs, c.code, c.want)
		}
	}
}

// TestInterrupted: a command ended by an interrupt (its context canceled) exits 130 and
// says so, not 1 with "context canceled".
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := run(ctx, dbt3.Output{Stdout: &out, Stderr: &errb}, []string{"gen", "--sf", "0.01", "--out", t.TempDir()})
	if code != exitInterrupted || strings.TrimSpace(errb.String()) != "dbt3 gen: interrupted" {
		t.Errorf("an interrupted gen: exit %d, stderr %q; want %d and \"dbt3 gen: interrupted\"", code, errb.String(), exitInterrupted)
	}
}

func TestGenUnwritableDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runArgs(t, "gen", "--sf", "0.01", "--out", filepath.Join(file, "sub"))
	if code != exitUsage || !strings.Contains(errs, "--out") {
		t.Errorf("exit %d, stderr %q; want exit 2 naming --out", code, errs)
	}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := t.TempDir()
		os.Chmod(ro, 0o555)
		code, _, errs = runArgs(t, "gen", "--sf", "0.01", "--out", ro)
		if code != exitUsage || !strings.Contains(errs, "not writable") {
			t.Errorf("read-only dir: exit %d, stderr %q", code, errs)
		}
	}
}

func TestGenWritesQuietly(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runArgs(t, "gen", "--sf", "0.01", "--out", dir, "--tables", "nation,region", "--refresh", "1", "--no-sync")
	if code != exitOK || out != "" || errs != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and silence without a terminal", code, out, errs)
	}
	for _, name := range []string{"nation.tbl", "region.tbl", "orders.tbl.u1", "lineitem.tbl.u1", "delete.1"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "part.tbl")); err == nil {
		t.Error("part.tbl written though not asked for")
	}
	code, _, errs = runArgs(t, "gen", "--sf", "0.01", "--out", dir, "--tables", "region", "--stats")
	if code != exitOK || !strings.Contains(errs, "user") || !strings.Contains(errs, "maxrss") {
		t.Errorf("--stats: exit %d, stderr %q", code, errs)
	}
}

func TestQgen(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := runArgs(t, "qgen", "--validation", "--out", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 22 || entries[0].Name() != "01-q14.sql" {
		t.Fatalf("got %d files, first %v; want 22 starting with stream 0's Q14", len(entries), entries[0].Name())
	}
	code, out, _ := runArgs(t, "qgen", "--seed", "7", "--stream", "2", "--sf", "0.1")
	if code != exitOK || strings.Count(out, "-- TPC-H/TPC-R") != 22 || !strings.Contains(out, "0.0010000000") {
		t.Errorf("stream to stdout: exit %d, %d queries", code, strings.Count(out, "-- TPC-H/TPC-R"))
	}
	_, again, _ := runArgs(t, "qgen", "--seed", "7", "--stream", "2", "--sf", "0.1")
	if again != out {
		t.Error("the same seed gave different output")
	}
}

func TestLoadUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"load", "--primproc", "tcp://127.0.0.1:1"}, "exactly one of --sf and --from"},
		{[]string{"load", "--sf", "0.01", "--from", "x", "--primproc", "tcp://127.0.0.1:1"}, "exactly one of --sf and --from"},
		{[]string{"load", "--sf", "0.01"}, "--primproc is required"},
		{[]string{"load", "--sf", "0.01", "--primproc", "tcp://127.0.0.1:1", "--tables", "lineitems"}, `unknown table "lineitems"`},
		{[]string{"load", "--sf", "0.01", "--primproc", "tcp://127.0.0.1:1", "--transport", "memfd"}, `--transport "memfd"`},
		{[]string{"load", "--sf", "1.5", "--primproc", "tcp://127.0.0.1:1"}, "--sf"},
		{[]string{"load", "--from", "/nonexistent", "--primproc", "tcp://127.0.0.1:1"}, "not a directory"},
		{[]string{"load", "--sf", "0.01", "--primproc", "http://x"}, "--primproc http://x"},
	} {
		code, out, errs := runArgs(t, tc.args...)
		if code != exitUsage || !strings.Contains(out+errs, tc.want) {
			t.Errorf("%v: exit %d, output %q; want exit 2 and %q", tc.args, code, out+errs, tc.want)
		}
	}
}
