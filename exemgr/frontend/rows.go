package frontend

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/civil"
	"github.com/colinkdb/colink/internal/textparse"
)

// valueKind is how a column's values are printed; one per supported Arrow type.
type valueKind uint8

const (
	kindInt8 valueKind = iota + 1
	kindInt16
	kindInt32
	kindInt64
	kindUint8
	kindUint16
	kindUint32
	kindUint64
	kindFloat32
	kindFloat64
	kindDecimal64
	kindDecimal128
	kindDate32
	kindString
	kindLargeString
	kindBinary
	kindBoolean
	kindNull
	kindTimestamp // DATETIME: microseconds since 1970-01-01 00:00:00, no time zone
)

func kindOf(t arrow.DataType) (valueKind, bool) {
	switch t.ID() {
	case arrow.INT8:
		return kindInt8, true
	case arrow.INT16:
		return kindInt16, true
	case arrow.INT32:
		return kindInt32, true
	case arrow.INT64:
		return kindInt64, true
	case arrow.UINT8:
		return kindUint8, true
	case arrow.UINT16:
		return kindUint16, true
	case arrow.UINT32:
		return kindUint32, true
	case arrow.UINT64:
		return kindUint64, true
	case arrow.FLOAT32:
		return kindFloat32, true
	case arrow.FLOAT64:
		return kindFloat64, true
	case arrow.DECIMAL64:
		return kindDecimal64, true
	case arrow.DECIMAL128:
		return kindDecimal128, true
	case arrow.DATE32:
		return kindDate32, true
	case arrow.STRING:
		return kindString, true
	case arrow.LARGE_STRING:
		return kindLargeString, true
	case arrow.BINARY:
		return kindBinary, true
	case arrow.BOOL:
		return kindBoolean, true
	case arrow.NULL:
		return kindNull, true
	case arrow.TIMESTAMP:
		if ts := t.(*arrow.TimestampType); ts.Unit == arrow.Microsecond && ts.TimeZone == "" {
			return kindTimestamp, true
		}
	}
	return 0, false
}

// columnValues is one column of the batch being encoded, bound to typed slices so the row
// loop neither allocates nor goes through interfaces for the common types.
type columnValues struct {
	kind  valueKind
	arr   arrow.Array
	nulls bool  // the column has at least one null
	scale int32 // decimals' scale, datetimes' fraction digits

	i64  []int64
	i32  []int32
	f64  []float64
	d64  []decimal.Decimal64
	d128 []decimal.Decimal128
	day  []arrow.Date32
	str  *array.String
	bin  *array.Binary
	lstr *array.LargeString
	bool *array.Boolean
}

// rowEncoder writes record batches as text-protocol rows.
type rowEncoder struct {
	kinds []valueKind
	fsp   []int32 // each DATETIME column's fraction digits, from its SQL type
	cols  []columnValues
}

// newRowEncoder prepares to encode batches of schema.
func newRowEncoder(schema *arrow.Schema) (*rowEncoder, error) {
	n := schema.NumFields()
	e := &rowEncoder{kinds: make([]valueKind, n), fsp: make([]int32, n), cols: make([]columnValues, n)}
	for i, f := range schema.Fields() {
		k, ok := kindOf(f.Type)
		if !ok {
			return nil, Errorf(ErrUnknownError, "column %q has Arrow type %s, which colink cannot send over the MySQL protocol", f.Name, f.Type)
		}
		e.kinds[i] = k
		if k == kindTimestamp {
			e.fsp[i] = int32(vec.DatetimeFsp(f))
		}
	}
	return e, nil
}

// bind points the encoder at rec's columns.
func (e *rowEncoder) bind(rec arrow.RecordBatch) error {
	if int(rec.NumCols()) != len(e.kinds) {
		return Errorf(ErrUnknownError, "internal error: a result batch has %d columns, its result set %d", rec.NumCols(), len(e.kinds))
	}
	for i := range e.cols {
		arr := rec.Column(i)
		k, _ := kindOf(arr.DataType())
		if k != e.kinds[i] {
			return Errorf(ErrUnknownError, "internal error: result column %d changed type to %s", i, arr.DataType())
		}
		c := &e.cols[i]
		*c = columnValues{kind: k, arr: arr, nulls: arr.NullN() > 0}
		switch a := arr.(type) {
		case *array.Int64:
			c.i64 = a.Int64Values()
		case *array.Int32:
			c.i32 = a.Int32Values()
		case *array.Float64:
			c.f64 = a.Float64Values()
		case *array.Decimal64:
			c.d64 = a.Values()
			c.scale = a.DataType().(*arrow.Decimal64Type).Scale
		case *array.Decimal128:
			c.d128 = a.Values()
			c.scale = a.DataType().(*arrow.Decimal128Type).Scale
		case *array.Date32:
			c.day = a.Date32Values()
		case *array.Timestamp:
			c.i64 = arrow.Int64Traits.CastFromBytes(a.Data().Buffers()[1].Bytes())[a.Data().Offset():][:a.Len()]
			c.scale = e.fsp[i]
		case *array.String:
			c.str = a
		case *array.LargeString:
			c.lstr = a
		case *array.Binary:
			c.bin = a
		case *array.Boolean:
			c.bool = a
		}
	}
	return nil
}

