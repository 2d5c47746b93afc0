package opt

import (
	"math"
	"math/bits"

	"github.com/colinkdb/colink/sql/plan"
)

// maxDPRelations bounds exhaustive join enumeration; larger join graphs are ordered
// greedily.
const maxDPRelations = 12

// ReorderJoins orders each tree of inner joins by estimated cost: the sum of the
// intermediate results' estimated rows (C_out), over connected join orders only, so two
// inputs are joined without a condition only when nothing connects them. Equalities between
// columns form equivalence classes, so a join may use an equality implied by two others
// (a = b and b = c join a's and c's tables on a = c). A semi or anti join above a tree
// whose condition reads one table of the tree is placed on that table when that is
// cheaper. Each join puts its larger input on the left and its smaller on the right.
type ReorderJoins struct{}

// Name implements Rule.
func (ReorderJoins) Name() string { return "reorder-joins" }

// Apply implements Rule.
func (ReorderJoins) Apply(c *Context, root plan.Node) (plan.Node, error) {
	r := &reorderer{c: c, est: newEstimator(c, root)}
	return r.node(root), nil
}

type reorderer struct {
	c   *Context
	est *estimator
}

func (r *reorderer) node(n plan.Node) plan.Node {
	if j, ok := n.(*plan.Join); ok {
		switch j.Kind {
		case plan.InnerJoin:
			rels, conds := r.flatten(j)
			return r.region(rels, conds, nil)
		case plan.SemiJoin, plan.AntiJoin:
			return r.semiChain(j)
		}
	}
	for i, in := range n.Inputs() {
		n.SetInput(i, r.node(in))
	}
	return n
}

// flatten collects the inputs and conditions of a tree of inner joins.
func (r *reorderer) flatten(j *plan.Join) ([]plan.Node, []plan.Expr) {
	var rels []plan.Node
	var conds []plan.Expr
	var walk func(n plan.Node)
	walk = func(n plan.Node) {
		if x, ok := n.(*plan.Join); ok && x.Kind == plan.InnerJoin {
			walk(x.Left)
			walk(x.Right)
			conds = append(conds, x.On...)
			return
		}
		rels = append(rels, r.node(n))
	}
	walk(j)
	return rels, conds
}

// semiChain handles semi and anti joins stacked over a tree of inner joins: each may be
// applied on top of the tree or pushed onto the one table its condition reads.
func (r *reorderer) semiChain(top *plan.Join) plan.Node {
	var chain []*plan.Join // top first
	var base plan.Node = top
	for {
		j, ok := base.(*plan.Join)
		if !ok || (j.Kind != plan.SemiJoin && j.Kind != plan.AntiJoin) {
			break
		}
		chain = append(chain, j)
		base = j.Left
	}
	for _, j := range chain {
		j.Right = r.node(j.Right)
	}
	inner, ok := base.(*plan.Join)
	if !ok || inner.Kind != plan.InnerJoin {
		b := r.node(base)
		for i := len(chain) - 1; i >= 0; i-- {
			chain[i].Left = b
			b = chain[i]
		}
		return b
	}
	rels, conds := r.flatten(inner)
	// Bottom first, as they were applied.
	semis := make([]*plan.Join, len(chain))
	for i, j := range chain {
		semis[len(chain)-1-i] = j
	}
	return r.region(rels, conds, semis)
}

