package main

import (
	"fmt"
	"time"

	"github.com/colinkdb/colink/internal/rusage"
)

// selfUsage is this process's resource use so far (zero if getrusage fails).
func selfUsage() rusage.Usage {
	u, _ := rusage.Self()
	return u
}

// usageReport formats a usage with the wall time elapsed, as every dbt3 report line does.
func usageReport(u rusage.Usage, wall time.Duration) string {
	return fmt.Sprintf("wall %.2fs user %.2fs sys %.2fs maxrss %d MiB ctxsw %d voluntary %d involuntary",
		wall.Seconds(), u.User.Seconds(), u.Sys.Seconds(), u.MaxRSSKiB>>10, u.Voluntary, u.Involuntary)
}
