// Package types owns colink's SQL data types and constant values: the type of every column
// and expression the planner sees, MySQL's rules for the types of arithmetic results
// (decimal precision and scale), the mapping to Arrow types shared by the whole engine, and
// the literal values the binder and the constant folder work with.
package types

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Kind is the kind of a SQL type.
type Kind uint8

// The kinds of SQL type the engine handles.
const (
	Null     Kind = iota // the type of a bare NULL literal, before it takes its context's type
	Bool                 // boolean (MySQL's TINYINT(1) results of comparisons)
	Int32                // INT
	Int64                // BIGINT
	Decimal              // DECIMAL(p,s): p <= 18 is a scaled int64, wider is a scaled 128-bit integer
	Float64              // DOUBLE
	Date                 // DATE, days since 1970-01-01
	Char                 // CHAR(n)
	Varchar              // VARCHAR(n)
	Datetime             // DATETIME(fsp) and TIMESTAMP(fsp): microseconds since 1970-01-01 00:00:00
)

// Limits of exact decimals. A decimal with more than MaxDecimal64Precision digits is carried
// as Decimal128; sums are DECIMAL(38,s), the engine's shared convention.
const (
	MaxDecimal64Precision = 18
	MaxPrecision          = 38
	MaxScale              = 30
	// DivPrecisionIncrement is MySQL's div_precision_increment: the scale a division and AVG
	// add to their dividend's scale.
	DivPrecisionIncrement = 4
)

// Type is a SQL type. Precision and Scale describe decimals; a DATETIME's Scale is its
// fractional-second digits (fsp, 0 … 6). For integers Precision, when
// not zero, is the number of decimal digits a literal needs (MySQL types the literal 1 as
// one digit wide, which matters for the precision of decimal arithmetic). Length is the
// declared length of CHAR and VARCHAR (0: unknown).
type Type struct {
	Kind      Kind
	Precision int
	Scale     int
	Length    int
}

// Common types.
var (
	NullType    = Type{Kind: Null}
	BoolType    = Type{Kind: Bool}
	Int32Type   = Type{Kind: Int32}
	Int64Type   = Type{Kind: Int64}
	Float64Type = Type{Kind: Float64}
	DateType    = Type{Kind: Date}
)

// Dec returns DECIMAL(p,s) as the engine carries decimals: the precision capped at 38 and
// the scale at 30, the precision at least the scale (and at least 1). A precision up to 18
// is a scaled int64 (Decimal64), above it a scaled 128-bit integer (Decimal128).
func Dec(p, s int) Type {
	if s > MaxScale {
		s = MaxScale
	}
	if s < 0 {
		s = 0
	}
	if p > MaxPrecision {
		p = MaxPrecision
	}
	if p < s {
		p = s
	}
	if p < 1 {
		p = 1
	}
	return Type{Kind: Decimal, Precision: p, Scale: s}
}

// DatetimeType returns DATETIME(fsp), fsp capped at 0 … 6.
func DatetimeType(fsp int) Type { return Type{Kind: Datetime, Scale: min(max(fsp, 0), 6)} }

// VarcharType returns VARCHAR(n).
func VarcharType(n int) Type { return Type{Kind: Varchar, Length: n} }

// CharType returns CHAR(n).
func CharType(n int) Type { return Type{Kind: Char, Length: n} }

// IsInteger reports an integer kind.
func (t Type) IsInteger() bool { return t.Kind == Int32 || t.Kind == Int64 }

// IsNumeric reports a kind arithmetic accepts (booleans count as 0 and 1, as in MySQL).
func (t Type) IsNumeric() bool {
	switch t.Kind {
	case Bool, Int32, Int64, Decimal, Float64:
		return true
	}
	return false
}

// IsString reports CHAR or VARCHAR.
func (t Type) IsString() bool { return t.Kind == Char || t.Kind == Varchar }

// Equal reports whether two types carry values the same way (integer display digits aside).
func (t Type) Equal(u Type) bool {
	if t.Kind != u.Kind {
		return false
	}
	switch t.Kind {
	case Decimal:
		return t.Precision == u.Precision && t.Scale == u.Scale
	case Datetime:
		return t.Scale == u.Scale
	case Char, Varchar:
		return t.Length == u.Length
	}
	return true
}

// String spells the type as MySQL's DDL does, e.g. "decimal(15,2)".
func (t Type) String() string {
	switch t.Kind {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Int32:
		return "int"
	case Int64:
		return "bigint"
	case Decimal:
		return "decimal(" + strconv.Itoa(t.Precision) + "," + strconv.Itoa(t.Scale) + ")"
	case Float64:
		return "double"
	case Date:
		return "date"
	case Datetime:
		if t.Scale > 0 {
			return "datetime(" + strconv.Itoa(t.Scale) + ")"
		}
		return "datetime"
	case Char:
		return "char(" + strconv.Itoa(t.Length) + ")"
	case Varchar:
		if t.Length == 0 {
			return "varchar"
		}
		return "varchar(" + strconv.Itoa(t.Length) + ")"
	}
	return fmt.Sprintf("kind%d", t.Kind)
}

