package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/colinkdb/colink/sql/types"
)

// FormatOptions chooses what a printed plan shows.
type FormatOptions struct {
	// Rows appends each node's estimated output rows, once estimated.
	Rows bool
	// Types appends each node's output columns with their types.
	Types bool
}

// Format prints a query's plan, one node per line, inputs indented under their node.
func Format(q *Query, opts FormatOptions) string {
	return FormatNode(q.Root, q.MD, opts)
}

// FormatNode prints a plan (see Format).
func FormatNode(n Node, md *Metadata, opts FormatOptions) string {
	p := &printer{md: md, opts: opts, names: columnNames(n, md), subq: map[*Subquery]int{}}
	p.node(n, 0)
	return p.b.String()
}

// FormatExpr prints an expression with the plan's column names.
func FormatExpr(e Expr, md *Metadata) string {
	p := &printer{md: md, names: map[ColumnID]string{}, subq: map[*Subquery]int{}}
	WalkExpr(e, func(x Expr) bool {
		if r, ok := x.(*ColumnRef); ok {
			p.names[r.ID] = md.Column(r.ID).Name
		}
		return true
	})
	return p.expr(e, 0)
}

// Namer prints expressions of one plan with the column names EXPLAIN uses for that plan: a
// column's name where no other column of the plan has it, else qualifier.name, else name#id.
// Other packages that print parts of a plan (the physical planner) use it so that their
// output names columns as the logical plan does.
type Namer struct {
	md    *Metadata
	names map[ColumnID]string
}

// NewNamer returns the namer of the plan under root.
func NewNamer(root Node, md *Metadata) *Namer {
	return &Namer{md: md, names: columnNames(root, md)}
}

// Expr prints an expression.
func (n *Namer) Expr(e Expr) string {
	p := &printer{md: n.md, names: n.names, subq: map[*Subquery]int{}}
	return p.expr(e, 0)
}

// Column prints a column's name.
func (n *Namer) Column(id ColumnID) string {
	p := &printer{md: n.md, names: n.names}
	return p.col(id)
}

type printer struct {
	b     strings.Builder
	md    *Metadata
	opts  FormatOptions
	names map[ColumnID]string
	subq  map[*Subquery]int
}

// columnNames chooses how each column of the plan prints: its name when no other column of
// the plan has it, else qualifier.name when that is unique, else name#id.
func columnNames(root Node, md *Metadata) map[ColumnID]string {
	all := Defined(root).Union(Used(root))
	byName := map[string][]ColumnID{}
	for _, id := range all.Ordered() {
		c := md.Column(id)
		byName[strings.ToLower(c.Name)] = append(byName[strings.ToLower(c.Name)], id)
	}
	out := map[ColumnID]string{}
	for _, ids := range byName {
		if len(ids) == 1 {
			out[ids[0]] = md.Column(ids[0]).Name
			continue
		}
		qual := map[string]int{}
		for _, id := range ids {
			c := md.Column(id)
			qual[strings.ToLower(c.Table+"."+c.Name)]++
		}
		for _, id := range ids {
			c := md.Column(id)
			if c.Table != "" && qual[strings.ToLower(c.Table+"."+c.Name)] == 1 {
				out[id] = c.Table + "." + c.Name
			} else {
				out[id] = c.Name + "#" + strconv.Itoa(int(id))
			}
		}
	}
	return out
}

func (p *printer) col(id ColumnID) string {
	if s, ok := p.names[id]; ok {
		return s
	}
	return p.md.Column(id).Name + "#" + strconv.Itoa(int(id))
}

func (p *printer) cols(ids []ColumnID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = p.col(id)
	}
	return strings.Join(s, ", ")
}

func (p *printer) exprs(es []Expr) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = p.expr(e, 0)
	}
	return strings.Join(s, ", ")
}

// assign prints "name := expr", or just the name when expr is that column.
func (p *printer) assign(id ColumnID, e Expr) string {
	if r, ok := e.(*ColumnRef); ok && r.ID == id {
		return p.col(id)
	}
	return p.col(id) + " := " + p.expr(e, 0)
}

