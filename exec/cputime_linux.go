package exec

import "syscall"

// rusageThread is RUSAGE_THREAD (Linux): the calling thread's usage.
const rusageThread = 1

// threadCPUNanos returns the calling OS thread's user+system CPU time.
func threadCPUNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
