// Package twophase owns the coordinator of colink's distributed writes: a statement's
// INSERT or DELETE across several primprocs, committed everywhere or nowhere by a two-phase
// commit whose decision a participant records (so the coordinator, exemgr, keeps no state),
// the snapshot pins that let a query see a write everywhere or nowhere, and the recovery
// that settles a transaction a crash left prepared. It drives primproc's write, resolve and
// pin methods through package link's clients; the protocol is in link/PROTOCOL.md.
package twophase

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
)

// One statement's INSERT or DELETE may touch several primprocs; it must
// take effect on all of them or on none, whatever crashes, and no query may see it on some
// and not on others. A Txn does this with a two-phase commit whose decision is recorded by a
// participant rather than by the coordinator, so that the coordinator (exemgr) keeps no
// state of its own:
//
//  1. Each participant receives its rows (or row IDs) on a write stream. The END asks it to
//     prepare: its files become durable and the transaction is recorded in its catalog,
//     invisible, naming the decider (the participant of lowest position).
//  2. If every participant prepared, the coordinator commits the decider: that commit is
//     the decision. It then commits the others. If any failed to prepare, it aborts all.
//
// A participant that prepared keeps the transaction across restarts until told its
// outcome. Whoever finds it prepared later with no coordinator running it (Recover) asks the
// decider: committed there means commit, anything else means abort (aborting at the decider
// first, so that a late prepare there cannot commit it). A statement that touches one
// primproc commits it in one phase.
//
// The decision must be durable at the decider before any other participant commits: if the
// decider committed but could not fsync its directory (link.CodeNotDurable), a crash there
// may bring the transaction back prepared, and recovery would then abort it there while the
// others had committed it. So Commit leaves the others prepared in that case, the decider
// reports an outcome (a status resolve) only once it is durable, and Recover commits at the
// decider again, which fsyncs, before committing anywhere else. The price: while the
// decider's fsync keeps failing, its transaction stays prepared on the other primprocs, and
// every statement that pins snapshots (exemgr settles what the pins report first) fails with
// an error saying the transaction could not be settled, rather than run on a split outcome.
//
// A commit request whose answer is lost — the connection to its primproc fails after the
// request (a one-phase write's END commit, or the decider's resolve) may have left — has an
// unknown outcome: the primproc may have committed and crashed before answering. Commit says
// so with an OutcomeUnknownError rather than a plain failure, since a client that takes a
// failed write for one not applied and runs it again would apply it twice. A failure before
// that request left (ipc.ErrNotSent) or the primproc's own refusal is a plain error: nothing
// was committed.
//
// Visibility across primprocs is the coordinator's: Commit holds gate's lock from the
// decider's commit until the last participant's, and queries pin their snapshots under the
// same gate's read lock (Pin), so a query sees a transaction everywhere or nowhere.
// A transaction left half committed by a crash is prepared on some primprocs; the pins report
// it and Recover completes it before the query runs.

// Txn is one statement's write of one table across the cluster.
type Txn struct {
	cl  link.Cluster
	ctx context.Context
	// sctx is the context of the write's streams and commit calls: ctx's cancellation,
	// held back by commitGrace once a commit request is about to leave (see heldContext).
	sctx     *heldContext
	id       string
	args     link.WriteArgs
	storeIDs []string // per member

	mu      sync.Mutex
	members []*member // per position; nil until rows go there
	failed  error
	closed  bool // the uploads were closed (Commit or Abort)
}

// member is one participant's upload.
type member struct {
	ws   *link.WriteStream
	ch   chan arrow.RecordBatch
	done chan struct{}
	err  error
}

// TxnResult is what a committed Txn did.
type TxnResult struct {
	ID           string
	Participants int
	Affected     int64 // rows inserted, or live rows deleted
	Ends         []*link.WriteEnd
	// Pending lists the participants whose commit did not complete after the decision (the
	// transaction is committed; Recover finishes them).
	Pending []error
}

// NewTxnID returns a fresh transaction ID.
func NewTxnID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("twophase: no randomness for a transaction ID: %v", err))
	}
	return "tx-" + hex.EncodeToString(b[:])
}

