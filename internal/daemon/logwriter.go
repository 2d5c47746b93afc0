package daemon

import (
	"bytes"
	"io"
	"log/slog"
	"sync/atomic"
	"time"
)

// A daemon must not stop because nobody reads its log. stallWriter passes the log's lines
// to w (stderr) in order, from a goroutine of its own. A caller waits for its line to be
// written, as it would writing to w itself (so nothing is lost at exit; a writer goroutine
// merely slow to run is waited for), unless w is stalled (a pipe nobody drains, a terminal
// paused with ^S): once a write to w has been blocked for stallWait, callers queue their
// lines (up to stallQueue; further ones are dropped and counted) and return at once, until
// the write returns; then a line says how many were dropped. Before, exemgr writing to a
// stalled stderr held everything that logs (the link's failure handling and reconnection,
// the sessions) behind the write: in issue 18 a query's error came after 878 s, exemgr
// having logged nothing meanwhile, and then lines out of timestamp order.
type stallWriter struct {
	w       io.Writer
	lines   chan logLine
	stalled atomic.Bool  // a write to w took longer than stallWait and has not returned
	writing atomic.Int64 // unix nanos when the write to w in progress began; 0 if none
	dropped atomic.Int64 // lines dropped since w last took one
	// dropNote formats the line reporting n dropped lines, in the log's own format.
	dropNote func(n int64) []byte
}

// logLine is a line to write; done, if set, is closed once it is written.
type logLine struct {
	b    []byte
	done chan struct{}
}

const (
	stallWait  = 100 * time.Millisecond
	stallQueue = 4096
)

func newStallWriter(w io.Writer, newHandler func(io.Writer) slog.Handler) *stallWriter {
	s := &stallWriter{w: w, lines: make(chan logLine, stallQueue)}
	s.dropNote = func(n int64) []byte {
		var b bytes.Buffer
		slog.New(newHandler(&b)).Warn("log: lines dropped while the log's reader was not reading", "lines", n)
		return b.Bytes()
	}
	go s.run()
	return s
}

// Write queues a copy of p, and unless w is stalled waits for it to be written (at most
// stallWait). It always succeeds: a log line that cannot be written is dropped.
func (s *stallWriter) Write(p []byte) (int, error) {
	line := logLine{b: bytes.Clone(p)}
	if !s.stalled.Load() {
		line.done = make(chan struct{})
	}
	select {
	case s.lines <- line:
	default:
		s.dropped.Add(1)
		return len(p), nil
	}
	if line.done == nil {
		return len(p), nil
	}
	t := time.NewTicker(stallWait)
	defer t.Stop()
	for {
		select {
		case <-line.done:
			return len(p), nil
		case <-t.C:
		}
		if w := s.writing.Load(); w != 0 && time.Since(time.Unix(0, w)) > stallWait {
			s.stalled.Store(true)
			return len(p), nil
		}
	}
}

func (s *stallWriter) run() {
	for line := range s.lines {
		s.writing.Store(time.Now().UnixNano())
		if n := s.dropped.Swap(0); n > 0 {
			_, _ = s.w.Write(s.dropNote(n))
		}
		_, _ = s.w.Write(line.b)
		s.writing.Store(0)
		s.stalled.Store(false)
		if line.done != nil {
			close(line.done)
		}
	}
}
