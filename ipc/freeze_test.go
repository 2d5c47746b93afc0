package ipc

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The freeze tests put a peer in the state a stopped process (SIGSTOP) is in as seen from
// the other end: its kernel still completes connects (into the listen backlog) and buffers
// what is sent to it, and nothing comes back. A freezeProxy does that in process, between a
// client and a real server; the child-process test stops a real one.
//
// The heartbeat is short so the bounds are quick to check. freezeSlack absorbs a loaded
// 2-core CI machine (timers and goroutines running hundreds of milliseconds late) and still
// fails the old behaviour, which waited for a redial's handshake until the dial timeout
// (freezeDialTimeout).
var freezeLimits = Limits{HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 500 * time.Millisecond}

const (
	freezeDialTimeout = 5 * time.Second
	freezeSlack       = time.Second
	// freezeBound is how soon after a freeze (or after a call started, if later) every wait
	// on the frozen peer must end: the heartbeat timeout, one interval, and the slack.
	freezeBound = 500*time.Millisecond + 100*time.Millisecond + freezeSlack
)

// freezeProxy forwards TCP connections to a server until frozen. Frozen, it forwards
// nothing either way and accepts no connection, but keeps every socket open; thawed, it
// forwards again and accepts the connections that waited in the backlog.
type freezeProxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	thawed chan struct{} // closed while thawed
	// freezeOnAccept: freeze as soon as the next connection is accepted, before anything of
	// it is forwarded (a peer stopping in the middle of a redial's handshake).
	freezeOnAccept bool
	freezes        []span // every freeze: from, and to (zero while frozen)
	conns          []net.Conn
	closed         bool
}

func newFreezeProxy(t *testing.T, target string) *freezeProxy {
	t.Helper()
	ep, err := ParseEndpoint(target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &freezeProxy{ln: ln, target: ep.Address, thawed: make(chan struct{})}
	close(p.thawed)
	go p.acceptLoop()
	t.Cleanup(p.close)
	return p
}

func (p *freezeProxy) url() string { return "tcp://" + p.ln.Addr().String() }

func (p *freezeProxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.freezeOnAccept = false
	p.freezeLocked()
}

func (p *freezeProxy) freezeLocked() {
	select {
	case <-p.thawed:
		p.thawed = make(chan struct{})
		p.freezes = append(p.freezes, span{from: time.Now()})
	default: // frozen already
	}
}

// span is a stretch of time; a zero to is open.
type span struct{ from, to time.Time }

// overlap is how long s and [from, to] have in common.
func (s span) overlap(from, to time.Time) time.Duration {
	if !s.to.IsZero() && s.to.Before(to) {
		to = s.to
	}
	if s.from.After(from) {
		from = s.from
	}
	return max(0, to.Sub(from))
}

func (p *freezeProxy) thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.thawed:
	default:
		close(p.thawed)
		p.freezes[len(p.freezes)-1].to = time.Now()
	}
}

// freezeAtNextAccept arms freezeOnAccept (freeze disarms it).
func (p *freezeProxy) freezeAtNextAccept() {
	p.mu.Lock()
	p.freezeOnAccept = true
	p.mu.Unlock()
}

// frozenDuring returns the longest time the proxy stayed frozen, in one freeze, between
// from and to.
func (p *freezeProxy) frozenDuring(from, to time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var longest time.Duration
	for _, f := range p.freezes {
		longest = max(longest, f.overlap(from, to))
	}
	return longest
}

// waitThawed blocks while the proxy is frozen; false once it is closed.
func (p *freezeProxy) waitThawed() bool {
	p.mu.Lock()
	ch := p.thawed
	p.mu.Unlock()
	<-ch
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.closed
}

func (p *freezeProxy) acceptLoop() {
	for p.waitThawed() {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.freezeOnAccept {
			p.freezeOnAccept = false
			p.freezeLocked()
		}
		p.mu.Unlock()
		go p.serve(c)
	}
}

func (p *freezeProxy) serve(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	p.conns = append(p.conns, c, s)
	p.mu.Unlock()
	go p.pipe(s, c)
	go p.pipe(c, s)
}

// pipe copies src to dst while thawed. What it reads while frozen it holds (as a stopped
// process's socket buffer would) until thawed.
func (p *freezeProxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.waitThawed() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			p.waitThawed() // a close, too, reaches the other side only once thawed
			return
		}
	}
}

// cut closes the connections the proxy carries (each side reads an orderly close) and
// keeps accepting new ones.
func (p *freezeProxy) cut() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

func (p *freezeProxy) close() {
	p.mu.Lock()
	p.closed = true
	conns := p.conns
	p.conns = nil
	select {
	case <-p.thawed:
	default:
		close(p.thawed)
	}
	p.mu.Unlock()
	p.ln.Close()
	for _, c := range conns {
		c.Close()
	}
}