// Begin starts a write (link.OpInsert or link.OpDelete) of table. storeIDs are the members'
// store IDs (from their catalogs or pins), in cluster order. ctx bounds the uploads.
func Begin(ctx context.Context, cl link.Cluster, table, op string, storeIDs []string) (*Txn, error) {
	if len(storeIDs) != len(cl) {
		return nil, fmt.Errorf("write %s: %d store IDs for %d primprocs", table, len(storeIDs), len(cl))
	}
	for i, id := range storeIDs {
		if id == "" {
			return nil, fmt.Errorf("write %s: primproc %s has no store ID", table, cl[i].Peer())
		}
	}
	return &Txn{cl: cl, ctx: ctx, sctx: newHeldContext(ctx), id: NewTxnID(), args: link.WriteArgs{Table: table, Op: op},
		storeIDs: storeIDs, members: make([]*member, len(cl))}, nil
}

// commitGrace is how long a commit request that has left may still be answered after the
// statement is cancelled (KILL QUERY, the client gone). Cancelling it at once would turn a
// commit about to succeed into one whose outcome is unknown; a primproc that died meanwhile
// is noticed by the link's heartbeat well within it.
const commitGrace = 5 * time.Second

// heldContext follows its parent's cancellation until hold is called; from then on the
// parent's cancellation reaches it only commitGrace later.
type heldContext struct {
	context.Context
	cancel context.CancelCauseFunc
	stop   func() bool

	mu   sync.Mutex
	held bool
}

func newHeldContext(parent context.Context) *heldContext {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	h := &heldContext{Context: ctx, cancel: cancel}
	h.stop = context.AfterFunc(parent, func() {
		cause := context.Cause(parent)
		h.mu.Lock()
		held := h.held
		if !held {
			cancel(cause) // under mu, so that hold sees it
		}
		h.mu.Unlock()
		if held {
			time.AfterFunc(commitGrace, func() { cancel(cause) })
		}
	})
	return h
}

// hold delays the parent's cancellation by commitGrace from now on. It reports false if the
// context is cancelled already (no commit request may then leave).
func (h *heldContext) hold() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held = true
	return h.Err() == nil
}

// release frees the context once the transaction has ended.
func (h *heldContext) release() {
	h.stop()
	h.cancel(context.Canceled)
}

// ErrOutcomeUnknown is wrapped by the error of a Commit whose outcome is unknown: the commit
// request may have reached a primproc, which may have applied it, but its answer never came.
var ErrOutcomeUnknown = errors.New("outcome unknown")

// OutcomeUnknownError is Commit's error when the commit request (a one-phase write's END,
// or the decider's resolve) may have reached Peer but no answer came back: the write may or
// may not have taken effect, and running it again may apply it twice.
type OutcomeUnknownError struct {
	Table, Txn, Peer string
	// Recovery: the transaction is prepared elsewhere, and the recovery that the next
	// statement runs settles it as the decider decided.
	Recovery bool
	Err      error // what the commit request ran into
}

func (e *OutcomeUnknownError) Error() string {
	var what string
	var re *ipc.RemoteError
	switch {
	case errors.Is(e.Err, ipc.ErrCanceled), errors.Is(e.Err, context.Canceled), errors.Is(e.Err, context.DeadlineExceeded):
		what = fmt.Sprintf("the statement was interrupted while primproc %s committed, before it answered", e.Peer)
	case errors.As(e.Err, &re) && !errors.Is(e.Err, ipc.ErrConnClosed):
		what = fmt.Sprintf("primproc %s failed during commit", e.Peer)
	default:
		what = fmt.Sprintf("the connection to primproc %s was lost during commit", e.Peer)
	}
	rec := ""
	if e.Recovery {
		rec = ", which recovery settles once that primproc answers"
	}
	return fmt.Sprintf("outcome unknown: %s of transaction %s (write %s)%s; check before retrying: %v", what, e.Txn, e.Table, rec, e.Err)
}

func (e *OutcomeUnknownError) Unwrap() []error { return []error{ErrOutcomeUnknown, e.Err} }

// IsOutcomeUnknown reports whether err is a commit whose outcome is unknown
// (OutcomeUnknownError).
func IsOutcomeUnknown(err error) bool { return errors.Is(err, ErrOutcomeUnknown) }

// answered reports whether err is a primproc's own answer on the request's stream (an
// ERROR its handler returned; one with a MySQL code comes back as a *vec.Error, see
// link.Client.wrap), not a failure of the link; a connection the server closed with an ERROR of
// its own also carries a RemoteError, but wraps ipc.ErrConnClosed.
func answered(err error) bool {
	var re *ipc.RemoteError
	var ve *vec.Error
	return (errors.As(err, &re) || errors.As(err, &ve)) && !errors.Is(err, ipc.ErrConnClosed)
}

// ID is the transaction's ID.
func (t *Txn) ID() string { return t.id }

