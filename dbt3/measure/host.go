package measure

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/colinkdb/colink/internal/buildinfo"
)

// LocalHost describes this machine for a run's record: CPUs and their model, memory,
// kernel ("Linux 6.8.0-…", as uname's system name and release), Go version and the load
// average now. What cannot be read stays zero.
func LocalHost() Host {
	h := Host{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), Load: LoadAverage(), CPUModel: cpuModel()}
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

// cpuModel is /proc/cpuinfo's first "model name", or "".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Builds reads the build of each executable in paths (role to path; an empty path is
// skipped) and adds this program's own as self: a run's Builds. A binary that cannot be
// read is recorded with its error as its version.
func Builds(self string, paths map[string]string) map[string]buildinfo.Info {
	out := map[string]buildinfo.Info{self: buildinfo.Read()}
	for role, p := range paths {
		if p == "" {
			continue
		}
		in, err := buildinfo.ReadFile(p)
		if err != nil {
			in = buildinfo.Info{Version: "unreadable: " + err.Error()}
		}
		out[role] = in
	}
	return out
}

// BusyCPUs measures, over d, how many CPUs' worth of time the whole machine spent busy
// (/proc/stat: everything but idle and iowait): before a run starts, the other work that
// will share the machine with it. ok is false where /proc/stat cannot be read.
func BusyCPUs(ctx context.Context, d time.Duration) (busy float64, ok bool) {
	read := func() (busyTicks, total uint64, ok bool) {
		b, err := os.ReadFile("/proc/stat")
		if err != nil {
			return 0, 0, false
		}
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line)
		if len(f) < 5 || f[0] != "cpu" {
			return 0, 0, false
		}
		for i, v := range f[1:] {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return 0, 0, false
			}
			total += n
			if i != 3 && i != 4 { // idle, iowait
				busyTicks += n
			}
		}
		return busyTicks, total, true
	}
	b0, t0, ok0 := read()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return 0, false
	case <-t.C:
	}
	b1, t1, ok1 := read()
	if !ok0 || !ok1 || t1 <= t0 {
		return 0, false
	}
	return float64(b1-b0) / float64(t1-t0) * float64(runtime.NumCPU()), true
}
