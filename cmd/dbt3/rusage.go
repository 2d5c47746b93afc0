package main

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// usageStats is the process's resource use so far.
type usageStats struct {
	user, sys        time.Duration
	maxRSS           int64 // bytes
	voluntary, invol int64 // context switches
}

func selfUsage() usageStats {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return usageStats{}
	}
	return usageStats{
		user:      time.Duration(ru.Utime.Nano()),
		sys:       time.Duration(ru.Stime.Nano()),
		maxRSS:    ru.Maxrss * 1024,
		voluntary: ru.Nvcsw,
		invol:     ru.Nivcsw,
	}
}

// String formats the usage with the wall time elapsed, as every dbt3 report line does.
func (u usageStats) report(wall time.Duration) string {
	return fmt.Sprintf("wall %.2fs user %.2fs sys %.2fs maxrss %d MiB ctxsw %d voluntary %d involuntary",
		wall.Seconds(), u.user.Seconds(), u.sys.Seconds(), u.maxRSS>>20, u.voluntary, u.invol)
}
