package bind

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

func (b *Binder) funcCall(x *ast.FuncCallExpr, ctx *exprCtx) (plan.Expr, error) {
	name := x.FnName.L
	text := exprText(x)
	argc := func(lo, hi int) error {
		if len(x.Args) < lo || len(x.Args) > hi {
			return sqlerr.New(sqlerr.ErWrongParamcountToFunc, "Incorrect parameter count in the call to native function '%s'", x.FnName.O)
		}
		return nil
	}
	args := func(from int) ([]plan.Expr, error) {
		var out []plan.Expr
		for _, a := range x.Args[from:] {
			if _, ok := a.(*ast.TimeUnitExpr); ok {
				continue
			}
			e, err := b.expr(a, ctx)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	// bindArgs checks that there are lo..hi arguments and binds them.
	bindArgs := func(lo, hi int) ([]plan.Expr, error) {
		if err := argc(lo, hi); err != nil {
			return nil, err
		}
		return args(0)
	}
	// strArgs binds the arguments of a string function of lo..hi arguments, the first a
	// string (returned apart).
	strArgs := func(lo, hi int) (plan.Expr, []plan.Expr, error) {
		a, err := bindArgs(lo, hi)
		if err != nil {
			return nil, nil, err
		}
		s, err := b.toString(a[0], text)
		return s, a, err
	}
	// numArgs binds the arguments of a numeric function of lo..hi arguments, the first a
	// number (returned apart).
	numArgs := func(lo, hi int) (plan.Expr, []plan.Expr, error) {
		a, err := bindArgs(lo, hi)
		if err != nil {
			return nil, nil, err
		}
		v, err := b.numeric(a[0], strings.ToUpper(name), text)
		return v, a, err
	}
	switch name {
	case ast.DateLiteral:
		v, ok := x.Args[0].(ast.ValueExpr)
		s, isStr := v.GetValue().(string)
		if !ok || !isStr {
			return nil, sqlerr.New(sqlerr.ErWrongValue, "Incorrect DATE value: '%s'", text)
		}
		d, err := types.ParseDate(s)
		if err != nil {
			return nil, sqlerr.New(sqlerr.ErWrongValue, "Incorrect DATE value: '%s'", s)
		}
		return plan.Lit(types.DateValue(d)), nil
	case ast.DateAdd, ast.DateSub, ast.AddDate, ast.SubDate:
		if err := argc(3, 3); err != nil {
			return nil, err
		}
		return b.dateArith(x, name == ast.DateSub || name == ast.SubDate, ctx)
	case ast.Extract:
		if err := argc(2, 2); err != nil {
			return nil, err
		}
		unit, ok := x.Args[0].(*ast.TimeUnitExpr)
		if !ok {
			return nil, sqlerr.Unsupported("EXTRACT without a unit")
		}
		fn, ok := map[ast.TimeUnitType]plan.Func{ast.TimeUnitYear: plan.FnExtractYear,
			ast.TimeUnitMonth: plan.FnExtractMonth, ast.TimeUnitDay: plan.FnExtractDay,
			ast.TimeUnitQuarter: plan.FnQuarter, ast.TimeUnitWeek: plan.FnWeek,
			ast.TimeUnitYearMonth: plan.FnYearMonth}[unit.Unit]
		if !ok {
			return nil, sqlerr.Unsupported("EXTRACT(" + unit.Unit.String() + ")")
		}
		a, err := args(1)
		if err != nil {
			return nil, err
		}
		return b.dateFunc(fn, a[0], text)
	case ast.Year, ast.Month, ast.Day, ast.DayOfMonth:
		a, err := bindArgs(1, 1)
		if err != nil {
			return nil, err
		}
		fn := map[string]plan.Func{ast.Year: plan.FnExtractYear, ast.Month: plan.FnExtractMonth,
			ast.Day: plan.FnExtractDay, ast.DayOfMonth: plan.FnExtractDay}[name]
		return b.dateFunc(fn, a[0], text)
	case ast.Quarter, ast.DayOfWeek, ast.DayOfYear, ast.Weekday:
		a, err := bindArgs(1, 1)
		if err != nil {
			return nil, err
		}
		fn := map[string]plan.Func{ast.Quarter: plan.FnQuarter, ast.DayOfWeek: plan.FnDayOfWeek,
			ast.DayOfYear: plan.FnDayOfYear, ast.Weekday: plan.FnWeekday}[name]
		return b.dateFunc(fn, a[0], text)
	case ast.Week:
		a, err := bindArgs(1, 2)
		if err != nil {
			return nil, err
		}
		if len(a) == 2 {
			// Only mode 0, the default of default_week_format, is implemented.
			l, ok := a[1].(*plan.Literal)
			if !ok || l.V.Null || !l.V.Type.IsInteger() || l.V.Int != 0 {
				return nil, sqlerr.Unsupported("WEEK(date, mode) with a mode other than 0")
			}
		}
		return b.dateFunc(plan.FnWeek, a[0], text)
	case ast.Left, ast.Right:
		s, a, err := strArgs(2, 2)
		if err != nil {
			return nil, err
		}
		n, err := b.intArg(a[1], text)
		if err != nil {
			return nil, err
		}
		t := types.VarcharType(s.Type().Length)
		if l, ok := n.(*plan.Literal); ok && !l.V.Null {
			// No longer than the count asked for, nor than the string.
			if w := int64(t.Length); w == 0 || l.V.Int < w {
				t = types.VarcharType(int(max(min(l.V.Int, math.MaxInt32), 0)))
			}
		}
		fn := plan.FnLeft
		if name == ast.Right {
			fn = plan.FnRight
		}
		return &plan.Call{Fn: fn, Args: []plan.Expr{s, n}, T: t}, nil
	case ast.Replace:
		a, err := bindArgs(3, 3)
		if err != nil {
			return nil, err
		}
		for i := range a {
			if a[i], err = b.toString(a[i], text); err != nil {
				return nil, err
			}
		}
		// The result can grow by len(to)-len(from) per occurrence: unbounded unless a
		// replacement is known not to lengthen the string.
		t := types.VarcharType(0)
		from, fok := a[1].(*plan.Literal)
		to, tok := a[2].(*plan.Literal)
		if fok && tok && !from.V.Null && !to.V.Null && utf8.RuneCountInString(to.V.Str) <= utf8.RuneCountInString(from.V.Str) {
			t = types.VarcharType(a[0].Type().Length)
		}
		return &plan.Call{Fn: plan.FnReplace, Args: a, T: t}, nil
	case ast.Reverse:
		s, _, err := strArgs(1, 1)
		if err != nil {
			return nil, err
		}
		return &plan.Call{Fn: plan.FnReverse, Args: []plan.Expr{s}, T: types.VarcharType(s.Type().Length)}, nil
	case ast.Strcmp:
		a, err := bindArgs(2, 2)
		if err != nil {
			return nil, err
		}
		for i := range a {
			if a[i], err = b.toString(a[i], text); err != nil {
				return nil, err
			}
		}
		return &plan.Call{Fn: plan.FnStrcmp, Args: a, T: types.Int32Type}, nil
	case ast.Sign:
		v, _, err := numArgs(1, 1)
		if err != nil {
			return nil, err
		}
		switch t := v.Type(); t.Kind {
		case types.Bool, types.Int32, types.Null:
			v = b.castExpr(v, types.Int64Type)
		case types.Decimal:
			// MySQL's SIGN reads a decimal as a double, so it sees a quotient's digits
			// beyond its scale: SIGN(1/3 - 0.3333) is 1. The CAST reads them unrounded.
			if v, err = b.castTo(v, types.Float64Type, text); err != nil {
				return nil, err
			}
		}
		return &plan.Call{Fn: plan.FnSign, Args: []plan.Expr{v}, T: types.Int64Type}, nil
	case ast.Sqrt, ast.Exp, ast.Ln, ast.Log, ast.Log2, ast.Log10, ast.Pow, ast.Power:
		lo, hi := 1, 1
		switch name {
		case ast.Pow, ast.Power:
			lo, hi = 2, 2
		case ast.Log:
			hi = 2
		}
		a, err := bindArgs(lo, hi)
		if err != nil {
			return nil, err
		}
		for i := range a {
			if a[i], err = b.numeric(a[i], strings.ToUpper(name), text); err != nil {
				return nil, err
			}
			// A CAST to DOUBLE reads a decimal quotient unrounded, as MySQL's val_real
			// does: exp(x/100000) sees every digit of the quotient, not its DECIMAL
			// scale. A literal number stays as it is (the kernels and the folder read it as
			// a double), so an error names it as written: 'exp(1000)'.
			if _, lit := a[i].(*plan.Literal); !lit || a[i].Type().Kind == types.Bool || a[i].Type().Kind == types.Null {
				if a[i], err = b.castTo(a[i], types.Float64Type, text); err != nil {
					return nil, err
				}
			}
		}
		if name == ast.Log && len(a) == 2 {
			// LOG(b, x) is LN(x) / LN(b), as MySQL computes it: NULL for b <= 0, for b = 1
			// (a division by zero) and for x <= 0.
			return &plan.Call{Fn: plan.FnDiv, Args: []plan.Expr{
				&plan.Call{Fn: plan.FnLn, Args: a[1:], T: types.Float64Type},
				&plan.Call{Fn: plan.FnLn, Args: a[:1], T: types.Float64Type},
			}, T: types.Float64Type}, nil
		}
		fn := map[string]plan.Func{ast.Sqrt: plan.FnSqrt, ast.Exp: plan.FnExp, ast.Ln: plan.FnLn,
			ast.Log: plan.FnLn, ast.Log2: plan.FnLog2, ast.Log10: plan.FnLog10, ast.Pow: plan.FnPow,
			ast.Power: plan.FnPow}[name]
		return &plan.Call{Fn: fn, Args: a, T: types.Float64Type}, nil
	case ast.Substring, ast.Substr, ast.Mid:
		s, a, err := strArgs(2, 3)
		if err != nil {
			return nil, err
		}
		call := &plan.Call{Fn: plan.FnSubstring, Args: []plan.Expr{s}, T: types.VarcharType(s.Type().Length)}
		for i, n := range a[1:] {
			if !n.Type().IsInteger() && n.Type().Kind != types.Null {
				if n, err = b.castTo(n, types.Int64Type, text); err != nil {
					return nil, err
				}
			} else {
				n = b.castExpr(n, types.Int64Type)
			}
			call.Args = append(call.Args, n)
			if l, ok := n.(*plan.Literal); ok && i == 1 && !l.V.Null && l.V.Int >= 0 {
				// The result is no longer than the length asked for, nor than the string.
				if w := int64(s.Type().Length); w == 0 || l.V.Int < w {
					call.T = types.VarcharType(int(min(l.V.Int, math.MaxInt32)))
				}
			}
		}
		return call, nil
	case ast.Upper, ast.Ucase, ast.Lower, ast.Lcase:
		s, _, err := strArgs(1, 1)
		if err != nil {
			return nil, err
		}
		fn := plan.FnUpper
		if name == ast.Lower || name == ast.Lcase {
			fn = plan.FnLower
		}
		return &plan.Call{Fn: fn, Args: []plan.Expr{s}, T: types.VarcharType(s.Type().Length)}, nil
	case ast.Length, ast.OctetLength, ast.CharLength, ast.CharacterLength:
		s, _, err := strArgs(1, 1)
		if err != nil {
			return nil, err
		}
		fn := plan.FnLength
		if name == ast.CharLength || name == ast.CharacterLength {
			fn = plan.FnCharLength
		}
		return &plan.Call{Fn: fn, Args: []plan.Expr{s}, T: types.Int64Type}, nil
	case ast.Concat:
		if len(x.Args) == 0 {
			return nil, argc(1, 1)
		}
		a, err := args(0)
		if err != nil {
			return nil, err
		}
		call := &plan.Call{Fn: plan.FnConcat}
		n := 0
		for _, e := range a {
			s, err := b.toString(e, text)
			if err != nil {
				return nil, err
			}
			call.Args = append(call.Args, s)
			n += s.Type().Length
		}
		call.T = types.VarcharType(n)
		return call, nil
	case ast.Coalesce, ast.Ifnull, ast.Greatest, ast.Least:
		lo, hi := 1, 1<<16
		switch name {
		case ast.Ifnull:
			lo, hi = 2, 2
		case ast.Greatest, ast.Least:
			lo = 2
		}
		a, err := bindArgs(lo, hi)
		if err != nil {
			return nil, err
		}
		t, err := b.unify(a, strings.ToUpper(name), text)
		if err != nil {
			return nil, err
		}
		fn := map[string]plan.Func{ast.Coalesce: plan.FnCoalesce, ast.Ifnull: plan.FnCoalesce,
			ast.Greatest: plan.FnGreatest, ast.Least: plan.FnLeast}[name]
		return &plan.Call{Fn: fn, Args: a, T: t}, nil
	case ast.Nullif:
		a, err := bindArgs(2, 2)
		if err != nil {
			return nil, err
		}
		eq, err := b.compare(plan.FnEq, a[0], a[1], text)
		if err != nil {
			return nil, err
		}
		return &plan.Case{Whens: []plan.When{{Cond: eq, Then: plan.Lit(types.NullValue(a[0].Type()))}}, Else: a[0], T: a[0].Type()}, nil
	case ast.If:
		a, err := bindArgs(3, 3)
		if err != nil {
			return nil, err
		}
		cond, err := b.toBool(a[0], exprText(x.Args[0]))
		if err != nil {
			return nil, err
		}
		t, err := b.commonType(a[1:], "IF", text)
		if err != nil {
			return nil, err
		}
		then, err := b.castTo(a[1], t, text)
		if err != nil {
			return nil, err
		}
		els, err := b.castTo(a[2], t, text)
		if err != nil {
			return nil, err
		}
		return &plan.Case{Whens: []plan.When{{Cond: cond, Then: then}}, Else: els, T: t}, nil
	case ast.Abs:
		v, _, err := numArgs(1, 1)
		if err != nil {
			return nil, err
		}
		t := v.Type()
		if t.Kind == types.Bool || t.Kind == types.Int32 || t.Kind == types.Null {
			v, t = b.castExpr(v, types.Int64Type), types.Int64Type
		}
		return &plan.Call{Fn: plan.FnAbs, Args: []plan.Expr{v}, T: t}, nil
	case ast.Round, ast.Truncate:
		fn, lo := plan.FnRound, 1
		if name == ast.Truncate {
			fn, lo = plan.FnTruncate, 2
		}
		v, a, err := numArgs(lo, 2)
		if err != nil {
			return nil, err
		}
		t := v.Type()
		digits := 0
		if len(a) == 2 {
			l, ok := a[1].(*plan.Literal)
			if !ok || !(l.V.Type.IsInteger() || l.V.Null) {
				return nil, sqlerr.Unsupported(strings.ToUpper(name) + " with a non-constant number of digits")
			}
			if l.V.Null {
				return plan.Lit(types.NullValue(t)), nil
			}
			digits = int(max(min(l.V.Int, 100), -100))
		}
		switch t.Kind {
		case types.Decimal:
			// MySQL: keep min(max(d,0), s) places; ROUND may carry into a new integer digit.
			s := max(min(digits, t.Scale), 0)
			p := t.Precision - t.Scale + s
			if fn == plan.FnRound && digits < t.Scale {
				p++
			}
			t = types.Dec(min(max(p, 1), types.MaxPrecision), s)
		case types.Bool, types.Int32, types.Null:
			v, t = b.castExpr(v, types.Int64Type), types.Int64Type
		}
		return &plan.Call{Fn: fn, Args: []plan.Expr{v, plan.Lit(types.IntValue(int64(digits)))}, T: t}, nil
	case ast.Floor, ast.Ceil, ast.Ceiling:
		v, _, err := numArgs(1, 1)
		if err != nil {
			return nil, err
		}
		t := v.Type()
		switch {
		case t.Kind == types.Float64:
		case t.Kind == types.Decimal && t.Precision-t.Scale > 17:
			// MySQL: BIGINT unless the integer part may not fit.
			t = types.Dec(min(t.Precision-t.Scale+1, types.MaxPrecision), 0)
		case t.Kind == types.Decimal:
			t = types.Int64Type
		default:
			v, t = b.castExpr(v, types.Int64Type), types.Int64Type
		}
		fn := plan.FnFloor
		if name != ast.Floor {
			fn = plan.FnCeil
		}
		return &plan.Call{Fn: fn, Args: []plan.Expr{v}, T: t}, nil
	case ast.Trim, ast.LTrim, ast.RTrim:
		return b.trim(x, name, ctx)
	case ast.DateDiff:
		a, err := bindArgs(2, 2)
		if err != nil {
			return nil, err
		}
		for i := range a {
			if a[i], err = b.dateOperand(a[i], text); err != nil {
				return nil, err
			}
		}
		return &plan.Call{Fn: plan.FnDateDiff, Args: a, T: types.Int64Type}, nil
	case ast.Sleep:
		// SLEEP(seconds): 0 after waiting, once for every row it is evaluated on (see
		// plan.Func.Volatile); the seconds are read as a double, as MySQL's val_real does.
		v, _, err := numArgs(1, 1)
		if err != nil {
			return nil, err
		}
		if v, err = b.castTo(v, types.Float64Type, text); err != nil {
			return nil, err
		}
		return &plan.Call{Fn: plan.FnSleep, Args: []plan.Expr{v}, T: types.Int64Type}, nil
	case ast.Database, ast.Schema:
		if err := argc(0, 0); err != nil {
			return nil, err
		}
		if db := b.env.Database(); db != "" {
			return plan.Lit(types.StringValue(db)), nil
		}
		return plan.Lit(types.NullValue(types.VarcharType(0))), nil
	case ast.Version:
		if err := argc(0, 0); err != nil {
			return nil, err
		}
		if v, ok := b.env.SystemVariable("version", false); ok {
			return plan.Lit(v), nil
		}
		return plan.Lit(types.StringValue("8.0.0-colink")), nil
	}
	if name == "interval" {
		// TiDB's parser reads "d + INTERVAL (expr) DAY" as d + INTERVAL(expr) with the
		// unit taken for a column alias; MySQL's grammar reads an interval.
		return nil, sqlerr.New(sqlerr.ErNotSupportedYet, "INTERVAL with a parenthesized amount, or the INTERVAL() function, is not supported: write INTERVAL expr unit without parentheses around expr")
	}
	db := b.env.Database()
	if db == "" {
		return nil, sqlerr.New(sqlerr.ErSPDoesNotExist, "FUNCTION %s does not exist", x.FnName.O)
	}
	return nil, sqlerr.New(sqlerr.ErSPDoesNotExist, "FUNCTION %s.%s does not exist", db, x.FnName.O)
}

// intArg makes a BIGINT count of n (LEFT, RIGHT), as SUBSTRING's positions are.
func (b *Binder) intArg(n plan.Expr, text string) (plan.Expr, error) {
	if !n.Type().IsInteger() && n.Type().Kind != types.Null {
		return b.castTo(n, types.Int64Type, text)
	}
	return b.castExpr(n, types.Int64Type), nil
}

// unify converts every value of es to their common type (in place) and returns it.
func (b *Binder) unify(es []plan.Expr, what, text string) (types.Type, error) {
	t, err := b.commonType(es, what, text)
	if err != nil {
		return types.Type{}, err
	}
	for i := range es {
		if es[i], err = b.castTo(es[i], t, text); err != nil {
			return types.Type{}, err
		}
	}
	return t, nil
}

// trim binds TRIM([BOTH|LEADING|TRAILING] [remstr] FROM s), LTRIM(s) and RTRIM(s).
func (b *Binder) trim(x *ast.FuncCallExpr, name string, ctx *exprCtx) (plan.Expr, error) {
	text := exprText(x)
	fn := map[string]plan.Func{ast.Trim: plan.FnTrim, ast.LTrim: plan.FnLTrim, ast.RTrim: plan.FnRTrim}[name]
	hi := 1
	if name == ast.Trim {
		hi = 3
	}
	if len(x.Args) < 1 || len(x.Args) > hi {
		return nil, sqlerr.New(sqlerr.ErWrongParamcountToFunc, "Incorrect parameter count in the call to native function '%s'", x.FnName.O)
	}
	call := &plan.Call{Fn: fn}
	for i, a := range x.Args {
		if d, ok := a.(*ast.TrimDirectionExpr); ok {
			switch d.Direction {
			case ast.TrimLeading:
				call.Fn = plan.FnLTrim
			case ast.TrimTrailing:
				call.Fn = plan.FnRTrim
			}
			continue
		}
		e, err := b.expr(a, ctx)
		if err != nil {
			return nil, err
		}
		if e, err = b.toString(e, text); err != nil {
			return nil, err
		}
		if i == 0 {
			call.T = types.VarcharType(e.Type().Length)
		}
		call.Args = append(call.Args, e)
	}
	if len(call.Args) == 2 {
		// TRIM(LEADING FROM s) arrives with a space as remstr: the default.
		if l, ok := call.Args[1].(*plan.Literal); ok && !l.V.Null && l.V.Str == " " {
			call.Args = call.Args[:1]
		}
	}
	return call, nil
}

// dateOperand makes a DATE of e: dates as they are, a string literal parsed.
func (b *Binder) dateOperand(e plan.Expr, text string) (plan.Expr, error) {
	t := e.Type()
	switch {
	case t.Kind == types.Date:
		return e, nil
	case t.Kind == types.Null:
		return plan.Lit(types.NullValue(types.DateType)), nil
	case t.IsString():
		return b.castTo(e, types.DateType, text)
	}
	return nil, sqlerr.New(sqlerr.ErWrongArguments, "Incorrect arguments to a date function: '%s' is %s, not a date", text, t)
}

func (b *Binder) dateFunc(fn plan.Func, arg plan.Expr, text string) (plan.Expr, error) {
	d, err := b.dateOperand(arg, text)
	if err != nil {
		return nil, err
	}
	return &plan.Call{Fn: fn, Args: []plan.Expr{d}, T: types.Int32Type}, nil
}

// dateArith binds DATE_ADD/DATE_SUB (and "date ± INTERVAL n unit") with a day, week,
// month, quarter or year unit, as an addition of days or months.
func (b *Binder) dateArith(x *ast.FuncCallExpr, sub bool, ctx *exprCtx) (plan.Expr, error) {
	text := exprText(x)
	unit, ok := x.Args[2].(*ast.TimeUnitExpr)
	if !ok {
		return nil, sqlerr.Unsupported("date arithmetic without a unit")
	}
	fn, factor := plan.FnAddDays, int64(1)
	switch unit.Unit {
	case ast.TimeUnitDay:
	case ast.TimeUnitWeek:
		factor = 7
	case ast.TimeUnitMonth:
		fn = plan.FnAddMonths
	case ast.TimeUnitQuarter:
		fn, factor = plan.FnAddMonths, 3
	case ast.TimeUnitYear:
		fn, factor = plan.FnAddMonths, 12
	default:
		return nil, sqlerr.Unsupported("INTERVAL … " + unit.Unit.String() + " (dates have no time of day)")
	}
	d, err := b.expr(x.Args[0], ctx)
	if err != nil {
		return nil, err
	}
	if d, err = b.dateOperand(d, text); err != nil {
		return nil, err
	}
	n, err := b.expr(x.Args[1], ctx)
	if err != nil {
		return nil, err
	}
	if l, ok := n.(*plan.Literal); ok {
		// The interval's amount is usually a quoted literal: INTERVAL '90' DAY.
		v, err := types.Convert(l.V, types.Int64Type)
		if err != nil && l.V.Type.IsNumeric() {
			// A number beyond BIGINT (INTERVAL 1e30 DAY) leaves the DATE range either way:
			// saturate it so the result is NULL, as MySQL's is.
			v, err = types.Value{Type: types.Int64Type, Int: math.MaxInt64}, nil
			if f, ferr := types.Convert(l.V, types.Float64Type); ferr == nil && f.Float < 0 {
				v.Int = math.MinInt64
			}
		}
		if err != nil {
			return nil, sqlerr.New(sqlerr.ErTruncatedWrongValue, "Truncated incorrect INTEGER value: '%s'", l.V.Text())
		}
		if !v.Null {
			v.Int = intervalCount(v.Int, factor, sub)
		}
		n = plan.Lit(v)
	} else {
		if !n.Type().IsInteger() {
			return nil, sqlerr.Unsupported("an INTERVAL whose amount is not an integer")
		}
		n = b.castExpr(n, types.Int64Type)
		if factor != 1 || sub {
			// Scaling or negating a column amount must not overflow BIGINT: MySQL's date
			// is NULL for any amount that leaves the DATE range, as the constant path's
			// (intervalCount saturates). Clamping to ±intervalClamp keeps every such
			// amount out of range and makes the arithmetic below safe.
			n = &plan.Call{Fn: plan.FnLeast, Args: []plan.Expr{
				&plan.Call{Fn: plan.FnGreatest, Args: []plan.Expr{n, plan.Lit(types.IntValue(-intervalClamp))}, T: types.Int64Type},
				plan.Lit(types.IntValue(intervalClamp)),
			}, T: types.Int64Type}
		}
		if factor != 1 {
			n = &plan.Call{Fn: plan.FnMul, Args: []plan.Expr{n, plan.Lit(types.IntValue(factor))}, T: types.Int64Type}
		}
		if sub {
			n = &plan.Call{Fn: plan.FnNeg, Args: []plan.Expr{n}, T: types.Int64Type}
		}
	}
	return &plan.Call{Fn: fn, Args: []plan.Expr{d, n}, T: types.DateType}, nil
}

// cast binds CAST(x AS type) for the types the engine carries.
func (b *Binder) cast(x *ast.FuncCastExpr, ctx *exprCtx) (plan.Expr, error) {
	v, err := b.expr(x.Expr, ctx)
	if err != nil {
		return nil, err
	}
	text := exprText(x)
	var t types.Type
	tp := x.Tp
	switch tp.GetType() {
	case mysql.TypeNewDecimal:
		p, s := tp.GetFlen(), tp.GetDecimal()
		if p <= 0 {
			p = 10
		}
		if s < 0 {
			s = 0
		}
		if p > types.MaxPrecision {
			return nil, sqlerr.New(1426, "Too-big precision %d specified for '%s'. Maximum is %d.", p, exprText(x.Expr), types.MaxPrecision)
		}
		t = types.Dec(p, s)
	case mysql.TypeLonglong, mysql.TypeLong:
		if mysql.HasUnsignedFlag(tp.GetFlag()) {
			// Reading it as SIGNED would turn -1 into -1 instead of 18446744073709551615.
			return nil, sqlerr.Unsupported("CAST(… AS UNSIGNED): colink has no BIGINT UNSIGNED; use CAST(… AS SIGNED)")
		}
		t = types.Int64Type
	case mysql.TypeDouble, mysql.TypeFloat:
		t = types.Float64Type
	case mysql.TypeDate:
		t = types.DateType
	case mysql.TypeVarString, mysql.TypeString, mysql.TypeVarchar:
		n := tp.GetFlen()
		if n < 0 {
			n = 0
		}
		t = types.VarcharType(n)
		if v.Type().IsString() {
			return v, nil
		}
	default:
		return nil, sqlerr.Unsupported("CAST to " + tp.String())
	}
	if v.Type().Kind == types.Date && t.IsNumeric() || v.Type().IsNumeric() && t.Kind == types.Date {
		return nil, sqlerr.Unsupported("CAST between dates and numbers")
	}
	if l, ok := v.(*plan.Literal); ok && t.Kind == types.Date && l.V.Type.IsString() {
		// MySQL's CAST of a string that is no date is NULL (with a warning), as the
		// executor's CAST of string data is; only a DATE '…' literal is an error.
		if _, err := types.Convert(l.V, t); err != nil {
			return plan.Lit(types.NullValue(t)), nil
		}
	}
	return b.castTo(v, t, text)
}

// intervalCount returns n×factor days or months, negated for DATE_SUB. A count beyond
// int64 saturates instead of wrapping: any count that large leaves the DATE range, so the
// result is NULL, as MySQL's is, rather than a wrapped date.
// intervalClamp bounds a column INTERVAL amount before it is scaled to days or months:
// 2^32 days (or months) is far beyond the span of DATE (0001..9999, 3,652,059 days), and
// 2^32 × 12 still fits BIGINT.
const intervalClamp = 1 << 32

func intervalCount(n, factor int64, sub bool) int64 {
	if sub {
		factor = -factor
	}
	r := n * factor
	if n != 0 && (r/n != factor || n == -1 && factor == math.MinInt64 || n == math.MinInt64 && factor == -1) {
		if (n < 0) != (factor < 0) {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return r
}
