package frontend

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// Session is one client connection's state. The connection's goroutine owns it; the methods
// are safe to call from other goroutines too (SHOW PROCESSLIST and KILL read other sessions).
type Session struct {
	id      uint32
	user    string
	host    string // the client's address as SHOW PROCESSLIST shows it
	started time.Time
	// server holds the server's system variables (nil for a session made without one).
	server map[string]sysVar

	mu sync.Mutex
	// The fields below are guarded by mu.
	database     string
	vars         map[string]string // session values of system variables, lower-case names
	query        string            // the running statement, "" between statements
	queryStarted time.Time         // when query began, or when the last one ended
	cancelQuery  context.CancelCauseFunc
	// busy is set while a command is answered; drained once a shutting-down server has
	// closed the session between commands (see Server.drain).
	busy, drained bool
	closeConn     func() // ends the session's connection (KILL CONNECTION)
	stats         any
	warnings      []Warning
	openLocal     func(string) (io.ReadCloser, error) // LOAD DATA LOCAL, while a statement runs
}

// NewSession returns a session with connection id id for user connected from host. The
// server makes one per connection; engine tests may make their own.
func NewSession(id uint32, user, host string) *Session {
	now := time.Now()
	return &Session{id: id, user: user, host: host, started: now, queryStarted: now}
}

// ID is the session's connection id, as CONNECTION_ID() and KILL use it.
func (s *Session) ID() uint32 { return s.id }

// User is the name the session authenticated as.
func (s *Session) User() string { return s.user }

// Host is the client's address: "ip:port" for TCP, "localhost" for the unix socket.
func (s *Session) Host() string { return s.host }

// Account is user@host as USER() spells it: the client's address without its port.
func (s *Session) Account() string {
	host := s.host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return s.user + "@" + host
}

// Started is when the session connected.
func (s *Session) Started() time.Time { return s.started }

// Database is the session's current database, "" if none.
func (s *Session) Database() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.database
}

// SetDatabase makes name the current database. The caller has checked that it exists.
func (s *Session) SetDatabase(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.database = name
}

// Var returns the session's value of system variable name (case-insensitive) if the session
// has SET it.
func (s *Session) Var(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.vars[strings.ToLower(name)]
	return v, ok
}

// SystemVar returns system variable name (case-insensitive) as the session sees it, as
// SELECT @@name answers: its own value if it has SET one, else the server's; numeric is
// whether the front end sends it as a number.
func (s *Session) SystemVar(name string) (value string, numeric, ok bool) {
	v, known := s.server[strings.ToLower(name)]
	if sv, set := s.Var(name); set {
		return sv, v.numeric, true
	}
	return v.value, v.numeric, known
}

// SetVar sets the session's value of system variable name.
func (s *Session) SetVar(name, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vars == nil {
		s.vars = make(map[string]string)
	}
	s.vars[strings.ToLower(name)] = value
}

// unsetVar forgets the session's value of name, so the server's applies again.
func (s *Session) unsetVar(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.vars, strings.ToLower(name))
}

// QueryStats returns what the engine stored with SetQueryStats, nil if nothing.
func (s *Session) QueryStats() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// SetQueryStats stores the statistics of the session's last query. The front end never looks
// inside; the engine answers SHOW QUERY STATS from them.
func (s *Session) SetQueryStats(stats any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats = stats
}

// Warnings returns the warnings of the session's last statement.
func (s *Session) Warnings() []Warning {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Warning(nil), s.warnings...)
}

func (s *Session) setWarnings(w []Warning) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.warnings = w
}

// reset forgets the session's variables, warnings and stats (COM_RESET_CONNECTION).
func (s *Session) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vars, s.warnings, s.stats = nil, nil, nil
}

// beginQuery records that query runs and can be killed through cancel.
func (s *Session) beginQuery(query string, cancel context.CancelCauseFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.query, s.queryStarted, s.cancelQuery = query, time.Now(), cancel
}

// startCommand records that a command is being answered, and reports false if the
// session was drained (its server shuts down and closes it).
func (s *Session) startCommand() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.drained {
		return false
	}
	s.busy = true
	return true
}

// endCommand records that the session waits for its next command.
func (s *Session) endCommand() {
	s.mu.Lock()
	s.busy = false
	s.mu.Unlock()
}

// drainIfIdle marks a session between commands as drained, so that it answers no further
// command, and reports whether it did (the caller closes its connection).
func (s *Session) drainIfIdle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.busy {
		s.drained = true
	}
	return s.drained
}

// endQuery records that no query runs.
func (s *Session) endQuery() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.query, s.queryStarted, s.cancelQuery = "", time.Now(), nil
}

// killQuery cancels the running query, if any.
func (s *Session) killQuery() {
	s.mu.Lock()
	cancel := s.cancelQuery
	s.mu.Unlock()
	if cancel != nil {
		cancel(ErrKilled)
	}
}

// killConnection cancels the running query and closes the connection.
func (s *Session) killConnection() {
	s.killQuery()
	s.mu.Lock()
	closeConn := s.closeConn
	s.mu.Unlock()
	if closeConn != nil {
		closeConn()
	}
}

// processInfo is a snapshot for SHOW PROCESSLIST.
type processInfo struct {
	id                   uint32
	user, host, database string
	query                string
	since                time.Time
}

func (s *Session) processInfo() processInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return processInfo{id: s.id, user: s.user, host: s.host, database: s.database, query: s.query, since: s.queryStarted}
}
