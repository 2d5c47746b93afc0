package frontend

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	tidbmysql "github.com/pingcap/tidb/pkg/parser/mysql"
)

// This file answers the statements that belong to the front end rather than the engine:
// what clients send when they connect (SELECT @@version_comment LIMIT 1, SET NAMES, …),
// session state (USE, SET of system variables, SHOW WARNINGS, SHOW VARIABLES), connections
// (KILL, SHOW PROCESSLIST) and transaction statements, which are no-ops for a read-only
// engine. Anything that does not match exactly goes to the engine.

// sysVar is a server-wide system variable.
type sysVar struct {
	value    string
	numeric  bool // sent as BIGINT rather than a string
	readOnly bool // SET refuses it
}

// serverVars returns the system variables the front end knows, with their server values.
// interactive_timeout reports --wait-timeout: colink treats interactive clients as any
// other.
func serverVars(cfg *Config, listeners []net.Listener) map[string]sysVar {
	str := func(v string) sysVar { return sysVar{value: v} }
	num := func(v string) sysVar { return sysVar{value: v, numeric: true} }
	ro := func(v sysVar) sysVar { v.readOnly = true; return v }
	hostname, _ := os.Hostname()
	port, socket := "0", ""
	for _, l := range listeners {
		switch a := l.Addr().(type) {
		case *net.TCPAddr:
			if port == "0" {
				port = strconv.Itoa(a.Port)
			}
		case *net.UnixAddr:
			if socket == "" {
				socket = a.Name
			}
		}
	}
	return map[string]sysVar{
		"version":                  ro(str(cfg.ServerVersion)),
		"version_comment":          ro(str(cfg.VersionComment)),
		"version_compile_os":       ro(str(runtime.GOOS)),
		"version_compile_machine":  ro(str(machineName(runtime.GOARCH))),
		"hostname":                 ro(str(hostname)),
		"port":                     ro(num(port)),
		"socket":                   ro(str(socket)),
		"max_connections":          ro(num(strconv.Itoa(cfg.MaxConnections))),
		"max_allowed_packet":       ro(num(strconv.FormatInt(cfg.MaxAllowedPacket, 10))),
		"net_buffer_length":        num("16384"),
		"net_write_timeout":        num(timeoutSeconds(cfg.NetWriteTimeout)),
		"net_read_timeout":         num(timeoutSeconds(cfg.NetReadTimeout)),
		"wait_timeout":             num(timeoutSeconds(cfg.WaitTimeout)),
		"interactive_timeout":      num(timeoutSeconds(cfg.WaitTimeout)),
		"autocommit":               num("1"),
		"auto_increment_increment": num("1"),
		"lower_case_table_names":   ro(num("0")),
		"sql_select_limit":         num("18446744073709551615"),
		"sql_auto_is_null":         num("0"),
		"sql_mode":                 str("ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION"),
		"character_set_client":     str("utf8mb4"),
		"character_set_connection": str("utf8mb4"),
		"character_set_results":    str("utf8mb4"),
		"character_set_server":     str("utf8mb4"),
		"character_set_database":   str("utf8mb4"),
		"collation_connection":     str(defaultCollationName),
		"collation_server":         str(defaultCollationName),
		"collation_database":       str(defaultCollationName),
		"init_connect":             str(""),
		"time_zone":                str("SYSTEM"),
		"system_time_zone":         ro(str(time.Now().Format("MST"))),
		"transaction_isolation":    str("REPEATABLE-READ"),
		"tx_isolation":             str("REPEATABLE-READ"),
		"transaction_read_only":    num("0"),
		"tx_read_only":             num("0"),
		"query_cache_size":         ro(num("0")),
		"query_cache_type":         ro(str("OFF")),
		"performance_schema":       ro(num("0")),
		"have_ssl":                 ro(str("DISABLED")),
		"license":                  ro(str("Apache-2.0")),
		"default_storage_engine":   str("colink"),
		"sql_quote_show_create":    num("1"),
		"group_concat_max_len":     num("1024"),
		// Set by dumps around their INSERTs; colink checks no keys either way.
		"unique_checks":      num("1"),
		"foreign_key_checks": num("1"),
		"sql_notes":          num("1"),
	}
}

