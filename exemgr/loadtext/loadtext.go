// Package loadtext owns LOAD DATA's text parser: the text of a file (read by exemgr, or
// sent by the client for LOCAL) is cut into lines and fields as the statement's FIELDS and
// LINES clauses say, each field converted to its column's type, and each row appended to
// the batch of the primproc that its first column's value picks (link.MemberOfInt). A bad
// line stops the load with MySQL's error for it, naming the row (the line of the file,
// counting from 1); the caller then writes nothing of the file.
package loadtext

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/exemgr/frontend"
	"github.com/colinkdb/colink/internal/civil"
	"github.com/colinkdb/colink/internal/textparse"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/sql"
)

// loadBatchRows is how many rows a batch to one primproc holds before it is sent.
const loadBatchRows = 32 << 10

// loadErr is a LOAD DATA error with MySQL's code and SQLSTATE.
func loadErr(code uint16, state, format string, args ...any) error {
	return &frontend.Error{Code: code, State: state, Message: fmt.Sprintf(format, args...)}
}

// loadColumn is how one table column is parsed and built.
type loadColumn struct {
	name     string
	typ      arrow.DataType
	nullable bool
	maxChars int   // char(n), varchar(n): n; 0 unchecked
	scale    int32 // decimals' scale; datetimes' fraction digits
	prec     int32
	field    int    // the field of a line that fills it; -1: none, so fill
	fill     []byte // the column's DEFAULT as a field's text when no field fills it; nil: NULL
}

// loadFormat is the FIELDS and LINES clauses.
type loadFormat struct {
	fieldTerm, enclosed, lineTerm, lineStart []byte
	escape                                   byte // 0: none
	ignore                                   uint64
}

// maxLoadLine bounds one line of a LOAD DATA file, in bytes: far more than any row of
// columns colink loads, little enough to hold in memory.
const maxLoadLine = 16 << 20

// Loader parses a file into per-member batches of a table's rows.
type Loader struct {
	schema  *arrow.Schema
	cols    []loadColumn
	fields  int // fields per line
	format  loadFormat
	members int
	send    func(member int, rec arrow.RecordBatch) error
	mem     memory.Allocator

	builders []*array.RecordBuilder // per member, nil until used
	counts   []int
	rows     int64
	line     int64

	// lineBuf gathers a line longer than the reader's buffer (or spanning several of its
	// reads); maxLine bounds a line's length.
	lineBuf []byte
	// encl is openEnclosure's progress through the line readLine is reading.
	encl    enclosureScan
	maxLine int

	field  [][]byte // the current line's fields (views or scratch)
	isNull []bool
	unesc  [][]byte // scratch per field for unescaped values
}

// New returns a loader of spec's file into rows of schema, dealt to members primprocs:
// send receives each full batch with its member (and the rest when Run ends).
func New(spec *sql.LoadSpec, schema *arrow.Schema, members int, send func(int, arrow.RecordBatch) error) (*Loader, error) {
	l := &Loader{schema: schema, fields: len(spec.Columns), members: members, send: send, mem: memory.DefaultAllocator, maxLine: maxLoadLine,
		builders: make([]*array.RecordBuilder, members), counts: make([]int, members)}
	f := &l.format
	f.fieldTerm, f.enclosed, f.lineTerm, f.lineStart = []byte(spec.FieldsTerminated), []byte(spec.Enclosed), []byte(spec.LinesTerminated), []byte(spec.LinesStarting)
	f.ignore = spec.IgnoreLines
	switch len(spec.Escaped) {
	case 0:
	case 1:
		f.escape = spec.Escaped[0]
	default:
		return nil, loadErr(1083, "42000", "Field separator argument is not what is expected; check the manual (ESCAPED BY takes one character)")
	}
	if len(f.enclosed) > 1 {
		return nil, loadErr(1083, "42000", "Field separator argument is not what is expected; check the manual (ENCLOSED BY takes one character)")
	}
	if len(f.lineTerm) == 0 {
		f.lineTerm = []byte("\n")
	}
	if len(f.fieldTerm) == 0 {
		return nil, loadErr(1083, "42000", "Field separator argument is not what is expected; check the manual (an empty FIELDS TERMINATED BY needs fixed-width columns, which colink does not read)")
	}
	fieldOf := make([]int, schema.NumFields())
	for i := range fieldOf {
		fieldOf[i] = -1
	}
	for k, c := range spec.Columns {
		fieldOf[c] = k
	}
	for i, fd := range schema.Fields() {
		c := loadColumn{name: fd.Name, typ: fd.Type, nullable: fd.Nullable, field: fieldOf[i]}
		if d, ok := fd.Metadata.GetValue(vec.DefaultKey); ok && c.field < 0 {
			if _, isTime := fd.Type.(*arrow.TimestampType); isTime && d == vec.DefaultNow {
				// The statement's start, as MySQL's CURRENT_TIMESTAMP of a LOAD DATA.
				d = time.Now().Format("2006-01-02 15:04:05.000000")
			}
			c.fill = []byte(d)
		}
		switch t := fd.Type.(type) {
		case *arrow.Decimal64Type:
			c.prec, c.scale = t.Precision, t.Scale
		case *arrow.StringType:
			if st, ok := fd.Metadata.GetValue(vec.SQLTypeKey); ok {
				c.maxChars = TypeLength(st)
			}
		case *arrow.TimestampType:
			if t.Unit != arrow.Microsecond || t.TimeZone != "" {
				return nil, fmt.Errorf("LOAD DATA into column %s of type %s is not supported", fd.Name, fd.Type)
			}
			c.scale = int32(vec.DatetimeFsp(fd))
		case *arrow.Int32Type, *arrow.Int64Type, *arrow.Date32Type, *arrow.Float64Type, *arrow.BooleanType:
		default:
			return nil, fmt.Errorf("LOAD DATA into column %s of type %s is not supported", fd.Name, fd.Type)
		}
		l.cols = append(l.cols, c)
	}
	return l, nil
}

