package physical

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/lower"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// Options tune physical planning.
type Options struct {
	// Catalog describes the stored tables; it is needed only for a scan that reads no
	// column (SELECT COUNT(*) FROM t), which then reads the table's narrowest column.
	Catalog catalog.Catalog
	// Primprocs is the number of primprocs the plan will run on (0: unknown). With exactly
	// one, every group of an aggregate over a fragment's rows is complete on it: the
	// aggregate finishes there (its workers' partial states merged), and what follows it
	// (HAVING, projections, further aggregates) stays in the fragment, so only the final
	// rows cross the link instead of every partial group.
	Primprocs int
	// Pushdown is how much of the query the primprocs run (the zero value: all they can).
	Pushdown Pushdown
}

// Pushdown is the cut between the primprocs' fragments and exemgr's operators: the dial
// that moves work, and with it traffic, onto the link.
type Pushdown uint8

const (
	// PushdownFull puts next to the data every step that can run there: filters,
	// projections, probes of broadcast joins, partial aggregates, top-N and limits.
	PushdownFull Pushdown = iota
	// PushdownFilter keeps scans, filters and projections on the primprocs; joins,
	// aggregation, DISTINCT, sort, top-N and limits run in exemgr (ColumnStore's shape
	// before PM joins and PM aggregation).
	PushdownFilter
	// PushdownScan has the primprocs only scan, with zone-map elimination, and ship the
	// columns the query reads; every filter and computation runs in exemgr.
	PushdownScan
)

// pushdownNames are the levels' names, in order.
var pushdownNames = [...]string{"full", "filter", "scan"}

// String is the level's name: full, filter or scan.
func (p Pushdown) String() string {
	if int(p) < len(pushdownNames) {
		return pushdownNames[p]
	}
	return fmt.Sprintf("pushdown(%d)", p)
}

// cut says, for EXPLAIN, what the level keeps off the primprocs.
func (p Pushdown) cut() string {
	switch p {
	case PushdownFilter:
		return "joins, aggregation, DISTINCT, sort, top-N and limits run in exemgr"
	case PushdownScan:
		return "primprocs only scan (with zone maps); every filter and computation runs in exemgr"
	}
	return "primprocs run every step they can"
}

// Set reads a level's name (Pushdown is a flag value: pflag.Value).
func (p *Pushdown) Set(s string) error {
	v, err := ParsePushdown(s)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// Type names the flag value's kind in help text.
func (*Pushdown) Type() string { return "full|filter|scan" }

// ParsePushdown reads a level's name.
func ParsePushdown(s string) (Pushdown, error) {
	for i, n := range pushdownNames {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return Pushdown(i), nil
		}
	}
	return 0, fmt.Errorf("pushdown %q: want full, filter or scan", s)
}

// stepKind is what a fragment step does, for the pushdown level's say.
type stepKind uint8

const (
	stepFilter   stepKind = iota
	stepCompute           // a projection that computes (not only picks columns)
	stepOperator          // a join probe, aggregate, DISTINCT, top-N or limit
)

// allows reports whether the level lets a step of kind k run on the primprocs.
func (p Pushdown) allows(k stepKind) bool {
	switch p {
	case PushdownFilter:
		return k != stepOperator
	case PushdownScan:
		return false
	}
	return true
}

// cutFor moves r to exemgr if the pushdown level keeps a step of kind k off the primprocs.
func (b *builder) cutFor(r *rel, k stepKind) {
	if r.frag != nil && !b.opts.Pushdown.allows(k) {
		b.gatherAll(r)
	}
}