// machineName is uname's name for a Go architecture, as MySQL reports it.
func machineName(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	case "386":
		return "i686"
	}
	return goarch
}

// parser walks a statement's tokens.
type parser struct {
	toks []token
	i    int
}

func (p *parser) done() bool { return p.i >= len(p.toks) }

func (p *parser) peek() token {
	if p.done() {
		return token{}
	}
	return p.toks[p.i]
}

func (p *parser) next() token {
	t := p.peek()
	p.i++
	return t
}

// accept consumes the next token if it is keyword or punctuation kw.
func (p *parser) accept(kw string) bool {
	if !p.done() && p.toks[p.i].is(kw) {
		p.i++
		return true
	}
	return false
}

// acceptSeq consumes kws if the next tokens are exactly those.
func (p *parser) acceptSeq(kws ...string) bool {
	if p.i+len(kws) > len(p.toks) {
		return false
	}
	for j, kw := range kws {
		if !p.toks[p.i+j].is(kw) {
			return false
		}
	}
	p.i += len(kws)
	return true
}

// isShowWarnings reports whether st is SHOW WARNINGS or SHOW ERRORS, which must not clear
// the warnings they list.
func isShowWarnings(st statement) bool {
	p := parser{toks: st.toks}
	return p.accept("show") && (p.accept("warnings") || p.accept("errors"))
}

// local answers st if the front end owns it; handled is false otherwise. A nil result with
// a nil error is an OK.
func (c *conn) local(ctx context.Context, st statement) (res *textResult, err error, handled bool) {
	p := &parser{toks: st.toks}
	first := p.next()
	switch {
	case first.is("select"):
		return c.selectSystem(st, p)
	case first.is("set"):
		return c.set(p)
	case first.is("use"):
		name := p.next()
		if (name.kind != tokWord && name.kind != tokQuotedIdent) || !p.done() {
			return nil, nil, false
		}
		return nil, c.useDatabase(ctx, name.value), true
	case first.is("kill"):
		return c.killStatement(p)
	case first.is("show"):
		return c.show(p)
	case first.is("prepare"), first.is("deallocate"), first.is("drop") && p.peek().is("prepare"):
		return c.sqlPrepare(ctx, &parser{toks: st.toks})
	case first.is("lock"), first.is("unlock"):
		// LOCK TABLES … / UNLOCK TABLES, which dump tools send around their reads: colink
		// has no table locks (every statement reads its own snapshot), so they are accepted
		// and hold nothing.
		if !p.accept("tables") && !p.accept("table") {
			return nil, nil, false
		}
		return nil, nil, true
	case first.is("begin"), first.is("commit"), first.is("rollback"):
		p.accept("work")
		return nil, nil, p.done()
	case first.is("start"):
		if !p.accept("transaction") {
			return nil, nil, false
		}
		for !p.done() { // WITH CONSISTENT SNAPSHOT, READ ONLY, READ WRITE
			if t := p.next(); t.kind != tokWord && !t.is(",") {
				return nil, nil, false
			}
		}
		return nil, nil, true
	}
	return nil, nil, false
}

// systemItem is one expression of a SELECT the front end can evaluate.
type systemItem struct {
	label string
	eval  func() (cell, bool) // the value, and whether it is numeric
}

