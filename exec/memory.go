package exec

import (
	"errors"
	"fmt"
	"sync"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/units"
)

// ErrMemoryLimit is the sentinel of errors from a query over its memory budget
// (errors.Is(err, ErrMemoryLimit)); the error itself is a *vec.Error with MySQL code 1041.
var ErrMemoryLimit = errors.New("query memory limit exceeded")

// Budget is one query's memory limit, shared by the operators that buffer rows (hash
// tables, sorts, top-N). It is safe for concurrent use. A nil *Budget is unlimited.
//
// A budget may carry a recycling pool (NewBudgetPool): hash aggregates and join tables
// then take their large arrays (hash indexes, keys, aggregate states, row chains) from it
// and give them back when they close, so that a daemon's queries reuse warm memory.
//
// A budget may have a parent (Child): every charge is also a charge to the parent, and
// fails when either would go over its limit. A daemon keeps one parent for all its queries,
// so that the sum of their memory is bounded too, not only each one's.
type Budget struct {
	mu     sync.Mutex
	limit  int64
	used   int64
	peak   int64
	pool   *vec.Pool
	parent *Budget
	// what names the limit in errors: "query memory limit" or the parent's own words.
	what string
}

// NewBudget returns a budget of limit bytes (limit <= 0: unlimited, but still counted).
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// NewBudgetPool returns a budget of limit bytes whose operators take their large arrays
// from pool (nil: the Go heap). The pool may be shared with other queries.
func NewBudgetPool(limit int64, pool *vec.Pool) *Budget { return &Budget{limit: limit, pool: pool} }

// NewSharedBudget returns the budget a daemon's queries draw from together (limit <= 0:
// unlimited, but counted); what names its limit in errors, e.g. "--query-memory-total".
func NewSharedBudget(limit int64, what string) *Budget {
	return &Budget{limit: limit, what: what}
}

// Child returns a budget of limit bytes whose charges are also charges to b, with pool for
// its operators' arrays. A nil b gives a budget without a parent.
func (b *Budget) Child(limit int64, pool *vec.Pool) *Budget {
	return &Budget{limit: limit, pool: pool, parent: b}
}

// Pool is the budget's recycling pool (nil: none).
func (b *Budget) Pool() *vec.Pool {
	if b == nil {
		return nil
	}
	return b.pool
}

// Used is the bytes currently charged.
func (b *Budget) Used() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Peak is the most bytes charged at once.
func (b *Budget) Peak() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}

// Limit is the budget's limit (0: unlimited).
func (b *Budget) Limit() int64 {
	if b == nil {
		return 0
	}
	return b.limit
}

// Account is one operator's share of a budget.
type Account struct {
	b    *Budget
	what string
	n    int64
}

// NewAccount opens an account named after what it holds (it appears in errors).
func (b *Budget) NewAccount(what string) *Account { return &Account{b: b, what: what} }

// Resize sets the account's charge to n bytes, failing (and keeping the old charge) if
// the budget would be exceeded.
func (a *Account) Resize(n int64) error {
	if a == nil || a.b == nil {
		return nil
	}
	b := a.b
	b.mu.Lock()
	defer b.mu.Unlock()
	delta := n - a.n
	if delta > 0 && b.limit > 0 && b.used+delta > b.limit {
		return &vec.Error{Code: vec.CodeOutOfResources, SQLState: "HY000", Err: ErrMemoryLimit,
			Msg: fmt.Sprintf("query memory limit exceeded: %s needs %s more with %s in use, limit is %s",
				a.what, FormatBytes(delta), FormatBytes(b.used), FormatBytes(b.limit))}
	}
	if p := b.parent; p != nil {
		// The parent's lock nests inside the child's: a budget's parent has none.
		if err := p.charge(delta, a.what); err != nil {
			return err
		}
	}
	b.used += delta
	a.n = n
	b.peak = max(b.peak, b.used)
	return nil
}

// charge adds delta to a shared budget, failing if that takes it over its limit.
func (b *Budget) charge(delta int64, what string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if delta > 0 && b.limit > 0 && b.used+delta > b.limit {
		return &vec.Error{Code: vec.CodeOutOfResources, SQLState: "HY000", Err: ErrMemoryLimit,
			Msg: fmt.Sprintf("memory limit of all queries exceeded (%s): %s needs %s more with %s in use by all queries, limit is %s",
				b.what, what, FormatBytes(delta), FormatBytes(b.used), FormatBytes(b.limit))}
	}
	b.used += delta
	b.peak = max(b.peak, b.used)
	return nil
}

// Size is the account's charge.
func (a *Account) Size() int64 {
	if a == nil {
		return 0
	}
	return a.n
}

// Close returns the account's charge to the budget.
func (a *Account) Close() {
	if a != nil {
		_ = a.Resize(0)
	}
}

// FormatBytes prints a byte count for people, in the largest binary unit it reaches with
// one decimal ("1.5 GiB", "512 B"); memory-limit errors use it.
func FormatBytes(n int64) string { return units.FormatBytes(n) }
