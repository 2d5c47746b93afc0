package vec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// TypeID is the physical kind of a column's values.
type TypeID uint8

// The value kinds the engine computes with. The numbering is part of the serialized plan
// forms (msgpack); append new kinds at the end.
const (
	Invalid    TypeID = iota
	Bool              // boolean
	Int32             // SQL INT
	Int64             // SQL BIGINT
	Float64           // SQL DOUBLE
	Decimal64         // DECIMAL(p,s), p <= 18: int64 scaled by 10^s
	Decimal128        // DECIMAL(p,s), 18 < p <= 38: Int128 scaled by 10^s
	Date32            // DATE: days since 1970-01-01
	String            // CHAR/VARCHAR: UTF-8 bytes
	Datetime          // DATETIME(fsp): microseconds since 1970-01-01 00:00:00
)

// MaxDecimal64Precision is the largest precision that Decimal64 holds: 10^18-1 < 2^63.
const MaxDecimal64Precision = 18

// MaxPrecision is the largest decimal precision the engine represents (Decimal128).
const MaxPrecision = 38

// MaxScale is the largest decimal scale, as in MySQL (DECIMAL_MAX_SCALE).
const MaxScale = 30

// Type is a column's value type. Precision and Scale are meaningful for decimals only. A
// DATETIME's fractional-second digits belong to its SQL type (the field's SQLTypeKey), not
// here: they change how it is spelled, never what is computed.
type Type struct {
	ID        TypeID `msgpack:"id"`
	Precision int32  `msgpack:"p,omitempty"`
	Scale     int32  `msgpack:"s,omitempty"`
}

// Ready-made types without parameters.
var (
	BoolType    = Type{ID: Bool}
	Int32Type   = Type{ID: Int32}
	Int64Type   = Type{ID: Int64}
	Float64Type = Type{ID: Float64}
	DateType    = Type{ID: Date32}
	// DatetimeType is DATETIME of any fsp.
	DatetimeType = Type{ID: Datetime}
	StringType   = Type{ID: String}
)

// Decimal returns DECIMAL(p,s): Decimal64 when p <= 18, Decimal128 otherwise. p is capped at
// MaxPrecision and s at MaxScale (and at p).
func Decimal(p, s int32) Type {
	if s > MaxScale {
		s = MaxScale
	}
	if p > MaxPrecision {
		p = MaxPrecision
	}
	if p < 1 {
		p = 1
	}
	if s > p {
		p = s
		if p > MaxPrecision {
			p = MaxPrecision
			s = p
		}
	}
	if p <= MaxDecimal64Precision {
		return Type{ID: Decimal64, Precision: p, Scale: s}
	}
	return Type{ID: Decimal128, Precision: p, Scale: s}
}

// IsDecimal reports whether t is Decimal64 or Decimal128.
func (t Type) IsDecimal() bool { return t.ID == Decimal64 || t.ID == Decimal128 }

// IsInteger reports whether t is Int32 or Int64.
func (t Type) IsInteger() bool { return t.ID == Int32 || t.ID == Int64 }

// IsNumeric reports whether t is an integer, decimal or double.
func (t Type) IsNumeric() bool { return t.IsInteger() || t.IsDecimal() || t.ID == Float64 }

// DecimalPrecision is the number of decimal digits a value of t can have: p for decimals,
// 10 for INT, 19 for BIGINT (as MySQL counts them when mixing integers with decimals).
func (t Type) DecimalPrecision() int32 {
	switch t.ID {
	case Int32:
		return 10
	case Int64:
		return 19
	case Bool:
		return 1
	}
	return t.Precision
}

// DecimalScale is the number of digits after the point: s for decimals, 0 for integers.
func (t Type) DecimalScale() int32 {
	if t.IsDecimal() {
		return t.Scale
	}
	return 0
}

// Width is the byte width of one fixed-width value (0 for strings).
func (t Type) Width() int {
	switch t.ID {
	case Bool:
		return 1
	case Int32, Date32:
		return 4
	case Int64, Float64, Decimal64, Datetime:
		return 8
	case Decimal128:
		return 16
	}
	return 0
}

// String spells the type: bool, int32, int64, double, decimal(p,s), date, string.
func (t Type) String() string {
	switch t.ID {
	case Bool:
		return "bool"
	case Int32:
		return "int32"
	case Int64:
		return "int64"
	case Float64:
		return "double"
	case Decimal64, Decimal128:
		return "decimal(" + strconv.Itoa(int(t.Precision)) + "," + strconv.Itoa(int(t.Scale)) + ")"
	case Date32:
		return "date"
	case Datetime:
		return "datetime"
	case String:
		return "string"
	}
	return "invalid(" + strconv.Itoa(int(t.ID)) + ")"
}

// Validate checks that t is a well-formed type.
func (t Type) Validate() error {
	switch t.ID {
	case Bool, Int32, Int64, Float64, Date32, String:
		return nil
	case Datetime:
		if t.Scale != 0 || t.Precision != 0 {
			return fmt.Errorf("vec: invalid datetime type (precision %d, scale %d)", t.Precision, t.Scale)
		}
		return nil
	case Decimal64, Decimal128:
		if t.Precision < 1 || t.Precision > MaxPrecision || t.Scale < 0 || t.Scale > t.Precision || t.Scale > MaxScale {
			return fmt.Errorf("vec: invalid decimal type decimal(%d,%d)", t.Precision, t.Scale)
		}
		if (t.ID == Decimal64) != (t.Precision <= MaxDecimal64Precision) {
			return fmt.Errorf("vec: decimal(%d,%d) must be %s", t.Precision, t.Scale, Decimal(t.Precision, t.Scale).physicalName())
		}
		return nil
	}
	return fmt.Errorf("vec: invalid type id %d", t.ID)
}

