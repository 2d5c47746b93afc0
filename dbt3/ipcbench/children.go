package ipcbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	arrowipc "github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/internal/rusage"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
)

// RawServerArg is the hidden argument with which Run re-executes the running program as the
// raw baseline's server, so that the client and the server are separate processes, each
// with its own CPU accounting: the program's main must then call ServeRaw.
const RawServerArg = "__serve-raw"

// ServeRaw is the raw baseline's server, the life of a child process Run started: it
// listens on a loopback TCP port and a unix socket, writes "READY <tcp-url> <unix-url>" on
// stdout, answers each "RUSAGE" line on stdin with a JSON rusage.Usage map, and returns when
// stdin closes, so the child never outlives its parent.
func ServeRaw(stdin io.Reader, stdout io.Writer) error {
	return serveChild(stdin, stdout, serveRaw)
}

// serveChild is the life of a server child (ServeRaw, ServeFlight): serve listens on the
// loopback TCP URL and the unix URL it is given (in a temporary directory removed at the
// end), sends the endpoints it bound on ready, and serves until its context is cancelled,
// which happens when stdin closes; until then each "RUSAGE" line on stdin is answered on
// stdout with this process's rusage.Usage map as JSON.
func serveChild(stdin io.Reader, stdout io.Writer, serve func(ctx context.Context, urls []string, ready chan<- []string) error) error {
	dir, err := os.MkdirTemp("", "ipcbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tcpURL, unixURL := "tcp://127.0.0.1:0", "unix://"+filepath.Join(dir, "s.sock")
	ready := make(chan []string, 1)
	errc := make(chan error, 1)
	go func() { errc <- serve(ctx, []string{tcpURL, unixURL}, ready) }()
	select {
	case eps := <-ready:
		fmt.Fprintf(stdout, "READY %s\n", strings.Join(eps, " "))
	case err := <-errc:
		return err
	}
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		if sc.Text() == "RUSAGE" {
			ru, _ := rusage.Self()
			b, _ := json.Marshal(ru.Map())
			fmt.Fprintf(stdout, "%s\n", b)
		}
	}
	cancel()
	select {
	case <-errc:
	case <-time.After(3 * time.Second):
	}
	return nil
}

// child is a running server process.
type child struct {
	dir   string // removed at stop (a primproc's socket directory)
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	tcp   string
	unix  string
}

// startChild re-executes the running program with the argument role and waits for its
// READY line; the child's stderr goes to stderr.
func startChild(role string, stderr io.Writer) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, role)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	line, err := c.out.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "READY ") {
		c.stop()
		return nil, fmt.Errorf("%s did not start: %q %v", role, line, err)
	}
	for _, ep := range strings.Fields(strings.TrimPrefix(line, "READY ")) {
		if strings.HasPrefix(ep, "tcp://") {
			c.tcp = ep
		} else {
			c.unix = ep
		}
	}
	return c, nil
}

func (c *child) rusage() (rusage.Usage, error) {
	if _, err := io.WriteString(c.stdin, "RUSAGE\n"); err != nil {
		return rusage.Usage{}, err
	}
	line, err := c.out.ReadString('\n')
	if err != nil {
		return rusage.Usage{}, err
	}
	var m map[string]int64
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return rusage.Usage{}, fmt.Errorf("child rusage %q: %w", line, err)
	}
	return rusage.FromMap(m), nil
}

func (c *child) stop() {
	if c.dir != "" {
		defer os.RemoveAll(c.dir)
	}
	if c.stdin == nil { // a primproc: SIGTERM, as its users stop it
		c.cmd.Process.Signal(syscall.SIGTERM)
	} else {
		c.stdin.Close()
	}
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
}

// ---- raw socket server ------------------------------------------------------------------

// The raw protocol, the baseline without the link: a connection's first byte picks the mode.
//
//	'E' echo: messages [u32 length][payload]; each is answered with itself. Replies are
//	    buffered and flushed whenever no further request is buffered, so pipelined requests
//	    share writes as the link's do.
//	'T' stream: one request [u32 length][msgpack rawStreamRequest]; the answer is Batches copies of
//	    the synth batch's Arrow IPC message, each [u64 length][message] written with one
//	    write (or in writes of WriteSize bytes), then a zero length.
func serveRaw(ctx context.Context, urls []string, ready chan<- []string) error {
	var lns []*ipc.Listener
	var eps []string
	for _, u := range urls {
		ep, err := ipc.ParseEndpoint(u)
		if err != nil {
			return err
		}
		ln, err := ipc.Listen(ep, false)
		if err != nil {
			return err
		}
		defer ln.Close()
		lns = append(lns, ln)
		eps = append(eps, ln.Endpoint().String())
	}
	for _, ln := range lns {
		go func() {
			for {
				nc, err := ln.Accept()
				if err != nil {
					return
				}
				go rawConn(nc)
			}
		}()
	}
	ready <- eps
	<-ctx.Done()
	return nil
}

