package faults

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/ipc"
)

// inputRSSMargin is how much a daemon's resident size may grow from one piece of bad input:
// far less than any oversized frame or packet claims, so a daemon that allocated what a
// header announced fails.
const inputRSSMargin = 16 << 20

// closeBound is how soon a daemon must answer bad input by refusing it (an error, and the
// connection closed), beyond the run's slack.
const closeBound = time.Second

// randomGarbage is n random bytes after a fixed start: not the link's magic ("CL"), and,
// read as a MySQL packet header, a 15 MiB packet of sequence number 0xee (a server that
// waited for its payload would wait long; one that checks the sequence refuses it at once).
func (e *Env) randomGarbage(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(e.rng.Uint32())
	}
	copy(b, []byte{0xee, 0xee, 0xee, 0xee})
	return b
}

// linkInput is one kind of bad input on primproc's link port.
type linkInput struct {
	name  string
	hello bool // complete the handshake first
	send  func(e *Env, s linkSession) []byte
	// closeWrite ends the connection's sending half after the bytes (a frame cut short).
	closeWrite bool
	log        string // what primproc's log line must say
}

var linkInputs = []linkInput{
	{"an HTTP request", false, func(*Env, linkSession) []byte { return []byte("GET / HTTP/1.1\r\nHost: primproc\r\n\r\n") }, false, "bad magic"},
	{"64 KiB of random bytes", false, func(e *Env, _ linkSession) []byte { return e.randomGarbage(64 << 10) }, false, "bad magic"},
	{"a HELLO frame announcing 1 GiB", false, func(*Env, linkSession) []byte {
		return ipc.AppendHeader(nil, ipc.Header{Kind: ipc.KindHello, Length: ipc.MaxFrameCap})
	}, false, "exceeds"},
	{"a HELLO of protocol version 9", false, func(*Env, linkSession) []byte {
		b := ipc.AppendFrame(nil, ipc.KindHello, 0, 0, []byte{0x80})
		b[2] = 9
		return b
	}, false, "version 9"},
	{"a BATCH frame announcing 1 GiB after the handshake", true, func(*Env, linkSession) []byte {
		return ipc.AppendHeader(nil, ipc.Header{Kind: ipc.KindBatch, Stream: 1, Length: ipc.MaxFrameCap})
	}, false, "exceeds the maximum frame size"},
	{"a PING frame cut short after the handshake", true, func(*Env, linkSession) []byte {
		return ipc.AppendFrame(nil, ipc.KindPing, 0, 0, []byte{1, 2, 3})[:ipc.HeaderSize+1]
	}, true, "closed inside"},
	{"64 KiB of random bytes after the handshake", true, func(e *Env, _ linkSession) []byte { return e.randomGarbage(64 << 10) }, false, "bad magic"},
}

// shmInputs are bad input that only a connection with shared memory can carry: RBATCH
// descriptors its ring must refuse. Over shm they come first, so that a short run tries
// them; the rest is what goes over unix, on the same socket.
var shmInputs = []linkInput{
	{"an RBATCH of another segment's generation after the shm handshake", true, func(_ *Env, s linkSession) []byte {
		return ringBatch(s.gen^1, 0, 64)
	}, false, "RBATCH descriptor of generation"},
	{"an RBATCH of a region beyond the ring after the shm handshake", true, func(_ *Env, s linkSession) []byte {
		return ringBatch(s.gen, 3*s.cap, 64)
	}, false, "the next region must start at"},
	{"an RBATCH larger than the ring after the shm handshake", true, func(_ *Env, s linkSession) []byte {
		return ringBatch(s.gen, 0, s.cap+1)
	}, false, "RBATCH region of"},
}

// linkInputsOver are the bad inputs of garbage-link over a transport, in the order the
// tries take them.
func linkInputsOver(transport string) []linkInput {
	if transport == "shm" {
		return append(slices.Clone(shmInputs), linkInputs...)
	}
	return linkInputs
}