// Build cuts an optimised query into its physical plan. It adds the columns it computes
// (join keys, row numbers) to q.MD.
func Build(q *plan.Query, opts Options) (*Plan, error) {
	b := &builder{md: q.MD, opts: opts, params: map[plan.ColumnID]*expr.Expr{}, shared: map[plan.Node]*sharedRows{}, p: &Plan{Pushdown: opts.Pushdown},
		names: plan.NewNamer(q.Root, q.MD)}
	want := q.Root.Output()
	r, err := b.build(q.Root, plan.MakeColSet(want...))
	if err != nil {
		return nil, err
	}
	if r, err = b.toNode(r, want); err != nil {
		return nil, err
	}
	if len(q.Names) != len(want) {
		return nil, fmt.Errorf("physical: %d result names for %d columns", len(q.Names), len(want))
	}
	fields := make([]arrow.Field, len(want))
	for i, id := range want {
		t := r.types[i]
		fields[i] = arrow.Field{Name: q.Names[i], Type: t.Arrow(), Nullable: true,
			Metadata: arrow.NewMetadata([]string{vec.SQLTypeKey}, []string{q.MD.Column(id).Type.String()})}
	}
	b.p.Root = r.node
	b.p.Schema = arrow.NewSchema(fields, nil)
	return b.p, nil
}

type builder struct {
	md     *plan.Metadata
	opts   Options
	p      *Plan
	names  *plan.Namer
	params map[plan.ColumnID]*expr.Expr
	// shared holds logical nodes whose rows are kept in exemgr as a broadcast for more than
	// one reader (groupTotals): building one again reads the broadcast.
	shared map[plan.Node]*sharedRows
}

// sharedRows is a logical node's rows kept in exemgr as broadcast b, with its columns.
type sharedRows struct {
	b     *Broadcast
	cols  []plan.ColumnID
	types []vec.Type
}

// rel is a relation under construction: rows still on the primprocs (frag, with the
// fragment's steps so far) or rows in exemgr (node). cols and types are its columns.
type rel struct {
	frag  *Fragment
	node  Node
	cols  []plan.ColumnID
	types []vec.Type
}

func (r *rel) pos(id plan.ColumnID) int { return slices.Index(r.cols, id) }

func (b *builder) errorf(format string, args ...any) error {
	return fmt.Errorf("physical: "+format, args...)
}

// hidden registers a column the physical plan computes.
func (b *builder) hidden(name string, t types.Type) plan.ColumnID {
	return b.md.Add(plan.ColumnMeta{Name: name, Type: t})
}

func (b *builder) ref(id plan.ColumnID) *plan.ColumnRef { return b.md.Ref(id) }

func (b *builder) exprText(e plan.Expr) string { return b.names.Expr(e) }

func (b *builder) exprsText(es []plan.Expr) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = b.exprText(e)
	}
	return strings.Join(s, ", ")
}

func (b *builder) colsText(ids []plan.ColumnID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = b.names.Column(id)
	}
	return strings.Join(s, ", ")
}

func (b *builder) lower(e plan.Expr, cols []plan.ColumnID) (*expr.Expr, error) {
	x, err := lower.ExprText(e, cols, b.params, b.names.MySQLText)
	if err != nil {
		if fn := missingKernel(e); fn != "" {
			// A function the binder accepts but exec cannot evaluate yet.
			return nil, sqlerr.Wrap(err, sqlerr.ErNotSupportedYet, "This version of colink doesn't yet support '%s' (in %s)", fn, b.exprText(e))
		}
		return nil, b.errorf("%s: %w", b.exprText(e), err)
	}
	return x, nil
}

// build plans n. need holds the columns of n's output that its consumer reads: a node may
// leave the others out (they are never shipped), and passes down what it needs itself.
func (b *builder) build(n plan.Node, need plan.ColSet) (*rel, error) {
	if s, ok := b.shared[n]; ok {
		return &rel{node: &BroadcastScan{B: s.b}, cols: slices.Clone(s.cols), types: slices.Clone(s.types)}, nil
	}
	switch x := n.(type) {
	case *plan.Scan:
		return b.scan(x, need)
	case *plan.Values:
		return b.values(x)
	case *plan.Filter:
		r, err := b.build(x.Input, need.Union(plan.RefsAll(x.Conds)))
		if err != nil {
			return nil, err
		}
		return r, b.filter(r, x.Conds)
	case *plan.Project:
		var exprs []plan.Expr
		var cols []plan.ColumnID
		for i, id := range x.Cols {
			if need.Has(id) {
				exprs, cols = append(exprs, x.Exprs[i]), append(cols, id)
			}
		}
		if len(cols) == 0 && len(x.Cols) > 0 {
			// Keep a column: a relation has at least one.
			exprs, cols = x.Exprs[:1], x.Cols[:1]
		}
		r, err := b.build(x.Input, plan.RefsAll(exprs))
		if err != nil {
			return nil, err
		}
		return r, b.project(r, exprs, cols)
	case *plan.Join:
		return b.join(x, need)
	case *plan.Aggregate:
		return b.aggregate(x)
	case *plan.Distinct:
		return b.distinct(x)
	case *plan.Sort:
		return b.sort(x, need)
	case *plan.Limit:
		return b.limit(x, need)
	}
	return nil, sqlerr.Unsupported(fmt.Sprintf("the plan node %T", n))
}

