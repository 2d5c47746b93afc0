package storage

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// colKind is the storage class of a column: how it is encoded in Parquet and how its zone map
// compares values.
type colKind uint8

const (
	kindBool colKind = iota + 1
	kindInt32
	kindInt64
	kindFloat64
	kindDate32
	kindDecimal64 // arrow Decimal64(p,s), p <= 18: Parquet INT64 with DECIMAL(p,s)
	kindString
	kindBinary
	kindTimestamp // arrow Timestamp(µs) without a zone (DATETIME): Parquet INT64 TIMESTAMP(MICROS, local)
)

// zoneClass tells how a kind's zone-map bounds are held and compared.
type zoneClass uint8

const (
	zoneInt   zoneClass = iota + 1 // int64 bounds: bool, ints, dates, scaled decimals
	zoneFloat                      // float64 bounds
	zoneBytes                      // byte-wise (unsigned) string bounds
)

func (k colKind) zoneClass() zoneClass {
	switch k {
	case kindFloat64:
		return zoneFloat
	case kindString, kindBinary:
		return zoneBytes
	}
	return zoneInt
}

// kindOf maps an Arrow type to its storage kind, or explains why it cannot be stored.
func kindOf(dt arrow.DataType) (colKind, error) {
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return kindBool, nil
	case *arrow.Int32Type:
		return kindInt32, nil
	case *arrow.Int64Type:
		return kindInt64, nil
	case *arrow.Float64Type:
		return kindFloat64, nil
	case *arrow.Date32Type:
		return kindDate32, nil
	case *arrow.Decimal64Type:
		if t.Precision < 1 || t.Precision > 18 || t.Scale < 0 || t.Scale > t.Precision {
			return 0, fmt.Errorf("decimal64(%d,%d) is not a valid decimal type", t.Precision, t.Scale)
		}
		return kindDecimal64, nil
	case *arrow.StringType:
		return kindString, nil
	case *arrow.BinaryType:
		return kindBinary, nil
	case *arrow.TimestampType:
		if t.Unit == arrow.Microsecond && t.TimeZone == "" {
			return kindTimestamp, nil
		}
	}
	return 0, fmt.Errorf("arrow type %s cannot be stored (supported: bool, int32, int64, float64, date32, timestamp[us], decimal64(p<=18,s), utf8, binary)", dt)
}

// typeName spells a storable Arrow type for the catalog; parseTypeName inverts it.
func typeName(dt arrow.DataType) string {
	if d, ok := dt.(*arrow.Decimal64Type); ok {
		return fmt.Sprintf("decimal64(%d,%d)", d.Precision, d.Scale)
	}
	return dt.String()
}

var decimalTypeName = regexp.MustCompile(`^decimal64\((\d+),(\d+)\)$`)

func parseTypeName(s string) (arrow.DataType, error) {
	switch s {
	case "bool":
		return arrow.FixedWidthTypes.Boolean, nil
	case "int32":
		return arrow.PrimitiveTypes.Int32, nil
	case "int64":
		return arrow.PrimitiveTypes.Int64, nil
	case "float64":
		return arrow.PrimitiveTypes.Float64, nil
	case "date32":
		return arrow.FixedWidthTypes.Date32, nil
	case "utf8":
		return arrow.BinaryTypes.String, nil
	case "binary":
		return arrow.BinaryTypes.Binary, nil
	case "timestamp[us]":
		return &arrow.TimestampType{Unit: arrow.Microsecond}, nil
	}
	if m := decimalTypeName.FindStringSubmatch(s); m != nil {
		p, _ := strconv.Atoi(m[1])
		sc, _ := strconv.Atoi(m[2])
		dt := &arrow.Decimal64Type{Precision: int32(p), Scale: int32(sc)}
		if _, err := kindOf(dt); err != nil {
			return nil, err
		}
		return dt, nil
	}
	return nil, fmt.Errorf("unknown column type %q", s)
}

// fieldJSON is one column of a schema as the catalog and the segment metadata record it.
type fieldJSON struct {
	Name     string      `json:"name"`
	Type     string      `json:"type"`
	Nullable bool        `json:"nullable,omitempty"`
	Metadata [][2]string `json:"metadata,omitempty"` // ordered key/value pairs
}

