package ipc

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The liveness tests run the server in a child process (this test binary, re-executed), so
// that it can be loaded with CPU work of its own and stopped with SIGSTOP.

const childEnv = "COLINK_IPC_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "server":
		os.Exit(runChildServer())
	case "client":
		os.Exit(runChildClient())
	}
	os.Exit(m.Run())
}

// runChildServer serves the test handlers on a loopback TCP port and a unix socket in
// $COLINK_IPC_TEST_DIR, prints "ready <tcp> <unix>" and serves until killed.
// $COLINK_IPC_TEST_BURN goroutines burn CPU and churn the heap all along.
func runChildServer() int {
	// Warnings (a connection closed, and why) go to stderr, which the test shows.
	lg := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("process", "child")
	var lim Limits // $COLINK_IPC_TEST_HEARTBEAT: "interval,timeout" (default: the defaults)
	if hb := strings.Split(os.Getenv("COLINK_IPC_TEST_HEARTBEAT"), ","); len(hb) == 2 {
		lim.HeartbeatInterval, _ = time.ParseDuration(hb[0])
		lim.HeartbeatTimeout, _ = time.ParseDuration(hb[1])
	}
	s := NewServer(ServerConfig{Name: "child", Logger: lg, Limits: lim})
	testHandlers(s)
	sizeHandlers(s, blobSizer{})
	s.Handle("stall", func(ctx context.Context, st *Stream) error {
		// A handler busy elsewhere: it does not read its stream for a while.
		select {
		case <-time.After(3 * time.Second):
		case <-ctx.Done():
			return ctx.Err()
		}
		for {
			rec, err := st.Recv()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			rec.Release()
		}
	})
	tl, err := Listen(Endpoint{Network: "tcp", Address: "127.0.0.1:0"}, false)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ul, err := Listen(Endpoint{Network: "unix", Address: filepath.Join(os.Getenv("COLINK_IPC_TEST_DIR"), "child.sock")}, false)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	burn, _ := strconv.Atoi(os.Getenv("COLINK_IPC_TEST_BURN"))
	for i := range burn {
		go burnCPU(i, nil)
	}
	fmt.Printf("ready %s %s\n", tl.Endpoint(), ul.Endpoint())
	if err := s.Serve(tl, ul); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// burnCPU keeps a processor busy until stop is closed (nil: forever): half of the burners
// spin in a tight loop that never yields (the Go scheduler preempts it every 10 ms), the
// other half hash freshly allocated buffers (garbage for the collector too).
func burnCPU(seed int, stop <-chan struct{}) {
	var sink [32]byte
	x := uint64(seed)
	for i := seed; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		if seed%2 == 0 {
			for range 1 << 20 {
				x = x*6364136223846793005 + 1442695040888963407
			}
			sink[0] ^= byte(x)
		} else {
			b := make([]byte, 64<<10+i%4096)
			b[0] = byte(i)
			sink = sha256.Sum256(b)
		}
		if sink[0] == 1 && sink[1] == 2 && sink[2] == 3 && sink[3] == 4 {
			runtime.Gosched() // practically never; keeps sink live
		}
	}
}

type childServer struct {
	cmd       *exec.Cmd
	tcp, unix string
}

// stop kills the child now (the test's cleanup would at its end).
func (c *childServer) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGCONT)
	_ = c.cmd.Process.Kill()
	_ = c.cmd.Wait()
}

// startChild starts the child server with burn CPU-burning goroutines and, if lim sets
// them, that heartbeat interval and timeout.
func startChild(t *testing.T, burn int, lim Limits) *childServer {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=server", "COLINK_IPC_TEST_DIR="+t.TempDir(),
		"COLINK_IPC_TEST_BURN="+strconv.Itoa(burn), "GOMAXPROCS=2",
		fmt.Sprintf("COLINK_IPC_TEST_HEARTBEAT=%v,%v", lim.HeartbeatInterval, lim.HeartbeatTimeout))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child := &childServer{cmd: cmd}
	t.Cleanup(child.stop)
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case l := <-line:
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != "ready" {
			t.Fatalf("child said %q", l)
		}
		child.tcp, child.unix = f[1], f[2]
		return child
	case <-time.After(20 * time.Second):
		t.Fatal("child server did not start")
	}
	return nil
}

type livePeer struct {
	name string
	cl   *Client
	lb   *logBuf
}

