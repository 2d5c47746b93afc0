package ipcbench

import (
	"math/bits"
	"time"
)

// hist is a log-linear latency histogram: exact below 64 ns, then 32 buckets per power of
// two (about 3 % resolution). Recording allocates nothing.
type hist struct {
	counts [2048]uint64
	n      uint64
}

func histBucket(v uint64) int {
	if v < 64 {
		return int(v)
	}
	e := bits.Len64(v) - 6
	i := (e+1)*32 + int(v>>e) - 32
	return min(i, 2047)
}

func histLower(i int) uint64 {
	if i < 64 {
		return uint64(i)
	}
	e := i/32 - 1
	m := uint64(i%32 + 32)
	return m << e
}

func (h *hist) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[histBucket(uint64(d))]++
	h.n++
}

func (h *hist) merge(o *hist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
}

// quantile returns the lower bound of the bucket holding quantile q.
func (h *hist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n-1)) + 1
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return time.Duration(histLower(i))
		}
	}
	return 0
}
