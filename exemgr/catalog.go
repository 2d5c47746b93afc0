package exemgr

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/types"
)

// systemCatalog is what the planner sees: the tables the primprocs hold (the union of their
// shares, all in one database) and the views exemgr keeps (shared by every session). It
// implements catalog.Catalog and catalog.Stats and is safe for concurrent use.
//
// The tables come from a snapshot of the primprocs' catalogs, each stamped with the
// catalog version its primproc reported. Every statement starts by asking each primproc
// for its stats, which carry its current catalog version; when any differs from the
// snapshot's, the snapshot is fetched again before the statement is planned (refresh). A
// load that commits while a statement runs is seen by the next statement.
type systemCatalog struct {
	db    string
	log   *slog.Logger
	views *catalog.Memory // holds db with its views only

	snap      atomic.Pointer[catSnapshot]
	refreshMu sync.Mutex // one refresh at a time
}

// catSnapshot is an immutable view of the primprocs' tables.
type catSnapshot struct {
	versions []uint64              // per primproc, in cluster order
	tables   map[string]*tableInfo // by lower-case name
	names    []string              // table names, sorted
	partial  map[string][]string   // tables some primprocs lack
}

// tableInfo is one table of a snapshot with its planner statistics.
type tableInfo struct {
	table   *catalog.Table
	schema  *arrow.Schema
	rows    float64
	columns map[string]catalog.ColumnStats // by lower-case column name
}

func newSystemCatalog(db string, log *slog.Logger) *systemCatalog {
	v := catalog.NewMemory()
	v.CreateDatabase(db)
	c := &systemCatalog{db: db, log: log, views: v}
	c.snap.Store(&catSnapshot{tables: map[string]*tableInfo{}})
	return c
}

// current returns the snapshot in use.
func (c *systemCatalog) current() *catSnapshot { return c.snap.Load() }

// fresh reports whether the snapshot was taken at the given primproc catalog versions.
func (s *catSnapshot) fresh(versions []uint64) bool {
	return s.versions != nil && slices.Equal(s.versions, versions)
}

// refresh fetches the primprocs' catalogs unless the snapshot already matches versions.
func (c *systemCatalog) refresh(ctx context.Context, cl link.Cluster, versions []uint64) error {
	if c.current().fresh(versions) {
		return nil
	}
	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()
	if c.current().fresh(versions) {
		return nil // another statement refreshed it meanwhile
	}
	cats := make([]*link.Catalog, len(cl))
	errs := make([]error, len(cl))
	var wg sync.WaitGroup
	for i, pc := range cl {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cats[i], errs[i] = pc.Catalog(ctx)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("fetch the catalog: %w", err)
		}
	}
	merged, err := link.Merge(cats)
	if err != nil {
		return fmt.Errorf("merge the primprocs' catalogs: %w", err)
	}
	snap, err := c.build(merged, cats)
	if err != nil {
		return err
	}
	for name, missing := range snap.partial {
		c.log.Warn("exemgr: a table is missing on some primprocs (an interrupted load? reload it)", "table", name, "primprocs", missing)
	}
	c.snap.Store(snap)
	c.log.Info("exemgr: catalog loaded", "tables", len(snap.names), "versions", snap.versions)
	return nil
}

// build converts a merged catalog into a snapshot.
func (c *systemCatalog) build(m *link.MergedCatalog, cats []*link.Catalog) (*catSnapshot, error) {
	s := &catSnapshot{tables: map[string]*tableInfo{}, partial: m.Partial}
	for _, cat := range cats {
		s.versions = append(s.versions, cat.Version)
	}
	for _, wt := range m.Tables {
		t := &catalog.Table{DB: c.db, Name: wt.Name}
		info := &tableInfo{table: t, schema: m.Schemas[wt.Name], rows: float64(wt.Rows), columns: map[string]catalog.ColumnStats{}}
		for _, wc := range wt.Columns {
			typ, err := sqlType(wc)
			if err != nil {
				return nil, fmt.Errorf("table %s: %w", wt.Name, err)
			}
			col := catalog.Column{Name: wc.Name, Type: typ, Nullable: wc.Nullable}
			if sc := info.schema; sc != nil {
				if idx := sc.FieldIndices(wc.Name); len(idx) == 1 {
					col.Default = link.ColumnDefOf(sc.Field(idx[0])).Default
				}
			}
			t.Columns = append(t.Columns, col)
			info.columns[strings.ToLower(wc.Name)] = columnStats(wt, wc, typ)
		}
		s.tables[strings.ToLower(wt.Name)] = info
		s.names = append(s.names, wt.Name)
	}
	slices.Sort(s.names)
	return s, nil
}

