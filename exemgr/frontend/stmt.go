package frontend

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// The binary protocol: COM_STMT_PREPARE, EXECUTE, SEND_LONG_DATA, RESET and CLOSE.
//
// A prepared statement is kept as its text and the byte offsets of its '?' placeholders
// (found by the lexer, so a '?' inside a string, a quoted identifier or a comment is not
// one). EXECUTE decodes the parameters from their binary form and writes each into the text
// as the SQL literal of its value (an integer, a decimal, a double in exponent form, a date,
// a quoted and escaped string, or NULL), and the statement runs as a COM_QUERY would, its
// result set sent in the binary row format. The engine so sees the same SQL whichever
// protocol a client uses, and a parameter can never be read as SQL: it is always one literal.
//
// PREPARE answers with no result columns (as MySQL does for a statement whose result it has
// not described); the columns come with each EXECUTE's result set. Cursors
// (COM_STMT_FETCH) are not supported: an EXECUTE that asks for one gets its whole result.

// maxPreparedStmts bounds one session's open prepared statements: a client that prepares
// without ever closing fails with error 1461 rather than grow exemgr's memory.
const maxPreparedStmts = 1024

// MySQL error codes of the binary protocol.
const (
	errMaxPreparedStmts uint16 = 1461 // ER_MAX_PREPARED_STMT_COUNT_REACHED
	errUnknownStmt      uint16 = 1243 // ER_UNKNOWN_STMT_HANDLER
	errNoOpenCursor     uint16 = 1421 // ER_STMT_HAS_NO_OPEN_CURSOR
)

// Parameter and column type codes of the binary protocol beyond the ones result columns
// use (engine.go).
const (
	typeDecimal    = 0
	typeTimestamp  = 7
	typeInt24      = 9
	typeTime       = 11
	typeDateTime   = 12
	typeYear       = 13
	typeNewDate    = 14
	typeVarchar    = 15
	typeBit        = 16
	typeJSON       = 245
	typeEnum       = 247
	typeSet        = 248
	typeTinyBlob   = 249
	typeMediumBlob = 250
	typeLongBlob   = 251
	typeGeometry   = 255
)

// preparedStmt is one prepared statement of a session.
type preparedStmt struct {
	id    uint32
	text  string // the statement, placeholders included
	holes []int  // byte offsets of the '?' placeholders in text
	// types are the parameters' types as the last EXECUTE that sent them and bound gave
	// them: the type code in the low byte, 0x80 in the high byte for unsigned.
	types []uint16
	// long holds each parameter's COM_STMT_SEND_LONG_DATA bytes (nil: none), longBytes
	// their total, bounded by max_allowed_packet; longErr is what was wrong with them,
	// reported by the next EXECUTE, as MySQL does.
	long      [][]byte
	longBytes int64
	longErr   error
}

// prepare answers COM_STMT_PREPARE.
func (c *conn) prepare(text string) error {
	ps, err := c.newStmt(text, false)
	if err != nil {
		return c.sendError(err)
	}
	c.nextStmt++
	if c.nextStmt == 0 {
		c.nextStmt++
	}
	ps.id = c.nextStmt
	if c.stmts == nil {
		c.stmts = map[uint32]*preparedStmt{}
	}
	c.stmts[ps.id] = ps

	c.w.begin()
	c.w.buf = append(c.w.buf, 0)
	c.w.buf = binary.LittleEndian.AppendUint32(c.w.buf, ps.id)
	c.w.buf = binary.LittleEndian.AppendUint16(c.w.buf, 0) // result columns: sent with each EXECUTE
	c.w.buf = binary.LittleEndian.AppendUint16(c.w.buf, uint16(len(ps.holes)))
	c.w.buf = append(c.w.buf, 0)
	c.w.buf = binary.LittleEndian.AppendUint16(c.w.buf, 0) // warnings
	if err := c.w.end(); err != nil || len(ps.holes) == 0 {
		return err
	}
	param := Column{Name: "?", Type: TypeVarString, Flags: FlagBinary}
	for range ps.holes {
		if err := c.w.columnDef(&param, defaultCollation, false); err != nil {
			return err
		}
	}
	return c.w.eof(status(false), 0)
}

