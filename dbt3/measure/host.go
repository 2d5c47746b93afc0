package measure

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// LocalHost describes this machine for a run's record: CPUs, memory, kernel ("Linux
// 6.8.0-…", as uname's system name and release) and Go version. What cannot be read stays
// zero.
func LocalHost() Host {
	h := Host{CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	ostype, err1 := os.ReadFile("/proc/sys/kernel/ostype")
	release, err2 := os.ReadFile("/proc/sys/kernel/osrelease")
	if err1 == nil && err2 == nil {
		h.Kernel = strings.TrimSpace(string(ostype)) + " " + strings.TrimSpace(string(release))
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				if fields := strings.Fields(rest); len(fields) > 0 { // "16384000 kB"
					kib, _ := strconv.ParseInt(fields[0], 10, 64)
					h.MemoryMiB = kib / 1024
				}
				break
			}
		}
	}
	return h
}

// RunID names a run: its UTC start to the minute, the driver and the scale factor, e.g.
// "2026-11-30T0512-compare-sf1".
func RunID(driver string, sf float64, started time.Time) string {
	return fmt.Sprintf("%s-%s-sf%s", started.UTC().Format("2006-01-02T1504"), driver, FormatSF(sf))
}

// FormatSF prints a scale factor as dbgen's -s takes it: 1, 10, 0.01.
func FormatSF(sf float64) string { return strconv.FormatFloat(sf, 'f', -1, 64) }

// LoadAverage returns /proc/loadavg's 1, 5 and 15 minute averages ("0.52 0.61 0.70"), or ""
// if they cannot be read: a run records them to show how busy the machine was.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return ""
}
