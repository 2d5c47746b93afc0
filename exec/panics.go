package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/colinkdb/colink/exec/vec"
)

// ErrInternal is the sentinel of errors made from a panic inside the engine
// (errors.Is(err, ErrInternal)); the error itself is a *vec.Error with MySQL code 1105.
// Such a panic is a bug: it fails its query, never the daemon.
var ErrInternal = errors.New("internal error")

type loggerKey struct{}

// ContextWithLogger returns ctx carrying log, the logger the engine reports internal
// errors (with their stacks) to. Without one they go to slog.Default().
func ContextWithLogger(ctx context.Context, log *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, log)
}

func loggerFrom(ctx context.Context) *slog.Logger {
	if ctx != nil {
		if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok && l != nil {
			return l
		}
	}
	return slog.Default()
}

// internalError is the error a recovered panic value r in operator op becomes: short,
// without the stack (it may reach a SQL client), which goes to the log instead.
func internalError(ctx context.Context, op string, r any, stack []byte) error {
	loggerFrom(ctx).Error("exec: internal error", "operator", op, "panic", r, "stack", string(stack))
	return &vec.Error{Code: vec.CodeUnknown, SQLState: "HY000", Err: ErrInternal,
		Msg: fmt.Sprintf("internal error in %s: %v", op, r)}
}

// RecoverTo is deferred by every goroutine the engine starts (a panic there would end
// the process): it turns a panic into *err, error 1105 "internal error in op: …" wrapping
// ErrInternal, and logs the stack to ctx's logger (ContextWithLogger).
func RecoverTo(ctx context.Context, op string, err *error) {
	if r := recover(); r != nil {
		*err = internalError(ctx, op, r, debug.Stack())
	}
}
