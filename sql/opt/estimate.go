package opt

import (
	"math"

	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/types"
)

// Selectivities used when statistics say nothing better.
const (
	defaultEqSel    = 0.1
	defaultRangeSel = 1.0 / 3
	defaultLikeSel  = 0.1
	defaultSel      = 1.0 / 3
	defaultRows     = 1000
)

// estimator estimates output rows of plan nodes from table statistics and predicate
// selectivities. It caches per node, so it must not outlive changes to the nodes it saw.
type estimator struct {
	c    *Context
	memo map[plan.Node]float64
	ndvs map[ndvKey]float64
	// extreme maps the output column of a MIN or MAX to its Aggregate.
	extreme map[plan.ColumnID]*plan.Aggregate
	// inScan is set while a scan's filters are estimated: their columns are the stored ones,
	// so the stored NULL counts apply (above an outer join the same column has more NULLs).
	inScan bool
}

type ndvKey struct {
	n  plan.Node
	id plan.ColumnID
}

// newEstimator returns an estimator for the plan under root.
func newEstimator(c *Context, root plan.Node) *estimator {
	e := &estimator{c: c, memo: map[plan.Node]float64{}, ndvs: map[ndvKey]float64{},
		extreme: map[plan.ColumnID]*plan.Aggregate{}}
	plan.WalkPlan(root, func(n plan.Node) bool {
		if a, ok := n.(*plan.Aggregate); ok {
			for i, call := range a.Aggs {
				if call.Fn == plan.AggMin || call.Fn == plan.AggMax {
					e.extreme[a.AggCols[i]] = a
				}
			}
		}
		return true
	})
	return e
}

// extremeSel is the selectivity of "x = MIN(…)" or "x = MAX(…)" when one side is such a
// column: about one row per group matches.
func (e *estimator) extremeSel(a, b plan.ColumnID) (float64, bool) {
	agg, ok := e.extreme[a]
	if !ok {
		agg, ok = e.extreme[b]
	}
	if !ok {
		return 0, false
	}
	return math.Min(1, e.rows(agg)/math.Max(e.rows(agg.Input), 1)), true
}

// baseRows is the row count of the stored table a column reads, or 0.
func (e *estimator) baseRows(id plan.ColumnID) float64 {
	m := e.c.MD.Column(id)
	if m.BaseColumn == "" || e.c.Stats == nil {
		return 0
	}
	r, _ := e.c.Stats.TableRows(m.DB, m.BaseTable)
	return r
}

// shrink estimates the distinct values left of ndv when in rows become out rows, the rows
// removed at random: ndv·(1 − (1 − out/in)^(in/ndv)).
func shrink(ndv, in, out float64) float64 {
	if in <= 0 || out >= in {
		return math.Max(math.Min(ndv, math.Max(out, 1)), 1)
	}
	s := out / in
	k := in / math.Max(ndv, 1)
	d := ndv * (1 - math.Pow(1-s, k))
	return math.Max(math.Min(d, out), 1)
}

// colNDV estimates the distinct values of column id in n's output.
func (e *estimator) colNDV(n plan.Node, id plan.ColumnID) float64 {
	k := ndvKey{n, id}
	if d, ok := e.ndvs[k]; ok {
		return d
	}
	d := e.computeNDV(n, id)
	e.ndvs[k] = d
	return d
}

// definedNDV is the NDV of column id where cols[i] = id is defined by exprs[i] over input
// with rows rows: input's NDV of a plain column reference, else rows. ok is false where cols
// lacks id.
func (e *estimator) definedNDV(input plan.Node, cols []plan.ColumnID, exprs []plan.Expr, id plan.ColumnID, rows float64) (float64, bool) {
	for i, c := range cols {
		if c == id {
			if r, ok := exprs[i].(*plan.ColumnRef); ok {
				return math.Min(e.colNDV(input, r.ID), rows), true
			}
			return rows, true
		}
	}
	return 0, false
}

func (e *estimator) computeNDV(n plan.Node, id plan.ColumnID) float64 {
	rows := e.rows(n)
	switch x := n.(type) {
	case *plan.Scan:
		base := e.baseRows(id)
		d, ok := e.baseDistinct(id)
		if !ok || base == 0 {
			return rows
		}
		return shrink(d, base, rows)
	case *plan.Project:
		if d, ok := e.definedNDV(x.Input, x.Cols, x.Exprs, id, rows); ok {
			return d
		}
	case *plan.Join:
		if x.Kind == plan.MarkJoin && id == x.Mark {
			return math.Min(3, rows)
		}
		side := x.Left
		if !plan.OutputSet(x.Left).Has(id) {
			side = x.Right
		}
		return shrink(e.colNDV(side, id), e.rows(side), rows)
	case *plan.Aggregate:
		if d, ok := e.definedNDV(x.Input, x.GroupCols, x.Groups, id, rows); ok {
			return d
		}
		return rows
	case *plan.Values:
		return rows
	}
	if ins := n.Inputs(); len(ins) == 1 {
		return shrink(e.colNDV(ins[0], id), e.rows(ins[0]), rows)
	}
	return rows
}