// sqlType is a stored column's SQL type, from its colink.sql_type (e.g. "decimal(15,2)",
// "char(25)"), or from its engine type when that is missing or unknown.
func sqlType(c link.Column) (types.Type, error) {
	if t, ok := types.ParseSQLType(c.SQLType); ok {
		return t, nil
	}
	switch c.Type.ID {
	case vec.Bool:
		return types.BoolType, nil
	case vec.Int32:
		return types.Int32Type, nil
	case vec.Int64:
		return types.Int64Type, nil
	case vec.Float64:
		return types.Float64Type, nil
	case vec.Date32:
		return types.DateType, nil
	case vec.Datetime:
		return types.DatetimeType(6), nil
	case vec.Decimal64, vec.Decimal128:
		return types.Dec(int(c.Type.Precision), int(c.Type.Scale)), nil
	case vec.String:
		return types.VarcharType(0), nil
	}
	return types.Type{}, fmt.Errorf("column %s has type %s (%q), which the planner cannot use", c.Name, c.Type, c.SQLType)
}

// columnStats gives the planner a column's statistics, all measured by the primprocs:
// ranges from the zone maps (exact bounds of the stored values), NULL counts, and
// distinct-value counts from the merged sketches, at most the table's live rows (and the
// width of an integer or date range: the sketch errs by about 1.6%). A column
// without a sketch (a store written before sketches were kept) that holds integers or dates
// takes its range's width as the bound of its distinct values; any other such column is
// unknown, which the planner takes as unique.
func columnStats(t link.Table, c link.Column, typ types.Type) catalog.ColumnStats {
	var out catalog.ColumnStats
	if c.Min != nil && c.Max != nil && !c.Min.Null && !c.Max.Null {
		switch typ.Kind {
		case types.Int32, types.Int64, types.Decimal, types.Float64, types.Date, types.Datetime:
			out.Min, out.Max, out.HasRange = c.Min.ToFloat64(), c.Max.ToFloat64(), true
		}
	}
	if c.Nulls > 0 {
		out.Nulls = float64(c.Nulls)
	}
	bound := math.Max(float64(t.Rows), 1)
	if out.HasRange && (typ.Kind == types.Int32 || typ.Kind == types.Int64 || typ.Kind == types.Date) {
		bound = math.Min(bound, out.Max-out.Min+1) // an integer range holds no more values
	}
	switch {
	case c.Distinct > 0:
		out.Distinct = math.Min(math.Max(math.Round(c.Distinct), 1), bound)
	case out.HasRange && (typ.Kind == types.Int32 || typ.Kind == types.Int64 || typ.Kind == types.Date):
		out.Distinct = bound
	}
	return out
}

// catView is the catalog as one statement sees it: one snapshot of the primprocs' tables
// (so that a refresh by another statement cannot change it half way through planning) and
// the shared views. It implements catalog.Catalog and catalog.Stats.
type catView struct {
	sys  *systemCatalog
	snap *catSnapshot
}

// view returns the catalog as it is now.
func (c *systemCatalog) view() *catView { return &catView{sys: c, snap: c.current()} }

// Databases implements catalog.Catalog: the one database holding the primprocs' tables.
func (v *catView) Databases() []string { return []string{v.sys.db} }

func (v *catView) isDB(db string) bool { return strings.EqualFold(db, v.sys.db) }

// Tables implements catalog.Catalog.
func (v *catView) Tables(db string) ([]string, bool) {
	if !v.isDB(db) {
		return nil, false
	}
	views, _ := v.sys.views.Tables(v.sys.db)
	out := append(slices.Clone(v.snap.names), views...)
	slices.Sort(out)
	return slices.Compact(out), true
}

// Table implements catalog.Catalog.
func (v *catView) Table(db, name string) (*catalog.Table, bool) {
	t, ok := v.table(db, name)
	if !ok {
		return nil, false
	}
	return t.table, true
}

func (v *catView) table(db, name string) (*tableInfo, bool) {
	if !v.isDB(db) {
		return nil, false
	}
	t, ok := v.snap.tables[strings.ToLower(name)]
	return t, ok
}

// View implements catalog.Catalog.
func (v *catView) View(db, name string) (*catalog.View, bool) {
	if !v.isDB(db) {
		return nil, false
	}
	return v.sys.views.View(v.sys.db, name)
}

// TableRows implements catalog.Stats.
func (v *catView) TableRows(db, table string) (float64, bool) {
	t, ok := v.table(db, table)
	if !ok {
		return 0, false
	}
	return t.rows, true
}

// ColumnStats implements catalog.Stats.
func (v *catView) ColumnStats(db, table, column string) (catalog.ColumnStats, bool) {
	t, ok := v.table(db, table)
	if !ok {
		return catalog.ColumnStats{}, false
	}
	cs, ok := t.columns[strings.ToLower(column)]
	return cs, ok
}
