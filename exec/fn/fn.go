// Package fn owns colink's SQL functions: each one is declared once, as one Func value in
// the registry (table.go), and everything the engine knows of it is in that value — its
// names, its arity, how the binder converts each argument (Class), its typing rule (the
// types the kernel reads and the result type, nullability included), its vectorized
// kernel, and whether and when it may be folded. The binder (sql/bind) looks a SQL name up
// and asks the entry for coercions and the result type; the planner asks it for
// nullability, volatility and how to print the call; the lowering (sql/lower) spells the
// call in exec's IR by the entry's name; exec/expr types and compiles the IR node by asking
// the entry again, and the constant folder (sql/fold) evaluates a constant call through the
// same kernel on a one-row batch, so a constant can never be computed differently from a
// column.
//
// What is not here: the operators of SQL's grammar, which are not named functions and keep
// their own nodes in exec/expr — arithmetic (+ - * / % DIV, unary minus), comparisons,
// AND/OR/XOR/NOT, IS [NOT] NULL/TRUE/FALSE, IN, LIKE, BETWEEN, CASE, CAST, date ± INTERVAL
// (whose unit is syntax; DATE_ADD and DATE_SUB are spellings of it), and COALESCE
// (IFNULL), which is lazy like CASE: its later arguments are computed only for the rows
// still NULL, which a strict kernel cannot do. Functions the binder rewrites into those
// (IF and NULLIF into CASE, LOG(b, x) into LN(x)/LN(b)) or answers from the session
// (DATABASE(), VERSION()) are syntax too. The type rules that functions share with the
// operators — the common type values meet in (Common, NumericCommon) and the digits a
// constant contributes to decimal arithmetic (Digits) — live here and exec/expr uses them.
//
// The registry is built once, when the package is initialised, and never changes.
package fn

import (
	"context"
	"fmt"
	"sort"

	"github.com/colinkdb/colink/exec/vec"
)

// Func is one SQL function. A Func is only ever read: take it from Lookup, Named, Member or
// All.
type Func struct {
	// Name is the function's own name, lower case: the name EXPLAIN prints and, unless
	// Family is set, the operation of its exec IR node.
	Name string
	// SQL lists the names a query calls it by (lower case), Name included if it is one of
	// them. A function without one is reached only through the binder's syntax.
	SQL []string
	// Family, when set, is the IR operation of a family of functions told apart by a unit:
	// the IR spells a call (Family Name args…), as (extract quarter d).
	Family string
	// MinArgs and MaxArgs bound the number of arguments a query passes; MaxArgs < 0 is
	// unbounded. Mode arguments, which the binder drops, are not in the typed call.
	MinArgs, MaxArgs int
	// Args is the binder's conversion of each argument (the last one repeats).
	Args []Class
	// Typing types a call over arguments whose number is within bounds.
	Typing func(f *Func, args []Arg) (Sig, error)
	// Nulls says when the result is NULL.
	Nulls Nulls
	// Kernel builds the kernel of one compiled call.
	Kernel func(s *Site) Kernel
	// Volatile marks a function run for its effect (SLEEP waits): it is computed once per
	// row, in order, when the query runs — never folded, by the planner or by exec, and in
	// exemgr rather than on the primprocs, whose workers would run it side by side. Its
	// kernel may use the evaluation's context (Site.Context).
	Volatile bool
	// MayOverflow marks a kernel that can fail with MySQL's error 1690 on some arguments;
	// the error names the call as MySQL prints it (the IR node's Text).
	MayOverflow bool
	// PlanFold, when set, says whether the planner folds a call whose arguments are all
	// these constants; otherwise it always does (Volatile functions never). A call the
	// planner leaves is folded by exec when it compiles it, so this changes only what
	// EXPLAIN shows and whether a constant's error is raised before any row is read.
	PlanFold func(args []vec.Datum) bool
	// Print, when set, is how EXPLAIN prints a call: a format whose %s are the arguments.
	Print string

	id int // the position in the registry
}

// Class is how the binder converts an argument before the call is typed: each class is
// one conversion (with MySQL's error for a value that has none), shared by every function
// that declares it.
type Class uint8

