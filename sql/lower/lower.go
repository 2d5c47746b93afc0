// Package lower turns the optimiser's output into exec's forms: SQL types into value types
// (exec/vec), constants into datums, and typed plan expressions into exec's expression IR
// (exec/expr) with every column reference resolved to a position in the node's input. It
// is the first part of the physical planner, which will also cut plans into fragments.
package lower

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/fn"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// Type returns the value type that carries a SQL type's values.
func Type(t types.Type) (vec.Type, error) {
	switch t.Kind {
	case types.Bool:
		return vec.BoolType, nil
	case types.Int32:
		return vec.Int32Type, nil
	case types.Int64:
		return vec.Int64Type, nil
	case types.Decimal:
		return vec.Decimal(int32(t.Precision), int32(t.Scale)), nil
	case types.Float64:
		return vec.Float64Type, nil
	case types.Date:
		return vec.DateType, nil
	case types.Datetime:
		return vec.DatetimeType, nil
	case types.Char, types.Varchar:
		return vec.StringType, nil
	case types.Null:
		// A bare NULL has no type of its own; exec gives it its context's.
		return vec.BoolType, nil
	}
	return vec.Type{}, fmt.Errorf("lower: type %s has no value type", t)
}

var (
	minInt128 = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 127))
	maxInt128 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 127), big.NewInt(1))
	mask64    = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(1))
)

// Datum converts a constant.
func Datum(v types.Value) (vec.Datum, error) {
	t, err := Type(v.Type)
	if err != nil {
		return vec.Datum{}, err
	}
	if v.Null {
		return vec.NullDatum(t), nil
	}
	switch v.Type.Kind {
	case types.Bool, types.Int32, types.Int64, types.Date, types.Datetime:
		return vec.Datum{Type: t, Int: v.Int}, nil
	case types.Float64:
		return vec.Float64Datum(v.Float), nil
	case types.Char, types.Varchar:
		return vec.StringDatum(v.Str), nil
	case types.Decimal:
		if t.ID == vec.Decimal64 {
			if !v.Dec.IsInt64() {
				return vec.Datum{}, fmt.Errorf("lower: decimal %s does not fit %s", v, v.Type)
			}
			return vec.Datum{Type: t, Int: v.Dec.Int64()}, nil
		}
		if v.Dec.Cmp(minInt128) < 0 || v.Dec.Cmp(maxInt128) > 0 {
			return vec.Datum{}, fmt.Errorf("lower: decimal %s does not fit 128 bits", v)
		}
		// Two's complement halves of the 128-bit value.
		u := new(big.Int).Set(v.Dec)
		if u.Sign() < 0 {
			u.Add(u, new(big.Int).Lsh(big.NewInt(1), 128))
		}
		lo := new(big.Int).And(u, mask64).Uint64()
		hi := new(big.Int).Rsh(u, 64).Uint64()
		return vec.Datum{Type: t, Int: int64(lo), Hi: int64(hi)}, nil
	}
	return vec.Datum{}, fmt.Errorf("lower: no datum for %s", v.Type)
}

// SQLType is the SQL type exec's type t carries, the inverse of Type (a string's length,
// which exec does not carry, is strLen); false for a type with no SQL counterpart.
func SQLType(t vec.Type, strLen int) (types.Type, bool) {
	switch t.ID {
	case vec.Bool:
		return types.BoolType, true
	case vec.Int32:
		return types.Int32Type, true
	case vec.Int64:
		return types.Int64Type, true
	case vec.Float64:
		return types.Float64Type, true
	case vec.Date32:
		return types.DateType, true
	case vec.Datetime:
		return types.DatetimeType(6), true // exec carries no fsp; Value converts to the caller's
	case vec.Decimal64, vec.Decimal128:
		return types.Dec(int(t.Precision), int(t.Scale)), true
	case vec.String:
		return types.VarcharType(strLen), true
	}
	return types.Type{}, false
}

// Value converts a datum back to a constant of SQL type t, the inverse of Datum: the
// payload is read in the datum's own type and converted to t where exec carries the two
// differently (a decimal of another scale).
func Value(d vec.Datum, t types.Type) (types.Value, error) {
	if d.Null {
		return types.NullValue(t), nil
	}
	st, ok := SQLType(d.Type, 0)
	if !ok {
		return types.Value{}, fmt.Errorf("lower: no value for %s", d.Type)
	}
	v := types.Value{Type: st, Int: d.Int}
	switch d.Type.ID {
	case vec.Float64:
		v = types.FloatValue(d.Float)
	case vec.String:
		v = types.Value{Type: st, Str: d.Str}
	case vec.Decimal64, vec.Decimal128:
		u := big.NewInt(d.Int)
		if d.Type.ID == vec.Decimal128 {
			// Two's complement halves of the 128-bit value.
			u = new(big.Int).Lsh(big.NewInt(d.Hi), 64)
			u.Add(u, new(big.Int).SetUint64(uint64(d.Int)))
		}
		v = types.DecimalValue(u, st)
	}
	if vt, err := Type(t); err == nil && vt == d.Type && !t.IsString() {
		v.Type = t // carried alike: only the SQL type's details differ (digits)
		return v, nil
	}
	// A string is cut to its declared length, as the binder's CAST of a literal cuts it
	// (CAST(x AS CHAR(3))): exec's strings have no length.
	return types.Convert(v, t)
}

