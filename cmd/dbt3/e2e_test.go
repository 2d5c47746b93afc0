package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colinkdb/colink/dbt3"
	"github.com/colinkdb/colink/dbt3/answers"
	daemons "github.com/colinkdb/colink/dbt3/cluster"
	"github.com/colinkdb/colink/dbt3/dbt3test"
	"github.com/colinkdb/colink/dbt3/measure"
	"github.com/colinkdb/colink/dbt3/report"
	"github.com/colinkdb/colink/internal/testbin"
	"github.com/colinkdb/colink/internal/testref"
)

// answersSF001 is the reference answers' directory at SF 0.01 (testref), "" if absent.
var answersSF001, _ = testref.Path("answers", "sf0.01")

// daemonBins builds primproc and exemgr into dir.
func daemonBins(t *testing.T, dir string) daemons.Binaries {
	t.Helper()
	return daemons.Binaries{PrimProc: testbin.Build(t, dir, "./cmd/primproc"), ExeMgr: testbin.Build(t, dir, "./cmd/exemgr")}
}

// processesUsing returns the pids of processes whose command line contains s.
func processesUsing(s string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(s)) {
			out = append(out, pid)
		}
	}
	return out
}

// noDaemonsLeft fails the test if a process still names dir in its command line, or dir
// still holds a socket or lock file.
func noDaemonsLeft(t *testing.T, dir string) {
	t.Helper()
	var left []int
	for i := 0; i < 50; i++ {
		if left = processesUsing(dir); len(left) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("processes left behind using %s: %v", dir, left)
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.sock*"))
	if len(files) > 0 {
		t.Errorf("socket files left behind: %v", files)
	}
}

// TestDaemons runs the drivers against real primproc and exemgr processes at SF 0.01.
func TestDaemons(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	binDir := testbin.TempDir(t)
	bins := daemonBins(t, binDir)

	// Bad input that reaches the daemons: exit status 2, the daemon's own log lines in the
	// message, nothing left running.
	t.Run("port in use", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		sockets := testbin.TempDir(t)
		port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		code, _, errs := runArgs(t, "compare", "--bin", binDir, "--sf", "0.01", "--port", port, "--socket-dir", sockets)
		if code != exitUsage || !strings.Contains(errs, "primproc0 did not start") || !strings.Contains(errs, "address already in use") || !strings.Contains(errs, "level=ERROR") {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 2 with primproc0's log line", code, errs)
		}
		noDaemonsLeft(t, sockets)
	})
	t.Run("socket path unusable", func(t *testing.T) {
		file := filepath.Join(testbin.TempDir(t), "a-file")
		os.WriteFile(file, nil, 0o644)
		code, _, errs := runArgs(t, "compare", "--bin", binDir, "--sf", "0.01", "--socket-dir", filepath.Join(file, "sockets"))
		if code != exitUsage || !strings.Contains(errs, "primproc0 did not start") || !strings.Contains(errs, "not a directory") {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 2 with primproc0's log line", code, errs)
		}
		noDaemonsLeft(t, file)
	})
	t.Run("exemgr fails after the primprocs started", func(t *testing.T) {
		sockets := testbin.TempDir(t)
		code, _, errs := runArgs(t, "compare", "--bin", binDir, "--sf", "0.01", "--primprocs", "2", "--socket-dir", sockets, "--exemgr-arg=--no-such-flag")
		if code != exitUsage || !strings.Contains(errs, "exemgr-tcp did not start") || !strings.Contains(errs, "no-such-flag") {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 2 with exemgr's own message", code, errs)
		}
		noDaemonsLeft(t, sockets)
	})

	self := testbin.Build(t, binDir, "./cmd/dbt3") // for the scripts and the interrupt test

	t.Run("compare", func(t *testing.T) {
		out := t.TempDir()
		args := []string{"compare", "--bin", binDir, "--sf", "0.01", "--runs", "1", "--transports", "tcp,unix,shm", "--out", out, "--threads", "2"}
		haveAnswers := false
		if st, err := os.Stat(answersSF001); err == nil && st.IsDir() {
			args = append(args, "--answers", answersSF001)
			haveAnswers = true
		} else {
			t.Logf("%s is missing: answers are checked for consistency only", answersSF001)
		}
		start := time.Now()
		code, stdout, errs := runArgs(t, args...)
		if code != exitOK {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, errs)
		}
		t.Logf("compare at SF 0.01, one round over three transports: %v", time.Since(start))
		run, err := measure.ReadFile(filepath.Join(out, report.ComparisonJSON))
		if err != nil {
			t.Fatal(err)
		}
		if run.Driver != "compare" || run.SF != 0.01 || len(run.Samples) != 3*25 {
			t.Fatalf("run %s driver %s sf %v with %d samples", run.ID, run.Driver, run.SF, len(run.Samples))
		}
		seen := map[string]int{}
		for _, s := range run.Samples {
			seen[s.Transport]++
			want := dbt3.VerifiedConsistent
			if haveAnswers && strings.HasPrefix(s.Query, "Q") {
				want = dbt3.VerifiedReference
			}
			if s.Error != "" || s.Verified != want || !s.Cold || s.Rows == 0 {
				t.Errorf("%s %s: error %q verified %q cold %v rows %d", s.Transport, s.Query, s.Error, s.Verified, s.Cold, s.Rows)
			}
			if _, ok := s.Procs["exemgr"]; !ok || s.Link == nil || s.ProcStat == nil {
				t.Errorf("%s %s: no query stats or /proc reading: %+v", s.Transport, s.Query, s)
			}
			if _, ok := s.Procs["primproc0"]; !ok {
				t.Errorf("%s %s: no primproc0 in %v", s.Transport, s.Query, s.Procs)
			}
			for _, c := range s.Checks {
				t.Logf("%s %s: %s", s.Transport, s.Query, c)
			}
		}
		if seen["tcp"] != 25 || seen["unix"] != 25 || seen["shm"] != 25 {
			t.Errorf("samples per transport %v", seen)
		}
		md, err := os.ReadFile(filepath.Join(out, report.MarkdownFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"| Q1 |", "| CS3 |", "unix/tcp", "shm/tcp", "**Q1–Q22**", "Every query ran and its answer checked out"} {
			if !strings.Contains(string(md), want) {
				t.Errorf("report.md lacks %q", want)
			}
		}
		if !strings.Contains(stdout, "\nQ22 ") || strings.Contains(stdout, "| Q22 |") {
			t.Errorf("stdout lacks the plain elapsed table:\n%s", stdout)
		}
		for _, f := range []string{report.TransportsSVG, report.RatiosSVG} {
			svgFileWellFormed(t, filepath.Join(out, f))
		}
		// dbt3 report regenerates the same files from the JSON.
		again := t.TempDir()
		if code, _, errs := runArgs(t, "report", "--out", again, filepath.Join(out, report.ComparisonJSON)); code != exitOK {
			t.Fatalf("report: exit %d: %s", code, errs)
		}
		svgFileWellFormed(t, filepath.Join(again, report.TransportsSVG))
	})

	// The pushdown dial and the cost per GB: Q6 at full and scan, the scan family at its
	// own level, and ipcbench's stream beside them, over both transports.
	testbin.Build(t, binDir, "./cmd/ipcbench")
	t.Run("compare pushdown and cost", func(t *testing.T) {
		out := t.TempDir()
		code, stdout, errs := runArgs(t, "compare", "--bin", binDir, "--sf", "0.01", "--runs", "2", "--pushdown", "full,scan",
			"--queries", "6,SCAN1,SCAN8", "--ipcbench-rounds", "1", "--out", out, "--threads", "2", "--profile", "6")
		if code != exitOK {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, errs)
		}
		run, err := measure.ReadFile(filepath.Join(out, report.ComparisonJSON))
		if err != nil {
			t.Fatal(err)
		}
		// Per round and transport (tcp, unix and shm by default): Q6 at two levels, SCAN1 and
		// SCAN8 at scan.
		if len(run.Samples) != 2*3*4 {
			t.Fatalf("%d samples", len(run.Samples))
		}
		bytes := map[string]int64{}
		for _, s := range run.Samples {
			if s.Error != "" || s.Pushdown == "" || (strings.HasPrefix(s.Query, "SCAN") && s.Pushdown != "scan") {
				t.Errorf("%s %s at %q: %s", s.Transport, s.Query, s.Pushdown, s.Error)
			}
			if s.Link != nil {
				bytes[s.Query+" "+s.Pushdown] = s.Link.BytesIn
			}
		}
		if !(bytes["Q6 full"]*100 < bytes["Q6 scan"] && bytes["SCAN1 scan"] < bytes["SCAN8 scan"]) {
			t.Errorf("link bytes by execution %v", bytes)
		}
		md, err := os.ReadFile(filepath.Join(out, report.MarkdownFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"**Against tcp, unix ", "| Q6 | scan |", "## Cost per GB moved, against tcp", "ipcbench's stream: unix"} {
			if !strings.Contains(string(md), want) {
				t.Errorf("report.md lacks %q:\n%s", want, md)
			}
		}
		for _, f := range []string{report.CostElapsedSVG, report.CostCPUSVG} {
			svgFileWellFormed(t, filepath.Join(out, f))
		}
		// --profile 6: one CPU profile per transport and daemon, as go tool pprof reads them.
		for _, f := range []string{"Q6-tcp-exemgr-tcp", "Q6-tcp-primproc0", "Q6-unix-exemgr-unix", "Q6-unix-primproc0", "Q6-shm-exemgr-shm", "Q6-shm-primproc0"} {
			b, err := os.ReadFile(filepath.Join(out, "profiles", f+".pprof"))
			if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
				t.Errorf("profile %s: %d bytes, %v; want a gzipped pprof profile", f, len(b), err)
			}
		}
	})

	t.Run("query power throughput", func(t *testing.T) {
		ctx := context.Background()
		run := testbin.TempDir(t)
		cl, err := daemons.Start(ctx, daemons.Config{Binaries: bins, RunDir: run, DataDirs: []string{filepath.Join(run, "pm0"), filepath.Join(run, "pm1")}, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Stop()
		loadArgs := []string{"load", "--sf", "0.01"}
		for _, ep := range cl.LinkEndpoints() {
			loadArgs = append(loadArgs, "--primproc", ep)
		}
		if code, _, errs := runArgs(t, loadArgs...); code != exitOK {
			t.Fatalf("load: exit %d: %s", code, errs)
		}
		eps, err := cl.Serve(ctx, []string{"unix"})
		if err != nil {
			t.Fatal(err)
		}
		addr := eps["unix"].Addr
		code, stdout, errs := runArgs(t, "query", "--mysql", addr, "-q", "15")
		if code != exitOK {
			t.Fatalf("query: exit %d: %s", code, errs)
		}
		if want, err := answers.ReadFile(filepath.Join(answersSF001, "q15.csv")); err == nil {
			got, err := answers.Parse(strings.NewReader(stdout))
			if err != nil {
				t.Fatal(err)
			}
			if err := answers.Compare(got, want); err != nil {
				t.Errorf("Q15 through dbt3 query: %v", err)
			}
		}
		code, stdout, _ = runArgs(t, "query", "--mysql", addr, "--format", "table", "-e", "select count(*) as n from region")
		if code != exitOK || !strings.Contains(stdout, "| 5 |") || !strings.Contains(stdout, "1 row in set") {
			t.Errorf("query table: exit %d:\n%s", code, stdout)
		}

		pids := eps["unix"].PIDs
		powerOut := filepath.Join(t.TempDir(), "power.json")
		args := []string{"power", "--mysql", addr, "--sf", "0.01", "--validation", "--out", powerOut,
			"--pid", "exemgr=" + strconv.Itoa(pids["exemgr"]), "--pid", "primproc0=" + strconv.Itoa(pids["primproc0"])}
		if _, err := os.Stat(answersSF001); err == nil {
			args = append(args, "--answers", answersSF001)
		}
		code, stdout, errs = runArgs(t, args...)
		if code != exitOK || !strings.Contains(stdout, "Power@Size") || !strings.Contains(stdout, "were not run") {
			t.Fatalf("power: exit %d\n%s\n%s", code, stdout, errs)
		}
		prun, err := measure.ReadFile(powerOut)
		if err != nil {
			t.Fatal(err)
		}
		var intervals []float64
		for _, s := range prun.Samples {
			intervals = append(intervals, s.Elapsed)
			if s.ProcStat == nil || len(s.Procs) != 3 {
				t.Errorf("%s: procs %v, proc stat %v", s.Query, s.Procs, s.ProcStat)
			}
		}
		if want, _ := dbt3.PowerAtSize(0.01, intervals); len(intervals) != 22 || prun.Metrics["power@size"] != want {
			t.Errorf("power@size %v over %d intervals, want %v", prun.Metrics["power@size"], len(intervals), want)
		}
		if code, stdout, errs = runArgs(t, "power", "--mysql", addr, "--sf", "0.01", "--seed", "7"); code != exitOK {
			t.Errorf("power with seed 7: exit %d\n%s\n%s", code, stdout, errs)
		}
		code, stdout, errs = runArgs(t, "throughput", "--mysql", addr, "--sf", "0.01", "--seed", "7", "--streams", "2")
		if code != exitOK || !strings.Contains(stdout, "Throughput@Size") {
			t.Errorf("throughput: exit %d\n%s\n%s", code, stdout, errs)
		}
		if err := cl.Stop(); err != nil {
			t.Error(err)
		}
		noDaemonsLeft(t, run)
	})

	// The scripts for people who run the daemons by hand.
	t.Run("scripts", func(t *testing.T) {
		if _, err := exec.LookPath("setsid"); err != nil {
			t.Skip("no setsid(1) here")
		}
		if sc, err := exec.LookPath("shellcheck"); err == nil {
			files, _ := filepath.Glob("../../scripts/*.sh")
			for i, f := range files {
				files[i] = strings.TrimPrefix(f, "../../")
			}
			lint := exec.Command(sc, append([]string{"-x"}, files...)...)
			lint.Dir = "../.."
			if out, err := lint.CombinedOutput(); err != nil {
				t.Errorf("shellcheck: %v\n%s", err, out)
			}
		} else {
			t.Log("shellcheck is not installed: the scripts are not linted")
		}
		run := testbin.TempDir(t)
		script := func(name string, args ...string) (string, string, error) {
			cmd := exec.Command("../../scripts/"+name, args...)
			cmd.Env = append(os.Environ(), "COLINK_RUN_DIR="+run)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			return stdout.String(), stderr.String(), err
		}
		t.Cleanup(func() { script("stop-daemons.sh") })
		if _, errs, err := script("start-daemons.sh", "--transport", "memfd", "--bin", binDir); exitCode(err) != 2 || !strings.Contains(errs, "unknown transport 'memfd'") {
			t.Errorf("unknown transport: %v, %s", err, errs)
		}
		port := strconv.Itoa(testbin.FreePort(t))
		sock, errs, err := script("start-daemons.sh", "--transport", "unix", "--bin", binDir, "--data", filepath.Join(run, "data"), "--load", "0.01", "--port", port, "--threads", "1")
		if err != nil {
			t.Fatalf("start-daemons.sh: %v\n%s", err, errs)
		}
		sock = strings.TrimSpace(sock)
		if code, out, errs := runArgs(t, "query", "--mysql", sock, "-e", "select count(*) as n from orders"); code != exitOK || out != "n\n15000\n" {
			t.Errorf("query through the started daemons: exit %d, %q, %s", code, out, errs)
		}
		if _, errs, err := script("start-daemons.sh", "--transport", "tcp", "--bin", binDir); exitCode(err) != 2 || !strings.Contains(errs, "already running") {
			t.Errorf("second start: %v, %s", err, errs)
		}
		if _, errs, err := script("stop-daemons.sh"); err != nil {
			t.Errorf("stop-daemons.sh: %v\n%s", err, errs)
		}
		noDaemonsLeft(t, run)

		// shm over the same store: exemgr's links must be on shared memory,
		// as the script records and SHOW QUERY STATS says.
		sock, errs, err = script("start-daemons.sh", "--transport", "shm", "--bin", binDir, "--data", filepath.Join(run, "data"), "--port", port, "--threads", "1")
		if err != nil {
			t.Fatalf("start-daemons.sh --transport shm: %v\n%s", err, errs)
		}
		if env, err := os.ReadFile(filepath.Join(run, "daemons.env")); err != nil || !strings.Contains(string(env), "transport=shm\nlinks=shm\n") {
			t.Errorf("daemons.env: %q, %v", env, err)
		}
		if got := shmLinkTransports(t, strings.TrimSpace(sock)); got != "shm" {
			t.Errorf("over shm, SHOW QUERY STATS gives the primproc's link transport %q", got)
		}
		if _, errs, err := script("stop-daemons.sh"); err != nil {
			t.Errorf("stop-daemons.sh: %v\n%s", err, errs)
		}
		noDaemonsLeft(t, run)
	})

	// Ctrl-C in the middle of a comparison: dbt3 stops the daemons and removes their sockets.
	t.Run("interrupt", func(t *testing.T) {
		sockets := testbin.TempDir(t)
		p := testbin.Start(t, self, "compare", "--bin", binDir, "--sf", "0.01", "--runs", "5", "--socket-dir", sockets, "--out", t.TempDir())
		deadline := time.Now().Add(30 * time.Second)
		for {
			if _, err := os.Stat(filepath.Join(sockets, "exemgr-tcp.sock")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("exemgr's socket did not appear:\n%s", p.Log())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := p.Cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if code := p.Wait(t, 30*time.Second); code == exitOK {
			t.Errorf("exit 0 after an interrupt:\n%s", p.Log())
		}
		if !strings.Contains(p.Log(), "interrupted") {
			t.Errorf("stderr does not say it was interrupted:\n%s", p.Log())
		}
		noDaemonsLeft(t, sockets)
	})
}

// shmLinkTransports runs a query on exemgr at sock and returns the transports SHOW QUERY
// STATS gives its primprocs' links, joined by commas.
func shmLinkTransports(t *testing.T, sock string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c, err := dbt3.Dial(ctx, sock, dbt3.DefaultDatabase)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if res, _, err := c.Exec(ctx, "select count(*) from orders"); err != nil || len(res.Rows) != 1 || res.Rows[0][0] != "15000" {
		t.Fatalf("count of orders: %v, %v", res, err)
	}
	st, _, err := c.Exec(ctx, "show query stats")
	if err != nil {
		t.Fatal(err)
	}
	proc, tr := slices.Index(st.Columns, "process"), slices.Index(st.Columns, "transport")
	var out []string
	for _, row := range st.Rows {
		if proc >= 0 && tr >= 0 && row[proc] != "exemgr" {
			out = append(out, row[tr])
		}
	}
	return strings.Join(out, ",")
}

// exitCode is a finished command's exit status (0 for a nil error, -1 if it did not run).
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

func svgFileWellFormed(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dbt3test.WellFormedSVG(t, path, data)
}