// newStmt parses text as one statement to prepare, finding its placeholders, within the
// session's bound on open statements (both protocols' count; replacing: the statement takes
// the place of one of the same name).
func (c *conn) newStmt(text string, replacing bool) (*preparedStmt, error) {
	stmts, _ := splitStatements(text, c.srv.versionID)
	switch {
	case len(stmts) == 0:
		return nil, Errorf(ErrEmptyQuery, "Query was empty")
	case len(stmts) > 1:
		return nil, Errorf(ErrParse, "You have an error in your SQL syntax: a prepared statement holds one statement, this text %d", len(stmts))
	case !replacing && len(c.stmts)+len(c.named) >= maxPreparedStmts:
		return nil, Errorf(errMaxPreparedStmts, "Can't create more than max_prepared_stmt_count statements (current value: %d)", maxPreparedStmts)
	}
	st := stmts[0]
	ps := &preparedStmt{text: st.text}
	base := st.toks[0].start
	for _, t := range st.toks {
		if t.kind == tokPunct && t.text == "?" {
			ps.holes = append(ps.holes, t.start-base)
		}
	}
	if len(ps.holes) > math.MaxUint16 {
		return nil, Errorf(ErrParse, "a prepared statement has %d placeholders, more than 65535", len(ps.holes))
	}
	ps.long = make([][]byte, len(ps.holes))
	return ps, nil
}

// stmtFor returns the statement a command's first four bytes name, or the error MySQL gives
// for an unknown one (cmdName as in its message: mysqld_stmt_execute, mysqld_stmt_reset).
func (c *conn) stmtFor(payload []byte, cmdName string) (*preparedStmt, error) {
	if len(payload) < 4 {
		return nil, Errorf(ErrWrongArguments, "Incorrect arguments to %s", cmdName)
	}
	id := binary.LittleEndian.Uint32(payload)
	ps := c.stmts[id]
	if ps == nil {
		return nil, Errorf(errUnknownStmt, "Unknown prepared statement handler (%d) given to %s", id, cmdName)
	}
	return ps, nil
}

// closeStmt answers COM_STMT_CLOSE (no response, by the protocol).
func (c *conn) closeStmt(payload []byte) {
	if len(payload) >= 4 {
		delete(c.stmts, binary.LittleEndian.Uint32(payload))
	}
}

// resetStmt answers COM_STMT_RESET: the statement's long data is dropped.
func (c *conn) resetStmt(payload []byte) error {
	ps, err := c.stmtFor(payload, "mysqld_stmt_reset")
	if err != nil {
		return c.sendError(err)
	}
	ps.clearLong()
	return c.w.ok(0, 0, status(false), 0, "")
}

func (ps *preparedStmt) clearLong() {
	clear(ps.long)
	ps.longBytes, ps.longErr = 0, nil
}

// longData takes COM_STMT_SEND_LONG_DATA (no response, by the protocol): a chunk of one
// parameter's value. Errors wait for the EXECUTE.
func (c *conn) longData(payload []byte) {
	if len(payload) < 6 {
		return
	}
	ps := c.stmts[binary.LittleEndian.Uint32(payload)]
	if ps == nil || ps.longErr != nil {
		return
	}
	param, data := int(binary.LittleEndian.Uint16(payload[4:])), payload[6:]
	switch {
	case param >= len(ps.holes):
		ps.longErr = Errorf(ErrWrongArguments, "Incorrect arguments to mysqld_stmt_send_long_data: parameter %d of a statement with %d", param, len(ps.holes))
	case ps.longBytes+int64(len(data)) > c.srv.cfg.MaxAllowedPacket:
		ps.longErr = Errorf(ErrNetPacketTooLarge, "Parameter of prepared statement which is set through mysql_send_long_data() is longer than 'max_allowed_packet' bytes (%d)", c.srv.cfg.MaxAllowedPacket)
		ps.clearLongData()
	default:
		if ps.long[param] == nil {
			ps.long[param] = []byte{}
		}
		ps.long[param] = append(ps.long[param], data...)
		ps.longBytes += int64(len(data))
	}
}

// clearLongData drops the bytes but keeps longErr.
func (ps *preparedStmt) clearLongData() {
	clear(ps.long)
	ps.longBytes = 0
}

