package bind

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// newRestoreCtx restores AST text as a person would write it: no backquotes around names.
func newRestoreCtx(sb *strings.Builder) *format.RestoreCtx {
	return format.NewRestoreCtx(format.RestoreStringSingleQuotes|format.RestoreKeyWordLowercase|format.RestoreStringWithoutCharset, sb)
}

// exprCtx is where an expression is bound.
type exprCtx struct {
	sc     *scope
	clause string // for error messages: "field list", "where clause", …
	// allowAgg permits aggregate functions (select list, HAVING, ORDER BY); inAgg is set
	// inside one, where another is an error.
	allowAgg, inAgg bool
	// items are the select list, whose aliases HAVING, GROUP BY and ORDER BY may name.
	// fromFirst looks up FROM columns before aliases (GROUP BY and HAVING, as MySQL does);
	// otherwise aliases come first (ORDER BY).
	items     []selectItem
	fromFirst bool
}

func (b *Binder) expr(e ast.ExprNode, ctx *exprCtx) (plan.Expr, error) {
	switch x := e.(type) {
	case *ast.ParenthesesExpr:
		return b.expr(x.Expr, ctx)
	case *ast.ColumnNameExpr:
		return b.column(x.Name, ctx)
	case ast.ParamMarkerExpr:
		return nil, sqlerr.Unsupported("prepared statement parameters")
	case ast.ValueExpr:
		return literal(x)
	case *ast.BinaryOperationExpr:
		return b.binary(x, ctx)
	case *ast.UnaryOperationExpr:
		return b.unary(x, ctx)
	case *ast.BetweenExpr:
		return b.between(x, ctx)
	case *ast.PatternLikeOrIlikeExpr:
		return b.like(x, ctx)
	case *ast.PatternInExpr:
		return b.in(x, ctx)
	case *ast.IsNullExpr:
		v, err := b.expr(x.Expr, ctx)
		if err != nil {
			return nil, err
		}
		var r plan.Expr = plan.NewBool(plan.FnIsNull, v)
		if x.Not {
			r = plan.Not(r)
		}
		return r, nil
	case *ast.IsTruthExpr:
		v, err := b.expr(x.Expr, ctx)
		if err != nil {
			return nil, err
		}
		if v, err = b.toBool(v, exprText(x.Expr)); err != nil {
			return nil, err
		}
		fn := plan.FnIsTrue
		if x.True == 0 {
			fn = plan.FnIsFalse
		}
		var r plan.Expr = plan.NewBool(fn, v)
		if x.Not {
			r = plan.Not(r)
		}
		return r, nil
	case *ast.CaseExpr:
		return b.caseExpr(x, ctx)
	case *ast.FuncCallExpr:
		return b.funcCall(x, ctx)
	case *ast.FuncCastExpr:
		return b.cast(x, ctx)
	case *ast.AggregateFuncExpr:
		return b.aggCall(x, ctx)
	case *ast.SubqueryExpr:
		return b.subquery(x, plan.SubqueryScalar, nil, false, ctx)
	case *ast.ExistsSubqueryExpr:
		sq, ok := x.Sel.(*ast.SubqueryExpr)
		if !ok {
			return nil, sqlerr.Unsupported("EXISTS over this expression")
		}
		return b.subquery(sq, plan.SubqueryExists, nil, x.Not, ctx)
	case *ast.CompareSubqueryExpr:
		return b.compareSubquery(x, ctx)
	case *ast.VariableExpr:
		return b.variable(x)
	case *ast.RowExpr:
		return nil, sqlerr.Unsupported("row constructors")
	case *ast.WindowFuncExpr:
		return nil, sqlerr.Unsupported("window functions")
	}
	return nil, sqlerr.Unsupported("the expression '" + exprText(e) + "'")
}

