package ipc

// callSlots is the number of slots a connection keeps for pending Go calls. Ids are
// allocated in increasing order, so slot id%callSlots is free unless a call callSlots ids
// older is still pending; such a collision spills to a map.
const callSlots = 1024

// callSlot holds one pending call: id 0 is a free slot.
type callSlot struct {
	id   uint32
	done CallDone
}

// callTable maps the stream ids of a client's pending unary calls to their callbacks. It is
// the core's, used under the connection's lock.
type callTable struct {
	slots   [callSlots]callSlot
	pending int // calls added and not yet taken
	spill   map[uint32]CallDone
}

// add records done for id and reports whether the table was empty before.
func (t *callTable) add(id uint32, done CallDone) (first bool) {
	if s := &t.slots[id%callSlots]; s.id == 0 {
		s.id, s.done = id, done
	} else {
		if t.spill == nil {
			t.spill = make(map[uint32]CallDone)
		}
		t.spill[id] = done
	}
	t.pending++
	return t.pending == 1
}

// take removes and returns the callback of the pending call id, or nil.
func (t *callTable) take(id uint32) CallDone {
	if id == 0 {
		return nil
	}
	if s := &t.slots[id%callSlots]; s.id == id {
		d := s.done
		*s = callSlot{}
		t.pending--
		return d
	}
	if d, ok := t.spill[id]; ok {
		delete(t.spill, id)
		t.pending--
		return d
	}
	return nil
}

// has reports whether id is a pending call.
func (t *callTable) has(id uint32) bool {
	if id == 0 {
		return false
	}
	if t.slots[id%callSlots].id == id {
		return true
	}
	_, ok := t.spill[id]
	return ok
}

// drain removes every pending call, calling f with each.
func (t *callTable) drain(f func(id uint32, done CallDone)) {
	if t.pending == 0 {
		return
	}
	for i := range t.slots {
		if s := &t.slots[i]; s.id != 0 {
			id, d := s.id, s.done
			*s = callSlot{}
			f(id, d)
		}
	}
	for id, d := range t.spill {
		delete(t.spill, id)
		f(id, d)
	}
	t.pending = 0
}
