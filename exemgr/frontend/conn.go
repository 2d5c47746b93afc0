package frontend

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// conn is one client connection in the command phase. The front end runs this phase itself
// rather than through go-mysql's Conn.HandleCommand because that API takes a result set as a
// fully built in-memory Resultset (the whole of "select * from lineitem" before the first
// byte is sent), writes each packet with its own syscall, and has no context for cancelling
// a query, no multi-statement results and no ERR packet after rows.
type conn struct {
	srv  *Server
	wire *wire // reads the client's packets
	// capability is the capabilities the connection phase agreed.
	capability uint32
	sess       *Session
	out        *deadlineWriter // nc, each write bounded by net_write_timeout
	w          *packetWriter   // frames packets into out
	// lastErrCode is the code of the last error sent to the client, for the statement
	// observer.
	lastErrCode uint16
	// multiStatements is whether one COM_QUERY may hold several statements: the client's
	// CLIENT_MULTI_STATEMENTS, changed by COM_SET_OPTION.
	multiStatements bool
	// unwatch stops watching the peer for a hang-up during the running statement (before
	// reading a LOCAL file from it); local is the statement's LOCAL file, if it opened one.
	unwatch   func()
	localFile *localFile
	// stmts are the session's prepared statements by id (stmt.go), nextStmt the last id
	// given; binaryRows is set while a COM_STMT_EXECUTE's statement runs, whose result set
	// goes in the binary row format.
	stmts      map[uint32]*preparedStmt
	nextStmt   uint32
	binaryRows bool
	// named are the statements of SQL's PREPARE, by lower-case name.
	named map[string]*preparedStmt
}

// errQuit ends the command loop without an error worth logging.
var errQuit = errors.New("client quit")

// serve reads and answers commands until the client quits, the connection fails or the
// server closes it.
func (c *conn) serve(ctx context.Context) {
	for {
		c.wire.seq = 0
		data, err := c.readPacket(false)
		if err != nil || len(data) == 0 {
			return
		}
		c.w.reset(c.wire.seq)
		c.out.timeout = c.sessionTimeout("net_write_timeout", c.srv.cfg.NetWriteTimeout)
		if !c.sess.startCommand() {
			// The server is shutting down and closed this connection as the command came.
			code, state, msg := AsMySQL(ErrShutdown)
			_ = c.w.errPacket(code, state, msg)
			_ = c.w.flush()
			return
		}
		err = c.dispatch(ctx, data[0], data[1:])
		c.sess.endCommand()
		if ferr := c.w.flush(); err == nil {
			err = ferr
		}
		if err != nil {
			if c.out.expired {
				c.srv.log.Info("client write timed out: connection closed", "id", c.sess.id, "user", c.sess.user,
					"timeout", "net_write_timeout", "limit", c.out.timeout)
			} else if !errors.Is(err, errQuit) {
				c.srv.log.Debug("connection ends", "id", c.sess.id, "err", err)
			}
			return
		}
	}
}

// status is the server status sent in OK and EOF packets.
func status(more bool) uint16 {
	if more {
		return statusAutocommit | statusMoreResults
	}
	return statusAutocommit
}

