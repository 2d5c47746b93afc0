package exemgr

import (
	"context"
	"fmt"
	"github.com/colinkdb/colink/exec/vec"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exemgr/frontend"
	"github.com/colinkdb/colink/exemgr/loadtext"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/link/twophase"
	"github.com/colinkdb/colink/sql"
	"github.com/colinkdb/colink/sql/opt"
	"github.com/colinkdb/colink/sql/physical"
	"github.com/colinkdb/colink/sql/sqlerr"
)

// The refresh functions: INSERT (VALUES or SELECT), DELETE and LOAD DATA. Each statement is
// one distributed transaction over the primprocs its rows touch (twophase.Txn): inserted rows
// go to the primproc their first column's value picks (link.Place), deleted rows are
// named by the row IDs the statement's query read on each primproc, and the transaction
// commits in two phases when it touches more than one. The statement is acknowledged once
// its effect is durable everywhere it goes; a crash at any point leaves all of it or none.
// When a crash takes a commit's answer with it, the client is told the outcome is unknown
// (1397, mysqlError) rather than that the statement failed.
//
// Queries see a statement everywhere or nowhere. Every query pins a snapshot on every
// primproc before it runs (one round trip; skipped when one primproc runs one fragment,
// which reads one snapshot anyway), and all its fragments read those snapshots. The pins are
// taken under the read side of gate, and a distributed commit holds its write side from its
// first participant's commit to its last. When the pins report transactions prepared with no
// statement of this exemgr running them — left by a crash of exemgr or of a primproc — the
// query drops its pins, settles them (link.Cluster.Recover) and pins again.

// maxConflictRetries bounds how often a statement is run again after a conflict (rows it
// read were compacted away before it deleted them).
const maxConflictRetries = 3

// dmlState is the engine's side of writes: the gate and the transactions running now.
type dmlState struct {
	gate sync.RWMutex // read: pinning a query's snapshots; write: a distributed commit's second phase

	mu   sync.Mutex
	live map[string]bool // transaction IDs this exemgr is running
}

func newDMLState() *dmlState { return &dmlState{live: map[string]bool{}} }

func (d *dmlState) begin(id string) {
	d.mu.Lock()
	d.live[id] = true
	d.mu.Unlock()
}

func (d *dmlState) end(id string) {
	d.mu.Lock()
	delete(d.live, id)
	d.mu.Unlock()
}

func (d *dmlState) isLive(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.live[id]
}

// pinSnapshots pins every primproc's snapshot for a statement, after settling transactions
// that crashes left prepared.
func (e *Engine) pinSnapshots(ctx context.Context, query string) (*twophase.Pins, error) {
	for attempt := 0; ; attempt++ {
		e.dml.gate.RLock()
		pctx, cancel := context.WithTimeout(ctx, e.cfg.PrimProcTimeout)
		pins, err := twophase.Pin(pctx, e.cl, query)
		cancel()
		e.dml.gate.RUnlock()
		if err != nil {
			return nil, err
		}
		doubt := pins.InDoubt(e.dml.isLive)
		if len(doubt) == 0 {
			return pins, nil
		}
		e.unpin(pins)
		if attempt == 2 {
			return nil, fmt.Errorf("transactions %v stay prepared on the primprocs after recovery", doubt)
		}
		e.dml.gate.Lock()
		res, err := twophase.Recover(ctx, e.cl, pins, e.dml.isLive)
		e.dml.gate.Unlock()
		e.log.Warn("exemgr: settled transactions left prepared (by a crash or a commit not yet durable)", "committed", res.Committed, "aborted", res.Aborted, "err", err)
		if err != nil {
			return nil, fmt.Errorf("settle transactions left prepared (by a crash or a commit not yet durable): %w", err)
		}
	}
}

// queryPins pins the snapshots a query's fragments run on, or returns nil when they need
// none (one primproc, one fragment).
func (e *Engine) queryPins(ctx context.Context, pl *physical.Plan, query string) (*twophase.Pins, error) {
	if len(pl.Fragments()) == 0 || len(e.cl) == 1 && len(pl.Fragments()) <= 1 {
		return nil, nil
	}
	return e.pinSnapshots(ctx, query)
}

// unpin drops a statement's pins (nil: none) in the background, within PrimProcTimeout: no
// answer waits for it. A primproc that is down or frozen would otherwise hold the statement
// (its error included) for a redial, while a pin left behind costs little: a restarted
// primproc has lost it, and a resumed one drops it once unused for its --pin-ttl.
func (e *Engine) unpin(pins *twophase.Pins) {
	if pins == nil {
		return
	}
	e.bg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), e.cfg.PrimProcTimeout)
		defer cancel()
		twophase.Unpin(ctx, e.cl, pins)
	})
}

