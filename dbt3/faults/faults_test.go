package faults

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/colinkdb/colink/ipc"
)

func TestEveryFaultIsDescribed(t *testing.T) {
	cfg := DefaultConfig()
	seen := map[string]bool{}
	for _, f := range Describe(cfg) {
		if f.Name == "" || f.Summary == "" || f.Criterion == "" || f.Try == nil {
			t.Errorf("fault %q: a name, summary, criterion and Try are all needed", f.Name)
		}
		if seen[f.Name] {
			t.Errorf("fault %q twice", f.Name)
		}
		seen[f.Name] = true
	}
	if got := len(Names()); got != len(seen) || got < 10 {
		t.Errorf("Names lists %d faults, Describe %d", got, len(seen))
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		adjust func(*Config)
		want   string
	}{
		{func(c *Config) {}, ""},
		{func(c *Config) { c.Tries = 0 }, "tries 0"},
		{func(c *Config) { c.Transports = []string{"shm"} }, ""},
		{func(c *Config) { c.Transports = []string{"tcp", "unix", "shm"} }, ""},
		{func(c *Config) { c.Transports = []string{"unix", "memfd"} }, `transport "memfd": want one of tcp, unix, shm`},
		{func(c *Config) { c.Transports = []string{"auto"} }, `transport "auto"`},
		{func(c *Config) { c.Faults = []string{"garbage-link", "nope"} }, `unknown fault "nope"`},
		{func(c *Config) { c.HeartbeatTimeout = c.HeartbeatInterval }, "want 0 < interval < timeout"},
		{func(c *Config) { c.NetWriteTimeout = 500 * time.Millisecond }, "whole seconds"},
		{func(c *Config) { c.SF = "0" }, "scale factor"},
	} {
		cfg := DefaultConfig()
		tc.adjust(&cfg)
		err := cfg.Validate()
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate: %v, want %q", err, tc.want)
		}
	}
}

func TestTrialOutcomeOnlyWorsens(t *testing.T) {
	var tr Trial
	tr.errorAt(errors.New("primproc x is down\n  (twice)"), 1500*time.Millisecond, true)
	if tr.Outcome != ClearError || tr.Seconds != 1.5 || tr.Error != "primproc x is down (twice)" || !tr.Passed() {
		t.Fatalf("after a clear error: %+v", tr)
	}
	tr.set(Right)
	if tr.Outcome != ClearError {
		t.Errorf("set(Right) made %v better", ClearError)
	}
	tr.fail(Right, "a check failed")
	if tr.Outcome != UnclearError || tr.Passed() {
		t.Errorf("a failed check leaves %v, passed %v; want unclear, not passed", tr.Outcome, tr.Passed())
	}
	tr.fail(WrongAnswer, "half-written")
	tr.fail(Hang, "no end")
	if tr.Outcome != Hang || len(tr.Failures) != 3 {
		t.Errorf("outcome %v, failures %q", tr.Outcome, tr.Failures)
	}
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	var back Trial
	if err := json.Unmarshal(b, &back); err != nil || back.Outcome != Hang {
		t.Errorf("JSON round trip: %s -> %+v, %v", b, back, err)
	}
}