// column resolves a column name in the scope, then in enclosing scopes; in HAVING, GROUP
// BY and ORDER BY a select-list alias may stand in for it.
func (b *Binder) column(cn *ast.ColumnName, ctx *exprCtx) (plan.Expr, error) {
	name := cn.Name.O
	display := name
	if cn.Table.O != "" {
		display = cn.Table.O + "." + name
		if cn.Schema.O != "" {
			display = cn.Schema.O + "." + display
		}
	}
	alias := func() (plan.Expr, bool) {
		if ctx.items == nil || cn.Table.L != "" {
			return nil, false
		}
		for _, it := range ctx.items {
			if it.alias && strings.EqualFold(it.name, name) {
				return it.expr, true
			}
		}
		return nil, false
	}
	if !ctx.fromFirst {
		if e, ok := alias(); ok {
			if plan.HasAgg(e) && !ctx.allowAgg {
				return nil, sqlerr.New(sqlerr.ErIllegalReference, "Reference '%s' not supported (reference to group function)", name)
			}
			return e, nil
		}
	}
	for s := ctx.sc; s != nil; s = s.outer {
		var found *relCol
		for _, r := range s.rels {
			if cn.Table.L != "" && !strings.EqualFold(r.name, cn.Table.O) {
				continue
			}
			if cn.Schema.L != "" && !strings.EqualFold(r.db, cn.Schema.O) {
				continue
			}
			for i := range r.cols {
				c := &r.cols[i]
				if !strings.EqualFold(c.name, name) || (c.hidden && cn.Table.L == "") {
					continue
				}
				if found != nil && found.id != c.id {
					return nil, sqlerr.AmbiguousColumn(display, ctx.clause)
				}
				found = c
			}
		}
		if found != nil {
			return b.md.Ref(found.id), nil
		}
	}
	if ctx.fromFirst {
		if e, ok := alias(); ok {
			if plan.HasAgg(e) && !ctx.allowAgg {
				return nil, sqlerr.New(sqlerr.ErIllegalReference, "Reference '%s' not supported (reference to group function)", name)
			}
			return e, nil
		}
	}
	return nil, sqlerr.UnknownColumn(display, ctx.clause)
}

// literal converts a parser constant.
func literal(v ast.ValueExpr) (plan.Expr, error) {
	switch x := v.GetValue().(type) {
	case nil:
		return plan.Lit(types.NullValue(types.NullType)), nil
	case int64:
		return plan.Lit(types.IntValue(x)), nil
	case uint64:
		d, err := types.ParseDecimal(strconv.FormatUint(x, 10))
		if err != nil {
			return nil, sqlerr.New(sqlerr.ErDataOutOfRange, "Integer literal %d is out of range", x)
		}
		return plan.Lit(d), nil
	case float64:
		return plan.Lit(types.FloatValue(x)), nil
	case float32:
		return plan.Lit(types.FloatValue(float64(x))), nil
	case string:
		return plan.Lit(types.StringValue(x)), nil
	case []byte:
		return plan.Lit(types.StringValue(string(x))), nil
	case *driver.MyDecimal:
		d, err := types.ParseDecimal(x.String())
		if err != nil {
			return nil, sqlerr.New(sqlerr.ErDataOutOfRange, "Decimal literal %s: %v", x.String(), err)
		}
		return plan.Lit(d), nil
	}
	return nil, sqlerr.Unsupported("this kind of literal (hexadecimal or bit values)")
}

var arithOps = map[opcode.Op]struct {
	fn plan.Func
	op types.ArithOp
}{
	opcode.Plus: {plan.FnAdd, types.OpAdd}, opcode.Minus: {plan.FnSub, types.OpSub},
	opcode.Mul: {plan.FnMul, types.OpMul}, opcode.Div: {plan.FnDiv, types.OpDiv},
	opcode.IntDiv: {plan.FnIntDiv, types.OpIntDiv}, opcode.Mod: {plan.FnMod, types.OpMod},
}

