package fn

import (
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/colinkdb/colink/exec/vec"
)

// The type rules the registry's entries are written with, and those exec/expr's operators
// share with them (Common, NumericCommon, Digits). Error messages name the call by its IR
// operation, as exec's type checker reports them.

// isIntegral accepts integers and scale-0 decimals.
func isIntegral(t vec.Type) bool {
	return t.IsInteger() || (t.IsDecimal() && t.Scale == 0)
}

// Digits is the precision an operand contributes to decimal arithmetic: an integer constant
// counts its own digits (MySQL's literals), other integers 10 or 19, a decimal its
// precision.
func Digits(a Arg) int32 {
	if a.Const != nil && !a.Const.Null && a.IsInteger() {
		v := a.Const.Int
		if v < 0 {
			v = -v
		}
		d := int32(1)
		for v >= 10 {
			v /= 10
			d++
		}
		return d
	}
	return a.DecimalPrecision()
}

// NumericCommon is the type two numbers are compared or unified in: their type if they
// have one, DOUBLE if either is, BIGINT for two integers, else a decimal with the larger
// scale and room for the larger integer part.
func NumericCommon(a, b Arg) vec.Type {
	ta, tb := a.Type.Type, b.Type.Type
	switch {
	case ta == tb:
		return ta
	case ta.ID == vec.Float64 || tb.ID == vec.Float64:
		return vec.Float64Type
	case ta.IsInteger() && tb.IsInteger():
		return vec.Int64Type
	}
	s := max(ta.DecimalScale(), tb.DecimalScale())
	ip := max(Digits(a)-ta.DecimalScale(), Digits(b)-tb.DecimalScale())
	return vec.Decimal(ip+s, s)
}

// Common is the type CASE results, COALESCE's and GREATEST's arguments meet in: NULL
// constants take the others' type, equal types stay, numbers meet by NumericCommon and
// strings as the longer one; anything else is an error naming what (the operation). All
// NULL: the first argument's type.
func Common(what string, args []Arg) (Type, error) {
	var t Type
	var from Arg
	set := false
	for _, a := range args {
		if a.IsNull() {
			continue
		}
		if !set {
			t, from, set = a.Type, a, true
			continue
		}
		u := a.Type
		switch {
		case t == u:
		case t.IsNumeric() && u.IsNumeric():
			t = Type{Type: NumericCommon(from, a)}
			from = Arg{Type: t}
		case t.ID == vec.String && u.ID == vec.String:
			// Only the binder's strings differ, in length: they meet as the longer one.
			t = Type{Type: vec.StringType, Len: max(t.Len, u.Len)}
			from = Arg{Type: t}
		default:
			return Type{}, fmt.Errorf("results of %s mix %s and %s", what, t, u)
		}
	}
	if !set {
		return args[0].Type, nil
	}
	return t, nil
}

// commonSig types GREATEST and LEAST: the arguments' common type, which the kernel reads
// every argument in.
func commonSig(f *Func, args []Arg) (Sig, error) {
	t, err := Common(f.Op(), args)
	if err != nil {
		return Sig{}, err
	}
	s := sigOf(t, len(args), t.Type)
	s.Same = SameCompared
	return s, nil
}

// sigOf is a Sig of result r whose n arguments the kernel reads all in type in.
func sigOf(r Type, n int, in vec.Type) Sig {
	s := Sig{Result: r, Args: make([]vec.Type, n), Same: -1}
	for i := range s.Args {
		s.Args[i] = in
	}
	return s
}

// text is a string result of at most n characters (0: unbounded).
func text(n int) Type { return Type{Type: vec.StringType, Len: n} }

// checkStrings refuses an argument that is neither a string nor a NULL constant.
func checkStrings(f *Func, args []Arg) error {
	for i, a := range args {
		if a.ID != vec.String && !a.IsNull() {
			return fmt.Errorf("argument %d of %s is %s, not a string", i+1, f.Op(), a.Type)
		}
	}
	return nil
}

// stringSig types a function of strings whose result is r.
func stringSig(r func(args []Arg) Type) func(f *Func, args []Arg) (Sig, error) {
	return func(f *Func, args []Arg) (Sig, error) {
		if err := checkStrings(f, args); err != nil {
			return Sig{}, err
		}
		return sigOf(r(args), len(args), vec.StringType), nil
	}
}