// region orders the join of rels under conds, with the semi joins semis (applied in order)
// either on top or on the one relation their condition reads.
func (r *reorderer) region(rels []plan.Node, conds []plan.Expr, semis []*plan.Join) plan.Node {
	target := make([]int, len(semis)) // relation a semi join may move to, or -1
	for i, s := range semis {
		target[i] = -1
		left := plan.Refs(plan.And(s.On...)).Difference(plan.OutputSet(s.Right))
		for k, rel := range rels {
			if left.SubsetOf(plan.OutputSet(rel)) && !left.Empty() {
				target[i] = k
				break
			}
		}
	}
	build := func(placed []bool) (plan.Node, float64) {
		rs := append([]plan.Node(nil), rels...)
		probe := 0.0
		for i, s := range semis {
			if placed[i] {
				k := target[i]
				probe += r.est.rows(rs[k])
				rs[k] = &plan.Join{Kind: s.Kind, Left: rs[k], Right: s.Right, On: s.On}
			}
		}
		n, cost := r.order(rs, conds)
		for i, s := range semis {
			if !placed[i] {
				probe += r.est.rows(n)
				n = &plan.Join{Kind: s.Kind, Left: n, Right: s.Right, On: s.On}
			}
		}
		return n, cost + probe
	}
	placed := make([]bool, len(semis))
	best, bestCost := build(placed)
	// Greedily move each semi join down when that lowers the cost.
	for i := range semis {
		if target[i] < 0 {
			continue
		}
		placed[i] = true
		n, cost := build(placed)
		if cost < bestCost {
			best, bestCost = n, cost
		} else {
			placed[i] = false
		}
	}
	return best
}

// joinGraph is a region's relations and conditions, ready for enumeration.
type joinGraph struct {
	rels    []plan.Node
	rows    []float64
	cols    []plan.ColSet
	classes [][]member // equivalence classes of columns, one member per relation
	preds   []graphPred
	top     []plan.Expr // conditions on no relation (constants)
	memo    map[uint64]float64
}

type member struct {
	rel int
	id  plan.ColumnID
	key keyInfo
}

type graphPred struct {
	e    plan.Expr
	mask uint64
	sel  float64
}

func (r *reorderer) graph(rels []plan.Node, conds []plan.Expr) *joinGraph {
	g := &joinGraph{rels: rels}
	for _, rel := range rels {
		g.rows = append(g.rows, r.est.rows(rel))
		g.cols = append(g.cols, plan.OutputSet(rel))
	}
	relOf := func(id plan.ColumnID) int {
		for i, c := range g.cols {
			if c.Has(id) {
				return i
			}
		}
		return -1
	}
	mask := func(e plan.Expr) uint64 {
		var m uint64
		for _, id := range plan.Refs(e).Ordered() {
			if k := relOf(id); k >= 0 {
				m |= 1 << uint(k)
			}
		}
		return m
	}
	// Union-find over the columns of column = column equalities across relations.
	parent := map[plan.ColumnID]plan.ColumnID{}
	var find func(plan.ColumnID) plan.ColumnID
	find = func(x plan.ColumnID) plan.ColumnID {
		if p, ok := parent[x]; ok && p != x {
			root := find(p)
			parent[x] = root
			return root
		}
		return x
	}
	var eqs []plan.Expr
	var others []plan.Expr
	var fixed []graphPred
	for _, c := range conds {
		a, b, ok := colEquality(c)
		if ok {
			// A MIN or MAX equals its argument in about one row per group: no key join.
			if sel, isExt := r.est.extremeSel(a, b); isExt {
				fixed = append(fixed, graphPred{e: c, mask: mask(c), sel: sel})
				continue
			}
		}
		if ok && relOf(a) >= 0 && relOf(b) >= 0 && relOf(a) != relOf(b) {
			eqs = append(eqs, c)
			parent[a], parent[b] = find(a), find(b)
			parent[find(a)] = find(b)
			continue
		}
		others = append(others, c)
	}
	groups := map[plan.ColumnID][]plan.ColumnID{}
	var roots []plan.ColumnID
	for _, c := range eqs {
		a, _, _ := colEquality(c)
		root := find(a)
		if _, ok := groups[root]; !ok {
			roots = append(roots, root)
			groups[root] = nil
		}
	}
	seen := map[plan.ColumnID]bool{}
	for _, c := range eqs {
		a, b, _ := colEquality(c)
		for _, id := range []plan.ColumnID{a, b} {
			if !seen[id] {
				seen[id] = true
				groups[find(id)] = append(groups[find(id)], id)
			}
		}
	}
	for _, root := range roots {
		ids := groups[root]
		byRel := map[int]bool{}
		dup := false
		for _, id := range ids {
			if byRel[relOf(id)] {
				dup = true
			}
			byRel[relOf(id)] = true
		}
		if dup {
			// Two columns of one relation in a class: keep the equalities as written.
			for _, c := range eqs {
				if a, _, _ := colEquality(c); find(a) == root {
					others = append(others, c)
				}
			}
			continue
		}
		var cl []member
		for _, id := range ids {
			k := relOf(id)
			cl = append(cl, member{rel: k, id: id, key: r.est.keyInfo(rels[k], id)})
		}
		g.classes = append(g.classes, cl)
	}
	g.preds = fixed
	for _, c := range others {
		m := mask(c)
		if m == 0 {
			g.top = append(g.top, c)
			continue
		}
		sel := r.est.sel(c, 1e9)
		if a, b, ok := colEquality(c); ok && relOf(a) >= 0 && relOf(b) >= 0 {
			sel = keySel([]keyInfo{r.est.keyInfo(rels[relOf(a)], a)}, []keyInfo{r.est.keyInfo(rels[relOf(b)], b)})
		}
		g.preds = append(g.preds, graphPred{e: c, mask: m, sel: sel})
	}
	g.memo = map[uint64]float64{}
	return g
}

