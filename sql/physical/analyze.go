package physical

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/units"
)

// NodeStats is what EXPLAIN ANALYZE reports of one of exemgr's operators over a run: the
// rows and batches it produced, the time spent in it and in its inputs (Init and Next,
// inclusive), and the most memory it held at once.
type NodeStats struct {
	Opens      int
	Rows       int64
	Batches    int64
	Time       time.Duration
	PeakMemory int64
}

// open opens n for run r; with ExecOptions.Analyze, its operator is wrapped to count what it
// produces and how long it takes.
func (r *run) open(n Node) (exec.Operator, error) {
	op, err := n.open(r)
	if err != nil || !r.opts.Analyze {
		return op, err
	}
	r.mu.Lock()
	st := r.nodes[n]
	if st == nil {
		st = &nodeState{}
		r.nodes[n] = st
	}
	st.stats.Opens++
	r.mu.Unlock()
	return &analyzed{Operator: op, r: r, st: st}, nil
}

// budgetOf is the budget n's operator charges: the run's, or under Analyze a child of it
// whose peak is the operator's.
func (r *run) budgetOf(n Node) *exec.Budget {
	if !r.opts.Analyze {
		return r.budget
	}
	b := r.budget.Child(0, r.budget.Pool())
	r.mu.Lock()
	st := r.nodes[n]
	if st == nil {
		st = &nodeState{}
		r.nodes[n] = st
	}
	st.budgets = append(st.budgets, b)
	r.mu.Unlock()
	return b
}

// nodeState is a node's counters during a run, guarded by run.mu.
type nodeState struct {
	stats   NodeStats
	budgets []*exec.Budget
}

// analyzed counts an operator's output and time. It is used by one goroutine at a time,
// as every operator is; its totals join the node's at Close.
type analyzed struct {
	exec.Operator
	r             *run
	st            *nodeState
	rows, batches int64
	spent         time.Duration
	closed        bool
}

func (a *analyzed) Init(ctx context.Context) error {
	t := time.Now()
	err := a.Operator.Init(ctx)
	a.spent += time.Since(t)
	return err
}

func (a *analyzed) Next(ctx context.Context) (*vec.Batch, error) {
	t := time.Now()
	b, err := a.Operator.Next(ctx)
	a.spent += time.Since(t)
	if b != nil {
		a.rows += int64(b.Len())
		a.batches++
	}
	return b, err
}

func (a *analyzed) Close() error {
	err := a.Operator.Close()
	if !a.closed {
		a.closed = true
		a.r.mu.Lock()
		a.st.stats.Rows += a.rows
		a.st.stats.Batches += a.batches
		a.st.stats.Time += a.spent
		a.r.mu.Unlock()
	}
	return err
}

// Analysis is res's EXPLAIN ANALYZE: the plan as Explain prints it, each line of exemgr's
// operators followed by what it did, each Gather by its fragment's traffic and the
// primprocs' work. Take it once the result has been read to its end and closed.
func (p *Plan) Analysis(res *Result) string {
	r := res.r
	r.mu.Lock()
	nodes := make(map[Node]NodeStats, len(r.nodes))
	for n, st := range r.nodes {
		s := st.stats
		for _, b := range st.budgets {
			s.PeakMemory = max(s.PeakMemory, b.Peak())
		}
		nodes[n] = s
	}
	r.mu.Unlock()
	qs := res.Stats()
	frags := map[int][]FragmentRun{}
	work := map[int]*exec.FragmentStats{} // the primprocs' counters per fragment, over its runs
	for _, fr := range qs.Fragments {
		frags[fr.Fragment] = append(frags[fr.Fragment], fr)
		ps := work[fr.Fragment]
		if ps == nil {
			ps = &exec.FragmentStats{}
			work[fr.Fragment] = ps
		}
		for _, s := range fr.Streams {
			ps.Add(s)
		}
	}
	pr := &explainer{
		node: func(n Node) string {
			s, ok := nodes[n]
			if !ok {
				return "(never opened)"
			}
			text := fmt.Sprintf("(rows %d, batches %d, time %s", s.Rows, s.Batches, fmtDuration(s.Time))
			if s.PeakMemory > 0 {
				text += ", memory " + units.FormatBytes(s.PeakMemory)
			}
			if s.Opens > 1 {
				text += fmt.Sprintf(", opened %d times", s.Opens)
			}
			return text + ")"
		},
		step: func(f *Fragment, i int) string {
			ps := work[f.ID]
			if ps == nil || i >= len(ps.Steps) {
				return ""
			}
			st := ps.Steps
			return fmt.Sprintf("(rows %d, batches %d, time %s)", st[i].Rows, st[i].Batches, fmtDuration(time.Duration(st[i].Nanos)))
		},
		fragment: func(f *Fragment) string {
			runs := frags[f.ID]
			if len(runs) == 0 {
				return "(fragment " + fmt.Sprint(f.ID) + " never ran)"
			}
			var fr FragmentRun
			for _, x := range runs {
				fr.RowsReceived += x.RowsReceived
				fr.BatchesReceived += x.BatchesReceived
				fr.BytesReceived += x.BytesReceived
				fr.BytesBroadcast += x.BytesBroadcast
			}
			ps := work[f.ID]
			text := fmt.Sprintf("(fragment %d on %d primproc(s): scanned %d rows in %d of %d row groups, produced %d rows; primproc CPU %s, memory %s; link: %d rows in %d batches, %s received",
				f.ID, len(runs[0].Streams), ps.RowsScanned, ps.RowGroups-ps.RowGroupsEliminated, ps.RowGroups, ps.RowsProduced,
				fmtDuration(time.Duration(ps.WorkerCPUNanos)), units.FormatBytes(ps.PeakMemory), fr.RowsReceived, fr.BatchesReceived, units.FormatBytes(fr.BytesReceived))
			if fr.BytesBroadcast > 0 {
				text += ", " + units.FormatBytes(fr.BytesBroadcast) + " broadcast"
			}
			if ps.RowsGroupedInUnits > 0 {
				text += fmt.Sprintf("; %d rows aggregated within their segments", ps.RowsGroupedInUnits)
			}
			if len(runs) > 1 {
				text += fmt.Sprintf("; ran %d times", len(runs))
			}
			return text + ")"
		},
	}
	p.explainTo(pr)
	fmt.Fprintf(&pr.b, "\nelapsed %s; exemgr's peak memory %s; from the primprocs %d rows in %d batches, %s; broadcast %s; primproc CPU %s\n",
		fmtDuration(qs.Elapsed), units.FormatBytes(qs.PeakMemory), qs.RowsReceived, qs.BatchesReceived, units.FormatBytes(qs.BytesReceived),
		units.FormatBytes(qs.BytesBroadcast), fmtDuration(time.Duration(qs.Primprocs.WorkerCPUNanos)))
	return strings.TrimRight(pr.b.String(), "\n")
}

// fmtDuration prints a duration to about three significant digits.
func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}
