// Package catalog owns what the planner knows about stored data: the Catalog interface
// (databases, tables with typed columns, views), the Stats interface (row counts and column
// statistics for cardinality estimates), an in-memory catalog, MemoryStats (statistics
// someone measured), and the TPC-H schema with the statistics dbgen's data has at a scale
// factor (TPCHStats, for planner tests without data).
//
// The running system's catalog and statistics come from the primprocs, which own the data
// and measure it (row counts, zone-map ranges, NULL counts, distinct-value sketches); exemgr
// adapts them to these interfaces. Names of databases, tables and columns are matched
// case-insensitively.
package catalog

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/colinkdb/colink/sql/types"
)

// Column is a column of a stored table.
type Column struct {
	Name     string
	Type     types.Type
	Nullable bool
	// Default is the column's DEFAULT as vec.DefaultKey records it (its value's text, or
	// vec.DefaultNow); nil: none, so NULL for a nullable column.
	Default *string
}

// Table is a stored table.
type Table struct {
	DB      string
	Name    string
	Columns []Column
}

// ColumnIndex returns the position of the named column (any case), or -1.
func (t *Table) ColumnIndex(name string) int {
	for i, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// View is a stored SELECT. Columns, when not empty, renames the query's output columns.
type View struct {
	DB      string
	Name    string
	Columns []string
	Query   string
}

// Catalog resolves names to tables and views. Implementations must be safe for concurrent
// use.
type Catalog interface {
	// Databases lists the databases, sorted.
	Databases() []string
	// Tables lists the tables and views of db, sorted; false if db does not exist.
	Tables(db string) ([]string, bool)
	// Table returns the named base table.
	Table(db, name string) (*Table, bool)
	// View returns the named view.
	View(db, name string) (*View, bool)
}

// ColumnStats describes a column's values. Zero fields are unknown.
type ColumnStats struct {
	// Distinct is the number of distinct non-NULL values.
	Distinct float64 `json:"distinct,omitempty"`
	// Min and Max bound the values when HasRange is set: numbers as themselves (decimals
	// unscaled to their value), dates as days since 1970-01-01.
	Min      float64 `json:"min,omitempty"`
	Max      float64 `json:"max,omitempty"`
	HasRange bool    `json:"has_range,omitempty"`
	// Nulls counts the column's NULLs among the stored rows (0 also when unknown).
	Nulls float64 `json:"nulls,omitempty"`
}

// Stats gives the planner its cardinality inputs. Implementations must be safe for
// concurrent use; a false result means "unknown", and the planner then guesses.
type Stats interface {
	TableRows(db, table string) (float64, bool)
	ColumnStats(db, table, column string) (ColumnStats, bool)
}

// Memory is an in-memory Catalog whose views can be created and dropped. It is safe for
// concurrent use.
type Memory struct {
	mu  sync.RWMutex
	dbs map[string]*memDB
}

type memDB struct {
	name   string
	tables map[string]*Table
	views  map[string]*View
}

// NewMemory returns an empty catalog.
func NewMemory() *Memory { return &Memory{dbs: map[string]*memDB{}} }

func key(s string) string { return strings.ToLower(s) }

// CreateDatabase adds an empty database if it is not there yet.
func (m *Memory) CreateDatabase(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.db(name)
}

// db returns the named database, creating it; m.mu must be held for writing.
func (m *Memory) db(name string) *memDB {
	d := m.dbs[key(name)]
	if d == nil {
		d = &memDB{name: name, tables: map[string]*Table{}, views: map[string]*View{}}
		m.dbs[key(name)] = d
	}
	return d
}

// AddTable adds or replaces a table (creating its database).
func (m *Memory) AddTable(t *Table) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.db(t.DB)
	if _, ok := d.views[key(t.Name)]; ok {
		return fmt.Errorf("catalog: %s.%s is a view", t.DB, t.Name)
	}
	d.tables[key(t.Name)] = t
	return nil
}

// CreateView adds a view; with replace an existing view of that name is replaced. It fails
// if a table has the name, or a view does and replace is false.
func (m *Memory) CreateView(v *View, replace bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.dbs[key(v.DB)]
	if !ok {
		return fmt.Errorf("catalog: unknown database '%s'", v.DB)
	}
	if _, ok := d.tables[key(v.Name)]; ok {
		return fmt.Errorf("catalog: table '%s' already exists", v.Name)
	}
	if _, ok := d.views[key(v.Name)]; ok && !replace {
		return fmt.Errorf("catalog: table '%s' already exists", v.Name)
	}
	d.views[key(v.Name)] = v
	return nil
}

// DropView removes a view and reports whether it existed.
func (m *Memory) DropView(db, name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.dbs[key(db)]
	if !ok {
		return false
	}
	if _, ok := d.views[key(name)]; !ok {
		return false
	}
	delete(d.views, key(name))
	return true
}

// Databases implements Catalog.
func (m *Memory) Databases() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []string
	for _, d := range m.dbs {
		out = append(out, d.name)
	}
	slices.Sort(out)
	return out
}

// Tables implements Catalog.
func (m *Memory) Tables(db string) ([]string, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	d, ok := m.dbs[key(db)]
	if !ok {
		return nil, false
	}
	out := []string{}
	for _, t := range d.tables {
		out = append(out, t.Name)
	}
	for _, v := range d.views {
		out = append(out, v.Name)
	}
	slices.Sort(out)
	return out, true
}

// Table implements Catalog.
func (m *Memory) Table(db, name string) (*Table, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	d, ok := m.dbs[key(db)]
	if !ok {
		return nil, false
	}
	t, ok := d.tables[key(name)]
	return t, ok
}

// View implements Catalog.
func (m *Memory) View(db, name string) (*View, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	d, ok := m.dbs[key(db)]
	if !ok {
		return nil, false
	}
	v, ok := d.views[key(name)]
	return v, ok
}