// execute answers COM_STMT_EXECUTE: the statement with its parameters written in as
// literals, its result set in the binary row format.
func (c *conn) execute(ctx context.Context, payload []byte) error {
	ps, err := c.stmtFor(payload, "mysqld_stmt_execute")
	if err != nil {
		return c.sendError(err)
	}
	defer ps.clearLong() // MySQL drops long data after each execution
	if ps.longErr != nil {
		return c.sendError(ps.longErr)
	}
	text, err := ps.bind(payload)
	if err != nil {
		return c.sendError(err)
	}
	c.srv.questions.Add(1)
	stmts, _ := splitStatements(text, c.srv.versionID)
	if len(stmts) != 1 {
		return c.sendError(Errorf(ErrUnknownError, "internal error: the bound statement reads as %d statements", len(stmts)))
	}
	c.binaryRows = true
	defer func() { c.binaryRows = false }()
	_, err = c.statement(ctx, stmts[0], false)
	return err
}

// bind decodes an EXECUTE's parameters (payload: statement id, flags, iteration count,
// then the NULL bitmap, the new-types flag, the types and the values) and returns the
// statement's text with each placeholder replaced by its value's literal.
func (ps *preparedStmt) bind(payload []byte) (string, error) {
	bad := func(why string, args ...any) error {
		return Errorf(ErrWrongArguments, "Incorrect arguments to mysqld_stmt_execute: %s", fmt.Sprintf(why, args...))
	}
	if len(payload) < 9 {
		return "", bad("the packet is %d bytes, shorter than its header", len(payload))
	}
	n := len(ps.holes)
	if n == 0 {
		return ps.text, nil
	}
	p := payload[9:]
	nullLen := (n + 7) / 8
	if len(p) < nullLen+1 {
		return "", bad("no NULL bitmap for %d parameters", n)
	}
	nulls := p[:nullLen]
	newTypes := p[nullLen]
	p = p[nullLen+1:]
	types := ps.types
	if newTypes == 1 {
		if len(p) < 2*n {
			return "", bad("%d parameter types announced, %d bytes of them sent", n, len(p))
		}
		types = make([]uint16, n)
		for i := range types {
			types[i] = binary.LittleEndian.Uint16(p[2*i:])
		}
		p = p[2*n:]
	} else if types == nil {
		return "", bad("the first execution must send the parameters' types")
	}
	var b strings.Builder
	b.Grow(len(ps.text) + 16*n)
	prev := 0
	for i, at := range ps.holes {
		b.WriteString(ps.text[prev:at])
		prev = at + 1
		if nulls[i/8]&(1<<(i%8)) != 0 {
			b.WriteString("NULL")
			continue
		}
		t, unsigned := byte(types[i]), types[i]&0x8000 != 0
		if ps.long[i] != nil {
			if err := writeLiteral(&b, t, unsigned, ps.long[i], true); err != nil {
				return "", bad("parameter %d: %v", i+1, err)
			}
			continue
		}
		size, err := valueSize(t, p)
		if err != nil {
			return "", bad("parameter %d: %v", i+1, err)
		}
		if err := writeLiteral(&b, t, unsigned, p[:size], false); err != nil {
			return "", bad("parameter %d: %v", i+1, err)
		}
		p = p[size:]
	}
	b.WriteString(ps.text[prev:])
	ps.types = types // kept for later executions only once they have bound
	return b.String(), nil
}

// valueSize is the length of the binary value of type t at the front of p.
func valueSize(t byte, p []byte) (int, error) {
	fixed := 0
	switch t {
	case byte(TypeNull):
		return 0, nil
	case byte(TypeTiny):
		fixed = 1
	case byte(TypeShort), typeYear:
		fixed = 2
	case byte(TypeLong), typeInt24, byte(TypeFloat):
		fixed = 4
	case byte(TypeLongLong), byte(TypeDouble):
		fixed = 8
	case byte(TypeDate), typeDateTime, typeTimestamp, typeTime, typeNewDate:
		if len(p) < 1 || len(p) < 1+int(p[0]) {
			return 0, fmt.Errorf("a temporal value cut short")
		}
		return 1 + int(p[0]), nil
	default:
		if !stringType(t) {
			return 0, fmt.Errorf("type %d is not a parameter type colink reads", t)
		}
		l, hdr, ok := lenEnc(p)
		if !ok || uint64(len(p)-hdr) < l {
			return 0, fmt.Errorf("a length-encoded value cut short")
		}
		return hdr + int(l), nil
	}
	if len(p) < fixed {
		return 0, fmt.Errorf("a %d-byte value cut short", fixed)
	}
	return fixed, nil
}

