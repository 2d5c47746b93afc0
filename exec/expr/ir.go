// Package expr owns colink's expression IR and its vectorized evaluation.
//
// # The IR
//
// An expression is a tree of *Expr nodes, serialized with msgpack (field names in the
// struct tags). Every node has an Op; the other fields a node uses depend on it:
//
//	op            fields           meaning
//	col           Col              the input column at index Col (0-based)
//	const         Value            a typed literal (vec.Datum), NULL included
//	+ - * / %     Args[0], Args[1] arithmetic (see "Types" below); x/0 and x%0 are NULL
//	neg           Args[0]          unary minus
//	= <> < <= > >=  Args[0], Args[1] comparisons; NULL if either side is NULL
//	and or        Args (2 or more) three-valued logic
//	not           Args[0]
//	is_null is_not_null  Args[0]
//	in            Args[0] IN (Args[1:])    TRUE on a match; else NULL if Args[0] or any list
//	                                       element is NULL; else FALSE
//	like          Args[0] LIKE Args[1]     Args[1] must be a constant string (or NULL);
//	                                       % and _ wildcards, backslash escapes, binary
//	                                       (case-sensitive) comparison
//	between       Args[0] BETWEEN Args[1] AND Args[2]   (= x >= lo AND x <= hi)
//	case          Args = when1, then1, when2, then2, ..., [else]   searched CASE
//	case_simple   Args = operand, value1, result1, ..., [else]     CASE x WHEN v THEN r
//	coalesce      Args (1 or more)
//	date_add date_sub  Args = date or datetime, n (integer); Unit year|month|day|hour|
//	                   minute|second|microsecond → a date for a date and year, month or
//	                   day, else a datetime; the day is clamped to the month's length
//	                   (MySQL); out of 0001..9999 → NULL
//	cast          Args[0], Type        CAST to Type
//	div           Args[0] DIV Args[1]  integer division truncated toward zero, BIGINT;
//	                                   decimals divide exactly first; x DIV 0 is NULL
//
// Any other Op calls a function of the registry (package exec/fn) by its name, (upper s),
// (round x 2), with the arguments, types, nullability and kernel its entry declares; the
// members of a family are spelled with the family's Op and the member's name as Unit,
// first: (extract quarter d) for the date parts.
//
// NOT LIKE, NOT IN and NOT BETWEEN are not(like), not(in), not(between).
//
// # Types
//
// Result types follow MySQL's rules (TypeOf computes them; Type on a node other than cast is
// optional and, when set, must equal the computed type):
//
//   - Integers: int32 op int32 and int64 mixes give int64 (BIGINT); overflow is an error
//     (MySQL 1690). Integers mixed with decimals count as DECIMAL(10,0) (INT) or
//     DECIMAL(19,0) (BIGINT); an integer constant counts its own digits, as MySQL's
//     literals do (1 is DECIMAL(1,0)).
//   - a+b, a-b: scale max(s1,s2), precision max(p1-s1, p2-s2) + scale + 1.
//   - a*b: scale s1+s2, precision p1+p2.
//   - a/b: scale s1+4 (div_precision_increment), precision p1+s2+4, rounded half away from
//     zero; integer/integer is a decimal too (MySQL). As in MySQL, the digits between the
//     operators of one expression are not rounded: a quotient feeding + - * / % or neg
//     keeps 9×⌈(s1+s2+4)/9⌉ places (truncated) and only the result is rounded to its
//     type, so x/3*3 is 1.0000 for x = 1 (see exact.go); a quotient whose word-aligned
//     scale equals s1+4 is truncated. A CAST takes such an expression unrounded.
//   - Any double result beyond the finite doubles (1e308*10) is an error (MySQL 1690).
//   - a%b: scale max(s1,s2), precision max(p1-s1, p2-s2) + scale.
//   - Precision is capped at 38 and scale at 30; p <= 18 is Decimal64, else Decimal128.
//     A result that does not fit its precision is an error, never a wrong value.
//   - Any double operand makes the result double (no decimal path is involved then).
//   - Comparisons convert both sides to a common type: numbers compare exactly at the larger
//     scale (doubles if either side is double), dates with dates, strings with strings
//     (bytewise), booleans with booleans. A constant string compared with a date is read as
//     a date.
//   - case / coalesce / in: the branches' common type (integers widen to int64, integers
//     and decimals to a decimal, anything with a double to double; fn.Common).
//   - A function's result type is its registry entry's (package exec/fn).
//   - A NULL constant keeps its type where that type suits the operation and takes the
//     other operand's type where it does not.
//
// # Evaluation
//
// Compile turns an Expr into an Evaluator that computes a vec.Vec for a batch's active rows;
// CompileFilter turns a boolean Expr into a Filter that narrows a batch's selection vector
// (rows where the predicate is TRUE). Both loop over typed slices with the operator chosen
// once per batch; AND, OR, CASE and COALESCE evaluate their later arguments only on the rows
// that still need them. Evaluators and filters own their output buffers and are not safe
// for concurrent use: compile one per worker.
package expr

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/colinkdb/colink/exec/fn"
	"github.com/colinkdb/colink/exec/vec"
)

// Op names an expression node's operation. The spellings are part of the serialized form.
type Op string

