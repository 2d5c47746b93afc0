package tpch

import (
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// DefaultBatchRows is the default bound on the rows of one Arrow batch or .tbl block.
const DefaultBatchRows = 64 * 1024

// minBatchRows lets a batch hold any unit (an order has up to seven lineitems).
const minBatchRows = 8

// Generator produces one table's rows — the whole table, one dbgen chunk of it, or one
// refresh set — as Arrow record batches (Next) or as .tbl text (AppendTbl). Both come from
// the same row generation, so they agree row for row. A Generator is not safe for concurrent
// use; run one per chunk to use several cores.
type Generator struct {
	table     tableID
	group     group
	rg        *rowGen
	next, end int64 // unit indexes still to generate: [next, end)
	upd       int64 // refresh set, or 0
	u         unit
	pending   bool // u holds a generated unit that did not fit in the last batch
	b         *batchBuilder
	fmt       tblFormatter
	maxRows   int
}

// GeneratorOption configures a Generator.
type GeneratorOption func(*genConfig) error

type genConfig struct {
	batchRows int
	mem       memory.Allocator
}

// WithBatchRows bounds the rows of each batch (default DefaultBatchRows, at least 8).
func WithBatchRows(n int) GeneratorOption {
	return func(c *genConfig) error {
		if n < minBatchRows {
			return fmt.Errorf("batch rows %d: must be at least %d", n, minBatchRows)
		}
		c.batchRows = n
		return nil
	}
}

// WithAllocator makes batches allocate from mem. The default is a per-generator allocator
// that recycles the buffers of released batches into the next ones.
func WithAllocator(mem memory.Allocator) GeneratorOption {
	return func(c *genConfig) error { c.mem = mem; return nil }
}

// NewGenerator returns a generator for chunk (1-based) of chunks of the table, divided as
// dbgen -C chunks -S chunk divides it; NewGenerator(sc, t, 1, 1) generates the whole table.
// Nation and region are never divided: any chunk count gives the whole table in chunk 1 and
// nothing in the others.
func NewGenerator(sc Scale, table string, chunk, chunks int, opts ...GeneratorOption) (*Generator, error) {
	t, err := lookupTableID(table)
	if err != nil {
		return nil, err
	}
	if chunks < 1 || chunk < 1 || chunk > chunks {
		return nil, fmt.Errorf("chunk %d of %d: want 1 ≤ chunk ≤ chunks", chunk, chunks)
	}
	total, _ := sc.Units(table)
	gr := t.group()
	if gr == groupNation || gr == groupRegion {
		if chunk > 1 {
			total = 0
		}
		chunk, chunks = 1, 1
	}
	first, count, per := unitRange(total, chunk, chunks)
	rg := newRowGen(sc, gr, per, int64(chunk-1))
	return newGenerator(t, rg, first, count, 0, opts)
}

// NewRefreshGenerator returns a generator for refresh set k's (k ≥ 1) RF1 rows of orders
// or lineitem, as dbgen -U writes them to orders.tbl.uK and lineitem.tbl.uK.
func NewRefreshGenerator(sc Scale, table string, k int, opts ...GeneratorOption) (*Generator, error) {
	t, err := lookupTableID(table)
	if err != nil {
		return nil, err
	}
	if t != tOrders && t != tLineitem {
		return nil, fmt.Errorf("refresh sets insert into orders and lineitem, not %s", table)
	}
	if err := checkRefreshSet(k); err != nil {
		return nil, err
	}
	first, count := refreshIndexes(sc, int64(k))
	return newGenerator(t, refreshRowGen(sc, int64(k)), first, count, int64(k), opts)
}

func newGenerator(t tableID, rg *rowGen, first, count, upd int64, opts []GeneratorOption) (*Generator, error) {
	cfg := genConfig{batchRows: DefaultBatchRows}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if cfg.mem == nil {
		cfg.mem = newRecycler(64 << 20)
	}
	return &Generator{table: t, group: t.group(), rg: rg, next: first, end: first + count,
		upd: upd, b: newBatchBuilder(t, cfg.batchRows, cfg.mem), fmt: newTblFormatter(),
		maxRows: cfg.batchRows}, nil
}

// Schema returns the schema of the batches: Table.ArrowSchema of the table.
func (g *Generator) Schema() *arrow.Schema { return g.b.schema }

// Table returns the table's name.
func (g *Generator) Table() string { return g.table.String() }

// Units returns the generator's remaining units (see Scale.Units).
func (g *Generator) Units() int64 {
	n := g.end - g.next
	if g.pending {
		n++
	}
	return n
}

// nextUnit makes the next unit current; false at the end.
func (g *Generator) nextUnit() bool {
	if g.pending {
		g.pending = false
		return true
	}
	if g.next >= g.end {
		return false
	}
	g.rg.make(g.group, g.next, g.upd, &g.u)
	g.next++
	return true
}

// Next returns the next batch of at most the configured rows, or io.EOF after the last.
// The caller owns the batch and must Release it; released batches' buffers are reused.
func (g *Generator) Next() (arrow.RecordBatch, error) {
	for g.nextUnit() {
		if g.b.full(g.u.rows(g.table)) {
			g.pending = true
			return g.b.finish(), nil
		}
		g.b.add(&g.u)
	}
	if rec := g.b.finish(); rec != nil {
		return rec, nil
	}
	return nil, io.EOF
}

// AppendTbl appends the next block of at most the configured rows as .tbl text to dst, or
// returns io.EOF (and dst unchanged) after the last.
func (g *Generator) AppendTbl(dst []byte) ([]byte, error) {
	rows := 0
	for g.nextUnit() {
		n := g.u.rows(g.table)
		if rows > 0 && rows+n > g.maxRows {
			g.pending = true
			return dst, nil
		}
		dst = g.fmt.appendTbl(dst, g.table, &g.u)
		rows += n
	}
	if rows == 0 {
		return dst, io.EOF
	}
	return dst, nil
}

// WriteTbl writes all of the generator's remaining rows to w as .tbl text.
func (g *Generator) WriteTbl(w io.Writer) error {
	buf := make([]byte, 0, 1<<20)
	for {
		var err error
		buf, err = g.AppendTbl(buf[:0])
		if err == io.EOF {
			return nil
		}
		if _, err := w.Write(buf); err != nil {
			return fmt.Errorf("writing %s: %w", g.Table(), err)
		}
	}
}

// Close frees the buffers of a batch under construction. Batches already returned stay
// valid until released.
func (g *Generator) Close() { g.b.discard() }
