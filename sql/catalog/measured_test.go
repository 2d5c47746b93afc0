package catalog

import (
	"math"
	"testing"
)

// TestTPCHMeasuredSF1 checks the embedded measurements against TPC-H's specified
// distributions (TPCHStats at SF 1): the same tables and columns, the same row counts, and
// distinct counts within 5% — except where TPCHStats is a rough guess: the comment columns,
// whose generated text repeats more than "unique" says, c_acctbal (150k draws from 1.1M
// cent values repeat: about 140k distinct) and l_extendedprice (0.6 × orders).
func TestTPCHMeasuredSF1(t *testing.T) {
	m := TPCHMeasuredSF1()
	spec := TPCHStats{SF: 1}
	rough := map[string]bool{"p_comment": true, "c_comment": true, "ps_comment": true, "o_comment": true,
		"l_comment": true, "c_acctbal": true, "l_extendedprice": true}
	for _, tb := range TPCH("tpch").dbs["tpch"].tables {
		rows, ok := m.TableRows("tpch", tb.Name)
		want, _ := spec.TableRows("tpch", tb.Name)
		if !ok || rows != want {
			t.Errorf("%s: %v rows measured, %v specified", tb.Name, rows, want)
		}
		for _, c := range tb.Columns {
			got, ok := m.ColumnStats("tpch", tb.Name, c.Name)
			if !ok {
				t.Errorf("%s.%s: not measured", tb.Name, c.Name)
				continue
			}
			w, _ := spec.ColumnStats("tpch", tb.Name, c.Name)
			if d := math.Abs(got.Distinct-w.Distinct) / w.Distinct; d > 0.05 && !rough[c.Name] {
				t.Errorf("%s.%s: %v distinct values measured, %v specified", tb.Name, c.Name, got.Distinct, w.Distinct)
			}
			if w.HasRange && got.HasRange && (got.Min < w.Min || got.Max > w.Max) {
				t.Errorf("%s.%s: measured range [%v, %v] outside the specified [%v, %v]", tb.Name, c.Name, got.Min, got.Max, w.Min, w.Max)
			}
		}
	}
	if c, _ := m.ColumnStats("", "nation", "n_name"); c.Distinct != 25 {
		t.Errorf("n_name: %v distinct values", c.Distinct)
	}
}