// Expr lowers an expression over a node's input columns (in order) to exec's IR.
// Aggregate calls and subqueries are not expressions exec evaluates and are errors, as are
// functions exec has no kernel for yet.
func Expr(e plan.Expr, input []plan.ColumnID) (*expr.Expr, error) {
	return ExprParams(e, input, nil)
}

// ExprParams lowers e as Expr does, except that a reference to a column that is not in the
// input but has an entry in params lowers to that entry itself: a constant node shared by
// every expression that reads the parameter, so that its value can be set once it is known
// (a scalar subquery that exemgr computes before the expressions run).
func ExprParams(e plan.Expr, input []plan.ColumnID, params map[plan.ColumnID]*expr.Expr) (*expr.Expr, error) {
	return ExprText(e, input, params, nil)
}

// ExprText lowers e as ExprParams does and, when text is not nil, sets the Text of every
// node that can raise an out-of-range error (1690) to text of the plan expression it
// computes, so that the kernel's message names the expression as the SQL user wrote it
// (plan.Namer.MySQLText prints it as the constant folder does). Only those nodes carry
// text: expressions travel in every fragment sent to a primproc.
func ExprText(e plan.Expr, input []plan.ColumnID, params map[plan.ColumnID]*expr.Expr, text func(plan.Expr) string) (*expr.Expr, error) {
	pos := make(map[plan.ColumnID]int, len(input))
	for i := len(input) - 1; i >= 0; i-- {
		pos[input[i]] = i
	}
	l := &lowerer{pos: pos, params: params, text: text}
	return l.expr(e)
}

type lowerer struct {
	pos    map[plan.ColumnID]int
	params map[plan.ColumnID]*expr.Expr
	text   func(plan.Expr) string // nil: no node gets Text
}

// mayOverflow holds the operators whose kernels can raise error 1690 on column data (a
// function's entry says so itself: fn.Func.MayOverflow).
var mayOverflow = map[plan.Func]bool{
	plan.FnAdd: true, plan.FnSub: true, plan.FnMul: true, plan.FnDiv: true, plan.FnMod: true,
	plan.FnNeg: true, plan.FnIntDiv: true,
}

var ops = map[plan.Func]expr.Op{
	plan.FnAdd: expr.OpAdd, plan.FnSub: expr.OpSub, plan.FnMul: expr.OpMul, plan.FnDiv: expr.OpDiv,
	plan.FnMod: expr.OpMod, plan.FnNeg: expr.OpNeg, plan.FnEq: expr.OpEq, plan.FnNe: expr.OpNe,
	plan.FnLt: expr.OpLt, plan.FnLe: expr.OpLe, plan.FnGt: expr.OpGt, plan.FnGe: expr.OpGe,
	plan.FnNot: expr.OpNot, plan.FnIsNull: expr.OpIsNull, plan.FnIn: expr.OpIn,
	plan.FnCoalesce: expr.OpCoalesce, plan.FnIntDiv: expr.OpIntDiv,
}

var units = map[plan.Func]string{plan.FnAddDays: expr.UnitDay, plan.FnAddMonths: expr.UnitMonth,
	plan.FnAddSeconds: expr.UnitSecond, plan.FnAddMicros: expr.UnitMicrosecond}