// sameLength is a string as long as the first argument.
func sameLength(args []Arg) Type { return text(args[0].Len) }

// fixed is a rule whose result is always t.
func fixed(t vec.Type) func([]Arg) Type { return func([]Arg) Type { return Type{Type: t} } }

// checkNumbers refuses an argument that is neither a number nor a NULL constant.
func checkNumbers(f *Func, args []Arg) error {
	for _, a := range args {
		if !a.IsNumeric() && !a.IsNull() {
			return fmt.Errorf("%s of %s, not a number", f.Op(), a.Type)
		}
	}
	return nil
}

// doubleSig types the functions of doubles: numbers, read as doubles, and a double.
func doubleSig(f *Func, args []Arg) (Sig, error) {
	if err := checkNumbers(f, args); err != nil {
		return Sig{}, err
	}
	return sigOf(Type{Type: vec.Float64Type}, len(args), vec.Float64Type), nil
}

// number is the type of a numeric function's one argument: a NULL constant of another
// type counts as BIGINT.
func number(f *Func, a Arg) (vec.Type, error) {
	t := a.Type.Type
	if a.IsNull() && !t.IsNumeric() {
		t = vec.Int64Type
	}
	if !t.IsNumeric() {
		return vec.Type{}, fmt.Errorf("%s of %s, not a number", f.Op(), a.Type)
	}
	return t, nil
}

// exactIn is the type a kernel of exact numbers reads t in: integers as BIGINT.
func exactIn(t vec.Type) vec.Type {
	if t.IsInteger() {
		return vec.Int64Type
	}
	return t
}

// absSig: ABS is BIGINT for integers, else the argument's type.
func absSig(f *Func, args []Arg) (Sig, error) {
	t, err := number(f, args[0])
	if err != nil {
		return Sig{}, err
	}
	s := sigOf(Type{Type: exactIn(t)}, 1, exactIn(t))
	if s.Result.Type == args[0].Type.Type {
		s.Same = 0
	}
	return s, nil
}

// floorSig: FLOOR's and CEIL's result is DOUBLE for doubles, BIGINT for integers and for
// decimals whose integer part fits 17 digits, else DECIMAL(p-s+1, 0) (MySQL).
func floorSig(f *Func, args []Arg) (Sig, error) {
	t, err := number(f, args[0])
	if err != nil {
		return Sig{}, err
	}
	r := vec.Int64Type
	switch {
	case t.ID == vec.Float64:
		r = t
	case t.IsDecimal() && t.Precision-t.Scale > 17:
		r = vec.Decimal(t.Precision-t.Scale+1, 0)
	}
	s := sigOf(Type{Type: r}, 1, exactIn(args[0].Type.Type))
	if r == args[0].Type.Type && r.ID == vec.Float64 {
		s.Same = 0 // a double stays the argument's DOUBLE
	}
	return s, nil
}

// roundSig types ROUND(x[, d]) (carry) and TRUNCATE(x, d): d must be an integer constant
// (or NULL), which the kernel is built with. Integers give BIGINT, doubles DOUBLE; a
// DECIMAL(p,s) keeps min(max(d,0), s) places, with one more integer digit when ROUND may
// carry into it (MySQL).
func roundSig(carry bool) func(f *Func, args []Arg) (Sig, error) {
	return func(f *Func, args []Arg) (Sig, error) { return roundType(f, args, carry) }
}

func roundType(f *Func, args []Arg, carry bool) (Sig, error) {
	t, err := number(f, args[0])
	if err != nil {
		return Sig{}, err
	}
	var d int64
	if len(args) == 2 {
		a := args[1]
		if a.Const == nil || !(isIntegral(a.Type.Type) || a.IsNull()) {
			return Sig{}, fmt.Errorf("the digits of %s must be an integer constant", f.Op())
		}
		if !a.Const.Null {
			d = DigitsValue(*a.Const)
		}
	}
	r := t
	switch {
	case t.IsInteger():
		r = vec.Int64Type
	case t.IsDecimal():
		s := int32(max(min(d, int64(t.Scale)), 0))
		p := t.Precision - t.Scale + s
		if carry && d < int64(t.Scale) {
			p++
		}
		r = vec.Decimal(max(p, 1), s)
	}
	s := Sig{Result: Type{Type: r}, Args: []vec.Type{exactIn(args[0].Type.Type)}, Same: -1}
	if len(args) == 2 {
		s.Args = append(s.Args, vec.Type{}) // the digits: built in
	}
	if !r.IsDecimal() && r == args[0].Type.Type {
		s.Same = 0 // a BIGINT or a DOUBLE stays the argument's type
	}
	return s, nil
}