// dispatch answers one command. A returned error ends the connection.
func (c *conn) dispatch(ctx context.Context, cmd byte, payload []byte) error {
	switch cmd {
	case mysql.COM_QUIT:
		return errQuit
	case mysql.COM_PING:
		return c.w.ok(0, 0, status(false), 0, "")
	case mysql.COM_QUERY:
		return c.query(ctx, string(payload))
	case mysql.COM_INIT_DB:
		if err := c.useDatabase(ctx, string(payload)); err != nil {
			return c.sendError(err)
		}
		return c.w.ok(0, 0, status(false), 0, "")
	case mysql.COM_FIELD_LIST:
		return c.fieldList(ctx, payload)
	case mysql.COM_STATISTICS:
		return c.w.raw([]byte(c.statistics()))
	case mysql.COM_PROCESS_KILL:
		if len(payload) < 4 {
			return c.sendError(Errorf(ErrUnknownCommand, "malformed COM_PROCESS_KILL"))
		}
		quit, err := c.kill(binary.LittleEndian.Uint32(payload), true)
		if err != nil {
			return c.sendError(err)
		}
		if err := c.w.ok(0, 0, status(false), 0, ""); err != nil || !quit {
			return err
		}
		return errQuit
	case mysql.COM_RESET_CONNECTION:
		c.sess.reset()
		c.stmts, c.named = nil, nil // MySQL closes the session's prepared statements too
		return c.w.ok(0, 0, status(false), 0, "")
	case mysql.COM_SET_OPTION:
		if len(payload) < 2 {
			return c.sendError(Errorf(ErrUnknownCommand, "malformed COM_SET_OPTION"))
		}
		switch binary.LittleEndian.Uint16(payload) {
		case 0:
			c.multiStatements = true
		case 1:
			c.multiStatements = false
		default:
			return c.sendError(Errorf(ErrUnknownCommand, "unknown COM_SET_OPTION option %d", binary.LittleEndian.Uint16(payload)))
		}
		return c.w.eof(status(false), 0)
	case mysql.COM_STMT_PREPARE:
		return c.prepare(string(payload))
	case mysql.COM_STMT_EXECUTE:
		return c.execute(ctx, payload)
	case mysql.COM_STMT_SEND_LONG_DATA:
		c.longData(payload)
		return nil // no response, by the protocol
	case mysql.COM_STMT_CLOSE:
		c.closeStmt(payload)
		return nil // no response, by the protocol
	case mysql.COM_STMT_RESET:
		return c.resetStmt(payload)
	case mysql.COM_STMT_FETCH:
		id := uint32(0)
		if len(payload) >= 4 {
			id = binary.LittleEndian.Uint32(payload)
		}
		return c.sendError(Errorf(errNoOpenCursor, "The statement (%d) has no open cursor.", id))
	}
	return c.sendError(Errorf(ErrUnknownCommand, "Unknown command %d", cmd))
}

// sendError answers with an ERR packet for err and records it for SHOW WARNINGS.
func (c *conn) sendError(err error) error {
	code, state, msg := AsMySQL(err)
	c.lastErrCode = code
	c.sess.setWarnings([]Warning{{Level: "Error", Code: code, Message: msg}})
	return c.w.errPacket(code, state, msg)
}

// query runs a COM_QUERY's statements, answering each in turn; the first that fails ends
// the sequence, as in MySQL.
func (c *conn) query(ctx context.Context, text string) error {
	c.srv.questions.Add(1)
	stmts, comment := splitStatements(text, c.srv.versionID)
	if len(stmts) == 0 {
		// MySQL's grammar (sql_yacc.yy) takes text that ends before any token as the empty
		// query: error 1065 if the text had no comment either (empty, or only whitespace),
		// but OK (SQLCOM_EMPTY_QUERY) if it had one, as "/* just a comment */", "-- x" or a
		// versioned comment for a later version, which dump files and clients that keep
		// comments send. A comment-only piece between statements is dropped (see
		// splitStatements) rather than answered with an OK of its own.
		if comment {
			c.sess.setWarnings(nil)
			return c.w.ok(0, 0, status(false), 0, "")
		}
		return c.sendError(Errorf(ErrEmptyQuery, "Query was empty"))
	}
	if len(stmts) > 1 && !c.multiStatements {
		return c.sendError(Errorf(ErrParse, "You have an error in your SQL syntax: %d statements in one query, but the client did not enable multi-statements (CLIENT_MULTI_STATEMENTS; go-sql-driver: multiStatements=true)", len(stmts)))
	}
	for i, st := range stmts {
		more := i < len(stmts)-1
		ok, err := c.statement(ctx, st, more)
		if err != nil || !ok {
			return err
		}
	}
	return nil
}

