package primproc

import (
	"context"
	"errors"
	"fmt"
	"github.com/colinkdb/colink/exec/vec"
	"io"
	"runtime/debug"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/internal/rusage"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/storage"
)

// load writes the rows a client uploads into a table through one storage transaction,
// committed when the client ends its half of the stream. Anything else — a malformed
// batch, the client canceling or vanishing, a write error, the daemon dying — leaves the
// table as it was. One load per table runs at a time; loads of different tables run
// concurrently (each commits on its own).
func (d *Daemon) load(ctx context.Context, st *ipc.Stream) error {
	start := time.Now()
	ru0, _ := rusage.Self()
	var a link.LoadArgs
	if err := st.DecodeArgs(&a); err != nil {
		return err
	}
	if a.Table == "" {
		return invalidf("load", "no table named")
	}
	switch a.Mode {
	case "":
		a.Mode = link.ModeReplace
	case link.ModeReplace, link.ModeAppend, link.ModeCreate, link.ModeDrop:
	default:
		return invalidf("load", "table %s: mode %q: want replace, append, create or drop", a.Table, a.Mode)
	}
	release, err := d.lockTable(a.Table, st.ID())
	if err != nil {
		return err
	}
	// Unlocked before the END goes out, so that a client may reload at once.
	locked := true
	defer func() {
		if locked {
			release()
		}
	}()

	l := &loader{d: d, st: st, args: a, tx: d.store.Begin()}
	defer func() {
		if !l.committed {
			l.tx.Abort()
		}
	}()
	if err := l.prepare(); err != nil {
		return err
	}
	if err := l.receive(ctx); err != nil {
		return err
	}
	commitStart := time.Now()
	if err := l.tx.Commit(ctx); err != nil {
		if errors.Is(err, storage.ErrConflict) {
			return invalidf("load", "table %s: %v", a.Table, err)
		}
		if errors.Is(err, storage.ErrNotDurable) {
			l.committed = true // the catalog names the load's files: not the Txn's to remove
			return notDurable(d.cfg.DataDir, "load: table "+a.Table+": commit", err)
		}
		return ipc.Errorf(ipc.CodeInternal, "load: table %s: commit: %v", a.Table, err)
	}
	l.committed = true
	locked = false
	release()
	d.afterLoad()
	end := link.LoadEnd{Table: a.Table, Mode: a.Mode, Rows: l.rows, Batches: l.batches,
		BytesIn: st.Stats().BytesIn, ElapsedNs: int64(time.Since(start)), CommitNs: int64(time.Since(commitStart))}
	if l.cluster != nil {
		end.SortNs = l.cluster.sortNs
	}
	l.describe(&end)
	if ru1, err := rusage.Self(); err == nil {
		end.Rusage = ru1.Sub(ru0).Map()
		delete(end.Rusage, "maxrss_kib")
	}
	d.log.Info("primproc: loaded", "table", a.Table, "mode", a.Mode, "rows", l.rows, "segments", end.Segments,
		"bytes", end.Bytes, "elapsed", time.Duration(end.ElapsedNs).Round(time.Millisecond))
	b, err := msgpack.Marshal(&end)
	if err != nil {
		return ipc.Errorf(ipc.CodeInternal, "load: %v", err)
	}
	return st.CloseSend(b)
}

// afterLoad returns the memory a load used (link buffers, a segment of clustered rows,
// Parquet pages) to the OS once no load runs: loads are rare and large, and the memory is
// better left to the column cache and the page cache.
func (d *Daemon) afterLoad() {
	d.loadMu.Lock()
	idle := len(d.loading) == 0
	d.loadMu.Unlock()
	if idle {
		debug.FreeOSMemory()
	}
}

// lockTable marks table as being loaded by stream id; the returned func unmarks it.
func (d *Daemon) lockTable(table string, id uint32) (func(), error) {
	d.loadMu.Lock()
	defer d.loadMu.Unlock()
	if other, busy := d.loading[table]; busy {
		return nil, invalidf("load", "table %s is being loaded by another stream (%d); one load per table at a time", table, other)
	}
	d.loading[table] = id
	return func() {
		d.loadMu.Lock()
		delete(d.loading, table)
		d.loadMu.Unlock()
	}, nil
}

