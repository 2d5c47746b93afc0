package catalog

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMemoryViews(t *testing.T) {
	m := TPCH("tpch")
	if got, _ := m.Tables("tpch"); len(got) != 8 {
		t.Fatalf("tables: %v", got)
	}
	if _, ok := m.Table("TPCH", "LineItem"); !ok {
		t.Error("lookup is not case-insensitive")
	}
	v := &View{DB: "tpch", Name: "revenue0", Query: "select 1"}
	if err := m.CreateView(v, false); err != nil {
		t.Fatal(err)
	}
	if err := m.CreateView(v, false); err == nil {
		t.Error("a second view of one name")
	}
	if err := m.CreateView(v, true); err != nil {
		t.Errorf("replace: %v", err)
	}
	if err := m.CreateView(&View{DB: "tpch", Name: "orders"}, true); err == nil {
		t.Error("a view named like a table")
	}
	if err := m.CreateView(&View{DB: "nodb", Name: "v"}, false); err == nil {
		t.Error("a view in a missing database")
	}
	if got, _ := m.Tables("tpch"); len(got) != 9 {
		t.Errorf("tables with the view: %v", got)
	}
	if !m.DropView("tpch", "REVENUE0") || m.DropView("tpch", "revenue0") {
		t.Error("drop view")
	}
	if _, ok := m.Tables("nodb"); ok {
		t.Error("a missing database lists tables")
	}
}

func TestTPCHStats(t *testing.T) {
	s := TPCHStats{SF: 10}
	if r, _ := s.TableRows("tpch", "orders"); r != 15_000_000 {
		t.Errorf("orders at SF 10: %v", r)
	}
	if r, _ := s.TableRows("tpch", "Nation"); r != 25 {
		t.Errorf("nation: %v", r)
	}
	if c, _ := s.ColumnStats("tpch", "orders", "o_custkey"); c.Distinct != 1_000_000 {
		t.Errorf("o_custkey distinct at SF 10: %v", c.Distinct)
	}
	c, ok := s.ColumnStats("tpch", "lineitem", "l_shipdate")
	if !ok || !c.HasRange || c.Max <= c.Min {
		t.Errorf("l_shipdate: %+v", c)
	}
	if _, ok := s.TableRows("tpch", "nosuch"); ok {
		t.Error("a missing table has rows")
	}
	for _, tb := range TPCH("tpch").dbs["tpch"].tables {
		for _, col := range tb.Columns {
			if _, ok := s.ColumnStats("tpch", tb.Name, col.Name); !ok {
				t.Errorf("no statistics for %s.%s", tb.Name, col.Name)
			}
		}
	}
}

func TestMemoryStats(t *testing.T) {
	m := NewMemoryStats()
	m.SetTable("Orders", 1500)
	m.SetColumn("orders", "O_CustKey", ColumnStats{Distinct: 99, Nulls: 2})
	m.SetTable("orders", 1600) // keeps the columns
	if r, ok := m.TableRows("any", "ORDERS"); !ok || r != 1600 {
		t.Errorf("rows: %v, %v", r, ok)
	}
	if c, ok := m.ColumnStats("any", "orders", "o_custkey"); !ok || c.Distinct != 99 || c.Nulls != 2 {
		t.Errorf("o_custkey: %+v, %v", c, ok)
	}
	if _, ok := m.ColumnStats("any", "orders", "nope"); ok {
		t.Error("an unknown column has statistics")
	}
	if _, ok := m.TableRows("any", "nope"); ok {
		t.Error("an unknown table has rows")
	}
	path := filepath.Join(t.TempDir(), "stats.json")
	if err := m.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadStatsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := back.ColumnStats("", "orders", "o_custkey"); c.Distinct != 99 || c.Nulls != 2 {
		t.Errorf("read back: %+v", c)
	}
	if err := os.WriteFile(path, []byte(`{"tables":{"t":{"rows":1}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadStatsFile(path); err == nil {
		t.Error("a table without columns was read")
	}
	if _, err := ReadStatsFile(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("a missing file was read")
	}
}
