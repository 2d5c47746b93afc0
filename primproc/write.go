package primproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/internal/rusage"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/storage"
)

// metaDecider is the key of a prepared transaction's meta naming the store that decides
// its outcome.
const metaDecider = "decider"

// write runs one statement's share of an INSERT or DELETE on this primproc through one
// storage transaction: the client uploads the rows to insert (or the row IDs to delete), and
// its END says whether to commit at once or to prepare the transaction for a two-phase
// commit (then resolve applies the outcome). Anything that goes wrong before — a rejected
// batch, the client canceling or vanishing, the process dying — leaves the table as it was.
func (d *Daemon) write(ctx context.Context, st *ipc.Stream) error {
	start := time.Now()
	ru0, _ := rusage.Self()
	var a link.WriteArgs
	if err := st.DecodeArgs(&a); err != nil {
		return err
	}
	if a.Table == "" {
		return invalidf("write", "no table named")
	}
	if a.Member < 0 || a.Member > 255 {
		return invalidf("write", "member %d outside 0..255", a.Member)
	}
	tx := d.store.Begin()
	committed := false
	defer func() {
		if !committed {
			tx.Abort()
		}
	}()
	end := link.WriteEnd{Table: a.Table, Op: a.Op, Txn: a.Txn}
	var err error
	switch a.Op {
	case link.OpInsert:
		err = d.receiveInsert(ctx, st, tx, &a, &end)
	case link.OpDelete:
		err = d.receiveDelete(st, tx, &a, &end)
	default:
		return invalidf("write", "table %s: op %q: want insert or delete", a.Table, a.Op)
	}
	if err != nil {
		return err
	}
	var ce link.WriteClientEnd
	if raw := st.End(); len(raw) > 0 {
		if err := msgpack.Unmarshal(raw, &ce); err != nil {
			return invalidf("write", "table %s: the client's END is not a write end (%v)", a.Table, err)
		}
	}
	if ce.Rows != nil && *ce.Rows != end.Rows {
		return invalidf("write", "table %s: the client says it sent %d rows, %d arrived", a.Table, *ce.Rows, end.Rows)
	}
	commitStart := time.Now()
	if ce.Commit {
		if err := tx.Commit(ctx); err != nil {
			if errors.Is(err, storage.ErrNotDurable) {
				d.compactSoon(a.Table) // applied, as after a commit (and as resolve does)
			}
			return d.writeError(a.Table, "commit", err)
		}
		end.State = link.TxnCommitted
		d.crashAt(crashWriteCommitted)
	} else {
		if a.Txn == "" {
			return invalidf("write", "table %s: no transaction ID to prepare under (or END commit)", a.Table)
		}
		res, err := tx.Prepare(ctx, a.Txn, map[string]string{metaDecider: ce.Decider})
		if err != nil {
			return d.writeError(a.Table, "prepare", err)
		}
		end.State = link.TxnPrepared
		d.crashAt(crashWritePrepared)
		if a.Op == link.OpDelete {
			end.Affected = res.Deleted // against the version it was prepared on
		}
	}
	committed = true
	end.CommitNs = int64(time.Since(commitStart))
	snap := d.store.Snapshot()
	end.Version = snap.Version()
	snap.Release()
	end.ElapsedNs = int64(time.Since(start))
	if ru1, err := rusage.Self(); err == nil {
		end.Rusage = ru1.Sub(ru0).Map()
		delete(end.Rusage, "maxrss_kib")
	}
	d.log.Debug("primproc: write", "table", a.Table, "op", a.Op, "txn", a.Txn, "state", end.State,
		"rows", end.Rows, "affected", end.Affected, "elapsed", time.Since(start))
	if end.State == link.TxnCommitted {
		d.compactSoon(a.Table)
	}
	b, err := msgpack.Marshal(&end)
	if err != nil {
		return ipc.Errorf(ipc.CodeInternal, "write: %v", err)
	}
	return st.CloseSend(b)
}