// selectSystem answers SELECT whose every item is a system variable or one of DATABASE(),
// SCHEMA(), USER(), CURRENT_USER(), SESSION_USER(), SYSTEM_USER(), CONNECTION_ID() and
// VERSION(), each optionally aliased, with an optional LIMIT.
func (c *conn) selectSystem(st statement, p *parser) (*textResult, error, bool) {
	base := st.toks[0].start
	var items []systemItem
	for {
		start := p.peek().start
		eval, err, ok := c.systemItem(p)
		if !ok {
			return nil, nil, false
		}
		if err != nil {
			return nil, err, true
		}
		label := st.text[start-base : p.toks[p.i-1].end-base]
		if p.accept("as") {
			alias := p.next()
			if alias.kind != tokWord && alias.kind != tokQuotedIdent && alias.kind != tokString {
				return nil, nil, false
			}
			label = alias.value
		} else if t := p.peek(); t.kind == tokQuotedIdent || t.kind == tokString || t.kind == tokWord && !t.is("limit") && !t.is("from") {
			label = p.next().value
		}
		items = append(items, systemItem{label: label, eval: eval})
		if !p.accept(",") {
			break
		}
	}
	limit := -1
	if p.accept("limit") {
		n, err := strconv.Atoi(p.next().text)
		if err != nil {
			return nil, nil, false
		}
		limit = n
	}
	if !p.done() {
		return nil, nil, false
	}
	res := &textResult{}
	row := make([]cell, len(items))
	for i, it := range items {
		v, numeric := it.eval()
		row[i] = v
		col := Column{Name: it.label, Type: TypeVarString, Length: uint32(max(len(v.text), 1))}
		if numeric {
			col = Column{Name: it.label, Type: TypeLongLong, Length: 21, Flags: FlagNum | FlagBinary}
		}
		res.cols = append(res.cols, col)
	}
	if limit != 0 {
		res.rows = [][]cell{row}
	}
	return res, nil, true
}

// systemItem parses one item of a system SELECT. ok is false if it is something else.
func (c *conn) systemItem(p *parser) (eval func() (cell, bool), err error, ok bool) {
	t := p.next()
	if t.kind == tokSysVar {
		scope, name := splitVarName(strings.TrimPrefix(t.text, "@@"))
		v, known := c.srv.vars[name]
		if !known {
			if ev, ok := c.engineVariable(name, scope == "global"); ok {
				return func() (cell, bool) { return textCell(ev.Value), ev.Numeric }, nil, true
			}
			return nil, Errorf(ErrUnknownSystemVar, "Unknown system variable '%s'", name), true
		}
		return func() (cell, bool) {
			if scope != "global" {
				if sv, ok := c.sess.Var(name); ok {
					return textCell(sv), v.numeric
				}
			}
			return textCell(v.value), v.numeric
		}, nil, true
	}
	if t.kind != tokWord {
		return nil, nil, false
	}
	fn := strings.ToLower(t.text)
	parens := p.acceptSeq("(", ")")
	if !parens && fn != "current_user" {
		return nil, nil, false
	}
	userHost := func() (cell, bool) { return textCell(c.sess.Account()), false }
	switch fn {
	case "database", "schema":
		return func() (cell, bool) {
			if db := c.sess.Database(); db != "" {
				return textCell(db), false
			}
			return nullCell, false
		}, nil, true
	case "user", "session_user", "system_user", "current_user":
		return userHost, nil, true
	case "connection_id":
		return func() (cell, bool) { return textCell(strconv.FormatUint(uint64(c.sess.id), 10)), true }, nil, true
	case "version":
		return func() (cell, bool) { return textCell(c.srv.cfg.ServerVersion), false }, nil, true
	}
	return nil, nil, false
}

// splitVarName splits "session.sql_mode" into scope and lower-case name; scope is "" when
// not given ("local" means "session").
func splitVarName(s string) (scope, name string) {
	s = strings.ToLower(s)
	if before, after, ok := strings.Cut(s, "."); ok {
		switch before {
		case "session", "local":
			return "session", after
		case "global":
			return "global", after
		}
	}
	return "", s
}

