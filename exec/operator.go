package exec

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exec/vec"
)

// Operator is a pull iterator over batches, in the manner of CockroachDB's vectorized
// engine: Init once, Next until it returns a nil batch, Close once (also after errors).
//
// A batch returned by Next, and every vector in it, stays valid only until the next call
// to Next on the same operator; a consumer that keeps rows longer copies them. Next never
// returns a non-nil batch without active rows.
type Operator interface {
	// Types lists the output columns' types.
	Types() []vec.Type
	// Init prepares the operator and its inputs.
	Init(ctx context.Context) error
	// Next returns the next batch, or nil at the end of the stream.
	Next(ctx context.Context) (*vec.Batch, error)
	// Close releases the operator's resources and its inputs'.
	Close() error
}

// RecordStream is a source of Arrow record batches: the link's incoming stream, a
// storage scan, or a parallel pipeline. Next returns nil at the end; each record returned
// belongs to the caller, who releases it.
type RecordStream interface {
	Next(ctx context.Context) (arrow.RecordBatch, error)
}

// RecordStreamFunc adapts a function to RecordStream.
type RecordStreamFunc func(ctx context.Context) (arrow.RecordBatch, error)

// Next calls f.
func (f RecordStreamFunc) Next(ctx context.Context) (arrow.RecordBatch, error) { return f(ctx) }

// ReadAll reads s to its end and returns its records (the caller releases them). On an
// error the records read so far are released.
func ReadAll(ctx context.Context, s RecordStream) ([]arrow.RecordBatch, error) {
	var out []arrow.RecordBatch
	for {
		rec, err := s.Next(ctx)
		if err != nil {
			for _, r := range out {
				r.Release()
			}
			return nil, err
		}
		if rec == nil {
			return out, nil
		}
		out = append(out, rec)
	}
}

// Records returns a RecordStream over a fixed list of records (each retained once more, so
// the list stays usable after the stream is read).
func Records(recs ...arrow.RecordBatch) RecordStream {
	i := 0
	return RecordStreamFunc(func(ctx context.Context) (arrow.RecordBatch, error) {
		if i >= len(recs) {
			return nil, nil
		}
		r := recs[i]
		i++
		r.Retain()
		return r, nil
	})
}

// Source turns a RecordStream into an Operator: it hands out zero-copy views of each
// record in batches of at most batchRows rows.
type Source struct {
	stream    RecordStream
	types     []vec.Type
	batchRows int
	rec       arrow.RecordBatch
	pos       int
	batch     vec.Batch
	rows      int64
	bytes     int64
}

// NewSource reads records whose columns have the given types.
func NewSource(stream RecordStream, types []vec.Type, batchRows int) *Source {
	if batchRows <= 0 {
		batchRows = vec.DefaultBatchRows
	}
	return &Source{stream: stream, types: types, batchRows: batchRows}
}

// Types implements Operator.
func (s *Source) Types() []vec.Type { return s.types }

// Init implements Operator.
func (s *Source) Init(ctx context.Context) error { return nil }

// Next implements Operator.
func (s *Source) Next(ctx context.Context) (*vec.Batch, error) {
	for s.rec == nil || s.pos >= int(s.rec.NumRows()) {
		if s.rec != nil {
			s.rec.Release()
			s.rec = nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec, err := s.stream.Next(ctx)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			return nil, nil
		}
		if int(rec.NumCols()) != len(s.types) {
			rec.Release()
			return nil, fmt.Errorf("exec: record has %d columns, expected %d", rec.NumCols(), len(s.types))
		}
		s.rec, s.pos = rec, 0
		s.rows += rec.NumRows()
		s.bytes += vec.RecordBytes(rec)
	}
	end := min(s.pos+s.batchRows, int(s.rec.NumRows()))
	if err := s.batch.ViewRecord(s.rec, s.types, s.pos, end); err != nil {
		return nil, err
	}
	s.pos = end
	return &s.batch, nil
}