// busyPhase starts a child server burning CPU, connects to it over TCP and a unix socket,
// and loads both connections for 2 s while this process burns CPU too. It returns what went
// wrong, and whether a peer was declared dead (the other problems may follow from that).
func busyPhase(t *testing.T) (child *childServer, peers []livePeer, problems []string, declaredDead bool) {
	child = startChild(t, 4, Limits{})
	for _, tc := range []struct {
		url string
		tr  Transport
	}{{child.tcp, TransportTCP}, {child.unix, TransportUnix}} {
		lg, lb := newTestLogger()
		cl := newTestClient(t, tc.url, ClientConfig{Transport: tc.tr, ConnsPerPeer: 1, Logger: lg})
		peers = append(peers, livePeer{string(tc.tr), cl, lb})
	}

	// This process burns CPU too, as a client generating a bulk load would.
	stopBurn := make(chan struct{})
	var burners sync.WaitGroup
	for i := range 4 {
		burners.Add(1)
		go func() {
			defer burners.Done()
			burnCPU(i, stopBurn)
		}()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const busyFor = 2 * time.Second
	started := time.Now()
	bulkCtx, bulkCancel := context.WithTimeout(ctx, busyFor)
	defer bulkCancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	fail := func(format string, args ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	for _, p := range peers {
		wg.Add(3)
		go func() { // downloads, consumed slowly
			defer wg.Done()
			for end := time.Now().Add(busyFor); time.Now().Before(end); {
				st, err := p.cl.Open(ctx, "gen", mpMap("n", 10, "rows", 20000), true)
				if err != nil {
					fail("%s: open gen: %v", p.name, err)
					return
				}
				for {
					rec, err := st.Recv()
					if err == io.EOF {
						break
					}
					if err != nil {
						fail("%s: gen: %v", p.name, err)
						st.Close()
						return
					}
					rec.Release()
					time.Sleep(5 * time.Millisecond)
				}
				st.Close()
			}
		}()
		go func() { // an upload into a handler that does not read for 3 s
			defer wg.Done()
			st, err := p.cl.Open(ctx, "stall", nil, false)
			if err != nil {
				fail("%s: open stall: %v", p.name, err)
				return
			}
			defer st.Close()
			for i := range 40 {
				rec := makeBatch(memory.DefaultAllocator, i*10000, 10000)
				err := st.Send(rec)
				rec.Release()
				if err != nil {
					fail("%s: upload: %v", p.name, err)
					return
				}
			}
			if err := st.CloseSend(nil); err != nil {
				fail("%s: upload end: %v", p.name, err)
				return
			}
			if _, err := st.Recv(); err != io.EOF {
				fail("%s: upload: %v", p.name, err)
			}
		}()
		for range 6 { // bulk uploads, canceled at the end: a writer queue of many megabytes
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := p.cl.Open(bulkCtx, "drain", nil, false)
				if err != nil {
					fail("%s: open drain: %v", p.name, err)
					return
				}
				defer st.Close()
				rec := blobBatch(memory.DefaultAllocator, 4<<20)
				defer rec.Release()
				for {
					if err := st.Send(rec); err != nil {
						// At the deadline either side may end the stream first (the server
						// has the deadline too); only a failed connection is a failure then.
						dl, _ := bulkCtx.Deadline()
						if time.Now().Before(dl) || errors.Is(err, ErrConnClosed) || errors.Is(err, ErrPeerSilent) {
							fail("%s: bulk upload: %v", p.name, err)
						}
						return
					}
				}
			}()
		}
		go func() { // unary calls
			defer wg.Done()
			for end := time.Now().Add(busyFor); time.Now().Before(end); {
				if _, err := p.cl.Call(ctx, "echo", nil); err != nil {
					fail("%s: call: %v", p.name, err)
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	close(stopBurn)
	burners.Wait()
	t.Logf("busy phase: %v", time.Since(started).Round(time.Millisecond))
	for _, p := range peers {
		for _, c := range p.cl.Conns() {
			t.Logf("%s: the longest silence of the busy peer was %v (timeout %v)", p.name, c.Stats().MaxSilence.Round(time.Millisecond), DefaultHeartbeatTimeout)
		}
	}
	for _, p := range peers {
		if strings.Contains(p.lb.String(), "peer down") || strings.Contains(p.lb.String(), "nothing received") {
			declaredDead = true
			fail("%s: a busy peer was declared dead:\n%s", p.name, tail(p.lb.String(), 2000))
		}
	}
	return child, peers, problems, declaredDead
}

// A busy peer is alive: a server whose process burns both cores (and whose handler does not
// read its stream for seconds) while a client also burns CPU keeps its connections over the
// default 1 s heartbeat timeout; the same server stopped with SIGSTOP is declared dead in
// about a second.
func TestLivenessUnderLoadAndSIGSTOP(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a CPU-burning child process")
	}
	child, peers, problems, declaredDead := busyPhase(t)
	if declaredDead {
		// The test's own burners already load the machine to 4 on 2 cores; a CI run adds
		// other packages' tests beside it, and a loopback TCP peer (whose process cannot be
		// asked about) then goes silent past the timeout now and then. A defect declares the
		// busy peer dead every time, so one retry on fresh processes tells the two apart.
		t.Logf("first attempt: a busy peer was declared dead; retrying once on a fresh child:\n%s", strings.Join(problems, "\n"))
		child.stop()
		for _, p := range peers {
			p.cl.Close()
		}
		child, peers, problems, _ = busyPhase(t)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if len(problems) > 0 {
		return
	}

	// Now stop the child: both connections must be declared dead in about a second.
	conns := map[string]*Conn{}
	for _, p := range peers {
		c := p.cl.Conns()
		if len(c) != 1 {
			t.Fatalf("%s: %d live connections", p.name, len(c))
		}
		conns[p.name] = c[0]
	}
	if err := child.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	for name, c := range conns {
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: connection to a stopped peer still up after 5s", name)
		}
		took := time.Since(stopped)
		if err := c.Err(); !errors.Is(err, ErrPeerSilent) {
			t.Errorf("%s: connection ended with %v, want ErrPeerSilent", name, err)
		} else if name == "unix" && !strings.Contains(err.Error(), "is stopped") {
			t.Errorf("unix: %v: the error should say the peer's process is stopped", err)
		}
		t.Logf("%s: stopped peer declared dead after %v", name, took.Round(time.Millisecond))
		// The silence may have begun up to a heartbeat interval and a half before the stop.
		if took < DefaultHeartbeatTimeout-2*DefaultHeartbeatInterval || took > DefaultHeartbeatTimeout+time.Second {
			t.Errorf("%s: stopped peer declared dead after %v, want about %v", name, took, DefaultHeartbeatTimeout)
		}
	}
}

func TestProcessState(t *testing.T) {
	if st, err := processState(os.Getpid()); err != nil || (st != 'R' && st != 'S') {
		t.Fatalf("this process: %c %v", st, err)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep(1):", err)
	}
	pid := cmd.Process.Pid
	defer cmd.Process.Kill()
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { st, _ := processState(pid); return st == 'T' })
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if st, err := processState(pid); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("a reaped process: %c %v", st, err)
	}
}

// A unix peer that is running but silent (here a fake server in this very process that
// completes the handshake, then neither reads nor writes) is given more than the heartbeat
// timeout, as a peer whose runtime is stalled would be, and is declared unresponsive after
// localPeerSilenceFactor timeouts.
func TestRunningLocalPeerGetsLonger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "silent.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		var hb [HeaderSize]byte
		if _, err := io.ReadFull(nc, hb[:]); err != nil {
			return
		}
		h, _ := DecodeHeader(hb[:], MaxFrameCap)
		_, _ = io.CopyN(io.Discard, nc, int64(h.Length))
		hello := Hello{Version: Version, Role: "server", Instance: make([]byte, 16), Nonce: make([]byte, 32),
			Auth: AuthPeerCred, MaxFrame: 1 << 20, Window: 1 << 20, MaxStreams: 8}
		_, _ = nc.Write(AppendFrame(nil, KindHello, 0, 0, AppendHello(nil, &hello)))
		time.Sleep(10 * time.Second) // silent; the connection closes first
	}()
	const timeout = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	nc, err := Dial(ctx, Endpoint{Network: "unix", Address: path})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	lg, _ := newTestLogger()
	c, err := NewClientConn(ctx, nc, ClientConfig{Logger: lg, Limits: Limits{HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: timeout}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-c.Done():
		t.Fatalf("declared dead after %v: %v", time.Since(start), c.Err())
	case <-time.After(4 * timeout):
	}
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a silent local peer was never declared dead")
	}
	took := time.Since(start)
	if err := c.Err(); !errors.Is(err, ErrPeerSilent) || !strings.Contains(err.Error(), "is running") || took < localPeerSilenceFactor*timeout {
		t.Fatalf("after %v: %v", took, err)
	}
}

