package measure

import (
	"path/filepath"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want Stat
	}{
		{nil, Stat{}},
		{[]float64{3}, Stat{1, 3, 3, 3}},
		{[]float64{5, 1, 3}, Stat{3, 3, 1, 5}},
		{[]float64{4, 1, 3, 2}, Stat{4, 2.5, 1, 4}},
	} {
		if got := Summarize(tc.in); got != tc.want {
			t.Errorf("Summarize(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestRatioPairsAndSkipsZero(t *testing.T) {
	got := Ratio([]float64{1, 2, 9, 4}, []float64{2, 2, 0, 2})
	want := Stat{3, 1, 0.5, 2}
	if got != want {
		t.Fatalf("Ratio = %+v, want %+v", got, want)
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
