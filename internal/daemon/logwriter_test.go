package daemon

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// gate is a writer that blocks while closed.
type gate struct {
	mu   sync.Mutex
	open chan struct{} // closed while open
	b    strings.Builder
}

func newGate() *gate {
	g := &gate{open: make(chan struct{})}
	close(g.open)
	return g
}

func (g *gate) Write(p []byte) (int, error) {
	g.mu.Lock()
	ch := g.open
	g.mu.Unlock()
	<-ch
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.b.Write(p)
}

func (g *gate) shut() {
	g.mu.Lock()
	g.open = make(chan struct{})
	g.mu.Unlock()
}

func (g *gate) release() {
	g.mu.Lock()
	close(g.open)
	g.mu.Unlock()
}

func (g *gate) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.b.String()
}

func textHandler(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) }

// Lines reach the writer before Write returns while it takes them; a stalled writer costs a
// logging goroutine stallWait once, then nothing, drops what the queue cannot hold, and says
// so once it takes lines again, keeping the order of the others.
func TestStallWriter(t *testing.T) {
	g := newGate()
	sw := newStallWriter(g, textHandler)
	log := slog.New(textHandler(sw))
	log.Info("first")
	if !strings.Contains(g.String(), "msg=first") {
		t.Fatalf("a line was not written when Write returned: %q", g.String())
	}

	g.shut()
	start := time.Now()
	log.Info("stalled") // waits about stallWait, then gives up waiting
	if took := time.Since(start); took > 10*stallWait {
		t.Errorf("the first line into a stalled log took %v", took)
	}
	start = time.Now()
	n := stallQueue + 100
	for i := range n {
		log.Info("queued", "i", i)
	}
	if took := time.Since(start); took > 10*stallWait {
		t.Errorf("%d lines into a stalled log took %v", n, took)
	}
	g.release()
	for deadline := time.Now().Add(5 * time.Second); sw.stalled.Load() || len(sw.lines) > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the queued lines were not written within 5s of the release")
		}
	}
	log.Info("last") // the log has recovered: this one is waited for again
	out := g.String()
	if !strings.Contains(out, "msg=last") {
		t.Fatalf("the line after the stall was not written when Write returned")
	}
	if !strings.Contains(out, "lines dropped") {
		t.Errorf("no line says lines were dropped:\n%s", out[max(0, len(out)-500):])
	}
	prev := -1
	for _, l := range strings.Split(out, "\n") {
		_, field, ok := strings.Cut(l, "msg=queued i=")
		if !ok {
			continue
		}
		var i int
		if _, err := fmt.Sscanf(field, "%d", &i); err != nil || i <= prev {
			t.Fatalf("line %q after line %d", l, prev)
		}
		prev = i
	}
	if prev < 0 {
		t.Fatal("no queued line was written")
	}
}
