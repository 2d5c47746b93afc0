package plan

import (
	"fmt"

	"github.com/colinkdb/colink/exec/fn"
	"github.com/colinkdb/colink/sql/types"
)

// Expr is a typed scalar expression over the columns of a node's input. The set of
// expression kinds is closed: ColumnRef, InputRef, Literal, Call, Cast, Case, AggCall and
// Subquery.
type Expr interface {
	// Type is the SQL type of the expression's value.
	Type() types.Type
	isExpr()
}

// ColumnRef reads a column by its query-wide identity.
type ColumnRef struct {
	ID ColumnID
	T  types.Type
}

// InputRef reads the column at a position of the node's input; Resolve turns ColumnRefs
// into InputRefs for an executor.
type InputRef struct {
	Pos int
	T   types.Type
}

// Literal is a constant.
type Literal struct {
	V types.Value
}

// Call applies a scalar function or operator to its arguments.
type Call struct {
	Fn   Func
	Args []Expr
	T    types.Type
}

// Cast converts its argument to type T. The binder inserts casts wherever operands of
// different types meet (comparison, arithmetic on decimals of different scales, CASE
// branches), so kernels see operands of one type.
type Cast struct {
	Arg Expr
	T   types.Type
}

// When is one WHEN … THEN … of a searched CASE.
type When struct {
	Cond, Then Expr
}

// Case is a searched CASE; a nil Else means ELSE NULL. Simple CASE is bound as searched.
type Case struct {
	Whens []When
	Else  Expr
	T     types.Type
}

// AggFunc is an aggregate function.
type AggFunc uint8

// The aggregate functions.
const (
	AggSum AggFunc = iota + 1
	AggAvg
	AggMin
	AggMax
	AggCount     // COUNT(expr): non-NULL values
	AggCountStar // COUNT(*): rows
	// AggGroupConcat is GROUP_CONCAT: the group's non-NULL values of one string argument
	// (several arguments are bound as their CONCAT), joined by Sep, cut at MaxLen bytes.
	AggGroupConcat
)

var aggNames = map[AggFunc]string{AggSum: "sum", AggAvg: "avg", AggMin: "min", AggMax: "max",
	AggCount: "count", AggCountStar: "count", AggGroupConcat: "group_concat"}

func (f AggFunc) String() string { return aggNames[f] }

// AggCall is an aggregate function call. It appears in Aggregate nodes; while a SELECT is
// bound it also stands in an expression until the Aggregate that computes it exists.
type AggCall struct {
	Fn       AggFunc
	Arg      Expr // nil for COUNT(*)
	Distinct bool
	T        types.Type
	// GROUP_CONCAT's separator and length bound (@@group_concat_max_len when bound), and,
	// while its SELECT is bound, its ORDER BY: the binder then sorts the aggregation's
	// input by it (the aggregation keeps each group's rows in input order) and clears it.
	Sep    string
	MaxLen int64
	Order  []SortKey
}

// SubqueryKind says how a subquery is used.
type SubqueryKind uint8

// The subquery uses.
const (
	SubqueryScalar SubqueryKind = iota + 1 // (SELECT …) as a value
	SubqueryExists                         // EXISTS (SELECT …)
	SubqueryIn                             // Probe IN (SELECT …)
)

// Subquery is a nested query used as an expression. It exists between binding and
// decorrelation, which turns every Subquery into a join. Plan's output column Col is the
// scalar value or the IN list; Plan may refer to columns of enclosing queries (correlation).
type Subquery struct {
	Kind  SubqueryKind
	Not   bool // NOT EXISTS, NOT IN
	Probe Expr // IN's left operand
	Plan  Node
	Col   ColumnID
	T     types.Type
}

func (e *ColumnRef) Type() types.Type { return e.T }
func (e *InputRef) Type() types.Type  { return e.T }
func (e *Literal) Type() types.Type   { return e.V.Type }
func (e *Call) Type() types.Type      { return e.T }
func (e *Cast) Type() types.Type      { return e.T }
func (e *Case) Type() types.Type      { return e.T }
func (e *AggCall) Type() types.Type   { return e.T }
func (e *Subquery) Type() types.Type  { return e.T }

func (*ColumnRef) isExpr() {}
func (*InputRef) isExpr()  {}
func (*Literal) isExpr()   {}
func (*Call) isExpr()      {}
func (*Cast) isExpr()      {}
func (*Case) isExpr()      {}
func (*AggCall) isExpr()   {}
func (*Subquery) isExpr()  {}

// Func is a scalar operator or, from FnNamed on, a function of the registry (exec/fn),
// which declares everything about it: a named function's Func is FnNamed plus the entry's
// ID (Named, Def).
type Func uint8

