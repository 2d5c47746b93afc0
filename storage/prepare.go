package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Two-phase commit. A change that spans several stores (a statement whose rows go to several
// primprocs) must become visible everywhere or nowhere, also across crashes. Each store
// first prepares its part: Txn.Prepare makes the transaction's files durable and records the
// transaction, under an ID the coordinator chose, in a new catalog version — durably, but
// without making its changes visible. The coordinator then decides, and each store applies
// the outcome with CommitPrepared or AbortPrepared. A prepared transaction survives a crash
// (it is in the catalog), and once prepared it cannot fail to commit for want of its tables or
// segments: replacing or dropping a table it writes fails with ErrConflict, and compaction
// leaves the segments it deletes from alone. Deletes of other transactions meanwhile merge
// with it as with any delete.
//
// The store remembers the outcome of the last maxResolved prepared transactions, so that a
// coordinator that lost an answer (a crash, a lost connection) can ask again (TxnState) and
// commit or abort again without harm. An outcome is reported only once durable: after a
// commit whose directory fsync failed it is TxnInDoubt until Settle (or CommitPrepared or
// AbortPrepared asked again) fsyncs the directory.

// maxResolved bounds the outcomes the catalog remembers.
const maxResolved = 4096

// preparedTxn is one prepared transaction in the catalog.
type preparedTxn struct {
	ID string `json:"id"`
	// Meta is the coordinator's: e.g. which store decides the outcome.
	Meta    map[string]string `json:"meta,omitempty"`
	Version uint64            `json:"version"` // the catalog version that prepared it
	Appends []preparedAppend  `json:"appends,omitempty"`
	Deletes []preparedDelete  `json:"deletes,omitempty"`
}

// preparedAppend is segments to add to a table at commit.
type preparedAppend struct {
	Table    string         `json:"table"`
	TableID  uint64         `json:"table_id"`
	Rows     int64          `json:"rows"`
	Segments []*segmentMeta `json:"segments"`
}

// preparedDelete is rows of one segment to mark deleted at commit: File holds the
// transaction's own bitmap (in the delete file format); the commit merges it with whatever
// the segment has deleted by then.
type preparedDelete struct {
	Table   string `json:"table"`
	TableID uint64 `json:"table_id"`
	Segment uint64 `json:"segment"`
	File    string `json:"file"`
	Rows    int64  `json:"rows"` // the segment's rows
	Count   int64  `json:"count"`
	Size    int64  `json:"size"`
	CRC     uint32 `json:"crc"`
}

// resolvedTxn is the outcome of a prepared transaction.
type resolvedTxn struct {
	ID        string `json:"id"`
	Committed bool   `json:"committed"`
}

// TxnState is what a store knows of a prepared transaction.
type TxnState string

// The states of a transaction ID.
const (
	TxnUnknown   TxnState = "unknown"   // never prepared here, or resolved too long ago
	TxnPrepared  TxnState = "prepared"  // waiting for CommitPrepared or AbortPrepared
	TxnCommitted TxnState = "committed" // CommitPrepared ran
	TxnAborted   TxnState = "aborted"   // AbortPrepared ran (or the ID was refused)
	// TxnInDoubt: CommitPrepared or AbortPrepared ran, but the catalog recording it is not
	// yet known durable (DIR's fsync failed), so a crash may bring the earlier state back.
	TxnInDoubt TxnState = "in_doubt"
)

// Errors of the two-phase commit; errors.Is matches them.
var (
	ErrTxnUnknown   = errors.New("storage: no such prepared transaction")
	ErrTxnAborted   = errors.New("storage: the transaction was aborted")
	ErrTxnCommitted = errors.New("storage: the transaction was committed")
	ErrTxnExists    = errors.New("storage: a transaction with this ID was prepared before")
)

var txnIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// preparedOn returns a prepared transaction that writes table, or nil.
func (c *catalog) preparedOn(table string) *preparedTxn {
	for _, p := range c.Prepared {
		for _, a := range p.Appends {
			if a.Table == table {
				return p
			}
		}
		for _, d := range p.Deletes {
			if d.Table == table {
				return p
			}
		}
	}
	return nil
}

// prepared returns the prepared transaction id, or nil.
func (c *catalog) prepared(id string) (int, *preparedTxn) {
	i, ok := slices.BinarySearchFunc(c.Prepared, id, func(p *preparedTxn, id string) int { return strings.Compare(p.ID, id) })
	if !ok {
		return i, nil
	}
	return i, c.Prepared[i]
}

// state returns what the catalog knows of transaction id.
func (c *catalog) state(id string) TxnState {
	if _, p := c.prepared(id); p != nil {
		return TxnPrepared
	}
	for i := len(c.Resolved) - 1; i >= 0; i-- {
		if r := c.Resolved[i]; r.ID == id {
			if r.Committed {
				return TxnCommitted
			}
			return TxnAborted
		}
	}
	return TxnUnknown
}

// resolve removes prepared transaction id (if there) and remembers its outcome.
func (c *catalog) resolve(id string, committed bool) {
	if i, p := c.prepared(id); p != nil {
		c.Prepared = slices.Delete(slices.Clone(c.Prepared), i, i+1)
	}
	res := append(slices.Clone(c.Resolved), resolvedTxn{ID: id, Committed: committed})
	if len(res) > maxResolved {
		res = res[len(res)-maxResolved:]
	}
	c.Resolved = res
}

// newStoreID returns a random store identity.
func newStoreID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("storage: no randomness for a store ID: %v", err))
	}
	return "st-" + hex.EncodeToString(b[:])
}

