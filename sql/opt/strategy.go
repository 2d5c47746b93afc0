package opt

import (
	"github.com/colinkdb/colink/sql/plan"
)

// ChooseJoinStrategy decides, for every join, which side is hashed (the build side) and
// where the join runs. A PM join needs a probe side that the primprocs produce (a scan,
// possibly under filters, projections and other PM joins) and a build side whose estimated
// size is at most PmMaxMemorySmallSide; it broadcasts the build side to every primproc.
// Otherwise the join is a UM join in exemgr. Left, semi and anti joins may build their left
// (preserved) side; mark and single joins build the right.
//
// When either side could be built, the one whose choice costs less CPU is: hashing a build
// row costs about three times probing a row, and far more than moving its bytes, so rows
// weigh more than bytes (see joinCost).
type ChooseJoinStrategy struct{}

// The cost model's constants, in nanoseconds of CPU, measured on the 2-vCPU machine class the
// engine is benchmarked on: inserting a row into a join hash table (exec's
// BenchmarkJoinBuild, 1.5M BIGINT keys with a date: 14.5 Mrows/s), probing one (exec's
// BenchmarkJoinProbe, lineitem rows into a unique 3M-row table, aggregation included: 39
// Mrows per CPU-second), and moving a byte over the link, sender and receiver together
// (results/ipcbench.md, Arrow batches over a unix socket: 0.137 + 0.132 s/GB).
const (
	buildRowNs = 69.0
	probeRowNs = 25.0
	linkByteNs = 0.27
)

// joinCost is the CPU a join costs with build as its build side, as far as the choice
// matters: every build row is hashed (on each of n primprocs for a PM join, which also ships
// the build side's bytes from the primprocs to exemgr and from there to each of them) and
// every probe row looked up.
func (s *strategist) joinCost(build, probe plan.Node, pm bool) float64 {
	rb, rp := s.est.rows(build), s.est.rows(probe)
	if !pm {
		return rb*buildRowNs + rp*probeRowNs
	}
	n := float64(max(s.c.Opts.Primprocs, 1))
	return n*rb*buildRowNs + (1+n)*s.bytes(build)*linkByteNs + rp*probeRowNs
}

// Name implements Rule.
func (ChooseJoinStrategy) Name() string { return "choose-join-strategy" }

// Apply implements Rule.
func (ChooseJoinStrategy) Apply(c *Context, root plan.Node) (plan.Node, error) {
	s := &strategist{c: c, est: newEstimator(c, root), limit: float64(c.Opts.PmMaxMemorySmallSide)}
	if s.limit <= 0 {
		s.limit = DefaultPmMaxMemorySmallSide
	}
	s.annotate(root)
	return root, nil
}

type strategist struct {
	c     *Context
	est   *estimator
	limit float64
}

// bytes estimates the size of a node's output.
func (s *strategist) bytes(n plan.Node) float64 {
	w := 0
	for _, id := range n.Output() {
		w += s.c.MD.Column(id).Type.Width()
	}
	return s.est.rows(n) * float64(max(w, 1))
}

// annotate decides the joins under n and reports whether n's output is produced on the
// primprocs.
func (s *strategist) annotate(n plan.Node) bool {
	switch x := n.(type) {
	case *plan.Scan:
		s.est.rows(x)
		return true
	case *plan.Filter, *plan.Project:
		pm := s.annotate(n.Inputs()[0])
		s.est.rows(n)
		return pm
	case *plan.Join:
		lpm, rpm := s.annotate(x.Left), s.annotate(x.Right)
		s.est.rows(x)
		lb, rb := s.bytes(x.Left), s.bytes(x.Right)
		leftOK := x.Kind == plan.InnerJoin || x.Kind == plan.LeftJoin || x.Kind == plan.SemiJoin || x.Kind == plan.AntiJoin
		pmRight := lpm && rb <= s.limit
		pmLeft := leftOK && rpm && lb <= s.limit
		switch {
		case pmRight && pmLeft:
			x.Strategy, x.Build = plan.PMJoin, plan.Right
			if s.joinCost(x.Left, x.Right, true) < s.joinCost(x.Right, x.Left, true) {
				x.Build = plan.Left
			}
		case pmRight:
			x.Strategy, x.Build = plan.PMJoin, plan.Right
		case pmLeft:
			x.Strategy, x.Build = plan.PMJoin, plan.Left
		default:
			x.Strategy, x.Build = plan.UMJoin, plan.Right
			if leftOK && s.joinCost(x.Left, x.Right, false) < s.joinCost(x.Right, x.Left, false) {
				x.Build = plan.Left
			}
		}
		return x.Strategy == plan.PMJoin
	}
	for _, in := range n.Inputs() {
		s.annotate(in)
	}
	s.est.rows(n)
	return false
}