var compareOps = map[opcode.Op]plan.Func{
	opcode.EQ: plan.FnEq, opcode.NE: plan.FnNe, opcode.LT: plan.FnLt, opcode.LE: plan.FnLe,
	opcode.GT: plan.FnGt, opcode.GE: plan.FnGe, opcode.NullEQ: plan.FnNullSafeEq,
}

func (b *Binder) binary(x *ast.BinaryOperationExpr, ctx *exprCtx) (plan.Expr, error) {
	l, err := b.expr(x.L, ctx)
	if err != nil {
		return nil, err
	}
	r, err := b.expr(x.R, ctx)
	if err != nil {
		return nil, err
	}
	text := exprText(x)
	if a, ok := arithOps[x.Op]; ok {
		return b.arith(a.fn, a.op, l, r, text)
	}
	if fn, ok := compareOps[x.Op]; ok {
		return b.compare(fn, l, r, text)
	}
	switch x.Op {
	case opcode.LogicAnd, opcode.LogicOr, opcode.LogicXor:
		if l, err = b.toBool(l, exprText(x.L)); err != nil {
			return nil, err
		}
		if r, err = b.toBool(r, exprText(x.R)); err != nil {
			return nil, err
		}
		fn := map[opcode.Op]plan.Func{opcode.LogicAnd: plan.FnAnd, opcode.LogicOr: plan.FnOr, opcode.LogicXor: plan.FnXor}[x.Op]
		return plan.NewBool(fn, l, r), nil
	}
	return nil, sqlerr.Unsupported("the operator " + x.Op.String())
}

func (b *Binder) unary(x *ast.UnaryOperationExpr, ctx *exprCtx) (plan.Expr, error) {
	v, err := b.expr(x.V, ctx)
	if err != nil {
		return nil, err
	}
	switch x.Op {
	case opcode.Not, opcode.Not2:
		if v, err = b.toBool(v, exprText(x.V)); err != nil {
			return nil, err
		}
		return plan.Not(v), nil
	case opcode.Plus:
		if !v.Type().IsNumeric() {
			return nil, sqlerr.New(sqlerr.ErWrongArguments, "Incorrect arguments to +: '%s' is %s", exprText(x.V), v.Type())
		}
		return v, nil
	case opcode.Minus:
		t := v.Type()
		switch {
		case t.Kind == types.Bool || t.Kind == types.Int32:
			v, t = b.castExpr(v, types.Int64Type), types.Int64Type
		case t.Kind == types.Null:
			return plan.Lit(types.NullValue(types.Int64Type)), nil
		case !t.IsNumeric():
			return nil, sqlerr.New(sqlerr.ErWrongArguments, "Incorrect arguments to -: '%s' is %s", exprText(x.V), t)
		}
		if l, ok := v.(*plan.Literal); ok {
			// -9223372036854775808 is BIGINT's minimum, as in MySQL, though its digits
			// alone (2^63) are a DECIMAL.
			if t.Kind == types.Decimal && t.Scale == 0 && !l.V.Null && isMinInt64Magnitude(l.V.Dec) {
				return plan.Lit(types.IntValue(math.MinInt64)), nil
			}
			// Fold now so that "-1" is a literal, as the parser's users expect. A double
			// negates its sign (-0e0 is -0, as MySQL prints it), not 0 minus itself.
			if t.Kind == types.Float64 && !l.V.Null {
				return plan.Lit(types.FloatValue(-l.V.Float)), nil
			}
			zero := types.IntValue(0)
			neg, err := types.Arithmetic(types.OpSub, zero, l.V, t)
			if err == nil {
				if t.IsInteger() {
					neg.Type = types.IntValue(neg.Int).Type
				}
				return plan.Lit(neg), nil
			}
		}
		return &plan.Call{Fn: plan.FnNeg, Args: []plan.Expr{v}, T: t}, nil
	}
	return nil, sqlerr.Unsupported("the operator " + x.Op.String())
}