func rawConn(nc net.Conn) {
	defer nc.Close()
	r := bufio.NewReaderSize(nc, 64<<10)
	mode, err := r.ReadByte()
	if err != nil {
		return
	}
	switch mode {
	case 'E':
		w := bufio.NewWriterSize(nc, 64<<10)
		var hdr [4]byte
		buf := make([]byte, 1<<20)
		for {
			if r.Buffered() == 0 {
				if w.Flush() != nil {
					return
				}
			}
			if _, err := io.ReadFull(r, hdr[:]); err != nil {
				return
			}
			n := binary.LittleEndian.Uint32(hdr[:])
			if n > uint32(len(buf)) {
				return
			}
			if _, err := io.ReadFull(r, buf[:n]); err != nil {
				return
			}
			w.Write(hdr[:])
			w.Write(buf[:n])
		}
	case 'T':
		var hdr [4]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		req := make([]byte, binary.LittleEndian.Uint32(hdr[:]))
		if _, err := io.ReadFull(r, req); err != nil {
			return
		}
		var q rawStreamRequest
		if msgpack.Unmarshal(req, &q) != nil || q.Copies < 0 || q.Copies > 1024 {
			return
		}
		a := q.Synth
		a.Defaults()
		msg, err := synthMessage(a)
		if err != nil {
			return
		}
		// As many distinct copies of the message as the link's server would have batches
		// in memory (one per stream), so both move data from the same amount of memory.
		framed := make([][]byte, max(q.Copies, 1))
		for i := range framed {
			framed[i] = binary.LittleEndian.AppendUint64(nil, uint64(len(msg)))
			framed[i] = append(framed[i], msg...)
		}
		ws := q.WriteSize
		if ws <= 0 {
			ws = math.MaxInt
		}
		for i := 0; i < a.Batches; i++ {
			for m := framed[i%len(framed)]; len(m) > 0; {
				n := min(ws, len(m))
				if _, err := nc.Write(m[:n]); err != nil {
					return
				}
				m = m[n:]
			}
		}
		nc.Write(make([]byte, 8))
	}
}

// rawStreamRequest asks the raw server for Synth.Batches messages cycling through Copies
// distinct copies of the synth message.
type rawStreamRequest struct {
	Synth  link.SynthArgs `msgpack:"synth"`
	Copies int            `msgpack:"copies"`
	// WriteSize is the bytes a write: the message is cut into writes of this size (0: one
	// write a message).
	WriteSize int `msgpack:"write_size"`
}

// synthMessage returns the Arrow IPC encapsulated message of the synth batch: exactly the
// bytes the link puts in a BATCH frame's payload.
func synthMessage(a link.SynthArgs) ([]byte, error) {
	rec := link.SynthBatch(memory.DefaultAllocator, a)
	defer rec.Release()
	var schemaBuf, all bytes.Buffer
	w := arrowipc.NewWriter(&schemaBuf, arrowipc.WithSchema(rec.Schema()))
	if err := w.Close(); err != nil { // schema message and end-of-stream marker only
		return nil, err
	}
	w = arrowipc.NewWriter(&all, arrowipc.WithSchema(rec.Schema()))
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	// all = schema message, the batch message, 8-byte end marker.
	start := schemaBuf.Len() - 8
	return all.Bytes()[start : all.Len()-8], nil
}

// startPrimproc starts the primproc binary bin without data (it serves the link's own
// primitives, echo and synth, and stats) on a loopback TCP port and a unix socket, and
// returns it once it serves. Its CPU is read from its stats (bench.serverUsage).
func startPrimproc(bin string) (*child, error) {
	dir, err := os.MkdirTemp("", "ipcbench-pm")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--data-dir=", "--listen", "tcp://127.0.0.1:0", "--listen", "unix://"+filepath.Join(dir, "pm.sock"),
		"--log-format", "json", "--log-level", "info", "--name", "ipcbench-primproc")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	c := &child{cmd: cmd, dir: dir}
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		var rec struct {
			Msg       string   `json:"msg"`
			Endpoints []string `json:"endpoints"`
		}
		if json.Unmarshal(lines.Bytes(), &rec) != nil || rec.Msg != "primproc: serving" {
			continue
		}
		for _, ep := range rec.Endpoints {
			if strings.HasPrefix(ep, "tcp://") {
				c.tcp = ep
			} else if strings.HasPrefix(ep, "unix://") {
				c.unix = ep
			}
		}
		go io.Copy(io.Discard, stderr) // the rest of its log
		return c, nil
	}
	c.stop()
	return nil, fmt.Errorf("%s exited before serving (see its log above)", bin)
}