// set answers SET NAMES, SET CHARACTER SET, SET TRANSACTION and SET of known system
// variables to literal values, which it records in the session. Other SETs (user variables,
// engine settings, expressions) go to the engine.
func (c *conn) set(p *parser) (*textResult, error, bool) {
	switch {
	case p.accept("names"):
		cs := p.next()
		if cs.kind != tokWord && cs.kind != tokString && cs.kind != tokQuotedIdent {
			return nil, nil, false
		}
		collation := ""
		if p.accept("collate") {
			t := p.next()
			if t.kind != tokWord && t.kind != tokString && t.kind != tokQuotedIdent {
				return nil, nil, false
			}
			collation = t.value
		}
		if !p.done() {
			return nil, nil, false
		}
		name := cs.value
		if cs.kind == tokWord && strings.EqualFold(name, "default") {
			name = "utf8mb4"
		}
		warn, err := charsetRequest("SET NAMES", name)
		if err != nil {
			return nil, err, true
		}
		// character_set_client, _connection and _results stay the server's utf8mb4.
		for _, v := range []string{"character_set_client", "character_set_connection", "character_set_results"} {
			c.sess.unsetVar(v)
		}
		c.sess.unsetVar("collation_connection")
		if warn != nil {
			return warn, nil, true // the COLLATE of another character set means nothing either
		}
		bin, warn := binaryCollationOf("utf8mb4", collation)
		c.sess.SetVar("collation_connection", bin)
		return warn, nil, true
	case p.acceptSeq("character", "set"), p.accept("charset"):
		cs := p.next()
		if cs.kind != tokWord && cs.kind != tokString && cs.kind != tokQuotedIdent || !p.done() {
			return nil, nil, false
		}
		if cs.kind == tokWord && strings.EqualFold(cs.value, "default") {
			return nil, nil, true
		}
		warn, err := charsetRequest("SET CHARACTER SET", cs.value)
		return warn, err, true
	}
	type assignment struct {
		name, value string
		reset       bool // SET name = DEFAULT: back to the server's value
	}
	var sets []assignment
	var res *textResult // carries the warnings of collations colink replaced
	for {
		scope := ""
		switch {
		case p.accept("session"), p.accept("local"):
			scope = "session"
		case p.accept("global"):
			scope = "global"
		}
		if p.accept("transaction") {
			return nil, nil, true // isolation levels mean nothing to a read-only engine
		}
		t := p.next()
		var name string
		switch t.kind {
		case tokWord:
			name = strings.ToLower(t.text)
		case tokSysVar:
			var s string
			s, name = splitVarName(strings.TrimPrefix(t.text, "@@"))
			if s != "" {
				scope = s
			}
		default:
			return nil, nil, false
		}
		if !p.accept("=") && !p.acceptSeq(":", "=") {
			return nil, nil, false
		}
		null := !p.done() && p.peek().kind == tokWord && strings.EqualFold(p.peek().text, "null")
		value, isDefault, ok := literalValue(p)
		if !ok || !p.done() && !p.peek().is(",") {
			return nil, nil, false // an expression (concat(@@sql_mode, …)): the engine's
		}
		if _, known := c.srv.vars[name]; !known {
			return nil, nil, false // perhaps the engine's
		}
		value, warns, err := c.sess.checkSet(scope, name, value, isDefault, null)
		if err != nil {
			return nil, err, true
		}
		if len(warns) > 0 {
			if res == nil {
				res = &textResult{}
			}
			res.warnings = append(res.warnings, warns...)
		}
		sets = append(sets, assignment{name, value, isDefault})
		if !p.accept(",") {
			break
		}
	}
	if !p.done() {
		return nil, nil, false
	}
	for _, a := range sets {
		if a.reset {
			c.sess.unsetVar(a.name)
		} else {
			c.sess.SetVar(a.name, a.value)
		}
	}
	return res, nil, true
}