// colEquality recognises "column = column".
func colEquality(e plan.Expr) (plan.ColumnID, plan.ColumnID, bool) {
	c, ok := e.(*plan.Call)
	if !ok || c.Fn != plan.FnEq {
		return 0, 0, false
	}
	a, aok := c.Args[0].(*plan.ColumnRef)
	b, bok := c.Args[1].(*plan.ColumnRef)
	if !aok || !bok || a.ID == b.ID {
		return 0, 0, false
	}
	return a.ID, b.ID, true
}

// card estimates the rows of the join of the relations in set s, joining them one by one
// in index order.
func (g *joinGraph) card(s uint64) float64 {
	if c, ok := g.memo[s]; ok {
		return c
	}
	last := 63 - bits.LeadingZeros64(s)
	rest := s &^ (1 << uint(last))
	var rows float64
	if rest == 0 {
		rows = g.rows[last]
	} else {
		restRows := g.card(rest)
		rows = restRows * g.rows[last]
		var left, right []keyInfo
		for _, cl := range g.classes {
			var kRest, kLast *keyInfo
			for i := range cl {
				m := &cl[i]
				switch {
				case m.rel == last:
					kLast = &m.key
				case rest&(1<<uint(m.rel)) != 0 && (kRest == nil || m.key.ndv < kRest.ndv):
					kRest = &m.key
				}
			}
			if kRest != nil && kLast != nil {
				k := *kRest
				k.ndv = math.Min(k.ndv, restRows)
				left = append(left, k)
				right = append(right, *kLast)
			}
		}
		rows *= keySel(left, right)
		for _, p := range g.preds {
			if p.mask&s == p.mask && p.mask&(1<<uint(last)) != 0 && p.mask&rest != 0 {
				rows *= p.sel
			}
		}
	}
	rows = math.Max(rows, 1e-9)
	g.memo[s] = rows
	return rows
}

// connected reports whether a condition joins sets a and b.
func (g *joinGraph) connected(a, b uint64) bool {
	for _, cl := range g.classes {
		var ina, inb bool
		for _, m := range cl {
			ina = ina || a&(1<<uint(m.rel)) != 0
			inb = inb || b&(1<<uint(m.rel)) != 0
		}
		if ina && inb {
			return true
		}
	}
	for _, p := range g.preds {
		if p.mask&a != 0 && p.mask&b != 0 && p.mask&^(a|b) == 0 {
			return true
		}
	}
	return false
}

// conds returns the conditions that join sets a and b: one equality per class that spans
// both, and the other conditions whose relations lie in a ∪ b and touch both.
func (g *joinGraph) conds(md *plan.Metadata, a, b uint64) []plan.Expr {
	var out []plan.Expr
	for _, cl := range g.classes {
		var ma, mb *member
		for i := range cl {
			m := &cl[i]
			if a&(1<<uint(m.rel)) != 0 && ma == nil {
				ma = m
			}
			if b&(1<<uint(m.rel)) != 0 && mb == nil {
				mb = m
			}
		}
		if ma != nil && mb != nil {
			out = append(out, plan.NewBool(plan.FnEq, md.Ref(ma.id), md.Ref(mb.id)))
		}
	}
	for _, p := range g.preds {
		if p.mask&a != 0 && p.mask&b != 0 && p.mask&^(a|b) == 0 {
			out = append(out, p.e)
		}
	}
	return out
}