func schemaToJSON(sc *arrow.Schema) []fieldJSON {
	out := make([]fieldJSON, sc.NumFields())
	for i, f := range sc.Fields() {
		fj := fieldJSON{Name: f.Name, Type: typeName(f.Type), Nullable: f.Nullable}
		for j, k := range f.Metadata.Keys() {
			fj.Metadata = append(fj.Metadata, [2]string{k, f.Metadata.Values()[j]})
		}
		out[i] = fj
	}
	return out
}

func schemaFromJSON(fields []fieldJSON) (*arrow.Schema, error) {
	out := make([]arrow.Field, len(fields))
	for i, fj := range fields {
		dt, err := parseTypeName(fj.Type)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", fj.Name, err)
		}
		f := arrow.Field{Name: fj.Name, Type: dt, Nullable: fj.Nullable}
		if len(fj.Metadata) > 0 {
			keys := make([]string, len(fj.Metadata))
			vals := make([]string, len(fj.Metadata))
			for j, kv := range fj.Metadata {
				keys[j], vals[j] = kv[0], kv[1]
			}
			f.Metadata = arrow.NewMetadata(keys, vals)
		}
		out[i] = f
	}
	return arrow.NewSchema(out, nil), nil
}

// schemaJSON is the segment files' key-value metadata value under segmentSchemaKey.
func schemaJSON(sc *arrow.Schema) string {
	b, err := json.Marshal(schemaToJSON(sc))
	if err != nil { // cannot happen: plain strings and bools
		panic(err)
	}
	return string(b)
}

// segmentSchemaKey is the Parquet key-value metadata key that holds the Arrow schema of a
// segment (as catalog JSON), so a segment file is self-describing.
const segmentSchemaKey = "colink.schema"

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]{0,63}$`)

// validateSchema checks that a table schema can be stored: named, uniquely named columns of
// storable types.
func validateSchema(sc *arrow.Schema) ([]colKind, error) {
	if sc == nil || sc.NumFields() == 0 {
		return nil, fmt.Errorf("a table needs at least one column")
	}
	kinds := make([]colKind, sc.NumFields())
	seen := make(map[string]bool, sc.NumFields())
	for i, f := range sc.Fields() {
		if f.Name == "" {
			return nil, fmt.Errorf("column %d has no name", i)
		}
		if seen[f.Name] {
			return nil, fmt.Errorf("column %q appears twice", f.Name)
		}
		if f.Name == RowIDColumn {
			return nil, fmt.Errorf("column %q: the name is reserved for the row ID", f.Name)
		}
		seen[f.Name] = true
		k, err := kindOf(f.Type)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
		kinds[i] = k
	}
	return kinds, nil
}

// parquetSchema builds the Parquet schema of a segment: INT32/INT64 with signed INT logical
// types, DOUBLE, BOOLEAN, INT32 DATE, INT64 DECIMAL(p,s), BYTE_ARRAY STRING or plain
// BYTE_ARRAY; REQUIRED for non-nullable fields.
func parquetSchema(sc *arrow.Schema, kinds []colKind) (*schema.GroupNode, error) {
	nodes := make(schema.FieldList, sc.NumFields())
	for i, f := range sc.Fields() {
		rep := parquet.Repetitions.Required
		if f.Nullable {
			rep = parquet.Repetitions.Optional
		}
		var (
			logical schema.LogicalType = schema.NoLogicalType{}
			phys    parquet.Type
		)
		switch kinds[i] {
		case kindBool:
			phys = parquet.Types.Boolean
		case kindInt32:
			logical, phys = schema.NewIntLogicalType(32, true), parquet.Types.Int32
		case kindInt64:
			logical, phys = schema.NewIntLogicalType(64, true), parquet.Types.Int64
		case kindFloat64:
			phys = parquet.Types.Double
		case kindDate32:
			logical, phys = schema.DateLogicalType{}, parquet.Types.Int32
		case kindDecimal64:
			d := f.Type.(*arrow.Decimal64Type)
			logical, phys = schema.NewDecimalLogicalType(d.Precision, d.Scale), parquet.Types.Int64
		case kindString:
			logical, phys = schema.StringLogicalType{}, parquet.Types.ByteArray
		case kindBinary:
			phys = parquet.Types.ByteArray
		case kindTimestamp:
			logical, phys = schema.NewTimestampLogicalType(false, schema.TimeUnitMicros), parquet.Types.Int64
		}
		n, err := schema.NewPrimitiveNodeLogical(f.Name, rep, logical, phys, -1, -1)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
		nodes[i] = n
	}
	return schema.NewGroupNode("schema", parquet.Repetitions.Required, nodes, -1)
}
