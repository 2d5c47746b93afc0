// Package sqlerr owns the error type that the SQL front end returns to clients: a MySQL error
// number, its SQLSTATE and a message naming the problem, worded as MySQL words it where
// practical. Every stage of package sql (parse, bind, optimise) returns these, so the MySQL
// front end can send them to the client as they are.
package sqlerr

import (
	"errors"
	"fmt"
)

// Code is a MySQL server error number.
type Code uint16

// The error numbers colink's SQL layer produces, with MySQL's names.
const (
	ErNoDBError             Code = 1046 // ER_NO_DB_ERROR
	ErBadDB                 Code = 1049 // ER_BAD_DB_ERROR
	ErNonUniqTable          Code = 1066 // ER_NONUNIQ_TABLE
	ErBadField              Code = 1054 // ER_BAD_FIELD_ERROR
	ErWrongFieldWithGroup   Code = 1055 // ER_WRONG_FIELD_WITH_GROUP
	ErWrongGroupField       Code = 1056 // ER_WRONG_GROUP_FIELD
	ErDupFieldName          Code = 1060 // ER_DUP_FIELDNAME
	ErParse                 Code = 1064 // ER_PARSE_ERROR
	ErEmptyQuery            Code = 1065 // ER_EMPTY_QUERY
	ErNonUniq               Code = 1052 // ER_NON_UNIQ_ERROR
	ErInvalidGroupFuncUse   Code = 1111 // ER_INVALID_GROUP_FUNC_USE
	ErWrongValueCountOnRow  Code = 1136 // ER_WRONG_VALUE_COUNT_ON_ROW
	ErNoSuchTable           Code = 1146 // ER_NO_SUCH_TABLE
	ErUnknownSystemVariable Code = 1193 // ER_UNKNOWN_SYSTEM_VARIABLE
	ErWrongArguments        Code = 1210 // ER_WRONG_ARGUMENTS
	ErWrongValueForVar      Code = 1231 // ER_WRONG_VALUE_FOR_VAR
	ErNotSupportedYet       Code = 1235 // ER_NOT_SUPPORTED_YET
	ErOperandColumns        Code = 1241 // ER_OPERAND_COLUMNS
	ErSubqueryNo1Row        Code = 1242 // ER_SUBQUERY_NO_1_ROW
	ErIllegalReference      Code = 1247 // ER_ILLEGAL_REFERENCE
	ErWrongObject           Code = 1347 // ER_WRONG_OBJECT
	ErViewWrongList         Code = 1353 // ER_VIEW_WRONG_LIST
	ErViewInvalid           Code = 1356 // ER_VIEW_INVALID
	ErViewRecursive         Code = 1462 // ER_VIEW_RECURSIVE
	ErSPDoesNotExist        Code = 1305 // ER_SP_DOES_NOT_EXIST
	ErTableExists           Code = 1050 // ER_TABLE_EXISTS_ERROR
	ErBadTable              Code = 1051 // ER_BAD_TABLE_ERROR
	ErWrongParamcountToFunc Code = 1582 // ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT
	ErTruncatedWrongValue   Code = 1292 // ER_TRUNCATED_WRONG_VALUE
	ErWrongValue            Code = 1525 // ER_WRONG_VALUE
	ErFieldNotInGroupBy     Code = 3065 // ER_FIELD_IN_ORDER_NOT_SELECT
	ErDataOutOfRange        Code = 1690 // ER_DATA_OUT_OF_RANGE
	ErTooBigPrecision       Code = 1426 // ER_TOO_BIG_PRECISION
	ErUnknown               Code = 1105 // ER_UNKNOWN_ERROR
)

// sqlState maps each code to its SQLSTATE; codes not listed use HY000.
func sqlState(c Code) string {
	switch c {
	case ErNoDBError:
		return "3D000"
	case ErBadDB, ErNonUniqTable, ErWrongFieldWithGroup, ErWrongGroupField, ErDupFieldName,
		ErParse, ErNonUniq, ErNotSupportedYet, ErWrongValueForVar, ErWrongParamcountToFunc, ErFieldNotInGroupBy, ErTooBigPrecision:
		return "42000"
	case ErBadField, ErIllegalReference:
		return "42S22"
	case ErNoSuchTable, ErBadTable:
		return "42S02"
	case ErTableExists:
		return "42S01"
	case ErEmptyQuery:
		return "42000"
	case ErInvalidGroupFuncUse:
		return "HY000"
	case ErWrongValueCountOnRow:
		return "21S01"
	case ErOperandColumns, ErSubqueryNo1Row:
		return "21000"
	case ErTruncatedWrongValue:
		return "22007"
	case ErDataOutOfRange:
		return "22003" // as MySQL and the executor's kernels (exec/vec.OutOfRange) send it
	}
	return "HY000"
}

// Error is an error to report to a MySQL client. Its message is complete on its own; an
// underlying cause, if any, is reachable with errors.Unwrap.
type Error struct {
	Code    Code
	State   string // SQLSTATE, five characters
	Message string
	cause   error
}

func (e *Error) Error() string { return fmt.Sprintf("ERROR %d (%s): %s", e.Code, e.State, e.Message) }

// Unwrap returns the cause, if one was recorded.
func (e *Error) Unwrap() error { return e.cause }

// New returns an error with the given code and a message formatted as fmt.Sprintf does.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, State: sqlState(code), Message: fmt.Sprintf(format, args...)}
}

// Wrap is New with a recorded cause.
func Wrap(cause error, code Code, format string, args ...any) *Error {
	e := New(code, format, args...)
	e.cause = cause
	return e
}

// As returns err as an *Error; an error of any other kind becomes code 1105 with err's text.
func As(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Wrap(err, ErUnknown, "%s", err.Error())
}

// Unsupported reports SQL that colink does not run (yet), MySQL's 1235.
func Unsupported(what string) *Error {
	return New(ErNotSupportedYet, "This version of colink doesn't yet support '%s'", what)
}

// NoSuchTable is MySQL's 1146 for db.name.
func NoSuchTable(db, name string) *Error {
	return New(ErNoSuchTable, "Table '%s.%s' doesn't exist", db, name)
}

// UnknownColumn is MySQL's 1054; clause is "field list", "where clause", "on clause",
// "group statement", "having clause" or "order clause".
func UnknownColumn(name, clause string) *Error {
	return New(ErBadField, "Unknown column '%s' in '%s'", name, clause)
}

// AmbiguousColumn is MySQL's 1052.
func AmbiguousColumn(name, clause string) *Error {
	return New(ErNonUniq, "Column '%s' in %s is ambiguous", name, clause)
}
