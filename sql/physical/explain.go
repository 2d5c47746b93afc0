package physical

import (
	"fmt"
	"strings"
)

// Explain prints the plan, one operator per line, inputs indented under their operator.
// Each line starts with where the operator runs: exemgr, or primproc for the steps of a
// fragment (every primproc runs them over its share of the table). A PM join's build side
// is printed under the join step that probes it, as the broadcast exemgr computes first;
// parameters (scalar subqueries computed before the query runs) come first.
func (p *Plan) Explain() string {
	pr := &explainer{}
	for _, pg := range p.params {
		what := "the row of"
		if pg.single {
			what = "the row (if any) of"
		}
		pr.line("exemgr", 0, fmt.Sprintf("Parameters %d [%s] := %s", pg.id, strings.Join(pg.names, ", "), what))
		pr.node(pg.node, 1)
	}
	pr.node(p.Root, 0)
	if p.Pushdown != PushdownFull {
		pr.line("", 0, "pushdown="+p.Pushdown.String()+": "+p.Pushdown.cut())
	}
	return pr.b.String()
}

type explainer struct {
	b strings.Builder
}

func (e *explainer) line(where string, depth int, text string) {
	fmt.Fprintf(&e.b, "%-8s %s%s\n", where, strings.Repeat("  ", depth), text)
}

func (e *explainer) node(n Node, depth int) {
	e.line("exemgr", depth, n.label())
	switch x := n.(type) {
	case *Gather:
		e.fragment(x.Frag, depth+1)
		return
	case *BroadcastScan:
		e.node(x.B.Input, depth+1)
		return
	}
	for _, in := range n.inputs() {
		e.node(in, depth+1)
	}
}

// fragment prints a fragment's steps from the last to the scan, each the input of the one
// above it.
func (e *explainer) fragment(f *Fragment, depth int) {
	for i := len(f.steps) - 1; i >= 0; i-- {
		s := f.steps[i]
		e.line("primproc", depth, s.label)
		if s.build >= 0 {
			b := f.Builds[s.build]
			text := fmt.Sprintf("Broadcast %d to every primproc", b.ID)
			if b.RowID {
				text += ", rows numbered"
			}
			e.line("exemgr", depth+1, text)
			e.node(b.Input, depth+2)
		}
		depth++
	}
	e.line("primproc", depth, f.scanLabel)
}