func (b *Binder) between(x *ast.BetweenExpr, ctx *exprCtx) (plan.Expr, error) {
	v, err := b.expr(x.Expr, ctx)
	if err != nil {
		return nil, err
	}
	lo, err := b.expr(x.Left, ctx)
	if err != nil {
		return nil, err
	}
	hi, err := b.expr(x.Right, ctx)
	if err != nil {
		return nil, err
	}
	text := exprText(x)
	if x.Not {
		l, err := b.compare(plan.FnLt, v, lo, text)
		if err != nil {
			return nil, err
		}
		h, err := b.compare(plan.FnGt, v, hi, text)
		if err != nil {
			return nil, err
		}
		return plan.NewBool(plan.FnOr, l, h), nil
	}
	l, err := b.compare(plan.FnGe, v, lo, text)
	if err != nil {
		return nil, err
	}
	h, err := b.compare(plan.FnLe, v, hi, text)
	if err != nil {
		return nil, err
	}
	return plan.NewBool(plan.FnAnd, l, h), nil
}

func (b *Binder) like(x *ast.PatternLikeOrIlikeExpr, ctx *exprCtx) (plan.Expr, error) {
	if !x.IsLike {
		return nil, sqlerr.Unsupported("ILIKE")
	}
	v, err := b.expr(x.Expr, ctx)
	if err != nil {
		return nil, err
	}
	p, err := b.expr(x.Pattern, ctx)
	if err != nil {
		return nil, err
	}
	text := exprText(x)
	if v, err = b.toString(v, text); err != nil {
		return nil, err
	}
	if p, err = b.toString(p, text); err != nil {
		return nil, err
	}
	esc := x.Escape
	if esc == 0 {
		esc = '\\'
	}
	var r plan.Expr = plan.NewBool(plan.FnLike, v, p, plan.Lit(types.StringValue(string(rune(esc)))))
	if x.Not {
		r = plan.Not(r)
	}
	return r, nil
}

func (b *Binder) in(x *ast.PatternInExpr, ctx *exprCtx) (plan.Expr, error) {
	if x.Sel != nil {
		sq, ok := x.Sel.(*ast.SubqueryExpr)
		if !ok {
			return nil, sqlerr.Unsupported("IN over this expression")
		}
		return b.subquery(sq, plan.SubqueryIn, x.Expr, x.Not, ctx)
	}
	v, err := b.expr(x.Expr, ctx)
	if err != nil {
		return nil, err
	}
	text := exprText(x)
	list := make([]plan.Expr, len(x.List))
	t := v.Type()
	for i, item := range x.List {
		if list[i], err = b.expr(item, ctx); err != nil {
			return nil, err
		}
		list[i] = constant(list[i])
		nt, ok := b.commonForCompare(v, list[i])
		if !ok {
			return nil, sqlerr.New(sqlerr.ErWrongArguments, "Incorrect arguments to IN: cannot compare %s with %s in '%s'", t, list[i].Type(), text)
		}
		if i == 0 {
			t = nt
		} else if t, ok = types.Common(t, nt); !ok {
			return nil, sqlerr.New(sqlerr.ErWrongArguments, "Incorrect arguments to IN: mixed types in '%s'", text)
		}
	}
	args := []plan.Expr{nil}
	if args[0], err = b.castTo(v, t, text); err != nil {
		return nil, err
	}
	for _, item := range list {
		c, err := b.castTo(item, t, text)
		if err != nil {
			return nil, err
		}
		args = append(args, c)
	}
	var r plan.Expr = plan.NewBool(plan.FnIn, args...)
	if x.Not {
		r = plan.Not(r)
	}
	return r, nil
}

