package exemgr

import (
	"context"
	"errors"
	"fmt"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/exemgr/frontend"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/sql/sqlerr"
)

// mysqlError turns an error from planning or running a statement into the MySQL error the
// client receives: the SQL layer's *sqlerr.Error and the engine's *vec.Error keep their codes
// (1041 for the query memory bound, 1690 for arithmetic overflow, …); a cancelled context is
// left as it is, so the front end reports a KILL as 1317; a primproc that cannot be reached
// is named; anything else is 1105 with its text.
func mysqlError(err error) error {
	if err == nil {
		return nil
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
	if errors.Is(err, ipc.ErrPeerDown) {
		return frontend.Errorf(frontend.ErrUnknownError, "a primproc is unreachable: %v", err)
	}
	return frontend.Errorf(frontend.ErrUnknownError, "%v", err)
}