// ID is the store's identity: random, made when the store was created, kept for good.
func (s *Store) ID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur.cat.StoreID
}

// PrepareResult describes a prepared transaction.
type PrepareResult struct {
	Version  uint64 // the catalog version that recorded it
	Appended int64  // rows its appends add
	// Deleted counts rows its deletes mark that were live when it was prepared.
	Deleted int64
}

// Prepare is the first phase of a two-phase commit: it finishes the transaction's writers,
// makes every file durable, and records the transaction under id (with the coordinator's
// meta) in a new catalog version, without making its changes visible. Afterwards only
// CommitPrepared or AbortPrepared of id (possibly after a restart) end it; the Txn itself is
// finished. Only appends and deletes may be prepared. On error nothing is recorded.
func (tx *Txn) Prepare(ctx context.Context, id string, meta map[string]string) (PrepareResult, error) {
	var res PrepareResult
	if err := tx.usable(); err != nil {
		return res, err
	}
	if !txnIDPattern.MatchString(id) {
		tx.Abort()
		return res, fmt.Errorf("storage: transaction ID %q: want 1 to 128 of A-Z a-z 0-9 . _ : -", id)
	}
	for _, op := range tx.ops {
		if op.kind != opAppend {
			tx.Abort()
			return res, fmt.Errorf("storage: only appends and deletes can be prepared, not a replace, drop or compaction of %q", op.table)
		}
	}
	if err := tx.finishWriters(ctx); err != nil {
		tx.Abort()
		return res, err
	}
	s := tx.store
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	cur := s.catalog()
	if st := cur.state(id); st != TxnUnknown {
		tx.Abort()
		return res, fmt.Errorf("%w: %s is %s", ErrTxnExists, id, st)
	}
	next := cur.clone()
	next.Version = cur.Version + 1
	p := &preparedTxn{ID: id, Meta: meta, Version: next.Version}
	for _, op := range tx.ops {
		t := cur.table(op.table)
		if t == nil || t.ID != op.baseID {
			tx.Abort()
			return res, fmt.Errorf("%w: table %q was replaced or dropped while rows were appended to it", ErrConflict, op.table)
		}
		var rows int64
		for _, sm := range op.writer.segments {
			rows += sm.Rows
		}
		res.Appended += rows
		p.Appends = append(p.Appends, preparedAppend{Table: op.table, TableID: t.ID, Rows: rows, Segments: op.writer.segments})
	}
	for _, segID := range tx.deleteOrder {
		pd := tx.deletes[segID]
		t := cur.table(pd.table)
		if t == nil || t.ID != pd.baseID {
			tx.Abort()
			return res, fmt.Errorf("%w: table %q was replaced or dropped while rows were deleted from it", ErrConflict, pd.table)
		}
		i := slices.IndexFunc(t.Segments, func(s *segmentMeta) bool { return s.ID == segID })
		if i < 0 {
			tx.Abort()
			return res, fmt.Errorf("%w: segment %d of %q is gone (compacted?)", ErrConflict, segID, pd.table)
		}
		sm := t.Segments[i]
		old, err := s.deletes(sm)
		if err != nil {
			tx.Abort()
			return res, err
		}
		count := pd.bits.countRange(0, sm.Rows)
		fresh := count
		for w := range old {
			fresh -= int64(popcount(pd.bits[w] & old[w]))
		}
		res.Deleted += fresh
		data := encodeDeletes(sm.Rows, pd.bits)
		rel := path.Join(path.Dir(sm.File), fmt.Sprintf("seg-%08d.pdel-%08d", segID, next.Version))
		abs := filepath.Join(s.dir, filepath.FromSlash(rel))
		tx.files = append(tx.files, abs)
		if err := s.writeDeleteFile(abs, data); err != nil {
			tx.Abort()
			return res, err
		}
		p.Deletes = append(p.Deletes, preparedDelete{Table: pd.table, TableID: t.ID, Segment: segID, File: rel,
			Rows: sm.Rows, Count: count, Size: int64(len(data)), CRC: crc32c(data)})
	}
	i, _ := cur.prepared(id)
	next.Prepared = slices.Insert(slices.Clone(cur.Prepared), i, p)
	next.NextSegmentID = max(next.NextSegmentID, s.nextSegmentID.Load())
	published, err := s.installCatalog(next)
	if !published {
		tx.Abort()
		return res, fmt.Errorf("storage: prepare: %w", err)
	}
	tx.finish() // the files now belong to the catalog, even if it is in doubt
	res.Version = next.Version
	if err != nil {
		// Prepared, but a crash may forget it: the coordinator aborts (AbortPrepared of an
		// ID the store does not know records the abort), or commits after asking again.
		return res, fmt.Errorf("storage: prepare: %w", err)
	}
	return res, nil
}