// Arrow returns the Arrow type that carries the values in memory and on the link.
func (t Type) Arrow() arrow.DataType {
	switch t.Kind {
	case Null:
		return arrow.Null
	case Bool:
		return arrow.FixedWidthTypes.Boolean
	case Int32:
		return arrow.PrimitiveTypes.Int32
	case Int64:
		return arrow.PrimitiveTypes.Int64
	case Decimal:
		if t.Precision <= MaxDecimal64Precision {
			return &arrow.Decimal64Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}
		}
		return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}
	case Float64:
		return arrow.PrimitiveTypes.Float64
	case Date:
		return arrow.FixedWidthTypes.Date32
	case Datetime:
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case Char, Varchar:
		return arrow.BinaryTypes.String
	}
	panic(fmt.Sprintf("types: kind %d has no Arrow type", t.Kind))
}

// Width estimates the bytes one value occupies in a columnar batch: the fixed width, or for
// strings half the declared length plus the offset (the planner's guess before statistics
// on string lengths exist).
func (t Type) Width() int {
	switch t.Kind {
	case Null, Bool:
		return 1
	case Int32, Date:
		return 4
	case Int64, Float64, Datetime:
		return 8
	case Decimal:
		if t.Precision <= MaxDecimal64Precision {
			return 8
		}
		return 16
	case Char:
		return t.Length + 4
	case Varchar:
		if t.Length == 0 {
			return 20
		}
		return t.Length/2 + 4
	}
	return 8
}

// decimalView returns the decimal precision and scale that a numeric type has in MySQL's
// decimal arithmetic: INT counts as 10 digits, BIGINT 19, an integer literal its own digits.
func decimalView(t Type) (p, s int) {
	switch t.Kind {
	case Bool:
		return 1, 0
	case Int32:
		if t.Precision > 0 {
			return t.Precision, 0
		}
		return 10, 0
	case Int64:
		if t.Precision > 0 {
			return t.Precision, 0
		}
		return 19, 0
	case Decimal:
		return t.Precision, t.Scale
	}
	return MaxPrecision, 0
}

// ArithOp is an arithmetic operator for type inference.
type ArithOp uint8

// The arithmetic operators.
const (
	OpAdd ArithOp = iota
	OpSub
	OpMul
	OpDiv    // "/": decimal division, scale + DivPrecisionIncrement
	OpIntDiv // DIV: integer division
	OpMod
)

// Arith returns the type of "a op b" by MySQL's rules: integers stay BIGINT (except "/"),
// any DOUBLE makes DOUBLE, and decimals take scale max(s1,s2) for + and -, s1+s2 for *, and
// s1+4 for /.
func Arith(op ArithOp, a, b Type) (Type, error) {
	if !a.IsNumeric() && a.Kind != Null || !b.IsNumeric() && b.Kind != Null {
		return Type{}, fmt.Errorf("arithmetic on %s and %s", a, b)
	}
	if a.Kind == Null {
		a = b
	}
	if b.Kind == Null {
		b = a
	}
	if a.Kind == Null {
		return Int64Type, nil
	}
	if op == OpIntDiv {
		return Int64Type, nil
	}
	if a.Kind == Float64 || b.Kind == Float64 {
		return Float64Type, nil
	}
	intLike := func(t Type) bool { return t.IsInteger() || t.Kind == Bool }
	if intLike(a) && intLike(b) && op != OpDiv {
		return Int64Type, nil
	}
	p1, s1 := decimalView(a)
	p2, s2 := decimalView(b)
	switch op {
	case OpAdd, OpSub:
		s := max(s1, s2)
		return Dec(max(p1-s1, p2-s2)+s+1, s), nil
	case OpMul:
		return Dec(p1+p2, s1+s2), nil
	case OpDiv:
		return Dec(p1+s2+DivPrecisionIncrement, s1+DivPrecisionIncrement), nil
	case OpMod:
		s := max(s1, s2)
		return Dec(max(p1-s1, p2-s2)+s, s), nil
	}
	return Type{}, fmt.Errorf("unknown arithmetic operator %d", op)
}

// Sum returns the type of SUM(t): a decimal sum accumulates in 128 bits as DECIMAL(38,s), an
// integer sum is DECIMAL(38,0) as in MySQL, a DOUBLE sum stays DOUBLE.
func Sum(t Type) (Type, error) {
	switch t.Kind {
	case Bool, Int32, Int64, Null:
		return Dec(MaxPrecision, 0), nil
	case Decimal:
		return Dec(MaxPrecision, t.Scale), nil
	case Float64:
		return Float64Type, nil
	}
	return Type{}, fmt.Errorf("SUM of %s", t)
}