// DigitsValue reads ROUND's digits from an integer or scale-0 decimal constant, clamped to
// a range where every larger value means the same.
func DigitsValue(d vec.Datum) int64 {
	v := d.Int
	if d.Type.ID == vec.Int32 || d.Type.ID == vec.Int64 || d.Type.ID == vec.Decimal64 {
		return max(min(v, 100), -100)
	}
	if d.Type.ID == vec.Decimal128 {
		w := vec.Int128{Lo: uint64(d.Int), Hi: d.Hi}
		switch {
		case w.IsInt64():
			return max(min(int64(w.Lo), 100), -100)
		case w.Sign() < 0:
			return -100
		}
		return 100
	}
	return 0
}

// signSig: SIGN is BIGINT; the kernel reads integers as BIGINT.
func signSig(f *Func, args []Arg) (Sig, error) {
	if err := checkNumbers(f, args); err != nil {
		return Sig{}, err
	}
	return sigOf(Type{Type: vec.Int64Type}, 1, exactIn(args[0].Type.Type)), nil
}

// sleepSig: SLEEP(seconds) is BIGINT, its argument read as a double.
func sleepSig(f *Func, args []Arg) (Sig, error) {
	if err := checkNumbers(f, args); err != nil {
		return Sig{}, err
	}
	return sigOf(Type{Type: vec.Int64Type}, 1, vec.Float64Type), nil
}

// datePartSig types the date parts: a date (or, for exec, nothing else) and an INT.
func datePartSig(f *Func, args []Arg) (Sig, error) {
	if args[0].ID != vec.Date32 {
		return Sig{}, fmt.Errorf("%s from %s, not a date", f.Op(), args[0].Type)
	}
	return sigOf(Type{Type: vec.Int32Type}, 1, vec.DateType), nil
}

// dateDiffSig: DATEDIFF of two dates is BIGINT.
func dateDiffSig(f *Func, args []Arg) (Sig, error) {
	for i, a := range args {
		if a.ID != vec.Date32 && !a.IsNull() {
			return Sig{}, fmt.Errorf("argument %d of %s is %s, not a date", i+1, f.Op(), a.Type)
		}
	}
	return sigOf(Type{Type: vec.Int64Type}, 2, vec.DateType), nil
}

// unixTimestampSig: UNIX_TIMESTAMP of a datetime is BIGINT.
func unixTimestampSig(f *Func, args []Arg) (Sig, error) {
	if args[0].ID != vec.Datetime {
		return Sig{}, fmt.Errorf("%s of %s, not a datetime", f.Op(), args[0].Type)
	}
	return sigOf(Type{Type: vec.Int64Type}, 1, vec.DatetimeType), nil
}

// datetimeFspSig: datetime_fsp(t, n) is a DATETIME, n a constant from 0 to 6.
func datetimeFspSig(f *Func, args []Arg) (Sig, error) {
	if args[0].ID != vec.Datetime {
		return Sig{}, fmt.Errorf("%s of %s, not a datetime", f.Op(), args[0].Type)
	}
	if n, ok := constInt(args[1]); !ok || n < 0 || n > 6 {
		return Sig{}, fmt.Errorf("%s needs a constant number of digits from 0 to 6", f.Op())
	}
	s := sigOf(Type{Type: vec.DatetimeType}, 2, vec.Int64Type)
	s.Args[0] = vec.DatetimeType
	return s, nil
}

// timePartSig types the parts of a time of day: a datetime and an INT.
func timePartSig(f *Func, args []Arg) (Sig, error) {
	if args[0].ID != vec.Datetime {
		return Sig{}, fmt.Errorf("%s from %s, not a datetime", f.Op(), args[0].Type)
	}
	return sigOf(Type{Type: vec.Int32Type}, 1, vec.DatetimeType), nil
}

