package physical

import (
	"fmt"
	"slices"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/sql/lower"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

var joinKinds = map[plan.JoinKind]exec.JoinKind{
	plan.InnerJoin: exec.JoinInner, plan.LeftJoin: exec.JoinLeftOuter, plan.SemiJoin: exec.JoinSemi,
	plan.AntiJoin: exec.JoinAnti, plan.MarkJoin: exec.JoinMark, plan.SingleJoin: exec.JoinLeftOuter,
}

// exactlyOneRow reports whether a plan always yields exactly one row.
func exactlyOneRow(n plan.Node) bool {
	switch x := n.(type) {
	case *plan.Aggregate:
		return len(x.Groups) == 0
	case *plan.Project:
		return exactlyOneRow(x.Input)
	case *plan.Values:
		return len(x.Rows) == 1
	}
	return false
}

func (b *builder) join(j *plan.Join, need plan.ColSet) (*rel, error) {
	if _, ok := joinKinds[j.Kind]; !ok {
		return nil, sqlerr.Unsupported("join kind " + j.Kind.String())
	}
	keys, residual := plan.SplitJoin(j)
	// Each side supplies what the consumer reads of it and what the join's conditions read.
	cond := plan.RefsAll(j.On)
	if j.MarkCond != nil {
		cond.UnionWith(plan.Refs(j.MarkCond))
	}
	need = need.Union(cond)
	if r, ok, err := b.paramJoin(j, keys, need); ok || err != nil {
		return r, err
	}
	probePlan, buildPlan := j.Left, j.Right
	var probeKeys, buildKeys []plan.Expr
	for _, k := range keys {
		probeKeys, buildKeys = append(probeKeys, k.Left), append(buildKeys, k.Right)
	}
	if j.Build == plan.Left {
		if j.Kind == plan.MarkJoin || j.Kind == plan.SingleJoin {
			return nil, b.errorf("a %s join cannot build its left side", j.Kind)
		}
		probePlan, buildPlan = j.Right, j.Left
		probeKeys, buildKeys = buildKeys, probeKeys
	}
	markKeys := 0
	if j.Kind == plan.MarkJoin && j.MarkCond != nil {
		l, r, ok := b.markComparison(j)
		if !ok {
			return nil, sqlerr.Unsupported("a subquery comparison other than = (IN)")
		}
		probeKeys, buildKeys = append(probeKeys, l), append(buildKeys, r)
		markKeys = 1
	}
	if len(probeKeys) == 0 {
		// No equality to hash on: every pair is a candidate (a nested loop, by hashing a
		// constant key on both sides).
		one := plan.Lit(types.IntValue(1))
		probeKeys, buildKeys = []plan.Expr{one}, []plan.Expr{one}
	}
	for i := range probeKeys {
		probeKeys[i], buildKeys[i] = b.commonKeyType(probeKeys[i], buildKeys[i])
	}
	// The build side first: it runs first, so its fragments get the lower numbers.
	build, err := b.build(buildPlan, need)
	if err != nil {
		return nil, err
	}
	probe, err := b.build(probePlan, need)
	if err != nil {
		return nil, err
	}
	if build, err = b.toNode(build, needed(buildPlan.Output(), need)); err != nil {
		return nil, err
	}
	bpos, err := b.ensure(build, buildKeys)
	if err != nil {
		return nil, err
	}
	matchJoin := j.Build == plan.Left && j.Kind != plan.InnerJoin
	bc := &Broadcast{ID: len(b.p.broadcasts) + 1, Input: build.node, RowID: matchJoin, types: build.types}
	b.p.broadcasts = append(b.p.broadcasts, bc)
	bcols := slices.Clone(build.cols)
	if matchJoin {
		bcols = append(bcols, b.hidden("row number", types.Int64Type))
		bc.types = append(slices.Clone(build.types), vec.Int64Type)
	}
	if j.Kind == plan.SingleJoin {
		bc.uniqueKeys = bpos
	}
	pm := j.Strategy == plan.PMJoin && probe.frag != nil && b.opts.Pushdown.allows(stepOperator)
	if !pm {
		b.gatherAll(probe)
	}
	ppos, err := b.ensure(probe, probeKeys)
	if err != nil {
		return nil, err
	}
	spec := exec.JoinSpec{Kind: joinKinds[j.Kind], ProbeKeys: ppos, BuildKeys: bpos, MarkKeys: markKeys}
	if matchJoin {
		spec.Kind = exec.JoinInner
	}
	if len(residual) > 0 {
		if spec.Residual, err = b.lower(plan.And(residual...), append(slices.Clone(probe.cols), bcols...)); err != nil {
			return nil, err
		}
	}
	var out []plan.ColumnID
	var markRaw plan.ColumnID
	switch spec.Kind {
	case exec.JoinSemi, exec.JoinAnti:
		out = slices.Clone(probe.cols)
	case exec.JoinMark:
		markRaw = j.Mark
		if j.MarkCond == nil {
			markRaw = b.hidden("exists", types.BoolType)
		}
		out = append(slices.Clone(probe.cols), markRaw)
	default:
		out = append(slices.Clone(probe.cols), bcols...)
	}
	where := "UM"
	if pm {
		where = "PM"
	}
	text := fmt.Sprintf("Join %s %s", j.Kind, where)
	if matchJoin {
		text += " building the left side"
	}
	if j.Kind == plan.MarkJoin && j.MarkCond != nil {
		text += " cond=(" + b.exprText(j.MarkCond) + ")"
	}
	if len(j.On) > 0 {
		text += " on=[" + b.exprsText(j.On) + "]"
	}
	if pm {
		f := probe.frag
		f.Exec.Builds = append(f.Exec.Builds, exec.BuildSide{Types: bc.types})
		f.Builds = append(f.Builds, bc)
		step := exec.Step{Join: &exec.JoinStep{Build: len(f.Builds) - 1, Spec: spec}}
		info := stepInfo{label: text + fmt.Sprintf(" probing broadcast %d", bc.ID), build: len(f.Builds) - 1}
		if err := b.addStep(probe, step, info, out); err != nil {
			return nil, err
		}
	} else {
		probeNode := probe.node
		buildNode := Node(&BroadcastScan{B: bc})
		if !matchJoin {
			buildNode = build.node
		}
		ts := spec.OutputTypes(probe.types, bc.types)
		if err := spec.Validate(probe.types, bc.types); err != nil {
			return nil, b.errorf("%s: %w", text, err)
		}
		probe.node = &HashJoin{Probe: probeNode, Build: buildNode, Spec: spec, desc: text, types: ts}
		probe.cols, probe.types = out, ts
	}
	if j.Kind == plan.MarkJoin && j.MarkCond == nil {
		// EXISTS: no matching row is FALSE, never NULL.
		exprs := make([]plan.Expr, 0, len(out))
		for _, id := range out[:len(out)-1] {
			exprs = append(exprs, b.ref(id))
		}
		exprs = append(exprs, &plan.Call{Fn: plan.FnCoalesce, Args: []plan.Expr{b.ref(markRaw), plan.Lit(types.BoolValue(false))}, T: types.BoolType})
		if err := b.project(probe, exprs, append(slices.Clone(out[:len(out)-1]), j.Mark)); err != nil {
			return nil, err
		}
	}
	if !matchJoin {
		return probe, nil
	}
	return b.finishMatchJoin(j, probe, bc, build.cols, needed(j.Right.Output(), need))
}

// finishMatchJoin completes a semi, anti or left join that built its left side: probe holds
// the matching pairs (probe columns, then the build's columns and row number).
func (b *builder) finishMatchJoin(j *plan.Join, pairs *rel, bc *Broadcast, buildCols, probeCols []plan.ColumnID) (*rel, error) {
	rowID := pairs.cols[len(pairs.cols)-1]
	var want []plan.ColumnID
	if j.Kind == plan.LeftJoin {
		want = append(append(slices.Clone(buildCols), probeCols...), rowID)
	} else {
		want = []plan.ColumnID{rowID}
	}
	if err := b.projectCols(pairs, want); err != nil {
		return nil, err
	}
	if pairs.frag != nil && j.Kind != plan.LeftJoin {
		// Each primproc reports each matching row number once.
		spec := exec.AggSpec{GroupBy: []int{0}}
		if err := b.addStep(pairs, exec.Step{Aggregate: &exec.AggStep{Spec: spec}},
			stepInfo{label: "Aggregate partial group=[row number] (distinct matches)", build: -1}, want); err != nil {
			return nil, err
		}
	}
	b.gatherAll(pairs)
	m := &MatchJoin{Input: pairs.node, Build: bc, Kind: j.Kind, IDCol: len(want) - 1}
	switch j.Kind {
	case plan.LeftJoin:
		m.types = pairs.types[:len(pairs.types)-1]
		m.desc = fmt.Sprintf("MatchJoin left: the pairs, then the rows of broadcast %d that matched none", bc.ID)
		return &rel{node: m, cols: want[:len(want)-1], types: m.types}, nil
	case plan.SemiJoin:
		m.desc = fmt.Sprintf("MatchJoin semi: the rows of broadcast %d that matched", bc.ID)
	default:
		m.desc = fmt.Sprintf("MatchJoin anti: the rows of broadcast %d that matched none", bc.ID)
	}
	m.types = bc.types[:len(bc.types)-1]
	return &rel{node: m, cols: buildCols, types: m.types}, nil
}

// markComparison splits a mark join's IN comparison into its left (probe) and right
// (build) operands.
func (b *builder) markComparison(j *plan.Join) (l, r plan.Expr, ok bool) {
	c, isCall := j.MarkCond.(*plan.Call)
	if !isCall || c.Fn != plan.FnEq {
		return nil, nil, false
	}
	lcols, rcols := plan.OutputSet(j.Left), plan.OutputSet(j.Right)
	a, z := c.Args[0], c.Args[1]
	switch {
	case plan.Refs(a).SubsetOf(lcols) && plan.Refs(z).SubsetOf(rcols):
		return a, z, true
	case plan.Refs(z).SubsetOf(lcols) && plan.Refs(a).SubsetOf(rcols):
		return z, a, true
	}
	return nil, nil, false
}

// commonKeyType casts two join key operands to one type where their value types differ.
func (b *builder) commonKeyType(l, r plan.Expr) (plan.Expr, plan.Expr) {
	lt, r1 := lower.Type(l.Type())
	rt, r2 := lower.Type(r.Type())
	if r1 != nil || r2 != nil || lt == rt {
		return l, r
	}
	a, z := l.Type(), r.Type()
	var t types.Type
	switch {
	case a.IsInteger() && z.IsInteger():
		t = types.Int64Type
	case a.IsNumeric() && z.IsNumeric() && a.Kind != types.Float64 && z.Kind != types.Float64:
		da, dz := decimalView(a), decimalView(z)
		s := max(da.Scale, dz.Scale)
		t = types.Dec(max(da.Precision-da.Scale, dz.Precision-dz.Scale)+s, s)
	case a.IsNumeric() && z.IsNumeric():
		t = types.Float64Type
	default:
		return l, r
	}
	cast := func(e plan.Expr) plan.Expr {
		if e.Type().Equal(t) {
			return e
		}
		return &plan.Cast{Arg: e, T: t}
	}
	return cast(l), cast(r)
}

// decimalView is a numeric type's precision and scale as a decimal.
func decimalView(t types.Type) types.Type {
	switch t.Kind {
	case types.Int32, types.Bool:
		return types.Dec(10, 0)
	case types.Int64:
		return types.Dec(19, 0)
	}
	return t
}

// paramJoin plans a join with a side that yields at most one row as a filter of the other
// side, with the one row's values as parameters: exemgr computes that row first.
func (b *builder) paramJoin(j *plan.Join, keys []plan.JoinKey, need plan.ColSet) (*rel, bool, error) {
	var one, other plan.Node
	switch {
	case j.Kind == plan.SingleJoin && len(keys) == 0:
		one, other = j.Right, j.Left
	case j.Kind == plan.MarkJoin:
		return nil, false, nil
	case exactlyOneRow(j.Right):
		one, other = j.Right, j.Left
	case j.Kind == plan.InnerJoin && exactlyOneRow(j.Left):
		one, other = j.Left, j.Right
	default:
		return nil, false, nil
	}
	if totals, err := b.groupTotals(one, other); err != nil {
		return nil, true, err
	} else if totals != nil {
		one = totals
	}
	or, err := b.build(one, plan.MakeColSet(one.Output()...))
	if err != nil {
		return nil, true, err
	}
	if or, err = b.toNode(or, one.Output()); err != nil {
		return nil, true, err
	}
	pg := &paramGroup{id: len(b.p.params) + 1, node: or.node, single: j.Kind == plan.SingleJoin}
	for i, id := range one.Output() {
		slot := expr.Const(vec.NullDatum(or.types[i]))
		pg.slots = append(pg.slots, slot)
		pg.names = append(pg.names, b.names.Column(id))
		b.params[id] = slot
	}
	b.p.params = append(b.p.params, pg)
	r, err := b.build(other, need)
	if err != nil {
		return nil, true, err
	}
	cond := plan.And(j.On...)
	switch j.Kind {
	case plan.InnerJoin, plan.SemiJoin:
		if err := b.filter(r, j.On); err != nil {
			return nil, true, err
		}
	case plan.AntiJoin:
		if err := b.filter(r, []plan.Expr{plan.Not(plan.NewBool(plan.FnIsTrue, cond))}); err != nil {
			return nil, true, err
		}
	}
	if j.Kind == plan.SemiJoin || j.Kind == plan.AntiJoin {
		return r, true, nil
	}
	// The one row's columns join the other side's, as constants; for a left (single) join
	// they are NULL where the condition does not hold.
	oneCols := needed(one.Output(), need)
	if len(oneCols) == 0 {
		return r, true, nil
	}
	exprs := make([]plan.Expr, 0, len(r.cols)+len(oneCols))
	for _, id := range r.cols {
		exprs = append(exprs, b.ref(id))
	}
	for _, id := range oneCols {
		var e plan.Expr = b.ref(id)
		if (j.Kind == plan.LeftJoin || j.Kind == plan.SingleJoin) && len(j.On) > 0 {
			e = &plan.Case{Whens: []plan.When{{Cond: cond, Then: e}}, T: e.Type()}
		}
		exprs = append(exprs, e)
	}
	return r, true, b.project(r, exprs, append(slices.Clone(r.cols), oneCols...))
}

var zoneOps = map[plan.Func]expr.Op{
	plan.FnEq: expr.OpEq, plan.FnLt: expr.OpLt, plan.FnLe: expr.OpLe, plan.FnGt: expr.OpGt, plan.FnGe: expr.OpGe,
}

// zonePredicates derives, from a scan filter, predicates on the scan's columns (cols) that
// can skip row groups by their min/max: column op constant, a monotone cast of a column
// compared with a constant, and the range of an IN list of constants.
func zonePredicates(e plan.Expr, cols []plan.ColumnID) []exec.ZonePredicate {
	var out []exec.ZonePredicate
	for _, c := range plan.Conjuncts(e) {
		call, ok := c.(*plan.Call)
		if !ok {
			continue
		}
		if call.Fn == plan.FnIn {
			col := zoneColumn(call.Args[0], cols)
			if col < 0 {
				continue
			}
			var lo, hi vec.Datum
			usable := len(call.Args) > 1
			for i, a := range call.Args[1:] {
				d, ok := zoneConstant(a)
				if !ok {
					usable = false
					break
				}
				if i == 0 {
					lo, hi = d, d
					continue
				}
				c1, err1 := vec.CompareDatums(d, lo)
				c2, err2 := vec.CompareDatums(d, hi)
				if err1 != nil || err2 != nil {
					usable = false
					break
				}
				if c1 < 0 {
					lo = d
				}
				if c2 > 0 {
					hi = d
				}
			}
			if usable {
				out = append(out, exec.ZonePredicate{Col: col, Op: expr.OpGe, Value: lo},
					exec.ZonePredicate{Col: col, Op: expr.OpLe, Value: hi})
			}
			continue
		}
		op, ok := zoneOps[call.Fn]
		if !ok || len(call.Args) != 2 {
			continue
		}
		a, z := call.Args[0], call.Args[1]
		if zoneColumn(a, cols) < 0 {
			a, z = z, a
			op = commuteOp(op)
		}
		col := zoneColumn(a, cols)
		d, ok := zoneConstant(z)
		if col < 0 || !ok {
			continue
		}
		out = append(out, exec.ZonePredicate{Col: col, Op: op, Value: d})
	}
	return out
}

func commuteOp(op expr.Op) expr.Op {
	switch op {
	case expr.OpLt:
		return expr.OpGt
	case expr.OpLe:
		return expr.OpGe
	case expr.OpGt:
		return expr.OpLt
	case expr.OpGe:
		return expr.OpLe
	}
	return op
}

// zoneColumn returns the scan position of a column, possibly under an order-preserving
// cast (integer or decimal to a wider integer or decimal), or -1.
func zoneColumn(e plan.Expr, cols []plan.ColumnID) int {
	if c, ok := e.(*plan.Cast); ok {
		from, to := c.Arg.Type(), c.T
		num := func(t types.Type) bool { return t.IsInteger() || t.Kind == types.Decimal }
		f, g := decimalView(from), decimalView(to)
		if !num(from) || !num(to) || g.Scale < f.Scale || g.Precision-g.Scale < f.Precision-f.Scale {
			return -1 // not a widening cast: it may not preserve order
		}
		e = c.Arg
	}
	ref, ok := e.(*plan.ColumnRef)
	if !ok {
		return -1
	}
	return slices.Index(cols, ref.ID)
}

func zoneConstant(e plan.Expr) (vec.Datum, bool) {
	lit, ok := e.(*plan.Literal)
	if !ok || lit.V.Null {
		return vec.Datum{}, false
	}
	d, err := lower.Datum(lit.V)
	if err != nil {
		return vec.Datum{}, false
	}
	return d, true
}

// maxSharedGroupBytes bounds the estimated size of the groups groupTotals keeps in exemgr.
// Past it the second scan costs less than holding every group within the query's memory.
const maxSharedGroupBytes = 64 << 20

// groupTotals recognizes a parameter that totals the groups of the other side: one is an
// aggregate without GROUP BY (under a projection) of the same rows that a grouped aggregate
// at the top of other groups, and each of its aggregates is SUM, MIN or MAX of an argument
// that the grouped aggregate also aggregates so (Q11: HAVING sum(v) > (SELECT sum(v) *
// 0.0001 FROM the same tables and conditions)). The total of the group sums is then the
// sum, the least of the group minimums the minimum: the grouped aggregate runs once, its
// groups kept in exemgr as a broadcast that both the parameter and other read. It returns
// the parameter's plan over the grouped aggregate, or nil where one is not such a total.
func (b *builder) groupTotals(one, other plan.Node) (plan.Node, error) {
	proj, _ := one.(*plan.Project)
	total, _ := one.(*plan.Aggregate)
	if proj != nil {
		total, _ = proj.Input.(*plan.Aggregate)
	}
	if total == nil || len(total.Groups) > 0 || len(total.Aggs) == 0 {
		return nil, nil
	}
	groups := topAggregate(other)
	if groups == nil || len(groups.Groups) == 0 {
		return nil, nil
	}
	_, kept := b.shared[groups] // a second subquery totals the groups another keeps
	if est := groups.Est(); !kept && (!est.Valid || est.Rows*float64(rowWidth(b.md, groups.Output())) > maxSharedGroupBytes) {
		return nil, nil
	}
	m, ok := plan.SameRows(groups.Input, total.Input, b.md)
	if !ok {
		return nil, nil
	}
	byKey := map[string]plan.ColumnID{}
	for i, a := range groups.Aggs {
		byKey[plan.Key(a)] = groups.AggCols[i]
	}
	sums := &plan.Aggregate{Input: groups, AggCols: total.AggCols}
	for _, a := range total.Aggs {
		if a.Distinct || (a.Fn != plan.AggSum && a.Fn != plan.AggMin && a.Fn != plan.AggMax) {
			return nil, nil
		}
		renamed := &plan.AggCall{Fn: a.Fn, Arg: plan.Rename(a.Arg, m), T: a.T}
		col, ok := byKey[plan.Key(renamed)]
		if !ok || !b.md.Column(col).Type.Equal(a.T) {
			return nil, nil
		}
		sums.Aggs = append(sums.Aggs, &plan.AggCall{Fn: a.Fn, Arg: b.ref(col), T: a.T})
	}
	*sums.Est() = plan.Estimate{Rows: 1, Valid: true}
	if !kept {
		r, err := b.build(groups, plan.MakeColSet(groups.Output()...))
		if err != nil {
			return nil, err
		}
		if r, err = b.toNode(r, groups.Output()); err != nil {
			return nil, err
		}
		bc := &Broadcast{ID: len(b.p.broadcasts) + 1, Input: r.node, types: r.types}
		b.p.broadcasts = append(b.p.broadcasts, bc)
		b.shared[groups] = &sharedRows{b: bc, cols: r.cols, types: r.types}
	}
	if proj == nil {
		return sums, nil
	}
	return &plan.Project{Input: sums, Exprs: proj.Exprs, Cols: proj.Cols}, nil
}

// topAggregate is the aggregate whose rows a plan's filters, projections and joins with
// one row (other parameters) pass on.
func topAggregate(n plan.Node) *plan.Aggregate {
	for {
		switch x := n.(type) {
		case *plan.Aggregate:
			return x
		case *plan.Filter:
			n = x.Input
		case *plan.Project:
			n = x.Input
		case *plan.Join:
			switch {
			case x.Kind == plan.InnerJoin && exactlyOneRow(x.Right):
				n = x.Left
			case x.Kind == plan.InnerJoin && exactlyOneRow(x.Left):
				n = x.Right
			default:
				return nil
			}
		default:
			return nil
		}
	}
}

// rowWidth estimates the bytes of a row of the columns ids.
func rowWidth(md *plan.Metadata, ids []plan.ColumnID) int {
	w := 0
	for _, id := range ids {
		w += md.Column(id).Type.Width()
	}
	return w
}