// statement answers one statement. ok is false if it failed (an ERR was sent); err is a
// connection failure.
func (c *conn) statement(ctx context.Context, st statement, more bool) (ok bool, err error) {
	if obs := c.srv.cfg.Statements; obs != nil {
		start := time.Now()
		c.lastErrCode = 0
		defer func() {
			code := c.lastErrCode
			if !ok && code == 0 {
				code = ErrUnknownError // the connection failed under the statement
			}
			obs.ObserveStatement(time.Since(start), code)
		}()
	}
	if !isShowWarnings(st) {
		c.sess.setWarnings(nil)
	}
	if inner, err, ok := c.sqlExecute(st); ok {
		if err != nil {
			return false, c.sendError(err)
		}
		st = inner
	}
	if res, err, handled := c.local(ctx, st); handled {
		if err != nil {
			if errors.Is(err, errQuit) { // KILL of this very connection: answer, then close
				if werr := c.w.ok(0, 0, status(false), 0, ""); werr != nil {
					return false, werr
				}
				return false, err
			}
			return false, c.sendError(err)
		}
		return true, c.writeText(res, more)
	}

	qctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if log := c.srv.log; log.Enabled(ctx, slog.LevelDebug) {
		start := time.Now()
		defer func() {
			log.Debug("statement", "id", c.sess.id, "query", st.text, "elapsed", time.Since(start), "ok", ok, "err", err)
		}()
	}
	c.sess.beginQuery(st.text, cancel)
	defer c.sess.endQuery()
	c.unwatch = sync.OnceFunc(watchPeer(c.wire.sock, func() { cancel(ErrClientGone) }))
	defer c.unwatch()
	c.localFile = nil
	c.sess.setLocalOpener(c.openLocalFile)
	res, err := c.srv.engine.Query(qctx, c.sess, st.text)
	c.sess.setLocalOpener(nil)
	if c.localFile != nil {
		// The engine is done with the file (or failed before reading it all): read the rest,
		// so that the answer follows the client's last packet.
		if lerr := c.localFile.Close(); lerr != nil {
			if res != nil && res.Rows != nil {
				res.Rows.Close()
			}
			return false, lerr
		}
	}
	if err != nil {
		if errors.Is(context.Cause(qctx), ErrClientGone) {
			return false, ErrClientGone
		}
		return false, c.sendError(shutdownCause(qctx, err))
	}
	if res == nil {
		res = &Result{}
	}
	c.sess.setWarnings(res.Warnings)
	if res.Rows == nil {
		return true, c.w.ok(res.AffectedRows, res.LastInsertID, status(more), warningCount(res.Warnings), res.Info)
	}
	ok, err = c.sendRows(qctx, res, more)
	if err == nil {
		// The answer is complete: it goes out now, and closing the result (the statement's
		// statistics, which ask every primproc for its usage: a round trip each) follows it
		// instead of delaying it. The session's next command is read only after the close,
		// so SHOW QUERY STATS still sees this statement.
		err = c.w.flush()
	}
	if err != nil {
		cancel(ErrClientGone) // the connection failed while the result was being written
	}
	// Closed after the cancellation so that the engine sees why it stops.
	if cerr := res.Rows.Close(); cerr != nil {
		c.srv.log.Debug("closing a result", "id", c.sess.id, "err", cerr)
	}
	return ok, err
}

func warningCount(w []Warning) uint16 { return uint16(min(len(w), 65535)) }

// sendRows streams a result set: column definitions, then each batch's rows as it arrives,
// then EOF — or ERR in place of the EOF if the query fails part way, which clients report as
// the statement's error. Memory stays bounded by one batch plus the packet writer's buffer.
func (c *conn) sendRows(qctx context.Context, res *Result, more bool) (ok bool, err error) {
	rows := res.Rows
	schema := rows.Schema()
	cols := res.Columns
	if cols == nil {
		if cols, err = ColumnsFromSchema(schema); err != nil {
			return false, c.sendError(err)
		}
	} else if err := checkColumns(cols, schema); err != nil {
		return false, c.sendError(Errorf(ErrUnknownError, "internal error: %w", err))
	}
	if len(cols) == 0 { // MySQL has no result set without columns
		return true, c.w.ok(0, 0, status(more), warningCount(res.Warnings), "")
	}
	enc, err := newRowEncoder(schema)
	if err != nil {
		return false, c.sendError(err)
	}
	c.w.columnCount(len(cols))
	for i := range cols {
		c.w.columnDef(&cols[i], defaultCollation, false)
	}
	if err := c.w.eof(status(more), 0); err != nil {
		return false, err
	}
	for {
		// A Rows that does not watch its context still stops at a batch boundary.
		if cause := context.Cause(qctx); cause != nil {
			return c.failRows(qctx, cause)
		}
		rec, err := rows.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return c.failRows(qctx, err)
		}
		if err := enc.bind(rec); err != nil {
			return false, c.sendError(err)
		}
		write := enc.writeRows
		if c.binaryRows {
			write = enc.writeBinaryRows
		}
		if err := write(c.w, int(rec.NumRows())); err != nil {
			return false, err
		}
	}
	return true, c.w.eof(status(more), warningCount(res.Warnings))
}