// CommitPrepared is the second phase of a two-phase commit that decided to commit: the
// prepared transaction's appends and deletes become visible in a new catalog version.
// Committing a transaction already committed succeeds again (and changes nothing); one that
// was aborted fails with ErrTxnAborted, one never prepared (or resolved long ago) with
// ErrTxnUnknown. It returns the catalog version that holds the changes.
func (s *Store) CommitPrepared(ctx context.Context, id string) (uint64, error) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	cur := s.catalog()
	_, p := cur.prepared(id)
	if p == nil {
		switch cur.state(id) {
		case TxnCommitted:
			if err := s.settle(); err != nil {
				return 0, fmt.Errorf("storage: commit of prepared transaction %s: %w", id, err)
			}
			return cur.Version, nil
		case TxnAborted:
			return 0, fmt.Errorf("%w: %s", ErrTxnAborted, id)
		}
		return 0, fmt.Errorf("%w: %s", ErrTxnUnknown, id)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	next := cur.clone()
	next.Version = cur.Version + 1
	next.resolve(id, true)
	for _, a := range p.Appends {
		t := next.table(a.Table)
		if t == nil || t.ID != a.TableID {
			// Cannot happen: a replace or drop of a table with a prepared transaction fails.
			return 0, fmt.Errorf("storage: commit of prepared transaction %s: table %q changed incarnation", id, a.Table)
		}
		nt := *t
		nt.Segments = append(slices.Clone(t.Segments), a.Segments...)
		next.setTable(a.Table, &nt)
	}
	var written []string
	fail := func(err error) (uint64, error) {
		for _, f := range written {
			removeQuietly(f)
		}
		return 0, fmt.Errorf("storage: commit of prepared transaction %s: %w", id, err)
	}
	for _, d := range p.Deletes {
		bits, err := s.readBitmap(d.File, d.Size, d.CRC, d.Rows)
		if err != nil {
			return fail(err)
		}
		f, err := s.mergeDeletes(next, d.Table, d.TableID, d.Segment, bits)
		if f != "" {
			written = append(written, f)
		}
		if err != nil {
			return fail(err)
		}
	}
	published, err := s.installCatalog(next)
	if !published {
		return fail(err)
	}
	if err != nil { // committed (the catalog names the delete files), but in doubt
		return next.Version, fmt.Errorf("storage: commit of prepared transaction %s: %w", id, err)
	}
	return next.Version, nil
}