// keyInfo describes one side of an equi-join column pair.
type keyInfo struct {
	ndv      float64 // distinct values in the join input
	baseNDV  float64 // distinct values in the stored table (0: unknown)
	baseRows float64 // rows of the stored table (0: unknown)
}

func (e *estimator) keyInfo(n plan.Node, id plan.ColumnID) keyInfo {
	k := keyInfo{ndv: e.colNDV(n, id), baseRows: e.baseRows(id)}
	if d, ok := e.baseDistinct(id); ok {
		k.baseNDV = d
	}
	return k
}

// keySel is the selectivity of an equi-join on column pairs (left[i] = right[i]). One
// pair: 1/max(ndv), the smaller set of values contained in the larger. Several: when the
// columns of each side together identify the rows of their stored table (a composite key,
// or a foreign key to one), the join matches keys in the smaller key domain; otherwise the
// pairs are taken as independent.
func keySel(left, right []keyInfo) float64 {
	if len(left) == 0 {
		return 1
	}
	if len(left) > 1 {
		domain := func(ks []keyInfo) (float64, bool) {
			prod, rows := 1.0, 0.0
			for _, k := range ks {
				if k.baseNDV == 0 || k.baseRows == 0 {
					return 0, false
				}
				prod *= k.baseNDV
				rows = math.Max(rows, k.baseRows)
			}
			return rows, prod >= rows
		}
		dl, lk := domain(left)
		dr, rk := domain(right)
		if lk && rk {
			return 1 / math.Max(math.Min(dl, dr), 1)
		}
	}
	sel := 1.0
	for i := range left {
		sel /= math.Max(math.Max(left[i].ndv, right[i].ndv), 1)
	}
	return sel
}

// rows estimates n's output rows and records it in n's Estimate.
func (e *estimator) rows(n plan.Node) float64 {
	if r, ok := e.memo[n]; ok {
		return r
	}
	r := math.Max(e.compute(n), 1)
	e.memo[n] = r
	*n.Est() = plan.Estimate{Rows: r, Valid: true}
	return r
}

func (e *estimator) compute(n plan.Node) float64 {
	switch x := n.(type) {
	case *plan.Scan:
		rows := float64(defaultRows)
		if e.c.Stats != nil {
			if r, ok := e.c.Stats.TableRows(x.DB, x.Table); ok {
				rows = r
			}
		}
		e.inScan = true
		sel := e.conjSel(x.Filters, rows)
		e.inScan = false
		return rows * sel
	case *plan.Values:
		return float64(len(x.Rows))
	case *plan.Filter:
		in := e.rows(x.Input)
		return in * e.conjSel(x.Conds, in)
	case *plan.Project, *plan.Sort, *plan.Insert, *plan.Delete:
		return e.rows(n.Inputs()[0])
	case *plan.Distinct:
		in := e.rows(x.Input)
		return math.Min(in, e.groups(x.Input.Output(), in))
	case *plan.Limit:
		in := math.Max(e.rows(x.Input)-float64(x.Offset), 0)
		if x.Count >= 0 {
			return math.Min(in, float64(x.Count))
		}
		return in
	case *plan.Aggregate:
		if len(x.Groups) == 0 {
			return 1
		}
		in := e.rows(x.Input)
		return math.Min(in, e.groups(x.GroupCols, in))
	case *plan.Join:
		l, r := e.rows(x.Left), e.rows(x.Right)
		switch x.Kind {
		case plan.InnerJoin:
			return l * r * e.joinSel(x.On, x.Left, x.Right)
		case plan.LeftJoin:
			return math.Max(l, l*r*e.joinSel(x.On, x.Left, x.Right))
		case plan.SemiJoin:
			return l * e.semiSel(x)
		case plan.AntiJoin:
			return l * math.Max(1-e.semiSel(x), 0.1)
		}
		return l
	}
	return defaultRows
}

// groups estimates the number of distinct combinations of cols among rows.
func (e *estimator) groups(cols []plan.ColumnID, rows float64) float64 {
	g := 1.0
	for _, id := range cols {
		d, ok := e.baseDistinct(id)
		if !ok {
			d = math.Max(rows/10, 1)
		}
		g *= math.Min(d, rows)
		if g >= rows {
			return rows
		}
	}
	return g
}