// ringBatch is an RBATCH frame on stream 1 with the descriptor (generation, position,
// length) and no Arrow head: primproc checks the descriptor against its ring first.
func ringBatch(gen, pos, n uint64) []byte {
	d := binary.LittleEndian.AppendUint64(nil, gen)
	d = binary.LittleEndian.AppendUint64(d, pos)
	d = binary.LittleEndian.AppendUint64(d, n)
	return ipc.AppendFrame(nil, ipc.KindRingBatch, 0, 1, d)
}

// faultShmSize is the shared-memory segment the hand-made handshake asks for over shm:
// the smallest a peer may, so that primproc's two segments cost it little.
const faultShmSize = ipc.MinShmSize

// linkSession is what the hand-made handshake set up. Over shm, gen and cap are the
// client→server segment's generation and data-area size, read from the segment primproc
// passed (the ring it consumes, and so checks RBATCH descriptors against).
type linkSession struct {
	shm      bool
	gen, cap uint64
}

// linkHello completes a client's side of the handshake by hand (no token: the cluster's
// primprocs listen on loopback and on a unix socket of the same user). With shm > 0 (a
// unix socket) it asks for shared memory of that size and takes the two segments primproc
// passes with its hello, as PROTOCOL.md's "Shared memory" says; it reads their headers and
// closes them without mapping them, so that primproc's mappings are the only ones.
func linkHello(nc net.Conn, shm uint64) (linkSession, error) {
	var s linkSession
	nonce := make([]byte, 32)
	for i := range nonce {
		nonce[i] = byte(i + 1)
	}
	h := ipc.Hello{Version: ipc.Version, Role: "client", Name: "faults: bad input", Nonce: nonce, MaxFrame: 1 << 20, Window: 1 << 20, Shm: shm}
	if _, err := nc.Write(ipc.AppendFrame(nil, ipc.KindHello, 0, 0, ipc.AppendHello(nil, &h))); err != nil {
		return s, err
	}
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var hb [ipc.HeaderSize]byte
	var fds []int
	defer func() {
		for _, fd := range fds {
			_ = syscall.Close(fd)
		}
	}()
	got := 0
	if uc, ok := nc.(*net.UnixConn); ok && shm > 0 {
		// The descriptors ride on the hello's first byte: the first read must take them.
		oob := make([]byte, syscall.CmsgSpace(4*4))
		n, oobn, _, _, err := uc.ReadMsgUnix(hb[:], oob)
		if err != nil {
			return s, fmt.Errorf("read the server's hello: %w", err)
		}
		got = n
		if fds, err = unixRights(oob[:oobn]); err != nil {
			return s, err
		}
	}
	if _, err := io.ReadFull(nc, hb[got:]); err != nil {
		return s, fmt.Errorf("read the server's hello: %w", err)
	}
	hd, err := ipc.DecodeHeader(hb[:], ipc.MaxFrameCap)
	if err != nil {
		return s, err
	}
	if hd.Kind != ipc.KindHello {
		return s, fmt.Errorf("the server answered the hello with %v", hd.Kind)
	}
	payload := make([]byte, hd.Length)
	if _, err := io.ReadFull(nc, payload); err != nil {
		return s, err
	}
	if shm == 0 {
		return s, nil
	}
	sh, err := ipc.DecodeHello(payload)
	switch {
	case err != nil:
		return s, fmt.Errorf("the server's hello: %w", err)
	case sh.Shm == 0:
		return s, errors.New("the server's hello offers no shared memory")
	case len(fds) != 2:
		return s, fmt.Errorf("the server's hello came with %d descriptors, want 2 segments", len(fds))
	}
	// The segment header: generation at byte 16, the data area's size at byte 24.
	var head [32]byte
	if n, err := syscall.Pread(fds[1], head[:], 0); err != nil || n != len(head) {
		return s, fmt.Errorf("read the client→server segment's header: %d bytes, %v", n, err)
	}
	s.shm, s.gen, s.cap = true, binary.LittleEndian.Uint64(head[16:]), binary.LittleEndian.Uint64(head[24:])
	return s, nil
}