// failRows ends a result set with err, or drops the connection if its client has gone.
func (c *conn) failRows(qctx context.Context, err error) (bool, error) {
	if errors.Is(context.Cause(qctx), ErrClientGone) {
		return false, ErrClientGone
	}
	return false, c.sendError(shutdownCause(qctx, err))
}

// shutdownCause is ErrShutdown for a statement the server's shutdown cancelled (its client
// gets 1053, whatever error the cancellation surfaced as), err otherwise.
func shutdownCause(qctx context.Context, err error) error {
	if errors.Is(context.Cause(qctx), ErrShutdown) {
		return ErrShutdown
	}
	return err
}

// textResult is a small result the front end computes itself.
type textResult struct {
	cols []Column
	rows [][]cell
	// info is the OK packet's message when cols is nil.
	info string
	// warnings are the statement's warnings, for SHOW WARNINGS and the OK packet's count.
	warnings []Warning
}

// cell is one value of a textResult.
type cell struct {
	text string
	null bool
}

func textCell(s string) cell { return cell{text: s} }

var nullCell = cell{null: true}

// writeText answers with res: a result set if it has columns, otherwise an OK.
func (c *conn) writeText(res *textResult, more bool) error {
	if res == nil || res.cols == nil {
		info, warnings := "", uint16(0)
		if res != nil {
			info = res.info
			if len(res.warnings) > 0 {
				c.sess.setWarnings(res.warnings)
				warnings = warningCount(res.warnings)
			}
		}
		return c.w.ok(0, 0, status(more), warnings, info)
	}
	c.w.columnCount(len(res.cols))
	for i := range res.cols {
		c.w.columnDef(&res.cols[i], defaultCollation, false)
	}
	c.w.eof(status(more), 0)
	for _, row := range res.rows {
		c.w.begin()
		if c.binaryRows {
			c.w.buf = appendBinaryTextRow(c.w.buf, res.cols, row)
		} else {
			for _, v := range row {
				if v.null {
					c.w.buf = append(c.w.buf, nullValue)
				} else {
					c.w.buf = appendLenEncString(c.w.buf, v.text)
				}
			}
		}
		if err := c.w.end(); err != nil {
			return err
		}
	}
	return c.w.eof(status(more), 0)
}

// appendBinaryTextRow appends one row of a front-end result in the binary row format.
func appendBinaryTextRow(b []byte, cols []Column, row []cell) []byte {
	b = append(b, 0)
	at := len(b)
	for range (len(cols) + 7 + 2) / 8 {
		b = append(b, 0)
	}
	for i, v := range row {
		if v.null {
			b[at+(i+2)/8] |= 1 << ((i + 2) % 8)
			continue
		}
		b = appendBinaryText(b, cols[i].Type, cols[i].Flags&FlagUnsigned != 0, v.text)
	}
	return b
}

// useDatabase makes name the session's database if the engine knows it.
func (c *conn) useDatabase(ctx context.Context, name string) error {
	if name == "" {
		return Errorf(ErrNoDB, "No database selected")
	}
	if err := c.srv.engine.CheckDatabase(ctx, name); err != nil {
		return err
	}
	c.sess.SetDatabase(name)
	return nil
}

// fieldList answers COM_FIELD_LIST: table name, NUL, wildcard.
func (c *conn) fieldList(ctx context.Context, payload []byte) error {
	table, wildcard := string(payload), ""
	for i, b := range payload {
		if b == 0 {
			table, wildcard = string(payload[:i]), string(payload[i+1:])
			break
		}
	}
	var cols []Column
	if lister, ok := c.srv.engine.(FieldLister); ok {
		var err error
		if cols, err = lister.FieldList(ctx, c.sess, table, wildcard); err != nil {
			return c.sendError(err)
		}
	}
	for i := range cols {
		c.w.columnDef(&cols[i], defaultCollation, true)
	}
	return c.w.eof(status(false), 0)
}

// statistics is COM_STATISTICS's answer, which the mariadb client's "status" prints.
func (c *conn) statistics() string {
	up := time.Since(c.srv.started)
	c.srv.mu.Lock()
	threads := len(c.srv.sessions)
	c.srv.mu.Unlock()
	q := c.srv.questions.Load()
	return fmt.Sprintf("Uptime: %d  Threads: %d  Questions: %d  Slow queries: 0  Opens: 0  Open tables: 0  Queries per second avg: %.3f",
		int64(up.Seconds()), threads, q, float64(q)/max(up.Seconds(), 1))
}