// baseDistinct is the number of distinct values of a stored column.
func (e *estimator) baseDistinct(id plan.ColumnID) (float64, bool) {
	m := e.c.MD.Column(id)
	if m.BaseColumn == "" || e.c.Stats == nil {
		return 0, false
	}
	s, ok := e.c.Stats.ColumnStats(m.DB, m.BaseTable, m.BaseColumn)
	if !ok || s.Distinct <= 0 {
		return 0, false
	}
	return s.Distinct, true
}

// nullFraction is the fraction of a stored column's rows that are NULL, when statistics
// know the table's rows.
func (e *estimator) nullFraction(id plan.ColumnID) (float64, bool) {
	m := e.c.MD.Column(id)
	if m.BaseColumn == "" || e.c.Stats == nil {
		return 0, false
	}
	rows, ok := e.c.Stats.TableRows(m.DB, m.BaseTable)
	s, ok2 := e.c.Stats.ColumnStats(m.DB, m.BaseTable, m.BaseColumn)
	if !ok || !ok2 || rows <= 0 {
		return 0, false
	}
	return math.Min(s.Nulls/rows, 1), true
}

// ndv is the number of distinct values of a column within a relation of the given rows;
// an unknown column is taken as unique.
func (e *estimator) ndv(id plan.ColumnID, rows float64) float64 {
	d, ok := e.baseDistinct(id)
	if !ok {
		d = rows
	}
	return math.Max(math.Min(d, rows), 1)
}

// column returns the column an operand reads, through casts.
func column(x plan.Expr) (plan.ColumnID, bool) {
	switch x := x.(type) {
	case *plan.ColumnRef:
		return x.ID, true
	case *plan.Cast:
		return column(x.Arg)
	}
	return 0, false
}

// numeric returns a literal as a number on the scale statistics use (dates as days).
func numericValue(x plan.Expr) (float64, bool) {
	l, ok := x.(*plan.Literal)
	if !ok || l.V.Null {
		return 0, false
	}
	switch l.V.Type.Kind {
	case types.Int32, types.Int64, types.Date, types.Datetime:
		return float64(l.V.Int), true
	case types.Decimal, types.Float64:
		f, err := types.Convert(l.V, types.Float64Type)
		if err != nil {
			return 0, false
		}
		return f.Float, true
	}
	return 0, false
}

// interval is a range of values a column is restricted to.
type interval struct {
	lo, hi float64
}

// conjSel is the selectivity of a list of conjuncts over a relation of the given rows;
// range conditions on one column combine into one interval.
func (e *estimator) conjSel(conds []plan.Expr, rows float64) float64 {
	sel := 1.0
	ranges := map[plan.ColumnID]*interval{}
	var order []plan.ColumnID
	for _, c := range conds {
		for _, c := range plan.Conjuncts(c) {
			if id, lo, hi, ok := e.rangeOf(c); ok {
				iv := ranges[id]
				if iv == nil {
					iv = &interval{lo: math.Inf(-1), hi: math.Inf(1)}
					ranges[id] = iv
					order = append(order, id)
				}
				iv.lo, iv.hi = math.Max(iv.lo, lo), math.Min(iv.hi, hi)
				continue
			}
			sel *= e.sel(c, rows)
		}
	}
	for _, id := range order {
		sel *= e.rangeSel(id, *ranges[id])
	}
	return sel
}

// rangeOf recognises "column op constant" for <, <=, >, >=.
func (e *estimator) rangeOf(c plan.Expr) (plan.ColumnID, float64, float64, bool) {
	call, ok := c.(*plan.Call)
	if !ok || len(call.Args) != 2 {
		return 0, 0, 0, false
	}
	fn := call.Fn
	id, isCol := column(call.Args[0])
	v, isNum := numericValue(call.Args[1])
	if !isCol || !isNum {
		id, isCol = column(call.Args[1])
		v, isNum = numericValue(call.Args[0])
		fn = fn.Commute()
	}
	if !isCol || !isNum {
		return 0, 0, 0, false
	}
	switch fn {
	case plan.FnLt, plan.FnLe:
		return id, math.Inf(-1), v, true
	case plan.FnGt, plan.FnGe:
		return id, v, math.Inf(1), true
	}
	return 0, 0, 0, false
}

