package catalog

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/colinkdb/colink/sql/types"
	"github.com/colinkdb/colink/tpch"
)

// TPCH returns a catalog holding the eight TPC-H tables in database db.
func TPCH(db string) *Memory {
	m := NewMemory()
	for _, t := range tpch.Tables() {
		cols := make([]Column, len(t.Columns))
		for i, c := range t.Columns {
			cols[i] = Column{Name: c.Name, Type: fromTPCH(c.Type)}
		}
		// The tables are well-formed and db is new, so AddTable cannot fail.
		_ = m.AddTable(&Table{DB: db, Name: t.Name, Columns: cols})
	}
	return m
}

// TPCHStats gives the statistics of dbgen's data at scale factor SF, from the
// specification's cardinalities and value domains (clause 4.2), for any database. It lets
// the planner be tested without data; the running system plans with what the primprocs
// measure. At SF 1 the 22 queries plan the same with either (see enginetest's
// SF 1 timing, COLINK_SF1_STATS=tpch).
type TPCHStats struct {
	SF float64
}

// tpchRows is each table's row count at SF 1; nation and region do not scale.
var tpchRows = map[string]float64{
	"part": 200_000, "supplier": 10_000, "partsupp": 800_000, "customer": 150_000,
	"orders": 1_500_000, "lineitem": 6_001_215, "nation": 25, "region": 5,
}

// TableRows implements Stats.
func (s TPCHStats) TableRows(_, table string) (float64, bool) {
	table = strings.ToLower(table)
	n, ok := tpchRows[table]
	if !ok {
		return 0, false
	}
	if table == "nation" || table == "region" {
		return n, true
	}
	return n * s.SF, true
}

// tpchColumn describes a column: distinct values as a fixed number or as a fraction of a
// table's rows (scaled), and the value range when the generator bounds it.
type tpchColumn struct {
	fixed    float64 // distinct values that do not scale
	perTable string  // distinct values = rows of this table × frac
	frac     float64
	min, max float64
	hasRange bool
}

func days(s string) float64 {
	d, err := types.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return float64(d)
}

func tpchColumnStats() map[string]tpchColumn {
	unique := func(t string) tpchColumn { return tpchColumn{perTable: t, frac: 1} }
	fixed := func(n float64) tpchColumn { return tpchColumn{fixed: n} }
	rng := func(c tpchColumn, lo, hi float64) tpchColumn {
		c.min, c.max, c.hasRange = lo, hi, true
		return c
	}
	return map[string]tpchColumn{
		"p_partkey": unique("part"), "p_name": unique("part"), "p_mfgr": fixed(5),
		"p_brand": fixed(25), "p_type": fixed(150), "p_size": rng(fixed(50), 1, 50),
		"p_container": fixed(40), "p_retailprice": rng(tpchColumn{perTable: "part", frac: 0.1}, 900, 2100),
		"p_comment": unique("part"),
		"s_suppkey": unique("supplier"), "s_name": unique("supplier"), "s_address": unique("supplier"),
		"s_nationkey": rng(fixed(25), 0, 24), "s_phone": unique("supplier"),
		"s_acctbal": rng(unique("supplier"), -999.99, 9999.99), "s_comment": unique("supplier"),
		"ps_partkey": unique("part"), "ps_suppkey": unique("supplier"),
		"ps_availqty": rng(fixed(9999), 1, 9999), "ps_supplycost": rng(fixed(99901), 1, 1000),
		"ps_comment": unique("partsupp"),
		"c_custkey":  unique("customer"), "c_name": unique("customer"), "c_address": unique("customer"),
		"c_nationkey": rng(fixed(25), 0, 24), "c_phone": unique("customer"),
		"c_acctbal": rng(unique("customer"), -999.99, 9999.99), "c_mktsegment": fixed(5),
		"c_comment":  unique("customer"),
		"o_orderkey": unique("orders"), "o_custkey": {perTable: "customer", frac: 2.0 / 3},
		"o_orderstatus": fixed(3), "o_totalprice": unique("orders"),
		"o_orderdate":     rng(fixed(2406), days("1992-01-01"), days("1998-08-02")),
		"o_orderpriority": fixed(5), "o_clerk": {perTable: "supplier", frac: 0.1},
		"o_shippriority": fixed(1), "o_comment": unique("orders"),
		"l_orderkey": unique("orders"), "l_partkey": unique("part"), "l_suppkey": unique("supplier"),
		"l_linenumber": rng(fixed(7), 1, 7), "l_quantity": rng(fixed(50), 1, 50),
		"l_extendedprice": rng(tpchColumn{perTable: "orders", frac: 0.6}, 900, 105000),
		"l_discount":      rng(fixed(11), 0, 0.10), "l_tax": rng(fixed(9), 0, 0.08),
		"l_returnflag": fixed(3), "l_linestatus": fixed(2),
		"l_shipdate":     rng(fixed(2526), days("1992-01-02"), days("1998-12-01")),
		"l_commitdate":   rng(fixed(2466), days("1992-01-31"), days("1998-10-31")),
		"l_receiptdate":  rng(fixed(2554), days("1992-01-03"), days("1998-12-31")),
		"l_shipinstruct": fixed(4), "l_shipmode": fixed(7), "l_comment": {perTable: "lineitem", frac: 0.75},
		"n_nationkey": rng(fixed(25), 0, 24), "n_name": fixed(25), "n_regionkey": rng(fixed(5), 0, 4),
		"n_comment":   fixed(25),
		"r_regionkey": rng(fixed(5), 0, 4), "r_name": fixed(5), "r_comment": fixed(5),
	}
}

