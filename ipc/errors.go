package ipc

import (
	"errors"
	"fmt"
)

// Error codes carried by ERROR frames. They are strings on the wire so a second
// implementation and a log reader see the same words.
const (
	CodeCanceled         = "canceled"          // the stream was canceled
	CodeDeadlineExceeded = "deadline_exceeded" // the request's deadline passed
	CodeUnknownMethod    = "unknown_method"    // no handler is registered for the method
	CodeInvalidArgument  = "invalid_argument"  // the request's args are unusable
	CodeUnavailable      = "unavailable"       // the server is shutting down
	CodeTooManyStreams   = "too_many_streams"  // the connection's stream limit is reached
	CodeInternal         = "internal"          // the handler failed
	CodeProtocol         = "protocol"          // the peer broke the protocol; the connection closes
	CodeAuth             = "auth"              // authentication failed; the connection closes
	CodeVersion          = "version"           // unsupported protocol version; the connection closes
)

// RemoteError is an error the peer reported in an ERROR frame.
type RemoteError struct {
	Code    string
	Message string
}

func (e *RemoteError) Error() string { return "remote error " + e.Code + ": " + e.Message }

// Errorf returns an error that a handler can return to send the given code to the client.
func Errorf(code, format string, args ...any) error {
	return &RemoteError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Sentinel errors wrapped by the errors streams and connections return.
var (
	// ErrConnClosed: the connection the stream ran on is gone.
	ErrConnClosed = errors.New("link connection closed")
	// ErrPeerSilent: the heartbeat found the peer unresponsive.
	ErrPeerSilent = errors.New("peer unresponsive (heartbeat timeout)")
	// ErrCanceled: the stream was canceled by this side.
	ErrCanceled = errors.New("stream canceled")
	// ErrRemoteCanceled: the peer canceled the stream.
	ErrRemoteCanceled = errors.New("stream canceled by peer")
	// ErrStreamClosed: the operation is not allowed in the stream's state (e.g. sending after END).
	ErrStreamClosed = errors.New("stream closed")
	// ErrFrameTooLarge: a message exceeds the peer's maximum frame size.
	ErrFrameTooLarge = errors.New("message exceeds the peer's maximum frame size")
	// ErrAuth: the handshake's authentication failed.
	ErrAuth = errors.New("authentication failed")
	// ErrTooManyStreams: opening the stream would exceed this side's stream limit
	// (Limits.DataStreams).
	ErrTooManyStreams = errors.New("too many streams on the connection")
	// ErrPeerDown: the client has no live connection to its peer.
	ErrPeerDown = errors.New("peer down")
	// ErrNotSent: the request (Client.Call) or the END (Stream.CloseSend) never left this
	// side, so the peer cannot have acted on it. Errors wrap it beside their cause only
	// when that is certain; any other failure of those calls may follow a peer that acted.
	ErrNotSent = errors.New("not sent")
	// errDialStalled is wrapped by the error of a dial whose handshake failed while this
	// process did not run: its Client redials at once and does not count the failure, as
	// a request waiting for a connection would otherwise fail on a peer that is up.
	errDialStalled = errors.New("this process did not run during the handshake")
)

// notSentError marks err as certainly not sent (ErrNotSent) without changing its text.
type notSentError struct{ err error }

func (e *notSentError) Error() string   { return e.err.Error() }
func (e *notSentError) Unwrap() []error { return []error{e.err, ErrNotSent} }

// notSent wraps err (not nil) so that errors.Is(err, ErrNotSent) holds.
func notSent(err error) error {
	if errors.Is(err, ErrNotSent) {
		return err
	}
	return &notSentError{err: err}
}

// errorCode maps an error a handler returned to the code sent on the wire.
func errorCode(err error) (code, msg string) {
	var re *RemoteError
	switch {
	case errors.As(err, &re):
		return re.Code, re.Message
	case errors.Is(err, ErrRemoteCanceled), errors.Is(err, ErrCanceled), errors.Is(err, errContextCanceled):
		return CodeCanceled, err.Error()
	case errors.Is(err, errDeadlineExceeded):
		return CodeDeadlineExceeded, err.Error()
	}
	return CodeInternal, err.Error()
}
