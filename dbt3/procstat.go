package dbt3

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/colinkdb/colink/dbt3/measure"
)

// CPUTicks is a process's cumulative CPU time as /proc/PID/stat reports it: utime and stime,
// all threads, in clock ticks.
type CPUTicks struct{ User, Sys int64 }

// Sub returns the ticks accumulated since earlier.
func (t CPUTicks) Sub(earlier CPUTicks) CPUTicks {
	return CPUTicks{t.User - earlier.User, t.Sys - earlier.Sys}
}

// ReadProcCPU reads utime and stime (fields 14 and 15) of /proc/pid/stat.
func ReadProcCPU(pid int) (CPUTicks, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return CPUTicks{}, err
	}
	return parseProcStat(string(b))
}

// parseProcStat parses a /proc/PID/stat line. The command name, field 2, is in parentheses
// and may itself contain spaces and parentheses, so fields are counted from the last ")".
func parseProcStat(line string) (CPUTicks, error) {
	end := strings.LastIndexByte(line, ')')
	if end < 0 {
		return CPUTicks{}, fmt.Errorf("/proc stat: no command name in %.40q", line)
	}
	f := strings.Fields(line[end+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return CPUTicks{}, fmt.Errorf("/proc stat: %d fields after the command name, want at least 13", len(f))
	}
	user, err1 := strconv.ParseInt(f[11], 10, 64)
	sys, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return CPUTicks{}, fmt.Errorf("/proc stat: utime %q, stime %q are not integers", f[11], f[12])
	}
	return CPUTicks{user, sys}, nil
}

// atClockTick is the auxiliary vector's AT_CLKTCK key: the kernel's USER_HZ.
const atClockTick = 17

// ClockTicks returns the unit of /proc's CPU times in ticks per second (sysconf(_SC_CLK_TCK)),
// read from the process's auxiliary vector; 100, Linux's USER_HZ everywhere, if it cannot be.
func ClockTicks() int64 {
	b, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return 100
	}
	return clockTicksFromAuxv(b)
}

func clockTicksFromAuxv(b []byte) int64 {
	word := int(unsafe.Sizeof(uintptr(0)))
	get := func(p []byte) uint64 {
		if word == 4 {
			return uint64(binary.NativeEndian.Uint32(p))
		}
		return binary.NativeEndian.Uint64(p)
	}
	for i := 0; i+2*word <= len(b); i += 2 * word {
		key, val := get(b[i:]), get(b[i+word:])
		if key == 0 {
			break
		}
		if key == atClockTick && val > 0 && val <= math.MaxInt32 {
			return int64(val)
		}
	}
	return 100
}

// CPUCheck compares a process's CPU as it accounts it itself (getrusage deltas, reported
// by SHOW QUERY STATS) with the /proc/PID/stat delta taken around the same statements by the
// client. The /proc window is slightly wider (it includes the protocol round trip), and each
// of its readings is truncated to a tick, so each of user and sys may differ by up to
// tolerance ticks before the check flags them.
type CPUCheck struct {
	Hz        int64 // clock ticks per second
	Tolerance int64 // ticks; 2 when zero (one tick of truncation at each end)
}

// Compare returns "" if self and the /proc delta agree, else a sentence describing the
// disagreement.
func (c CPUCheck) Compare(process string, self measure.Usage, proc CPUTicks) string {
	hz, tol := c.Hz, c.Tolerance
	if hz <= 0 {
		hz = 100
	}
	if tol <= 0 {
		tol = 2
	}
	var bad []string
	check := func(what string, selfSec float64, ticks int64) {
		procSec := float64(ticks) / float64(hz)
		if math.Abs(selfSec-procSec) > float64(tol)/float64(hz) {
			bad = append(bad, fmt.Sprintf("%s %.3fs by its own account, %.3fs by /proc (%d ticks)", what, selfSec, procSec, ticks))
		}
	}
	check("user", self.User, proc.User)
	check("sys", self.Sys, proc.Sys)
	if len(bad) == 0 {
		return ""
	}
	return fmt.Sprintf("%s CPU disagrees beyond %d ticks of %d Hz: %s", process, tol, hz, strings.Join(bad, "; "))
}

// ticksToUsage converts a /proc delta to seconds.
func ticksToUsage(t CPUTicks, hz int64) measure.Usage {
	return measure.Usage{User: float64(t.User) / float64(hz), Sys: float64(t.Sys) / float64(hz)}
}

// ResetPeakRSS restarts the kernel's count of a process's peak resident size (VmHWM), as
// writing 5 to /proc/PID/clear_refs does, so that a later ReadRSS gives the peak since.
func ResetPeakRSS(pid int) error {
	return os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0)
}

// RSS is a process's resident size now and its peak since it started or since the last
// ResetPeakRSS, in bytes. Now leaves out the pages the process has freed lazily
// (MADV_FREE, smaps_rollup's LazyFree): the daemons' runtime frees its idle heap so
// (daemon.LazyFree), and the kernel takes such pages back whenever it needs them, without
// writing them anywhere, so they are no longer the process's to hold. Peak is VmHWM.
type RSS struct{ Now, Peak int64 }

// ReadRSS reads VmRSS and VmHWM of /proc/PID/status, less LazyFree of
// /proc/PID/smaps_rollup where the kernel has it.
func ReadRSS(pid int) (RSS, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return RSS{}, err
	}
	r, err := parseStatusRSS(string(b))
	if err != nil {
		return RSS{}, err
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup"); err == nil {
		r.Now -= lazyFree(string(b))
	}
	return r, nil
}

// lazyFree reads the "LazyFree:  123 kB" line of an smaps_rollup file (0 if none).
func lazyFree(rollup string) int64 {
	for _, line := range strings.Split(rollup, "\n") {
		if rest, ok := strings.CutPrefix(line, "LazyFree:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				if kib, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kib << 10
				}
			}
		}
	}
	return 0
}

// parseStatusRSS reads the "VmRSS:  123 kB" and "VmHWM:  456 kB" lines of a status file.
func parseStatusRSS(status string) (RSS, error) {
	var r RSS
	found := 0
	for _, line := range strings.Split(status, "\n") {
		var dst *int64
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			dst = &r.Now
		case strings.HasPrefix(line, "VmHWM:"):
			dst = &r.Peak
		default:
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 || f[2] != "kB" {
			return RSS{}, fmt.Errorf("/proc status: unexpected %q", line)
		}
		kib, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return RSS{}, fmt.Errorf("/proc status: %q: %w", line, err)
		}
		*dst = kib << 10
		found++
	}
	if found != 2 {
		return RSS{}, fmt.Errorf("/proc status: no VmRSS and VmHWM lines")
	}
	return r, nil
}
