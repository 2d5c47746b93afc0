package rusage

import (
	"testing"
	"time"
)

func TestSelfGrowsWithWork(t *testing.T) {
	before, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	after, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	d := after.Sub(before)
	if d.CPU() <= 0 {
		t.Fatalf("30ms of spinning used no CPU: %+v (x=%d)", d, x)
	}
	if after.MaxRSSKiB <= 0 {
		t.Fatalf("maxrss %d", after.MaxRSSKiB)
	}
	if got := FromMap(d.Map()); got.User.Microseconds() != d.User.Microseconds() || got.Voluntary != d.Voluntary {
		t.Fatalf("map round trip: %+v != %+v", got, d)
	}
}
