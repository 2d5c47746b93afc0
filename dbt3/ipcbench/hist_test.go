package ipcbench

import (
	"testing"
	"time"
)

func TestHistBucketsAreMonotoneAndTight(t *testing.T) {
	prev := -1
	for v := uint64(0); v < 1<<30; v = v*17/16 + 1 {
		b := histBucket(v)
		if b < prev {
			t.Fatalf("bucket(%d)=%d < previous %d", v, b, prev)
		}
		prev = b
		lo := histLower(b)
		if lo > v || (v >= 64 && float64(v-lo) > 0.04*float64(v)) {
			t.Fatalf("value %d in bucket %d with lower bound %d", v, b, lo)
		}
	}
	var h hist
	for i := 1; i <= 1000; i++ {
		h.record(time.Duration(i) * time.Microsecond)
	}
	if p := h.quantile(0.5); p < 480*time.Microsecond || p > 505*time.Microsecond {
		t.Fatalf("p50 %v", p)
	}
	if p := h.quantile(0.99); p < 950*time.Microsecond || p > 995*time.Microsecond {
		t.Fatalf("p99 %v", p)
	}
}
