package primproc

import (
	"context"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/storage"
)

// DefaultPinTTL is how long a snapshot pin may go unused before the primproc drops it (a
// client that died without unpinning).
const DefaultPinTTL = 10 * time.Minute

// pins holds the snapshots clients pinned for their queries: every fragment of a query names
// the same pin and so reads the same catalog version, whatever commits meanwhile.
type pins struct {
	ttl time.Duration

	mu   sync.Mutex
	next uint64
	byID map[uint64]*pin
}

// pin is one pinned snapshot. It is released when unpinned (or expired) and no fragment
// uses it.
type pin struct {
	snap     *storage.Snapshot
	users    int
	dropped  bool
	lastUsed time.Time
}

func newPins(ttl time.Duration) *pins {
	if ttl <= 0 {
		ttl = DefaultPinTTL
	}
	return &pins{ttl: ttl, next: 1, byID: map[uint64]*pin{}}
}

// add pins snap (the caller's reference passes to the pin) and returns its id.
func (ps *pins) add(snap *storage.Snapshot, now time.Time) uint64 {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.sweepLocked(now)
	id := ps.next
	ps.next++
	ps.byID[id] = &pin{snap: snap, lastUsed: now}
	return id
}

// acquire returns pin id's snapshot for a fragment, which must call release when done.
func (ps *pins) acquire(id uint64, now time.Time) (*storage.Snapshot, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.byID[id]
	if p == nil {
		return nil, false
	}
	p.users++
	p.lastUsed = now
	return p.snap, true
}

// release ends a fragment's use of pin id.
func (ps *pins) release(id uint64, now time.Time) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.byID[id]
	if p == nil {
		return
	}
	p.users--
	p.lastUsed = now
	if p.dropped && p.users == 0 {
		delete(ps.byID, id)
		p.snap.Release()
	}
}

// drop unpins the pins (unknown ids are ignored).
func (ps *pins) drop(ids []uint64) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, id := range ids {
		ps.dropLocked(id)
	}
}

func (ps *pins) dropLocked(id uint64) {
	p := ps.byID[id]
	if p == nil || p.dropped {
		return
	}
	p.dropped = true
	if p.users == 0 {
		delete(ps.byID, id)
		p.snap.Release()
	}
}

// sweep drops pins unused for longer than the TTL.
func (ps *pins) sweep(now time.Time) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.sweepLocked(now)
}

func (ps *pins) sweepLocked(now time.Time) {
	for id, p := range ps.byID {
		if p.users == 0 && now.Sub(p.lastUsed) > ps.ttl {
			ps.dropLocked(id)
		}
	}
}

// count is the number of live pins.
func (ps *pins) count() int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return len(ps.byID)
}

// closeAll releases every pin (the daemon is stopping).
func (ps *pins) closeAll() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for id, p := range ps.byID {
		delete(ps.byID, id)
		p.snap.Release()
	}
}

// pinSnapshot pins the current catalog version for a query and reports the transactions
// waiting for their outcome (the client resolves those of a coordinator that died before it
// pins again: a query must not see one primproc's share of a transaction without another's).
func (d *Daemon) pinSnapshot(ctx context.Context, st *ipc.Stream) error {
	var a link.PinArgs
	if err := st.DecodeArgs(&a); err != nil {
		return err
	}
	snap := d.store.Snapshot()
	end := link.PinEnd{Version: snap.Version(), StoreID: d.store.ID()}
	for _, p := range snap.Prepared() {
		end.Prepared = append(end.Prepared, link.PreparedTxn{Txn: p.ID, Decider: p.Meta[metaDecider], Tables: p.Tables})
	}
	end.Pin = d.pins.add(snap, time.Now())
	b, err := msgpack.Marshal(&end)
	if err != nil {
		d.pins.drop([]uint64{end.Pin})
		return ipc.Errorf(ipc.CodeInternal, "pin: %v", err)
	}
	if err := st.CloseSend(b); err != nil {
		d.pins.drop([]uint64{end.Pin})
		return err
	}
	return nil
}

// unpinSnapshots drops pins.
func (d *Daemon) unpinSnapshots(ctx context.Context, st *ipc.Stream) error {
	var a link.UnpinArgs
	if err := st.DecodeArgs(&a); err != nil {
		return err
	}
	d.pins.drop(a.Pins)
	return st.CloseSendMap(map[string]any{"pins": d.pins.count()})
}
