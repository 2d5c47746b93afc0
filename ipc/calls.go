package ipc

import (
	"sync"
	"sync/atomic"
)

// callSlots is the number of slots a connection keeps for pending Go calls. Ids are
// allocated in increasing order, so slot id%callSlots is free unless a call callSlots ids
// older is still pending; such a collision spills to a locked map.
const callSlots = 1024

// callTaking marks a slot whose callback is being taken.
const callTaking = 1 << 32

// callSlot holds one pending call. state is 0 when free, the call's stream id while it is
// pending, and id|callTaking while a taker copies done out. done is written only by the
// adder while the slot is free, and read only by the taker that moved state to taking, so
// the atomic state orders every access to it.
type callSlot struct {
	state atomic.Uint64
	done  CallDone
}

// callTable maps the stream ids of pending Go calls to their callbacks without a lock on
// the common path: the sender adds (under the frame writer's lock, so adds are serialised
// and ids increase), the reading goroutine takes, and a failing connection drains.
type callTable struct {
	slots   [callSlots]callSlot
	pending atomic.Int64 // calls added and not yet taken

	mu     sync.Mutex
	spill  map[uint32]CallDone
	nspill atomic.Int64
}

// add records done for id and reports whether the table was empty before. Adds must be
// serialised by the caller.
func (t *callTable) add(id uint32, done CallDone) (first bool) {
	s := &t.slots[id%callSlots]
	if s.state.Load() == 0 {
		s.done = done
		s.state.Store(uint64(id))
	} else {
		t.mu.Lock()
		if t.spill == nil {
			t.spill = make(map[uint32]CallDone)
		}
		t.spill[id] = done
		t.nspill.Add(1)
		t.mu.Unlock()
	}
	return t.pending.Add(1) == 1
}

// take removes and returns the callback of the pending call id, or nil.
func (t *callTable) take(id uint32) CallDone {
	s := &t.slots[id%callSlots]
	if s.state.CompareAndSwap(uint64(id), uint64(id)|callTaking) {
		d := s.done
		s.done = nil
		s.state.Store(0)
		t.pending.Add(-1)
		return d
	}
	if t.nspill.Load() == 0 {
		return nil
	}
	t.mu.Lock()
	d := t.spill[id]
	if d != nil {
		delete(t.spill, id)
		t.nspill.Add(-1)
		t.pending.Add(-1)
	}
	t.mu.Unlock()
	return d
}

// has reports whether id is a pending call.
func (t *callTable) has(id uint32) bool {
	if t.slots[id%callSlots].state.Load() == uint64(id) {
		return true
	}
	if t.nspill.Load() == 0 {
		return false
	}
	t.mu.Lock()
	_, ok := t.spill[id]
	t.mu.Unlock()
	return ok
}

// drain removes every pending call and returns their callbacks. The caller must make sure
// no add runs concurrently (the connection's writer has failed).
func (t *callTable) drain() []CallDone {
	var out []CallDone
	if t.pending.Load() == 0 {
		return nil
	}
	for i := range t.slots {
		s := &t.slots[i]
		v := s.state.Load()
		if v == 0 || v&callTaking != 0 {
			continue
		}
		if s.state.CompareAndSwap(v, v|callTaking) {
			out = append(out, s.done)
			s.done = nil
			s.state.Store(0)
			t.pending.Add(-1)
		}
	}
	t.mu.Lock()
	for id, d := range t.spill {
		out = append(out, d)
		delete(t.spill, id)
		t.nspill.Add(-1)
		t.pending.Add(-1)
	}
	t.mu.Unlock()
	return out
}