func TestReport(t *testing.T) {
	rep := &Report{Command: "dbt3 faults --tries 2", SF: "0.01", Tries: 2, Primprocs: 2, Transports: []string{"tcp"},
		Rows: []Row{
			{Fault: "kill-primproc-query", Transport: "tcp", Summary: "kill it", Criterion: "it fails fast",
				RSSBefore: map[string]int64{"exemgr": 40 << 20, "primproc0": 30 << 20}, RSSAfter: map[string]int64{"exemgr": 41 << 20},
				Trials: []Trial{
					{Try: 1, Outcome: ClearError, Seconds: 0.05, Error: "primproc tcp://127.0.0.1:4001 closed the connection"},
					{Try: 2, Outcome: ClearError, Seconds: 0.07, Error: "primproc tcp://127.0.0.1:4002 closed the connection"},
				}},
			{Fault: "kill-primproc-write", Transport: "tcp", Summary: "kill it mid-write", Criterion: "never half-written", Settled: true,
				RSSBefore: map[string]int64{"exemgr": 40 << 20}, RSSAfter: map[string]int64{"exemgr": 42 << 20},
				Trials: []Trial{
					{Try: 1, Outcome: Right, Notes: []string{"acknowledged; applied"}},
					{Try: 2, Outcome: WrongAnswer, Error: "error 1105", Failures: []string{"half-written: 3 rows"}, Notes: []string{"DELETE"}},
				}},
			{Fault: "crash-primproc-commit", Transport: "tcp", Skipped: "no primproc built with the colink_testhooks tag"},
		}}
	if n := rep.Failed(); n != 1 {
		t.Errorf("Failed() = %d, want 1", n)
	}
	var b strings.Builder
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"Made by `dbt3 faults --tries 2`",
		"**1 tries failed**",
		"| kill-primproc-query | tcp | 2 | 2 | 0 | 2 (0.05 / 0.07 / 0.07) | 0 | 0 | 0 | 0 | exemgr 40 → 41, primproc0 30 → — |",
		"| kill-primproc-write | tcp | 2 | 1 | 1 | 0 | 0 | 1 | 0 | 0 | exemgr 40 → 42\\* |",
		"| crash-primproc-commit | tcp | — | — | | skipped: no primproc built with the colink_testhooks tag |",
		"- kill-primproc-write over tcp, try 2 (wrong answer; DELETE): half-written: 3 rows. Error: `error 1105`",
		"**Passes if** never half-written.",
		"- ×2 `primproc tcp://127.0.0.1:4001 closed the connection`", // numbers aside, one error
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestSegmentLayout(t *testing.T) {
	for _, tc := range []struct {
		sf        string
		primprocs int
		want      string
	}{
		{"0.01", 2, "--segment-rows 8192 --row-group-rows 2048"}, // 60,175 lineitems: four segments each
		{"0.01", 1, "--segment-rows 16384 --row-group-rows 4096"},
		{"1", 2, ""}, // the defaults
	} {
		got, err := segmentLayout(tc.sf, tc.primprocs)
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("SF %s, %d primprocs: %q, %v; want %q", tc.sf, tc.primprocs, got, err, tc.want)
		}
	}
}

func TestParseState(t *testing.T) {
	if s, err := parseState("1000|499500\n"); err != nil || s != (tableState{1000, 499500}) {
		t.Errorf("parseState: %v, %v", s, err)
	}
	if _, err := parseState("1000\n"); err == nil {
		t.Error("parseState of one column: no error")
	}
}

// TestJudgeWrite: the table after a write interrupted by a crash is before or after it, as
// the write's answer allows.
func TestJudgeWrite(t *testing.T) {
	before, after, half := tableState{10, 45}, tableState{20, 190}, tableState{15, 100}
	unknown := &mysql.MySQLError{Number: 1397, Message: "outcome unknown"}
	plain := &mysql.MySQLError{Number: 1105, Message: "primproc down"}
	for _, tc := range []struct {
		name string
		err  error
		got  tableState
		want Outcome // worst outcome the judgement may leave
	}{
		{"acknowledged and there", nil, after, Right},
		{"acknowledged and lost", nil, before, WrongAnswer},
		{"outcome unknown, applied", unknown, after, Right},
		{"outcome unknown, not applied", unknown, before, Right},
		{"failed and not applied", plain, before, Right},
		{"failed but applied", plain, after, WrongAnswer},
		{"half-written", unknown, half, WrongAnswer},
	} {
		e := &Env{write: &writeState{}}
		var tr Trial
		e.judgeWrite(&tr, tc.err, before, after, tc.got)
		if tr.Outcome != tc.want {
			t.Errorf("%s: %v (%q), want %v", tc.name, tr.Outcome, tr.Failures, tc.want)
		}
		if e.write.model != tc.got {
			t.Errorf("%s: the model is %v, want the table's %v", tc.name, e.write.model, tc.got)
		}
	}
}