// checkSet checks SET [scope] name = value (isDefault: = DEFAULT; null: = NULL) of one of
// the front end's system variables and returns the value to record, with the warnings of a
// character set or collation colink replaced. The caller knows name is the front end's.
func (s *Session) checkSet(scope, name, value string, isDefault, null bool) (string, []Warning, error) {
	v := s.server[name]
	var warns []Warning
	if scope == "global" {
		return "", nil, Errorf(ErrNotSupportedYet, "colink does not support SET GLOBAL; set '%s' for the session", name)
	}
	if null && !strings.HasPrefix(name, "character_set_") {
		// Only the character sets take NULL (no conversion), as in MySQL.
		return "", nil, Errorf(ErrWrongValueForVar, "Variable '%s' can't be set to the value of 'NULL'", name)
	}
	if v.readOnly {
		return "", nil, Errorf(1238, "Variable '%s' is a read only variable", name)
	}
	if v.numeric && !isDefault {
		switch strings.ToLower(value) {
		case "on", "true":
			value = "1"
		case "off", "false":
			value = "0"
		}
		if _, err := strconv.ParseInt(value, 10, 64); err != nil {
			if _, err := strconv.ParseUint(value, 10, 64); err != nil {
				return "", nil, Errorf(ErrWrongValueForVar, "Variable '%s' can't be set to the value of '%s'", name, value)
			}
		}
	}
	if (name == "wait_timeout" || name == "net_read_timeout" || name == "net_write_timeout" || name == "interactive_timeout") && !isDefault {
		// mysqld's range; whole seconds, which readPacket reads back.
		if n, err := strconv.ParseInt(value, 10, 64); err != nil || n < 1 || n > 31536000 {
			return "", nil, Errorf(ErrWrongValueForVar, "Variable '%s' can't be set to the value of '%s' (seconds, 1 to 31536000)", name, value)
		}
	}
	if name == "sql_mode" && !isDefault {
		// The engine parses the session's statements in its mode (ANSI_QUOTES,
		// PIPES_AS_CONCAT, …), so only MySQL's mode names are taken.
		value = tidbmysql.FormatSQLModeStr(value)
		if _, err := tidbmysql.GetSQLMode(value); err != nil {
			return "", nil, Errorf(ErrWrongValueForVar, "Variable 'sql_mode' can't be set to the value of '%s'", value)
		}
	}
	if strings.HasPrefix(name, "character_set_") && !isDefault {
		warn, err := charsetRequest("SET "+name, value)
		if err != nil {
			return "", nil, err
		}
		if warn != nil {
			warns = append(warns, warn.warnings...)
		}
		value = "utf8mb4"
	}
	if strings.HasPrefix(name, "collation_") && !isDefault {
		// The character sets stay utf8mb4 (see charsetRequest), so another character
		// set's collation (latin1_swedish_ci) becomes utf8mb4's binary one too.
		bin, warn := binaryCollationOf("utf8mb4", value)
		if warn != nil {
			warns = append(warns, warn.warnings...)
		}
		value = bin
	}
	return value, warns, nil
}

// SetSystemVar is SET name = value (isDefault: = DEFAULT; null: the value is NULL) of a
// front-end system variable whose value the engine evaluated from an expression (SET
// sql_mode = concat(@@sql_mode, …)). known is false if name is not the front end's;
// otherwise the value is checked as a literal SET checks it and recorded, and the warnings
// are the statement's.
func (s *Session) SetSystemVar(name, value string, isDefault, null bool) (warns []Warning, known bool, err error) {
	name = strings.ToLower(name)
	if _, known := s.server[name]; !known {
		return nil, false, nil
	}
	value, warns, err = s.checkSet("", name, value, isDefault, null)
	if err != nil {
		return nil, true, err
	}
	if isDefault {
		s.unsetVar(name)
	} else {
		s.SetVar(name, value)
	}
	return warns, true, nil
}

// charsetRequest checks a character set a client asks for (SET NAMES, SET CHARACTER SET, SET
// character_set_…). colink sends and expects UTF-8 whatever the client asks, so a character
// set of the UTF-8 family (or NULL, no conversion) is fine; any other MySQL character set
// gets a warning that colink keeps using utf8mb4 (a warning rather than an error: clients
// configured with another character set still connect, and a client that sends only ASCII
// is unharmed); an unknown name is error 1115, as in MySQL.
func charsetRequest(stmt, name string) (warn *textResult, err error) {
	lower := strings.ToLower(name)
	switch lower {
	case "utf8mb4", "utf8mb3", "utf8", "null":
		return nil, nil
	}
	if !isMySQLCharset(lower) {
		return nil, Errorf(ErrUnknownCharacterSet, "Unknown character set: '%s'", name)
	}
	return &textResult{warnings: []Warning{{Level: "Warning", Code: ErrNotSupportedYet,
		Message: fmt.Sprintf("colink sends and expects utf8mb4 only: %s '%s' is ignored (character_set_client, character_set_connection and character_set_results stay utf8mb4)", stmt, name)}}}, nil
}