// Send queues rec (retained; the caller keeps its reference) for member m. Each member's
// stream opens on its first batch and is fed by a goroutine of its own, so that one slow
// primproc does not hold the others back. Send is called from one goroutine.
func (t *Txn) Send(m int, rec arrow.RecordBatch) error {
	if m < 0 || m >= len(t.cl) {
		return fmt.Errorf("write %s: member %d of %d", t.args.Table, m, len(t.cl))
	}
	t.mu.Lock()
	if t.failed != nil {
		err := t.failed
		t.mu.Unlock()
		return err
	}
	mb := t.members[m]
	t.mu.Unlock()
	if mb == nil {
		args := t.args
		args.Txn, args.Member = t.id, m
		ws, err := t.cl[m].Write(t.sctx, args)
		if err != nil {
			t.fail(err)
			return err
		}
		mb = &member{ws: ws, ch: make(chan arrow.RecordBatch, 4), done: make(chan struct{})}
		t.mu.Lock()
		t.members[m] = mb
		t.mu.Unlock()
		go t.feed(mb)
	}
	rec.Retain()
	select {
	case mb.ch <- rec:
		return nil
	case <-mb.done: // the sender stopped on an error
		rec.Release()
		return mb.err
	case <-t.ctx.Done():
		rec.Release()
		return context.Cause(t.ctx)
	}
}

func (t *Txn) feed(mb *member) {
	defer close(mb.done)
	for rec := range mb.ch {
		if mb.err == nil {
			if mb.err = mb.ws.Send(rec); mb.err != nil {
				t.fail(mb.err)
			}
		}
		rec.Release()
		if mb.err != nil {
			for r := range mb.ch { // drain so Send never blocks
				r.Release()
			}
			return
		}
	}
}

func (t *Txn) fail(err error) {
	t.mu.Lock()
	if t.failed == nil {
		t.failed = err
	}
	t.mu.Unlock()
}

// participants closes the uploads, waits for them, and returns the members with rows.
func (t *Txn) participants() ([]int, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, fmt.Errorf("write %s: the transaction has ended", t.args.Table)
	}
	t.closed = true
	t.mu.Unlock()
	var ps []int
	for i, mb := range t.members {
		if mb == nil {
			continue
		}
		close(mb.ch)
		<-mb.done
		ps = append(ps, i)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return ps, t.failed
}

// Abort abandons the write on every member (before Commit; Commit aborts by itself on
// failure).
func (t *Txn) Abort(reason string) {
	defer t.sctx.release()
	for _, mb := range t.members {
		if mb != nil {
			mb.ws.Abort(reason)
		}
	}
	t.participants()
}