// TypeLength returns n of "char(n)" or "varchar(n)", else 0.
func TypeLength(sqlType string) int {
	s := strings.ToLower(sqlType)
	open, end := strings.IndexByte(s, '('), strings.IndexByte(s, ')')
	if open < 0 || end < open || !(strings.HasPrefix(s, "char") || strings.HasPrefix(s, "varchar")) {
		return 0
	}
	n, _ := strconv.Atoi(s[open+1 : end])
	return n
}

// Run reads the whole file, sending full batches as they fill and the rest at the end. It
// returns the rows loaded.
func (l *Loader) Run(r io.Reader) (int64, error) {
	defer l.Release()
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		rec, err := l.readLine(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
		if l.line <= int64(l.format.ignore) {
			continue
		}
		if rec == nil { // no LINES STARTING BY prefix: MySQL skips the line
			continue
		}
		if err := l.row(rec); err != nil {
			return 0, err
		}
	}
	for m := range l.builders {
		if err := l.flush(m); err != nil {
			return 0, err
		}
	}
	return l.rows, nil
}

func (l *Loader) Release() {
	for _, b := range l.builders {
		if b != nil {
			b.Release()
		}
	}
	l.builders = nil
}

// readLine reads the next line (without its terminator, after its LINES STARTING BY
// prefix; nil if it has none). A line terminator inside an enclosed field does not end the
// line. io.EOF at the end; a last line without a terminator counts. The line is valid until
// the next call: a line that fits in br's buffer is a view of it, a longer one is gathered
// in l.lineBuf, which is reused, so reading allocates nothing per line. A line longer than
// l.maxLine bytes (a file without line terminators, or the wrong LINES TERMINATED BY) is
// an error rather than a file buffered whole.
func (l *Loader) readLine(br *bufio.Reader) ([]byte, error) {
	term := l.format.lineTerm
	last := term[len(term)-1]
	var line []byte
	gathering := false // line is l.lineBuf rather than a view of br's buffer
	l.encl = enclosureScan{atStart: true}
	for {
		chunk, err := br.ReadSlice(last)
		if gathering {
			l.lineBuf = append(l.lineBuf, chunk...)
			line = l.lineBuf
		} else {
			line = chunk
		}
		if len(line) > l.maxLine+len(term) {
			return nil, loadErr(1105, "HY000", "LOAD DATA: line %d is longer than %d bytes; is LINES TERMINATED BY right?", l.line+1, l.maxLine)
		}
		if err == io.EOF {
			if len(line) == 0 {
				return nil, io.EOF
			}
			break
		}
		if err != nil && err != bufio.ErrBufferFull {
			return nil, err
		}
		if err == nil && bytes.HasSuffix(line, term) && !l.openEnclosure(line[:len(line)-len(term)]) {
			line = line[:len(line)-len(term)]
			break
		}
		// The line goes on (br's buffer is full, or the terminator was inside an enclosed
		// field or only the end of a longer one): br's next ReadSlice overwrites its buffer,
		// so gather the line.
		if !gathering {
			l.lineBuf = append(l.lineBuf[:0], line...)
			gathering = true
		}
	}
	l.line++
	if len(l.format.lineStart) > 0 {
		i := bytes.Index(line, l.format.lineStart)
		if i < 0 {
			return nil, nil
		}
		line = line[i+len(l.format.lineStart):]
	}
	return line, nil
}