// isMySQLCharset reports whether name (lower case) is one of MySQL's character sets.
func isMySQLCharset(name string) bool {
	switch name {
	case "armscii8", "ascii", "big5", "binary", "cp1250", "cp1251", "cp1256", "cp1257", "cp850", "cp852",
		"cp866", "cp932", "dec8", "eucjpms", "euckr", "gb18030", "gb2312", "gbk", "geostd8", "greek",
		"hebrew", "hp8", "keybcs2", "koi8r", "koi8u", "latin1", "latin2", "latin5", "latin7", "macce",
		"macroman", "sjis", "swe7", "tis620", "ucs2", "ujis", "utf16", "utf16le", "utf32":
		return true
	}
	return false
}

// binaryCollationOf returns the binary collation of character set cs, which is what colink
// compares with whatever collation a client asks for: the engine compares strings
// byte-wise. warn is nil when the requested collation is that one (or none was named), and
// otherwise a result carrying a warning (1273, as MySQL's unknown collation) saying so.
func binaryCollationOf(cs, requested string) (name string, warn *textResult) {
	cs = strings.ToLower(cs)
	name = cs + "_bin"
	if cs == "binary" {
		name = "binary"
	}
	if requested == "" || strings.EqualFold(requested, name) {
		return name, nil
	}
	return name, &textResult{warnings: []Warning{{Level: "Warning", Code: ErrUnknownCollation,
		Message: fmt.Sprintf("colink compares strings byte-wise: collation '%s' is treated as '%s'", requested, name)}}}
}

// literalValue parses a SET value: a string, a number (optionally negative), a word (ON,
// OFF, an identifier), or DEFAULT.
func literalValue(p *parser) (value string, isDefault, ok bool) {
	neg := p.accept("-")
	t := p.next()
	switch t.kind {
	case tokNumber:
		if neg {
			return "-" + t.text, false, true
		}
		return t.text, false, true
	case tokString:
		return t.value, false, !neg
	case tokWord, tokQuotedIdent:
		if neg {
			return "", false, false
		}
		if t.kind == tokWord && strings.EqualFold(t.text, "default") {
			return "", true, true
		}
		return t.value, false, true
	}
	return "", false, false
}

// killStatement answers KILL [HARD|SOFT] [CONNECTION|QUERY] id.
func (c *conn) killStatement(p *parser) (*textResult, error, bool) {
	if !p.accept("hard") {
		p.accept("soft")
	}
	connection := true
	if p.accept("query") {
		connection = false
	} else {
		p.accept("connection")
	}
	t := p.next()
	id, err := strconv.ParseUint(t.text, 10, 32)
	if t.kind != tokNumber || err != nil || !p.done() {
		return nil, nil, false
	}
	quit, err := c.kill(uint32(id), connection)
	if err == nil && quit {
		err = errQuit
	}
	return nil, err, true
}

// kill kills session id's query, or the session's connection. A user may kill their own
// sessions; root may kill any. quit is true when the connection killed is this one, which
// the caller closes after answering.
func (c *conn) kill(id uint32, connection bool) (quit bool, err error) {
	target := c.srv.session(id)
	if target == nil {
		return false, Errorf(ErrNoSuchThread, "Unknown thread id: %d", id)
	}
	if target.user != c.sess.user && c.sess.user != "root" {
		return false, Errorf(ErrKillDenied, "You are not owner of thread %d", id)
	}
	if target == c.sess {
		return connection, nil // this statement is the session's only query
	}
	if connection {
		target.killConnection()
	} else {
		target.killQuery()
	}
	return false, nil
}

