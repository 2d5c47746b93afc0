package exemgr

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/exemgr/frontend"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/link/twophase"
	"github.com/colinkdb/colink/sql/sqlerr"
)

// ErrErrorDuringCommit is MySQL's ER_ERROR_DURING_COMMIT, which colink returns for a write
// a primproc applied but could not make durable.
const ErrErrorDuringCommit uint16 = 1180

// ErrOutcomeUnknown is the code of a write whose commit request may have reached a primproc
// that did not answer (the connection was lost): it may or may not have been applied.
// MySQL has no code for exactly this; 1397 is its ER_XAER_RMERR ("Fatal error occurred in
// the transaction branch - check your data for consistency", SQLSTATE XAE03), which says
// what the client must do: look before running the statement again. A client can tell it
// from 1105 (a failure that applied nothing), from 1180 (applied, maybe not durable) and from
// 1317 (interrupted); drivers do not retry it of their own accord, as they may a lost
// connection (2013).
const ErrOutcomeUnknown uint16 = 1397

// stateOutcomeUnknown is ER_XAER_RMERR's SQLSTATE.
const stateOutcomeUnknown = "XAE03"

// ErrErrorOnWrite is MySQL's ER_ERROR_ON_WRITE, which CREATE and DROP VIEW return when the
// views file of exemgr's data directory cannot be written.
const ErrErrorOnWrite uint16 = 1026

// viewWriteError is the client's error for a CREATE or DROP VIEW whose views file could not
// be written: the statement was not applied, so the views are as they were.
func viewWriteError(err error) error {
	return frontend.Errorf(ErrErrorOnWrite, "Error writing file: %v; the statement was not applied and the views are unchanged", err)
}

// notDurableMessage is the client's text for a not-durable commit: the coordinator's context
// and the primproc's own message (without the link's "remote error not_durable" wrapping).
func notDurableMessage(err error) string {
	var re *ipc.RemoteError
	if !errors.As(err, &re) {
		return err.Error()
	}
	return strings.Replace(err.Error(), re.Error(), re.Message, 1)
}

// mysqlError turns an error from planning or running a statement into the MySQL error the
// client receives: the SQL layer's *sqlerr.Error and the engine's *vec.Error keep their codes
// (1041 for the query memory bound, 1690 for arithmetic overflow, …); a cancelled context is
// left as it is, so the front end reports a KILL as 1317; a primproc that cannot be reached
// is named; a commit applied but not durable is 1180; a commit of unknown outcome is 1397;
// anything else is 1105 with its text.
func mysqlError(err error) error {
	if err == nil {
		return nil
	}
	// First: the commit's cause may be a cancellation (a KILL whose grace ran out), which
	// must not read as an interrupted statement that applied nothing.
	var ue *twophase.OutcomeUnknownError
	if errors.As(err, &ue) {
		return &frontend.Error{Code: ErrOutcomeUnknown, State: stateOutcomeUnknown, Message: ue.Error(), Err: err}
	}
	var me frontend.MySQLError
	if errors.As(err, &me) {
		return err
	}
	var se *sqlerr.Error
	if errors.As(err, &se) {
		return &frontend.Error{Code: uint16(se.Code), State: se.State, Message: se.Message, Err: err}
	}
	var ve *vec.Error
	if errors.As(err, &ve) {
		msg := ve.Msg
		if errors.Is(err, exec.ErrMemoryLimit) {
			msg = fmt.Sprintf("%s (raise exemgr's --query-memory, or the session's colink_query_memory up to it)", msg)
		}
		return &frontend.Error{Code: uint16(ve.Code), State: ve.SQLState, Message: msg, Err: err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, frontend.ErrKilled) || errors.Is(err, frontend.ErrShutdown) || errors.Is(err, frontend.ErrClientGone) {
		return err
	}
	if link.IsNotDurable(err) {
		// ER_ERROR_DURING_COMMIT: the storage engine failed at COMMIT. The message says the
		// change is nevertheless applied, so the client must not simply run it again.
		return frontend.Errorf(ErrErrorDuringCommit, "Got error during COMMIT: %v", notDurableMessage(err))
	}
	if errors.Is(err, ipc.ErrPeerDown) {
		return frontend.Errorf(frontend.ErrUnknownError, "a primproc is unreachable: %v", err)
	}
	return frontend.Errorf(frontend.ErrUnknownError, "%v", err)
}