// writeError turns a storage failure of a write's prepare or commit into the link error.
func (d *Daemon) writeError(table, phase string, err error) error {
	switch {
	case errors.Is(err, storage.ErrNotDurable) && phase == "commit":
		return notDurable(d.cfg.DataDir, fmt.Sprintf("write: table %s: commit", table), err)
	case errors.Is(err, storage.ErrNotDurable):
		// Prepared, but a crash may forget it: not applied, so a plain failure (the
		// coordinator aborts, which a store that forgot the prepare records too).
		return ipc.Errorf(ipc.CodeInternal, "write: table %s: %s not durable: fsync of %s failed: %v", table, phase, d.cfg.DataDir, fsyncCause(err))
	case errors.Is(err, storage.ErrConflict):
		return ipc.Errorf(link.CodeConflict, "write: table %s: %s: %v", table, phase, trimStorage(err))
	case errors.Is(err, storage.ErrTxnExists), errors.Is(err, storage.ErrNoTable):
		return invalidf("write", "table %s: %s: %v", table, phase, trimStorage(err))
	}
	return ipc.Errorf(ipc.CodeInternal, "write: table %s: %s: %v", table, phase, err)
}

// notDurable is the link error of a commit that storage applied but could not make durable
// (err wraps storage.ErrNotDurable): the rows are visible, yet a crash before a later fsync
// of dir succeeds may undo them. what names the operation.
func notDurable(dir, what string, err error) error {
	return ipc.Errorf(link.CodeNotDurable, "%s: applied but not durable: fsync of %s failed: %v; a crash may undo it", what, dir, fsyncCause(err))
}

// fsyncCause digs the failed fsync's own error out of storage's not-durable error (which
// joins storage.ErrNotDurable and it): the innermost cause, without the path that
// notDurable names anyway.
func fsyncCause(err error) error {
	cause := err
	for e := err; e != nil; {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				if x != storage.ErrNotDurable {
					cause = x
				}
			}
			break
		}
		e = errors.Unwrap(e)
	}
	for {
		var pe *os.PathError
		if errors.As(cause, &pe) {
			return pe.Err
		}
		next := errors.Unwrap(cause)
		if next == nil {
			return cause
		}
		cause = next
	}
}

// receiveInsert writes the uploaded rows as new segments of the table.
func (d *Daemon) receiveInsert(ctx context.Context, st *ipc.Stream, tx *storage.Txn, a *link.WriteArgs, end *link.WriteEnd) error {
	w, err := tx.Append(a.Table)
	if err != nil {
		if errors.Is(err, storage.ErrNoTable) {
			return invalidf("write", "insert into table %s: the table does not exist", a.Table)
		}
		return invalidf("write", "insert into table %s: %v", a.Table, trimStorage(err))
	}
	snap := d.store.Snapshot()
	ti, err := snap.Table(a.Table)
	snap.Release()
	if err != nil {
		return invalidf("write", "insert into table %s: the table does not exist", a.Table)
	}
	batches := 0
	for {
		rec, err := st.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		batches++
		if err := matchRecord(ti.Schema, rec); err != nil {
			rec.Release()
			return invalidf("write", "insert into table %s, batch %d: %v", a.Table, batches, err)
		}
		end.Rows += rec.NumRows()
		err = w.Write(ctx, rec)
		rec.Release()
		if err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return ipc.Errorf(ipc.CodeInternal, "write: insert into table %s: %v", a.Table, err)
		}
		end.Affected = end.Rows
	}
}

