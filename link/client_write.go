package link

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/ipc"
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
func (c *Client) Write(ctx context.Context, args WriteArgs) (*WriteStream, error) {
	b, err := msgpack.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("write: encode args: %w", err)
	}
	st, err := c.link.Open(ctx, MethodWrite, b, false)
	if err != nil {
		return nil, c.wrap(MethodWrite, err)
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
	return w.c.wrap(MethodWrite, err)
}

// Rows is the number of rows sent so far.
func (w *WriteStream) Rows() int64 { return w.rows }

// Finish ends the upload with end (its Rows is filled in) and waits for the primproc to
// commit or prepare.
func (w *WriteStream) Finish(end WriteClientEnd) (*WriteEnd, error) {
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
		return nil, w.c.wrap(MethodWrite, err)
	}
	var we WriteEnd
	if err := msgpack.Unmarshal(raw, &we); err != nil {
		return nil, w.c.wrap(MethodWrite, fmt.Errorf("decode END: %w", err))
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
// (ResolveCommit, ResolveAbort, ResolveStatus).
func (c *Client) Resolve(ctx context.Context, txn, action string) (*ResolveEnd, error) {
	var end ResolveEnd
	if err := c.call(ctx, MethodResolve, ResolveArgs{Txn: txn, Action: action}, &end); err != nil {
		return nil, err
	}
	return &end, nil
}

// Pin holds the primproc's current snapshot for a query (see FragmentArgs.Pin).
func (c *Client) Pin(ctx context.Context, query string) (*PinEnd, error) {
	var end PinEnd
	if err := c.call(ctx, MethodPin, PinArgs{Query: query}, &end); err != nil {
		return nil, err
	}
	return &end, nil
}

// Unpin drops pins.
func (c *Client) Unpin(ctx context.Context, pins ...uint64) error {
	var end map[string]any
	return c.call(ctx, MethodUnpin, UnpinArgs{Pins: pins}, &end)
}

// IsConflict reports whether err is a primproc's conflict: the statement read rows that a
// concurrent change (a compaction) moved; running it again is the remedy.
func IsConflict(err error) bool {
	var re *ipc.RemoteError
	return errors.As(err, &re) && re.Code == CodeConflict
}

// IsNotDurable reports whether err is a primproc's commit that took effect (its rows are
// visible) but could not be made durable: a crash may still undo it. Running the statement
// again would apply it twice.
func IsNotDurable(err error) bool {
	var re *ipc.RemoteError
	return errors.As(err, &re) && re.Code == CodeNotDurable
}

// isRefusal reports whether err is the primproc's considered answer (an invalid argument)
// rather than a failure to reach it.
func IsRefusal(err error) bool {
	var re *ipc.RemoteError
	return errors.As(err, &re) && re.Code == ipc.CodeInvalidArgument
}