// AbortPrepared ends prepared transaction id without applying it; its files are removed once
// no snapshot names them. Aborting an ID the store does not know records it as aborted, so
// that a late Prepare of it fails; aborting a committed transaction fails with
// ErrTxnCommitted.
func (s *Store) AbortPrepared(id string) error {
	if !txnIDPattern.MatchString(id) {
		return fmt.Errorf("storage: transaction ID %q: want 1 to 128 of A-Z a-z 0-9 . _ : -", id)
	}
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	cur := s.catalog()
	switch cur.state(id) {
	case TxnAborted:
		if err := s.settle(); err != nil {
			return fmt.Errorf("storage: abort of prepared transaction %s: %w", id, err)
		}
		return nil
	case TxnCommitted:
		return fmt.Errorf("%w: %s", ErrTxnCommitted, id)
	}
	next := cur.clone()
	next.Version = cur.Version + 1
	next.resolve(id, false)
	if _, err := s.installCatalog(next); err != nil {
		return fmt.Errorf("storage: abort of prepared transaction %s: %w", id, err)
	}
	return nil
}

// TxnState reports what the store knows of transaction id, durably: an outcome is reported
// only once the catalog recording it is durable. While a commit has left the catalog in
// doubt (DIR's fsync failed), a crash may bring back any version since the last durable one,
// so an outcome that differs in one of them is TxnInDoubt until Settle succeeds. (A
// coordinator told "committed" commits the other stores; if this one then crashed and came
// back with the transaction prepared, recovery would abort it here: a split outcome.)
func (s *Store) TxnState(id string) TxnState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.cur.cat.state(id)
	if st != TxnCommitted && st != TxnAborted {
		return st
	}
	for _, sn := range s.inDoubt {
		if sn.cat.state(id) != st {
			return TxnInDoubt
		}
	}
	return st
}

// Settle makes the current catalog durable if a commit left it in doubt (fsyncs DIR again),
// after which TxnState reports the outcomes it held back. Its error wraps ErrNotDurable.
func (s *Store) Settle() error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	return s.settle()
}

// PreparedTxn describes a transaction waiting for its outcome.
type PreparedTxn struct {
	ID      string
	Meta    map[string]string
	Version uint64   // the catalog version that prepared it
	Tables  []string // the tables it writes
}

// Prepared lists the snapshot's prepared transactions, by ID.
func (sn *Snapshot) Prepared() []PreparedTxn {
	out := make([]PreparedTxn, 0, len(sn.cat.Prepared))
	for _, p := range sn.cat.Prepared {
		pt := PreparedTxn{ID: p.ID, Meta: p.Meta, Version: p.Version}
		add := func(t string) {
			if !slices.Contains(pt.Tables, t) {
				pt.Tables = append(pt.Tables, t)
			}
		}
		for _, a := range p.Appends {
			add(a.Table)
		}
		for _, d := range p.Deletes {
			add(d.Table)
		}
		out = append(out, pt)
	}
	return out
}

// preparedSegments returns the segments of table that prepared transactions delete from.
func (c *catalog) preparedSegments(table string) map[uint64]bool {
	out := map[uint64]bool{}
	for _, p := range c.Prepared {
		for _, d := range p.Deletes {
			if d.Table == table {
				out[d.Segment] = true
			}
		}
	}
	return out
}

func popcount(w uint64) int { return bits.OnesCount64(w) }

// removeQuietly removes a file a failed commit wrote; Open removes it anyway if this fails.
func removeQuietly(path string) { _ = os.Remove(path) }