// receiveDelete marks the rows of the uploaded row IDs deleted.
func (d *Daemon) receiveDelete(st *ipc.Stream, tx *storage.Txn, a *link.WriteArgs, end *link.WriteEnd) error {
	bySeg := map[uint64][]int64{}
	batches := 0
	for {
		rec, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		batches++
		ids, err := rowIDs(rec)
		if err == nil {
			err = storage.GroupRowIDs(ids, uint8(a.Member), bySeg)
		}
		end.Rows += rec.NumRows()
		rec.Release()
		if err != nil {
			return invalidf("write", "delete from table %s, batch %d: %v", a.Table, batches, trimStorage(err))
		}
	}
	for seg, rows := range bySeg {
		if err := tx.Delete(a.Table, seg, rows); err != nil {
			switch {
			case errors.Is(err, storage.ErrNoTable):
				return invalidf("write", "delete from table %s: the table does not exist", a.Table)
			case errors.Is(err, storage.ErrCorrupt):
				return ipc.Errorf(ipc.CodeInternal, "write: delete from table %s: %v", a.Table, err)
			}
			// A segment the statement read is gone: compacted since.
			return ipc.Errorf(link.CodeConflict, "write: delete from table %s: %v", a.Table, trimStorage(err))
		}
	}
	end.Affected = tx.Deleted()
	return nil
}

// rowIDs returns the row IDs of a delete's upload batch: one non-null BIGINT column.
func rowIDs(rec arrow.RecordBatch) ([]int64, error) {
	if rec.NumCols() != 1 {
		return nil, fmt.Errorf("a delete uploads one column of row IDs, the batch has %d", rec.NumCols())
	}
	col, ok := rec.Column(0).(*array.Int64)
	if !ok {
		return nil, fmt.Errorf("row IDs are BIGINT, the batch has %s", rec.Column(0).DataType())
	}
	if col.NullN() > 0 {
		return nil, fmt.Errorf("%d of the row IDs are NULL", col.NullN())
	}
	return col.Int64Values(), nil
}

// resolve applies a prepared transaction's outcome, or reports what is known of it.
func (d *Daemon) resolve(ctx context.Context, st *ipc.Stream) error {
	var a link.ResolveArgs
	if err := st.DecodeArgs(&a); err != nil {
		return err
	}
	if a.Txn == "" {
		return invalidf("resolve", "no transaction named")
	}
	end := link.ResolveEnd{Txn: a.Txn}
	switch a.Action {
	case link.ResolveCommit:
		tables := d.preparedTables(a.Txn)
		v, err := d.store.CommitPrepared(ctx, a.Txn)
		switch {
		case errors.Is(err, storage.ErrTxnAborted), errors.Is(err, storage.ErrTxnUnknown):
			return invalidf("resolve", "commit of %s: %v", a.Txn, trimStorage(err))
		case errors.Is(err, storage.ErrNotDurable):
			for _, t := range tables {
				d.compactSoon(t)
			}
			return notDurable(d.cfg.DataDir, "resolve: commit of "+a.Txn, err)
		case err != nil:
			return ipc.Errorf(ipc.CodeInternal, "resolve: commit of %s: %v", a.Txn, err)
		}
		end.Version = v
		d.crashAt(crashResolveCommitted)
		for _, t := range tables {
			d.compactSoon(t)
		}
	case link.ResolveAbort:
		if err := d.store.AbortPrepared(a.Txn); err != nil {
			if errors.Is(err, storage.ErrTxnCommitted) {
				return invalidf("resolve", "abort of %s: %v", a.Txn, trimStorage(err))
			}
			return ipc.Errorf(ipc.CodeInternal, "resolve: abort of %s: %v", a.Txn, err)
		}
	case link.ResolveStatus:
	default:
		return invalidf("resolve", "action %q: want commit, abort or status", a.Action)
	}
	state, err := settledState(d.store, a.Txn)
	if err != nil {
		return notDurable(d.cfg.DataDir, "resolve: "+a.Action+" of "+a.Txn+": its outcome is decided here", err)
	}
	end.State = string(state)
	if end.Version == 0 {
		snap := d.store.Snapshot()
		end.Version = snap.Version()
		snap.Release()
	}
	if a.Action != link.ResolveStatus {
		d.log.Debug("primproc: resolved", "txn", a.Txn, "action", a.Action, "state", end.State)
	}
	b, err := msgpack.Marshal(&end)
	if err != nil {
		return ipc.Errorf(ipc.CodeInternal, "resolve: %v", err)
	}
	return st.CloseSend(b)
}

// txnStates is what settledState needs of a store.
type txnStates interface {
	TxnState(id string) storage.TxnState
	Settle() error
}