// stringType reports whether values of type t are sent as length-encoded bytes.
func stringType(t byte) bool {
	switch t {
	case typeDecimal, byte(TypeNewDecimal), typeVarchar, byte(TypeVarString), byte(TypeString), byte(TypeBlob),
		typeTinyBlob, typeMediumBlob, typeLongBlob, typeEnum, typeSet, typeJSON, typeBit, typeGeometry:
		return true
	}
	return false
}

// lenEnc reads a length-encoded integer: its value and its size.
func lenEnc(p []byte) (v uint64, size int, ok bool) {
	if len(p) == 0 {
		return 0, 0, false
	}
	switch p[0] {
	case 0xfc:
		if len(p) < 3 {
			return 0, 0, false
		}
		return uint64(binary.LittleEndian.Uint16(p[1:])), 3, true
	case 0xfd:
		if len(p) < 4 {
			return 0, 0, false
		}
		return uint64(p[1]) | uint64(p[2])<<8 | uint64(p[3])<<16, 4, true
	case 0xfe:
		if len(p) < 9 {
			return 0, 0, false
		}
		return binary.LittleEndian.Uint64(p[1:]), 9, true
	case 0xfb, 0xff:
		return 0, 0, false
	}
	return uint64(p[0]), 1, true
}

// writeLiteral writes the SQL literal of a parameter value v of type t (raw: v is long
// data, the value's bytes without a length prefix).
func writeLiteral(b *strings.Builder, t byte, unsigned bool, v []byte, raw bool) error {
	if stringType(t) && !raw {
		_, hdr, _ := lenEnc(v)
		v = v[hdr:]
	}
	le := binary.LittleEndian
	switch t {
	case byte(TypeNull):
		b.WriteString("NULL")
	case byte(TypeTiny):
		if unsigned {
			b.WriteString(strconv.FormatUint(uint64(v[0]), 10))
		} else {
			b.WriteString(strconv.FormatInt(int64(int8(v[0])), 10))
		}
	case byte(TypeShort), typeYear:
		if unsigned || t == typeYear {
			b.WriteString(strconv.FormatUint(uint64(le.Uint16(v)), 10))
		} else {
			b.WriteString(strconv.FormatInt(int64(int16(le.Uint16(v))), 10))
		}
	case byte(TypeLong), typeInt24:
		if unsigned {
			b.WriteString(strconv.FormatUint(uint64(le.Uint32(v)), 10))
		} else {
			b.WriteString(strconv.FormatInt(int64(int32(le.Uint32(v))), 10))
		}
	case byte(TypeLongLong):
		if unsigned {
			b.WriteString(strconv.FormatUint(le.Uint64(v), 10))
		} else {
			b.WriteString(strconv.FormatInt(int64(le.Uint64(v)), 10))
		}
	case byte(TypeFloat):
		return writeDouble(b, float64(math.Float32frombits(le.Uint32(v))), 32)
	case byte(TypeDouble):
		return writeDouble(b, math.Float64frombits(le.Uint64(v)), 64)
	case typeDecimal, byte(TypeNewDecimal):
		if !isDecimalText(v) {
			return fmt.Errorf("%q is not a decimal number", v)
		}
		b.Write(v)
	case byte(TypeDate), typeNewDate, typeDateTime, typeTimestamp:
		return writeTemporal(b, t, v[1:])
	case typeTime:
		return writeTime(b, v[1:])
	default:
		writeQuoted(b, v)
	}
	return nil
}

// isDecimalText reports whether v is a plain decimal number: an optional sign, digits, and
// at most one point with digits on at least one side (no exponent, no hex: it is written
// into the statement as it is).
func isDecimalText(v []byte) bool {
	if len(v) > 0 && (v[0] == '+' || v[0] == '-') {
		v = v[1:]
	}
	digits, point := 0, false
	for _, c := range v {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !point:
			point = true
		default:
			return false
		}
	}
	return digits > 0
}