// loader is one load request in progress.
type loader struct {
	d    *Daemon
	st   *ipc.Stream
	args link.LoadArgs
	tx   *storage.Txn

	schema    *arrow.Schema // the table's; nil until known (a replace without Columns)
	w         *storage.TableWriter
	cluster   *clusterer
	before    map[uint64]bool // append: the table's segments before the load
	dropped   bool            // a drop: the transaction removes the table, no rows come
	rows      int64
	batches   int64
	committed bool
}

// prepare resolves what can be known before the first batch: the declared schema, an
// appended table's schema, the cluster key.
func (l *loader) prepare() error {
	a := &l.args
	var declared *arrow.Schema
	if len(a.Columns) > 0 {
		sc, err := link.SchemaFromColumns(a.Columns)
		if err != nil {
			return invalidf("load", "table %s: %v", a.Table, err)
		}
		declared = sc
	}
	if a.Mode == link.ModeCreate || a.Mode == link.ModeDrop {
		// Under the table's load lock: no other load of it commits between this check and
		// this one's commit.
		snap := l.d.store.Snapshot()
		_, err := snap.Table(a.Table)
		snap.Release()
		switch {
		case a.Mode == link.ModeCreate && err == nil:
			return invalidf("load", "create table %s: the table exists", a.Table)
		case a.Mode == link.ModeDrop && err != nil:
			// Nothing to drop here: a drop is idempotent, so that repeating one that failed
			// on another primproc finishes it.
			l.dropped = true
			return nil
		case a.Mode == link.ModeDrop:
			if err := l.tx.Drop(a.Table); err != nil {
				return invalidf("load", "drop table %s: %v", a.Table, trimStorage(err))
			}
			l.dropped = true
			return nil
		}
	}
	switch a.Mode {
	case link.ModeAppend:
		snap := l.d.store.Snapshot()
		ti, err := snap.Table(a.Table)
		snap.Release()
		if err != nil {
			return invalidf("load", "append to table %s: the table does not exist", a.Table)
		}
		l.before = map[uint64]bool{}
		for _, s := range ti.Segments {
			l.before[s.ID] = true
		}
		if declared != nil {
			if err := sameColumns(ti.Schema, declared); err != nil {
				return invalidf("load", "append to table %s: declared columns differ from the table's: %v", a.Table, err)
			}
		}
		w, err := l.tx.Append(a.Table)
		if err != nil {
			return invalidf("load", "append to table %s: %v", a.Table, err)
		}
		return l.start(ti.Schema, w)
	default:
		if declared == nil {
			return nil // the table's schema is the stream's: see write and receive
		}
		return l.replace(declared)
	}
}

// replace starts replacing the table with schema sc.
func (l *loader) replace(sc *arrow.Schema) error {
	w, err := l.tx.Replace(l.args.Table, sc)
	if err != nil {
		return invalidf("load", "table %s: %v", l.args.Table, trimStorage(err))
	}
	return l.start(sc, w)
}

// start records the table's schema and writer and sets up clustering.
func (l *loader) start(sc *arrow.Schema, w *storage.TableWriter) error {
	l.schema, l.w = sc, w
	if len(l.args.ClusterBy) == 0 {
		return nil
	}
	keys := make([]int, len(l.args.ClusterBy))
	for i, name := range l.args.ClusterBy {
		idx := sc.FieldIndices(name)
		if len(idx) != 1 {
			return invalidf("load", "table %s: cluster_by names column %q, which the table does not have (columns: %s)",
				l.args.Table, name, columnNames(sc))
		}
		if !clusterable(sc.Field(idx[0]).Type) {
			return invalidf("load", "table %s: cluster_by column %s has type %s, which cannot be sorted", l.args.Table, name, sc.Field(idx[0]).Type)
		}
		keys[i] = idx[0]
	}
	lay := l.d.layout
	l.cluster = newClusterer(sc, keys, int64(lay.SegmentRows), lay.RowGroupRows, memory.DefaultAllocator)
	return nil
}

