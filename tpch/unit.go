package tpch

// tableID numbers the eight tables in dbgen's order (TableNames).
type tableID int

const (
	tPart tableID = iota
	tSupplier
	tPartsupp
	tCustomer
	tOrders
	tLineitem
	tNation
	tRegion
)

func lookupTableID(name string) (tableID, error) {
	for i, n := range TableNames() {
		if n == name {
			return tableID(i), nil
		}
	}
	return 0, unknownTable(name)
}

func (t tableID) String() string { return TableNames()[t] }

func (t tableID) group() group {
	g, _ := groupOf(t.String())
	return g
}

// unit holds one generated unit of any group; only the group's field is meaningful.
type unit struct {
	part   partRow
	supp   suppRow
	cust   custRow
	order  orderRow
	nation nationRow
	region regionRow
}

// make generates unit index (1-based) of the rowGen's group. upd is the refresh set for
// orders (0 for base data).
func (g *rowGen) make(gr group, index, upd int64, u *unit) {
	switch gr {
	case groupPart:
		g.mkPart(index, &u.part)
	case groupSupp:
		g.mkSupp(index, &u.supp)
	case groupCust:
		g.mkCust(index, &u.cust)
	case groupOrder:
		g.mkOrder(index, upd, &u.order)
	case groupNation:
		g.mkNation(index-1, &u.nation)
	case groupRegion:
		g.mkRegion(index-1, &u.region)
	}
}

// rows returns how many rows of table t the unit holds.
func (u *unit) rows(t tableID) int {
	switch t {
	case tPartsupp:
		return suppPerPart
	case tLineitem:
		return u.order.lines
	}
	return 1
}

// appendTbl appends the unit's rows of table t as .tbl text.
func (f *tblFormatter) appendTbl(dst []byte, t tableID, u *unit) []byte {
	switch t {
	case tPart:
		return f.part(dst, &u.part)
	case tPartsupp:
		return f.partsupp(dst, &u.part)
	case tSupplier:
		return f.supplier(dst, &u.supp)
	case tCustomer:
		return f.customer(dst, &u.cust)
	case tOrders:
		return f.order(dst, &u.order)
	case tLineitem:
		return f.lineitem(dst, &u.order)
	case tNation:
		return f.nation(dst, &u.nation)
	}
	return f.region(dst, &u.region)
}

// unitRange returns the first unit (1-based) and the unit count of chunk k of n, and the
// rows per chunk, exactly as dbgen's -C n -S k divides a table: n-1 chunks of ⌊total/n⌋
// units and the remainder in the last.
func unitRange(total int64, k, n int) (first, count, perChunk int64) {
	perChunk = total / int64(n)
	first = perChunk*int64(k-1) + 1
	count = perChunk
	if k == n {
		count += total % int64(n)
	}
	return first, count, perChunk
}