// writeDouble writes a double as a literal colink reads as a DOUBLE: exponent form.
func writeDouble(b *strings.Builder, f float64, bits int) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("%v is not a value SQL has", f)
	}
	b.WriteString(strconv.FormatFloat(f, 'e', -1, bits))
	return nil
}

// writeTemporal writes a DATE, DATETIME or TIMESTAMP value (v: 0, 4, 7 or 11 bytes: year,
// month, day, then hour, minute, second, then microseconds). A date, or a date and time
// at midnight, is a DATE literal; a time of day makes it a string, which the engine
// converts where the context asks.
func writeTemporal(b *strings.Builder, t byte, v []byte) error {
	switch len(v) {
	case 0:
		b.WriteString("'0000-00-00'")
		return nil
	case 4, 7, 11:
	default:
		return fmt.Errorf("a date or time of %d bytes", len(v))
	}
	date := fmt.Sprintf("%04d-%02d-%02d", binary.LittleEndian.Uint16(v), v[2], v[3])
	if len(v) == 4 || t == byte(TypeDate) || t == typeNewDate || (v[4] == 0 && v[5] == 0 && v[6] == 0 && (len(v) == 7 || binary.LittleEndian.Uint32(v[7:]) == 0)) {
		b.WriteString("date '" + date + "'")
		return nil
	}
	s := fmt.Sprintf("%s %02d:%02d:%02d", date, v[4], v[5], v[6])
	if len(v) == 11 {
		s += fmt.Sprintf(".%06d", binary.LittleEndian.Uint32(v[7:]))
	}
	b.WriteString("'" + s + "'")
	return nil
}

// writeTime writes a TIME value (v: 0, 8 or 12 bytes: sign, days, hour, minute, second,
// then microseconds) as a string literal.
func writeTime(b *strings.Builder, v []byte) error {
	switch len(v) {
	case 0:
		b.WriteString("'00:00:00'")
		return nil
	case 8, 12:
	default:
		return fmt.Errorf("a time of %d bytes", len(v))
	}
	sign := ""
	if v[0] == 1 {
		sign = "-"
	}
	hours := binary.LittleEndian.Uint32(v[1:])*24 + uint32(v[5])
	s := fmt.Sprintf("%s%02d:%02d:%02d", sign, hours, v[6], v[7])
	if len(v) == 12 {
		s += fmt.Sprintf(".%06d", binary.LittleEndian.Uint32(v[8:]))
	}
	b.WriteString("'" + s + "'")
	return nil
}