// receive writes the client's batches until its END.
func (l *loader) receive(ctx context.Context) error {
	defer func() {
		if l.cluster != nil {
			l.cluster.release()
		}
	}()
	for {
		rec, err := l.st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if l.dropped {
			rec.Release()
			return invalidf("load", "drop table %s: a drop takes no rows", l.args.Table)
		}
		err = l.write(ctx, rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	if l.w == nil && !l.dropped { // a replace without declared columns and without batches
		sc := l.st.Schema()
		if sc == nil {
			return invalidf("load", "table %s: the client sent no schema: declare columns or send the stream's schema", l.args.Table)
		}
		if err := l.replace(sc); err != nil {
			return err
		}
	}
	if l.cluster != nil {
		if err := l.cluster.flush(ctx, l.w); err != nil {
			return ipc.Errorf(ipc.CodeInternal, "load: table %s: %v", l.args.Table, err)
		}
	}
	var ce link.LoadClientEnd
	if end := l.st.End(); len(end) > 0 {
		if err := msgpack.Unmarshal(end, &ce); err != nil {
			return invalidf("load", "table %s: the client's END is not a load end (%v)", l.args.Table, err)
		}
	}
	if ce.Rows != nil && *ce.Rows != l.rows {
		return invalidf("load", "table %s: the client says it sent %d rows, %d arrived", l.args.Table, *ce.Rows, l.rows)
	}
	return nil
}

// write checks one uploaded record against the table and writes it.
func (l *loader) write(ctx context.Context, rec arrow.RecordBatch) error {
	if l.w == nil {
		if err := l.replace(rec.Schema()); err != nil {
			return err
		}
	}
	if err := matchRecord(l.schema, rec); err != nil {
		return invalidf("load", "table %s, batch %d: %v", l.args.Table, l.batches+1, err)
	}
	l.batches++
	l.rows += rec.NumRows()
	var err error
	if l.cluster != nil {
		err = l.cluster.add(ctx, l.w, rec)
	} else {
		err = l.w.Write(ctx, rec)
	}
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return ipc.Errorf(ipc.CodeInternal, "load: table %s: %v", l.args.Table, err)
	}
	return nil
}

// describe fills the segment counts of a committed load.
func (l *loader) describe(end *link.LoadEnd) {
	snap := l.d.store.Snapshot()
	defer snap.Release()
	end.Version = snap.Version()
	ti, err := snap.Table(l.args.Table)
	if err != nil {
		return
	}
	for _, s := range ti.Segments {
		if l.before[s.ID] {
			continue
		}
		end.Segments++
		end.RowGroups += s.RowGroups
		end.Bytes += s.Bytes
	}
}

// matchRecord checks that rec has the table's column names and types, and no NULLs in a
// NOT NULL column.
func matchRecord(sc *arrow.Schema, rec arrow.RecordBatch) error {
	if int(rec.NumCols()) != sc.NumFields() {
		return fmt.Errorf("the table has %d columns (%s), the batch %d (%s)", sc.NumFields(), columnNames(sc), rec.NumCols(), columnNames(rec.Schema()))
	}
	for i, f := range sc.Fields() {
		g := rec.Schema().Field(i)
		if g.Name != f.Name {
			return fmt.Errorf("column %d is %s in the table, %s in the batch", i+1, f.Name, g.Name)
		}
		if !arrow.TypeEqual(g.Type, f.Type) {
			return fmt.Errorf("column %s is %s (%s) in the table, %s in the batch", f.Name, vec.SQLTypeOf(f), f.Type, g.Type)
		}
		if !f.Nullable && rec.Column(i).NullN() > 0 {
			return fmt.Errorf("column %s is NOT NULL, the batch has %d NULLs in it", f.Name, rec.Column(i).NullN())
		}
	}
	return nil
}

// sameColumns checks two schemas have the same column names and types.
func sameColumns(a, b *arrow.Schema) error {
	if a.NumFields() != b.NumFields() {
		return fmt.Errorf("%d columns (%s) vs %d (%s)", a.NumFields(), columnNames(a), b.NumFields(), columnNames(b))
	}
	for i, f := range a.Fields() {
		g := b.Field(i)
		if f.Name != g.Name || !arrow.TypeEqual(f.Type, g.Type) {
			return fmt.Errorf("column %d: %s %s vs %s %s", i+1, f.Name, f.Type, g.Name, g.Type)
		}
	}
	return nil
}

func columnNames(sc *arrow.Schema) string {
	names := make([]string, sc.NumFields())
	for i, f := range sc.Fields() {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// trimStorage drops storage's "storage: " prefix from an error's text for a client.
func trimStorage(err error) string { return strings.TrimPrefix(err.Error(), "storage: ") }
