package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/colinkdb/colink/tpch"
)

// edge is a foreign key: table a's columns acol (and acol2) reference table b's unique key
// bcol (and bcol2). Joins follow these, so that a generated join is one a person would write.
type edge struct {
	a, acol, b, bcol string
	acol2, bcol2     string // the second column of a two-column key, or ""
}

// fkEdges are TPC-H's foreign keys.
var fkEdges = []edge{
	{a: "lineitem", acol: "l_orderkey", b: "orders", bcol: "o_orderkey"},
	{a: "lineitem", acol: "l_partkey", b: "part", bcol: "p_partkey"},
	{a: "lineitem", acol: "l_suppkey", b: "supplier", bcol: "s_suppkey"},
	{a: "lineitem", acol: "l_partkey", b: "partsupp", bcol: "ps_partkey", acol2: "l_suppkey", bcol2: "ps_suppkey"},
	{a: "orders", acol: "o_custkey", b: "customer", bcol: "c_custkey"},
	{a: "customer", acol: "c_nationkey", b: "nation", bcol: "n_nationkey"},
	{a: "supplier", acol: "s_nationkey", b: "nation", bcol: "n_nationkey"},
	{a: "nation", acol: "n_regionkey", b: "region", bcol: "r_regionkey"},
	{a: "partsupp", acol: "ps_partkey", b: "part", bcol: "p_partkey"},
	{a: "partsupp", acol: "ps_suppkey", b: "supplier", bcol: "s_suppkey"},
}

// schema is what the generator knows of the data: each table's columns with their kinds,
// and sample values per column so that predicates select some rows and not all.
type schema struct {
	tables  []string
	cols    map[string][]colRef // by table; qual is empty
	samples map[string][]string // "table.column" → literals in SQL form
}

// kindOf maps a TPC-H column type to its kind.
func kindOf(t tpch.Type) kind {
	switch t.Kind {
	case tpch.KindInt32, tpch.KindInt64:
		return kInt
	case tpch.KindDecimal:
		return kDecimal
	case tpch.KindDate:
		return kDate
	}
	return kString
}

// newSchema builds the schema from tpch's tables; samples maps "table.column" to raw
// values as the engines print them (turned into literals here).
func newSchema(samples map[string][]string) *schema {
	s := &schema{cols: map[string][]colRef{}, samples: map[string][]string{}}
	for _, t := range tpch.Tables() {
		s.tables = append(s.tables, t.Name)
		for _, c := range t.Columns {
			k := kindOf(c.Type)
			s.cols[t.Name] = append(s.cols[t.Name], colRef{name: c.Name, k: k})
			for _, v := range samples[t.Name+"."+c.Name] {
				s.samples[t.Name+"."+c.Name] = append(s.samples[t.Name+"."+c.Name], literal(k, v))
			}
		}
	}
	return s
}

