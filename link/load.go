package link

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// ChunkReader yields one chunk of a table's rows as record batches: Next returns nil, nil
// (or nil, io.EOF, as a *tpch.Generator does) at the end. Ownership of each batch passes to
// the caller.
type ChunkReader interface {
	Next() (arrow.RecordBatch, error)
	Close()
}

// TableLoad describes one table to load: its schema and its rows as Chunks independent
// chunks that any goroutine may produce.
type TableLoad struct {
	Table  string
	Schema *arrow.Schema // the table's schema (with colink.sql_type metadata)
	// ClusterBy, if set, has every primproc sort each segment's rows by these columns.
	ClusterBy []string
	// Chunks is the number of chunks; Open(k) opens chunk k, 0 <= k < Chunks.
	Chunks int
	Open   func(k int) (ChunkReader, error)
	// EstimatedRows is for progress reports.
	EstimatedRows int64
	// Mode is ModeReplace (when empty) or ModeCreate, which fails on a primproc that holds
	// the table already.
	Mode string
}

// LoadOptions tune Cluster.Load.
type LoadOptions struct {
	// Workers is the number of chunks produced at once (default GOMAXPROCS).
	Workers int
	// Progress, if set, is called (from several goroutines) with the rows of every batch
	// the primprocs have accepted.
	Progress func(rows int64)
	// QueueBatches bounds the batches waiting for each stream (default 4).
	QueueBatches int
}

// TableResult is what loading one table did on every primproc.
type TableResult struct {
	Table string
	Rows  int64
	Ends  []*LoadEnd // per primproc, in cluster order
}

// Segments is the number of segments written on all primprocs.
func (r *TableResult) Segments() int {
	n := 0
	for _, e := range r.Ends {
		n += e.Segments
	}
	return n
}

// Deal returns the primproc (of n) that chunk k of the table at position t in a load gets:
// chunks go round robin, starting one primproc further for each table, so that tables
// with fewer chunks than primprocs do not all land on the first one.
func Deal(t, k, n int) int { return (t + k) % n }

// Load replaces the tables on the primprocs, dealing each table's chunks round robin
// (Deal): every primproc gets an equal share of every table with at least as many chunks as
// primprocs, and a table (even one it gets no rows of) on each. Chunks are produced by
// opts.Workers goroutines and stream to their primprocs under the link's flow control.
//
// Each primproc commits its share of each table when its upload ends: after every chunk
// was produced and sent without error. Any failure before that aborts every upload, leaving
// all primprocs as they were; a failure during the final commits (a primproc dying) can
// leave some primprocs with the new table and others with the old one, which the returned
// error says. Reloading repairs it.
func (cl Cluster) Load(ctx context.Context, tables []TableLoad, opts LoadOptions) ([]TableResult, error) {
	if len(cl) == 0 {
		return nil, errors.New("load: no primprocs")
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.QueueBatches <= 0 {
		opts.QueueBatches = 4
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	// One upload stream per (table, primproc), each fed by its own sender goroutine.
	type upload struct {
		ls    *LoadStream
		order *chunkOrder
		done  chan struct{}
		err   error
	}
	ups := make([][]*upload, len(tables))
	abortAll := func(reason string) {
		for _, row := range ups {
			for _, u := range row {
				if u != nil {
					u.ls.Abort(reason)
				}
			}
		}
	}
	var senders sync.WaitGroup
	for ti, t := range tables {
		if t.Chunks < 0 || t.Open == nil || t.Schema == nil {
			abortAll("bad load")
			return nil, fmt.Errorf("load %s: needs a schema and a chunk source", t.Table)
		}
		ups[ti] = make([]*upload, len(cl))
		for pi, c := range cl {
			mode := t.Mode
			if mode == "" {
				mode = ModeReplace
			}
			ls, err := c.Load(ctx, LoadArgs{Table: t.Table, Mode: mode, ClusterBy: t.ClusterBy})
			if err == nil {
				err = ls.SendSchema(t.Schema)
			}
			if err != nil {
				abortAll("another upload failed to start")
				senders.Wait()
				return nil, fmt.Errorf("load %s: %w", t.Table, err)
			}
			var dealt []int
			for k := range t.Chunks {
				if Deal(ti, k, len(cl)) == pi {
					dealt = append(dealt, k)
				}
			}
			u := &upload{ls: ls, order: newChunkOrder(ctx, dealt, opts.Workers, opts.QueueBatches), done: make(chan struct{})}
			ups[ti][pi] = u
			senders.Add(1)
			go func() {
				defer senders.Done()
				defer close(u.done)
				for {
					rec := u.order.next()
					if rec == nil {
						return
					}
					if u.err == nil {
						if u.err = u.ls.Send(rec); u.err != nil {
							cancel(fmt.Errorf("load %s: %w", t.Table, u.err))
						} else if opts.Progress != nil {
							opts.Progress(rec.NumRows())
						}
					}
					rec.Release()
				}
			}()
		}
	}

	// Produce the chunks: table by table, chunk by chunk, opts.Workers at a time.
	type job struct{ t, k int }
	jobs := make(chan job)
	var workers sync.WaitGroup
	for range opts.Workers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for j := range jobs {
				if ctx.Err() != nil {
					continue
				}
				t := &tables[j.t]
				u := ups[j.t][Deal(j.t, j.k, len(cl))]
				q := u.order.admit(j.k)
				err := produce(ctx, t, j.k, q)
				u.order.finish(j.k)
				if err != nil && ctx.Err() == nil {
					cancel(fmt.Errorf("load %s: chunk %d: %w", t.Table, j.k, err))
				}
			}
		}()
	}
feed:
	for ti, t := range tables {
		for k := 0; k < t.Chunks; k++ {
			select {
			case jobs <- job{ti, k}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	workers.Wait()
	for _, row := range ups {
		for _, u := range row {
			u.order.stop()
		}
	}
	senders.Wait()
	if err := context.Cause(ctx); err != nil {
		abortAll("load failed")
		return nil, err // the first failure: a chunk's, an upload's, or the caller's
	}

	// Commit every upload, all at once.
	results := make([]TableResult, len(tables))
	var wg sync.WaitGroup
	errs := make([]error, 0)
	var mu sync.Mutex
	for ti, t := range tables {
		results[ti] = TableResult{Table: t.Table, Ends: make([]*LoadEnd, len(cl))}
		for pi, u := range ups[ti] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				end, err := u.ls.Commit()
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, fmt.Errorf("load %s on %s: commit: %w", t.Table, cl[pi].Peer(), err))
					return
				}
				results[ti].Ends[pi] = end
				results[ti].Rows += end.Rows
			}()
		}
	}
	wg.Wait()
	if len(errs) > 0 {
		return results, fmt.Errorf("%w (primprocs not named here committed their shares; reload to make them consistent)", errors.Join(errs...))
	}
	return results, nil
}

// produce reads chunk k of t into q.
func produce(ctx context.Context, t *TableLoad, k int, q *chunkQueue) error {
	r, err := t.Open(k)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if err == io.EOF || err == nil && rec == nil {
			return nil
		}
		if err != nil {
			return err
		}
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		if !q.push(rec) {
			rec.Release()
			return context.Cause(ctx)
		}
	}
}

// Elapsed is the longest primproc-side load time of a result.
func (r *TableResult) Elapsed() time.Duration {
	var d time.Duration
	for _, e := range r.Ends {
		if e != nil {
			d = max(d, e.Elapsed())
		}
	}
	return d
}
