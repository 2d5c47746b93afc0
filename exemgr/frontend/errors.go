package frontend

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// MySQLError is implemented by errors that know the MySQL error they should reach the client
// as. Packages that must not import frontend (sql/, exec/) implement it on their own error
// types; the front end finds it anywhere in an error's chain with errors.As.
type MySQLError interface {
	error
	// MySQLError returns the error's MySQL code (e.g. 1146), its SQLSTATE (e.g. "42S02") and
	// the message the client shows.
	MySQLError() (code uint16, state, message string)
}

// MySQL error codes that colink produces. The SQLSTATE for each is MySQL's (see StateOf).
const (
	ErrConCount            uint16 = 1040 // too many connections
	ErrServerShutdown      uint16 = 1053 // the server is shutting down (ER_SERVER_SHUTDOWN)
	ErrAccessDenied        uint16 = 1045 // wrong user or password
	ErrHandshake           uint16 = 1043 // a malformed connection phase (ER_HANDSHAKE_ERROR)
	ErrNoDB                uint16 = 1046 // no database selected
	ErrUnknownCommand      uint16 = 1047 // unknown protocol command
	ErrBadDB               uint16 = 1049 // unknown database
	ErrTableExists         uint16 = 1050 // table or view already exists
	ErrBadField            uint16 = 1054 // unknown column
	ErrNonUniq             uint16 = 1052 // ambiguous column
	ErrParse               uint16 = 1064 // syntax error
	ErrEmptyQuery          uint16 = 1065 // query was empty
	ErrNoSuchThread        uint16 = 1094 // KILL of an unknown connection id
	ErrKillDenied          uint16 = 1095 // KILL of another user's connection
	ErrUnknownError        uint16 = 1105 // everything without a better code
	ErrUnknownTable        uint16 = 1109 // unknown table in a statement's clause
	ErrNoSuchTable         uint16 = 1146 // table doesn't exist
	ErrUnknownSystemVar    uint16 = 1193 // unknown system variable
	ErrNotSupportedYet     uint16 = 1235 // valid SQL colink does not support
	ErrQueryInterrupted    uint16 = 1317 // KILL QUERY, or the server shutting down
	ErrDivisionByZero      uint16 = 1365 // strict-mode division by zero
	ErrTruncatedWrongVal   uint16 = 1292 // bad date or number literal
	ErrDataOutOfRange      uint16 = 1690 // arithmetic overflow
	ErrQueryMemoryLimit    uint16 = 1041 // out of memory: a query over --query-memory
	ErrWrongArguments      uint16 = 1210 // incorrect arguments to a function
	ErrWrongValueForVar    uint16 = 1231 // SET to a value a variable cannot take
	ErrUnknownCollation    uint16 = 1273 // a collation colink does not compare by
	ErrUnknownCharacterSet uint16 = 1115 // a character set MySQL does not know
	ErrNetPacketTooLarge   uint16 = 1153 // a client packet over max_allowed_packet
	ErrOperandColumns      uint16 = 1241 // operand should contain N column(s)
	ErrSubqueryNo1Row      uint16 = 1242 // subquery returns more than 1 row
	ErrWrongFieldWithGrp   uint16 = 1055 // non-aggregated column not in GROUP BY
	ErrInvalidGroupFuncUs  uint16 = 1111 // invalid use of group function
)

// StateOf returns the SQLSTATE MySQL uses for code, or "HY000" when it has no specific one.
func StateOf(code uint16) string {
	if code == ErrQueryMemoryLimit {
		return "HY001" // ER_OUT_OF_RESOURCES's state: a memory allocation failed
	}
	if s, ok := mysql.MySQLState[code]; ok {
		return s
	}
	return "HY000"
}

// Error is a MySQL error: what the client receives as an ERR packet. It may wrap the error
// that caused it.
type Error struct {
	Code    uint16
	State   string // SQLSTATE, five characters; empty means StateOf(Code)
	Message string
	Err     error // the underlying cause, if any; not shown to the client
}

// Errorf returns an Error with code, MySQL's SQLSTATE for it, and a formatted message. A %w
// verb in format wraps its operand as the Error's cause.
func Errorf(code uint16, format string, args ...any) *Error {
	wrapped := fmt.Errorf(format, args...)
	return &Error{Code: code, State: StateOf(code), Message: wrapped.Error(), Err: errors.Unwrap(wrapped)}
}

func (e *Error) Error() string {
	return fmt.Sprintf("ERROR %d (%s): %s", e.Code, e.state(), e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// MySQLError implements MySQLError.
func (e *Error) MySQLError() (uint16, string, string) { return e.Code, e.state(), e.Message }

func (e *Error) state() string {
	if len(e.State) == 5 {
		return e.State
	}
	return StateOf(e.Code)
}

// Sentinel causes for a query context's cancellation (context.Cause).
var (
	// ErrKilled cancels a query's context on KILL QUERY or KILL CONNECTION.
	ErrKilled = errors.New("query killed")
	// ErrClientGone cancels a query's context when its client disconnects.
	ErrClientGone = errors.New("client disconnected")
	// ErrShutdown cancels every query's context when the server stops.
	ErrShutdown = errors.New("server shutting down")
)

// AsMySQL returns the MySQL code, SQLSTATE and message err reaches a client as: those of the
// first MySQLError in its chain; 1053 (server shutdown in progress) for a statement the
// shutdown cancelled; 1317 (query interrupted) for a context cancelled by KILL; 1105 (HY000) with err's text for anything else.
func AsMySQL(err error) (code uint16, state, message string) {
	var me MySQLError
	if errors.As(err, &me) {
		code, state, message = me.MySQLError()
		if len(state) != 5 {
			state = StateOf(code)
		}
		return code, state, message
	}
	if errors.Is(err, ErrShutdown) {
		return ErrServerShutdown, StateOf(ErrServerShutdown), "Server shutdown in progress"
	}
	if errors.Is(err, ErrKilled) || errors.Is(err, context.Canceled) {
		return ErrQueryInterrupted, StateOf(ErrQueryInterrupted), "Query execution was interrupted"
	}
	return ErrUnknownError, StateOf(ErrUnknownError), err.Error()
}