// literal writes value v of kind k as an SQL literal both dialects read alike.
func literal(k kind, v string) string {
	switch k {
	case kDate:
		return "date '" + v + "'"
	case kString:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	return v
}

// gen generates one query from its own random stream.
type gen struct {
	r      *rand.Rand
	s      *schema
	nalias int
	// subDepth bounds nesting: subqueries and derived tables inside subqueries.
	subDepth int
}

// scope is the columns an expression may use: the query's own, then its outer query's
// (for correlation).
type scope struct {
	cols  []colRef
	from  []fromItem // the query's own from items (for correlated subqueries)
	outer *scope
}

// exprCtx says what an expression may contain.
type exprCtx struct {
	sc  *scope
	agg bool // aggregates allowed (and columns only inside them, or as group keys)
	// noSub rules out subqueries: a group key with one is a column MySQL's HAVING may not
	// name, which DuckDB allows.
	noSub bool
	// keys are the group-key expressions, usable bare in an aggregate context.
	keys []expr
}

// generate returns query number n of seed.
func generate(s *schema, seed uint64, n uint64) *query {
	g := &gen{r: rand.New(rand.NewPCG(seed, n)), s: s}
	q := g.query(nil, 0)
	// The partitioning predicate of the TLP oracle, over the query's own columns.
	sc := &scope{from: q.from}
	for _, f := range q.from {
		sc.cols = append(sc.cols, f.cols...)
	}
	q.tlp = g.pred(exprCtx{sc: sc}, 2)
	return q
}

func (g *gen) alias(prefix string) string {
	g.nalias++
	return prefix + strconv.Itoa(g.nalias)
}

func (g *gen) pct(p int) bool { return g.r.IntN(100) < p }

// tableItem returns table t as a from item with a fresh alias.
func (g *gen) tableItem(t string) fromItem {
	f := fromItem{table: t, alias: g.alias("t")}
	for _, c := range g.s.cols[t] {
		c.qual = f.alias
		f.cols = append(f.cols, c)
	}
	return f
}

func (f *fromItem) col(name string) *colRef {
	for i := range f.cols {
		if f.cols[i].name == name {
			c := f.cols[i]
			return &c
		}
	}
	return nil
}

// from picks 1–4 tables joined along foreign keys, or a derived table and the tables joined
// to it.
func (g *gen) from(outer *scope, level int) []fromItem {
	var items []fromItem
	if level < 1 && g.pct(15) {
		items = append(items, g.derived(outer, level))
	} else {
		items = append(items, g.tableItem(g.s.tables[g.r.IntN(len(g.s.tables))]))
	}
	want := []int{1, 1, 2, 2, 2, 3, 3, 4}[g.r.IntN(8)]
	if level > 0 {
		want = min(want, 2)
	}
	// A join from a referencing table to the referenced one keeps the row count; the other
	// way multiplies it by the fan-out. The result stays at the grain of one table (its
	// size) as long as a join the other way starts from the grain table itself: then the
	// child becomes the grain. From any other table it would join, say, partsupp to
	// lineitem through supplier: 48 M rows at SF 0.1.
	grain := items[0].alias
	for len(items) < want {
		type cand struct {
			from    int
			e       edge
			forward bool // items[from] is the referencing side
		}
		var cs []cand
		for i, it := range items {
			for _, e := range fkEdges {
				if it.table == e.a && !hasTable(items, e.b) {
					cs = append(cs, cand{i, e, true})
				}
				if it.table == e.b && !hasTable(items, e.a) && it.alias == grain {
					cs = append(cs, cand{i, e, false})
				}
				if it.derived != nil && e.acol2 == "" {
					// A derived table passes its first column, a key, through.
					if it.cols[0].name == "k_"+e.acol && !hasTable(items, e.b) {
						cs = append(cs, cand{i, edge{a: it.alias, acol: it.cols[0].name, b: e.b, bcol: e.bcol}, true})
					}
					if it.cols[0].name == "k_"+e.bcol && !hasTable(items, e.a) && it.alias == grain {
						cs = append(cs, cand{i, edge{a: e.a, acol: e.acol, b: it.alias, bcol: it.cols[0].name}, false})
					}
				}
			}
		}
		if len(cs) == 0 {
			break
		}
		c := cs[g.r.IntN(len(cs))]
		src := items[c.from]
		var next fromItem
		var on expr
		if c.forward {
			next = g.tableItem(c.e.b)
			on = eq(src.col(c.e.acol), next.col(c.e.bcol))
			if c.e.acol2 != "" {
				on = and(on, eq(src.col(c.e.acol2), next.col(c.e.bcol2)))
			}
		} else {
			next = g.tableItem(c.e.a)
			grain = next.alias
			on = eq(src.col(c.e.bcol), next.col(c.e.acol))
			if c.e.acol2 != "" {
				on = and(on, eq(src.col(c.e.bcol2), next.col(c.e.acol2)))
			}
		}
		next.join = "join"
		if g.pct(30) {
			next.join = "left join"
			if g.pct(50) {
				// A condition on the joined side in ON: the unmatched rows get NULLs.
				on = and(on, g.pred(exprCtx{sc: &scope{cols: next.cols}}, 1))
			}
		}
		next.on = on
		items = append(items, next)
	}
	return items
}

func hasTable(items []fromItem, t string) bool {
	for _, it := range items {
		if it.table == t {
			return true
		}
	}
	return false
}

// derived returns a derived table: a query over one or two tables whose first column is a
// key (named k_<column>) that later joins may follow, grouped by it or not.
func (g *gen) derived(outer *scope, level int) fromItem {
	t := g.s.tables[g.r.IntN(len(g.s.tables))]
	base := g.tableItem(t)
	var keys []colRef
	for _, e := range fkEdges {
		if e.a == t && e.acol2 == "" {
			keys = append(keys, *base.col(e.acol))
		}
	}
	if len(keys) == 0 {
		keys = append(keys, base.cols[0])
	}
	key := keys[g.r.IntN(len(keys))]
	q := &query{from: []fromItem{base}}
	sc := &scope{cols: base.cols, from: q.from}
	q.items = append(q.items, selectItem{e: &key, alias: "k_" + key.name})
	if g.pct(50) {
		q.grouped = true
		q.groupBy = []int{1}
		ctx := exprCtx{sc: sc, agg: true, keys: []expr{&key}}
		for i := 0; i < 1+g.r.IntN(3); i++ {
			q.items = append(q.items, selectItem{e: g.aggregate(ctx, g.anyKind(), 1), alias: "c" + strconv.Itoa(i)})
		}
	} else {
		ctx := exprCtx{sc: sc}
		for i := 0; i < 1+g.r.IntN(3); i++ {
			q.items = append(q.items, selectItem{e: g.expr(ctx, g.anyKind(), 2), alias: "c" + strconv.Itoa(i)})
		}
	}
	if g.pct(60) {
		q.where = g.pred(exprCtx{sc: sc}, 2)
	}
	f := fromItem{derived: q, alias: g.alias("d")}
	for _, it := range q.items {
		f.cols = append(f.cols, colRef{qual: f.alias, name: it.alias, k: it.e.kind()})
	}
	return f
}

// query generates a SELECT at nesting level (0: the top).
func (g *gen) query(outer *scope, level int) *query {
	q := &query{}
	q.from = g.from(outer, level)
	sc := &scope{from: q.from, outer: outer}
	for _, f := range q.from {
		sc.cols = append(sc.cols, f.cols...)
	}
	plain := exprCtx{sc: sc}
	if g.pct(75) {
		q.where = g.pred(plain, 3)
	}
	switch {
	case g.pct(55):
		// Aggregation: group keys first, then aggregates.
		q.grouped = true
		nkeys := []int{0, 1, 1, 1, 2, 2, 3}[g.r.IntN(7)]
		var keys []expr
		keyCtx := exprCtx{sc: sc, noSub: true}
		for i := 0; i < nkeys; i++ {
			k := g.expr(keyCtx, g.anyKind(), 2)
			keys = append(keys, k)
			q.items = append(q.items, selectItem{e: k})
			q.groupBy = append(q.groupBy, i+1)
		}
		ctx := exprCtx{sc: sc, agg: true, keys: keys}
		for i := 0; i < 1+g.r.IntN(3); i++ {
			q.items = append(q.items, selectItem{e: g.aggregate(ctx, g.anyKind(), 2)})
		}
		if nkeys > 0 && g.pct(25) {
			// HAVING names the group keys by their aliases, as MySQL allows: an expression
			// over a key's columns is not one MySQL's HAVING may name.
			hctx := ctx
			hctx.keys = nil
			for i, k := range keys {
				hctx.keys = append(hctx.keys, &colRef{name: "a" + strconv.Itoa(i+1), k: k.kind()})
			}
			q.having = g.pred(hctx, 2)
		}
	default:
		for i := 0; i < 1+g.r.IntN(4); i++ {
			q.items = append(q.items, selectItem{e: g.expr(plain, g.anyKind(), 3)})
		}
		q.distinct = g.pct(25)
	}
	for i := range q.items {
		q.items[i].alias = "a" + strconv.Itoa(i+1)
	}
	g.orderAndLimit(q)
	return q
}

// orderAndLimit orders by every output column (a total order: tied rows are identical) most
// of the time, by some of them otherwise, and sometimes adds a LIMIT; a LIMIT without a
// total order has no defined answer and is counted as such, not compared.
func (g *gen) orderAndLimit(q *query) {
	if g.pct(20) {
		return
	}
	ords := make([]int, len(q.items))
	for i := range ords {
		ords[i] = i + 1
	}
	g.r.Shuffle(len(ords), func(i, j int) { ords[i], ords[j] = ords[j], ords[i] })
	if g.pct(15) {
		ords = ords[:1+g.r.IntN(len(ords))]
	}
	for _, o := range ords {
		q.orderBy = append(q.orderBy, orderItem{ordinal: o, desc: g.pct(30)})
	}
	if g.pct(50) {
		q.limit = []int{1, 3, 10, 50, 200}[g.r.IntN(5)]
	}
}

// anyKind picks an output kind.
func (g *gen) anyKind() kind {
	return []kind{kInt, kInt, kDecimal, kDecimal, kDouble, kDate, kString, kString}[g.r.IntN(8)]
}

// column returns a column of kind k from the scope (the query's own mostly, an outer one
// now and then), or nil.
func (g *gen) column(sc *scope, k kind) *colRef {
	var cands []colRef
	for _, c := range sc.cols {
		if c.k == k {
			cands = append(cands, c)
		}
	}
	if sc.outer != nil && (len(cands) == 0 || g.pct(10)) {
		for _, c := range sc.outer.cols {
			if c.k == k {
				cands = append(cands, c)
			}
		}
	}
	if len(cands) == 0 {
		return nil
	}
	c := cands[g.r.IntN(len(cands))]
	return &c
}

// sample returns a literal of kind k, from the data when the expression it is compared with
// is a known column.
func (g *gen) sample(k kind, near expr) expr {
	if c, ok := near.(*colRef); ok {
		if t := g.tableOf(c); t != "" {
			if vs := g.s.samples[t+"."+c.name]; len(vs) > 0 && g.pct(85) {
				return &lit{text: vs[g.r.IntN(len(vs))], k: k}
			}
		}
	}
	return g.literal(k)
}

// tableOf returns the base table a column belongs to (TPC-H's column names are unique), or
// "" for a derived table's column.
func (g *gen) tableOf(c *colRef) string {
	for _, t := range g.s.tables {
		for _, tc := range g.s.cols[t] {
			if tc.name == c.name {
				return t
			}
		}
	}
	return ""
}

// literal returns a random literal of kind k.
func (g *gen) literal(k kind) expr {
	switch k {
	case kInt:
		return &lit{text: strconv.Itoa([]int{0, 1, 2, 3, 5, 7, 10, 25, 100, 1000, -1, -3}[g.r.IntN(12)]), k: k}
	case kDecimal:
		return &lit{text: []string{"0.05", "1.50", "0.00", "100.25", "-2.75", "1000.00", "0.10"}[g.r.IntN(7)], k: k}
	case kDouble:
		return &lit{text: []string{"1e0", "2.5e0", "0e0", "-1.25e0", "1e3"}[g.r.IntN(5)], k: k}
	case kDate:
		y := 1992 + g.r.IntN(7)
		return &lit{text: fmt.Sprintf("date '%04d-%02d-%02d'", y, 1+g.r.IntN(12), 1+g.r.IntN(28)), k: k}
	case kString:
		return &lit{text: "'" + []string{"", "A", "F", "N", "O", "R", "1-URGENT", "BUILDING", "AIR", "GERMANY", "MED BOX", "Customer#000000001", "zz"}[g.r.IntN(13)] + "'", k: k}
	}
	return &lit{text: []string{"true", "false"}[g.r.IntN(2)], k: kBool}
}

// expr returns an expression of kind k (not bool) over the context's columns.
func (g *gen) expr(ctx exprCtx, k kind, depth int) expr {
	if ctx.agg {
		if len(ctx.keys) > 0 && g.pct(30) {
			for _, i := range g.r.Perm(len(ctx.keys)) {
				if ctx.keys[i].kind() == k {
					return ctx.keys[i]
				}
			}
		}
		if depth <= 0 || g.pct(60) {
			return g.aggregate(ctx, k, depth)
		}
	}
	if depth <= 0 || g.pct(30) {
		if c := g.column(ctx.sc, k); c != nil && (!ctx.agg) && g.pct(80) {
			return c
		}
		if ctx.agg {
			return g.aggregate(ctx, k, depth)
		}
		return g.literal(k)
	}
	d := depth - 1
	switch g.r.IntN(10) {
	case 0:
		return g.caseExpr(ctx, k, d)
	case 1:
		return &op{name: "coalesce", mysql: "coalesce(%s, %s)", args: []expr{g.expr(ctx, k, d), g.expr(ctx, k, d)}, k: k}
	case 2:
		if k != kDouble {
			a := g.expr(ctx, k, d)
			return &op{name: "nullif", mysql: "nullif(%s, %s)", args: []expr{a, g.sample(k, a)}, k: k}
		}
	case 3:
		if !ctx.agg && !ctx.noSub && g.subDepth < 1 && g.pct(40) {
			return g.scalarSubquery(ctx.sc, k)
		}
	}
	switch k {
	case kInt:
		switch g.r.IntN(9) {
		case 0, 1:
			return &op{name: "+", mysql: "(%s + %s)", args: []expr{g.expr(ctx, kInt, d), g.expr(ctx, kInt, d)}, k: k}
		case 2:
			return &op{name: "-", mysql: "(%s - %s)", args: []expr{g.expr(ctx, kInt, d), g.expr(ctx, kInt, d)}, k: k}
		case 3:
			return &op{name: "*", mysql: "(%s * %s)", args: []expr{g.expr(ctx, kInt, d), g.literal(kInt)}, k: k}
		case 4:
			return &op{name: "%", mysql: "(%s %% %s)", args: []expr{g.expr(ctx, kInt, d),
				&lit{text: strconv.Itoa(2 + g.r.IntN(9)), k: kInt}}, k: k}
		case 5:
			part := []string{"year", "month", "day"}[g.r.IntN(3)]
			return &op{name: "extract", mysql: "extract(" + part + " from %s)", args: []expr{g.expr(ctx, kDate, d)}, k: k}
		case 6:
			return &op{name: "length", mysql: "length(%s)", args: []expr{g.expr(ctx, kString, d)}, k: k}
		case 7:
			return &op{name: "abs", mysql: "abs(%s)", args: []expr{g.expr(ctx, kInt, d)}, k: k}
		default:
			return &op{name: "neg", mysql: "(- %s)", args: []expr{g.expr(ctx, kInt, d)}, k: k}
		}
	case kDecimal:
		switch g.r.IntN(7) {
		case 0:
			return &op{name: "+", mysql: "(%s + %s)", args: []expr{g.expr(ctx, kDecimal, d), g.expr(ctx, g.numKind(), d)}, k: k}
		case 1:
			return &op{name: "-", mysql: "(%s - %s)", args: []expr{g.expr(ctx, kDecimal, d), g.expr(ctx, kDecimal, d)}, k: k}
		case 2:
			// One factor a literal or an integer keeps the precision within DECIMAL(38).
			return &op{name: "*", mysql: "(%s * %s)", args: []expr{g.expr(ctx, kDecimal, d), g.pick(g.literal(kDecimal), g.expr(ctx, kInt, 0))}, k: k}
		case 3:
			return &op{name: "round", mysql: "round(%s, " + strconv.Itoa(g.r.IntN(3)) + ")", args: []expr{g.expr(ctx, kDecimal, d)}, k: k}
		case 4:
			return &op{name: "abs", mysql: "abs(%s)", args: []expr{g.expr(ctx, kDecimal, d)}, k: k}
		default:
			return &op{name: "neg", mysql: "(- %s)", args: []expr{g.expr(ctx, kDecimal, d)}, k: k}
		}
	case kDouble:
		switch g.r.IntN(3) {
		case 0:
			return &op{name: "+", mysql: "(%s + %s)", args: []expr{g.expr(ctx, kDouble, d), g.expr(ctx, kDouble, d)}, k: k}
		default:
			return &op{name: "todouble", mysql: "(%s * 1e0)", args: []expr{g.expr(ctx, g.exactKind(), d)}, k: k}
		}
	case kDate:
		n := []int{1, 7, 30, 90, 365}[g.r.IntN(5)]
		unit := []string{"day", "day", "month", "year"}[g.r.IntN(4)]
		sign := []string{"+", "-"}[g.r.IntN(2)]
		// DuckDB's DATE ± INTERVAL is a TIMESTAMP: cast back.
		iv := fmt.Sprintf("%s interval %d %s", sign, n, unit)
		return &op{name: "date+interval", mysql: "(%s " + iv + ")", duck: "cast(%s " + iv + " as date)",
			args: []expr{g.expr(ctx, kDate, d)}, k: k}
	case kString:
		switch g.r.IntN(5) {
		case 0:
			return &op{name: "substring", mysql: fmt.Sprintf("substring(%%s, %d, %d)", 1+g.r.IntN(5), 1+g.r.IntN(8)),
				args: []expr{g.expr(ctx, kString, d)}, k: k}
		case 1:
			return &op{name: "upper", mysql: "upper(%s)", args: []expr{g.expr(ctx, kString, d)}, k: k}
		case 2:
			return &op{name: "lower", mysql: "lower(%s)", args: []expr{g.expr(ctx, kString, d)}, k: k}
		default:
			// MySQL's CONCAT is NULL with a NULL argument, as DuckDB's || is (its concat()
			// skips NULLs).
			return &op{name: "concat", mysql: "concat(%s, %s)", duck: "(%s || %s)",
				args: []expr{g.expr(ctx, kString, d), g.expr(ctx, kString, d)}, k: k}
		}
	}
	return g.literal(k)
}

func (g *gen) pick(a, b expr) expr {
	if g.pct(50) {
		return a
	}
	return b
}

func (g *gen) numKind() kind   { return []kind{kInt, kDecimal}[g.r.IntN(2)] }
func (g *gen) exactKind() kind { return []kind{kInt, kDecimal}[g.r.IntN(2)] }

// caseExpr returns CASE with 1–2 WHENs, with no ELSE half of the time (NULL otherwise).
func (g *gen) caseExpr(ctx exprCtx, k kind, d int) expr {
	c := &caseExpr{k: k}
	for i := 0; i < 1+g.r.IntN(2); i++ {
		c.whens = append(c.whens, g.pred(ctx, d), g.expr(ctx, k, d))
	}
	if g.pct(50) {
		c.els = g.expr(ctx, k, d)
	}
	return c
}

// aggregate returns an aggregate of kind k (its argument without aggregates), or an
// expression over aggregates.
func (g *gen) aggregate(ctx exprCtx, k kind, depth int) expr {
	arg := exprCtx{sc: ctx.sc}
	if depth > 1 && g.pct(20) {
		// Arithmetic over aggregates.
		switch k {
		case kInt, kDecimal:
			return &op{name: "+", mysql: "(%s + %s)", args: []expr{g.aggregate(ctx, k, 0), g.literal(k)}, k: k}
		}
	}
	switch k {
	case kInt:
		switch g.r.IntN(6) {
		case 0, 1:
			return &op{name: "count(*)", mysql: "count(*)", k: k, aggregate: true}
		case 2:
			return &op{name: "count", mysql: "count(%s)", args: []expr{g.expr(arg, g.anyKind(), 2)}, k: k, aggregate: true}
		case 3:
			return &op{name: "count(distinct)", mysql: "count(distinct %s)", args: []expr{g.expr(arg, g.anyKind(), 2)}, k: k, aggregate: true}
		case 4:
			return &op{name: "sum", mysql: "sum(%s)", args: []expr{g.expr(arg, kInt, 2)}, k: k, aggregate: true}
		default:
			f := []string{"min", "max"}[g.r.IntN(2)]
			return &op{name: f, mysql: f + "(%s)", args: []expr{g.expr(arg, kInt, 2)}, k: k, aggregate: true}
		}
	case kDecimal:
		f := []string{"sum", "min", "max"}[g.r.IntN(3)]
		return &op{name: f, mysql: f + "(%s)", args: []expr{g.expr(arg, kDecimal, 2)}, k: k, aggregate: true}
	case kDouble:
		// AVG is a DECIMAL in MySQL and a DOUBLE in DuckDB: compared as numbers with a
		// tolerance for the decimal's rounding.
		if g.pct(70) {
			return &op{name: "avg", mysql: "avg(%s)", args: []expr{g.expr(arg, g.exactKind(), 2)}, k: k, aggregate: true}
		}
		f := []string{"sum", "min", "max"}[g.r.IntN(3)]
		return &op{name: f, mysql: f + "(%s)", args: []expr{g.expr(arg, kDouble, 2)}, k: k, aggregate: true}
	default:
		f := []string{"min", "max"}[g.r.IntN(2)]
		return &op{name: f, mysql: f + "(%s)", args: []expr{g.expr(arg, k, 2)}, k: k, aggregate: true}
	}
}

// pred returns a predicate over the context.
func (g *gen) pred(ctx exprCtx, depth int) expr {
	if depth > 0 {
		switch g.r.IntN(12) {
		case 0, 1:
			return and(g.pred(ctx, depth-1), g.pred(ctx, depth-1))
		case 2:
			return &op{name: "or", mysql: "(%s or %s)", args: []expr{g.pred(ctx, depth-1), g.pred(ctx, depth-1)}, k: kBool}
		case 3:
			return &op{name: "not", mysql: "(not %s)", args: []expr{g.pred(ctx, depth-1)}, k: kBool}
		case 4:
			if !ctx.agg && !ctx.noSub && g.subDepth < 1 {
				return g.subqueryPred(ctx.sc)
			}
		}
	}
	k := []kind{kInt, kInt, kDecimal, kDate, kString, kString, kDouble}[g.r.IntN(7)]
	d := max(depth-1, 0)
	a := g.expr(ctx, k, d)
	switch g.r.IntN(10) {
	case 0:
		return &op{name: "is null", mysql: "(%s is null)", args: []expr{a}, k: kBool}
	case 1:
		return &op{name: "is not null", mysql: "(%s is not null)", args: []expr{a}, k: kBool}
	case 2:
		lo, hi := g.sample(k, a), g.sample(k, a)
		return &op{name: "between", mysql: "(%s between %s and %s)", args: []expr{a, lo, hi}, k: kBool}
	case 3:
		if k != kDouble {
			n := 1 + g.r.IntN(4)
			args := []expr{a}
			var ph []string
			for i := 0; i < n; i++ {
				if g.pct(8) {
					args = append(args, &lit{text: "null", k: k})
				} else {
					args = append(args, g.sample(k, a))
				}
				ph = append(ph, "%s")
			}
			not := ""
			if g.pct(25) {
				not = "not "
			}
			return &op{name: not + "in list", mysql: "(%s " + not + "in (" + strings.Join(ph, ", ") + "))", args: args, k: kBool}
		}
	case 4:
		if k == kString {
			return &op{name: "like", mysql: "(%s like %s)", args: []expr{a, g.likePattern(a)}, k: kBool}
		}
	}
	cmp := []string{"=", "<>", "<", "<=", ">", ">="}[g.r.IntN(6)]
	var b expr
	if g.pct(60) {
		b = g.sample(k, a)
	} else {
		b = g.expr(ctx, k, d)
	}
	return &op{name: cmp, mysql: "(%s " + cmp + " %s)", args: []expr{a, b}, k: kBool}
}

// likePattern makes a LIKE pattern from a sample value: a prefix, suffix or infix with %
// and _ wildcards.
func (g *gen) likePattern(near expr) expr {
	l, ok := g.sample(kString, near).(*lit)
	s := "abc"
	if ok && len(l.text) >= 2 {
		s = strings.ReplaceAll(l.text[1:len(l.text)-1], "''", "'")
	}
	s = strings.NewReplacer("%", "", "_", "", `\`, "").Replace(s)
	if len(s) > 0 {
		i := g.r.IntN(len(s))
		j := i + g.r.IntN(len(s)-i+1)
		s = s[i:j]
	}
	switch g.r.IntN(4) {
	case 0:
		s = s + "%"
	case 1:
		s = "%" + s
	case 2:
		s = "%" + s + "%"
	default:
		if len(s) > 1 {
			k := g.r.IntN(len(s))
			s = s[:k] + "_" + s[k+1:]
		}
		s += "%"
	}
	return &lit{text: "'" + strings.ReplaceAll(s, "'", "''") + "'", k: kString}
}

// subqueryPred returns EXISTS, NOT EXISTS, IN or NOT IN over a subquery, correlated along a
// foreign key with the outer query's tables most of the time.
func (g *gen) subqueryPred(sc *scope) expr {
	g.subDepth++
	defer func() { g.subDepth-- }()
	outerItem, inner, corr := g.correlated(sc)
	sub := &query{from: []fromItem{inner}}
	isc := &scope{cols: inner.cols, from: sub.from, outer: sc}
	if corr != nil {
		sub.where = corr
	}
	if g.pct(60) {
		sub.where = and(sub.where, g.pred(exprCtx{sc: isc}, 1))
	}
	_ = outerItem
	switch g.r.IntN(4) {
	case 0, 1:
		sub.items = []selectItem{{e: &lit{text: "1", k: kInt}}}
		form := "exists"
		if g.pct(35) {
			form = "not exists"
		}
		return &subquery{form: form, q: sub, k: kBool}
	default:
		// x [NOT] IN (SELECT y …): y a key column of the inner table, x one of the same
		// kind from the outer scope.
		k := []kind{kInt, kInt, kString, kDate, kDecimal}[g.r.IntN(5)]
		y := g.column(&scope{cols: inner.cols}, k)
		x := g.column(&scope{cols: sc.cols}, k)
		if y == nil || x == nil {
			sub.items = []selectItem{{e: &lit{text: "1", k: kInt}}}
			return &subquery{form: "exists", q: sub, k: kBool}
		}
		var ye expr = y
		if g.pct(20) {
			// A NULL among the IN list's values: NOT IN is then never true.
			ye = &caseExpr{whens: []expr{g.pred(exprCtx{sc: isc}, 0), y}, k: k}
		}
		sub.items = []selectItem{{e: ye}}
		form := "in"
		if g.pct(35) {
			form = "not in"
		}
		return &subquery{form: form, lhs: x, q: sub, k: kBool}
	}
}

// correlated picks a table to subquery and, most of the time, the foreign-key equality that
// correlates it with one of the outer query's tables.
func (g *gen) correlated(sc *scope) (*fromItem, fromItem, expr) {
	type cand struct {
		outer    *fromItem
		e        edge
		outerCol string
		innerCol string
		inner    string
	}
	var cs []cand
	for i := range sc.from {
		f := &sc.from[i]
		if f.table == "" {
			continue
		}
		for _, e := range fkEdges {
			if e.acol2 != "" {
				continue
			}
			if e.a == f.table {
				cs = append(cs, cand{f, e, e.acol, e.bcol, e.b})
			}
			if e.b == f.table {
				cs = append(cs, cand{f, e, e.bcol, e.acol, e.a})
			}
		}
	}
	if len(cs) == 0 || g.pct(20) {
		inner := g.tableItem(g.s.tables[g.r.IntN(len(g.s.tables))])
		return nil, inner, nil
	}
	c := cs[g.r.IntN(len(cs))]
	inner := g.tableItem(c.inner)
	return c.outer, inner, eq(c.outer.col(c.outerCol), inner.col(c.innerCol))
}

// scalarSubquery returns (SELECT agg(x) FROM t WHERE …) of kind k: an aggregate, so exactly
// one row, NULL when no row qualifies.
func (g *gen) scalarSubquery(sc *scope, k kind) expr {
	g.subDepth++
	defer func() { g.subDepth-- }()
	_, inner, corr := g.correlated(sc)
	sub := &query{from: []fromItem{inner}, grouped: true}
	isc := &scope{cols: inner.cols, from: sub.from, outer: sc}
	sub.where = corr
	if g.pct(50) {
		sub.where = and(sub.where, g.pred(exprCtx{sc: isc}, 1))
	}
	sub.items = []selectItem{{e: g.aggregate(exprCtx{sc: isc, agg: true}, k, 1)}}
	return &subquery{form: "scalar", q: sub, k: k}
}

func eq(a, b expr) expr {
	return &op{name: "=", mysql: "(%s = %s)", args: []expr{a, b}, k: kBool}
}

// and conjoins; a nil operand is left out.
func and(a, b expr) expr {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return &op{name: "and", mysql: "(%s and %s)", args: []expr{a, b}, k: kBool}
}

// shapes lists the features a query uses, for the run's shape mix.
func shapes(q *query) []string {
	set := map[string]bool{}
	var visitQuery func(q *query, top bool)
	visitQuery = func(q *query, top bool) {
		joins := len(q.from) - 1
		if top {
			set[fmt.Sprintf("tables=%d", len(q.from))] = true
		}
		if joins > 0 {
			set["join"] = true
		}
		for _, f := range q.from {
			if f.join == "left join" {
				set["left join"] = true
			}
			if f.derived != nil {
				set["derived table"] = true
				visitQuery(f.derived, false)
			}
		}
		if len(q.groupBy) > 0 {
			set["group by"] = true
		} else if q.grouped && top {
			set["aggregate without group by"] = true
		}
		if q.having != nil {
			set["having"] = true
		}
		if q.distinct {
			set["distinct"] = true
		}
		if top && len(q.orderBy) > 0 {
			set["order by"] = true
		}
		if top && q.limit > 0 {
			set["limit"] = true
		}
	}
	visitQuery(q, true)
	q.walk(func(e expr) {
		switch x := e.(type) {
		case *caseExpr:
			if x.els == nil {
				set["case without else"] = true
			} else {
				set["case"] = true
			}
		case *subquery:
			set["subquery "+x.form] = true
		case *op:
			switch x.name {
			case "coalesce", "nullif", "count(distinct)", "like", "in list", "not in list", "is null", "between", "date+interval", "concat", "avg", "todouble":
				set[x.name] = true
			}
		}
	})
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}