// enclosureScan is openEnclosure's progress through the line being read: the bytes before
// pos are decided (their lookahead was inside the line), in and atStart are the state there.
// readLine resets it per line, so a line with many terminators inside an enclosed field is
// scanned once in all rather than once per terminator.
type enclosureScan struct {
	pos     int
	in      bool // inside an enclosed field
	atStart bool // at the start of a field (an enclosure may open here)
}

// openEnclosure reports whether line ends inside an enclosed field (so its terminator is
// data). Only with ENCLOSED BY. line is the line read so far without its terminator; each
// call of one readLine passes a longer line that extends the previous one (its terminator
// then being data), so the scan goes on from l.encl.pos: the bytes whose meaning depends on
// bytes not yet read (an escape, a quote that may be doubled, a partial field terminator at
// the end) are rescanned on the next call, a constant number of them.
func (l *Loader) openEnclosure(line []byte) bool {
	if len(l.format.enclosed) == 0 {
		return false
	}
	q, esc, fterm := l.format.enclosed[0], l.format.escape, l.format.fieldTerm
	st := &l.encl
	i := st.pos
	// The decided part: stop at the first byte whose meaning needs bytes past the end.
	for i < len(line) {
		c := line[i]
		switch {
		case st.in && esc != 0 && c == esc:
			if i+1 >= len(line) {
				goto tail
			}
			i += 2
		case st.in && c == q:
			if i+1 >= len(line) {
				goto tail
			}
			if line[i+1] == q {
				i += 2
			} else {
				st.in = false
				i++
			}
		case !st.in && st.atStart && c == q:
			st.in, st.atStart = true, false
			i++
		case !st.in && c == fterm[0] && len(line)-i < len(fterm) && bytes.HasPrefix(fterm, line[i:]):
			goto tail
		case !st.in && bytes.HasPrefix(line[i:], fterm):
			st.atStart = true
			i += len(fterm)
		default:
			if !st.in {
				st.atStart = false
			}
			i++
		}
	}
tail:
	st.pos = i
	// The undecided rest (a few bytes) as if the line ended here: an escape or a quote at
	// the very end keeps or closes the field, a partial field terminator is data.
	in := st.in
	if in && i < len(line) && (esc == 0 || line[i] != esc) {
		in = false // a closing quote just before the terminator
	}
	return in
}

// split cuts a line into fields, unescaping them, into l.field and l.isNull.
func (l *Loader) split(line []byte) error {
	l.field, l.isNull = l.field[:0], l.isNull[:0]
	term, esc := l.format.fieldTerm, l.format.escape
	for k := 0; ; k++ {
		if k >= len(l.unesc) {
			l.unesc = append(l.unesc, nil)
		}
		var val []byte
		null := false
		if len(l.format.enclosed) > 0 && len(line) > 0 && line[0] == l.format.enclosed[0] {
			q := l.format.enclosed[0]
			out := l.unesc[k][:0]
			i := 1
			closed := false
			for i < len(line) {
				c := line[i]
				if esc != 0 && c == esc && i+1 < len(line) {
					out = append(out, frontend.Unescape(line[i+1]))
					i += 2
					continue
				}
				if c == q {
					if i+1 < len(line) && line[i+1] == q {
						out = append(out, q)
						i += 2
						continue
					}
					closed = true
					i++
					break
				}
				out = append(out, c)
				i++
			}
			if !closed {
				return loadErr(1366, "HY000", "Row %d: a field opened with %q is not closed", l.line, q)
			}
			l.unesc[k] = out
			val = out
			line = line[i:]
			if len(line) > 0 && !bytes.HasPrefix(line, term) {
				return loadErr(1366, "HY000", "Row %d: text after the closing %q of field %d", l.line, q, k+1)
			}
		} else {
			end := -1
			if esc != 0 && bytes.IndexByte(line, esc) >= 0 {
				// A terminator preceded by the escape character is data.
				for i := 0; i < len(line); i++ {
					if line[i] == esc {
						i++
						continue
					}
					if bytes.HasPrefix(line[i:], term) {
						end = i
						break
					}
				}
			} else {
				end = bytes.Index(line, term)
			}
			raw := line
			if end >= 0 {
				raw = line[:end]
			}
			switch {
			case esc != 0 && len(raw) == 2 && raw[0] == esc && raw[1] == 'N':
				null = true
			case esc != 0 && bytes.IndexByte(raw, esc) >= 0:
				out := l.unesc[k][:0]
				for i := 0; i < len(raw); i++ {
					if raw[i] == esc && i+1 < len(raw) {
						i++
						out = append(out, frontend.Unescape(raw[i]))
						continue
					}
					out = append(out, raw[i])
				}
				l.unesc[k] = out
				val = out
			default:
				val = raw
			}
			if end < 0 {
				line = nil
			} else {
				line = line[end:]
			}
		}
		l.field = append(l.field, val)
		l.isNull = append(l.isNull, null)
		if len(line) == 0 {
			return nil
		}
		line = line[len(term):] // the terminator: another field follows (maybe empty)
		if len(line) == 0 {
			l.field = append(l.field, nil)
			l.isNull = append(l.isNull, false)
			return nil
		}
	}
}