// The operations of the IR.
const (
	OpCol        Op = "col"
	OpConst      Op = "const"
	OpAdd        Op = "+"
	OpSub        Op = "-"
	OpMul        Op = "*"
	OpDiv        Op = "/"
	OpMod        Op = "%"
	OpNeg        Op = "neg"
	OpEq         Op = "="
	OpNe         Op = "<>"
	OpLt         Op = "<"
	OpLe         Op = "<="
	OpGt         Op = ">"
	OpGe         Op = ">="
	OpAnd        Op = "and"
	OpOr         Op = "or"
	OpNot        Op = "not"
	OpIsNull     Op = "is_null"
	OpIsNotNull  Op = "is_not_null"
	OpIn         Op = "in"
	OpLike       Op = "like"
	OpBetween    Op = "between"
	OpCase       Op = "case"
	OpCaseSimple Op = "case_simple"
	OpCoalesce   Op = "coalesce"
	OpDateAdd    Op = "date_add"
	OpDateSub    Op = "date_sub"
	OpCast       Op = "cast"
	OpIntDiv     Op = "div"
)

// Units of date_add and date_sub.
const (
	UnitYear  = "year"
	UnitMonth = "month"
	UnitDay   = "day"
	// The units of time make a date its midnight's datetime.
	UnitHour        = "hour"
	UnitMinute      = "minute"
	UnitSecond      = "second"
	UnitMicrosecond = "microsecond"
)

// Expr is one node of an expression tree. See the package documentation for which fields
// each Op uses.
type Expr struct {
	Op    Op        `msgpack:"op"`
	Type  vec.Type  `msgpack:"type,omitempty"`
	Col   int       `msgpack:"col,omitempty"`
	Value vec.Datum `msgpack:"value,omitempty"`
	Unit  string    `msgpack:"unit,omitempty"`
	Args  []*Expr   `msgpack:"args,omitempty"`
	// Text is the expression as the SQL user wrote it, printed as MySQL's error messages
	// print it ("(o_orderkey + 1)"). It is optional and set only on nodes that can raise
	// an out-of-range error (1690), whose message names it; without it the message names
	// the IR form. It does not change what the node computes.
	Text string `msgpack:"text,omitempty"`
}

// ColRef refers to input column i.
func ColRef(i int) *Expr { return &Expr{Op: OpCol, Col: i} }

// Const is a literal.
func Const(d vec.Datum) *Expr { return &Expr{Op: OpConst, Value: d} }

// Call builds a node of op over args.
func Call(op Op, args ...*Expr) *Expr { return &Expr{Op: op, Args: args} }

// Cast converts e to t.
func Cast(e *Expr, t vec.Type) *Expr { return &Expr{Op: OpCast, Type: t, Args: []*Expr{e}} }

// Func calls function f of the registry.
func Func(f *fn.Func, args ...*Expr) *Expr {
	if f.Family != "" {
		return &Expr{Op: Op(f.Family), Unit: f.Name, Args: args}
	}
	return &Expr{Op: Op(f.Name), Args: args}
}

// DateAdd adds n units to a date (op date_add or date_sub).
func DateAdd(op Op, date, n *Expr, unit string) *Expr {
	return &Expr{Op: op, Unit: unit, Args: []*Expr{date, n}}
}

// IsConst reports whether e is a literal.
func (e *Expr) IsConst() bool { return e.Op == OpConst }

// IsNullConst reports whether e is a NULL literal.
func (e *Expr) IsNullConst() bool { return e.Op == OpConst && e.Value.Null }

// String prints e in the s-expression syntax Parse reads, e.g.
// (and (>= #10 date'1994-01-01') (< #4 24)).
// errorText is the expression as an error message names it: Text when set, else the IR form.
func (e *Expr) errorText() string {
	if e.Text != "" {
		return e.Text
	}
	return e.String()
}

func (e *Expr) String() string {
	var sb strings.Builder
	e.format(&sb)
	return sb.String()
}

func (e *Expr) format(sb *strings.Builder) {
	if e == nil {
		sb.WriteString("<nil>")
		return
	}
	switch e.Op {
	case OpCol:
		sb.WriteString("#" + strconv.Itoa(e.Col))
		return
	case OpConst:
		sb.WriteString(FormatLiteral(e.Value))
		return
	}
	sb.WriteString("(" + string(e.Op))
	if fn.IsFamily(string(e.Op)) {
		sb.WriteString(" " + e.Unit)
	}
	for _, a := range e.Args {
		sb.WriteByte(' ')
		a.format(sb)
	}
	switch e.Op {
	case OpDateAdd, OpDateSub:
		sb.WriteString(" " + e.Unit)
	case OpCast:
		sb.WriteString(" " + e.Type.String())
	}
	sb.WriteByte(')')
}

// FormatLiteral prints a datum as an s-expression literal: 12 (int64), 1.50 (a decimal whose
// type is implied by its digits), 'text', date'1995-03-15', datetime'1995-03-15 10:30:00', true, null:int64, and
// value:type otherwise (7:int32, 1.5:double, 1.50:decimal(15,2)).
func FormatLiteral(d vec.Datum) string {
	if d.Null {
		return "null:" + d.Type.String()
	}
	switch d.Type.ID {
	case vec.String:
		return "'" + strings.ReplaceAll(d.Str, "'", "''") + "'"
	case vec.Date32:
		return "date'" + d.String() + "'"
	case vec.Datetime:
		return "datetime'" + d.String() + "'"
	case vec.Bool:
		if d.Bool() {
			return "true"
		}
		return "false"
	case vec.Int64:
		return d.String()
	case vec.Decimal64, vec.Decimal128:
		s := d.String()
		if _, t, err := vec.ParseDecimal(s); err == nil && t == d.Type {
			return s
		}
		return s + ":" + d.Type.String()
	}
	return d.String() + ":" + d.Type.String()
}

// Walk calls f for e and every node below it, parents first.
func (e *Expr) Walk(f func(*Expr)) {
	f(e)
	for _, a := range e.Args {
		a.Walk(f)
	}
}

// errorf makes an error that names the node it is about.
func errorf(e *Expr, format string, args ...any) error {
	return fmt.Errorf("expr %s: %s", e, fmt.Sprintf(format, args...))
}