// writeRows writes every row of the bound batch, one packet each.
func (e *rowEncoder) writeRows(w *packetWriter, rows int) error {
	for r := 0; r < rows; r++ {
		w.begin()
		for i := range e.cols {
			w.buf = e.cols[i].appendValue(w.buf, r)
		}
		if err := w.end(); err != nil {
			return err
		}
	}
	return nil
}

// appendValue appends row r's value as a length-encoded string, or the NULL marker.
func (c *columnValues) appendValue(b []byte, r int) []byte {
	if c.nulls && c.arr.IsNull(r) {
		return append(b, nullValue)
	}
	switch c.kind {
	case kindString:
		return appendLenEncString(b, c.str.Value(r))
	case kindLargeString:
		return appendLenEncString(b, c.lstr.Value(r))
	case kindBinary:
		return appendLenEncBytes(b, c.bin.Value(r))
	case kindNull:
		return append(b, nullValue)
	}
	// Every other kind prints in fewer than 251 bytes, so its length fits the one-byte form:
	// reserve it and fill it in after.
	at := len(b)
	b = append(b, 0)
	switch c.kind {
	case kindInt64:
		b = strconv.AppendInt(b, c.i64[r], 10)
	case kindInt32:
		b = strconv.AppendInt(b, int64(c.i32[r]), 10)
	case kindDecimal64:
		b = appendDecimal64(b, int64(c.d64[r]), c.scale)
	case kindDecimal128:
		d := c.d128[r]
		b = appendDecimal128(b, d.HighBits(), d.LowBits(), c.scale)
	case kindDate32:
		b = appendDate(b, int32(c.day[r]))
	case kindTimestamp:
		b = civil.AppendDatetime(b, c.i64[r], int(c.scale))
	case kindFloat64:
		b = appendDouble(b, c.f64[r], 64)
	case kindBoolean:
		if c.bool.Value(r) {
			b = append(b, '1')
		} else {
			b = append(b, '0')
		}
	case kindInt8:
		b = strconv.AppendInt(b, int64(c.arr.(*array.Int8).Value(r)), 10)
	case kindInt16:
		b = strconv.AppendInt(b, int64(c.arr.(*array.Int16).Value(r)), 10)
	case kindUint8:
		b = strconv.AppendUint(b, uint64(c.arr.(*array.Uint8).Value(r)), 10)
	case kindUint16:
		b = strconv.AppendUint(b, uint64(c.arr.(*array.Uint16).Value(r)), 10)
	case kindUint32:
		b = strconv.AppendUint(b, uint64(c.arr.(*array.Uint32).Value(r)), 10)
	case kindUint64:
		b = strconv.AppendUint(b, c.arr.(*array.Uint64).Value(r), 10)
	case kindFloat32:
		b = appendDouble(b, float64(c.arr.(*array.Float32).Value(r)), 32)
	default:
		panic(fmt.Sprintf("frontend: value kind %d has no text form", c.kind))
	}
	b[at] = byte(len(b) - at - 1)
	return b
}

// writeBinaryRows writes every row of the bound batch in the binary protocol's row format
// (a COM_STMT_EXECUTE's result): a 0x00 header, a NULL bitmap with an offset of two bits,
// then each non-NULL value in its column type's binary form.
func (e *rowEncoder) writeBinaryRows(w *packetWriter, rows int) error {
	nullBytes := (len(e.cols) + 7 + 2) / 8
	for r := 0; r < rows; r++ {
		w.begin()
		w.buf = append(w.buf, 0)
		at := len(w.buf)
		for range nullBytes {
			w.buf = append(w.buf, 0)
		}
		for i := range e.cols {
			c := &e.cols[i]
			if c.kind == kindNull || c.nulls && c.arr.IsNull(r) {
				w.buf[at+(i+2)/8] |= 1 << ((i + 2) % 8)
				continue
			}
			w.buf = c.appendBinaryValue(w.buf, r)
		}
		if err := w.end(); err != nil {
			return err
		}
	}
	return nil
}