// needed lists the columns of ids that need holds, in order.
func needed(ids []plan.ColumnID, need plan.ColSet) []plan.ColumnID {
	var out []plan.ColumnID
	for _, id := range ids {
		if need.Has(id) {
			out = append(out, id)
		}
	}
	return out
}

// addStep appends a step to a fragment relation; cols names its output columns.
func (b *builder) addStep(r *rel, s exec.Step, info stepInfo, cols []plan.ColumnID) error {
	f := r.frag
	// Typed step by step; the fragment as a whole is validated where it runs.
	t, err := s.OutputTypes(r.types, f.Exec.Builds)
	if err != nil {
		return b.errorf("fragment %d step %d: %w", f.ID, len(f.Exec.Steps), err)
	}
	f.Exec.Steps = append(f.Exec.Steps, s)
	f.steps = append(f.steps, info)
	if len(t) != len(cols) {
		return b.errorf("fragment %d: step %q yields %d columns, expected %d", f.ID, info.label, len(t), len(cols))
	}
	r.cols, r.types = cols, t
	return nil
}

func (b *builder) scan(s *plan.Scan, need plan.ColSet) (*rel, error) {
	ids := plan.MakeColSet(needed(s.Cols, need)...).Union(plan.RefsAll(s.Filters)).Ordered()
	if len(ids) == 0 {
		id, err := b.narrowestColumn(s)
		if err != nil {
			return nil, err
		}
		ids = []plan.ColumnID{id}
	}
	f := &Fragment{ID: len(b.p.fragments) + 1}
	b.p.fragments = append(b.p.fragments, f)
	sc := &f.Exec.Scan
	sc.Table = s.Table
	r := &rel{frag: f, cols: ids}
	for _, id := range ids {
		c := b.md.Column(id)
		if isRowID(s, id) {
			sc.Columns = append(sc.Columns, RowIDColumn)
			sc.Types = append(sc.Types, vec.Int64Type)
			continue
		}
		if c.BaseColumn == "" {
			return nil, b.errorf("scan of %s: column %s is not a stored column", s.Table, c.Name)
		}
		t, err := lower.Type(c.Type)
		if err != nil {
			return nil, b.errorf("scan of %s: %w", s.Table, err)
		}
		sc.Columns = append(sc.Columns, c.BaseColumn)
		sc.Types = append(sc.Types, t)
	}
	r.types = sc.Types
	var zoneText []string
	for _, e := range s.Filters {
		for _, z := range zonePredicates(e, ids) {
			ct := sc.Types[z.Col]
			if !(ct.IsNumeric() && z.Value.Type.IsNumeric()) && ct.ID != z.Value.Type.ID {
				continue
			}
			sc.Zone = append(sc.Zone, z)
			zoneText = append(zoneText, fmt.Sprintf("%s %s %s", b.names.Column(ids[z.Col]), z.Op, literalText(z.Value)))
		}
	}
	name := s.Table
	if s.Alias != "" && !strings.EqualFold(s.Alias, s.Table) {
		name += " AS " + s.Alias
	}
	f.scanLabel = "Scan " + name + " cols=[" + b.colsText(ids) + "]"
	if len(zoneText) > 0 {
		f.scanLabel += " zone=[" + strings.Join(zoneText, ", ") + "]"
	}
	if len(s.Filters) > 0 {
		if err := b.filter(r, s.Filters); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// narrowestColumn picks the column a scan reads when the query needs none of its values.
func (b *builder) narrowestColumn(s *plan.Scan) (plan.ColumnID, error) {
	if b.opts.Catalog == nil {
		return 0, b.errorf("scan of %s reads no column and no catalog is at hand to pick one", s.Table)
	}
	t, ok := b.opts.Catalog.Table(s.DB, s.Table)
	if !ok || len(t.Columns) == 0 {
		return 0, sqlerr.NoSuchTable(s.DB, s.Table)
	}
	best := 0
	for i, c := range t.Columns {
		if c.Type.Width() < t.Columns[best].Type.Width() {
			best = i
		}
	}
	c := t.Columns[best]
	return b.md.Add(plan.ColumnMeta{Name: c.Name, Table: s.Alias, Type: c.Type, Nullable: c.Nullable,
		DB: s.DB, BaseTable: s.Table, BaseColumn: c.Name}), nil
}

func (b *builder) values(v *plan.Values) (*rel, error) {
	n := &Values{desc: fmt.Sprintf("rows=%d", len(v.Rows))}
	for i, row := range v.Rows {
		var exprs []*expr.Expr
		var ts []vec.Type
		for _, e := range row {
			x, err := b.lower(e, nil)
			if err != nil {
				return nil, err
			}
			t, err := expr.TypeOf(x, nil)
			if err != nil {
				return nil, b.errorf("values: %w", err)
			}
			exprs = append(exprs, x)
			ts = append(ts, t)
		}
		if i == 0 {
			n.types = ts
		} else if !slices.Equal(ts, n.types) {
			return nil, sqlerr.Unsupported("VALUES rows of different types")
		}
		n.Rows = append(n.Rows, exprs)
	}
	if len(v.Rows) == 0 {
		// No rows to take the types from (SHOW TABLES of an empty database): the columns'.
		for _, id := range v.Cols {
			t, err := lower.Type(b.md.Column(id).Type)
			if err != nil {
				return nil, b.errorf("values: %w", err)
			}
			n.types = append(n.types, t)
		}
	}
	return &rel{node: n, cols: v.Cols, types: n.types}, nil
}

func (b *builder) filter(r *rel, conds []plan.Expr) error {
	if len(conds) == 0 {
		return nil
	}
	b.cutFor(r, stepFilter)
	if r.frag != nil && anyVolatile(conds) {
		// SLEEP and its kind run in exemgr, once per row in order (plan.Func.Volatile).
		// All the conditions stay together, so that those before it still narrow the
		// rows it is evaluated on, as MySQL's left-to-right AND does.
		b.gatherAll(r)
	}
	pred, err := b.lower(plan.And(conds...), r.cols)
	if err != nil {
		return err
	}
	label := "Filter [" + b.exprsText(conds) + "]"
	if r.frag != nil {
		return b.addStep(r, exec.Step{Filter: pred}, stepInfo{label: label, build: -1}, r.cols)
	}
	if _, err := expr.TypeOf(pred, r.types); err != nil {
		return b.errorf("%s: %w", label, err)
	}
	r.node = &Filter{Input: r.node, Pred: pred, desc: "[" + b.exprsText(conds) + "]"}
	return nil
}

// onlyColumns reports whether es only picks columns (a projection the scan level allows).
func onlyColumns(es []plan.Expr) bool {
	for _, e := range es {
		if _, ok := e.(*plan.ColumnRef); !ok {
			return false
		}
	}
	return true
}

// anyVolatile reports whether one of es calls a volatile function (SLEEP).
func anyVolatile(es []plan.Expr) bool {
	return slices.ContainsFunc(es, plan.HasVolatile)
}

// project replaces r's columns by exprs (named ids).
func (b *builder) project(r *rel, exprs []plan.Expr, ids []plan.ColumnID) error {
	if !onlyColumns(exprs) {
		b.cutFor(r, stepCompute)
	}
	if r.frag != nil && anyVolatile(exprs) {
		b.gatherAll(r) // computed in exemgr, as filter says
	}
	lowered := make([]*expr.Expr, len(exprs))
	items := make([]string, len(exprs))
	var added []string // items past an unchanged prefix of the input's columns
	keeps := true
	for i, e := range exprs {
		x, err := b.lower(e, r.cols)
		if err != nil {
			return err
		}
		lowered[i] = x
		items[i] = b.names.Column(ids[i])
		ref, isRef := e.(*plan.ColumnRef)
		if !isRef || ref.ID != ids[i] {
			items[i] += " := " + b.exprText(e)
		}
		if i < len(r.cols) {
			keeps = keeps && isRef && ref.ID == r.cols[i] && ids[i] == r.cols[i]
		} else {
			added = append(added, items[i])
		}
	}
	desc := strings.Join(items, ", ")
	if keeps && len(exprs) > len(r.cols) {
		desc = "all, " + strings.Join(added, ", ")
	}
	if r.frag != nil {
		return b.addStep(r, exec.Step{Project: lowered}, stepInfo{label: "Project " + desc, build: -1}, ids)
	}
	ts := make([]vec.Type, len(lowered))
	for i, x := range lowered {
		t, err := expr.TypeOf(x, r.types)
		if err != nil {
			return b.errorf("project %s: %w", items[i], err)
		}
		ts[i] = t
	}
	r.node = &Project{Input: r.node, Exprs: lowered, desc: desc, types: ts}
	r.cols, r.types = ids, ts
	return nil
}

// projectCols narrows or reorders r to the columns want (all present).
func (b *builder) projectCols(r *rel, want []plan.ColumnID) error {
	if slices.Equal(r.cols, want) {
		return nil
	}
	exprs := make([]plan.Expr, len(want))
	for i, id := range want {
		if r.pos(id) < 0 {
			if _, ok := b.params[id]; !ok {
				return b.errorf("column %s is not among the input's [%s]", b.names.Column(id), b.colsText(r.cols))
			}
		}
		exprs[i] = b.ref(id)
	}
	return b.project(r, exprs, want)
}

// ensure makes every expression a column of r, computing those that are not, and returns
// their positions.
func (b *builder) ensure(r *rel, es []plan.Expr) ([]int, error) {
	pos := make([]int, len(es))
	var extra []plan.Expr
	var extraIDs []plan.ColumnID
	for i, e := range es {
		if ref, ok := e.(*plan.ColumnRef); ok {
			if p := r.pos(ref.ID); p >= 0 {
				pos[i] = p
				continue
			}
		}
		// The same expression computed once.
		k := plan.Key(e)
		found := -1
		for j, x := range extra {
			if plan.Key(x) == k {
				found = j
			}
		}
		if found < 0 {
			extra = append(extra, e)
			extraIDs = append(extraIDs, b.hidden(b.exprText(e), e.Type()))
			found = len(extra) - 1
		}
		pos[i] = len(r.cols) + found
	}
	if len(extra) == 0 {
		return pos, nil
	}
	exprs := make([]plan.Expr, 0, len(r.cols)+len(extra))
	for _, id := range r.cols {
		exprs = append(exprs, b.ref(id))
	}
	exprs = append(exprs, extra...)
	ids := append(slices.Clone(r.cols), extraIDs...)
	return pos, b.project(r, exprs, ids)
}

// toNode makes r's rows available in exemgr, with exactly the columns want: a fragment
// relation gets a final projection (if needed) and a Gather.
func (b *builder) toNode(r *rel, want []plan.ColumnID) (*rel, error) {
	if err := b.projectCols(r, want); err != nil {
		return nil, err
	}
	if r.frag != nil {
		r.node = &Gather{Frag: r.frag, types: r.types}
		r.frag = nil
	}
	return r, nil
}

// gatherAll makes a fragment relation's rows available in exemgr with all their columns.
func (b *builder) gatherAll(r *rel) *rel {
	if r.frag != nil {
		r.node = &Gather{Frag: r.frag, types: r.types}
		r.frag = nil
	}
	return r
}

var aggFuncs = map[plan.AggFunc]exec.AggFunc{
	plan.AggSum: exec.AggSum, plan.AggAvg: exec.AggAvg, plan.AggMin: exec.AggMin,
	plan.AggMax: exec.AggMax, plan.AggCount: exec.AggCount, plan.AggCountStar: exec.AggCountStar,
	plan.AggGroupConcat: exec.AggGroupConcat,
}

func (b *builder) aggregate(a *plan.Aggregate) (*rel, error) {
	es := slices.Clone(a.Groups)
	for _, c := range a.Aggs {
		if c.Arg != nil {
			es = append(es, c.Arg)
		}
	}
	r, err := b.build(a.Input, plan.RefsAll(es))
	if err != nil {
		return nil, err
	}
	es = slices.Clone(a.Groups)
	for _, c := range a.Aggs {
		if c.Arg != nil {
			es = append(es, c.Arg)
		}
	}
	pos, err := b.ensure(r, es)
	if err != nil {
		return nil, err
	}
	spec := exec.AggSpec{GroupBy: pos[:len(a.Groups)]}
	next := len(a.Groups)
	// GROUP_CONCAT has no partial state: it aggregates in exemgr, in one phase, after the
	// primprocs have at most dropped duplicate values for it.
	distinct, exemgrOnly := false, false
	var aggText []string
	for i, c := range a.Aggs {
		f, ok := aggFuncs[c.Fn]
		if !ok {
			return nil, sqlerr.Unsupported("aggregate " + c.Fn.String())
		}
		ag := exec.Aggregate{Func: f, Distinct: c.Distinct}
		if c.Fn == plan.AggGroupConcat {
			ag.Sep, ag.MaxLen = c.Sep, c.MaxLen
			exemgrOnly = true
		}
		if c.Arg != nil {
			ag.Col = pos[next]
			next++
		}
		distinct = distinct || c.Distinct
		spec.Aggs = append(spec.Aggs, ag)
		aggText = append(aggText, b.names.Column(a.AggCols[i])+" := "+b.exprText(c))
	}
	var desc []string
	if len(a.Groups) > 0 {
		g := make([]string, len(a.Groups))
		for i, e := range a.Groups {
			g[i] = b.names.Column(a.GroupCols[i])
			if ref, ok := e.(*plan.ColumnRef); !ok || ref.ID != a.GroupCols[i] {
				g[i] += " := " + b.exprText(e)
			}
		}
		desc = append(desc, "group=["+strings.Join(g, ", ")+"]")
	}
	if len(aggText) > 0 {
		desc = append(desc, "aggs=["+strings.Join(aggText, ", ")+"]")
	}
	label := strings.Join(desc, " ")
	out := a.Output()
	b.cutFor(r, stepOperator)
	raw := r.types
	result, err := spec.ResultTypes(raw)
	if err != nil {
		return nil, b.errorf("aggregate %s: %w", label, err)
	}
	if r.frag != nil && b.opts.Primprocs == 1 && !exemgrOnly {
		// The one primproc holds every group's rows: it aggregates completely.
		if err := b.addStep(r, exec.Step{Aggregate: &exec.AggStep{Spec: spec, Final: true}},
			stepInfo{label: "Aggregate final " + label, build: -1}, out); err != nil {
			return nil, err
		}
		return r, nil
	}
	if r.frag != nil && !distinct && !exemgrOnly {
		// Partial aggregation on every primproc, final in exemgr.
		partial, err := spec.PartialTypes(raw)
		if err != nil {
			return nil, b.errorf("aggregate %s: %w", label, err)
		}
		cols := slices.Clone(a.GroupCols)
		for len(cols) < len(partial) {
			cols = append(cols, b.hidden("partial state", types.Int64Type))
		}
		if err := b.addStep(r, exec.Step{Aggregate: &exec.AggStep{Spec: spec}},
			stepInfo{label: "Aggregate partial " + label, build: -1}, cols); err != nil {
			return nil, err
		}
		b.gatherAll(r)
		n := &Aggregate{Input: r.node, Spec: spec, Phase: exec.AggFinal, desc: label, types: result}
		return &rel{node: n, cols: out, types: result}, nil
	}
	if r.frag != nil && dedupable(spec) {
		// DISTINCT aggregates of one column: the primprocs send each (group, value) once.
		keys := append(slices.Clone(spec.GroupBy), spec.Aggs[0].Col)
		var cols []plan.ColumnID
		for _, p := range keys {
			cols = append(cols, r.cols[p])
		}
		dedupe := exec.AggSpec{GroupBy: keys}
		if err := b.addStep(r, exec.Step{Aggregate: &exec.AggStep{Spec: dedupe}},
			stepInfo{label: "Aggregate partial group=[" + b.colsText(cols) + "] (distinct values)", build: -1}, cols); err != nil {
			return nil, err
		}
		b.gatherAll(r)
		final := exec.AggSpec{}
		for i := range spec.GroupBy {
			final.GroupBy = append(final.GroupBy, i)
		}
		for _, ag := range spec.Aggs {
			ag.Col = len(spec.GroupBy)
			final.Aggs = append(final.Aggs, ag)
		}
		n := &Aggregate{Input: r.node, Spec: final, Phase: exec.AggComplete, desc: label, types: result}
		return &rel{node: n, cols: out, types: result}, nil
	}
	b.gatherAll(r)
	n := &Aggregate{Input: r.node, Spec: spec, Phase: exec.AggComplete, desc: label, types: result}
	return &rel{node: n, cols: out, types: result}, nil
}

// dedupable reports whether every aggregate reads one column and ignores duplicates of it
// (DISTINCT aggregates, MIN, MAX), so that duplicates may be dropped before aggregating.
func dedupable(spec exec.AggSpec) bool {
	if len(spec.Aggs) == 0 {
		return false
	}
	col := spec.Aggs[0].Col
	for _, ag := range spec.Aggs {
		ok := ag.Distinct || ag.Func == exec.AggMin || ag.Func == exec.AggMax
		if !ok || ag.Func == exec.AggCountStar || ag.Col != col {
			return false
		}
	}
	return true
}

func (b *builder) distinct(d *plan.Distinct) (*rel, error) {
	r, err := b.build(d.Input, plan.MakeColSet(d.Output()...))
	if err != nil {
		return nil, err
	}
	want := d.Output()
	if err := b.projectCols(r, want); err != nil {
		return nil, err
	}
	b.cutFor(r, stepOperator)
	if r.frag != nil {
		spec := exec.AggSpec{}
		for i := range want {
			spec.GroupBy = append(spec.GroupBy, i)
		}
		if b.opts.Primprocs == 1 {
			return r, b.addStep(r, exec.Step{Aggregate: &exec.AggStep{Spec: spec, Final: true}},
				stepInfo{label: "Distinct", build: -1}, want)
		}
		if err := b.addStep(r, exec.Step{Aggregate: &exec.AggStep{Spec: spec}},
			stepInfo{label: "Distinct partial", build: -1}, want); err != nil {
			return nil, err
		}
		b.gatherAll(r)
	}
	r.node = &Distinct{Input: r.node}
	return r, nil
}

// sortKeys makes the keys' expressions columns of r and returns exec's keys.
func (b *builder) sortKeys(r *rel, keys []plan.SortKey) ([]exec.SortKey, error) {
	es := make([]plan.Expr, len(keys))
	for i, k := range keys {
		es[i] = k.Expr
	}
	pos, err := b.ensure(r, es)
	if err != nil {
		return nil, err
	}
	out := make([]exec.SortKey, len(keys))
	for i, k := range keys {
		out[i] = exec.SortKey{Col: pos[i], Desc: k.Desc}
	}
	return out, nil
}

func (b *builder) sort(s *plan.Sort, need plan.ColSet) (*rel, error) {
	r, err := b.build(s.Input, need.Union(sortRefs(s.Keys)))
	if err != nil {
		return nil, err
	}
	b.gatherAll(r)
	keys, err := b.sortKeys(r, s.Keys)
	if err != nil {
		return nil, err
	}
	r.node = &Sort{Input: r.node, Keys: keys, desc: b.sortText(s.Keys)}
	return r, nil
}

func (b *builder) sortText(keys []plan.SortKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = b.exprText(k.Expr)
		if k.Desc {
			parts[i] += " DESC"
		}
	}
	return strings.Join(parts, ", ")
}

func sortRefs(keys []plan.SortKey) plan.ColSet {
	var s plan.ColSet
	for _, k := range keys {
		s.UnionWith(plan.Refs(k.Expr))
	}
	return s
}

func (b *builder) limit(l *plan.Limit, need plan.ColSet) (*rel, error) {
	if l.Count > math.MaxInt64-l.Offset {
		// Rows past 2^63-1 do not exist: no limit, and Count+Offset below cannot overflow.
		lim := *l
		lim.Count = -1
		l = &lim
	}
	if s, ok := l.Input.(*plan.Sort); ok && l.Count >= 0 {
		r, err := b.build(s.Input, need.Union(sortRefs(s.Keys)))
		if err != nil {
			return nil, err
		}
		keys, err := b.sortKeys(r, s.Keys)
		if err != nil {
			return nil, err
		}
		text := b.sortText(s.Keys)
		b.cutFor(r, stepOperator)
		if r.frag != nil {
			// Each primproc keeps its first Count+Offset rows; exemgr takes the final ones.
			step := &exec.TopNStep{Keys: keys, Limit: l.Count + l.Offset}
			if err := b.addStep(r, exec.Step{TopN: step},
				stepInfo{label: fmt.Sprintf("TopN %d by %s (partial)", step.Limit, text), build: -1}, r.cols); err != nil {
				return nil, err
			}
			b.gatherAll(r)
		}
		r.node = &TopN{Input: r.node, Keys: keys, Limit: l.Count, Offset: l.Offset, desc: text}
		return r, nil
	}
	r, err := b.build(l.Input, need)
	if err != nil {
		return nil, err
	}
	b.cutFor(r, stepOperator)
	if r.frag != nil && l.Count >= 0 {
		step := &exec.LimitStep{Limit: l.Count + l.Offset}
		if err := b.addStep(r, exec.Step{Limit: step},
			stepInfo{label: fmt.Sprintf("Limit %d (partial)", step.Limit), build: -1}, r.cols); err != nil {
			return nil, err
		}
	}
	b.gatherAll(r)
	r.node = &Limit{Input: r.node, Limit: l.Count, Offset: l.Offset}
	return r, nil
}

// literalText prints a constant as SQL spells it.
func literalText(d vec.Datum) string {
	switch {
	case d.Null:
		return "NULL"
	case d.Type.ID == vec.String:
		return "'" + strings.ReplaceAll(d.Str, "'", "''") + "'"
	case d.Type.ID == vec.Date32:
		return "date '" + d.String() + "'"
	case d.Type.ID == vec.Datetime:
		return "timestamp '" + d.String() + "'"
	}
	return d.String()
}

// missingKernel names a function in e that exec has no kernel for, or "".
func missingKernel(e plan.Expr) string {
	name := ""
	plan.WalkExpr(e, func(x plan.Expr) bool {
		if c, ok := x.(*plan.Call); ok && name == "" {
			if _, err := lower.Expr(&plan.Call{Fn: c.Fn, Args: literalArgs(c.Args), T: c.T}, nil); err != nil && strings.Contains(err.Error(), "no kernel") {
				name = strings.ToUpper(c.Fn.String())
			}
		}
		return name == ""
	})
	return name
}

// literalArgs stands NULL literals of the same types in for a call's arguments.
func literalArgs(args []plan.Expr) []plan.Expr {
	out := make([]plan.Expr, len(args))
	for i, a := range args {
		out[i] = plan.Lit(types.Value{Type: a.Type(), Null: true})
	}
	return out
}
