package enginetest

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/storage"
	"github.com/colinkdb/colink/storage/ndv"
)

// MeasureStats measures the planner's statistics from local stores (one per simulated
// primproc) as exemgr derives them from the primprocs' catalogs: live rows added up,
// distinct values from the stores' sketches merged (a value several stores hold counts
// once) and capped by the rows and by the width of an integer or date range, NULL counts added up, and value ranges from the zone maps
// widened. A column without a sketch in some store has an unknown distinct count.
func MeasureStats(stores []*storage.Store) (*catalog.MemoryStats, error) {
	type colAcc struct {
		sketch  *ndv.Sketch
		unknown bool
		nulls   int64
		lo, hi  float64
		ranged  bool
	}
	type tableAcc struct {
		rows int64
		cols []colAcc
		sc   *arrow.Schema
	}
	acc := map[string]*tableAcc{}
	var order []string
	for i, st := range stores {
		snap := st.Snapshot()
		err := func() error {
			for _, ti := range snap.Tables() {
				ranges, err := snap.ColumnRanges(ti.Name)
				if err != nil {
					return err
				}
				sketches, err := snap.ColumnSketches(ti.Name)
				if err != nil {
					return err
				}
				t := acc[ti.Name]
				if t == nil {
					t = &tableAcc{cols: make([]colAcc, len(ranges)), sc: ti.Schema}
					acc[ti.Name] = t
					order = append(order, ti.Name)
				}
				if len(ranges) != len(t.cols) {
					return fmt.Errorf("table %s has %d columns in store %d, %d in another", ti.Name, len(ranges), i, len(t.cols))
				}
				t.rows += ti.Rows
				for c, r := range ranges {
					a := &t.cols[c]
					switch {
					case sketches[c] == nil:
						a.unknown = true
					case a.sketch == nil:
						a.sketch = sketches[c]
					default:
						a.sketch.Merge(sketches[c])
					}
					if r.Nulls > 0 {
						a.nulls += r.Nulls
					}
					if lo, hi, ok := numericRange(ti.Schema.Field(c).Type, r); ok {
						if !a.ranged {
							a.lo, a.hi, a.ranged = lo, hi, true
						}
						a.lo, a.hi = math.Min(a.lo, lo), math.Max(a.hi, hi)
					}
				}
			}
			return nil
		}()
		snap.Release()
		if err != nil {
			return nil, fmt.Errorf("enginetest: statistics of store %d: %w", i, err)
		}
	}
	out := catalog.NewMemoryStats()
	for _, name := range order {
		t := acc[name]
		out.SetTable(name, float64(t.rows))
		for c, a := range t.cols {
			cs := catalog.ColumnStats{Nulls: float64(a.nulls), Min: a.lo, Max: a.hi, HasRange: a.ranged}
			if !a.unknown && a.sketch != nil {
				bound := math.Max(float64(t.rows), 1)
				switch t.sc.Field(c).Type.(type) {
				case *arrow.Int32Type, *arrow.Int64Type, *arrow.Date32Type:
					if a.ranged { // an integer range holds no more values
						bound = math.Min(bound, a.hi-a.lo+1)
					}
				}
				cs.Distinct = math.Min(math.Max(math.Round(a.sketch.Estimate()), 1), bound)
			}
			out.SetColumn(name, t.sc.Field(c).Name, cs)
		}
	}
	return out, nil
}

// numericRange is a column range on the statistics' scale: numbers as their values
// (decimals scaled), dates as days; false for other types or an unknown range.
func numericRange(dt arrow.DataType, r storage.ColumnRange) (lo, hi float64, ok bool) {
	if !r.HasRange {
		return 0, 0, false
	}
	switch t := dt.(type) {
	case *arrow.Int32Type, *arrow.Int64Type, *arrow.Date32Type:
		return float64(r.MinInt), float64(r.MaxInt), true
	case *arrow.Decimal64Type:
		p := math.Pow10(int(t.Scale))
		return float64(r.MinInt) / p, float64(r.MaxInt) / p, true
	case *arrow.Float64Type:
		return r.MinFloat, r.MaxFloat, true
	}
	return 0, 0, false
}