func (t Type) physicalName() string {
	if t.ID == Decimal64 {
		return "Decimal64"
	}
	return "Decimal128"
}

// ParseType parses the spelling String produces, plus the SQL aliases int, bigint, integer,
// varchar, char, text, boolean, float64, timestamp (case-insensitive; the parameters of
// char(n) and of datetime(fsp) ignored).
func ParseType(s string) (Type, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	name, params, hasParams := strings.Cut(l, "(")
	name = strings.TrimSpace(name)
	switch name {
	case "bool", "boolean":
		return BoolType, nil
	case "int32", "int", "integer":
		return Int32Type, nil
	case "int64", "bigint":
		return Int64Type, nil
	case "double", "float64":
		return Float64Type, nil
	case "date":
		return DateType, nil
	case "datetime", "timestamp":
		if hasParams {
			fsp, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(params, ")")))
			if err != nil || fsp < 0 || fsp > 6 || !strings.HasSuffix(params, ")") {
				return Type{}, fmt.Errorf("vec: bad datetime type %q (fsp is 0 to 6)", s)
			}
		}
		return DatetimeType, nil
	case "string", "varchar", "char", "text":
		return StringType, nil
	case "decimal":
		if !hasParams || !strings.HasSuffix(params, ")") {
			return Type{}, fmt.Errorf("vec: decimal type %q needs (precision,scale)", s)
		}
		ps, ss, ok := strings.Cut(strings.TrimSuffix(params, ")"), ",")
		if !ok {
			ss = "0"
		}
		p, err1 := strconv.Atoi(strings.TrimSpace(ps))
		sc, err2 := strconv.Atoi(strings.TrimSpace(ss))
		if err1 != nil || err2 != nil || p < 1 || p > MaxPrecision || sc < 0 || sc > p || sc > MaxScale {
			return Type{}, fmt.Errorf("vec: bad decimal type %q", s)
		}
		return Decimal(int32(p), int32(sc)), nil
	}
	return Type{}, fmt.Errorf("vec: unknown type %q", s)
}

// Arrow returns the Arrow type that carries t's values.
func (t Type) Arrow() arrow.DataType {
	switch t.ID {
	case Bool:
		return arrow.FixedWidthTypes.Boolean
	case Int32:
		return arrow.PrimitiveTypes.Int32
	case Int64:
		return arrow.PrimitiveTypes.Int64
	case Float64:
		return arrow.PrimitiveTypes.Float64
	case Decimal64:
		return &arrow.Decimal64Type{Precision: t.Precision, Scale: t.Scale}
	case Decimal128:
		return &arrow.Decimal128Type{Precision: t.Precision, Scale: t.Scale}
	case Date32:
		return arrow.FixedWidthTypes.Date32
	case Datetime:
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case String:
		return arrow.BinaryTypes.String
	}
	return arrow.Null
}

// FromArrow maps an Arrow type to the engine's type. An Arrow Decimal128 column declared with
// p <= 18 keeps its 128-bit layout and is reported as decimal(19,s): precision is an upper
// bound, and the engine's Decimal128 is defined by 18 < p.
func FromArrow(dt arrow.DataType) (Type, error) {
	switch d := dt.(type) {
	case *arrow.BooleanType:
		return BoolType, nil
	case *arrow.Int32Type:
		return Int32Type, nil
	case *arrow.Int64Type:
		return Int64Type, nil
	case *arrow.Float64Type:
		return Float64Type, nil
	case *arrow.Date32Type:
		return DateType, nil
	case *arrow.TimestampType:
		if d.Unit == arrow.Microsecond && d.TimeZone == "" {
			return DatetimeType, nil
		}
	case *arrow.StringType:
		return StringType, nil
	case *arrow.Decimal64Type:
		t := Type{ID: Decimal64, Precision: d.Precision, Scale: d.Scale}
		return t, t.Validate()
	case *arrow.Decimal128Type:
		t := Type{ID: Decimal128, Precision: max(d.Precision, MaxDecimal64Precision+1), Scale: d.Scale}
		return t, t.Validate()
	}
	return Type{}, fmt.Errorf("vec: arrow type %s is not supported", dt)
}

// TypesFromSchema maps every field of an Arrow schema.
func TypesFromSchema(s *arrow.Schema) ([]Type, error) {
	out := make([]Type, s.NumFields())
	for i, f := range s.Fields() {
		t, err := FromArrow(f.Type)
		if err != nil {
			return nil, fmt.Errorf("column %d (%s): %w", i, f.Name, err)
		}
		out[i] = t
	}
	return out, nil
}

// SchemaOf builds an Arrow schema from names and types (names may be nil: c0, c1, ...).
func SchemaOf(names []string, types []Type) *arrow.Schema {
	fields := make([]arrow.Field, len(types))
	for i, t := range types {
		name := "c" + strconv.Itoa(i)
		if i < len(names) && names[i] != "" {
			name = names[i]
		}
		fields[i] = arrow.Field{Name: name, Type: t.Arrow(), Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}
