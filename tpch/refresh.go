package tpch

import (
	"fmt"
	"strconv"
)

// Refresh sets (TPC-H clause 4.2.5): RF1 inserts new orders with their lineitems, RF2
// deletes old orders. dbgen -U N writes, for K = 1..N, orders.tbl.uK and lineitem.tbl.uK
// (the RF1 rows) and delete.K (the RF2 order keys).
//
// Set K holds Scale.RefreshOrders() orders. Its RF1 orders are generated as order indexes
// (K-1)·n+1 … K·n with the random streams continued past the base data, and keyed in the
// second of each group of four sparse key blocks; its RF2 keys are the base orders with the
// same indexes.

// refreshRowGen returns an orders generator positioned at refresh set k's first order.
func refreshRowGen(sc Scale, k int64) *rowGen {
	g := newRowGen(sc, groupOrder, 0, 0)
	orderStreams := streamsOf(g.defs, tidOrder)
	lineStreams := streamsOf(g.defs, tidLine)
	total := sc.orders()
	// dbgen's set_state(ORDER, scale, 100, 101): a hundred chunk skips over the base data,
	// with the remainder skipped for the orders streams only.
	g.r.skip(orderStreams, g.defs, total/100, 100)
	g.r.skip(orderStreams, g.defs, total%100, 1)
	g.r.skip(lineStreams, g.defs, total/100, 100)
	// Then one skip per earlier refresh set.
	g.r.skip(g.streams, g.defs, sc.RefreshOrders(), k-1)
	return g
}

// refreshIndexes returns the first order index of refresh set k and the set's order count.
func refreshIndexes(sc Scale, k int64) (first, count int64) {
	n := sc.RefreshOrders()
	return (k-1)*n + 1, n
}

// deleteKey returns the i-th RF2 key of refresh set k (dbgen's pr_drange).
func deleteKey(index, k int64) int64 {
	return sparseKey(index, (k/(10000/updatePercent))&3)
}

// RefreshFileNames returns the names dbgen gives refresh set k's files: the RF1 orders and
// lineitem inserts and the RF2 delete keys.
func RefreshFileNames(k int) (orders, lineitem, deletes string) {
	s := strconv.Itoa(k)
	return "orders.tbl.u" + s, "lineitem.tbl.u" + s, "delete." + s
}

func checkRefreshSet(k int) error {
	if k < 1 {
		return fmt.Errorf("refresh set %d: sets are numbered from 1", k)
	}
	return nil
}

// AppendDeleteKeys appends refresh set k's RF2 delete file text ("key|" lines) to dst.
func AppendDeleteKeys(dst []byte, sc Scale, k int) ([]byte, error) {
	if err := checkRefreshSet(k); err != nil {
		return dst, err
	}
	first, n := refreshIndexes(sc, int64(k))
	for i := first; i < first+n; i++ {
		dst = appendInt(dst, deleteKey(i, int64(k)))
		dst = append(dst, '|', '\n')
	}
	return dst, nil
}

// DeleteKeys returns refresh set k's RF2 order keys.
func DeleteKeys(sc Scale, k int) ([]int64, error) {
	if err := checkRefreshSet(k); err != nil {
		return nil, err
	}
	first, n := refreshIndexes(sc, int64(k))
	keys := make([]int64, 0, n)
	for i := first; i < first+n; i++ {
		keys = append(keys, deleteKey(i, int64(k)))
	}
	return keys, nil
}
