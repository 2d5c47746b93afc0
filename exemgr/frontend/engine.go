package frontend

import (
	"context"
	"fmt"
	"github.com/colinkdb/colink/exec/vec"
	"io"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Engine runs the statements the front end does not answer itself. exemgr implements it over
// sql/ and exec/. Methods are called from one goroutine per session; different sessions call
// concurrently.
type Engine interface {
	// Query runs one SQL statement (never several: the front end splits multi-statement
	// text) for session s. ctx is cancelled, with context.Cause ErrKilled, ErrClientGone or
	// ErrShutdown, when the query must stop; it stays live until the returned Result's Rows
	// are closed. A nil Result with a nil error is an OK with no rows affected.
	Query(ctx context.Context, s *Session, query string) (*Result, error)

	// CheckDatabase returns nil if name is a database a session may make current (USE,
	// COM_INIT_DB, a database given at connect), or an error — ErrBadDB for an unknown one.
	CheckDatabase(ctx context.Context, name string) error
}

// FieldLister is implemented by an Engine that answers COM_FIELD_LIST, which the mariadb
// client sends for every table to build its tab completion (unless started with -A). Without
// it, the front end answers with an empty column list.
type FieldLister interface {
	// FieldList describes the columns of table in s's current database whose names match
	// wildcard (a LIKE pattern; empty matches all).
	FieldList(ctx context.Context, s *Session, table, wildcard string) ([]Column, error)
}

// VariableSource is implemented by an Engine with system variables of its own (colink's
// settings), which the front end then answers in SELECT @@name and SHOW VARIABLES like its
// own. SET of them reaches the engine as a statement.
type VariableSource interface {
	// Variables are the engine's variables as s sees them, or the daemon's (global).
	Variables(s *Session, global bool) []Variable
}

// StatusSource is implemented by an Engine with status counters of its own, which SHOW
// STATUS lists after the server's (Uptime, Threads_connected, Connections, Questions).
type StatusSource interface {
	// Status is the engine's counters now, named as SHOW STATUS prints them
	// ("Colink_link_bytes_received").
	Status() []Variable
}

// Variable is one of an engine's system variables.
type Variable struct {
	Name    string // lower case
	Value   string
	Numeric bool
}

// SessionEnder is implemented by an Engine that keeps per-session state; EndSession is called
// once, after the session's connection has closed.
type SessionEnder interface {
	EndSession(s *Session)
}

// Result is what a statement produced: a result set when Rows is non-nil, otherwise an OK
// carrying AffectedRows, LastInsertID and Info.
type Result struct {
	// Rows streams the result set's batches. The front end closes it.
	Rows Rows
	// Columns describes the result set's columns, one per field of Rows.Schema(). When nil,
	// the front end derives them with ColumnsFromSchema.
	Columns []Column

	AffectedRows uint64
	LastInsertID uint64
	Info         string // e.g. "Records: 3  Duplicates: 0  Warnings: 0"

	// Warnings are reported with the result (the count in its EOF or OK packet) and listed by
	// the session's next SHOW WARNINGS.
	Warnings []Warning
}

// Rows is a pull iterator over a result set's record batches.
type Rows interface {
	// Schema is the batches' schema. Every field's type must be one the front end can send
	// (see ColumnFromField).
	Schema() *arrow.Schema
	// Next returns the next batch, or io.EOF after the last. A batch stays valid until the
	// next call to Next or Close; the front end does not retain or release it. An error
	// other than io.EOF ends the result set with that error, even after rows were sent.
	Next() (arrow.RecordBatch, error)
	// Close releases the iterator's resources. It is called exactly once, also when the
	// result set is abandoned early (error, KILL, client gone).
	Close() error
}

// RecordRows returns Rows over one record batch, which it releases at Close.
func RecordRows(rec arrow.RecordBatch) Rows { return &heldRecord{rec: rec} }

type heldRecord struct {
	rec  arrow.RecordBatch
	done bool
}

func (r *heldRecord) Schema() *arrow.Schema { return r.rec.Schema() }

func (r *heldRecord) Next() (arrow.RecordBatch, error) {
	if r.done {
		return nil, io.EOF
	}
	r.done = true
	return r.rec, nil
}

func (r *heldRecord) Close() error {
	r.rec.Release()
	return nil
}

// Warning is a note, warning or error that SHOW WARNINGS lists.
type Warning struct {
	Level   string // "Note", "Warning" or "Error"
	Code    uint16
	Message string
}

// ColumnType is a MySQL column type, as sent in a column definition (MYSQL_TYPE_*).
type ColumnType uint8

// The column types colink sends.
const (
	TypeTiny       ColumnType = 1   // TINYINT, and booleans
	TypeShort      ColumnType = 2   // SMALLINT
	TypeLong       ColumnType = 3   // INT
	TypeFloat      ColumnType = 4   // FLOAT
	TypeDouble     ColumnType = 5   // DOUBLE
	TypeNull       ColumnType = 6   // the type of a NULL literal
	TypeLongLong   ColumnType = 8   // BIGINT
	TypeDate       ColumnType = 10  // DATE
	TypeDatetime   ColumnType = 12  // DATETIME (colink's TIMESTAMP is one)
	TypeNewDecimal ColumnType = 246 // DECIMAL
	TypeBlob       ColumnType = 252 // BLOB and TEXT
	TypeVarString  ColumnType = 253 // VARCHAR
	TypeString     ColumnType = 254 // CHAR
)

// ColumnFlag is a column definition's flag set.
type ColumnFlag uint16

// Column definition flags.
const (
	FlagNotNull  ColumnFlag = 1
	FlagPriKey   ColumnFlag = 2
	FlagUnsigned ColumnFlag = 32
	FlagBinary   ColumnFlag = 128
	FlagNum      ColumnFlag = 32768
)

// Column describes a result set column as the client sees it.
type Column struct {
	Name     string // the label: an alias or the expression's text
	OrgName  string // the table column's own name, if the column is one
	Table    string // the table's alias in the query, if any
	OrgTable string // the table's own name, if any
	Database string // the table's database, if any
	Type     ColumnType
	Length   uint32 // display length in characters (MySQL multiplies strings by mbmaxlen)
	Decimals uint8  // digits after the point; 31 for floating point, 0 otherwise
	Flags    ColumnFlag
	// Charset is the collation id; 0 means the connection's for strings and binary (63)
	// for everything else.
	Charset uint16
}

// notFixedDec is MySQL's "decimals" for floating-point values printed in shortest form.
const notFixedDec = 31

// ColumnsFromSchema describes every field of schema; see ColumnFromField.
func ColumnsFromSchema(schema *arrow.Schema) ([]Column, error) {
	cols := make([]Column, schema.NumFields())
	for i, f := range schema.Fields() {
		c, err := ColumnFromField(f)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return cols, nil
}

// ColumnFromField describes an Arrow field as a MySQL column: int8/16/32/64 as TINYINT,
// SMALLINT, INT, BIGINT (and their unsigned forms), float32/64 as FLOAT/DOUBLE, decimal64 and
// decimal128 as DECIMAL(p,s), date32 as DATE, timestamp[us] as DATETIME (its fraction
// digits by the vec.SQLTypeKey metadata), utf8 as CHAR(n) or VARCHAR(n) by the field's
// vec.SQLTypeKey metadata (VARCHAR(255) without it), binary as a binary string, boolean as
// TINYINT(1), and null as NULL. A field that is not nullable gets NOT NULL.
func ColumnFromField(f arrow.Field) (Column, error) {
	c := Column{Name: f.Name}
	if !f.Nullable {
		c.Flags |= FlagNotNull
	}
	num := func(t ColumnType, length uint32) {
		c.Type, c.Length = t, length
		c.Flags |= FlagNum | FlagBinary
	}
	switch t := f.Type.(type) {
	case *arrow.Int8Type:
		num(TypeTiny, 4)
	case *arrow.Int16Type:
		num(TypeShort, 6)
	case *arrow.Int32Type:
		num(TypeLong, 11)
	case *arrow.Int64Type:
		num(TypeLongLong, 20)
	case *arrow.Uint8Type:
		num(TypeTiny, 3)
		c.Flags |= FlagUnsigned
	case *arrow.Uint16Type:
		num(TypeShort, 5)
		c.Flags |= FlagUnsigned
	case *arrow.Uint32Type:
		num(TypeLong, 10)
		c.Flags |= FlagUnsigned
	case *arrow.Uint64Type:
		num(TypeLongLong, 20)
		c.Flags |= FlagUnsigned
	case *arrow.BooleanType:
		num(TypeTiny, 1)
	case *arrow.Float32Type:
		num(TypeFloat, 12)
		c.Decimals = notFixedDec
	case *arrow.Float64Type:
		num(TypeDouble, 22)
		c.Decimals = notFixedDec
	case *arrow.Decimal64Type:
		num(TypeNewDecimal, decimalLength(t.Precision, t.Scale))
		c.Decimals = uint8(t.Scale)
	case *arrow.Decimal128Type:
		num(TypeNewDecimal, decimalLength(t.Precision, t.Scale))
		c.Decimals = uint8(t.Scale)
	case *arrow.Date32Type:
		c.Type, c.Length = TypeDate, 10
		c.Flags |= FlagBinary
	case *arrow.TimestampType:
		if t.Unit != arrow.Microsecond || t.TimeZone != "" {
			return Column{}, Errorf(ErrUnknownError, "column %q has Arrow type %s, which colink cannot send over the MySQL protocol", f.Name, f.Type)
		}
		fsp := vec.DatetimeFsp(f)
		c.Type, c.Length, c.Decimals = TypeDatetime, 19, uint8(fsp)
		if fsp > 0 {
			c.Length += uint32(fsp) + 1
		}
		c.Flags |= FlagBinary
	case *arrow.StringType, *arrow.LargeStringType:
		c.Type, c.Length = TypeVarString, 255
		if sqlType, ok := f.Metadata.GetValue(vec.SQLTypeKey); ok {
			if n, ok := typeLength(sqlType, "char"); ok {
				c.Type, c.Length = TypeString, n
			} else if n, ok := typeLength(sqlType, "varchar"); ok {
				c.Length = n
			}
		}
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		c.Type, c.Length, c.Charset = TypeBlob, 65535, binaryCollation
		c.Flags |= FlagBinary
	case *arrow.NullType:
		c.Type, c.Length = TypeNull, 0
		c.Flags |= FlagBinary
	default:
		return Column{}, Errorf(ErrUnknownError, "column %q has Arrow type %s, which colink cannot send over the MySQL protocol", f.Name, f.Type)
	}
	return c, nil
}

// decimalLength is MySQL's display length of DECIMAL(p,s): the digits, a point if s > 0,
// and a sign.
func decimalLength(precision, scale int32) uint32 {
	n := uint32(precision) + 1
	if scale > 0 {
		n++
	}
	return n
}

// typeLength parses "name(n)" (case-insensitive) and returns n.
func typeLength(sqlType, name string) (uint32, bool) {
	s := strings.ToLower(strings.TrimSpace(sqlType))
	if !strings.HasPrefix(s, name+"(") || !strings.HasSuffix(s, ")") {
		return 0, false
	}
	n, err := strconv.ParseUint(s[len(name)+1:len(s)-1], 10, 32)
	if err != nil {
		return 0, false
	}
	return uint32(n), true
}

// checkColumns verifies that cols describes schema one to one.
func checkColumns(cols []Column, schema *arrow.Schema) error {
	if len(cols) != schema.NumFields() {
		return fmt.Errorf("result describes %d columns but its batches have %d", len(cols), schema.NumFields())
	}
	return nil
}