// settledState returns the state of transaction id, making its outcome durable first if it
// is in doubt (storage holds it back until then): a coordinator told "committed" commits the
// other primprocs, so the answer must hold across a crash here. The error (settling failed)
// wraps storage.ErrNotDurable.
func settledState(st txnStates, id string) (storage.TxnState, error) {
	state := st.TxnState(id)
	if state != storage.TxnInDoubt {
		return state, nil
	}
	if err := st.Settle(); err != nil {
		return state, err
	}
	return st.TxnState(id), nil
}

// preparedTables lists the tables prepared transaction id writes.
func (d *Daemon) preparedTables(id string) []string {
	snap := d.store.Snapshot()
	defer snap.Release()
	for _, p := range snap.Prepared() {
		if p.ID == id {
			return p.Tables
		}
	}
	return nil
}

// compactSoon has the background compactor look at table: small segments from inserts and
// rows left by deletes are rewritten once the store's policy says so (storage.Compact).
func (d *Daemon) compactSoon(table string) {
	if d.cfg.NoCompaction {
		return
	}
	d.compactMu.Lock()
	defer d.compactMu.Unlock()
	if d.compactStopped {
		return
	}
	d.compactDue[table] = true
	if d.compacting {
		return
	}
	d.compacting = true
	d.compactWG.Add(1)
	go d.compactLoop()
}

// compactLoop compacts the tables marked due, one at a time, until none is left.
func (d *Daemon) compactLoop() {
	defer d.compactWG.Done()
	for {
		d.compactMu.Lock()
		var table string
		for t := range d.compactDue {
			table = t
			break
		}
		if table == "" || d.compactStopped {
			d.compacting = false
			d.compactMu.Unlock()
			return
		}
		delete(d.compactDue, table)
		d.compactMu.Unlock()
		d.compact(table)
	}
}

// compact compacts one table if the policy asks for it, trying again a few times when a
// concurrent write conflicts.
func (d *Daemon) compact(table string) {
	for attempt := 0; attempt < 3; attempt++ {
		if d.bg.Err() != nil || !d.store.NeedsCompaction(table, d.cfg.Compaction) {
			return
		}
		start := time.Now()
		res, err := d.store.Compact(d.bg, table, d.cfg.Compaction)
		if err == nil {
			d.compactions.Add(1)
			d.log.Info("primproc: compacted", "table", table, "segments_in", res.SegmentsIn, "segments_out", res.SegmentsOut,
				"rows_kept", res.RowsKept, "rows_dropped", res.RowsDropped, "version", res.Version, "elapsed", time.Since(start).Round(time.Millisecond))
			continue // the policy may want another round (e.g. deletes elsewhere)
		}
		if !errors.Is(err, storage.ErrConflict) {
			if d.bg.Err() == nil {
				d.log.Warn("primproc: compaction failed", "table", table, "err", err)
			}
			return
		}
		select {
		case <-d.bg.Done():
			return
		case <-time.After(time.Duration(50*(attempt+1)) * time.Millisecond):
		}
	}
}

// addMissingSketches gives the segments of a store written before distinct-value sketches
// were kept their sketches, in the background (the planner's statistics need them).
func (d *Daemon) addMissingSketches() {
	defer d.compactWG.Done()
	start := time.Now()
	res, err := d.store.AddMissingSketches(d.bg)
	switch {
	case err != nil && d.bg.Err() == nil:
		d.log.Warn("primproc: computing missing distinct-value sketches failed", "err", err)
	case err == nil && res.Segments > 0:
		d.log.Info("primproc: computed missing distinct-value sketches", "segments", res.Segments, "rows", res.Rows,
			"version", res.Version, "elapsed", time.Since(start).Round(time.Millisecond))
	}
}

// stopCompaction stops the background compactor and waits for it.
func (d *Daemon) stopCompaction() {
	d.compactMu.Lock()
	d.compactStopped = true
	d.compactMu.Unlock()
	d.bgCancel()
	d.compactWG.Wait()
}