// Avg returns the type of AVG(t): DECIMAL(38, s+4) for exact inputs (MySQL's scale; the
// precision of the 128-bit sum it divides), DOUBLE for DOUBLE.
func Avg(t Type) (Type, error) {
	switch t.Kind {
	case Bool, Int32, Int64, Null, Decimal:
		_, s := decimalView(t)
		return Dec(MaxPrecision, s+DivPrecisionIncrement), nil
	case Float64:
		return Float64Type, nil
	}
	return Type{}, fmt.Errorf("AVG of %s", t)
}

// Common returns the type two values are compared or merged in (comparison operands, IN
// lists, CASE branches), or false when they have none. Integers widen to BIGINT, integers
// and decimals meet in a decimal wide enough for both, DOUBLE absorbs numbers, strings meet
// as VARCHAR, DATE absorbs strings (a string compared with a date is read as a date), and
// DATETIME absorbs DATE and strings.
func Common(a, b Type) (Type, bool) {
	if a.Kind == Null {
		return b, true
	}
	if b.Kind == Null {
		return a, true
	}
	switch {
	case a.Kind == Datetime && (b.Kind == Datetime || b.Kind == Date), b.Kind == Datetime && a.Kind == Date:
		// The values are microseconds whatever the fsp; the wider fsp keeps every digit.
		return DatetimeType(max(a.Scale, b.Scale)), true
	case a.Kind == Datetime && b.IsString(), b.Kind == Datetime && a.IsString():
		// A string read as a datetime keeps every fraction digit it has.
		return DatetimeType(6), true
	case a.Kind == b.Kind && a.Kind != Decimal && !a.IsString():
		if a.IsInteger() {
			return Type{Kind: a.Kind}, true
		}
		return a, true
	case a.IsString() && b.IsString():
		if a.Kind == Char && b.Kind == Char && a.Length == b.Length {
			return a, true
		}
		return VarcharType(max(a.Length, b.Length)), true
	case a.Kind == Date && b.IsString(), b.Kind == Date && a.IsString():
		return DateType, true
	case a.IsNumeric() && b.IsNumeric():
		if a.Kind == Float64 || b.Kind == Float64 {
			return Float64Type, true
		}
		if (a.IsInteger() || a.Kind == Bool) && (b.IsInteger() || b.Kind == Bool) {
			if a.Kind == Int64 || b.Kind == Int64 {
				return Int64Type, true
			}
			if a.Kind == Int32 || b.Kind == Int32 {
				return Int32Type, true
			}
			return BoolType, true
		}
		p1, s1 := decimalView(a)
		p2, s2 := decimalView(b)
		s := max(s1, s2)
		return Dec(max(p1-s1, p2-s2)+s, s), true
	case a.IsNumeric() && b.IsString(), a.IsString() && b.IsNumeric():
		return Float64Type, true
	}
	return Type{}, false
}

// ParseSQLType parses the SQL types tables declare: int, integer, bigint, decimal(p,s),
// date, datetime(fsp) (and timestamp(fsp), stored as one), char(n), varchar(n), text,
// double, boolean.
func ParseSQLType(s string) (Type, bool) {
	s = strings.ToLower(strings.Join(strings.Fields(s), ""))
	name, params, _ := strings.Cut(s, "(")
	params = strings.TrimSuffix(params, ")")
	num := func(p string) (int, bool) {
		n, err := strconv.Atoi(p)
		return n, err == nil && n >= 0
	}
	switch name {
	case "int", "integer":
		return Int32Type, true
	case "bigint":
		return Int64Type, true
	case "double":
		return Float64Type, true
	case "date":
		return DateType, true
	case "datetime", "timestamp":
		fsp := 0
		if params != "" {
			var ok bool
			if fsp, ok = num(params); !ok || fsp > 6 {
				return Type{}, false
			}
		}
		return DatetimeType(fsp), true
	case "boolean", "bool":
		return BoolType, true
	case "text":
		return VarcharType(0), true
	case "char", "varchar":
		n := 0
		if params != "" {
			var ok bool
			if n, ok = num(params); !ok {
				return Type{}, false
			}
		}
		if name == "char" {
			return CharType(n), true
		}
		return VarcharType(n), true
	case "decimal":
		ps, ss, _ := strings.Cut(params, ",")
		p, ok1 := num(ps)
		sc, ok2 := num(ss)
		if ss == "" {
			sc, ok2 = 0, true
		}
		if !ok1 || !ok2 || p < 1 || sc > p {
			return Type{}, false
		}
		return Dec(p, sc), true
	}
	return Type{}, false
}

// DecimalView returns the precision and scale a numeric type has in decimal arithmetic.
func DecimalView(t Type) (p, s int) { return decimalView(t) }
