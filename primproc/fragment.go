package primproc

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/rusage"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/primproc/fragment"
	"github.com/colinkdb/colink/storage"
)

// fragment runs an exec.Fragment over this primproc's share of a table: it receives the
// join build sides the client uploads on the stream, runs the fragment on a pinned snapshot
// with the configured workers and memory bound, streams the output records, and ends with
// the fragment's counters. Canceling the stream stops the workers.
func (d *Daemon) fragment(ctx context.Context, st *ipc.Stream) error {
	start := time.Now()
	ru0, _ := rusage.Self()
	var a link.FragmentArgs
	if err := st.DecodeArgs(&a); err != nil {
		return err
	}
	f := &a.Fragment
	// The fragment is validated here, once: everything past the door takes the result.
	valid, err := f.Validate()
	if err != nil {
		return invalidf("fragment", "%v", err)
	}
	limit := d.cfg.QueryMemory
	if a.MemoryLimit > 0 && (limit == 0 || a.MemoryLimit < limit) {
		limit = a.MemoryLimit
	}
	threads := d.cfg.Threads
	if a.Threads > 0 && a.Threads < threads {
		threads = a.Threads
	}

	if a.Member < 0 || a.Member > 255 {
		return invalidf("fragment", "member %d outside 0..255", a.Member)
	}
	var snap *storage.Snapshot
	if a.Pin != 0 {
		var ok bool
		if snap, ok = d.pins.acquire(a.Pin, time.Now()); !ok {
			return invalidf("fragment", "snapshot pin %d is unknown (unpinned, or unused for longer than %s)", a.Pin, d.pins.ttl)
		}
		defer d.pins.release(a.Pin, time.Now())
	} else {
		snap = d.store.Snapshot()
		defer snap.Release()
	}
	if err := checkScan(snap, &f.Scan); err != nil {
		return err
	}

	var fl link.FragmentLink
	// The fragment's budget draws on the daemon's, which all queries share; the build
	// sides it holds are charged to it first.
	budget := d.budget.Child(limit, d.pool)
	buildAcct := budget.NewAccount("the build sides")
	defer buildAcct.Close()
	builds, _, err := receiveBuilds(st, f, buildAcct, &fl)
	defer func() {
		for _, side := range builds {
			for _, r := range side {
				r.Release()
			}
		}
	}()
	if err != nil {
		return err
	}
	fl.BuildBytes = st.Stats().BytesIn

	ctx = exec.ContextWithLogger(ctx, d.log) // a worker panic fails this fragment; its stack goes to primproc's log
	fs, err := fragment.Run(ctx, snap, nil, valid, builds, fragment.Options{Threads: threads, Budget: budget, RowIDTag: uint8(a.Member), Pool: d.pool})
	if err != nil {
		return fragmentError(ctx, err)
	}
	defer fs.Close()
	if err := st.SendSchema(fs.Schema()); err != nil {
		return err
	}
	for {
		rec, err := fs.Next(ctx)
		if err != nil {
			return fragmentError(ctx, err)
		}
		if rec == nil {
			break
		}
		err = st.Send(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	end := link.FragmentEnd{Stats: fs.Stats(), Version: snap.Version()}
	end.Stats.WallNanos = int64(time.Since(start))
	ls := st.Stats()
	fl.BatchesSent, fl.BytesSent, fl.CreditStallNs = ls.BatchesOut, ls.BytesOut, int64(ls.CreditStall)
	end.Link = fl
	if ru1, err := rusage.Self(); err == nil {
		end.Rusage = ru1.Sub(ru0).Map()
		delete(end.Rusage, "maxrss_kib")
	}
	if a.Query != "" {
		d.log.Debug("primproc: fragment done", "query", a.Query, "rows", end.Stats.RowsProduced,
			"row_groups_eliminated", end.Stats.RowGroupsEliminated, "wall", time.Since(start))
	}
	b, err := msgpack.Marshal(&end)
	if err != nil {
		return ipc.Errorf(ipc.CodeInternal, "fragment: %v", err)
	}
	return st.CloseSend(b)
}

// checkScan checks the fragment's scan against the snapshot's table, so that an unknown
// table or column, or a column read as the wrong type, is an invalid argument naming it.
func checkScan(snap *storage.Snapshot, sc *exec.Scan) error {
	ti, err := snap.Table(sc.Table)
	if err != nil {
		if errors.Is(err, storage.ErrNoTable) {
			return invalidf("fragment", "unknown table %q", sc.Table)
		}
		return ipc.Errorf(ipc.CodeInternal, "fragment: %v", err)
	}
	for i, name := range sc.Columns {
		if name == storage.RowIDColumn {
			if sc.Types[i] != vec.Int64Type {
				return invalidf("fragment", "the row ID column %s is BIGINT, the fragment reads it as %s", name, sc.Types[i])
			}
			continue
		}
		idx := ti.Schema.FieldIndices(name)
		if len(idx) != 1 {
			return invalidf("fragment", "table %s has no column %q (columns: %s)", sc.Table, name, columnNames(ti.Schema))
		}
		f := ti.Schema.Field(idx[0])
		t, err := vec.FromArrow(f.Type)
		if err != nil {
			return invalidf("fragment", "column %s.%s has type %s, which the engine cannot read", sc.Table, name, f.Type)
		}
		if t != sc.Types[i] {
			return invalidf("fragment", "type mismatch: column %s.%s is %s (%s), the fragment reads it as %s", sc.Table, name, t, vec.SQLTypeOf(f), sc.Types[i])
		}
	}
	return nil
}

// receiveBuilds reads the client's half: the build sides, in the encoding of
// link.BuildEncoder. The records it returns reference the link's receive buffers; the
// caller releases them. Their bytes count against limit.
func receiveBuilds(st *ipc.Stream, f *exec.Fragment, acct *exec.Account, fl *link.FragmentLink) ([][]arrow.RecordBatch, int64, error) {
	types := make([][]vec.Type, len(f.Builds))
	for i, b := range f.Builds {
		types[i] = b.Types
	}
	builds := make([][]arrow.RecordBatch, len(f.Builds))
	var bytes int64
	for {
		rec, err := st.Recv()
		if err == io.EOF {
			return builds, bytes, nil
		}
		if err != nil {
			return builds, bytes, err
		}
		if len(f.Builds) == 0 {
			rec.Release()
			return builds, bytes, invalidf("fragment", "the client uploaded batches, but the fragment declares no build sides")
		}
		err = link.DecodeBuildUpload(rec, types, func(side int, part arrow.RecordBatch) error {
			part.Retain()
			builds[side] = append(builds[side], part)
			fl.BuildRows += part.NumRows()
			fl.BuildBatches++
			bytes += vec.RecordBytes(part)
			if err := acct.Resize(bytes); err != nil {
				var ve *vec.Error
				if errors.As(err, &ve) {
					return link.SQLError(ve)
				}
				return err
			}
			return nil
		})
		rec.Release()
		if err != nil {
			var re *ipc.RemoteError
			if errors.As(err, &re) {
				return builds, bytes, err
			}
			return builds, bytes, invalidf("fragment", "%v", err)
		}
	}
}

// fragmentError turns an error from running a fragment into the link error to send.
func fragmentError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var ve *vec.Error
	if errors.As(err, &ve) {
		return link.SQLError(ve)
	}
	var re *ipc.RemoteError
	if errors.As(err, &re) {
		return err
	}
	return ipc.Errorf(ipc.CodeInternal, "fragment: %v", err)
}