// unixRights returns the descriptors in a socket message's ancillary data.
func unixRights(oob []byte) ([]int, error) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("the hello's ancillary data: %w", err)
	}
	var fds []int
	for _, m := range msgs {
		got, err := syscall.ParseUnixRights(&m)
		if err != nil {
			return fds, fmt.Errorf("the hello's ancillary data: %w", err)
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

// readLinkClose reads until the peer closes or the deadline passes, and returns the message
// of an ERROR frame it sent, whether it closed, and how long that took.
func readLinkClose(nc net.Conn, deadline time.Time) (msg string, closed bool, took time.Duration) {
	start := time.Now()
	_ = nc.SetReadDeadline(deadline)
	all, err := io.ReadAll(io.LimitReader(nc, 1<<20))
	took = time.Since(start)
	var ne net.Error
	closed = !(errors.As(err, &ne) && ne.Timeout())
	for len(all) >= ipc.HeaderSize {
		h, p, n, err := ipc.DecodeFrame(all, ipc.MaxFrameCap)
		if err != nil {
			break
		}
		if h.Kind == ipc.KindError {
			var m struct {
				Message string `msgpack:"message"`
			}
			if msgpack.Unmarshal(p, &m) == nil {
				return m.Message, closed, took
			}
		}
		all = all[n:]
	}
	return "", closed, took
}

// garbageLink: garbage and oversized frames on a primproc's link port.
func garbageLink(cfg *Config) Fault {
	var kinds, shmKinds []string
	for _, k := range linkInputs {
		kinds = append(kinds, k.name)
	}
	for _, k := range shmInputs {
		shmKinds = append(shmKinds, k.name)
	}
	return Fault{
		Name: "garbage-link",
		Summary: "bad input on one primproc's (in turn) link port of the transport (its TCP port, or its unix socket for unix and shm), in turn: " +
			strings.Join(kinds, "; ") + ". Over shm the handshake asks for shared memory and takes primproc's two segments, " +
			"and these come first: " + strings.Join(shmKinds, "; "),
		Criterion: fmt.Sprintf("primproc closes that connection within %v, logs why (bad magic, a frame over the maximum, the version, a frame cut short, "+
			"an RBATCH its ring refuses), grows by less than %s and stays up; the check query answers right", closeBound+cfg.Slack, mib(inputRSSMargin)),
		Try: func(ctx context.Context, e *Env, t *Trial) {
			i := (t.Try - 1) % e.cl.Primprocs()
			inputs := linkInputsOver(e.Transport)
			in := inputs[(t.Try-1)%len(inputs)]
			name := e.pmName(i)
			t.note("%s to %s", in.name, name)
			network, addr := "tcp", strings.TrimPrefix(e.cl.LinkEndpoints()[i], "tcp://")
			var shm uint64
			if e.Transport != "tcp" {
				// shm has no port of its own: it is set up on the unix socket, in the hello.
				network, addr = "unix", strings.TrimPrefix(e.cl.UnixEndpoint(i), "unix://")
			}
			if e.Transport == "shm" {
				shm = faultShmSize
			}
			before := e.rssOf(name).Now
			mark := e.mark(name)
			nc, err := net.DialTimeout(network, addr, 5*time.Second)
			if err != nil {
				t.fail(UnclearError, "connect to %s: %v", addr, err)
				return
			}
			defer nc.Close()
			var sess linkSession
			if in.hello {
				if sess, err = linkHello(nc, shm); err != nil {
					t.fail(UnclearError, "handshake with %s: %v", name, err)
					return
				}
				if sess.shm {
					t.note("shared memory set up: ring of %d bytes, generation %#x", sess.cap, sess.gen)
				}
			}
			sent := time.Now()
			if _, err := nc.Write(in.send(e, sess)); err != nil && !isReset(err) {
				t.fail(UnclearError, "send: %v", err)
				return
			}
			if in.closeWrite {
				closeWrite(nc)
			}
			bound := closeBound + e.cfg.Slack
			msg, closed, _ := readLinkClose(nc, sent.Add(bound+time.Second))
			took := time.Since(sent)
			line, logged := mark.waitLog(ctx, 2*time.Second, "link: closing connection", in.log)
			switch {
			case !closed:
				t.fail(Hang, "%s kept the connection open %v after %s", name, bound+time.Second, in.name)
			default:
				text := msg
				if text == "" {
					text = logMessage(line)
				}
				t.errorAt(errors.New(text), took, took <= bound && logged)
				if took > bound {
					t.fail(UnclearError, "closed after %.2fs (bound %v)", took.Seconds(), bound)
				}
			}
			if !logged {
				t.fail(UnclearError, "%s logged no 'link: closing connection' line saying %q", name, in.log)
			}
			if after := e.rssOf(name).Now; after > before+inputRSSMargin {
				t.fail(UnclearError, "%s grew from %s to %s", name, mib(before), mib(after))
			}
			if !e.cl.Running(name) {
				t.fail(Died, "%s died of %s", name, in.name)
				return
			}
			e.verify(ctx, t, "after the bad input")
		},
	}
}

// closeWrite shuts the sending half of a TCP or unix connection.
func closeWrite(nc net.Conn) {
	if cw, ok := nc.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// isReset reports whether err is the peer having closed on us mid-write.
func isReset(err error) bool {
	s := err.Error()
	return strings.Contains(s, "reset by peer") || strings.Contains(s, "broken pipe")
}

// logMessage returns a log line's message and error fields, without its time and level.
func logMessage(line string) string {
	if i := strings.Index(line, "msg="); i >= 0 {
		return line[i:]
	}
	return line
}

// mysqlInput is one kind of bad input on exemgr's MySQL port.
type mysqlInput struct {
	name  string
	login bool // log in first
	send  func(e *Env) []byte
	// log lists what exemgr's log line must say.
	log []string
	// keeps says the connection must survive the input (an ERR answers it) and answer a
	// query after it.
	keeps bool
}

// maxAllowedPacket is the exemgr's --max-allowed-packet in the suite: small, so that going
// over it costs little.
const maxAllowedPacket = 4 << 20

var mysqlInputs = []mysqlInput{
	{"an HTTP request instead of the handshake response", false, func(*Env) []byte {
		return []byte("GET / HTTP/1.1\r\nHost: exemgr\r\n\r\n")
	}, []string{"client handshake failed"}, false},
	{"64 KiB of random bytes instead of the handshake response", false, func(e *Env) []byte { return e.randomGarbage(64 << 10) },
		[]string{"client handshake failed"}, false},
	{"a handshake packet announcing 16 MiB", false, func(*Env) []byte {
		return append([]byte{0xff, 0xff, 0xff, 1}, make([]byte, 2<<20)...)
	}, []string{"client handshake failed"}, false},
	{"5 MiB of a query announced as 16 MiB, over --max-allowed-packet 4MiB", true, func(*Env) []byte {
		return append([]byte{0xff, 0xff, 0xff, 0, 0x03}, make([]byte, 5<<20)...)
	}, []string{"max_allowed_packet"}, false},
	{"a packet out of sequence after login", true, func(*Env) []byte {
		return appendPacket(nil, 7, []byte("\x03select 1"))
	}, []string{"client protocol error"}, false},
	{"64 KiB of random bytes after login", true, func(e *Env) []byte { return e.randomGarbage(64 << 10) },
		[]string{"client protocol error"}, false},
	{"an unknown command after login", true, func(*Env) []byte { return appendPacket(nil, 0, []byte{0x7e, 1, 2, 3}) }, nil, true},
}

// garbageMySQL: garbage and oversized packets on exemgr's MySQL port.
func garbageMySQL(cfg *Config) Fault {
	var kinds []string
	for _, k := range mysqlInputs {
		kinds = append(kinds, k.name)
	}
	return Fault{
		Name: "garbage-mysql",
		Summary: "bad input on exemgr's MySQL port of the transport (its TCP port or its unix socket), in turn: " +
			strings.Join(kinds, "; "),
		Criterion: fmt.Sprintf("exemgr answers with an ERR packet and closes that connection within %v, logging why "+
			"(an unknown command gets an ERR and the session goes on); it grows by less than %s (what --max-allowed-packet %s lets it buffer, twice, beside the margin), "+
			"and two --pool-idle intervals later by less than %s (the stated idle margin), and stays up; the check query answers right",
			closeBound+cfg.Slack, mib(inputRSSMargin+2*maxAllowedPacket), mib(maxAllowedPacket), mib(idleMargin)),
		Try: func(ctx context.Context, e *Env, t *Trial) {
			in := mysqlInputs[(t.Try-1)%len(mysqlInputs)]
			t.note("%s", in.name)
			before := e.rssOf("exemgr").Now
			mark := e.mark("exemgr")
			var c *rawMySQL
			var err error
			if in.login {
				c, err = loginMySQL(ctx, e.mysql(), "tpch", 0)
			} else {
				c, err = dialMySQL(ctx, e.mysql(), 0)
			}
			if err != nil {
				t.fail(UnclearError, "connect to exemgr: %v", err)
				return
			}
			defer c.Close()
			sent := time.Now()
			if _, err := c.nc.Write(in.send(e)); err != nil && !isReset(err) {
				t.fail(UnclearError, "send: %v", err)
				return
			}
			bound := closeBound + e.cfg.Slack
			if in.keeps {
				rctx, cancel := context.WithTimeout(ctx, bound)
				rerr := c.readReply(rctx)
				cancel()
				took := time.Since(sent)
				var me *mysqlError
				if !errors.As(rerr, &me) {
					t.fail(UnclearError, "no ERR packet for %s within %v: %v", in.name, bound, rerr)
					return
				}
				t.errorAt(rerr, took, true)
				qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				if err := c.sendQuery("select 1"); err != nil {
					t.fail(UnclearError, "the session after the ERR: %v", err)
				} else if err := c.readReply(qctx); err != nil {
					t.fail(UnclearError, "the session after the ERR: %v", err)
				}
			} else {
				if !in.login {
					// The greeting comes first; what follows it is exemgr's answer.
					if _, err := c.readPacket(); err != nil {
						t.fail(UnclearError, "no greeting: %v", err)
						return
					}
				}
				serverErr, closed, _ := readUntilClosed(c.nc, sent.Add(bound+time.Second))
				took := time.Since(sent)
				line, logged := mark.waitLog(ctx, 2*time.Second, in.log...)
				switch {
				case !closed:
					t.fail(Hang, "exemgr kept the connection open %v after %s", bound+time.Second, in.name)
				default:
					var cause error = serverErr
					if cause == nil {
						cause = fmt.Errorf("connection closed without an ERR packet; log: %s", logMessage(line))
					}
					t.errorAt(cause, took, took <= bound && logged)
					if took > bound {
						t.fail(UnclearError, "closed after %.2fs (bound %v)", took.Seconds(), bound)
					}
				}
				if !logged {
					t.fail(UnclearError, "exemgr logged no line saying %q", strings.Join(in.log, " … "))
				}
			}
			// exemgr may buffer up to --max-allowed-packet of a refused packet, its growing
			// buffer's last copy beside it, until it collects; what it keeps once idle must be
			// within the idle margin the README states (the Reclaimer does not collect for
			// less than its MinFree of garbage, the same 32 MiB).
			if after := e.rssOf("exemgr").Now; after > before+inputRSSMargin+2*maxAllowedPacket {
				t.fail(UnclearError, "exemgr grew from %s to %s", mib(before), mib(after))
			} else if e.settle(ctx); e.rssOf("exemgr").Now > before+idleMargin {
				t.fail(UnclearError, "exemgr holds %s two --pool-idle intervals after the bad input, %s before", mib(e.rssOf("exemgr").Now), mib(before))
			}
			if !e.cl.Running("exemgr") {
				t.fail(Died, "exemgr died of %s", in.name)
				return
			}
			e.verify(ctx, t, "after the bad input")
		},
	}
}
