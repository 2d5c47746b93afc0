package measure

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want Stat
	}{
		{nil, Stat{}},
		{[]float64{3}, Stat{N: 1, Median: 3, Min: 3, Max: 3}},
		{[]float64{5, 1, 3}, Stat{N: 3, Median: 3, Min: 1, Max: 5}},
		{[]float64{4, 1, 3, 2}, Stat{N: 4, Median: 2.5, Min: 1, Max: 4}},
	} {
		if got := Summarize(tc.in); got != tc.want {
			t.Errorf("Summarize(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestRatioPairsAndSkipsZero(t *testing.T) {
	got := Ratio([]float64{1, 2, 9, 4}, []float64{2, 2, 0, 2})
	want := Stat{N: 3, Median: 1, Min: 0.5, Max: 2}
	ci := got
	got.CILo, got.CIHi = 0, 0
	if got != want {
		t.Fatalf("Ratio = %+v, want %+v", got, want)
	}
	if ci.CILo < want.Min || ci.CILo > want.Median || ci.CIHi < want.Median || ci.CIHi > want.Max {
		t.Errorf("Ratio's CI [%v, %v] does not hold the median %v within [min, max]", ci.CILo, ci.CIHi, want.Median)
	}
}

func TestRunRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	r := &Run{ID: "x", Driver: "compare", Started: time.Unix(1700000000, 0).UTC(), SF: 0.01,
		Samples: []Sample{{System: "colink", Transport: "unix", Query: "Q1", Round: 1, Cold: true,
			Elapsed: 0.25, Procs: map[string]Usage{"exemgr": {User: 0.1, Sys: 0.02, Voluntary: 7}},
			Link: &Link{BytesIn: 1000, BatchesIn: 2}}}}
	if err := r.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := got.Samples[0]
	if s.Procs["exemgr"].Voluntary != 7 || s.Link.BytesIn != 1000 || !s.Cold || got.Started != r.Started {
		t.Fatalf("round trip lost data: %+v", got)
	}
	if n := len(got.Select(func(s *Sample) bool { return s.Transport == "tcp" })); n != 0 {
		t.Fatalf("Select(tcp) = %d samples, want 0", n)
	}
}

func TestRunID(t *testing.T) {
	at := time.Date(2026, 11, 30, 5, 12, 59, 0, time.UTC)
	if got := RunID("compare", 0.01, at); got != "2026-11-30T0512-compare-sf0.01" {
		t.Errorf("RunID %q", got)
	}
	if got := RunID("bench", 1, at); got != "2026-11-30T0512-bench-sf1" {
		t.Errorf("RunID %q", got)
	}
}

func TestLocalHost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	h := LocalHost()
	if h.CPUs < 1 || h.MemoryMiB < 1 || !strings.HasPrefix(h.Kernel, "Linux ") || h.GoVersion != runtime.Version() {
		t.Errorf("LocalHost %+v: want CPUs, memory, kernel \"Linux <release>\" and Go version", h)
	}
}

func TestBusyCPUs(t *testing.T) {
	busy, ok := BusyCPUs(context.Background(), 200*time.Millisecond)
	if _, err := os.Stat("/proc/stat"); err != nil {
		if ok {
			t.Errorf("BusyCPUs measured %v without /proc/stat", busy)
		}
		t.Skip("no /proc/stat")
	}
	if !ok || busy < 0 || busy > float64(runtime.NumCPU())+0.01 {
		t.Errorf("BusyCPUs = %v, %v; want 0..%d", busy, ok, runtime.NumCPU())
	}
}