// row converts one line and appends it to its member's batch.
func (l *Loader) row(line []byte) error {
	if err := l.split(line); err != nil {
		return err
	}
	n := len(l.field)
	switch {
	case n == l.fields+1 && len(l.field[n-1]) == 0 && !l.isNull[n-1]:
		// A terminator after the last field, as dbgen's .tbl lines have.
	case n < l.fields:
		return loadErr(1261, "01000", "Row %d doesn't contain data for all columns (%d fields, %d expected)", l.line, n, l.fields)
	case n > l.fields:
		return loadErr(1262, "01000", "Row %d was truncated; it contained more data than there were input columns (%d fields, %d expected)", l.line, n, l.fields)
	}
	m := 0
	if l.members > 1 {
		var err error
		if m, err = l.member(); err != nil {
			return err
		}
	}
	b := l.builders[m]
	if b == nil {
		b = array.NewRecordBuilder(l.mem, l.schema)
		l.builders[m] = b
	}
	for i := range l.cols {
		if err := l.appendValue(b.Field(i), &l.cols[i]); err != nil {
			return err
		}
	}
	l.rows++
	l.counts[m]++
	if l.counts[m] >= loadBatchRows {
		return l.flush(m)
	}
	return nil
}

// member picks the primproc of the current row from its first column's value.
func (l *Loader) member() (int, error) {
	c := &l.cols[0]
	raw, ok := l.value(c)
	if !ok {
		return 0, nil
	}
	switch c.typ.(type) {
	case *arrow.StringType:
		return link.MemberOfString(string(raw), l.members), nil
	case *arrow.Float64Type:
		v, err := l.parseFloat(c, raw)
		return link.MemberOfInt(int64(v), l.members), err
	case *arrow.BooleanType:
		v, err := l.parseBool(c, raw)
		if v {
			return link.MemberOfInt(1, l.members), err
		}
		return 0, err
	}
	v, err := l.parseIntLike(c, raw)
	return link.MemberOfInt(v, l.members), err
}

// LOAD DATA's numbers and dates: strict, with spaces around them (bytes.TrimSpace's), no
// exponent in a decimal, extra fraction digits rounded half away from zero, and dates
// written YYYY-MM-DD.
var (
	decimalForm = textparse.NumberForm{Space: textparse.UnicodeSpace}
	dateForm    = textparse.DateForm{Space: textparse.UnicodeSpace, Year4: true, MonthDay2: true}
)