// The argument classes.
const (
	// String: a string; numbers and dates are converted to VARCHAR, NULL is a NULL
	// VARCHAR, a condition is an error.
	String Class = iota + 1
	// Number: a number (a string literal is read as one); BOOLEAN, INT and NULL become
	// BIGINT.
	Number
	// Double: a number read as a DOUBLE. A column is converted in the plan; a literal stays
	// as written (an error names it so) and the kernel reads it as a double.
	Double
	// Seconds: a number converted to DOUBLE in the plan, literals too.
	Seconds
	// IntOrDouble: an integer (BIGINT) or a double; a decimal is read as a double, unrounded,
	// as MySQL's val_real reads it.
	IntOrDouble
	// Count: a count or a position, BIGINT; a string or a decimal is converted.
	Count
	// Date: a DATE; a string is read as one.
	Date
	// Compared: every Compared argument is converted to the type they are compared in
	// (MySQL's comparison rules: numbers widen, a number and a string meet as DOUBLE).
	Compared
	// Places: a number of decimal places, an integer constant (or NULL, which makes the
	// call NULL), clamped to ±100; 0 when omitted, and always written out.
	Places
	// Mode: a mode whose only implemented value is the constant 0, the default; it is
	// dropped from the call.
	Mode
	// Datetime: a DATETIME; a DATE is its midnight, a string is read as one.
	Datetime
)

// Nulls says when a function's result is NULL.
type Nulls uint8

// The nullability rules. Under each, a NULL argument never gives a non-NULL result.
const (
	// Strict: NULL exactly when an argument is NULL.
	Strict Nulls = iota
	// Partial: NULL when an argument is NULL, and for some non-NULL arguments too
	// (SQRT(-1), LN(0)).
	Partial
	// NeverNull: never NULL; the kernel sees the rows with NULL arguments and fails on
	// them (SLEEP(NULL) is an error).
	NeverNull
)

// Type is a value's type as a typing rule sees it: exec's value type and, for a string,
// the maximum length in characters the binder reports (0: unbounded; exec's own arguments
// have none).
type Type struct {
	vec.Type
	Len int
}

// Arg is one argument of a call as a typing rule sees it.
type Arg struct {
	Type
	// Const is the argument's value when it is a constant, nil otherwise.
	Const *vec.Datum
}

// IsNull reports a NULL constant.
func (a Arg) IsNull() bool { return a.Const != nil && a.Const.Null }

// Sig is a typing rule's answer for one call.
type Sig struct {
	// Args is the type the kernel reads each argument in (the argument is converted to
	// it); the zero Type marks an argument the kernel does not read as a vector but is
	// built with (ROUND's digits, a constant: Site.Consts).
	Args []vec.Type
	// Result is the result type.
	Result Type
	// Same, when it is not -1, is the argument whose own type the result has (ABS of a
	// BIGINT), or SameCompared: the type the Compared arguments were converted to
	// (GREATEST). The binder then keeps that SQL type, with the details exec does not carry
	// (a literal's digits, CHAR).
	Same int
}

// SameCompared is Sig.Same for a result of the Compared arguments' common type.
const SameCompared = -2

// Kernel computes one call over a batch of nrows rows: args are the arguments' vectors,
// converted to the types of Sig.Args, and out is prepared with the result type. It
// computes the rows of live, in ascending order: for a strict or partial function those
// where no argument is NULL (the others are NULL already), for a NeverNull one all the
// rows to compute. It may make a row NULL (out.SetNull) and owns out's string buffer.
type Kernel func(args []*vec.Vec, out *vec.Vec, live []int32, nrows int) error

// Site is what a kernel is built for: one call, compiled once.
type Site struct {
	Sig Sig
	// Consts holds the values of the arguments the kernel is built with (those whose
	// Sig.Args type is zero), by position; the others are unset.
	Consts []vec.Datum
	// Text names the call in an error message.
	Text func() string
	// Context is the context of the evaluation in progress (Volatile functions only).
	Context func() context.Context
}

// Op is the IR operation of a call of f: Family if set, else Name.
func (f *Func) Op() string {
	if f.Family != "" {
		return f.Family
	}
	return f.Name
}

