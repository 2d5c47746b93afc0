package bind

import (
	"math"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/colinkdb/colink/exec/fn"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/civil"
	"github.com/colinkdb/colink/sql/lower"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// funcCall binds a call of a function. The functions of the registry (exec/fn) are bound
// from their entries (call); the switch holds the forms that are syntax: DATE '…', date ±
// INTERVAL and its function spellings, EXTRACT's unit, TRIM's directions, LOG's two forms,
// COALESCE and IFNULL (an operator: lazy), IF and NULLIF (CASE), and what the session
// answers (DATABASE(), VERSION(), CONNECTION_ID(), and the statement's time: NOW(),
// CURRENT_TIMESTAMP, CURDATE(), UNIX_TIMESTAMP()).
func (b *Binder) funcCall(x *ast.FuncCallExpr, ctx *exprCtx) (plan.Expr, error) {
	name := x.FnName.L
	text := exprText(x)
	argc := func(lo, hi int) error {
		if len(x.Args) < lo || (hi >= 0 && len(x.Args) > hi) {
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
	// bindArgs checks that there are lo..hi arguments (hi < 0: any) and binds them.
	bindArgs := func(lo, hi int) ([]plan.Expr, error) {
		if err := argc(lo, hi); err != nil {
			return nil, err
		}
		return args(0)
	}
	switch name {
	case ast.DateLiteral, ast.TimestampLiteral:
		// DATE '…' and TIMESTAMP '…': the string is read as the type, or it is 1525.
		kind, t := "DATE", types.DateType
		if name == ast.TimestampLiteral {
			kind, t = "DATETIME", types.DatetimeType(0)
		}
		var s string
		if v, ok := x.Args[0].(ast.ValueExpr); ok {
			s, ok = v.GetValue().(string)
			if !ok {
				return nil, sqlerr.New(sqlerr.ErWrongValue, "Incorrect %s value: '%s'", kind, text)
			}
		}
		if t.Kind == types.Date {
			d, err := types.ParseDate(s)
			if err != nil {
				return nil, sqlerr.New(sqlerr.ErWrongValue, "Incorrect %s value: '%s'", kind, s)
			}
			return plan.Lit(types.DateValue(d)), nil
		}
		us, fsp, err := types.ParseDatetime(s)
		if err != nil {
			return nil, sqlerr.New(sqlerr.ErWrongValue, "Incorrect %s value: '%s'", kind, s)
		}
		return plan.Lit(types.DatetimeValue(us, fsp)), nil
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
		// The date parts are the registry's family "extract", named by their units.
		f, ok := fn.Member("extract", strings.ToLower(unit.Unit.String()))
		if !ok {
			return nil, sqlerr.Unsupported("EXTRACT(" + unit.Unit.String() + ")")
		}
		a, err := args(1)
		if err != nil {
			return nil, err
		}
		return b.apply(f, name, a, text)
	case ast.Trim, ast.LTrim, ast.RTrim:
		return b.trim(x, name, ctx)
	case ast.Log:
		a, err := bindArgs(1, 2)
		if err != nil {
			return nil, err
		}
		ln := fn.Named("ln")
		if len(a) == 1 {
			return b.apply(ln, name, a, text)
		}
		// LOG(b, x) is LN(x) / LN(b), as MySQL computes it: NULL for b <= 0, for b = 1 (a
		// division by zero) and for x <= 0.
		base, err := b.apply(ln, name, a[:1], text)
		if err != nil {
			return nil, err
		}
		v, err := b.apply(ln, name, a[1:], text)
		if err != nil {
			return nil, err
		}
		return &plan.Call{Fn: plan.FnDiv, Args: []plan.Expr{v, base}, T: types.Float64Type}, nil
	case ast.Coalesce, ast.Ifnull:
		lo, hi := 1, 1<<16
		if name == ast.Ifnull {
			lo, hi = 2, 2
		}
		a, err := bindArgs(lo, hi)
		if err != nil {
			return nil, err
		}
		t, err := b.unify(a, resultType, strings.ToUpper(name), text)
		if err != nil {
			return nil, err
		}
		return &plan.Call{Fn: plan.FnCoalesce, Args: a, T: t}, nil
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
		t, err := b.commonType(a[1:], resultType, "IF", text)
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
	case ast.Database, ast.Schema:
		if err := argc(0, 0); err != nil {
			return nil, err
		}
		if db := b.env.Database(); db != "" {
			return plan.Lit(types.StringValue(db)), nil
		}
		return plan.Lit(types.NullValue(types.VarcharType(0))), nil
	case ast.Now, ast.CurrentTimestamp, ast.LocalTime, ast.LocalTimestamp:
		if err := argc(0, 1); err != nil {
			return nil, err
		}
		fsp := 0
		if len(x.Args) == 1 {
			v, ok := x.Args[0].(ast.ValueExpr)
			n, isInt := int64(0), false
			if ok {
				n, isInt = v.GetValue().(int64)
			}
			if !isInt || n < 0 {
				return nil, sqlerr.New(sqlerr.ErParse, "You have an error in your SQL syntax: %s takes a precision from 0 to 6", x.FnName.O)
			}
			if n > 6 {
				return nil, sqlerr.New(sqlerr.ErTooBigPrecision, "Too-big precision %d specified for '%s'. Maximum is 6.", n, x.FnName.L)
			}
			fsp = int(n)
		}
		return plan.Lit(types.DatetimeValue(wallMicros(b.statementTime()), fsp)), nil
	case ast.Curdate, ast.CurrentDate:
		if err := argc(0, 0); err != nil {
			return nil, err
		}
		y, m, d := b.statementTime().Date()
		return plan.Lit(types.DateValue(int64(vec.DaysFromCivil(int32(y), int32(m), int32(d))))), nil
	case ast.UnixTimestamp:
		if err := argc(0, 1); err != nil {
			return nil, err
		}
		if len(x.Args) == 0 {
			return plan.Lit(types.IntValue(b.statementTime().Unix())), nil
		}
		// UNIX_TIMESTAMP(d) is the registry's, below.
	case ast.User, ast.CurrentUser, ast.SessionUser, ast.SystemUser:
		if err := argc(0, 0); err != nil {
			return nil, err
		}
		a, ok := b.env.(AccountEnv)
		if !ok {
			return nil, sqlerr.Unsupported(strings.ToUpper(name) + "() outside a client session")
		}
		return plan.Lit(types.StringValue(a.Account())), nil
	case ast.ConnectionID:
		if err := argc(0, 0); err != nil {
			return nil, err
		}
		v, ok := b.env.SystemVariable("pseudo_thread_id", false)
		if !ok {
			return nil, sqlerr.Unsupported("CONNECTION_ID() outside a client session")
		}
		return plan.Lit(v), nil
	case ast.Version:
		if err := argc(0, 0); err != nil {
			return nil, err
		}
		if v, ok := b.env.SystemVariable("version", false); ok {
			return plan.Lit(v), nil
		}
		return plan.Lit(types.StringValue("8.0.0-colink")), nil
	}
	if f := fn.Lookup(name); f != nil {
		a, err := bindArgs(f.MinArgs, f.MaxArgs)
		if err != nil {
			return nil, err
		}
		return b.apply(f, name, a, text)
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

// statementTime is the time the statement began, which NOW(), CURRENT_TIMESTAMP, CURDATE()
// and UNIX_TIMESTAMP() read, in the process's time zone (MySQL's time_zone SYSTEM): the
// session's @@timestamp, which exemgr sets when the statement starts (as MySQL does), or,
// for a session without one, the moment the binder first asks. Either way every call of
// one statement, every row, gets the same value; it is bound as a literal, afresh for each
// statement (colink keeps no plan across statements).
func (b *Binder) statementTime() time.Time {
	if b.now.IsZero() {
		b.now = time.Now()
		if v, ok := b.env.SystemVariable("timestamp", false); ok && !v.Null && v.Type.Kind == types.Float64 {
			b.now = time.UnixMicro(int64(math.Round(v.Float * 1e6)))
		}
	}
	return b.now
}

// wallMicros is t's wall-clock time in its own location as a DATETIME's microseconds
// (NOW() is the session's local time, as MySQL's with time_zone SYSTEM).
func wallMicros(t time.Time) int64 {
	y, m, d := t.Date()
	h, mi, s := t.Clock()
	return civil.Days(y, int(m), d)*civil.MicrosPerDay + int64(h*3600+mi*60+s)*civil.MicrosPerSecond + int64(t.Nanosecond()/1000)
}

// apply binds a call of registry function f over bound arguments a, called by the SQL name
// called (which MySQL's messages use): each argument is converted as its class says, and
// the entry's typing rule gives the call's type.
func (b *Binder) apply(f *fn.Func, called string, a []plan.Expr, text string) (plan.Expr, error) {
	what := strings.ToUpper(called)
	for i, e := range a {
		// A mode is checked first: one not implemented is the error, whatever the others.
		if l, ok := e.(*plan.Literal); f.Class(i) == fn.Mode && (!ok || l.V.Null || !l.V.Type.IsInteger() || l.V.Int != 0) {
			return nil, sqlerr.Unsupported(what + "(date, mode) with a mode other than 0")
		}
	}
	var compared, widen []int // positions in out
	out := a[:0:0]
	for i, e := range a {
		switch f.Class(i) {
		case fn.Mode:
			continue // 0, the default of default_week_format (checked above)
		case fn.Compared:
			compared = append(compared, len(out))
		case fn.Places:
			l, ok := e.(*plan.Literal)
			if !ok || !(l.V.Type.IsInteger() || l.V.Null) {
				return nil, sqlerr.Unsupported(what + " with a non-constant number of digits")
			}
			if l.V.Null {
				return plan.Lit(types.NullValue(out[0].Type())), nil // the number's type
			}
			e = plan.Lit(types.IntValue(max(min(l.V.Int, 100), -100)))
		case fn.Number:
			widen = append(widen, len(out)) // after the Places: a NULL call has the number's type
			fallthrough
		default:
			var err error
			if e, err = b.argument(f.Class(i), e, what, text); err != nil {
				return nil, err
			}
		}
		out = append(out, e)
	}
	for i := len(a); i < len(f.Args); i++ {
		if f.Args[i] == fn.Places {
			out = append(out, plan.Lit(types.IntValue(0))) // omitted: 0, written out
		}
	}
	for _, i := range widen {
		if k := out[i].Type().Kind; k == types.Bool || k == types.Int32 || k == types.Null {
			out[i] = b.castExpr(out[i], types.Int64Type)
		}
	}
	var common types.Type
	if len(compared) > 0 {
		es := make([]plan.Expr, len(compared))
		for k, i := range compared {
			es[k] = out[i]
		}
		var err error
		if common, err = b.unify(es, types.Common, what, text); err != nil {
			return nil, err
		}
		for k, i := range compared {
			out[i] = es[k]
		}
	}
	args := make([]fn.Arg, len(out))
	for i, e := range out {
		var err error
		if args[i], err = fnArg(e); err != nil {
			return nil, err
		}
	}
	sig, err := f.Sig(args)
	if err != nil {
		return nil, sqlerr.New(sqlerr.ErUnknown, "internal error typing '%s': %v", text, err)
	}
	t, _ := lower.SQLType(sig.Result.Type, sig.Result.Len)
	switch {
	case sig.Same >= 0:
		t = out[sig.Same].Type()
	case sig.Same == fn.SameCompared:
		t = common
	}
	return &plan.Call{Fn: plan.Named(f), Args: out, T: t}, nil
}

// argument converts one argument as its class c says; what names the function in errors.
// (Compared, Places and Mode concern the whole call: apply does them.)
func (b *Binder) argument(c fn.Class, e plan.Expr, what, text string) (plan.Expr, error) {
	switch c {
	case fn.String:
		return b.toString(e, text)
	case fn.Number:
		return b.numeric(e, what, text) // BOOLEAN, INT and NULL widen after the call's Places
	case fn.Double, fn.Seconds:
		e, err := b.numeric(e, what, text)
		if err != nil {
			return nil, err
		}
		// A CAST to DOUBLE reads a decimal quotient unrounded, as MySQL's val_real does:
		// exp(x/100000) sees every digit of the quotient, not its DECIMAL scale. A Double's
		// literal number stays as it is (the kernels read it as a double), so an error
		// names it as written: 'exp(1000)'.
		if l, lit := e.(*plan.Literal); c == fn.Seconds || !lit || l.V.Type.Kind == types.Bool || l.V.Type.Kind == types.Null {
			return b.castTo(e, types.Float64Type, text)
		}
		return e, nil
	case fn.IntOrDouble:
		e, err := b.numeric(e, what, text)
		if err != nil {
			return nil, err
		}
		switch e.Type().Kind {
		case types.Bool, types.Int32, types.Null:
			return b.castExpr(e, types.Int64Type), nil
		case types.Decimal:
			// MySQL reads a decimal as a double here, so it sees a quotient's digits beyond
			// its scale: SIGN(1/3 - 0.3333) is 1. The CAST reads them unrounded.
			return b.castTo(e, types.Float64Type, text)
		}
		return e, nil
	case fn.Count:
		return b.intArg(e, text)
	case fn.Date:
		return b.dateOperand(e, text)
	case fn.Datetime:
		return b.datetimeOperand(e, text)
	}
	return nil, sqlerr.New(sqlerr.ErUnknown, "internal error: argument class %d of '%s'", c, text)
}

// fnArg describes a bound argument to a typing rule.
func fnArg(e plan.Expr) (fn.Arg, error) {
	t := e.Type()
	vt, err := lower.Type(t)
	if err != nil {
		return fn.Arg{}, err
	}
	a := fn.Arg{Type: fn.Type{Type: vt, Len: t.Length}}
	if l, ok := e.(*plan.Literal); ok {
		d, err := lower.Datum(l.V)
		if err != nil {
			return fn.Arg{}, err
		}
		a.Const = &d
	}
	return a, nil
}

// intArg makes a BIGINT count of n (LEFT, RIGHT), as SUBSTRING's positions are.
func (b *Binder) intArg(n plan.Expr, text string) (plan.Expr, error) {
	if !n.Type().IsInteger() && n.Type().Kind != types.Null {
		return b.castTo(n, types.Int64Type, text)
	}
	return b.castExpr(n, types.Int64Type), nil
}

// unify converts every value of es to their common type by merge (in place) and returns
// it.
func (b *Binder) unify(es []plan.Expr, merge func(a, b types.Type) (types.Type, bool), what, text string) (types.Type, error) {
	t, err := b.commonType(es, merge, what, text)
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

// trim binds TRIM([BOTH|LEADING|TRAILING] [remstr] FROM s), LTRIM(s) and RTRIM(s): the
// direction picks the registry's trim, ltrim or rtrim.
func (b *Binder) trim(x *ast.FuncCallExpr, name string, ctx *exprCtx) (plan.Expr, error) {
	text := exprText(x)
	hi := 1
	if name == ast.Trim {
		hi = 3
	}
	if len(x.Args) < 1 || len(x.Args) > hi {
		return nil, sqlerr.New(sqlerr.ErWrongParamcountToFunc, "Incorrect parameter count in the call to native function '%s'", x.FnName.O)
	}
	which := name
	var args []plan.Expr
	for _, a := range x.Args {
		if d, ok := a.(*ast.TrimDirectionExpr); ok {
			switch d.Direction {
			case ast.TrimLeading:
				which = ast.LTrim
			case ast.TrimTrailing:
				which = ast.RTrim
			}
			continue
		}
		e, err := b.expr(a, ctx)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	e, err := b.apply(fn.Named(which), name, args, text)
	if err != nil {
		return nil, err
	}
	if call, ok := e.(*plan.Call); ok && len(call.Args) == 2 {
		// TRIM(LEADING FROM s) arrives with a space as remstr: the default.
		if l, ok := call.Args[1].(*plan.Literal); ok && !l.V.Null && l.V.Str == " " {
			call.Args = call.Args[:1]
		}
	}
	return e, nil
}

// dateOperand makes a DATE of e: dates as they are, a datetime's day, a string parsed.
func (b *Binder) dateOperand(e plan.Expr, text string) (plan.Expr, error) {
	t := e.Type()
	switch {
	case t.Kind == types.Date:
		return e, nil
	case t.Kind == types.Datetime:
		return b.castTo(e, types.DateType, text)
	case t.Kind == types.Null:
		return plan.Lit(types.NullValue(types.DateType)), nil
	case t.IsString():
		return b.castTo(e, types.DateType, text)
	}
	return nil, sqlerr.New(sqlerr.ErWrongArguments, "Incorrect arguments to a date function: '%s' is %s, not a date", text, t)
}

// dateArith binds DATE_ADD/DATE_SUB (and "date ± INTERVAL n unit") with a day, week,
// month, quarter or year unit, as an addition of days or months.
func (b *Binder) dateArith(x *ast.FuncCallExpr, sub bool, ctx *exprCtx) (plan.Expr, error) {
	text := exprText(x)
	unit, ok := x.Args[2].(*ast.TimeUnitExpr)
	if !ok {
		return nil, sqlerr.Unsupported("date arithmetic without a unit")
	}
	op, factor, clamp := plan.FnAddDays, int64(1), int64(intervalClamp)
	switch unit.Unit {
	case ast.TimeUnitDay:
	case ast.TimeUnitWeek:
		factor = 7
	case ast.TimeUnitMonth:
		op = plan.FnAddMonths
	case ast.TimeUnitQuarter:
		op, factor = plan.FnAddMonths, 3
	case ast.TimeUnitYear:
		op, factor = plan.FnAddMonths, 12
	case ast.TimeUnitHour:
		op, factor, clamp = plan.FnAddSeconds, 3600, secondsClamp
	case ast.TimeUnitMinute:
		op, factor, clamp = plan.FnAddSeconds, 60, secondsClamp
	case ast.TimeUnitSecond:
		op, clamp = plan.FnAddSeconds, secondsClamp
	case ast.TimeUnitMicrosecond:
		op, clamp = plan.FnAddMicros, microsClamp
	default:
		return nil, sqlerr.Unsupported("INTERVAL … " + unit.Unit.String())
	}
	d, err := b.expr(x.Args[0], ctx)
	if err != nil {
		return nil, err
	}
	// A DATE stays a DATE for days, months and years; a time unit, or a DATETIME
	// operand (a string that reads as one), makes a DATETIME, as in MySQL.
	resultT := types.DateType
	fsp, isDatetime := datetimeFsp(d)
	if op == plan.FnAddSeconds || op == plan.FnAddMicros || isDatetime {
		if op == plan.FnAddMicros {
			fsp = 6
		}
		resultT = types.DatetimeType(fsp)
		if d, err = b.datetimeOperand(d, text); err != nil {
			return nil, err
		}
	} else if d, err = b.dateOperand(d, text); err != nil {
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
			bound := func(f *fn.Func, n plan.Expr, c int64) (plan.Expr, error) {
				return b.apply(f, f.Name, []plan.Expr{n, plan.Lit(types.IntValue(c))}, text)
			}
			var err error
			if n, err = bound(fn.Lookup("greatest"), n, -clamp); err != nil {
				return nil, err
			}
			if n, err = bound(fn.Lookup("least"), n, clamp); err != nil {
				return nil, err
			}
		}
		if factor != 1 {
			n = &plan.Call{Fn: plan.FnMul, Args: []plan.Expr{n, plan.Lit(types.IntValue(factor))}, T: types.Int64Type}
		}
		if sub {
			n = &plan.Call{Fn: plan.FnNeg, Args: []plan.Expr{n}, T: types.Int64Type}
		}
	}
	return &plan.Call{Fn: op, Args: []plan.Expr{d, n}, T: resultT}, nil
}

// datetimeFsp reports whether date arithmetic on e gives a DATETIME whatever the unit —
// e is one, or a string literal with a time of day ('1998-12-01 10:00:00') — and the
// fraction digits the result keeps.
func datetimeFsp(e plan.Expr) (int, bool) {
	if e.Type().Kind == types.Datetime {
		return e.Type().Scale, true
	}
	l, ok := e.(*plan.Literal)
	if !ok || l.V.Null || !l.V.Type.IsString() {
		return 0, false
	}
	if _, err := types.ParseDate(l.V.Str); err == nil {
		return 0, false
	}
	_, fsp, err := types.ParseDatetime(l.V.Str)
	return fsp, err == nil
}

// datetimeOperand makes a DATETIME of e: datetimes as they are, a date's midnight, a
// string parsed.
func (b *Binder) datetimeOperand(e plan.Expr, text string) (plan.Expr, error) {
	t := e.Type()
	switch {
	case t.Kind == types.Datetime:
		return e, nil
	case t.Kind == types.Null:
		return plan.Lit(types.NullValue(types.DatetimeType(0))), nil
	case t.Kind == types.Date, t.IsString():
		return b.castTo(e, types.DatetimeType(6), text)
	}
	return nil, sqlerr.New(sqlerr.ErWrongArguments, "Incorrect arguments to a date function: '%s' is %s, not a datetime", text, t)
}

// cast binds CAST(x AS type) for the types the engine carries.
func (b *Binder) cast(x *ast.FuncCastExpr, ctx *exprCtx) (plan.Expr, error) {
	v, err := b.expr(x.Expr, ctx)
	if err != nil {
		return nil, err
	}
	text := exprText(x)
	var t types.Type
	unsigned := false
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
		t = types.Int64Type
		// colink has no BIGINT UNSIGNED: the value is cast to BIGINT and checked below, so
		// that -1 is error 1690 instead of MySQL's 18446744073709551615 (Connector/J's
		// metadata queries CONVERT(… , UNSIGNED INTEGER) scales that are never negative).
		unsigned = mysql.HasUnsignedFlag(tp.GetFlag())
	case mysql.TypeDouble, mysql.TypeFloat:
		t = types.Float64Type
	case mysql.TypeDate:
		t = types.DateType
	case mysql.TypeDatetime, mysql.TypeTimestamp:
		fsp := tp.GetDecimal()
		if fsp > 6 {
			return nil, sqlerr.New(sqlerr.ErTooBigPrecision, "Too-big precision %d specified for '%s'. Maximum is 6.", fsp, exprText(x.Expr))
		}
		t = types.DatetimeType(max(fsp, 0))
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
	isDate := func(t types.Type) bool { return t.Kind == types.Date || t.Kind == types.Datetime }
	if isDate(v.Type()) && t.IsNumeric() || v.Type().IsNumeric() && isDate(t) {
		return nil, sqlerr.Unsupported("CAST between dates and numbers")
	}
	if l, ok := v.(*plan.Literal); ok && isDate(t) && l.V.Type.IsString() {
		// MySQL's CAST of a string that is no date is NULL (with a warning), as the
		// executor's CAST of string data is; only a DATE '…' literal is an error.
		if _, err := types.Convert(l.V, t); err != nil {
			return plan.Lit(types.NullValue(t)), nil
		}
	}
	c, err := b.castTo(v, t, text)
	if err != nil || !unsigned {
		return c, err
	}
	f := fn.Named("unsigned")
	return b.apply(f, f.Name, []plan.Expr{c}, text)
}

// intervalCount returns n×factor days or months, negated for DATE_SUB. A count beyond
// int64 saturates instead of wrapping: any count that large leaves the DATE range, so the
// result is NULL, as MySQL's is, rather than a wrapped date.
// intervalClamp bounds a column INTERVAL amount before it is scaled to days or months:
// 2^32 days (or months) is far beyond the span of DATE (0001..9999, 3,652,059 days), and
// 2^32 × 12 still fits BIGINT.
const intervalClamp = 1 << 32

// secondsClamp and microsClamp bound a column amount of seconds (hours and minutes scaled
// to seconds) and of microseconds in the same way: 2^40 seconds and 2^62 microseconds are
// beyond DATETIME's span (3.2e11 s), and 2^40 × 3600 fits BIGINT.
const (
	secondsClamp = 1 << 40
	microsClamp  = 1 << 62
)

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
