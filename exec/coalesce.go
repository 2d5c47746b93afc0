package exec

import (
	"context"

	"github.com/colinkdb/colink/exec/vec"
)

// Coalesce gathers the rows of sparse batches into dense ones. A selective join or filter
// passes its input's vectors on with a selection of a few rows (Q11's partsupp probing the
// suppliers of one nation at SF 10: 41 rows of 1024), and every operator above it then pays
// its per-batch cost — vectors sized for the whole batch, a call per expression node — for
// those few: the projection and aggregation over Q11's 4 % of partsupp took longer than the
// scan and probe of all of it. Coalesce copies the active rows of a batch that has fewer
// than a quarter of its rows active into a batch of its own and hands that on once it holds
// at least three quarters of batchRows rows (or the input ends). Denser batches pass
// through untouched, after the rows gathered so far. Row order is kept.
type Coalesce struct {
	input     Operator
	batchRows int
	acc       *vec.Batch // the rows gathered so far (N of them, no selection)
	held      *vec.Batch // a dense input batch that waits for acc to go out first
	sent      bool       // acc went out on the last Next: empty it first
	done      bool
}

// NewCoalesce returns the operator over input, for batches of at most batchRows rows.
func NewCoalesce(input Operator, batchRows int) *Coalesce {
	if batchRows <= 0 {
		batchRows = vec.DefaultBatchRows
	}
	return &Coalesce{input: input, batchRows: batchRows, acc: vec.NewBatch(input.Types())}
}

// Types implements Operator.
func (c *Coalesce) Types() []vec.Type { return c.input.Types() }

// Init implements Operator.
func (c *Coalesce) Init(ctx context.Context) error { return c.input.Init(ctx) }

// Next implements Operator.
func (c *Coalesce) Next(ctx context.Context) (*vec.Batch, error) {
	if c.sent {
		c.sent = false
		for _, v := range c.acc.Cols {
			v.Reset()
		}
		c.acc.N = 0
	}
	if c.held != nil {
		b := c.held
		c.held = nil
		return b, nil
	}
	for !c.done {
		b, err := c.input.Next(ctx)
		if err != nil {
			return nil, err
		}
		if b == nil {
			c.done = true
			break
		}
		n := b.Len()
		if 4*n >= b.N || n > c.batchRows/4 {
			if c.acc.N == 0 {
				return b, nil
			}
			// The gathered rows go first; b's vectors stay valid until the next call
			// to the input's Next, which comes after b is returned.
			c.held = b
			c.sent = true
			return c.acc, nil
		}
		for i, v := range c.acc.Cols {
			v.AppendFrom(b.Cols[i], b.Sel, b.N)
		}
		c.acc.N += n
		if c.acc.N >= c.batchRows*3/4 {
			c.sent = true
			return c.acc, nil
		}
	}
	if c.acc.N > 0 {
		c.sent = true
		return c.acc, nil
	}
	return nil, nil
}

// Close implements Operator.
func (c *Coalesce) Close() error { return c.input.Close() }