func TestSpansDecider(t *testing.T) {
	if spansDecider(keyStep, 1, 2) {
		t.Error("one key spans two primprocs")
	}
	if !spansDecider(keyStep, 20, 2) && !spansDecider(keyStep, 40, 2) {
		t.Error("40 keys all on one of two primprocs")
	}
}

// TestRawMySQL: the raw client's framing and ERR parsing, against a scripted server.
func TestRawMySQL(t *testing.T) {
	server, client := net.Pipe()
	defer server.Close()
	c := &rawMySQL{nc: client}
	c.r = bufio.NewReader(client)
	done := make(chan error, 1)
	go func() {
		// The query comes in as one packet of sequence 0; the answer is an ERR, then the
		// server hangs up.
		buf := make([]byte, 4+1+len("select 1"))
		_, err := io.ReadFull(server, buf)
		if err == nil && (buf[3] != 0 || buf[4] != 0x03 || string(buf[5:]) != "select 1") {
			err = errors.New("not a COM_QUERY of sequence 0: " + string(buf))
		}
		errPacket := append([]byte{0xff, 0x7a, 0x04, '#'}, "42000You have an error"...)
		server.Write(appendPacket(nil, 1, errPacket))
		done <- err
	}()
	if err := c.sendQuery("select 1"); err != nil {
		t.Fatal(err)
	}
	err := c.readReply(t.Context())
	var me *mysqlError
	if !errors.As(err, &me) || me.Code != 1146 || me.SQLState != "42000" || me.Message != "You have an error" {
		t.Fatalf("readReply: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := me.Error(); got != "ERROR 1146 (42000): You have an error" {
		t.Errorf("Error() = %q", got)
	}
}

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestShmInputs: garbage-link's hand-made handshake over a unix socket asking for shared
// memory gets the server's two segments and reads the ring's generation and size from
// them, and each RBATCH input of shm makes the server close the connection and log why.
// Over shm the RBATCH inputs come first; tcp and unix keep their inputs.
func TestShmInputs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("shared memory is Linux's (memfd)")
	}
	if got := linkInputsOver("shm"); len(got) != len(shmInputs)+len(linkInputs) || got[0].name != shmInputs[0].name {
		t.Errorf("over shm: %d inputs, the first %q", len(got), got[0].name)
	}
	if got := linkInputsOver("unix"); len(got) != len(linkInputs) {
		t.Errorf("over unix: %d inputs, want %d", len(got), len(linkInputs))
	}
	dir, err := os.MkdirTemp("", "flt") // short: a socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	srv := ipc.NewServer(ipc.ServerConfig{Name: "test", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })

	// Without asking: the plain socket, no segments.
	nc, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := linkHello(nc, 0); err != nil || s.shm {
		t.Errorf("a hello without shm: %+v, %v", s, err)
	}
	nc.Close()
	for _, in := range shmInputs {
		nc, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		s, err := linkHello(nc, faultShmSize)
		if err != nil || !s.shm || s.gen == 0 || s.cap != faultShmSize-4096 {
			t.Fatalf("%s: the shm handshake: %+v, %v", in.name, s, err)
		}
		if _, err := nc.Write(in.send(nil, s)); err != nil {
			t.Fatalf("%s: %v", in.name, err)
		}
		if _, closed, _ := readLinkClose(nc, time.Now().Add(5*time.Second)); !closed {
			t.Errorf("%s: the server kept the connection open", in.name)
		}
		nc.Close()
		deadline := time.Now().Add(5 * time.Second)
		for !containsLine(logs.String(), "link: closing connection", in.log) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no log line saying %q:\n%s", in.name, in.log, logs.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// containsLine reports whether some line of s contains every one of parts.
func containsLine(s string, parts ...string) bool {
	for _, line := range strings.Split(s, "\n") {
		if containsAll(line, parts) {
			return true
		}
	}
	return false
}