func (p *printer) node(n Node, depth int) {
	indent := strings.Repeat("  ", depth)
	p.b.WriteString(indent)
	switch n := n.(type) {
	case *Scan:
		p.b.WriteString("Scan " + n.Table)
		if n.Alias != "" && !strings.EqualFold(n.Alias, n.Table) {
			p.b.WriteString(" AS " + n.Alias)
		}
		p.b.WriteString(" cols=[" + p.cols(n.Cols) + "]")
		if len(n.Filters) > 0 {
			p.b.WriteString(" filter=[" + p.exprs(n.Filters) + "]")
		}
	case *Values:
		fmt.Fprintf(&p.b, "Values rows=%d", len(n.Rows))
		if len(n.Cols) > 0 {
			p.b.WriteString(" cols=[" + p.cols(n.Cols) + "]")
		}
		for _, r := range n.Rows {
			if len(r) > 0 {
				p.b.WriteString(" (" + p.exprs(r) + ")")
			}
		}
	case *Filter:
		p.b.WriteString("Filter [" + p.exprs(n.Conds) + "]")
	case *Project:
		s := make([]string, len(n.Exprs))
		for i, e := range n.Exprs {
			s[i] = p.assign(n.Cols[i], e)
		}
		p.b.WriteString("Project " + strings.Join(s, ", "))
	case *Join:
		p.b.WriteString("Join " + n.Kind.String())
		if n.Strategy != StrategyUnset {
			fmt.Fprintf(&p.b, " %s build=%s", n.Strategy, n.Build)
		}
		if n.Kind == MarkJoin {
			p.b.WriteString(" mark=" + p.col(n.Mark))
			if n.MarkCond != nil {
				p.b.WriteString(" cond=(" + p.expr(n.MarkCond, 0) + ")")
			}
		}
		if len(n.On) > 0 {
			p.b.WriteString(" on=[" + p.exprs(n.On) + "]")
		}
	case *Aggregate:
		g := make([]string, len(n.Groups))
		for i, e := range n.Groups {
			g[i] = p.assign(n.GroupCols[i], e)
		}
		a := make([]string, len(n.Aggs))
		for i, e := range n.Aggs {
			a[i] = p.col(n.AggCols[i]) + " := " + p.expr(e, 0)
		}
		p.b.WriteString("Aggregate")
		if len(g) > 0 {
			p.b.WriteString(" group=[" + strings.Join(g, ", ") + "]")
		}
		if len(a) > 0 {
			p.b.WriteString(" aggs=[" + strings.Join(a, ", ") + "]")
		}
	case *Distinct:
		p.b.WriteString("Distinct")
	case *Sort:
		s := make([]string, len(n.Keys))
		for i, k := range n.Keys {
			s[i] = p.expr(k.Expr, 0)
			if k.Desc {
				s[i] += " DESC"
			}
		}
		p.b.WriteString("Sort " + strings.Join(s, ", "))
	case *Limit:
		p.b.WriteString("Limit")
		if n.Offset > 0 {
			fmt.Fprintf(&p.b, " offset=%d", n.Offset)
		}
		if n.Count >= 0 {
			fmt.Fprintf(&p.b, " %d", n.Count)
		}
	case *Insert:
		p.b.WriteString("Insert " + n.DB + "." + n.Table)
	case *Delete:
		p.b.WriteString("Delete " + n.DB + "." + n.Table + " rowid=" + p.col(n.RowID))
	default:
		fmt.Fprintf(&p.b, "%T", n)
	}
	if p.opts.Rows && n.Est().Valid {
		p.b.WriteString("  [" + FormatRows(n.Est().Rows) + " rows]")
	}
	if p.opts.Types {
		out := n.Output()
		nn := NotNull(n, p.md)
		s := make([]string, len(out))
		for i, id := range out {
			c := p.md.Column(id)
			s[i] = p.col(id) + " " + c.Type.String()
			if nn.Has(id) {
				s[i] += " not null"
			}
		}
		p.b.WriteString("  -> (" + strings.Join(s, ", ") + ")")
	}
	p.b.WriteByte('\n')
	for _, c := range n.Inputs() {
		p.node(c, depth+1)
	}
	// Subquery plans print after the inputs, under a label.
	var subs []*Subquery
	for _, e := range NodeExprs(n) {
		WalkExpr(e, func(x Expr) bool {
			if s, ok := x.(*Subquery); ok {
				subs = append(subs, s)
			}
			return true
		})
	}
	for _, s := range subs {
		p.b.WriteString(indent + "  " + p.subqueryName(s) + ":\n")
		p.node(s.Plan, depth+2)
	}
}

