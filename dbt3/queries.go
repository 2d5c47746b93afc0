package dbt3

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/colinkdb/colink/dbt3/queries"
	"github.com/colinkdb/colink/tpch"
)

// Query is one script a driver runs and records under Name.
type Query struct {
	Name   string // "Q1" … "Q22", "CS1" … "CS3"
	Number int    // TPC-H query number; 0 for the ColumnStore experiment's queries
	Script string // one or more statements, each ending in ";" (Q15 has three)
	// Pushdown, if set, is the pushdown level the query always runs at, whatever levels a
	// comparison sweeps (the scan family's is "scan": its point is the rows crossing).
	Pushdown string
}

// columnStoreQueries are the three queries of the original ColumnStore transport
// experiment: a top-N over a narrow column, a top-N over a wide string column, and a join
// whose build side is a whole table.
var columnStoreQueries = [...]string{
	"select l_orderkey from lineitem order by 1 limit 100;",
	"select l_comment from lineitem order by 1 limit 100;",
	"select count(*) from orders, lineitem where l_orderkey = o_orderkey;",
}

// ColumnStoreQueries returns CS1, CS2 and CS3.
func ColumnStoreQueries() []Query {
	out := make([]Query, len(columnStoreQueries))
	for i, s := range columnStoreQueries {
		out[i] = Query{Name: "CS" + strconv.Itoa(i+1), Script: s}
	}
	return out
}

// scanQueries are the scan family, in the manner of Kudu's measurement: 1, 2, 4 and 8
// lineitem columns of the four kinds (int32, int64, decimal, string) read whole, shipped to
// exemgr at pushdown=scan and reduced there, so that the bytes on the link grow with the
// columns (about 4, 12, 32 and 85 bytes per row) while the work in exemgr stays small.
var scanQueries = [...]struct {
	name, script string
}{
	{"SCAN1", "select sum(l_linenumber) from lineitem;"},
	{"SCAN2", "select sum(l_linenumber), sum(l_orderkey) from lineitem;"},
	{"SCAN4", "select sum(l_linenumber), sum(l_orderkey), sum(l_extendedprice), count(distinct l_shipmode) from lineitem;"},
	{"SCAN8", "select sum(l_linenumber), sum(l_orderkey), sum(l_extendedprice), count(distinct l_shipmode), " +
		"sum(l_partkey), sum(l_quantity), max(l_shipdate), max(l_comment) from lineitem;"},
}

// ScanQueries returns SCAN1, SCAN2, SCAN4 and SCAN8, each pinned to pushdown=scan.
func ScanQueries() []Query {
	out := make([]Query, len(scanQueries))
	for i, q := range scanQueries {
		out[i] = Query{Name: q.name, Script: q.script, Pushdown: "scan"}
	}
	return out
}

// ValidationQueries returns Q1 … Q22 with the validation parameters (dbt3/queries).
func ValidationQueries() ([]Query, error) {
	out := make([]Query, 0, queries.Count)
	for n := 1; n <= queries.Count; n++ {
		s, err := queries.Get(n)
		if err != nil {
			return nil, err
		}
		out = append(out, Query{Name: "Q" + strconv.Itoa(n), Number: n, Script: s})
	}
	return out, nil
}

// StreamQueries returns stream's 22 queries in its TPC-H permutation order, with the
// parameters qgen draws from seed (or the validation parameters) at scale factor sf.
func StreamQueries(seed int64, stream int, sf float64, validation bool) ([]Query, error) {
	qs, err := tpch.StreamQueries(seed, stream, sf, validation, tpch.QgenSpec)
	if err != nil {
		return nil, err
	}
	out := make([]Query, len(qs))
	for i, q := range qs {
		out[i] = Query{Name: "Q" + strconv.Itoa(q.Number), Number: q.Number, Script: q.Text}
	}
	return out, nil
}

// SelectQueries returns the queries a --queries list names, in the order given: "all" (the
// 22 validation queries, then CS1 … CS3), "tpch" (the 22 only), "cs" (CS1 … CS3), "scan"
// (the scan family SCAN1 … SCAN8, then CS1 … CS3), or a comma-separated list of names,
// ranges and the groups tpch, cs and scan (the family alone), such as "1,3,5-8,CS1,SCAN4"
// or "tpch,scan" ("q5-q8" and "Q5" are accepted too).
func SelectQueries(list string) ([]Query, error) {
	tpchQueries, err := ValidationQueries()
	if err != nil {
		return nil, err
	}
	cs := ColumnStoreQueries()
	list = strings.TrimSpace(list)
	switch strings.ToLower(list) {
	case "", "all":
		return append(tpchQueries, cs...), nil
	case "tpch":
		return tpchQueries, nil
	case "cs":
		return cs, nil
	case "scan":
		return append(ScanQueries(), cs...), nil
	}
	scans := ScanQueries()
	var out []Query
	seen := map[string]bool{}
	add := func(q Query) {
		if !seen[q.Name] {
			seen[q.Name] = true
			out = append(out, q)
		}
	}
	for _, item := range strings.Split(list, ",") {
		item = strings.ToUpper(strings.TrimSpace(item))
		if group, ok := map[string][]Query{"TPCH": tpchQueries, "CS": cs, "SCAN": scans}[item]; ok {
			for _, q := range group {
				add(q)
			}
			continue
		}
		if i := slices.IndexFunc(scans, func(q Query) bool { return q.Name == item }); i >= 0 {
			add(scans[i])
			continue
		}
		if rest, ok := strings.CutPrefix(item, "CS"); ok {
			k, err := strconv.Atoi(rest)
			if err != nil || k < 1 || k > len(cs) {
				return nil, fmt.Errorf("query %q: the ColumnStore queries are CS1 … CS%d", item, len(cs))
			}
			add(cs[k-1])
			continue
		}
		lo, hi, isRange := strings.Cut(item, "-")
		a, errA := queryNumber(lo)
		b, errB := a, error(nil)
		if isRange {
			b, errB = queryNumber(hi)
		}
		if errA != nil || errB != nil || a > b {
			return nil, fmt.Errorf("query %q: want a TPC-H query 1 … 22 (Q7, 3-5), CS1 … CS%d or SCAN1, SCAN2, SCAN4, SCAN8", item, len(cs))
		}
		for n := a; n <= b; n++ {
			add(tpchQueries[n-1])
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no queries in %q", list)
	}
	return out, nil
}

func queryNumber(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(s), "Q"))
	if err != nil || n < 1 || n > queries.Count {
		return 0, fmt.Errorf("no TPC-H query %q", s)
	}
	return n, nil
}
