package dbt3

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/colinkdb/colink/dbt3/measure"
)

// ProcStats is one row of SHOW QUERY STATS: what one process did for the session's
// previous statement. Columns are read by name; a column the server does not send reads
// as zero, and columns the driver does not know are ignored.
type ProcStats struct {
	Process   string // "exemgr", "primproc0", "primproc1", …
	Peer      string // the primproc's endpoint URL as exemgr was configured; "" for exemgr
	Transport string // the transport exemgr used to that primproc: "tcp", "unix" or "shm"
	Pushdown  string // the statement's pushdown level (the same in every row)

	ElapsedUS                           int64 // the statement's wall time in exemgr
	UserUS, SysUS                       int64 // the process's CPU during the statement
	Nvcsw, Nivcsw                       int64 // its voluntary and involuntary context switches
	BytesOut, BytesIn                   int64 // link bytes exemgr → primproc and back
	BatchesOut, BatchesIn               int64 // Arrow batches each way
	Frames, Syscalls                    int64 // frames both ways; read+write syscalls
	RingBytesOut, RingBytesIn           int64 // of the link bytes, those in shared memory (shm)
	RingFallbacks, RingWakeups          int64 // shm: batches on the socket for want of ring space; wake-up writes
	Fragments, RowsScanned              int64
	RowGroupsTotal, RowGroupsEliminated int64
	CacheBytes, DiskBytes               int64
	Rows                                int64 // rows returned to the client (exemgr row)
}

// IsPrimProc reports whether the row describes a primproc.
func (p *ProcStats) IsPrimProc() bool { return strings.HasPrefix(p.Process, "primproc") }

// Usage returns the row's CPU and context switches.
func (p *ProcStats) Usage() measure.Usage {
	return measure.Usage{
		User: float64(p.UserUS) / 1e6, Sys: float64(p.SysUS) / 1e6,
		Voluntary: p.Nvcsw, Involuntary: p.Nivcsw,
	}
}

// ParseQueryStats reads SHOW QUERY STATS' result set. The process, user_us and sys_us
// columns are required; every process must appear once.
func ParseQueryStats(res *Result) ([]ProcStats, error) {
	col := map[string]int{}
	for i, name := range res.Columns {
		col[strings.ToLower(strings.TrimSpace(name))] = i
	}
	for _, need := range []string{"process", "user_us", "sys_us"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("query stats: no %q column among %v", need, res.Columns)
		}
	}
	ints := []struct {
		name string
		dst  func(*ProcStats) *int64
	}{
		{"elapsed_us", func(p *ProcStats) *int64 { return &p.ElapsedUS }},
		{"user_us", func(p *ProcStats) *int64 { return &p.UserUS }},
		{"sys_us", func(p *ProcStats) *int64 { return &p.SysUS }},
		{"nvcsw", func(p *ProcStats) *int64 { return &p.Nvcsw }},
		{"nivcsw", func(p *ProcStats) *int64 { return &p.Nivcsw }},
		{"bytes_out", func(p *ProcStats) *int64 { return &p.BytesOut }},
		{"bytes_in", func(p *ProcStats) *int64 { return &p.BytesIn }},
		{"batches_out", func(p *ProcStats) *int64 { return &p.BatchesOut }},
		{"batches_in", func(p *ProcStats) *int64 { return &p.BatchesIn }},
		{"frames", func(p *ProcStats) *int64 { return &p.Frames }},
		{"syscalls", func(p *ProcStats) *int64 { return &p.Syscalls }},
		{"ring_bytes_out", func(p *ProcStats) *int64 { return &p.RingBytesOut }},
		{"ring_bytes_in", func(p *ProcStats) *int64 { return &p.RingBytesIn }},
		{"ring_fallbacks", func(p *ProcStats) *int64 { return &p.RingFallbacks }},
		{"ring_wakeups", func(p *ProcStats) *int64 { return &p.RingWakeups }},
		{"fragments", func(p *ProcStats) *int64 { return &p.Fragments }},
		{"rows_scanned", func(p *ProcStats) *int64 { return &p.RowsScanned }},
		{"row_groups_total", func(p *ProcStats) *int64 { return &p.RowGroupsTotal }},
		{"row_groups_eliminated", func(p *ProcStats) *int64 { return &p.RowGroupsEliminated }},
		{"cache_bytes", func(p *ProcStats) *int64 { return &p.CacheBytes }},
		{"disk_bytes", func(p *ProcStats) *int64 { return &p.DiskBytes }},
		{"rows", func(p *ProcStats) *int64 { return &p.Rows }},
	}
	text := func(row []string, name string) string {
		if i, ok := col[name]; ok {
			return row[i]
		}
		return ""
	}
	var out []ProcStats
	seen := map[string]bool{}
	for r, row := range res.Rows {
		p := ProcStats{Process: text(row, "process"), Peer: text(row, "peer"), Transport: text(row, "transport"), Pushdown: text(row, "pushdown")}
		if p.Process == "" {
			return nil, fmt.Errorf("query stats: row %d names no process", r+1)
		}
		if seen[p.Process] {
			return nil, fmt.Errorf("query stats: process %q appears twice", p.Process)
		}
		seen[p.Process] = true
		for _, f := range ints {
			i, ok := col[f.name]
			if !ok || res.IsNull(r, i) || row[i] == "" {
				continue
			}
			v, err := strconv.ParseInt(row[i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("query stats: %s of %s: %q is not an integer", f.name, p.Process, row[i])
			}
			*f.dst(&p) = v
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("query stats: no rows (did the previous statement run?)")
	}
	return out, nil
}

// addStats folds one statement's statistics into a sample: each process's usage is added
// to what earlier statements of the same script used, and the primprocs' link counters are
// summed into the sample's Link.
func addStats(s *measure.Sample, stats []ProcStats) {
	if s.Procs == nil {
		s.Procs = map[string]measure.Usage{}
	}
	if s.Link == nil {
		s.Link = &measure.Link{}
	}
	for i := range stats {
		p := &stats[i]
		s.Procs[p.Process] = s.Procs[p.Process].Add(p.Usage())
		if !p.IsPrimProc() {
			continue // the exemgr row may hold totals of the primproc rows
		}
		s.Link.BytesOut += p.BytesOut
		s.Link.BytesIn += p.BytesIn
		s.Link.BatchesOut += p.BatchesOut
		s.Link.BatchesIn += p.BatchesIn
		s.Link.Frames += p.Frames
		s.Link.Syscalls += p.Syscalls
		s.Link.RingBytesOut += p.RingBytesOut
		s.Link.RingBytesIn += p.RingBytesIn
		s.Link.RingFallbacks += p.RingFallbacks
		s.Link.RingWakeups += p.RingWakeups
		s.RowGroupsEliminated += p.RowGroupsEliminated
	}
}
