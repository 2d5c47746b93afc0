package vec

import "fmt"

// Error is an execution error that carries the MySQL error number and SQLSTATE the front
// end should report, so that, e.g., "Subquery returns more than 1 row" reaches the client
// as error 1242.
type Error struct {
	Code     int    // MySQL error number
	SQLState string // five-character SQLSTATE
	Msg      string
	Err      error // an underlying sentinel, for errors.Is (may be nil)
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the underlying sentinel.
func (e *Error) Unwrap() error { return e.Err }

// MySQL error numbers used by the engine.
const (
	CodeOutOfRange        = 1690 // ER_DATA_OUT_OF_RANGE: "%s value is out of range in '%s'"
	CodeSubqueryRows      = 1242 // ER_SUBQUERY_NO_1_ROW
	CodeOutOfResources    = 1041 // ER_OUT_OF_RESOURCES: used for the query memory budget
	CodeTruncatedWrongVal = 1292 // ER_TRUNCATED_WRONG_VALUE: bad CAST input
	CodeUnknown           = 1105 // ER_UNKNOWN_ERROR
)

// OutOfRange reports an arithmetic overflow (MySQL 1690, SQLSTATE 22003).
func OutOfRange(typ string, what string) *Error {
	return &Error{Code: CodeOutOfRange, SQLState: "22003",
		Msg: fmt.Sprintf("%s value is out of range in '%s'", typ, what)}
}