func (p *printer) subqueryName(s *Subquery) string {
	id, ok := p.subq[s]
	if !ok {
		id = len(p.subq) + 1
		p.subq[s] = id
	}
	return "$sq" + strconv.Itoa(id)
}

// FormatRows spells an estimated row count briefly: 42, 1.5k, 6M, 1.2G.
func FormatRows(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return fmt.Sprint(r)
	}
	switch {
	case r < 1000:
		return strconv.FormatFloat(math.Round(r), 'f', -1, 64)
	case r < 1e6:
		return trim(r/1e3) + "k"
	case r < 1e9:
		return trim(r/1e6) + "M"
	}
	return trim(r/1e9) + "G"
}

func trim(x float64) string {
	if x >= 100 {
		return strconv.FormatFloat(math.Round(x), 'f', -1, 64)
	}
	return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64)
}

func (p *printer) expr(e Expr, outer int) string {
	s, prec := p.exprPrec(e)
	if prec < outer {
		return "(" + s + ")"
	}
	return s
}

// exprPrec prints e and returns the precedence of its outermost operator (9: atomic).
func (p *printer) exprPrec(e Expr) (string, int) {
	switch x := e.(type) {
	case *ColumnRef:
		return p.col(x.ID), 9
	case *InputRef:
		return "$" + strconv.Itoa(x.Pos), 9
	case *Literal:
		s := x.V.String()
		if strings.HasPrefix(s, "-") {
			return s, 8
		}
		return s, 9
	case *Cast:
		return "CAST(" + p.expr(x.Arg, 0) + " AS " + x.T.String() + ")", 9
	case *Case:
		var b strings.Builder
		b.WriteString("CASE")
		for _, w := range x.Whens {
			b.WriteString(" WHEN " + p.expr(w.Cond, 0) + " THEN " + p.expr(w.Then, 0))
		}
		if x.Else != nil {
			b.WriteString(" ELSE " + p.expr(x.Else, 0))
		}
		b.WriteString(" END")
		return b.String(), 9
	case *AggCall:
		switch {
		case x.Fn == AggCountStar:
			return "count(*)", 9
		case x.Fn == AggGroupConcat:
			d := ""
			if x.Distinct {
				d = "DISTINCT "
			}
			sep := ""
			if x.Sep != "," {
				sep = " SEPARATOR " + types.StringValue(x.Sep).String()
			}
			return "group_concat(" + d + p.expr(x.Arg, 0) + sep + ")", 9
		case x.Distinct:
			return x.Fn.String() + "(DISTINCT " + p.expr(x.Arg, 0) + ")", 9
		}
		return x.Fn.String() + "(" + p.expr(x.Arg, 0) + ")", 9
	case *Subquery:
		name := p.subqueryName(x)
		switch x.Kind {
		case SubqueryExists:
			if x.Not {
				return "NOT EXISTS " + name, 4
			}
			return "EXISTS " + name, 9
		case SubqueryIn:
			op := " IN "
			if x.Not {
				op = " NOT IN "
			}
			return p.expr(x.Probe, 6) + op + name, 5
		}
		return name, 9
	case *Call:
		return p.call(x)
	}
	return fmt.Sprintf("%T", e), 9
}