// show answers SHOW [FULL] PROCESSLIST, SHOW WARNINGS, SHOW ERRORS and
// SHOW [GLOBAL|SESSION] VARIABLES [LIKE 'pattern'].
func (c *conn) show(p *parser) (*textResult, error, bool) {
	switch {
	case p.acceptSeq("full", "processlist"):
		return c.processList(true), nil, p.done()
	case p.accept("processlist"):
		return c.processList(false), nil, p.done()
	case p.accept("warnings"):
		return c.warnings(p, false)
	case p.accept("errors"):
		return c.warnings(p, true)
	}
	global := false
	if p.accept("global") {
		global = true
	} else if !p.accept("session") {
		p.accept("local")
	}
	if p.accept("status") {
		return c.status(p)
	}
	if !p.accept("variables") {
		return nil, nil, false
	}
	pattern, ok := likeTail(p)
	if !ok {
		return nil, nil, false
	}
	values := map[string]string{}
	for name, v := range c.srv.vars {
		values[name] = v.value
		if !global {
			if sv, ok := c.sess.Var(name); ok {
				values[name] = sv
			}
		}
	}
	for _, v := range c.engineVariables(global) {
		values[v.Name] = v.Value
	}
	names := make([]string, 0, len(values))
	for name := range values {
		if pattern == "" || likeMatch(pattern, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	res := nameValueResult()
	for _, name := range names {
		res.rows = append(res.rows, []cell{textCell(name), textCell(values[name])})
	}
	return res, nil, true
}

// likeTail reads the end of a SHOW VARIABLES or SHOW STATUS: an optional LIKE 'pattern'
// ("" without), then nothing; ok is false for anything else.
func likeTail(p *parser) (pattern string, ok bool) {
	if p.accept("like") {
		t := p.next()
		if t.kind != tokString {
			return "", false
		}
		pattern = t.value
	}
	return pattern, p.done()
}

// nameValueResult is the empty result of SHOW VARIABLES and SHOW STATUS: Variable_name,
// Value.
func nameValueResult() *textResult {
	return &textResult{cols: []Column{
		{Name: "Variable_name", Type: TypeVarString, Length: 64, Flags: FlagNotNull},
		{Name: "Value", Type: TypeVarString, Length: 2048},
	}}
}

// status answers SHOW [GLOBAL | SESSION] STATUS [LIKE 'pattern']: the server's counters,
// as mysqld names them, then the engine's (StatusSource). colink keeps no per-session
// counters, so SESSION shows the global ones, as mysqld does for most of them.
func (c *conn) status(p *parser) (*textResult, error, bool) {
	pattern, ok := likeTail(p)
	if !ok {
		return nil, nil, false
	}
	up := int64(time.Since(c.srv.started).Seconds())
	c.srv.mu.Lock()
	threads := len(c.srv.sessions)
	c.srv.mu.Unlock()
	vars := []Variable{
		{Name: "Connections", Value: fmt.Sprint(c.srv.accepted.Load()), Numeric: true},
		{Name: "Questions", Value: fmt.Sprint(c.srv.questions.Load()), Numeric: true},
		{Name: "Queries", Value: fmt.Sprint(c.srv.questions.Load()), Numeric: true},
		{Name: "Threads_connected", Value: fmt.Sprint(threads), Numeric: true},
		{Name: "Uptime", Value: fmt.Sprint(up), Numeric: true},
	}
	if ss, ok := c.srv.engine.(StatusSource); ok {
		vars = append(vars, ss.Status()...)
	}
	res := nameValueResult()
	slices.SortFunc(vars, func(a, b Variable) int { return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) })
	for _, v := range vars {
		if pattern == "" || likeMatch(strings.ToLower(pattern), strings.ToLower(v.Name)) {
			res.rows = append(res.rows, []cell{textCell(v.Name), textCell(v.Value)})
		}
	}
	return res, nil, true
}

// engineVariables are the engine's own system variables (VariableSource), if it has any.
func (c *conn) engineVariables(global bool) []Variable {
	if vs, ok := c.srv.engine.(VariableSource); ok {
		return vs.Variables(c.sess, global)
	}
	return nil
}

// engineVariable is the engine's variable name, if it has one.
func (c *conn) engineVariable(name string, global bool) (Variable, bool) {
	for _, v := range c.engineVariables(global) {
		if v.Name == name {
			return v, true
		}
	}
	return Variable{}, false
}

func (c *conn) processList(full bool) *textResult {
	res := &textResult{cols: []Column{
		{Name: "Id", Type: TypeLongLong, Length: 21, Flags: FlagNotNull | FlagNum | FlagBinary},
		{Name: "User", Type: TypeVarString, Length: 32, Flags: FlagNotNull},
		{Name: "Host", Type: TypeVarString, Length: 64, Flags: FlagNotNull},
		{Name: "db", Type: TypeVarString, Length: 64},
		{Name: "Command", Type: TypeVarString, Length: 16, Flags: FlagNotNull},
		{Name: "Time", Type: TypeLong, Length: 7, Flags: FlagNotNull | FlagNum | FlagBinary},
		{Name: "State", Type: TypeVarString, Length: 30},
		{Name: "Info", Type: TypeVarString, Length: 100},
	}}
	now := time.Now()
	for _, pi := range c.srv.snapshot() {
		db, info := nullCell, nullCell
		if pi.database != "" {
			db = textCell(pi.database)
		}
		command, state := "Sleep", ""
		if pi.query != "" || pi.id == c.sess.id {
			command, state = "Query", "executing"
			q := pi.query
			if pi.id == c.sess.id {
				q = "SHOW PROCESSLIST"
				if full {
					q = "SHOW FULL PROCESSLIST"
				}
			}
			if !full && len(q) > 100 {
				q = q[:100]
			}
			info = textCell(q)
		}
		res.rows = append(res.rows, []cell{
			textCell(strconv.FormatUint(uint64(pi.id), 10)), textCell(pi.user), textCell(pi.host), db,
			textCell(command), textCell(strconv.FormatInt(int64(now.Sub(pi.since).Seconds()), 10)), textCell(state), info,
		})
	}
	return res
}

func sortProcesses(ps []processInfo) {
	slices.SortFunc(ps, func(a, b processInfo) int { return int(int64(a.id) - int64(b.id)) })
}

// warnings answers SHOW WARNINGS / SHOW ERRORS [LIMIT [offset,] n].
func (c *conn) warnings(p *parser, errorsOnly bool) (*textResult, error, bool) {
	offset, limit := 0, -1
	if p.accept("limit") {
		a, err := strconv.Atoi(p.next().text)
		if err != nil {
			return nil, nil, false
		}
		limit = a
		if p.accept(",") {
			b, err := strconv.Atoi(p.next().text)
			if err != nil {
				return nil, nil, false
			}
			offset, limit = a, b
		}
	}
	if !p.done() {
		return nil, nil, false
	}
	res := &textResult{cols: []Column{
		{Name: "Level", Type: TypeVarString, Length: 7, Flags: FlagNotNull},
		{Name: "Code", Type: TypeLong, Length: 4, Flags: FlagNotNull | FlagNum | FlagBinary | FlagUnsigned},
		{Name: "Message", Type: TypeVarString, Length: 512, Flags: FlagNotNull},
	}}
	n := 0
	for _, w := range c.sess.Warnings() {
		if errorsOnly && w.Level != "Error" {
			continue
		}
		n++
		if n <= offset || (limit >= 0 && n > offset+limit) {
			continue
		}
		res.rows = append(res.rows, []cell{textCell(w.Level), textCell(strconv.Itoa(int(w.Code))), textCell(w.Message)})
	}
	return res, nil, true
}

// likeMatch matches s against a LIKE pattern (% any run, _ one character, \ escapes),
// case-insensitively: MySQL matches SHOW VARIABLES LIKE against variable names that way,
// whatever the connection's collation.
func likeMatch(pattern, s string) bool {
	p, t := []rune(strings.ToLower(pattern)), []rune(strings.ToLower(s))
	// Iterative matching with backtracking to the last %.
	pi, ti, starP, starT := 0, 0, -1, 0
	for ti < len(t) {
		switch {
		case pi < len(p) && p[pi] == '\\' && pi+1 < len(p) && p[pi+1] == t[ti]:
			pi += 2
			ti++
		case pi < len(p) && (p[pi] == '_' || p[pi] != '%' && p[pi] != '\\' && p[pi] == t[ti]):
			pi++
			ti++
		case pi < len(p) && p[pi] == '%':
			starP, starT = pi, ti
			pi++
		case starP >= 0:
			starT++
			pi, ti = starP+1, starT
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '%' {
		pi++
	}
	return pi == len(p)
}
