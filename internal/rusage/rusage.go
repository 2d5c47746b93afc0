// Package rusage owns the reading of a process's own resource usage: user and system CPU
// time, voluntary and involuntary context switches and peak resident memory, as getrusage(2)
// reports them. Both daemons and the benchmark tools use it so every figure they print
// comes from the same source.
package rusage

import (
	"fmt"
	"syscall"
	"time"
)

// Usage is a snapshot of a process's cumulative resource usage.
type Usage struct {
	User        time.Duration // CPU time in user mode
	Sys         time.Duration // CPU time in the kernel on the process's behalf
	Voluntary   int64         // context switches because the process blocked (nvcsw)
	Involuntary int64         // context switches forced by the scheduler (nivcsw)
	MaxRSSKiB   int64         // peak resident set size in KiB (not a counter: Sub keeps the later value)
}

// Self returns the calling process's usage, all threads included.
func Self() (Usage, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return Usage{}, fmt.Errorf("rusage: getrusage(RUSAGE_SELF): %w", err)
	}
	return fromSys(&ru), nil
}

// Children returns the usage of the calling process's children that have been waited for.
func Children() (Usage, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return Usage{}, fmt.Errorf("rusage: getrusage(RUSAGE_CHILDREN): %w", err)
	}
	return fromSys(&ru), nil
}

func fromSys(ru *syscall.Rusage) Usage {
	return Usage{
		User:        time.Duration(ru.Utime.Nano()),
		Sys:         time.Duration(ru.Stime.Nano()),
		Voluntary:   int64(ru.Nvcsw),
		Involuntary: int64(ru.Nivcsw),
		MaxRSSKiB:   int64(ru.Maxrss),
	}
}

// Sub returns the usage accumulated between earlier and u.
func (u Usage) Sub(earlier Usage) Usage {
	return Usage{
		User:        u.User - earlier.User,
		Sys:         u.Sys - earlier.Sys,
		Voluntary:   u.Voluntary - earlier.Voluntary,
		Involuntary: u.Involuntary - earlier.Involuntary,
		MaxRSSKiB:   u.MaxRSSKiB,
	}
}

// CPU returns user plus system time.
func (u Usage) CPU() time.Duration { return u.User + u.Sys }

// Map returns the usage as a msgpack/JSON-friendly map with integer microsecond fields, the
// form the "stats" request and the benchmark reports use.
func (u Usage) Map() map[string]int64 {
	return map[string]int64{
		"user_us":    u.User.Microseconds(),
		"sys_us":     u.Sys.Microseconds(),
		"nvcsw":      u.Voluntary,
		"nivcsw":     u.Involuntary,
		"maxrss_kib": u.MaxRSSKiB,
	}
}

// FromMap is the inverse of Map; missing keys read as zero.
func FromMap(m map[string]int64) Usage {
	return Usage{
		User:        time.Duration(m["user_us"]) * time.Microsecond,
		Sys:         time.Duration(m["sys_us"]) * time.Microsecond,
		Voluntary:   m["nvcsw"],
		Involuntary: m["nivcsw"],
		MaxRSSKiB:   m["maxrss_kib"],
	}
}