type dpEntry struct {
	cost        float64
	left, right uint64
	ok          bool
}

// order returns the cheapest join tree of rels under conds and its cost.
func (r *reorderer) order(rels []plan.Node, conds []plan.Expr) (plan.Node, float64) {
	if len(rels) == 1 {
		return push(rels[0], conds), 0
	}
	g := r.graph(rels, conds)
	n := len(rels)
	var tree func(s uint64) plan.Node
	var best []dpEntry
	if n <= maxDPRelations {
		best = r.dp(g)
	}
	full := uint64(1)<<uint(n) - 1
	if best == nil || !best[full].ok {
		best = r.greedy(g)
	}
	tree = func(s uint64) plan.Node {
		if bits.OnesCount64(s) == 1 {
			return g.rels[bits.TrailingZeros64(s)]
		}
		e := best[s]
		l, rt := e.left, e.right
		if g.card(l) < g.card(rt) {
			l, rt = rt, l
		}
		j := &plan.Join{Kind: plan.InnerJoin, Left: tree(l), Right: tree(rt), On: g.conds(r.c.MD, l, rt)}
		return j
	}
	root := tree(full)
	if len(g.top) > 0 {
		root = withFilter(root, g.top)
	}
	return root, best[full].cost
}

// dp enumerates connected splits of every subset (DPsub), cheapest first.
func (r *reorderer) dp(g *joinGraph) []dpEntry {
	n := len(g.rels)
	full := uint64(1)<<uint(n) - 1
	best := make([]dpEntry, full+1)
	for i := 0; i < n; i++ {
		best[1<<uint(i)] = dpEntry{ok: true}
	}
	for s := uint64(1); s <= full; s++ {
		if bits.OnesCount64(s) < 2 {
			continue
		}
		card := g.card(s)
		// Enumerate proper subsets l of s containing s's lowest relation (each split once).
		low := s & -s
		for l := (s - 1) & s; l > 0; l = (l - 1) & s {
			if l&low == 0 {
				continue
			}
			rt := s &^ l
			if !best[l].ok || !best[rt].ok || !g.connected(l, rt) {
				continue
			}
			cost := best[l].cost + best[rt].cost + card
			if !best[s].ok || cost < best[s].cost {
				best[s] = dpEntry{cost: cost, left: l, right: rt, ok: true}
			}
		}
	}
	return best
}

// greedy builds a join order by repeatedly joining the connected pair with the smallest
// result, falling back to a cross product of the smallest pair when nothing connects
// (the graph's components, smallest first).
func (r *reorderer) greedy(g *joinGraph) []dpEntry {
	n := len(g.rels)
	full := uint64(1)<<uint(n) - 1
	best := make([]dpEntry, full+1)
	var sets []uint64
	for i := 0; i < n; i++ {
		s := uint64(1) << uint(i)
		best[s] = dpEntry{ok: true}
		sets = append(sets, s)
	}
	for len(sets) > 1 {
		bi, bj, bestCard, connected := -1, -1, math.Inf(1), false
		for i := 0; i < len(sets); i++ {
			for j := i + 1; j < len(sets); j++ {
				c := g.connected(sets[i], sets[j])
				if connected && !c {
					continue
				}
				card := g.card(sets[i] | sets[j])
				if c && !connected || card < bestCard {
					bi, bj, bestCard, connected = i, j, card, c
				}
			}
		}
		s := sets[bi] | sets[bj]
		best[s] = dpEntry{cost: best[sets[bi]].cost + best[sets[bj]].cost + bestCard, left: sets[bi], right: sets[bj], ok: true}
		sets[bi] = s
		sets = append(sets[:bj], sets[bj+1:]...)
	}
	return best
}
