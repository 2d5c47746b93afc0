package pmclient

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/primproc/wire"
)

// WriteStream uploads one statement's share of rows to insert (or row IDs to delete) to
// one primproc: Send batches, then Finish; Abort (or ctx) abandons it, leaving the table as
// it was.
type WriteStream struct {
	c    *Client
	st   *ipc.Stream
	rows int64
	done bool
}

// Write starts a write on the primproc.
func (c *Client) Write(ctx context.Context, args wire.WriteArgs) (*WriteStream, error) {
	b, err := msgpack.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("write: encode args: %w", err)
	}
	st, err := c.link.Open(ctx, wire.MethodWrite, b, false)
	if err != nil {
		return nil, c.wrap(wire.MethodWrite, err)
	}
	return &WriteStream{c: c, st: st}, nil
}

// Send uploads a batch; it waits for the link's credit. The caller keeps ownership of rec.
func (w *WriteStream) Send(rec arrow.RecordBatch) error {
	if err := w.st.Send(rec); err != nil {
		return w.err(err)
	}
	w.rows += rec.NumRows()
	return nil
}

func (w *WriteStream) err(err error) error {
	if errors.Is(err, ipc.ErrStreamClosed) {
		if _, rerr := drain(w.st); rerr != nil {
			err = rerr
		}
	}
	return w.c.wrap(wire.MethodWrite, err)
}

// Rows is the number of rows sent so far.
func (w *WriteStream) Rows() int64 { return w.rows }

// Finish ends the upload with end (its Rows is filled in) and waits for the primproc to
// commit or prepare.
func (w *WriteStream) Finish(end wire.WriteClientEnd) (*wire.WriteEnd, error) {
	defer w.close()
	rows := w.rows
	end.Rows = &rows
	b, err := msgpack.Marshal(end)
	if err != nil {
		return nil, err
	}
	if err := w.st.CloseSend(b); err != nil {
		return nil, w.err(err)
	}
	raw, err := drain(w.st)
	if err != nil {
		return nil, w.c.wrap(wire.MethodWrite, err)
	}
	var we wire.WriteEnd
	if err := msgpack.Unmarshal(raw, &we); err != nil {
		return nil, w.c.wrap(wire.MethodWrite, fmt.Errorf("decode END: %w", err))
	}
	return &we, nil
}

// Abort abandons the write (a no-op after Finish).
func (w *WriteStream) Abort(reason string) {
	if !w.done {
		w.st.Cancel(reason)
		w.close()
	}
}

func (w *WriteStream) close() {
	w.done = true
	w.st.Close()
}

// Resolve commits or aborts a prepared transaction on the primproc, or asks its state
// (wire.ResolveCommit, ResolveAbort, ResolveStatus).
func (c *Client) Resolve(ctx context.Context, txn, action string) (*wire.ResolveEnd, error) {
	var end wire.ResolveEnd
	if err := c.call(ctx, wire.MethodResolve, wire.ResolveArgs{Txn: txn, Action: action}, &end); err != nil {
		return nil, err
	}
	return &end, nil
}

// Pin holds the primproc's current snapshot for a query (see wire.FragmentArgs.Pin).
func (c *Client) Pin(ctx context.Context, query string) (*wire.PinEnd, error) {
	var end wire.PinEnd
	if err := c.call(ctx, wire.MethodPin, wire.PinArgs{Query: query}, &end); err != nil {
		return nil, err
	}
	return &end, nil
}

// Unpin drops pins.
func (c *Client) Unpin(ctx context.Context, pins ...uint64) error {
	var end map[string]any
	return c.call(ctx, wire.MethodUnpin, wire.UnpinArgs{Pins: pins}, &end)
}

// IsConflict reports whether err is a primproc's conflict: the statement read rows that a
// concurrent change (a compaction) moved; running it again is the remedy.
func IsConflict(err error) bool {
	var re *ipc.RemoteError
	return errors.As(err, &re) && re.Code == wire.CodeConflict
}

// IsNotDurable reports whether err is a primproc's commit that took effect (its rows are
// visible) but could not be made durable: a crash may still undo it. Running the statement
// again would apply it twice.
func IsNotDurable(err error) bool {
	var re *ipc.RemoteError
	return errors.As(err, &re) && re.Code == wire.CodeNotDurable
}

// isRefusal reports whether err is the primproc's considered answer (an invalid argument)
// rather than a failure to reach it.
func isRefusal(err error) bool {
	var re *ipc.RemoteError
	return errors.As(err, &re) && re.Code == ipc.CodeInvalidArgument
}
