package dbt3

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// QueriesPerStream is the number of queries in a TPC-H query stream.
const QueriesPerStream = 22

// PowerAtSize returns DBT3's power metric, 3600·SF divided by the geometric mean of the
// power test's timing intervals (seconds): the 22 queries, and RF1 and RF2 when they ran.
func PowerAtSize(sf float64, intervals []float64) (float64, error) {
	if !(sf > 0) {
		return 0, fmt.Errorf("power@size: scale factor %v must be positive", sf)
	}
	g, err := geometricMean(intervals)
	if err != nil {
		return 0, fmt.Errorf("power@size: %w", err)
	}
	return 3600 * sf / g, nil
}

// FloorIntervals returns the intervals with TPC-H clause 5.4.1.4 applied: when the longest
// interval is more than 1000 times the shortest, every interval below longest/1000 is raised
// to longest/1000, so that one over-tuned query cannot dominate the geometric mean.
func FloorIntervals(intervals []float64) []float64 {
	out := slices.Clone(intervals)
	if len(out) == 0 {
		return out
	}
	floor := slices.Max(out) / 1000
	for i, v := range out {
		if v < floor {
			out[i] = floor
		}
	}
	return out
}

// ThroughputAtSize returns the throughput metric: streams·22 queries per elapsed hour,
// times SF, where elapsed is the throughput test's measurement interval Ts in seconds.
func ThroughputAtSize(sf float64, streams int, elapsed float64) (float64, error) {
	switch {
	case !(sf > 0):
		return 0, fmt.Errorf("throughput@size: scale factor %v must be positive", sf)
	case streams < 1:
		return 0, fmt.Errorf("throughput@size: %d streams; need at least one", streams)
	case !(elapsed > 0) || math.IsInf(elapsed, 0):
		return 0, fmt.Errorf("throughput@size: measurement interval %v s must be positive", elapsed)
	}
	return float64(streams) * QueriesPerStream * 3600 / elapsed * sf, nil
}

// QphH returns the composite metric, the geometric mean of power and throughput.
func QphH(power, throughput float64) float64 { return math.Sqrt(power * throughput) }

// geometricMean is exp(mean(ln x)), computed in logs so that 24 long intervals cannot
// overflow their product.
func geometricMean(xs []float64) (float64, error) {
	if len(xs) == 0 {
		return 0, errors.New("no timing intervals")
	}
	var sum float64
	for i, x := range xs {
		if !(x > 0) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("timing interval %d is %v s; intervals must be positive", i+1, x)
		}
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(xs))), nil
}