func (e *estimator) rangeSel(id plan.ColumnID, iv interval) float64 {
	if iv.lo > iv.hi {
		return 0
	}
	m := e.c.MD.Column(id)
	if m.BaseColumn != "" && e.c.Stats != nil {
		if s, ok := e.c.Stats.ColumnStats(m.DB, m.BaseTable, m.BaseColumn); ok && s.HasRange && s.Max > s.Min {
			lo, hi := math.Max(iv.lo, s.Min), math.Min(iv.hi, s.Max)
			if hi < lo {
				return 0.001
			}
			return math.Max((hi-lo)/(s.Max-s.Min), 0.001)
		}
	}
	if math.IsInf(iv.lo, 0) || math.IsInf(iv.hi, 0) {
		return defaultRangeSel
	}
	return defaultRangeSel * defaultRangeSel
}

// sel is the selectivity of one condition over a relation of the given rows.
func (e *estimator) sel(c plan.Expr, rows float64) float64 {
	call, ok := c.(*plan.Call)
	if !ok {
		if plan.IsFalseOrNull(c) {
			return 0
		}
		return defaultSel
	}
	switch call.Fn {
	case plan.FnAnd:
		return e.conjSel(call.Args, rows)
	case plan.FnOr:
		s := 0.0
		for _, a := range call.Args {
			x := e.sel(a, rows)
			s = s + x - s*x
		}
		return s
	case plan.FnNot:
		return 1 - e.sel(call.Args[0], rows)
	case plan.FnEq, plan.FnNullSafeEq:
		l, lok := column(call.Args[0])
		r, rok := column(call.Args[1])
		switch {
		case lok && rok:
			return 1 / math.Max(e.ndv(l, rows), e.ndv(r, rows))
		case lok:
			return 1 / e.ndv(l, rows)
		case rok:
			return 1 / e.ndv(r, rows)
		}
		return defaultEqSel
	case plan.FnNe:
		return 1 - e.sel(plan.NewBool(plan.FnEq, call.Args...), rows)
	case plan.FnLt, plan.FnLe, plan.FnGt, plan.FnGe:
		if id, lo, hi, ok := e.rangeOf(call); ok {
			return e.rangeSel(id, interval{lo, hi})
		}
		return defaultRangeSel
	case plan.FnIn:
		if id, ok := column(call.Args[0]); ok {
			return math.Min(1, float64(len(call.Args)-1)/e.ndv(id, rows))
		}
		return math.Min(1, defaultEqSel*float64(len(call.Args)-1))
	case plan.FnLike:
		if l, ok := call.Args[1].(*plan.Literal); ok && !containsWildcard(l.V.Str) {
			if id, ok := column(call.Args[0]); ok {
				return 1 / e.ndv(id, rows)
			}
		}
		return defaultLikeSel
	case plan.FnIsNull:
		if id, ok := column(call.Args[0]); ok && e.inScan {
			if f, ok := e.nullFraction(id); ok {
				return f
			}
		}
		return 0.01
	}
	return defaultSel
}

func containsWildcard(p string) bool {
	for _, c := range p {
		if c == '%' || c == '_' {
			return true
		}
	}
	return false
}

// joinSel is the selectivity of join conditions between two inputs.
func (e *estimator) joinSel(on []plan.Expr, left, right plan.Node) float64 {
	lr, rr := e.rows(left), e.rows(right)
	lcols := plan.OutputSet(left)
	sel := 1.0
	var lk, rk []keyInfo
	for _, c := range on {
		if call, ok := c.(*plan.Call); ok && call.Fn == plan.FnEq {
			a, aok := column(call.Args[0])
			b, bok := column(call.Args[1])
			if aok && bok {
				if !lcols.Has(a) {
					a, b = b, a
				}
				if s, ok := e.extremeSel(a, b); ok {
					sel *= s
					continue
				}
				lk = append(lk, e.keyInfo(left, a))
				rk = append(rk, e.keyInfo(right, b))
				continue
			}
		}
		sel *= e.sel(c, math.Max(lr, rr))
	}
	return sel * keySel(lk, rk)
}

// semiSel is the fraction of a semi join's left rows that find a match: for an equality
// key, the right side's distinct keys over the left side's, at most 1.
func (e *estimator) semiSel(j *plan.Join) float64 {
	lcols := plan.OutputSet(j.Left)
	for _, c := range j.On {
		if call, ok := c.(*plan.Call); ok && call.Fn == plan.FnEq {
			a, aok := column(call.Args[0])
			b, bok := column(call.Args[1])
			if aok && bok {
				if !lcols.Has(a) {
					a, b = b, a
				}
				return math.Min(1, e.colNDV(j.Right, b)/e.colNDV(j.Left, a))
			}
		}
	}
	return 0.5
}
