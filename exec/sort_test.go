package exec

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/colinkdb/colink/exec/vec"
)

// shuffledTable is n rows of (k int64, s string) in a random order.
func shuffledTable(n int) *vec.Table {
	tab := &vec.Table{Names: []string{"k", "s"}, Types: []vec.Type{vec.Int64Type, vec.StringType}}
	r := rand.New(rand.NewPCG(1, 2))
	for _, i := range r.Perm(n) {
		tab.Rows = append(tab.Rows, []vec.Datum{vec.Int64Datum(int64(i)), vec.StringDatum(fmt.Sprintf("row %08d", i))})
	}
	return tab
}

// drain reads op to its end (or its first error), then closes it.
func drain(t *testing.T, op Operator) error {
	t.Helper()
	ctx := context.Background()
	if err := op.Init(ctx); err != nil {
		return err
	}
	var err error
	for {
		var b *vec.Batch
		if b, err = op.Next(ctx); err != nil || b == nil {
			break
		}
	}
	if cerr := op.Close(); cerr != nil {
		t.Errorf("close: %v", cerr)
	}
	return err
}

// TestSortChargesWorkingMemory: a sort charges its budget for what it holds while it
// sorts — the buffered rows, the permutation and the (key, row) pairs — and a budget one
// byte short of that fails it with the memory-limit error (1041) naming the sort.
func TestSortChargesWorkingMemory(t *testing.T) {
	const n = 20_000
	tab := shuffledTable(n)
	for _, c := range []struct {
		key     int
		perPair int64 // bytes of sortRows' pair per row
	}{{0, 16}, {1, 24}} {
		budget := NewBudget(0)
		s, err := NewSort(tableSource(tab, 0, n, 1024), []SortKey{{Col: c.key}}, budget)
		if err != nil {
			t.Fatal(err)
		}
		if err := drain(t, s); err != nil {
			t.Fatal(err)
		}
		peak := budget.Peak()
		if want := s.store.memSize() + n*4 + n*c.perPair; peak < want {
			t.Errorf("key %d: peak charge %d, want at least %d (rows %d + permutation %d + pairs %d)",
				c.key, peak, want, s.store.memSize(), n*4, n*c.perPair)
		}
		if budget.Used() != 0 {
			t.Errorf("key %d: %d bytes still charged after Close", c.key, budget.Used())
		}

		budget = NewBudget(peak - 1)
		s, err = NewSort(tableSource(tab, 0, n, 1024), []SortKey{{Col: c.key}}, budget)
		if err != nil {
			t.Fatal(err)
		}
		err = drain(t, s)
		var ve *vec.Error
		if !errors.Is(err, ErrMemoryLimit) || !errors.As(err, &ve) || ve.Code != vec.CodeOutOfResources ||
			!strings.Contains(err.Error(), "sort needs") {
			t.Errorf("key %d: budget %d: error %v, want the sort's memory-limit error", c.key, peak-1, err)
		}
		if budget.Used() != 0 {
			t.Errorf("key %d: %d bytes still charged after a failed sort", c.key, budget.Used())
		}
	}
}

// TestTopNChargesWorkingMemory: a top-N whose limit keeps every row sorts them all at the
// end, and charges the row lists and pairs of that sort besides both row stores.
func TestTopNChargesWorkingMemory(t *testing.T) {
	const n = 20_000
	tab := shuffledTable(n)
	budget := NewBudget(0)
	top, err := NewTopN(tableSource(tab, 0, n, 1024), []SortKey{{Col: 0}}, n, 0, budget)
	if err != nil {
		t.Fatal(err)
	}
	if err := drain(t, top); err != nil {
		t.Fatal(err)
	}
	// The limit exceeds the input: the only compaction is the final sort, which moved the
	// rows from the old store (now spare) to the new.
	if want := top.spare.memSize() + n*2*4 + n*16; budget.Peak() < want {
		t.Errorf("peak charge %d, want at least %d", budget.Peak(), want)
	}
	top, err = NewTopN(tableSource(tab, 0, n, 1024), []SortKey{{Col: 0}}, n, 0, NewBudget(budget.Peak()-1))
	if err != nil {
		t.Fatal(err)
	}
	if err := drain(t, top); !errors.Is(err, ErrMemoryLimit) || !strings.Contains(err.Error(), "top-n needs") {
		t.Errorf("budget one byte short: %v", err)
	}
}