// linkFailure reports whether err is what a wait on a frozen or unreachable peer may end
// with.
func linkFailure(err error) bool {
	return errors.Is(err, ErrConnClosed) || errors.Is(err, ErrPeerSilent) || errors.Is(err, ErrPeerDown)
}

// dumpGoroutines is for a test that found a wait that did not end.
func dumpGoroutines(t *testing.T) {
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	t.Log(b.String())
}

// A connect that the kernel completes for a peer that never answers (a listener whose
// process does not accept: a stopped one) fails once the peer has been silent for the
// heartbeat timeout, not at the dial timeout; and so does a call waiting for that redial,
// though its context has no deadline.
func TestDialFrozenPeer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0") // never accepted
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	lg, _ := newTestLogger()
	start := time.Now()
	cl, err := NewClient("tcp://"+ln.Addr().String(), ClientConfig{Transport: TransportTCP, ConnsPerPeer: 1,
		Limits: freezeLimits, DialTimeout: freezeDialTimeout, Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	err = cl.WaitUp(context.Background())
	took := time.Since(start)
	t.Logf("dial to a frozen peer failed after %v: %v", took.Round(time.Millisecond), err)
	if !errors.Is(err, ErrPeerDown) || !errors.Is(err, ErrPeerSilent) {
		t.Errorf("WaitUp: %v, want ErrPeerDown wrapping ErrPeerSilent", err)
	}
	if took < freezeLimits.HeartbeatTimeout || took > freezeLimits.HeartbeatTimeout+freezeSlack {
		t.Errorf("the dial failed after %v, want the heartbeat timeout (%v) and at most %v more", took, freezeLimits.HeartbeatTimeout, freezeSlack)
	}
	start = time.Now()
	_, err = cl.Call(context.Background(), MethodEcho, nil)
	took = time.Since(start)
	if !errors.Is(err, ErrPeerDown) {
		t.Errorf("Call: %v, want ErrPeerDown", err)
	}
	if took > freezeLimits.HeartbeatTimeout+freezeSlack {
		t.Errorf("a call to a frozen peer failed after %v, want at most %v", took, freezeLimits.HeartbeatTimeout+freezeSlack)
	}
}

// When the peer freezes, every wait on it ends within the bound: a stream's Recv, an upload
// blocked on credit or in a write to a socket nobody drains, a unary call already sent, and
// a call made once the connections are gone (which waits for a redial that connects and
// then hears nothing). A redial that the peer freezes in the middle of fails in time too,
// and after the thaw the client reconnects.
func TestFrozenPeerEndsEveryWait(t *testing.T) {
	env := startServer(t, ServerConfig{Limits: freezeLimits})
	sizeHandlers(env.srv, newBlobSizer(t))
	px := newFreezeProxy(t, env.tcp)
	cl := newTestClient(t, px.url(), ClientConfig{Transport: TransportTCP, ConnsPerPeer: 2, Limits: freezeLimits, DialTimeout: freezeDialTimeout})
	ctx := context.Background() // no deadline: the link alone must end every wait

	type outcome struct {
		what string
		err  error
		at   time.Time
	}
	results := make(chan outcome, 4)
	recv, err := cl.Open(ctx, "block", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	defer recv.Close()
	go func() {
		_, err := recv.Recv()
		results <- outcome{"Recv", err, time.Now()}
	}()
	up, err := cl.Open(ctx, "drain", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	sent := make(chan struct{}, 1)
	go func() {
		defer signal(sent) // also if the first Send fails
		rec := blobBatch(memory.DefaultAllocator, 1<<20)
		defer rec.Release()
		for {
			if err := up.Send(rec); err != nil {
				results <- outcome{"Send", err, time.Now()}
				return
			}
			signal(sent)
		}
	}()
	<-sent
	go func() {
		_, err := cl.Call(ctx, "block", nil)
		results <- outcome{"Call", err, time.Now()}
	}()
	time.Sleep(200 * time.Millisecond) // the upload fills the socket; the call is sent

	px.freeze()
	frozen := time.Now()
	timeout := time.After(10 * time.Second)
	for range 3 {
		select {
		case r := <-results:
			took := r.at.Sub(frozen)
			t.Logf("%s ended %v after the freeze: %v", r.what, took.Round(time.Millisecond), r.err)
			if !linkFailure(r.err) {
				t.Errorf("%s: %v, want a link failure", r.what, r.err)
			}
			if took > freezeBound {
				t.Errorf("%s ended %v after the freeze, want at most %v", r.what, took, freezeBound)
			}
		case <-timeout:
			dumpGoroutines(t)
			t.Fatal("a wait on the frozen peer did not end within 10s")
		}
	}

	// The connections are gone: a call waits for a redial, which connects into the backlog.
	start := time.Now()
	_, err = cl.Call(ctx, MethodEcho, nil)
	if took := time.Since(start); !linkFailure(err) || took > freezeBound {
		t.Errorf("call while frozen: %v after %v, want a link failure within %v", err, took, freezeBound)
	}

	// Thaw, and freeze again the moment the next redial is accepted: its handshake hears
	// nothing back.
	px.freezeAtNextAccept()
	px.thaw()
	start = time.Now()
	_, err = cl.Call(ctx, MethodEcho, nil)
	if took := time.Since(start); err == nil || !linkFailure(err) || took > freezeBound {
		t.Errorf("call during a handshake frozen midway: %v after %v, want a link failure within %v", err, took, freezeBound)
	}
	px.freeze() // disarmed, if no redial came
	px.thaw()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		if _, err := cl.Call(wctx, MethodEcho, nil); err == nil {
			break
		} else if wctx.Err() != nil {
			t.Fatalf("no reconnection after the thaw: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Freeze/thaw cycles, some thawed for less than a reconnection takes and some freezing a
// redial's handshake midway, while callers keep calling with no deadline of their own:
// every call succeeds or fails with a link error, none waits on the frozen peer for longer
// than the bound in one freeze (it fails first, or the thaw comes first), and the client is
// up and answering after the last thaw.
func TestFreezeThawCycles(t *testing.T) {
	cycles := 3
	if os.Getenv("COLINK_FAULTS") != "" {
		cycles = 20
	}
	env := startServer(t, ServerConfig{Limits: freezeLimits})
	px := newFreezeProxy(t, env.tcp)
	cl := newTestClient(t, px.url(), ClientConfig{Transport: TransportTCP, ConnsPerPeer: 2, Limits: freezeLimits, DialTimeout: freezeDialTimeout})

	stop := make(chan struct{})
	type bad struct {
		took time.Duration
		err  error
	}
	var (
		mu       sync.Mutex
		calls    int
		failures int
		late     []bad
		worst    time.Duration
	)
	var callers sync.WaitGroup
	for range 3 {
		callers.Add(1)
		go func() {
			defer callers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				_, err := cl.Call(context.Background(), MethodEcho, nil)
				end := time.Now()
				waited := px.frozenDuring(start, end)
				mu.Lock()
				calls++
				worst = max(worst, waited)
				if err != nil {
					failures++
				}
				if (err != nil && !linkFailure(err)) || waited > freezeBound {
					late = append(late, bad{waited, err})
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}

	rng := rand.New(rand.NewPCG(18, 2))
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo))) }
	for i := range cycles {
		time.Sleep(between(100*time.Millisecond, time.Second))          // thawed: sometimes less than a reconnection
		frozen := between(2200*time.Millisecond, 2500*time.Millisecond) // long past a redial's heartbeat timeout
		if i%2 == 1 {
			px.freezeAtNextAccept() // freezes when a redial connects, if one does before the next step
			time.Sleep(between(100*time.Millisecond, 800*time.Millisecond))
			frozen = between(300*time.Millisecond, 1200*time.Millisecond)
		}
		px.freeze()
		time.Sleep(frozen)
		px.thaw()
	}

	// After the last thaw the client comes back and answers.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.WaitUp(ctx); err != nil {
		for ctx.Err() == nil && !cl.Up() {
			time.Sleep(20 * time.Millisecond)
		}
	}
	var lastErr error
	ok := 0
	for ; ok < 20 && ctx.Err() == nil; time.Sleep(5 * time.Millisecond) {
		if _, lastErr = cl.Call(ctx, MethodEcho, nil); lastErr == nil {
			ok++
		}
	}
	close(stop)
	done := make(chan struct{})
	go func() { callers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		dumpGoroutines(t)
		t.Fatal("a caller is still waiting 10s after the last thaw")
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d cycles: %d calls, %d failed; the longest a call waited in one freeze: %v (bound %v)", cycles, calls, failures, worst.Round(time.Millisecond), freezeBound)
	if ok < 20 {
		t.Errorf("after the last thaw only %d calls succeeded: %v", ok, lastErr)
	}
	for _, b := range late {
		t.Errorf("a call waited %v in one freeze (bound %v), ending with %v", b.took, freezeBound, b.err)
	}
}

// A real server process stopped with SIGSTOP, over TCP and over its unix socket: the live
// connection is declared dead within the bound, a call made while it is stopped (a redial
// that connects into the backlog) fails within the bound too, saying for the unix peer that
// its process is stopped, and after SIGCONT the client reconnects.
func TestStoppedServerRedial(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	child := startChild(t, 0, freezeLimits)
	type peer struct {
		name string
		cl   *Client
	}
	var peers []peer
	for _, tc := range []struct {
		url string
		tr  Transport
	}{{child.tcp, TransportTCP}, {child.unix, TransportUnix}} {
		cl := newTestClient(t, tc.url, ClientConfig{Transport: tc.tr, ConnsPerPeer: 1, Limits: freezeLimits, DialTimeout: freezeDialTimeout})
		peers = append(peers, peer{string(tc.tr), cl})
	}
	conns := map[string]*Conn{}
	for _, p := range peers {
		if _, err := p.cl.Call(context.Background(), MethodEcho, nil); err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		conns[p.name] = p.cl.Conns()[0]
	}
	if err := child.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = child.cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	defer resume()
	for name, c := range conns {
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the connection to a stopped server is still up after 10s", name)
		}
		if took := time.Since(stopped); took > freezeBound {
			t.Errorf("%s: declared dead %v after the stop, want at most %v", name, took, freezeBound)
		}
	}
	var wg sync.WaitGroup
	for _, p := range peers {
		waitFor(t, func() bool { return !p.cl.Up() }) // the call waits for a redial
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			_, err := p.cl.Call(context.Background(), MethodEcho, nil)
			took := time.Since(start)
			t.Logf("%s: a call while stopped failed after %v: %v", p.name, took.Round(time.Millisecond), err)
			if !errors.Is(err, ErrPeerDown) || !errors.Is(err, ErrPeerSilent) || took > freezeBound {
				t.Errorf("%s: %v after %v, want ErrPeerDown (a silent redial) within %v", p.name, err, took, freezeBound)
			}
			if p.name == "unix" && err != nil && !strings.Contains(err.Error(), "is stopped") {
				t.Errorf("unix: %v: the error should say the server's process is stopped", err)
			}
		}()
	}
	wg.Wait()
	resume()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, p := range peers {
		for {
			if _, err := p.cl.Call(ctx, MethodEcho, nil); err == nil {
				break
			} else if ctx.Err() != nil {
				t.Fatalf("%s: no reconnection after SIGCONT: %v", p.name, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// stallingWriter is a log destination that, once stalled, blocks every write until
// released: a daemon's stderr on a pipe nobody drains.
type stallingWriter struct {
	mu      sync.Mutex
	stalled bool
	release chan struct{}
}

func (w *stallingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	stalled := w.stalled
	w.mu.Unlock()
	if stalled {
		<-w.release
	}
	return len(p), nil
}

func (w *stallingWriter) stall() {
	w.mu.Lock()
	w.stalled = true
	w.mu.Unlock()
}

func (w *stallingWriter) unstall() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stalled {
		w.stalled = false
		close(w.release)
	}
}

// A log whose writes block does not hold the link up: the connections to a frozen peer
// still fail their waits within the bound, and a call with a deadline still gets its
// answer by then, though every log line about it waits.
func TestStalledLogHoldsNoFailure(t *testing.T) {
	env := startServer(t, ServerConfig{Limits: freezeLimits})
	px := newFreezeProxy(t, env.tcp)
	w := &stallingWriter{release: make(chan struct{})}
	cl := newTestClient(t, px.url(), ClientConfig{Transport: TransportTCP, ConnsPerPeer: 2, Limits: freezeLimits,
		DialTimeout: freezeDialTimeout, Logger: slog.New(slog.NewTextHandler(w, nil))})
	t.Cleanup(w.unstall) // before the client's Close, which waits for its goroutines

	ctx := context.Background()
	st, err := cl.Open(ctx, "block", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recvDone := make(chan error, 1)
	go func() {
		_, err := st.Recv()
		recvDone <- err
	}()
	w.stall()
	px.freeze()
	frozen := time.Now()
	select {
	case err := <-recvDone:
		if took := time.Since(frozen); !linkFailure(err) || took > freezeBound {
			t.Errorf("Recv: %v after %v, want a link failure within %v", err, took, freezeBound)
		}
	case <-time.After(10 * time.Second):
		dumpGoroutines(t)
		t.Fatal("Recv on a frozen peer's connection still waits 10s after the freeze, behind the stalled log")
	}
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	start := time.Now()
	callDone := make(chan error, 1)
	go func() {
		_, err := cl.Call(cctx, MethodEcho, nil)
		callDone <- err
	}()
	select {
	case err := <-callDone:
		if took := time.Since(start); err == nil || took > time.Second+freezeSlack {
			t.Errorf("a call with a 1s deadline: %v after %v", err, took)
		}
	case <-time.After(10 * time.Second):
		dumpGoroutines(t)
		t.Fatal("a call with a 1s deadline still waits after 10s, behind the stalled log")
	}
}
