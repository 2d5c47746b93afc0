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
	p.explainTo(pr)
	return pr.b.String()
}

// explainTo prints the plan into pr.
func (p *Plan) explainTo(pr *explainer) {
	for _, pg := range p.params {
		what := "the row of"
		if pg.single {
			what = "the row (if any) of"
		}
		pr.line("exemgr", 0, fmt.Sprintf("Parameters %d [%s] := %s", pg.id, strings.Join(pg.names, ", "), what))
		pr.printNode(pg.node, 1)
	}
	pr.printNode(p.Root, 0)
	if p.Pushdown != PushdownFull {
		pr.line("", 0, "pushdown="+p.Pushdown.String()+": "+p.Pushdown.cut())
	}
}

// explainer prints a plan. node and fragment, if set, annotate each of exemgr's operators
// and each fragment (EXPLAIN ANALYZE): what they return goes at the end of the line.
type explainer struct {
	b        strings.Builder
	node     func(Node) string
	fragment func(*Fragment) string
	step     func(f *Fragment, i int) string // fragment f's step i, if set
	// read holds the broadcasts whose input is printed: a broadcast exemgr reads in two
	// places (a parameter and the query, see groupTotals) is printed under the first.
	read map[*Broadcast]bool
}

func (e *explainer) line(where string, depth int, text string) {
	fmt.Fprintf(&e.b, "%-8s %s%s\n", where, strings.Repeat("  ", depth), text)
}

func (e *explainer) printNode(n Node, depth int) {
	text := n.label()
	scan, _ := n.(*BroadcastScan)
	if scan != nil && e.read[scan.B] {
		text += " (its rows computed above)"
	}
	if e.node != nil {
		text += "  " + e.node(n)
	}
	e.line("exemgr", depth, text)
	switch x := n.(type) {
	case *Gather:
		e.printFragment(x.Frag, depth+1)
		return
	case *BroadcastScan:
		if !e.read[x.B] {
			if e.read == nil {
				e.read = map[*Broadcast]bool{}
			}
			e.read[x.B] = true
			e.printNode(x.B.Input, depth+1)
		}
		return
	}
	for _, in := range n.inputs() {
		e.printNode(in, depth+1)
	}
}

// printFragment prints a fragment's steps from the last to the scan, each the input of the
// one above it; the annotation goes on the first line.
func (e *explainer) printFragment(f *Fragment, depth int) {
	for i := len(f.steps) - 1; i >= 0; i-- {
		s := f.steps[i]
		label := s.label
		if e.step != nil {
			if text := e.step(f, i); text != "" {
				label += "  " + text
			}
		}
		if e.fragment != nil && i == len(f.steps)-1 {
			label += "  " + e.fragment(f)
		}
		e.line("primproc", depth, label)
		if s.build >= 0 {
			b := f.Builds[s.build]
			text := fmt.Sprintf("Broadcast %d to every primproc", b.ID)
			if b.RowID {
				text += ", rows numbered"
			}
			e.line("exemgr", depth+1, text)
			e.printNode(b.Input, depth+2)
		}
		depth++
	}
	label := f.scanLabel
	if e.fragment != nil && len(f.steps) == 0 {
		label += "  " + e.fragment(f)
	}
	e.line("primproc", depth, label)
}