// appendBinaryValue appends row r's (non-NULL) value in the binary form of the column type
// ColumnFromField gives its Arrow type: integers little-endian at the type's width, FLOAT
// and DOUBLE as IEEE bits, DATE as a length and year, month, day, and DECIMAL and strings
// as length-encoded text.
func (c *columnValues) appendBinaryValue(b []byte, r int) []byte {
	le := binary.LittleEndian
	switch c.kind {
	case kindInt8:
		return append(b, byte(c.arr.(*array.Int8).Value(r)))
	case kindUint8:
		return append(b, c.arr.(*array.Uint8).Value(r))
	case kindBoolean:
		if c.bool.Value(r) {
			return append(b, 1)
		}
		return append(b, 0)
	case kindInt16:
		return le.AppendUint16(b, uint16(c.arr.(*array.Int16).Value(r)))
	case kindUint16:
		return le.AppendUint16(b, c.arr.(*array.Uint16).Value(r))
	case kindInt32:
		return le.AppendUint32(b, uint32(c.i32[r]))
	case kindUint32:
		return le.AppendUint32(b, c.arr.(*array.Uint32).Value(r))
	case kindInt64:
		return le.AppendUint64(b, uint64(c.i64[r]))
	case kindUint64:
		return le.AppendUint64(b, c.arr.(*array.Uint64).Value(r))
	case kindFloat32:
		return le.AppendUint32(b, math.Float32bits(c.arr.(*array.Float32).Value(r)))
	case kindFloat64:
		return le.AppendUint64(b, math.Float64bits(c.f64[r]))
	case kindDate32:
		y, m, d := civil.Date(int64(c.day[r]))
		return appendBinaryDate(b, y, m, d)
	case kindTimestamp:
		return appendBinaryDatetime(b, c.i64[r])
	}
	// DECIMAL and the strings: the text form, length-encoded.
	return c.appendValue(b, r)
}

// appendBinaryDate appends a DATE in the binary protocol's form: 4, then year (2 bytes),
// month and day.
func appendBinaryDate(b []byte, y, m, d int) []byte {
	b = append(b, 4)
	b = binary.LittleEndian.AppendUint16(b, uint16(y))
	return append(b, byte(m), byte(d))
}

// appendBinaryDatetime appends a DATETIME in the binary protocol's form: a length of 4
// (midnight), 7 (whole seconds) or 11, then year (2 bytes), month, day, hour, minute,
// second, and the microseconds (4 bytes).
func appendBinaryDatetime(b []byte, us int64) []byte {
	days, tod := civil.SplitMicros(us)
	y, m, d := civil.Date(days)
	if tod == 0 {
		return appendBinaryDate(b, y, m, d)
	}
	h, mi, s, f := civil.Clock(tod)
	n := byte(7)
	if f != 0 {
		n = 11
	}
	b = append(b, n)
	b = binary.LittleEndian.AppendUint16(b, uint16(y))
	b = append(b, byte(m), byte(d), byte(h), byte(mi), byte(s))
	if f != 0 {
		b = binary.LittleEndian.AppendUint32(b, uint32(f))
	}
	return b
}

// appendBinaryText appends a value the front end holds as text (its own small results) in
// the binary form of column type t: integers parsed and written at the type's width, DOUBLE
// and FLOAT as IEEE bits, DATE parsed from YYYY-MM-DD; anything else, or text that does not
// parse, as a length-encoded string.
func appendBinaryText(b []byte, t ColumnType, unsigned bool, s string) []byte {
	le := binary.LittleEndian
	width := 0
	switch t {
	case TypeTiny:
		width = 1
	case TypeShort:
		width = 2
	case TypeLong:
		width = 4
	case TypeLongLong:
		width = 8
	case TypeDouble:
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return le.AppendUint64(b, math.Float64bits(f))
		}
	case TypeFloat:
		if f, err := strconv.ParseFloat(s, 32); err == nil {
			return le.AppendUint32(b, math.Float32bits(float32(f)))
		}
	case TypeDate:
		if days, err := textparse.Date([]byte(s), textparse.DateForm{Year4: true, MonthDay2: true}); err == nil {
			y, m, d := civil.Date(days)
			return appendBinaryDate(b, y, m, d)
		}
	}
	if width > 0 {
		// Signed, or else unsigned (a number past the signed range, as @@sql_select_limit's
		// 18446744073709551615, keeps its bits): the column's definition fixed the width.
		var v uint64
		x, err := strconv.ParseInt(s, 10, 8*width)
		v = uint64(x)
		if err != nil || unsigned {
			v, err = strconv.ParseUint(s, 10, 8*width)
		}
		if err == nil {
			switch width {
			case 1:
				return append(b, byte(v))
			case 2:
				return le.AppendUint16(b, uint16(v))
			case 4:
				return le.AppendUint32(b, uint32(v))
			}
			return le.AppendUint64(b, v)
		}
	}
	return appendLenEncString(b, s)
}