// The operators. Arguments are listed where they are not obvious.
const (
	FnAdd Func = iota + 1
	FnSub
	FnMul
	FnDiv    // "/", decimal or double result
	FnIntDiv // DIV
	FnMod
	FnNeg
	FnEq
	FnNe
	FnLt
	FnLe
	FnGt
	FnGe
	FnNullSafeEq // <=>
	FnAnd
	FnOr
	FnNot
	FnXor
	FnIsNull
	FnIsTrue
	FnIsFalse
	FnLike      // (string, pattern, escape character as a one-character string literal)
	FnIn        // (probe, item, item, …): a literal list
	FnAddDays   // (date or datetime, days): ± INTERVAL n DAY/WEEK
	FnAddMonths // (date or datetime, months): ± INTERVAL n MONTH/QUARTER/YEAR, clamping the day
	FnCoalesce  // lazy: an argument is computed only where those before it are NULL
	// FnAddSeconds is (datetime, seconds): ± INTERVAL n HOUR/MINUTE/SECOND.
	FnAddSeconds
	// FnAddMicros is (datetime, microseconds): ± INTERVAL n MICROSECOND.
	FnAddMicros
)

// FnNamed is the first Func that stands for a function of the registry: FnNamed+id is the
// function whose ID is id. The registry is far smaller than the 192 values left.
const FnNamed Func = 64

// Named returns the Func of registry function f.
func Named(f *fn.Func) Func { return FnNamed + Func(f.ID()) }

// Def returns the registry function f stands for, or nil for an operator.
func (f Func) Def() *fn.Func {
	if f < FnNamed {
		return nil
	}
	return fn.ByID(int(f - FnNamed))
}

// Volatile reports a function that must run once per row, in order, when the query runs:
// never evaluated at plan time, even over constants (the folder, sql/fold, refuses it),
// and computed in exemgr rather than on the primprocs, whose workers would run it side by
// side. SLEEP is one: it is wanted for its wait (fn.Func.Volatile).
func (f Func) Volatile() bool { d := f.Def(); return d != nil && d.Volatile }

// HasVolatile reports whether e calls a volatile function.
func HasVolatile(e Expr) bool {
	found := false
	WalkExpr(e, func(x Expr) bool {
		if c, ok := x.(*Call); ok && c.Fn.Volatile() {
			found = true
		}
		return !found
	})
	return found
}

type funcInfo struct {
	name  string
	infix string // operator spelling for infix printing
	prec  int    // printing precedence of infix and prefix operators
}

var funcs = map[Func]funcInfo{
	FnAdd: {"add", "+", 6}, FnSub: {"sub", "-", 6}, FnMul: {"mul", "*", 7}, FnDiv: {"div", "/", 7},
	FnIntDiv: {"intdiv", "DIV", 7}, FnMod: {"mod", "%", 7}, FnNeg: {"neg", "-", 8},
	FnEq: {"eq", "=", 5}, FnNe: {"ne", "<>", 5}, FnLt: {"lt", "<", 5}, FnLe: {"le", "<=", 5},
	FnGt: {"gt", ">", 5}, FnGe: {"ge", ">=", 5}, FnNullSafeEq: {"nulleq", "<=>", 5},
	FnAnd: {"and", "AND", 3}, FnOr: {"or", "OR", 1}, FnXor: {"xor", "XOR", 2}, FnNot: {"not", "NOT", 4},
	FnIsNull: {"isnull", "IS NULL", 5}, FnIsTrue: {"istrue", "IS TRUE", 5}, FnIsFalse: {"isfalse", "IS FALSE", 5},
	FnLike: {"like", "LIKE", 5}, FnIn: {"in", "IN", 5},
	FnAddDays: {"add_days", "", 9}, FnAddMonths: {"add_months", "", 9}, FnCoalesce: {"coalesce", "", 9},
	FnAddSeconds: {"add_seconds", "", 9}, FnAddMicros: {"add_micros", "", 9},
}

// String is the function's name, e.g. "add_days", "upper".
func (f Func) String() string {
	if d := f.Def(); d != nil {
		return d.Name
	}
	if i, ok := funcs[f]; ok {
		return i.name
	}
	return fmt.Sprintf("fn%d", f)
}

// IsComparison reports =, <>, <, <=, >, >=, <=>.
func (f Func) IsComparison() bool { return f >= FnEq && f <= FnNullSafeEq }

// Commute returns the comparison with its operands swapped (a < b is b > a).
func (f Func) Commute() Func {
	switch f {
	case FnLt:
		return FnGt
	case FnLe:
		return FnGe
	case FnGt:
		return FnLt
	case FnGe:
		return FnLe
	}
	return f
}

// NewCall builds a call of a boolean-valued function.
func NewBool(fn Func, args ...Expr) *Call { return &Call{Fn: fn, Args: args, T: types.BoolType} }

// Not negates a condition.
func Not(e Expr) Expr { return NewBool(FnNot, e) }

// Lit wraps a value.
func Lit(v types.Value) *Literal { return &Literal{V: v} }
