// Package enginetest runs physical plans in process, without the link: a Runner over
// local stores (one per simulated primproc, each running fragments with package
// primproc/fragment), a loader that generates TPC-H data straight into such stores, and a
// Session that plans and runs SQL text against them. Tests and benchmarks of the planner
// and of the engine's answers use it; the daemons do not.
package enginetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/primproc/fragment"
	"github.com/colinkdb/colink/sql/physical"
	"github.com/colinkdb/colink/storage"
	"github.com/colinkdb/colink/tpch"
)

// LocalRunner runs fragments over local stores, one per simulated primproc.
type LocalRunner struct {
	Stores  []*storage.Store
	Options fragment.Options
}

// Run implements physical.Runner.
func (l *LocalRunner) Run(ctx context.Context, frag *exec.Fragment, builds [][]arrow.RecordBatch) ([]physical.Stream, error) {
	valid, err := frag.Validate() // the in-process primprocs' door
	if err != nil {
		return nil, err
	}
	var out []physical.Stream
	for i, st := range l.Stores {
		snap := st.Snapshot()
		s, err := fragment.Run(ctx, snap, nil, valid, builds, l.Options)
		snap.Release()
		if err != nil {
			for _, o := range out {
				o.Close()
			}
			return nil, fmt.Errorf("primproc %d: %w", i, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// LoadOptions say how LoadTPCH deals generated rows into stores.
type LoadOptions struct {
	// SF is the scale factor.
	SF float64
	// SegmentRows is the rows per segment (default storage.DefaultSegmentRows); segments
	// are dealt round-robin across the stores, whose own SegmentRows must not be smaller.
	SegmentRows int
	// Cluster sorts each segment's rows by its table's cluster key before writing it —
	// l_shipdate for lineitem, o_orderdate for orders — so that date zone maps eliminate
	// row groups (dbgen writes both tables in key order with random dates).
	Cluster bool
	// Tables lists the tables to load (default all eight).
	Tables []string
	// Parallel is how many tables generate at once (default 2).
	Parallel int
}

// ClusterKey returns the column LoadOptions.Cluster sorts a table's segments by, false for
// a table loaded as generated.
func ClusterKey(table string) (string, bool) {
	switch table {
	case "lineitem":
		return "l_shipdate", true
	case "orders":
		return "o_orderdate", true
	}
	return "", false
}

// LoadTPCH generates the TPC-H tables into the stores, replacing them: segment k of a table
// goes to store k mod len(stores); every store gets every table, possibly empty.
func LoadTPCH(ctx context.Context, stores []*storage.Store, o LoadOptions) error {
	if len(stores) == 0 {
		return errors.New("enginetest: no stores to load")
	}
	sc, err := tpch.NewScale(o.SF)
	if err != nil {
		return err
	}
	if o.SegmentRows <= 0 {
		o.SegmentRows = storage.DefaultSegmentRows
	}
	if o.Tables == nil {
		o.Tables = tpch.TableNames()
	}
	if o.Parallel <= 0 {
		o.Parallel = 2
	}
	// Each table loads in transactions of its own (one per store): a transaction's writers
	// belong to one goroutine.
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	errs := make([]error, len(o.Tables))
	for ti, table := range o.Tables {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			defer func() {
				// A panic fails the load, not the whole test binary with it.
				if p := recover(); p != nil {
					errs[ti] = fmt.Errorf("enginetest: load %s: panic: %v\n%s", table, p, debug.Stack())
				}
			}()
			errs[ti] = loadTable(ctx, sc, table, stores, o)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func loadTable(ctx context.Context, sc tpch.Scale, table string, stores []*storage.Store, o LoadOptions) (err error) {
	gen, err := tpch.NewGenerator(sc, table, 1, 1, tpch.WithBatchRows(min(o.SegmentRows, tpch.DefaultBatchRows)))
	if err != nil {
		return err
	}
	defer gen.Close()
	schema := gen.Schema()
	txns := make([]*storage.Txn, len(stores))
	writers := make([]*storage.TableWriter, len(stores))
	for i, s := range stores {
		txns[i] = s.Begin()
	}
	committed := 0
	defer func() {
		for _, tx := range txns[committed:] {
			tx.Abort()
		}
	}()
	for i, tx := range txns {
		if writers[i], err = tx.Replace(table, schema); err != nil {
			return err
		}
	}
	var pending []arrow.RecordBatch
	rows, seg := 0, 0
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		recs := pending
		pending, rows = nil, 0
		defer func() {
			for _, r := range recs {
				r.Release()
			}
		}()
		if key, ok := ClusterKey(table); ok && o.Cluster {
			sorted, err := sortRecords(ctx, schema, recs, key)
			if err != nil {
				return err
			}
			for _, r := range recs {
				r.Release()
			}
			recs = sorted
		}
		w := writers[seg%len(writers)]
		seg++
		for _, r := range recs {
			if err := w.Write(ctx, r); err != nil {
				return err
			}
		}
		return w.FinishSegment()
	}
	for {
		rec, err := gen.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		for off := 0; off < int(rec.NumRows()); {
			take := min(int(rec.NumRows())-off, o.SegmentRows-rows)
			part := rec.NewSlice(int64(off), int64(off+take))
			pending = append(pending, part)
			rows += take
			off += take
			if rows == o.SegmentRows {
				if err := flush(); err != nil {
					rec.Release()
					return err
				}
			}
		}
		rec.Release()
	}
	if err := flush(); err != nil {
		return err
	}
	for _, tx := range txns {
		if err := tx.Commit(ctx); err != nil {
			return fmt.Errorf("enginetest: load %s: %w", table, err)
		}
		committed++
	}
	return nil
}

// sortRecords returns the rows of recs ordered by the column key.
func sortRecords(ctx context.Context, schema *arrow.Schema, recs []arrow.RecordBatch, key string) ([]arrow.RecordBatch, error) {
	types, err := vec.TypesFromSchema(schema)
	if err != nil {
		return nil, err
	}
	idx := schema.FieldIndices(key)
	if len(idx) != 1 {
		return nil, fmt.Errorf("enginetest: no cluster column %s", key)
	}
	src := exec.NewSource(exec.Records(recs...), types, 0)
	sorted, err := exec.NewSort(src, []exec.SortKey{{Col: idx[0]}}, nil)
	if err != nil {
		return nil, err
	}
	m := exec.NewMaterializer(sorted, schema, 1<<20, nil)
	defer m.Close()
	return exec.ReadAll(ctx, m)
}

// Tables returns the table names of a store's current snapshot.
func Tables(s *storage.Store) []string {
	snap := s.Snapshot()
	defer snap.Release()
	var out []string
	for _, t := range snap.Tables() {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}
