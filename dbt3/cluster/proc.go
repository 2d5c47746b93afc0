package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// logTailLines is how many of a daemon's last log lines an error quotes.
const logTailLines = 30

// proc is one daemon child: its own process group, stdout and stderr going to its log file
// and to a ring of its last lines.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	files   []string // socket files (and their .lock files) to remove once it is gone
	debug   string   // its --debug-listen address, with Config.Profiling

	mu      sync.Mutex
	lines   []string // the last logTailLines lines
	matched map[string]int
	exited  chan struct{}
	waitErr error
	logDone chan struct{}
}

// startProc starts bin with args in a new process group, with env (NAME=value entries)
// added to the driver's environment. watch lists substrings whose occurrences in the log are
// counted (see count). The log file is appended to, so a daemon started again on the same
// log keeps its earlier lives' lines (each start begins with a "# command" line).
func startProc(name, bin string, args, env []string, logPath string, watch ...string) (*proc, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: log file: %w", name, err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		logFile.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	// A process group of its own keeps the terminal's Ctrl-C away from the daemon (the
	// driver stops it in order); Pdeathsig kills it if the driver dies without doing so.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &proc{name: name, cmd: cmd, logPath: logPath, matched: map[string]int{}, exited: make(chan struct{}), logDone: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		logFile.Close()
		return nil, fmt.Errorf("%s: start %s: %w", name, bin, err)
	}
	pw.Close()
	fmt.Fprintf(logFile, "# %s\n", strings.Join(cmd.Args, " "))
	go func() {
		defer close(p.logDone)
		defer logFile.Close()
		defer pr.Close()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			io.WriteString(logFile, line+"\n")
			p.mu.Lock()
			if len(p.lines) == logTailLines {
				copy(p.lines, p.lines[1:])
				p.lines = p.lines[:logTailLines-1]
			}
			p.lines = append(p.lines, line)
			for _, w := range watch {
				if strings.Contains(line, w) {
					p.matched[w]++
				}
			}
			p.mu.Unlock()
		}
	}()
	go func() {
		err := cmd.Wait()
		<-p.logDone // the last lines are in before anyone reads why it exited
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(p.exited)
	}()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// count returns how many log lines so far contained w (one of startProc's watch strings).
func (p *proc) count(w string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.matched[w]
}

// tail returns the last log lines.
func (p *proc) tail() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

// exitErr returns nil while the process runs, else how it ended.
func (p *proc) exitErr() error {
	select {
	case <-p.exited:
	default:
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waitErr == nil {
		return errors.New("exited with status 0")
	}
	return p.waitErr
}

// stop ends the process: SIGTERM to its process group, SIGKILL after grace, then removes
// the socket files it may have left. It returns how the process ended if that was not a
// clean exit after the SIGTERM.
func (p *proc) stop(grace time.Duration) error {
	var err error
	select {
	case <-p.exited:
	default:
		syscall.Kill(-p.pid(), syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(grace):
			syscall.Kill(-p.pid(), syscall.SIGKILL)
			<-p.exited
			err = fmt.Errorf("%s did not stop within %v of SIGTERM and was killed", p.name, grace)
		}
		if err == nil {
			p.mu.Lock()
			if p.waitErr != nil {
				err = fmt.Errorf("%s: %w at shutdown", p.name, p.waitErr)
			}
			p.mu.Unlock()
		}
	}
	// Anything left in the group (there should be nothing) goes too.
	syscall.Kill(-p.pid(), syscall.SIGKILL)
	for _, f := range p.files {
		os.Remove(f)
		os.Remove(f + ".lock")
	}
	return err
}

// StartError reports a daemon that did not come up, with its own last log lines.
type StartError struct {
	Name    string // "primproc0", "exemgr"
	Reason  string // e.g. "exited with status 2", "not ready within 30s"
	Log     []string
	LogPath string
}

func (e *StartError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s did not start: %s", e.Name, e.Reason)
	if len(e.Log) == 0 {
		fmt.Fprintf(&b, " (it logged nothing; %s)", e.LogPath)
		return b.String()
	}
	fmt.Fprintf(&b, "; its log (%s) ends:", e.LogPath)
	for _, l := range e.Log {
		b.WriteString("\n  " + l)
	}
	return b.String()
}

func (p *proc) startError(reason string) *StartError {
	return &StartError{Name: p.name, Reason: reason, Log: p.tail(), LogPath: p.logPath}
}

// DiedError reports a daemon that exited while the driver needed it.
type DiedError struct {
	Name    string
	Err     error
	Log     []string
	LogPath string
}

func (e *DiedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s died: %v; its log (%s) ends:", e.Name, e.Err, e.LogPath)
	for _, l := range e.Log {
		b.WriteString("\n  " + l)
	}
	return b.String()
}