// ID is f's position in the registry: a small integer, dense from 0, that other packages
// may use to stand for f (ByID(f.ID()) is f).
func (f *Func) ID() int { return f.id }

// Sig checks the number of arguments and types a call of f over args (Mode arguments
// dropped).
func (f *Func) Sig(args []Arg) (Sig, error) {
	hi := f.MaxArgs
	for i := 0; hi >= 0 && i < len(f.Args) && i < f.MaxArgs; i++ {
		if f.Args[i] == Mode {
			hi--
		}
	}
	if n := len(args); n < f.MinArgs || (hi >= 0 && n > hi) {
		if f.MinArgs == hi {
			return Sig{}, fmt.Errorf("%s takes %d arguments, has %d", f.Op(), f.MinArgs, n)
		}
		return Sig{}, fmt.Errorf("%s takes %d or more arguments, has %d", f.Op(), f.MinArgs, n)
	}
	return f.Typing(f, args)
}

// Class returns the binder's conversion of argument i.
func (f *Func) Class(i int) Class {
	if i < len(f.Args) {
		return f.Args[i]
	}
	return f.Args[len(f.Args)-1]
}

// Strict reports whether a NULL argument makes the result NULL without the kernel being
// run: true unless Nulls is NeverNull.
func (f *Func) Strict() bool { return f.Nulls != NeverNull }

// Folds reports whether the planner folds a call over constant arguments args.
func (f *Func) Folds(args []vec.Datum) bool {
	if f.Volatile {
		return false
	}
	return f.PlanFold == nil || f.PlanFold(args)
}

// registry indexes the table by every key a caller looks a function up by. It is built
// once from table() when the package is initialised and never written afterwards.
type registry struct {
	all      []*Func
	bySQL    map[string]*Func
	byName   map[string]*Func
	families map[string][]*Func
}

var funcs = build(table())

func build(t []Func) *registry {
	r := &registry{bySQL: map[string]*Func{}, byName: map[string]*Func{}, families: map[string][]*Func{}}
	for i := range t {
		f := &t[i]
		f.id = i
		if r.byName[f.Name] != nil {
			panic("fn: two functions named " + f.Name)
		}
		r.byName[f.Name] = f
		for _, s := range f.SQL {
			if r.bySQL[s] != nil {
				panic("fn: two functions called " + s)
			}
			r.bySQL[s] = f
		}
		if f.Family != "" {
			r.families[f.Family] = append(r.families[f.Family], f)
		}
		r.all = append(r.all, f)
	}
	return r
}

// Lookup returns the function a query calls by name (lower case), or nil.
func Lookup(sqlName string) *Func { return funcs.bySQL[sqlName] }

// Named returns the function of that Name, or nil.
func Named(name string) *Func { return funcs.byName[name] }

// ByID returns the function whose ID is id, or nil.
func ByID(id int) *Func {
	if id < 0 || id >= len(funcs.all) {
		return nil
	}
	return funcs.all[id]
}

// Member returns the function an IR node of operation op names: with unit "", the
// function of that Name (not one of a family); otherwise the member unit of the family op.
// ok is false when op is a family and unit is none of its members.
func Member(op, unit string) (f *Func, ok bool) {
	if fam, isFamily := funcs.families[op]; isFamily {
		for _, f := range fam {
			if f.Name == unit {
				return f, true
			}
		}
		return nil, false
	}
	f = funcs.byName[op]
	if f == nil || f.Family != "" {
		return nil, true
	}
	return f, true
}

// IsFamily reports whether op is the IR operation of a family of functions.
func IsFamily(op string) bool { return funcs.families[op] != nil }

// Units lists the members of family op, in the registry's order.
func Units(op string) []string {
	var out []string
	for _, f := range funcs.families[op] {
		out = append(out, f.Name)
	}
	return out
}

// All returns every function, in the registry's order.
func All() []*Func { return append([]*Func(nil), funcs.all...) }

// SQLNames returns every name a query can call a function by, sorted.
func SQLNames() []string {
	var out []string
	for s := range funcs.bySQL {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