// ColumnStats implements Stats.
func (s TPCHStats) ColumnStats(db, table, column string) (ColumnStats, bool) {
	c, ok := tpchColumnStats()[strings.ToLower(column)]
	if !ok {
		return ColumnStats{}, false
	}
	out := ColumnStats{Distinct: c.fixed, Min: c.min, Max: c.max, HasRange: c.hasRange}
	if c.perTable != "" {
		n, _ := s.TableRows(db, c.perTable)
		out.Distinct = n * c.frac
	}
	if rows, ok := s.TableRows(db, table); ok && out.Distinct > rows {
		out.Distinct = rows
	}
	return out, true
}

// fromTPCH converts a column type of the TPC-H schema.
func fromTPCH(t tpch.Type) types.Type {
	switch t.Kind {
	case tpch.KindInt32:
		return types.Int32Type
	case tpch.KindInt64:
		return types.Int64Type
	case tpch.KindDecimal:
		return types.Dec(t.Precision, t.Scale)
	case tpch.KindDate:
		return types.DateType
	case tpch.KindChar:
		return types.CharType(t.Length)
	case tpch.KindVarchar:
		return types.VarcharType(t.Length)
	}
	panic(fmt.Sprintf("catalog: TPC-H type kind %d unknown", t.Kind))
}

// tpchSF1Stats is what storage measured from dbgen's SF 1 data: enginetest's SF 1
// timing writes it (COLINK_SF1_WRITE_STATS=sql/catalog/tpch_sf1_stats.json).
//
//go:embed tpch_sf1_stats.json
var tpchSF1Stats []byte

// TPCHMeasuredSF1 returns the statistics the engine measures from dbgen's data at SF 1 (row
// counts, zone-map ranges, NULL counts, distinct values from the sketches), as the
// primprocs report them, for planner tests that want measured rather than specified
// statistics without loading the data.
func TPCHMeasuredSF1() *MemoryStats {
	m := NewMemoryStats()
	if err := json.Unmarshal(tpchSF1Stats, m); err != nil {
		panic(fmt.Sprintf("catalog: the embedded SF 1 statistics: %v", err)) // a build defect
	}
	return m
}