// Commit ends the uploads and commits the write everywhere it went, in one phase on a
// single participant, in two otherwise; gate (may be nil) is locked around the second phase
// (see the package comment on visibility). On error, the write took effect nowhere, with two
// exceptions. IsOutcomeUnknown(err): the commit request (the single participant's, or the
// decider's) may have reached its primproc but no answer came (the connection was lost), so
// the write may have taken effect; with two phases, Recover settles it as the decider did.
// link.IsNotDurable(err): the commit took effect (on the single participant, or on the decider
// with the others left prepared for Recover) but a crash may undo it.
//
// Once the commit request is about to leave, ctx's cancellation is held back by
// commitGrace, so that a statement killed while it commits learns the outcome.
func (t *Txn) Commit(ctx context.Context, gate sync.Locker) (*TxnResult, error) {
	defer t.sctx.release()
	ps, err := t.participants()
	res := &TxnResult{ID: t.id, Participants: len(ps), Ends: make([]*link.WriteEnd, len(t.cl))}
	if err != nil {
		for _, m := range ps {
			t.members[m].ws.Abort("the write failed")
		}
		return nil, fmt.Errorf("write %s: %w", t.args.Table, err)
	}
	switch len(ps) {
	case 0:
		return res, nil
	case 1:
		mb := t.members[ps[0]]
		if !t.sctx.hold() {
			mb.ws.Abort("the statement was cancelled")
			return nil, fmt.Errorf("write %s: %w", t.args.Table, context.Cause(t.ctx))
		}
		end, err := mb.ws.Finish(link.WriteClientEnd{Commit: true})
		if err != nil {
			// The handler answers a failed commit with an ERROR after aborting (or with
			// not_durable after applying); an END that never left cannot have committed.
			if errors.Is(err, ipc.ErrNotSent) || answered(err) {
				return nil, fmt.Errorf("write %s: %w", t.args.Table, err)
			}
			return nil, &OutcomeUnknownError{Table: t.args.Table, Txn: t.id, Peer: t.cl[ps[0]].Peer(), Err: err}
		}
		res.Ends[ps[0]] = end
		res.Affected = end.Affected
		return res, nil
	}
	decider := ps[0]
	errs := make([]error, len(t.cl))
	var wg sync.WaitGroup
	for _, m := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res.Ends[m], errs[m] = t.members[m].ws.Finish(link.WriteClientEnd{Decider: t.storeIDs[decider]})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		// Abort everywhere (a participant whose answer was lost may have prepared); the
		// decider's abort makes the outcome definite. Failures here leave prepared
		// transactions that Recover aborts.
		t.abortAll(ctx, ps)
		return nil, fmt.Errorf("write %s: %w", t.args.Table, err)
	}
	for _, m := range ps {
		res.Affected += res.Ends[m].Affected
	}
	if gate != nil {
		gate.Lock()
		defer gate.Unlock()
	}
	if !t.sctx.hold() {
		t.abortAll(ctx, ps)
		return nil, fmt.Errorf("write %s: %w", t.args.Table, context.Cause(t.ctx))
	}
	_, err = t.cl[decider].Resolve(t.sctx, t.id, link.ResolveCommit)
	if link.IsNotDurable(err) {
		// The decider committed (its rows are visible) but could not fsync its directory,
		// so a crash there may still bring the transaction back as prepared. Asking again
		// fsyncs it; until that succeeds the decision is not final, and committing the
		// others could split the outcome: they stay prepared for recovery to settle.
		if _, rerr := t.cl[decider].Resolve(t.sctx, t.id, link.ResolveCommit); rerr == nil {
			err = nil
		} else {
			return nil, fmt.Errorf("write %s: transaction %s is committed on primproc %s but not durably, and the other primprocs stay prepared until recovery settles it: %w",
				t.args.Table, t.id, t.cl[decider].Peer(), err)
		}
	}
	if err != nil {
		// The decider refusing (the transaction is aborted or unknown there), or a request
		// that never left: definitely not committed.
		if link.IsRefusal(err) || errors.Is(err, ipc.ErrNotSent) {
			t.abortAll(ctx, ps)
			return nil, fmt.Errorf("write %s: %w", t.args.Table, err)
		}
		return nil, &OutcomeUnknownError{Table: t.args.Table, Txn: t.id, Peer: t.cl[decider].Peer(), Recovery: true, Err: err}
	}
	for i, err := range t.resolveAll(t.sctx, ps[1:], link.ResolveCommit) {
		if err != nil {
			res.Pending = append(res.Pending, fmt.Errorf("primproc %s: %w", t.cl[ps[1+i]].Peer(), err))
		}
	}
	return res, nil
}

// abortAll aborts the prepared transaction on the members ms, even when ctx is cancelled
// (a killed statement), for at most commitGrace; a failure leaves it prepared, for Recover.
func (t *Txn) abortAll(ctx context.Context, ms []int) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitGrace)
	defer cancel()
	t.resolveAll(actx, ms, link.ResolveAbort)
}

// resolveAll applies action to transaction t on the members ms at once.
func (t *Txn) resolveAll(ctx context.Context, ms []int, action string) []error {
	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = t.cl[m].Resolve(ctx, t.id, action)
		}()
	}
	wg.Wait()
	return errs
}

// Pins is a query's snapshot on every primproc.
type Pins struct {
	Ends []*link.PinEnd // per member
}

// IDs returns the pin IDs, per member (nil for nil Pins).
func (p *Pins) IDs() []uint64 {
	if p == nil {
		return nil
	}
	out := make([]uint64, len(p.Ends))
	for i, e := range p.Ends {
		out[i] = e.Pin
	}
	return out
}

// StoreIDs returns the members' store IDs.
func (p *Pins) StoreIDs() []string {
	out := make([]string, len(p.Ends))
	for i, e := range p.Ends {
		out[i] = e.StoreID
	}
	return out
}

// InDoubt lists the prepared transactions the pins report that live (if not nil) does not
// claim as running.
func (p *Pins) InDoubt(live func(txn string) bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range p.Ends {
		for _, pt := range e.Prepared {
			if !seen[pt.Txn] && (live == nil || !live(pt.Txn)) {
				seen[pt.Txn] = true
				out = append(out, pt.Txn)
			}
		}
	}
	return out
}

