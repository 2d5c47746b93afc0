package vec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// SQLTypeKey is the Arrow field metadata key under which a stored or result column's SQL
// type is recorded ("char(25)", "decimal(15,2)"), so that a schema read back from a segment
// file or received over the link still says CHAR(25) rather than only "utf8". This is the
// one mapping between SQL types and Arrow types: SQLField goes from SQL to Arrow, SQLTypeOf
// back.
const SQLTypeKey = "colink.sql_type"

// DefaultKey is the Arrow field metadata key under which a stored column's DEFAULT is
// recorded: the value's text as MySQL's SHOW CREATE TABLE quotes it ("0", "abc",
// "2024-01-01"), or DefaultNow. A column without it has no default (NULL, if nullable).
const DefaultKey = "colink.default"

// DefaultNow is the DefaultKey value of DEFAULT CURRENT_TIMESTAMP (a DATETIME column's).
const DefaultNow = "CURRENT_TIMESTAMP"

// SQLField returns the Arrow field of a column of SQL type sqlType, recording the type
// (normalised: lower case, no spaces) under SQLTypeKey. The types a stored column may have
// are int, bigint, decimal(p,s) with p <= MaxDecimal64Precision, date, datetime(fsp),
// char(n), varchar(n), double and boolean.
func SQLField(name, sqlType string, nullable bool) (arrow.Field, error) {
	t, err := storedType(sqlType)
	if err != nil {
		return arrow.Field{}, err
	}
	norm := strings.ToLower(strings.Join(strings.Fields(sqlType), ""))
	return arrow.Field{Name: name, Type: t.Arrow(), Nullable: nullable,
		Metadata: arrow.NewMetadata([]string{SQLTypeKey}, []string{norm})}, nil
}

// storedType accepts the SQL types a table column can have.
func storedType(s string) (Type, error) {
	name, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "(")
	switch strings.TrimSpace(name) {
	case "int", "integer", "bigint", "date", "datetime", "char", "varchar", "text", "double", "boolean", "bool", "decimal":
	default:
		return Type{}, fmt.Errorf("unsupported SQL type %q (want int, bigint, decimal(p,s), date, datetime(fsp), char(n), varchar(n), double or boolean)", s)
	}
	t, err := ParseType(s)
	if err != nil {
		return Type{}, fmt.Errorf("SQL type %q: %w", s, err)
	}
	if t.ID == Decimal128 {
		return Type{}, fmt.Errorf("SQL type %q: stored decimals need precision <= %d", s, MaxDecimal64Precision)
	}
	return t, nil
}

// DatetimeFsp is the fractional-second digits of a DATETIME field, from its SQL type
// ("datetime(3)" is 3): 0 without one, as "datetime" and a timestamp field of no SQL type.
// exec's values carry no fsp (Type); only their spelling and storing use it.
func DatetimeFsp(f arrow.Field) int {
	st, ok := f.Metadata.GetValue(SQLTypeKey)
	if !ok {
		return 0
	}
	_, params, ok := strings.Cut(st, "(")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(params, ")")))
	if err != nil || n < 0 || n > 6 {
		return 0
	}
	return n
}

// SQLTypeOf returns a field's SQL type: its SQLTypeKey metadata, or a name derived from its
// Arrow type (int, bigint, decimal(p,s), date, varchar, double, boolean, varbinary).
func SQLTypeOf(f arrow.Field) string {
	if i := f.Metadata.FindKey(SQLTypeKey); i >= 0 {
		return f.Metadata.Values()[i]
	}
	switch t := f.Type.(type) {
	case *arrow.Int32Type:
		return "int"
	case *arrow.Int64Type:
		return "bigint"
	case *arrow.Decimal64Type:
		return "decimal(" + strconv.Itoa(int(t.Precision)) + "," + strconv.Itoa(int(t.Scale)) + ")"
	case *arrow.Decimal128Type:
		return "decimal(" + strconv.Itoa(int(t.Precision)) + "," + strconv.Itoa(int(t.Scale)) + ")"
	case *arrow.Date32Type:
		return "date"
	case *arrow.TimestampType:
		return "datetime(6)" // the fraction digits unknown: all of them
	case *arrow.StringType:
		return "varchar"
	case *arrow.Float64Type:
		return "double"
	case *arrow.BooleanType:
		return "boolean"
	case *arrow.BinaryType:
		return "varbinary"
	}
	return f.Type.String()
}
