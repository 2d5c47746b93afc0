//go:build !linux

package exec

// threadCPUNanos is not measurable on this platform.
func threadCPUNanos() int64 { return 0 }
