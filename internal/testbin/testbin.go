// Package testbin owns the helpers integration tests use to build colink's commands into a
// temporary directory and run them as real processes.
package testbin

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Build compiles the package pkg (e.g. "./cmd/primproc", relative to the module root) into
// dir with the given build tags and returns the binary's path.
func Build(t testing.TB, dir, pkg string, tags ...string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	name := filepath.Base(pkg)
	if len(tags) > 0 {
		name += "-" + strings.Join(tags, "-")
	}
	out := filepath.Join(dir, name)
	// -buildvcs=auto: the daemons under test carry the checkout's revision, as dbt3 builds them.
	args := []string{"build", "-buildvcs=auto", "-o", out}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// Proc is a running command whose stderr is captured line by line.
type Proc struct {
	Cmd  *exec.Cmd
	mu   sync.Mutex
	log  strings.Builder
	done chan struct{}
	err  error
}

// Start runs bin with args; the process is killed when the test ends.
func Start(t testing.TB, bin string, args ...string) *Proc {
	t.Helper()
	p := Spawn(t, bin, args...)
	t.Cleanup(p.Kill)
	return p
}

// Spawn runs bin with args as Start does, but the process outlives the test: the caller
// kills it (a fixture that a package's tests share, stopped in TestMain).
func Spawn(t testing.TB, bin string, args ...string) *Proc {
	t.Helper()
	return SpawnEnv(t, nil, bin, args...)
}

// SpawnEnv is Spawn with env (NAME=value entries) added to the test's environment.
func SpawnEnv(t testing.TB, env []string, bin string, args ...string) *Proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Proc{Cmd: cmd, done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20) // a long log line must not stop the capture
		for sc.Scan() {
			p.mu.Lock()
			p.log.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
		}
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p
}

// Kill kills the process unless it has exited, and waits for it.
func (p *Proc) Kill() {
	select {
	case <-p.done:
	default:
		p.Cmd.Process.Kill()
		<-p.done
	}
}

// Terminate sends the process SIGTERM and returns its exit code, as Wait.
func (p *Proc) Terminate(t testing.TB, timeout time.Duration) int {
	t.Helper()
	p.Cmd.Process.Signal(syscall.SIGTERM)
	return p.Wait(t, timeout)
}

// name is the process's command and pid, for messages.
func (p *Proc) name() string {
	return fmt.Sprintf("%s (pid %d)", filepath.Base(p.Cmd.Path), p.Cmd.Process.Pid)
}

// Done is closed once the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Log returns the stderr captured so far.
func (p *Proc) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// WaitLog waits until stderr matches re and returns the first submatch (or the match).
func (p *Proc) WaitLog(t testing.TB, re string, timeout time.Duration) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if m := rx.FindStringSubmatch(p.Log()); m != nil {
			if len(m) > 1 {
				return m[1]
			}
			return m[0]
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited (%v) before logging %q:\n%s", p.name(), p.err, re, p.Log())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("%s logged nothing matching %q within %v:\n%s", p.name(), re, timeout, p.Log())
	return ""
}

// Wait waits for the process to exit and returns its exit code.
func (p *Proc) Wait(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		t.Fatalf("%s did not exit within %v:\n%s", p.name(), timeout, p.Log())
	}
	return p.Cmd.ProcessState.ExitCode()
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := listenTCP()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var port int
	fmt.Sscanf(l.Addr().String()[strings.LastIndex(l.Addr().String(), ":")+1:], "%d", &port)
	return port
}

// TempDir returns a short temporary directory (unix socket paths are limited to 107 bytes).
func TempDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "colink")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}