// Pin pins every primproc's current snapshot (at once). On error the pins made are
// dropped.
func Pin(ctx context.Context, cl link.Cluster, query string) (*Pins, error) {
	p := &Pins{Ends: make([]*link.PinEnd, len(cl))}
	err := cl.Each(func(i int, c *link.Client) error {
		e, err := c.Pin(ctx, query)
		p.Ends[i] = e
		return err
	})
	if err != nil {
		Unpin(context.WithoutCancel(ctx), cl, p)
		return nil, err
	}
	return p, nil
}

// Unpin drops a query's pins; errors are ignored (a pin nobody uses expires).
func Unpin(ctx context.Context, cl link.Cluster, p *Pins) {
	cl.Each(func(i int, c *link.Client) error {
		if p.Ends[i] != nil {
			return c.Unpin(ctx, p.Ends[i].Pin)
		}
		return nil
	})
}

// RecoverResult counts what Recover settled.
type RecoverResult struct {
	Committed, Aborted int
}

// Recover settles every prepared transaction the pins report that live (if not nil) does
// not claim as running: it asks the transaction's decider, and if the decider committed it,
// commits it at the decider again (which makes the decision durable there) and then where it
// is prepared; else it aborts it, at the decider first. It fails if a decider cannot be
// reached, is not in the cluster, or cannot make its outcome durable (its fsync fails); the
// transactions it could not settle stay prepared.
func Recover(ctx context.Context, cl link.Cluster, pins *Pins, live func(txn string) bool) (RecoverResult, error) {
	var res RecoverResult
	byStore := map[string]int{}
	for i, e := range pins.Ends {
		byStore[e.StoreID] = i
	}
	type txnInfo struct {
		decider string
		holders []int
	}
	txns := map[string]*txnInfo{}
	var order []string
	for i, e := range pins.Ends {
		for _, pt := range e.Prepared {
			if live != nil && live(pt.Txn) {
				continue
			}
			ti := txns[pt.Txn]
			if ti == nil {
				ti = &txnInfo{decider: pt.Decider}
				txns[pt.Txn] = ti
				order = append(order, pt.Txn)
			}
			ti.holders = append(ti.holders, i)
		}
	}
	var errs []error
	for _, id := range order {
		ti := txns[id]
		d, ok := byStore[ti.decider]
		if !ok {
			errs = append(errs, fmt.Errorf("transaction %s: its decider, store %q, is none of the primprocs", id, ti.decider))
			continue
		}
		st, err := cl[d].Resolve(ctx, id, link.ResolveStatus)
		if err != nil {
			errs = append(errs, unsettled(id, cl[d].Peer(), "ask its decider", err))
			continue
		}
		action := link.ResolveAbort
		switch st.State {
		case link.TxnCommitted:
			// Commit at the decider first (a no-op there that fsyncs if needed) and commit
			// the others only once that succeeds: an outcome the decider could lose in a
			// crash must not be applied elsewhere, or the transaction would split.
			action = link.ResolveCommit
			if _, err := cl[d].Resolve(ctx, id, link.ResolveCommit); err != nil {
				errs = append(errs, unsettled(id, cl[d].Peer(), "commit at its decider", err))
				continue
			}
		case link.TxnInDoubt:
			errs = append(errs, fmt.Errorf("transaction %s: its outcome is not yet durable at its decider, primproc %s; the other primprocs stay prepared until it is",
				id, cl[d].Peer()))
			continue
		default:
			if _, err := cl[d].Resolve(ctx, id, link.ResolveAbort); err != nil {
				errs = append(errs, unsettled(id, cl[d].Peer(), "abort at its decider", err))
				continue
			}
		}
		for _, m := range ti.holders {
			if m == d {
				continue // done above
			}
			if _, err := cl[m].Resolve(ctx, id, action); err != nil {
				errs = append(errs, fmt.Errorf("transaction %s: %s on %s: %w", id, action, cl[m].Peer(), err))
			}
		}
		if action == link.ResolveCommit {
			res.Committed++
		} else {
			res.Aborted++
		}
	}
	return res, errors.Join(errs...)
}

// unsettled is Recover's error for transaction id whose decider (at peer) did not settle
// it. A not-durable answer is quoted rather than wrapped: the statement that ran Recover
// applied nothing, so it must not look like a commit that was applied but not durable.
func unsettled(id, peer, step string, err error) error {
	var re *ipc.RemoteError
	if link.IsNotDurable(err) && errors.As(err, &re) {
		return fmt.Errorf("transaction %s: %s: its outcome is decided on primproc %s but not durable there (%s); the other primprocs stay prepared until it is",
			id, step, peer, re.Message)
	}
	return fmt.Errorf("transaction %s: %s, primproc %s: %w", id, step, peer, err)
}