func (b *Binder) caseExpr(x *ast.CaseExpr, ctx *exprCtx) (plan.Expr, error) {
	var value plan.Expr
	var err error
	if x.Value != nil {
		if value, err = b.expr(x.Value, ctx); err != nil {
			return nil, err
		}
	}
	text := exprText(x)
	c := &plan.Case{}
	var results []plan.Expr
	for _, w := range x.WhenClauses {
		cond, err := b.expr(w.Expr, ctx)
		if err != nil {
			return nil, err
		}
		if value != nil {
			cond, err = b.compare(plan.FnEq, value, cond, text)
		} else {
			cond, err = b.toBool(cond, exprText(w.Expr))
		}
		if err != nil {
			return nil, err
		}
		then, err := b.expr(w.Result, ctx)
		if err != nil {
			return nil, err
		}
		c.Whens = append(c.Whens, plan.When{Cond: cond})
		results = append(results, then)
	}
	if x.ElseClause != nil {
		e, err := b.expr(x.ElseClause, ctx)
		if err != nil {
			return nil, err
		}
		results = append(results, e)
	}
	t, err := b.commonType(results, resultType, "CASE", text)
	if err != nil {
		return nil, err
	}
	c.T = t
	for i := range c.Whens {
		if c.Whens[i].Then, err = b.castTo(results[i], t, text); err != nil {
			return nil, err
		}
	}
	if x.ElseClause != nil {
		if c.Else, err = b.castTo(results[len(results)-1], t, text); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// commonType is the type several values merge into by merge: resultType for CASE and IF
// branches, COALESCE and IFNULL arguments; types.Common, the comparison type, for the
// arguments a function compares (fn.Compared: a number and a string compare as DOUBLEs,
// as MariaDB compares them).
func (b *Binder) commonType(es []plan.Expr, merge func(a, b types.Type) (types.Type, bool), what, text string) (types.Type, error) {
	t := types.NullType
	for _, e := range es {
		nt, ok := merge(t, e.Type())
		if !ok {
			return types.Type{}, sqlerr.New(sqlerr.ErWrongArguments, "Incorrect arguments to %s: cannot mix %s and %s in '%s' (colink merges numbers, strings and dates only)", what, t, e.Type(), text)
		}
		t = nt
	}
	if t.Kind == types.Null {
		t = types.Int64Type
	}
	return t, nil
}

func (b *Binder) aggCall(x *ast.AggregateFuncExpr, ctx *exprCtx) (plan.Expr, error) {
	text := exprText(x)
	if !ctx.allowAgg || ctx.inAgg {
		return nil, sqlerr.New(sqlerr.ErInvalidGroupFuncUse, "Invalid use of group function")
	}
	fns := map[string]plan.AggFunc{"sum": plan.AggSum, "avg": plan.AggAvg, "min": plan.AggMin,
		"max": plan.AggMax, "count": plan.AggCount}
	if strings.EqualFold(x.F, ast.AggFuncGroupConcat) {
		return b.groupConcat(x, ctx)
	}
	fn, ok := fns[strings.ToLower(x.F)]
	if !ok {
		return nil, sqlerr.Unsupported("the aggregate function " + strings.ToUpper(x.F))
	}
	if len(x.Args) != 1 {
		if fn == plan.AggCount && x.Distinct {
			return nil, sqlerr.Unsupported("COUNT(DISTINCT) of several expressions")
		}
		return nil, sqlerr.New(sqlerr.ErWrongParamcountToFunc, "Incorrect parameter count in the call to native function '%s'", x.F)
	}
	if x.Order != nil {
		return nil, sqlerr.Unsupported("ORDER BY inside an aggregate")
	}
	inner := *ctx
	inner.inAgg = true
	// COUNT(*) arrives as COUNT(1).
	if fn == plan.AggCount && !x.Distinct {
		if v, ok := x.Args[0].(ast.ValueExpr); ok && v.GetValue() != nil {
			return &plan.AggCall{Fn: plan.AggCountStar, T: types.Int64Type}, nil
		}
	}
	arg, err := b.expr(x.Args[0], &inner)
	if err != nil {
		return nil, err
	}
	if arg.Type().Kind == types.Null {
		// An expression of type NULL is always NULL (COUNT(NULL) = 0, SUM(NULL) is NULL);
		// the operators aggregate typed columns, so it becomes a BIGINT NULL.
		arg = plan.Lit(types.NullValue(types.Int64Type))
	}
	a := &plan.AggCall{Fn: fn, Arg: arg, Distinct: x.Distinct}
	t := arg.Type()
	switch fn {
	case plan.AggSum:
		a.T, err = types.Sum(t)
	case plan.AggAvg:
		a.T, err = types.Avg(t)
	case plan.AggMin, plan.AggMax:
		a.T = t
		if t.Kind == types.Null {
			a.T = types.Int64Type
		}
	case plan.AggCount:
		a.T = types.Int64Type
	}
	if err != nil {
		return nil, sqlerr.New(sqlerr.ErWrongArguments, "Incorrect arguments to %s: %s is %s, not a number", strings.ToUpper(x.F), exprText(x.Args[0]), t)
	}
	if a.Arg.Type().Kind == types.Bool || a.Arg.Type().Kind == types.Int32 && (fn == plan.AggSum || fn == plan.AggAvg) {
		// Sums and averages accumulate integers as BIGINT.
		a.Arg = b.castExpr(a.Arg, types.Int64Type)
	}
	_ = text
	return a, nil
}

// defaultGroupConcatMaxLen is MySQL's @@group_concat_max_len.
const defaultGroupConcatMaxLen = 1024

// groupConcat binds GROUP_CONCAT([DISTINCT] expr [, expr ...] [ORDER BY ...] [SEPARATOR
// str]). The parser passes the separator as the last argument. Several expressions are
// bound as their CONCAT, which is NULL, and so skipped, when any of them is, as MySQL
// skips such rows; ORDER BY's ordinals name the arguments.
func (b *Binder) groupConcat(x *ast.AggregateFuncExpr, ctx *exprCtx) (plan.Expr, error) {
	if len(x.Args) < 2 {
		return nil, sqlerr.New(sqlerr.ErWrongParamcountToFunc, "Incorrect parameter count in the call to native function 'GROUP_CONCAT'")
	}
	args, sepArg := x.Args[:len(x.Args)-1], x.Args[len(x.Args)-1]
	sv, ok := sepArg.(ast.ValueExpr)
	if !ok {
		return nil, sqlerr.New(sqlerr.ErWrongArguments, "Incorrect arguments to GROUP_CONCAT: the SEPARATOR must be a string literal")
	}
	inner := *ctx
	inner.inAgg = true
	// CONCAT of a single argument too: it gives numbers and dates their text.
	e, err := b.expr(&ast.FuncCallExpr{FnName: ast.NewCIStr("concat"), Args: args}, &inner)
	if err != nil {
		return nil, err
	}
	maxLen := int64(defaultGroupConcatMaxLen)
	if v, ok := b.env.SystemVariable("group_concat_max_len", false); ok && !v.Null {
		n := v.Int
		if v.Type.IsString() {
			n, _ = strconv.ParseInt(v.Str, 10, 64)
		}
		if n > 0 {
			maxLen = n
		}
	}
	a := &plan.AggCall{Fn: plan.AggGroupConcat, Arg: e, Distinct: x.Distinct, Sep: sv.GetString(),
		MaxLen: maxLen, T: types.VarcharType(int(min(maxLen, 1<<24)))}
	if x.Order != nil {
		for _, o := range x.Order.Items {
			var k ast.ExprNode = o.Expr
			if n, ok := ordinal(o.Expr); ok {
				if n < 1 || n > len(args) {
					return nil, sqlerr.UnknownColumn(strconv.Itoa(n), "order clause")
				}
				k = args[n-1]
			}
			ke, err := b.expr(k, &inner)
			if err != nil {
				return nil, err
			}
			a.Order = append(a.Order, plan.SortKey{Expr: ke, Desc: o.Desc})
		}
	}
	return a, nil
}

// subquery binds a nested SELECT used as an expression.
func (b *Binder) subquery(sq *ast.SubqueryExpr, kind plan.SubqueryKind, probe ast.ExprNode, not bool, ctx *exprCtx) (plan.Expr, error) {
	n, cols, err := b.resultSet(sq.Query, ctx.sc)
	if err != nil {
		return nil, err
	}
	s := &plan.Subquery{Kind: kind, Not: not, Plan: n, T: types.BoolType}
	if kind == plan.SubqueryExists {
		return s, nil
	}
	if len(cols) != 1 {
		return nil, sqlerr.New(sqlerr.ErOperandColumns, "Operand should contain 1 column(s)")
	}
	s.Col = cols[0].id
	if len(n.Output()) != 1 {
		s.Plan = b.projectCols(n, cols)
	}
	colType := b.md.Column(s.Col).Type
	if kind == plan.SubqueryScalar {
		s.T = colType
		return s, nil
	}
	p, err := b.expr(probe, ctx)
	if err != nil {
		return nil, err
	}
	text := exprText(probe) + " IN (subquery)"
	t, ok := types.Common(p.Type(), colType)
	if !ok {
		return nil, sqlerr.New(sqlerr.ErWrongArguments, "Incorrect arguments to IN: cannot compare %s with %s in '%s'", p.Type(), colType, text)
	}
	if s.Probe, err = b.castTo(p, t, text); err != nil {
		return nil, err
	}
	if !colType.Equal(t) && !(colType.IsString() && t.IsString()) && !(colType.IsInteger() && t.Kind == colType.Kind) {
		// Give the subquery's column the comparison type.
		id := b.newColumn(b.md.Column(s.Col).Name, t, b.md.Column(s.Col).Nullable)
		s.Plan = &plan.Project{Input: s.Plan, Exprs: []plan.Expr{b.castExpr(b.md.Ref(s.Col), t)}, Cols: []plan.ColumnID{id}}
		s.Col = id
	}
	return s, nil
}

// compareSubquery binds "x op ANY/ALL (subquery)": = ANY is IN and <> ALL is NOT IN.
func (b *Binder) compareSubquery(x *ast.CompareSubqueryExpr, ctx *exprCtx) (plan.Expr, error) {
	sq, ok := x.R.(*ast.SubqueryExpr)
	if !ok {
		return nil, sqlerr.Unsupported("ANY/ALL over this expression")
	}
	switch {
	case x.Op == opcode.EQ && !x.All:
		return b.subquery(sq, plan.SubqueryIn, x.L, false, ctx)
	case x.Op == opcode.NE && x.All:
		return b.subquery(sq, plan.SubqueryIn, x.L, true, ctx)
	}
	return nil, sqlerr.Unsupported("comparison with ANY or ALL other than = ANY and <> ALL")
}

func (b *Binder) variable(x *ast.VariableExpr) (plan.Expr, error) {
	if x.Value != nil {
		return nil, sqlerr.Unsupported("assigning a variable inside an expression")
	}
	name := strings.ToLower(x.Name)
	if x.IsSystem {
		v, ok := b.env.SystemVariable(name, x.IsGlobal)
		if !ok {
			return nil, sqlerr.New(sqlerr.ErUnknownSystemVariable, "Unknown system variable '%s'", x.Name)
		}
		return plan.Lit(v), nil
	}
	v, ok := b.env.UserVariable(name)
	if !ok {
		return plan.Lit(types.NullValue(types.VarcharType(0))), nil
	}
	return plan.Lit(v), nil
}

// isMinInt64Magnitude reports whether d is 2^63, the magnitude of BIGINT's minimum.
func isMinInt64Magnitude(d *big.Int) bool {
	return d.Sign() > 0 && d.BitLen() == 64 && d.TrailingZeroBits() == 63
}
