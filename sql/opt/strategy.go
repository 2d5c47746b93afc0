package opt

import (
	"github.com/colinkdb/colink/sql/plan"
)

// ChooseJoinStrategy decides, for every join, which side is hashed (the build side) and
// where the join runs. A PM join needs a probe side that the primprocs produce (a scan,
// possibly under filters, projections and other PM joins) and a build side whose estimated
// size is at most PmMaxMemorySmallSide; it broadcasts the build side to every primproc.
// Otherwise the join is a UM join in exemgr, building the smaller side. Left, semi and anti
// joins may build their left (preserved) side; mark and single joins build the right.
type ChooseJoinStrategy struct{}

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
			if lb < rb {
				x.Build = plan.Left
			}
		case pmRight:
			x.Strategy, x.Build = plan.PMJoin, plan.Right
		case pmLeft:
			x.Strategy, x.Build = plan.PMJoin, plan.Left
		default:
			x.Strategy, x.Build = plan.UMJoin, plan.Right
			if leftOK && lb < rb {
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
