package exec

import (
	"context"
	"fmt"

	"github.com/colinkdb/colink/exec/vec"
)

// Limit skips Offset rows and passes at most Limit rows (Limit < 0: no limit). It stops
// pulling its input once the limit is reached.
type Limit struct {
	input  Operator
	limit  int64
	offset int64
	seen   int64 // rows consumed so far, including skipped ones
	ident  []int32
	sel    []int32
	out    vec.Batch
}

// NewLimit returns the limit operator.
func NewLimit(input Operator, limit, offset int64) (*Limit, error) {
	if offset < 0 {
		return nil, fmt.Errorf("limit: negative offset %d", offset)
	}
	return &Limit{input: input, limit: limit, offset: offset}, nil
}

// Types implements Operator.
func (l *Limit) Types() []vec.Type { return l.input.Types() }

// Init implements Operator.
func (l *Limit) Init(ctx context.Context) error { return l.input.Init(ctx) }

// Next implements Operator.
func (l *Limit) Next(ctx context.Context) (*vec.Batch, error) {
	for {
		if l.limit >= 0 && l.seen >= l.offset+l.limit {
			return nil, nil
		}
		b, err := l.input.Next(ctx)
		if err != nil || b == nil {
			return nil, err
		}
		n := int64(b.Len())
		from := max(l.offset-l.seen, 0)
		to := n
		if l.limit >= 0 {
			to = min(n, l.offset+l.limit-l.seen)
		}
		l.seen += n
		if from >= to {
			continue
		}
		if from == 0 && to == n {
			return b, nil
		}
		rows := activeRowsOf(b.Sel, b.N, &l.ident)
		l.sel = append(l.sel[:0], rows[from:to]...)
		l.out = vec.Batch{Cols: b.Cols, N: b.N, Sel: l.sel}
		return &l.out, nil
	}
}

// Close implements Operator.
func (l *Limit) Close() error { return l.input.Close() }

// Distinct passes the first occurrence of every distinct row of its input, streaming (a
// row is emitted as soon as it is first seen). NULLs equal NULLs, as DISTINCT requires.
type Distinct struct {
	input   Operator
	ht      *hashTable
	acct    *Account
	scratch probeScratch
	ids     []int32
	ident   []int32
	fresh   []int32
	out     vec.Batch
}

// NewDistinct returns the DISTINCT operator over all input columns.
func NewDistinct(input Operator, budget *Budget) *Distinct {
	acct := budget.NewAccount("distinct")
	return &Distinct{input: input, acct: acct, ht: newHashTable(input.Types(), acct, nil)}
}

// Types implements Operator.
func (d *Distinct) Types() []vec.Type { return d.input.Types() }

// Init implements Operator.
func (d *Distinct) Init(ctx context.Context) error { return d.input.Init(ctx) }

// Next implements Operator.
func (d *Distinct) Next(ctx context.Context) (*vec.Batch, error) {
	for {
		b, err := d.input.Next(ctx)
		if err != nil || b == nil {
			return nil, err
		}
		rows := activeRowsOf(b.Sel, b.N, &d.ident)
		d.scratch.prepare(b.N)
		d.ids = growTo(d.ids[:0], b.N)
		hashRows(b.Cols, rows, d.scratch.h, d.ht.seed)
		d.fresh = d.fresh[:0]
		if err := d.ht.findOrInsert(b.Cols, rows, d.ids, &d.scratch, &d.fresh); err != nil {
			return nil, err
		}
		if len(d.fresh) == 0 {
			continue
		}
		d.out = vec.Batch{Cols: b.Cols, N: b.N, Sel: d.fresh}
		return &d.out, nil
	}
}

// Close implements Operator.
func (d *Distinct) Close() error {
	d.acct.Close()
	return d.input.Close()
}
