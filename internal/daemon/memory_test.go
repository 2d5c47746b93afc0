package daemon

import (
	"bytes"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
)

func TestMemoryPlan(t *testing.T) {
	p := MemoryPlan{Overhead: 100, Budgets: []Budget{
		{Name: "column cache", Bytes: 1000, OffHeap: true},
		{Name: "query memory", Bytes: 300},
		{Name: "pool", Bytes: 50},
	}}
	if p.Total() != 1450 || p.HeapLimit() != 450 {
		t.Fatalf("total %d heap %d", p.Total(), p.HeapLimit())
	}
	if s := p.String(); !strings.Contains(s, "column cache 1000 B off-heap") || !strings.Contains(s, "overhead 100 B") {
		t.Errorf("String: %s", s)
	}
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	oldGC := debug.SetGCPercent(100)
	defer debug.SetGCPercent(oldGC)
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("GOGC", "")
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	big := MemoryPlan{Overhead: 64 << 20, Budgets: []Budget{{Name: "query memory", Bytes: 1 << 30}}}
	if got := big.Apply(log); got != 1<<30+64<<20 || SoftLimit() != got {
		t.Fatalf("Apply set %d, the runtime has %d", got, SoftLimit())
	}
	if !strings.Contains(buf.String(), "go_soft_limit=") {
		t.Errorf("log: %s", buf.String())
	}
	if gc := debug.SetGCPercent(100); gc != GCPercent {
		t.Errorf("GOGC unset: the collector's target is %d, want %d", gc, GCPercent)
	}
	// An operator's GOGC wins.
	t.Setenv("GOGC", "200")
	big.Apply(log)
	if gc := debug.SetGCPercent(100); gc != 100 {
		t.Errorf("GOGC=200: Apply changed the collector's target to %d", gc)
	}
	// An operator's GOMEMLIMIT wins.
	debug.SetMemoryLimit(3 << 30)
	t.Setenv("GOMEMLIMIT", "3GiB")
	buf.Reset()
	if got := big.Apply(log); got != 3<<30 || !strings.Contains(buf.String(), "GOMEMLIMIT=3GiB") {
		t.Fatalf("with GOMEMLIMIT set, Apply gave %d: %s", got, buf.String())
	}
}

func TestReclaimer(t *testing.T) {
	busy := true
	swept := 0
	r := &Reclaimer{Busy: func() bool { return busy }, MinFree: 1 << 20,
		Sweeps: []func() int64{func() int64 { swept++; return 4 << 20 }}}
	if n, returned := r.Tick(); n != 4<<20 || returned || swept != 1 {
		t.Fatalf("busy: released %d returned %v swept %d", n, returned, swept)
	}
	busy = false
	if _, returned := r.Tick(); !returned {
		t.Fatal("an idle daemon whose pools released 4 MiB did not return memory")
	}
	r.Sweeps = nil
	// Nothing to return: less than MinFree allocated since the collection. (MinFree is
	// raised for this tick: a stray allocation of the test binary under a loaded machine
	// must not read as garbage.)
	r.MinFree = 64 << 20
	if _, returned := r.Tick(); returned {
		t.Fatal("returned memory with nothing to return (right after a collection)")
	}
	r.MinFree = 1 << 20
	// Garbage no collection has seen (a cancelled statement's buffers, in an idle daemon
	// whose heap will not reach its next goal) is reclaimable: it counted as live, and the
	// memory stayed held until the runtime's forced collection, two minutes later. (No
	// collection may run meanwhile here.)
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	garbage := make([]byte, 8<<20)
	garbage[len(garbage)-1] = 1
	runtime.KeepAlive(garbage)
	garbage = nil
	if _, returned := r.Tick(); !returned {
		t.Fatal("an idle daemon holding 8 MiB of uncollected garbage did not return memory")
	}

	// A pool that ages its buffers out on its own (the link's) lets go of them over several
	// ticks, each below MinFree: together they are worth returning.
	var total int64
	r.MinFree = 32 << 20
	r.Sweeps = []func() int64{Released(func() int64 { return total })}
	for i, want := range []bool{false, true, false} {
		if i < 2 {
			total += 20 << 20
		}
		if _, returned := r.Tick(); returned != want {
			t.Fatalf("tick %d after a pool let go of %d MiB in all: returned %v, want %v", i, total>>20, returned, want)
		}
	}

	// Sessions that hung up after the last collection (1000 idle ones, in the fault suite)
	// leave their stacks and buffers behind without allocating anything since.
	r.Sweeps = nil
	r.Tick()
	stop := make(chan struct{})
	var ended sync.WaitGroup
	for range 2 * goroutinesEnded {
		ended.Add(1)
		go func() { defer ended.Done(); <-stop }()
	}
	if _, returned := r.Tick(); returned {
		t.Fatal("returned memory for goroutines that started")
	}
	close(stop)
	ended.Wait()
	if _, returned := r.Tick(); !returned {
		t.Fatalf("%d goroutines ended and the idle daemon did not return memory", 2*goroutinesEnded)
	}

	// A request begun since the last tick holds the return off for a tick: between two
	// back-to-back queries the daemon is idle only for an instant.
	var started int64
	r.Started = func() int64 { return started }
	r.Tick()
	garbage = make([]byte, 64<<20)
	garbage[len(garbage)-1] = 1
	runtime.KeepAlive(garbage)
	garbage = nil
	started++
	if _, returned := r.Tick(); returned {
		t.Fatal("returned memory right after a request began")
	}
	if _, returned := r.Tick(); !returned {
		t.Fatal("an interval without a request, and 64 MiB of garbage, did not return memory")
	}
}
