package enginetest

import (
	"math"
	"testing"
)

// TestMeasureStats measures SF 0.01's statistics from one store and from two: merging the
// two stores' sketches gives what one store holding everything gives, and the counts are
// dbgen's within the sketches' error.
func TestMeasureStats(t *testing.T) {
	ts := stores(t, 0.01)
	one, err := MeasureStats(ts.one)
	if err != nil {
		t.Fatal(err)
	}
	two, err := MeasureStats(ts.two)
	if err != nil {
		t.Fatal(err)
	}
	for name, tb := range one.Tables {
		rows, ok := two.TableRows("", name)
		if !ok || rows != tb.Rows {
			t.Errorf("%s: %v rows in two stores, %v in one", name, rows, tb.Rows)
		}
		for col, cs := range tb.Columns {
			cs2, _ := two.ColumnStats("", name, col)
			if cs2 != cs {
				t.Errorf("%s.%s: two stores %+v, one %+v", name, col, cs2, cs)
			}
		}
	}
	for _, c := range []struct {
		table, column string
		distinct      float64
	}{
		{"orders", "o_orderkey", 15000}, {"customer", "c_mktsegment", 5}, {"nation", "n_nationkey", 25},
		{"lineitem", "l_linenumber", 7}, {"lineitem", "l_returnflag", 3}, {"orders", "o_custkey", 1000},
		{"part", "p_type", 150}, {"lineitem", "l_quantity", 50},
	} {
		cs, ok := one.ColumnStats("", c.table, c.column)
		if !ok || math.Abs(cs.Distinct-c.distinct) > 0.03*c.distinct+0.5 {
			t.Errorf("%s.%s: %+v, want about %v distinct values", c.table, c.column, cs, c.distinct)
		}
	}
	if cs, _ := one.ColumnStats("", "lineitem", "l_discount"); !cs.HasRange || cs.Min != 0 || cs.Max != 0.1 {
		t.Errorf("l_discount's range: %+v", cs)
	}
}