// substringSig: SUBSTRING(s, pos[, len]) is a string no longer than s, nor than a constant
// len; the kernel reads the positions as BIGINT.
func substringSig(f *Func, args []Arg) (Sig, error) {
	if args[0].ID != vec.String {
		return Sig{}, fmt.Errorf("%s of %s, not a string", f.Op(), args[0].Type)
	}
	for i, a := range args[1:] {
		if !isIntegral(a.Type.Type) {
			return Sig{}, fmt.Errorf("%s argument %d is %s, not an integer", f.Op(), i+2, a.Type)
		}
	}
	r := text(args[0].Len)
	if len(args) == 3 {
		if n, ok := constInt(args[2]); ok && n >= 0 {
			r = atMost(r, n)
		}
	}
	s := sigOf(r, len(args), vec.Int64Type)
	s.Args[0] = vec.StringType
	return s, nil
}

// constInt is a BIGINT constant's value.
func constInt(a Arg) (int64, bool) {
	if a.Const == nil || a.Const.Null || a.ID != vec.Int64 {
		return 0, false
	}
	return a.Const.Int, true
}

// atMost is string type t no longer than n characters (n >= 0).
func atMost(t Type, n int64) Type {
	if w := int64(t.Len); w == 0 || n < w {
		t.Len = int(min(n, math.MaxInt32))
	}
	return t
}

// locateSig types LOCATE(sub, s[, pos]): two strings and an integer position, an INT.
func locateSig(f *Func, args []Arg) (Sig, error) {
	if err := checkStrings(f, args[:2]); err != nil {
		return Sig{}, err
	}
	if len(args) == 3 && !isIntegral(args[2].Type.Type) && !args[2].IsNull() {
		return Sig{}, fmt.Errorf("the position of %s is %s, not an integer", f.Op(), args[2].Type)
	}
	s := sigOf(Type{Type: vec.Int32Type}, len(args), vec.StringType)
	if len(args) == 3 {
		s.Args[2] = vec.Int64Type
	}
	return s, nil
}

// unsignedSig types the unsigned check: a BIGINT in, the same BIGINT out.
func unsignedSig(f *Func, args []Arg) (Sig, error) {
	if a := args[0]; a.ID != vec.Int64 && !a.IsNull() {
		return Sig{}, fmt.Errorf("%s of %s, not a BIGINT", f.Op(), a.Type)
	}
	return sigOf(Type{Type: vec.Int64Type}, 1, vec.Int64Type), nil
}

// charsSig types LEFT(s, n) and RIGHT(s, n): a string no longer than s, nor than a constant
// n; the kernel reads n as BIGINT.
func charsSig(f *Func, args []Arg) (Sig, error) {
	if a := args[0]; a.ID != vec.String && !a.IsNull() {
		return Sig{}, fmt.Errorf("argument 1 of %s is %s, not a string", f.Op(), a.Type)
	}
	if a := args[1]; !isIntegral(a.Type.Type) && !a.IsNull() {
		return Sig{}, fmt.Errorf("the length of %s is %s, not an integer", f.Op(), a.Type)
	}
	r := text(args[0].Len)
	if n, ok := constInt(args[1]); ok {
		r = atMost(r, max(n, 0))
	}
	return Sig{Result: r, Args: []vec.Type{vec.StringType, vec.Int64Type}, Same: -1}, nil
}

// replaceLength: REPLACE's result can grow by len(to)-len(from) per occurrence, so it is
// unbounded unless constants show a replacement that does not lengthen the string.
func replaceLength(args []Arg) Type {
	from, to := args[1].Const, args[2].Const
	if from != nil && to != nil && !from.Null && !to.Null && utf8.RuneCountInString(to.Str) <= utf8.RuneCountInString(from.Str) {
		return text(args[0].Len)
	}
	return text(0)
}

// concatLength: CONCAT is as long as its arguments together.
func concatLength(args []Arg) Type {
	n := 0
	for _, a := range args {
		n += a.Len
	}
	return text(n)
}

// anyNull reports a NULL among constant arguments: the planner folds some functions only
// then (their call is NULL whatever the kernel).
func anyNull(args []vec.Datum) bool {
	for _, a := range args {
		if a.Null {
			return true
		}
	}
	return false
}

// roundFolds: the planner folds ROUND of a double, or of an exact number to d >= 0 places.
func roundFolds(args []vec.Datum) bool {
	return anyNull(args) || args[0].Type.ID == vec.Float64 || len(args) < 2 || DigitsValue(args[1]) >= 0
}