func (l *lowerer) all(es []plan.Expr) ([]*expr.Expr, error) {
	out := make([]*expr.Expr, len(es))
	for i, e := range es {
		x, err := l.expr(e)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

func (l *lowerer) expr(e plan.Expr) (*expr.Expr, error) {
	switch x := e.(type) {
	case *plan.ColumnRef:
		p, ok := l.pos[x.ID]
		if !ok {
			if c, ok := l.params[x.ID]; ok {
				return c, nil
			}
			return nil, fmt.Errorf("lower: column #%d is not in the input", x.ID)
		}
		return expr.ColRef(p), nil
	case *plan.InputRef:
		return expr.ColRef(x.Pos), nil
	case *plan.Literal:
		d, err := Datum(x.V)
		if err != nil {
			return nil, err
		}
		return expr.Const(d), nil
	case *plan.Cast:
		arg, err := l.expr(x.Arg)
		if err != nil {
			return nil, err
		}
		t, err := Type(x.T)
		if err != nil {
			return nil, err
		}
		c := expr.Cast(arg, t)
		if from := x.Arg.Type(); x.T.Kind == types.Datetime && x.T.Scale < 6 && (from.Kind != types.Datetime || from.Scale > x.T.Scale) {
			// exec's datetimes carry no fsp: a DATETIME(fsp) drops the digits beyond it here.
			c = expr.Func(fn.Named("datetime_fsp"), c, expr.Const(vec.Int64Datum(int64(x.T.Scale))))
		}
		return c, nil
	case *plan.Case:
		var args []plan.Expr
		for _, w := range x.Whens {
			args = append(args, w.Cond, w.Then)
		}
		if x.Else != nil {
			args = append(args, x.Else)
		}
		la, err := l.all(args)
		if err != nil {
			return nil, err
		}
		return expr.Call(expr.OpCase, la...), nil
	case *plan.Call:
		return l.call(x)
	case *plan.AggCall:
		return nil, fmt.Errorf("lower: aggregate %s is not a scalar expression", x.Fn)
	case *plan.Subquery:
		return nil, fmt.Errorf("lower: a subquery is left; decorrelate first")
	}
	return nil, fmt.Errorf("lower: expression %T", e)
}

func (l *lowerer) call(x *plan.Call) (*expr.Expr, error) {
	switch x.Fn {
	case plan.FnAnd, plan.FnOr:
		// exec's AND and OR take any number of arguments: flatten chains.
		var flat []plan.Expr
		var walk func(e plan.Expr)
		walk = func(e plan.Expr) {
			if c, ok := e.(*plan.Call); ok && c.Fn == x.Fn {
				for _, a := range c.Args {
					walk(a)
				}
				return
			}
			flat = append(flat, e)
		}
		walk(x)
		args, err := l.all(flat)
		if err != nil {
			return nil, err
		}
		op := expr.OpAnd
		if x.Fn == plan.FnOr {
			op = expr.OpOr
		}
		return expr.Call(op, args...), nil
	}
	args, err := l.all(x.Args)
	if err != nil {
		return nil, err
	}
	if unit, ok := units[x.Fn]; ok {
		return expr.DateAdd(expr.OpDateAdd, args[0], args[1], unit), nil
	}
	if f := x.Fn.Def(); f != nil {
		n := expr.Func(f, args...)
		if l.text != nil && f.MayOverflow {
			n.Text = l.text(x)
		}
		return n, nil
	}
	if op, ok := ops[x.Fn]; ok {
		if x.Fn == plan.FnNot && len(args) == 1 && args[0].Op == expr.OpIsNull {
			return expr.Call(expr.OpIsNotNull, args[0].Args...), nil
		}
		n := expr.Call(op, args...)
		if l.text != nil && mayOverflow[x.Fn] {
			n.Text = l.text(x)
		}
		return n, nil
	}
	f := expr.Const(vec.BoolDatum(false))
	switch x.Fn {
	case plan.FnXor:
		// a XOR b = (a OR b) AND NOT (a AND b), NULL when either is NULL.
		return expr.Call(expr.OpAnd, expr.Call(expr.OpOr, args[0], args[1]),
			expr.Call(expr.OpNot, expr.Call(expr.OpAnd, args[0], args[1]))), nil
	case plan.FnIsTrue:
		return expr.Call(expr.OpCoalesce, args[0], f), nil
	case plan.FnIsFalse:
		return expr.Call(expr.OpCoalesce, expr.Call(expr.OpNot, args[0]), f), nil
	case plan.FnNullSafeEq:
		// a <=> b: both NULL is TRUE, one NULL is FALSE, else a = b.
		an, bn := expr.Call(expr.OpIsNull, args[0]), expr.Call(expr.OpIsNull, args[1])
		return expr.Call(expr.OpCase, an, bn, bn, f, expr.Call(expr.OpEq, args[0], args[1])), nil
	case plan.FnLike:
		return like(args)
	}
	return nil, fmt.Errorf("lower: exec has no kernel for %s yet", x.Fn)
}

// like lowers LIKE, whose pattern must be a constant: exec's LIKE escapes with a backslash,
// so a pattern written with another escape character is rewritten.
func like(args []*expr.Expr) (*expr.Expr, error) {
	pat := args[1]
	esc := '\\'
	if len(args) > 2 {
		if !args[2].IsConst() || args[2].Value.Null {
			return nil, sqlerr.Unsupported("LIKE with an ESCAPE that is not a constant")
		}
		for _, r := range args[2].Value.Str {
			esc = r
			break
		}
	}
	if esc != '\\' && !pat.IsConst() {
		// exec's matcher escapes with a backslash; a pattern that varies by row would need
		// rewriting row by row.
		return nil, sqlerr.Unsupported("LIKE … ESCAPE with a pattern that is not a constant")
	}
	if esc != '\\' && !pat.Value.Null {
		var b strings.Builder
		rs := []rune(pat.Value.Str)
		for i := 0; i < len(rs); i++ {
			switch {
			case rs[i] == esc && i+1 < len(rs):
				b.WriteRune('\\')
				b.WriteRune(rs[i+1])
				i++
			case rs[i] == '\\':
				b.WriteString(`\\`)
			default:
				b.WriteRune(rs[i])
			}
		}
		pat = expr.Const(vec.StringDatum(b.String()))
	}
	return expr.Call(expr.OpLike, args[0], pat), nil
}