// TestRequestAfterQuietClose: a peer that closes an idle connection between the background
// reader's ticks (a primproc killed and restarted at once) does not cost the next request,
// which would otherwise go out on the closed connection and be lost with it: the client
// sees the close waiting in the socket before it sends, and redials.
func TestRequestAfterQuietClose(t *testing.T) {
	env := startServer(t, ServerConfig{})
	px := newFreezeProxy(t, env.tcp) // never frozen: a plain proxy whose connections cut closes
	// A heartbeat interval far beyond the test, so that no tick reads the close first.
	lim := Limits{HeartbeatInterval: time.Minute}
	cl, err := NewClient(px.url(), ClientConfig{Transport: TransportTCP, ConnsPerPeer: 1, Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cl.Call(ctx, MethodEcho, nil); err != nil {
		t.Fatal(err)
	}
	before := cl.Snapshot(StatsOptions{}).ByTransport["tcp"]
	conn := cl.Conns()[0]
	if conn.failIfPeerGone() {
		t.Fatal("failIfPeerGone failed a connection whose peer is there")
	}
	px.cut()
	time.Sleep(50 * time.Millisecond) // the close reaches the client's socket
	for i := range 3 {
		if _, err := cl.Call(ctx, MethodEcho, nil); err != nil {
			t.Fatalf("call %d after the peer closed the idle connection: %v", i, err)
		}
	}
	select {
	case <-conn.Done():
	default:
		t.Fatal("the closed connection is still up")
	}
	// The per-transport totals count the ended connection too: they only grow, as the
	// metrics endpoint's counters must.
	after := cl.Snapshot(StatsOptions{}).ByTransport["tcp"]
	if after.Conns < 2 || after.BytesOut <= before.BytesOut || after.FramesIn <= before.FramesIn {
		t.Errorf("ByTransport[tcp] went from %+v to %+v: the ended connection's counters were dropped", before, after)
	}
}

// runChildClient dials $COLINK_IPC_TEST_TARGET with a handshake budget of 1.5 s, prints
// "dialling", makes one echo call, and exits 0 if it succeeded (printing the error if not).
func runChildClient() int {
	lg := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("process", "child")
	cl, err := NewClient(os.Getenv("COLINK_IPC_TEST_TARGET"), ClientConfig{Transport: TransportTCP, ConnsPerPeer: 1,
		DialTimeout: 1500 * time.Millisecond, Limits: Limits{HandshakeTimeout: 1500 * time.Millisecond, HeartbeatTimeout: 10 * time.Second}, Logger: lg})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("dialling")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := cl.Call(ctx, MethodEcho, nil); err != nil {
		fmt.Println("call:", err)
		return 1
	}
	return 0
}

// TestDialAcrossStop: a client process stopped (SIGSTOP) in the middle of a dial's handshake
// for longer than the handshake's budget sees, once resumed, a deadline that passed while it
// did not run. That says nothing of the peer, which is up: the request waiting for the
// connection must be served by a redial, not fail (an exemgr stopped while it redialled
// failed the first statement after its resume: TestFirstStatementAfterFreeze).
func TestDialAcrossStop(t *testing.T) {
	env := startServer(t, ServerConfig{})
	px := newFreezeProxy(t, env.tcp)
	px.freezeAtNextAccept() // the child's first handshake gets no answer until thawed
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=client", "COLINK_IPC_TEST_TARGET="+px.url())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGCONT); _ = cmd.Process.Kill() }()
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "dialling" {
		t.Fatalf("child: %q\n%s", lines.Text(), stderr.String())
	}
	// The proxy freezes as it accepts the child's connection: from then on the child is in
	// its handshake, which the proxy leaves unanswered.
	frozen := func() bool {
		px.mu.Lock()
		defer px.mu.Unlock()
		return len(px.freezes) > 0
	}
	for deadline := time.Now().Add(20 * time.Second); !frozen(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the child never connected\n%s", stderr.String())
		}
	}
	time.Sleep(300 * time.Millisecond) // its hello sent, it waits for the answer
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond) // past the handshake's budget
	// Resumed while the proxy still holds the answer back, the child can only see its
	// deadline passed (thawing first let the answer race the deadline on a loaded machine,
	// and the answer sometimes won: no stalled dial to see). Its redial waits in the
	// proxy's backlog until the thaw.
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	px.thaw()
	var rest strings.Builder
	for lines.Scan() {
		rest.WriteString(lines.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the child's call after its resume: %v: %s\n%s", err, rest.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "redialling at once") {
		t.Errorf("the child did not redial after the stalled dial (was it stopped in the handshake?):\n%s", stderr.String())
	}
}