// parseIntLike parses an integer, decimal or date column's value as its stored integer.
func (l *Loader) parseIntLike(c *loadColumn, raw []byte) (int64, error) {
	switch c.typ.(type) {
	case *arrow.Int32Type:
		v, err := textparse.Int(raw, textparse.UnicodeSpace)
		if err != nil { // beyond BIGINT too: MySQL's message is the same
			return 0, loadErr(1366, "HY000", "Incorrect integer value: '%s' for column '%s' at row %d", clip(raw), c.name, l.line)
		}
		if v < math.MinInt32 || v > math.MaxInt32 {
			return 0, loadErr(1264, "22003", "Out of range value for column '%s' at row %d", c.name, l.line)
		}
		return v, nil
	case *arrow.Int64Type:
		v, err := textparse.Int(raw, textparse.UnicodeSpace)
		if err != nil {
			return 0, loadErr(1366, "HY000", "Incorrect integer value: '%s' for column '%s' at row %d", clip(raw), c.name, l.line)
		}
		return v, nil
	case *arrow.Decimal64Type:
		u, err := textparse.Decimal(raw, decimalForm, c.scale)
		if err == textparse.ErrSyntax {
			return 0, loadErr(1366, "HY000", "Incorrect decimal value: '%s' for column '%s' at row %d", clip(raw), c.name, l.line)
		}
		v, ok := u.Int64()
		if err != nil || !ok || !vec.FitsPrecision64(v, c.prec) {
			return 0, loadErr(1264, "22003", "Out of range value for column '%s' at row %d", c.name, l.line)
		}
		return v, nil
	case *arrow.Date32Type:
		v, err := textparse.Date(raw, dateForm)
		if err != nil {
			return 0, loadErr(1292, "22007", "Incorrect date value: '%s' for column '%s' at row %d", clip(raw), c.name, l.line)
		}
		return int64(v), nil
	case *arrow.TimestampType:
		v, err := textparse.Datetime(raw, dateForm)
		if err != nil {
			return 0, loadErr(1292, "22007", "Incorrect datetime value: '%s' for column '%s' at row %d", clip(raw), c.name, l.line)
		}
		return civil.TruncateMicros(v, int(c.scale)), nil
	}
	return 0, fmt.Errorf("column %s: type %s", c.name, c.typ)
}

func (l *Loader) parseFloat(c *loadColumn, raw []byte) (float64, error) {
	v, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, loadErr(1366, "HY000", "Incorrect double value: '%s' for column '%s' at row %d", clip(raw), c.name, l.line)
	}
	return v, nil
}

func (l *Loader) parseBool(c *loadColumn, raw []byte) (bool, error) {
	switch strings.ToLower(string(raw)) {
	case "1", "true":
		return true, nil
	case "0", "false":
		return false, nil
	}
	return false, loadErr(1366, "HY000", "Incorrect integer value: '%s' for column '%s' at row %d", clip(raw), c.name, l.line)
}

// value is column c's text in the current row: its field's, or its DEFAULT's when no field
// fills it; false for NULL.
func (l *Loader) value(c *loadColumn) ([]byte, bool) {
	switch {
	case c.field < 0:
		return c.fill, c.fill != nil
	case l.isNull[c.field]:
		return nil, false
	}
	return l.field[c.field], true
}

// appendValue appends column c's value of the current row.
func (l *Loader) appendValue(b array.Builder, c *loadColumn) error {
	raw, ok := l.value(c)
	if !ok {
		if !c.nullable {
			return loadErr(1048, "23000", "Column '%s' cannot be null (row %d)", c.name, l.line)
		}
		b.AppendNull()
		return nil
	}
	switch bb := b.(type) {
	case *array.StringBuilder:
		if c.maxChars > 0 && len(raw) > c.maxChars && utf8.RuneCount(raw) > c.maxChars {
			return loadErr(1406, "22001", "Data too long for column '%s' at row %d", c.name, l.line)
		}
		if !utf8.Valid(raw) {
			return loadErr(1366, "HY000", "Incorrect string value: '%s' for column '%s' at row %d", clip(raw), c.name, l.line)
		}
		bb.BinaryBuilder.Append(raw)
	case *array.Float64Builder:
		v, err := l.parseFloat(c, raw)
		if err != nil {
			return err
		}
		bb.Append(v)
	case *array.BooleanBuilder:
		v, err := l.parseBool(c, raw)
		if err != nil {
			return err
		}
		bb.Append(v)
	default:
		v, err := l.parseIntLike(c, raw)
		if err != nil {
			return err
		}
		switch bb := b.(type) {
		case *array.Int32Builder:
			bb.Append(int32(v))
		case *array.Int64Builder:
			bb.Append(v)
		case *array.Decimal64Builder:
			bb.Append(decimal.Decimal64(v))
		case *array.Date32Builder:
			bb.Append(arrow.Date32(v))
		case *array.TimestampBuilder:
			bb.Append(arrow.Timestamp(v))
		default:
			return fmt.Errorf("column %s: no builder for %s", c.name, c.typ)
		}
	}
	return nil
}

// flush sends member m's batch, if it has rows.
func (l *Loader) flush(m int) error {
	if l.counts[m] == 0 {
		return nil
	}
	rec := l.builders[m].NewRecordBatch()
	l.counts[m] = 0
	err := l.send(m, rec)
	rec.Release()
	return err
}

// clip shortens a value for an error message.
func clip(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "…"
	}
	return string(b)
}