// runDML runs an INSERT, DELETE or LOAD DATA.
func (e *Engine) runDML(ctx context.Context, ev env, view *catView, stmt sql.Statement) (*frontend.Result, error) {
	if x, ok := stmt.(*sql.LoadData); ok {
		return e.loadData(ctx, ev, view, x)
	}
	for attempt := 0; ; attempt++ {
		res, err := e.write(ctx, ev, view, stmt)
		if err != nil && link.IsConflict(err) && attempt < maxConflictRetries {
			e.log.Info("exemgr: a statement's rows moved under it (compaction); running it again", "statement", stmt.SQL(), "err", err)
			continue
		}
		return res, err
	}
}

// write runs an INSERT or DELETE: its input plan on pinned snapshots, its rows (or row IDs)
// to the primprocs, and the commit.
func (e *Engine) write(ctx context.Context, ev env, view *catView, stmt sql.Statement) (*frontend.Result, error) {
	p := &sql.Planner{Catalog: view, Stats: view, Options: opt.Options{PmMaxMemorySmallSide: e.smallSide(ev.st), Primprocs: len(e.cl)}}
	q, err := p.Plan(ctx, ev, stmt)
	if err != nil {
		return nil, err
	}
	d, err := physical.BuildDML(q, physical.Options{Catalog: view, Primprocs: len(e.cl), Pushdown: e.pushdown(ev.st)})
	if err != nil {
		return nil, err
	}
	info, ok := view.table(d.DB, d.Table)
	if !ok || info.schema == nil {
		return nil, sqlerr.NoSuchTable(d.DB, d.Table)
	}
	pins, err := e.pinSnapshots(ctx, stmt.SQL())
	if err != nil {
		return nil, err
	}
	defer e.unpin(pins)
	qm := e.queryMemory(ev.st)
	res, err := d.Input.Execute(ctx, &linkRunner{cl: e.cl, memory: qm, query: stmt.SQL(), pins: pins.IDs()},
		physical.ExecOptions{QueryMemory: qm, Threads: e.cfg.Threads, Shared: e.budget, Alloc: e.pool})
	if err != nil {
		return nil, err
	}
	defer res.Close()
	op := link.OpInsert
	if d.Op == physical.Delete {
		op = link.OpDelete
	}
	tx, err := twophase.Begin(ctx, e.cl, d.Table, op, pins.StoreIDs())
	if err != nil {
		return nil, err
	}
	e.dml.begin(tx.ID())
	defer e.dml.end(tx.ID())
	var rows int64
	for {
		rec, err := res.Next(ctx)
		if err == nil && rec != nil {
			rows += rec.NumRows()
			if op == link.OpInsert {
				err = e.sendInsert(tx, info.schema, rec, rows-rec.NumRows())
			} else {
				err = e.sendDelete(tx, rec)
			}
			rec.Release()
		}
		if err != nil {
			tx.Abort("the statement failed")
			return nil, err
		}
		if rec == nil {
			break
		}
	}
	out, err := tx.Commit(ctx, &e.dml.gate)
	if err != nil {
		e.commitFailed(tx, err)
		return nil, err
	}
	for _, p := range out.Pending {
		e.log.Warn("exemgr: a primproc did not confirm its commit; recovery finishes it", "txn", out.ID, "err", p)
	}
	r := &frontend.Result{AffectedRows: uint64(out.Affected)}
	if x, ok := stmt.(*sql.Insert); ok && (x.Stmt.Select != nil || len(x.Stmt.Lists) > 1) {
		r.Info = fmt.Sprintf("Records: %d  Duplicates: 0  Warnings: 0", out.Affected)
	}
	return r, nil
}

// commitFailed logs a commit whose outcome is unknown (the statement's error says so too).
func (e *Engine) commitFailed(tx *twophase.Txn, err error) {
	if twophase.IsOutcomeUnknown(err) {
		e.log.Warn("exemgr: a commit's outcome is unknown: its primproc's answer was lost", "txn", tx.ID(), "err", err)
	}
}

