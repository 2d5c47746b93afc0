package catalog

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/colinkdb/colink/internal/atomicfile"
)

// MemoryStats holds statistics that someone measured — a primproc's catalog, local stores,
// or a file written from them — for any database. Fill it before sharing it; it is then safe
// for concurrent reads. Its JSON form is what ReadStatsFile reads.
type MemoryStats struct {
	// Tables holds each table's statistics by lower-case name.
	Tables map[string]*TableStats `json:"tables"`
}

// TableStats are one table's measured statistics.
type TableStats struct {
	Rows float64 `json:"rows"`
	// Columns holds each column's statistics by lower-case name.
	Columns map[string]ColumnStats `json:"columns"`
}

// NewMemoryStats returns empty statistics.
func NewMemoryStats() *MemoryStats { return &MemoryStats{Tables: map[string]*TableStats{}} }

// SetTable records a table's row count (keeping its columns' statistics).
func (m *MemoryStats) SetTable(table string, rows float64) {
	t := m.table(table)
	t.Rows = rows
}

// SetColumn records a column's statistics.
func (m *MemoryStats) SetColumn(table, column string, cs ColumnStats) {
	m.table(table).Columns[strings.ToLower(column)] = cs
}

func (m *MemoryStats) table(name string) *TableStats {
	t := m.Tables[strings.ToLower(name)]
	if t == nil {
		t = &TableStats{Columns: map[string]ColumnStats{}}
		m.Tables[strings.ToLower(name)] = t
	}
	return t
}

// TableRows implements Stats.
func (m *MemoryStats) TableRows(_, table string) (float64, bool) {
	t, ok := m.Tables[strings.ToLower(table)]
	if !ok {
		return 0, false
	}
	return t.Rows, true
}

// ColumnStats implements Stats.
func (m *MemoryStats) ColumnStats(_, table, column string) (ColumnStats, bool) {
	t, ok := m.Tables[strings.ToLower(table)]
	if !ok {
		return ColumnStats{}, false
	}
	cs, ok := t.Columns[strings.ToLower(column)]
	return cs, ok
}

// WriteFile stores the statistics as indented JSON, atomically and durably.
func (m *MemoryStats) WriteFile(path string) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return fmt.Errorf("catalog: encode statistics: %w", err)
	}
	if err := atomicfile.Write(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("catalog: write statistics %s: %w", path, err)
	}
	return nil
}

// ReadStatsFile reads statistics WriteFile stored.
func ReadStatsFile(path string) (*MemoryStats, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("catalog: read statistics: %w", err)
	}
	m := NewMemoryStats()
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("catalog: statistics file %s: %w", path, err)
	}
	for name, t := range m.Tables {
		if t == nil || t.Columns == nil {
			return nil, fmt.Errorf("catalog: statistics file %s: table %q has no columns", path, name)
		}
	}
	return m, nil
}