// Close implements Operator.
func (s *Source) Close() error {
	if s.rec != nil {
		s.rec.Release()
		s.rec = nil
	}
	return nil
}

// RowsRead is the number of rows the source has received.
func (s *Source) RowsRead() int64 { return s.rows }

// BatchSource is an Operator over batches held in memory (tests, and small constant
// inputs). The batches are returned as they are; they must not be modified.
type BatchSource struct {
	types   []vec.Type
	batches []*vec.Batch
	i       int
}

// NewBatchSource returns an operator that yields the given batches (empty ones skipped).
func NewBatchSource(types []vec.Type, batches ...*vec.Batch) *BatchSource {
	return &BatchSource{types: types, batches: batches}
}

// Types implements Operator.
func (s *BatchSource) Types() []vec.Type { return s.types }

// Init implements Operator.
func (s *BatchSource) Init(ctx context.Context) error { s.i = 0; return nil }

// Next implements Operator.
func (s *BatchSource) Next(ctx context.Context) (*vec.Batch, error) {
	for s.i < len(s.batches) {
		b := s.batches[s.i]
		s.i++
		if b.Len() > 0 {
			return b, nil
		}
	}
	return nil, nil
}

// Close implements Operator.
func (s *BatchSource) Close() error { return nil }

// Materializer turns an Operator's output into Arrow records of about rowsPerRecord rows
// (the last may be smaller), built in memory from alloc. It is a RecordStream.
type Materializer struct {
	op      Operator
	rb      *vec.RecordBuilder
	per     int
	started bool
	done    bool
	rows    int64
	batches int64
	bytes   int64
}

// NewMaterializer returns a RecordStream over op's rows with the given schema (whose
// fields must carry op's types). alloc may be nil (Go heap); a *vec.Pool recycles buffers.
func NewMaterializer(op Operator, schema *arrow.Schema, rowsPerRecord int, alloc memory.Allocator) *Materializer {
	if rowsPerRecord <= 0 {
		rowsPerRecord = 64 * vec.DefaultBatchRows
	}
	if schema == nil {
		schema = vec.SchemaOf(nil, op.Types())
	}
	return &Materializer{op: op, rb: vec.NewRecordBuilder(schema, op.Types(), alloc), per: rowsPerRecord}
}

// Next implements RecordStream. It initialises the operator on first use.
func (m *Materializer) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if !m.started {
		m.started = true
		if err := m.op.Init(ctx); err != nil {
			return nil, err
		}
	}
	for !m.done && m.rb.Rows() < m.per {
		b, err := m.op.Next(ctx)
		if err != nil {
			return nil, err
		}
		if b == nil {
			m.done = true
			break
		}
		m.rb.Append(b)
	}
	if m.rb.Rows() == 0 {
		return nil, nil
	}
	rec := m.rb.Finish()
	m.rows += rec.NumRows()
	m.batches++
	m.bytes += vec.RecordBytes(rec)
	return rec, nil
}

// Close closes the operator and returns unfinished buffers.
func (m *Materializer) Close() error {
	m.rb.Release()
	return m.op.Close()
}

// Counts returns the rows, records and bytes produced so far.
func (m *Materializer) Counts() (rows, records, bytes int64) { return m.rows, m.batches, m.bytes }

// Collect runs op to the end and returns its rows as a table (tests, small results such as
// a scalar subquery). It initialises and closes op.
func Collect(ctx context.Context, op Operator, names []string) (*vec.Table, error) {
	t := &vec.Table{Names: names, Types: op.Types()}
	if t.Names == nil {
		for i := range t.Types {
			t.Names = append(t.Names, fmt.Sprintf("c%d", i))
		}
	}
	if err := op.Init(ctx); err != nil {
		op.Close()
		return nil, err
	}
	for {
		b, err := op.Next(ctx)
		if err != nil {
			op.Close()
			return nil, err
		}
		if b == nil {
			break
		}
		t.AppendBatch(b)
	}
	return t, op.Close()
}