// sendInsert checks rows against the table and sends them to their primprocs. first is the
// statement's row number of rec's first row (for messages).
func (e *Engine) sendInsert(tx *twophase.Txn, schema *arrow.Schema, rec arrow.RecordBatch, first int64) error {
	if int(rec.NumCols()) != schema.NumFields() {
		return sqlerr.New(sqlerr.ErWrongValueCountOnRow, "Column count doesn't match value count at row 1")
	}
	cols := rec.Columns()
	for i, f := range schema.Fields() {
		col := cols[i]
		if !arrow.TypeEqual(col.DataType(), f.Type) {
			return sqlerr.New(1366, "Incorrect %s value for column '%s': the statement gives %s", sqlTypeName(f), f.Name, col.DataType())
		}
		if !f.Nullable && col.NullN() > 0 {
			for r := 0; r < col.Len(); r++ {
				if col.IsNull(r) {
					return sqlerr.New(1048, "Column '%s' cannot be null (row %d)", f.Name, first+int64(r)+1)
				}
			}
		}
		if s, ok := col.(*array.String); ok {
			if n := loadtext.TypeLength(sqlTypeName(f)); n > 0 {
				for r := 0; r < s.Len(); r++ {
					if v := s.Value(r); s.IsValid(r) && len(v) > n && utf8.RuneCountInString(v) > n {
						return sqlerr.New(1406, "Data too long for column '%s' at row %d", f.Name, first+int64(r)+1)
					}
				}
			}
		}
	}
	named := array.NewRecordBatch(schema, cols, rec.NumRows())
	defer named.Release()
	parts, err := link.Place(named, len(e.cl), memory.DefaultAllocator)
	if err != nil {
		return err
	}
	defer func() {
		for _, p := range parts {
			if p != nil {
				p.Release()
			}
		}
	}()
	for m, p := range parts {
		if p != nil {
			if err := tx.Send(m, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// sqlTypeName is a field's SQL type, as recorded in its metadata.
func sqlTypeName(f arrow.Field) string {
	if st, ok := f.Metadata.GetValue(vec.SQLTypeKey); ok {
		return st
	}
	return f.Type.String()
}

var rowIDSchema = arrow.NewSchema([]arrow.Field{{Name: link.RowIDColumn, Type: arrow.PrimitiveTypes.Int64}}, nil)

// sendDelete sends each row ID to the primproc whose tag it carries.
func (e *Engine) sendDelete(tx *twophase.Txn, rec arrow.RecordBatch) error {
	col, ok := rec.Column(0).(*array.Int64)
	if rec.NumCols() != 1 || !ok || col.NullN() > 0 {
		return fmt.Errorf("the delete's query yields no row IDs")
	}
	per := make([][]int64, len(e.cl))
	for _, id := range col.Int64Values() {
		m := link.RowIDMember(id)
		if m >= len(e.cl) {
			return fmt.Errorf("row ID %d names primproc %d of %d", id, m, len(e.cl))
		}
		per[m] = append(per[m], id)
	}
	for m, ids := range per {
		if len(ids) == 0 {
			continue
		}
		b := array.NewInt64Builder(memory.DefaultAllocator)
		b.AppendValues(ids, nil)
		arr := b.NewArray()
		b.Release()
		out := array.NewRecordBatch(rowIDSchema, []arrow.Array{arr}, int64(len(ids)))
		arr.Release()
		err := tx.Send(m, out)
		out.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// loadData runs LOAD DATA [LOCAL] INFILE: the file's rows go to their primprocs as they are
// parsed, and commit together at the end.
func (e *Engine) loadData(ctx context.Context, ev env, view *catView, x *sql.LoadData) (*frontend.Result, error) {
	start := time.Now()
	p := &sql.Planner{Catalog: view, Stats: view}
	spec, err := p.LoadData(ev, x)
	if err != nil {
		return nil, err
	}
	info, ok := view.table(spec.Table.DB, spec.Table.Name)
	if !ok || info.schema == nil {
		return nil, sqlerr.NoSuchTable(spec.Table.DB, spec.Table.Name)
	}
	var r io.ReadCloser
	if spec.Local {
		if r, err = ev.s.LocalFile(spec.Path); err != nil {
			return nil, err
		}
	} else if r, err = openServerFile(e.cfg.SecureFilePriv, spec.Path); err != nil {
		return nil, err
	}
	defer r.Close()
	pins, err := e.pinSnapshots(ctx, x.SQL())
	if err != nil {
		return nil, err
	}
	ids := pins.StoreIDs()
	e.unpin(pins)
	tx, err := twophase.Begin(ctx, e.cl, spec.Table.Name, link.OpInsert, ids)
	if err != nil {
		return nil, err
	}
	e.dml.begin(tx.ID())
	defer e.dml.end(tx.ID())
	l, err := loadtext.New(spec, info.schema, len(e.cl), tx.Send)
	if err != nil {
		return nil, err
	}
	rows, err := l.Run(contextReader{ctx: ctx, r: r})
	if err != nil {
		tx.Abort("LOAD DATA failed")
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	out, err := tx.Commit(ctx, &e.dml.gate)
	if err != nil {
		e.commitFailed(tx, err)
		return nil, err
	}
	for _, p := range out.Pending {
		e.log.Warn("exemgr: a primproc did not confirm its commit; recovery finishes it", "txn", out.ID, "err", p)
	}
	e.log.Debug("exemgr: loaded", "table", spec.Table.Name, "rows", rows, "primprocs", out.Participants, "elapsed", time.Since(start))
	return &frontend.Result{AffectedRows: uint64(rows), Info: fmt.Sprintf("Records: %d  Deleted: 0  Skipped: 0  Warnings: 0", rows)}, nil
}

// contextReader stops reading once ctx is done (KILL QUERY of a long LOAD DATA).
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, context.Cause(c.ctx)
	}
	return c.r.Read(p)
}