func (p *printer) call(x *Call) (string, int) {
	info := funcs[x.Fn]
	switch x.Fn {
	case FnAnd, FnOr, FnXor:
		// Associative: print a chain of one operator without parentheses.
		var s []string
		var walk func(e Expr)
		walk = func(e Expr) {
			if c, ok := e.(*Call); ok && c.Fn == x.Fn {
				for _, a := range c.Args {
					walk(a)
				}
				return
			}
			s = append(s, p.expr(e, info.prec+1))
		}
		walk(x)
		return strings.Join(s, " "+info.infix+" "), info.prec
	case FnNot:
		if c, ok := x.Args[0].(*Call); ok {
			switch c.Fn {
			case FnIsNull:
				return p.expr(c.Args[0], 6) + " IS NOT NULL", 5
			case FnLike, FnIn:
				s, prec := p.call(c)
				op := " " + funcs[c.Fn].infix + " "
				return strings.Replace(s, op, " NOT"+op, 1), prec
			}
		}
		return "NOT " + p.expr(x.Args[0], info.prec), info.prec
	case FnNeg:
		return "-" + p.expr(x.Args[0], info.prec+1), info.prec
	case FnIsNull, FnIsTrue, FnIsFalse:
		return p.expr(x.Args[0], 6) + " " + info.infix, info.prec
	case FnLike:
		s := p.expr(x.Args[0], 6) + " LIKE " + p.expr(x.Args[1], 6)
		if len(x.Args) > 2 {
			if l, ok := x.Args[2].(*Literal); !ok || l.V.Str != "\\" {
				s += " ESCAPE " + p.expr(x.Args[2], 6)
			}
		}
		return s, info.prec
	case FnIn:
		return p.expr(x.Args[0], 6) + " IN (" + p.exprs(x.Args[1:]) + ")", info.prec
	}
	if d := x.Fn.Def(); d != nil && d.Print != "" {
		return fmt.Sprintf(d.Print, p.exprs(x.Args)), 9
	}
	if info.infix != "" && len(x.Args) == 2 {
		// Left-associative: the right operand needs parentheses at equal precedence.
		return p.expr(x.Args[0], info.prec) + " " + info.infix + " " + p.expr(x.Args[1], info.prec+1), info.prec
	}
	return x.Fn.String() + "(" + p.exprs(x.Args) + ")", 9
}

// ConstantText prints a constant expression as MySQL's out-of-range errors (1690) name it:
// every binary operation in parentheses, a negation as -(x) ("(9223372036854775807 + 1)").
// The constant folder names the expressions whose kernels fail so.
func ConstantText(e Expr) string {
	return errorText(e, func(e Expr) string { return FormatExpr(e, nil) })
}

// MySQLText prints e as MySQL's out-of-range errors (1690) name an expression, as the
// folder prints a constant one ("(9223372036854775807 + 1)"), with columns named as EXPLAIN
// names them ("(o_orderkey + 1)"). The lowering to exec attaches it to the nodes whose
// kernels can raise that error, so that both name the expression alike.
func (n *Namer) MySQLText(e Expr) string { return errorText(e, n.Expr) }

// errorText prints arithmetic and negation as MySQL's error messages do and everything else
// with format. A numeric operand converted to DOUBLE or DECIMAL prints as the operand: the
// binder adds such casts to mix types, and MySQL's text shows the expression as written
// ("(o_totalprice * 1e308)"); an explicit CAST of a number is left out too (a deviation, in
// an error message only).
func errorText(e Expr, format func(Expr) string) string {
	if c, ok := e.(*Cast); ok && c.Arg.Type().IsNumeric() && (c.T.Kind == types.Float64 || c.T.Kind == types.Decimal) {
		return errorText(c.Arg, format)
	}
	if l, ok := e.(*Literal); ok && !l.V.Null && l.V.Type.Kind == types.Float64 {
		return strings.Replace(strconv.FormatFloat(l.V.Float, 'g', -1, 64), "e+", "e", 1) // 1e308
	}
	x, ok := e.(*Call)
	if !ok {
		return format(e)
	}
	if x.Fn == FnNeg && len(x.Args) == 1 {
		return "-(" + errorText(x.Args[0], format) + ")"
	}
	if isArithmetic(x.Fn) && len(x.Args) == 2 {
		op := funcs[x.Fn].infix
		if x.Fn == FnIntDiv {
			op = "DIV"
		}
		return "(" + errorText(x.Args[0], format) + " " + op + " " + errorText(x.Args[1], format) + ")"
	}
	if f := x.Fn.Def(); f != nil && f.MayOverflow {
		// The functions that can overflow print as name(args), the arguments as this
		// function prints them: exp((o_orderkey * 1000)), as MySQL.
		args := make([]string, len(x.Args))
		for i, a := range x.Args {
			args[i] = errorText(a, format)
		}
		return x.Fn.String() + "(" + strings.Join(args, ", ") + ")"
	}
	return format(e)
}

// isArithmetic reports the binary arithmetic operators, which MySQL's messages print in
// parentheses.
func isArithmetic(f Func) bool {
	switch f {
	case FnAdd, FnSub, FnMul, FnDiv, FnIntDiv, FnMod:
		return true
	}
	return false
}