// writeQuoted writes v as a single-quoted string literal, escaped as
// mysql_real_escape_string escapes (the lexer and the engine's parser read backslash
// escapes): the value can only ever be one string.
func writeQuoted(b *strings.Builder, v []byte) {
	b.WriteByte('\'')
	for _, c := range v {
		switch c {
		case 0:
			b.WriteString(`\0`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case 26:
			b.WriteString(`\Z`)
		case '\'':
			b.WriteString(`\'`)
		case '\\':
			b.WriteString(`\\`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
}

// SQL-level prepared statements: PREPARE name FROM 'text', EXECUTE name [USING @var, …] and
// {DEALLOCATE | DROP} PREPARE name. They share the session's bound with the binary
// protocol's. EXECUTE writes each user variable into its placeholder as the variable itself
// (@var), so the engine reads its value, typed, as any statement that names it.

// sqlPrepare answers PREPARE and DEALLOCATE; handled is false for other statements, and for
// forms left to the engine (which refuses them by name).
func (c *conn) sqlPrepare(ctx context.Context, p *parser) (res *textResult, err error, handled bool) {
	first := p.next()
	switch {
	case first.is("prepare"):
		name := p.next()
		if (name.kind != tokWord && name.kind != tokQuotedIdent) || !p.accept("from") {
			return nil, nil, false
		}
		src := p.next()
		if (src.kind != tokString && src.kind != tokUserVar) || !p.done() {
			return nil, nil, false
		}
		text := src.value
		if src.kind == tokUserVar {
			if text, err = c.userVarText(ctx, src.text); err != nil {
				return nil, err, true
			}
		}
		key := strings.ToLower(name.value)
		_, replacing := c.named[key]
		ps, err := c.newStmt(text, replacing)
		if err != nil {
			return nil, err, true
		}
		if c.named == nil {
			c.named = map[string]*preparedStmt{}
		}
		c.named[key] = ps
		return &textResult{info: "Statement prepared"}, nil, true
	case first.is("deallocate"), first.is("drop"):
		if !p.accept("prepare") {
			return nil, nil, false
		}
		name := p.next()
		if (name.kind != tokWord && name.kind != tokQuotedIdent) || !p.done() {
			return nil, nil, false
		}
		key := strings.ToLower(name.value)
		if c.named[key] == nil {
			return nil, Errorf(errUnknownStmt, "Unknown prepared statement handler (%s) given to DEALLOCATE PREPARE", name.value), true
		}
		delete(c.named, key)
		return nil, nil, true
	}
	return nil, nil, false
}

// userVarText is the string a user variable holds (PREPARE … FROM @v), as the engine, which
// keeps the session's variables, evaluates it. A variable that is NULL or not a string is a
// syntax error, as in MySQL.
func (c *conn) userVarText(ctx context.Context, name string) (string, error) {
	res, err := c.srv.engine.Query(ctx, c.sess, "select "+name)
	if err != nil {
		return "", err
	}
	if res == nil || res.Rows == nil {
		return "", Errorf(ErrParse, "You have an error in your SQL syntax: %s holds no statement", name)
	}
	defer res.Rows.Close()
	rec, err := res.Rows.Next()
	if err != nil {
		return "", Errorf(ErrParse, "You have an error in your SQL syntax: %s holds no statement", name)
	}
	if rec.NumRows() != 1 || rec.NumCols() != 1 {
		return "", Errorf(ErrUnknownError, "internal error: select %s returned %d rows of %d columns", name, rec.NumRows(), rec.NumCols())
	}
	col, ok := rec.Column(0).(*array.String)
	if !ok || col.IsNull(0) {
		return "", Errorf(ErrParse, "You have an error in your SQL syntax near 'NULL': %s does not hold a statement's text", name)
	}
	return col.Value(0), nil
}

// sqlExecute returns the statement EXECUTE name [USING @v, …] runs, with each placeholder
// replaced by its variable; ok is false if st is not such an EXECUTE.
func (c *conn) sqlExecute(st statement) (stmt statement, err error, ok bool) {
	p := &parser{toks: st.toks}
	if !p.accept("execute") {
		return statement{}, nil, false
	}
	name := p.next()
	if name.kind != tokWord && name.kind != tokQuotedIdent {
		return statement{}, nil, false
	}
	var vars []string
	if p.accept("using") {
		for {
			v := p.next()
			if v.kind != tokUserVar {
				return statement{}, Errorf(ErrParse, "You have an error in your SQL syntax: EXECUTE … USING takes user variables (@name)"), true
			}
			vars = append(vars, v.text)
			if !p.accept(",") {
				break
			}
		}
	}
	if !p.done() {
		return statement{}, Errorf(ErrParse, "You have an error in your SQL syntax near '%s'", p.peek().text), true
	}
	ps := c.named[strings.ToLower(name.value)]
	if ps == nil {
		return statement{}, Errorf(errUnknownStmt, "Unknown prepared statement handler (%s) given to EXECUTE", name.value), true
	}
	if len(vars) != len(ps.holes) {
		return statement{}, Errorf(ErrWrongArguments, "Incorrect arguments to EXECUTE: the statement has %d placeholders, USING gives %d variables", len(ps.holes), len(vars)), true
	}
	var b strings.Builder
	prev := 0
	for i, at := range ps.holes {
		b.WriteString(ps.text[prev:at])
		b.WriteString(vars[i])
		prev = at + 1
	}
	b.WriteString(ps.text[prev:])
	stmts, _ := splitStatements(b.String(), c.srv.versionID)
	if len(stmts) != 1 {
		return statement{}, Errorf(ErrUnknownError, "internal error: the executed statement reads as %d statements", len(stmts)), true
	}
	return stmts[0], nil, true
}
