package primproc

import (
	"testing"
	"time"

	"github.com/colinkdb/colink/storage"
)

func TestPins(t *testing.T) {
	s, err := storage.Open(t.TempDir(), storage.Options{CacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ps := newPins(time.Minute)
	now := time.Unix(1000, 0)
	a := ps.add(s.Snapshot(), now)
	b := ps.add(s.Snapshot(), now)
	if a == b || ps.count() != 2 {
		t.Fatalf("pins %d %d, count %d", a, b, ps.count())
	}
	// A pin in use survives unpin until its fragment ends.
	if _, ok := ps.acquire(a, now); !ok {
		t.Fatal("acquire failed")
	}
	ps.drop([]uint64{a})
	if ps.count() != 2 {
		t.Errorf("a pin in use went away: %d left", ps.count())
	}
	if _, ok := ps.acquire(a, now); !ok {
		t.Error("a dropped pin still in use cannot be acquired by the same query")
	}
	ps.release(a, now)
	ps.release(a, now)
	if ps.count() != 1 {
		t.Errorf("%d pins after the last use of a dropped one", ps.count())
	}
	// An unused pin expires; a used one is kept.
	ps.sweep(now.Add(30 * time.Second))
	if ps.count() != 1 {
		t.Errorf("expired early: %d", ps.count())
	}
	ps.sweep(now.Add(2 * time.Minute))
	if ps.count() != 0 {
		t.Errorf("not expired: %d", ps.count())
	}
	if _, ok := ps.acquire(b, now); ok {
		t.Error("an expired pin was acquired")
	}
	c := ps.add(s.Snapshot(), now)
	ps.acquire(c, now)
	ps.sweep(now.Add(time.Hour))
	if ps.count() != 1 {
		t.Error("a pin in use expired")
	}
	ps.release(c, now)
	ps.closeAll()
	if ps.count() != 0 {
		t.Errorf("%d pins after closeAll", ps.count())
	}
}
