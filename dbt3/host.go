package dbt3

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/colinkdb/colink/dbt3/measure"
)

// HostInfo describes this machine for a run's record.
func HostInfo() measure.Host {
	h := measure.Host{CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				h.MemoryMiB = kib / 1024
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
