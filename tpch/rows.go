package tpch

// This file is the row generation shared by every output format: dbgen's mk_* routines,
// producing one unit (a part with its four partsupp rows, an order with its lineitems, or one
// row of the other tables) from the random streams. The .tbl writer and the Arrow builder
// both format these structs, so they cannot disagree.

// Column constants from dbgen's dss.h.
const (
	suppPerPart    = 4
	updatePercent  = 10
	custMortality  = 3
	nationsMax     = 90
	startDate      = 92001 // dbgen's day numbers start at 1992-01-01
	totalDates     = 2557  // 1992-01-01 .. 1998-12-31
	lShipDateMax   = 121
	lReceiptMax    = 30
	orderDateSpan  = totalDates - (lShipDateMax + lReceiptMax) - 1
	clerksPerScale = 1000
	textPoolMax    = textPoolSize
	bbbCommentLen  = 19
	bbbBaseLen     = 9
	bbbPerTenK     = 10 // suppliers per 10000 with a Better Business Bureau comment
	bbbDeadbeats   = 50 // percent of those that are complaints
	epochTo1992    = 8035
)

// currentDay is dbgen's CURRENTDATE (1995-06-17) as a day index from 1992-01-01: line items
// received by then may be returned, shipped by then are filled.
const currentDay = 366 + 365 + 365 + 167

// alphaNum is dbgen's alphabet for random strings (addresses).
const alphaNum = "0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ,"

// varLen returns dbgen's V_STR/TEXT length bounds for a column of average length avg:
// [⌊0.4·avg⌋, ⌊1.6·avg⌋], computed in float64 as dbgen's C does.
func varLen(avg int) (lo, hi int64) {
	low, high := 0.4, 1.6
	return int64(float64(avg) * low), int64(float64(avg) * high)
}

// Average column lengths from dbgen's dsstypes.h.
const (
	pCmntLen  = 14
	psCmntLen = 124
	sAddrLen  = 25
	sCmntLen  = 63
	cAddrLen  = 25
	cCmntLen  = 73
	oCmntLen  = 49
	lCmntLen  = 27
	nCmntLen  = 72
	rCmntLen  = 72
)

// colLens holds the derived [lo, hi] bounds of every variable-length column.
type colLens struct {
	pCmnt, psCmnt, sAddr, sCmnt, cAddr, cCmnt, oCmnt, lCmnt, nCmnt, rCmnt [2]int64
}

func newColLens() colLens {
	b := func(avg int) [2]int64 { lo, hi := varLen(avg); return [2]int64{lo, hi} }
	return colLens{b(pCmntLen), b(psCmntLen), b(sAddrLen), b(sCmntLen), b(cAddrLen),
		b(cCmntLen), b(oCmntLen), b(lCmntLen), b(nCmntLen), b(rCmntLen)}
}

type partRow struct {
	key       int64
	name      [5]int16 // indexes into colors
	mfgr      int64    // 1..5
	brand     int64    // 11..55
	typ       int
	size      int64
	container int
	retail    int64 // cents
	comment   []byte
	ps        [suppPerPart]psuppRow
}

type psuppRow struct {
	partKey, suppKey, qty, cost int64
	comment                     []byte
}

type suppRow struct {
	key     int64
	address []byte
	nation  int64
	phone   [15]byte
	acctbal int64
	comment []byte
	addrBuf [64]byte
	cmntBuf [128]byte
}

type custRow struct {
	key     int64
	address []byte
	nation  int64
	phone   [15]byte
	acctbal int64
	segment int
	comment []byte
	addrBuf [64]byte
}

type orderRow struct {
	key      int64
	custKey  int64
	status   byte
	total    int64
	date     int32 // days since 1992-01-01
	priority int
	clerk    int64
	comment  []byte
	lines    int
	line     [7]lineRow
}

type lineRow struct {
	orderKey, partKey, suppKey, number int64
	qty, price, discount, tax          int64 // qty in units; price in cents; rates in percent
	returnFlag, status                 byte
	shipDate, commitDate, receiptDate  int32
	instruct, mode                     int
	comment                            []byte
}

type nationRow struct {
	key, region int64
	comment     []byte
}

type regionRow struct {
	key     int64
	comment []byte
}

// rowGen generates the units of one table group, in index order, from streams positioned
// for its first unit. It is not safe for concurrent use; generators are cheap to make.
type rowGen struct {
	sc      Scale
	d       *distributions
	pool    []byte
	defs    *[numStreams]streamDef
	lens    colLens
	r       rng
	streams []int // streams padded after every unit
	perm    [92]int16
}

// group identifies the tables dbgen generates together.
type group int

const (
	groupPart group = iota // part and partsupp
	groupSupp
	groupCust
	groupOrder // orders and lineitem
	groupNation
	groupRegion
)

func groupOf(table string) (group, error) {
	switch table {
	case "part", "partsupp":
		return groupPart, nil
	case "supplier":
		return groupSupp, nil
	case "customer":
		return groupCust, nil
	case "orders", "lineitem":
		return groupOrder, nil
	case "nation":
		return groupNation, nil
	case "region":
		return groupRegion, nil
	}
	return 0, unknownTable(table)
}

func (g group) tables() []int {
	switch g {
	case groupPart:
		return []int{tidPart, tidPsupp}
	case groupSupp:
		return []int{tidSupp}
	case groupCust:
		return []int{tidCust}
	case groupOrder:
		return []int{tidOrder, tidLine}
	case groupNation:
		return []int{tidNation}
	}
	return []int{tidRegion}
}

// newRowGen returns a generator whose streams are positioned after skipRows·skipTimes
// units (see rng.skip).
func newRowGen(sc Scale, g group, skipRows, skipTimes int64) *rowGen {
	rg := &rowGen{sc: sc, d: loadDists(), pool: textPool(), defs: streamDefs(), lens: newColLens(),
		r: newRNG(sc.big())}
	rg.streams = streamsOf(rg.defs, g.tables()...)
	rg.r.skip(rg.streams, rg.defs, skipRows, skipTimes)
	return rg
}

// text is dbgen's dbg_text: a random substring of the text pool, length in [lo, hi].
func (g *rowGen) text(lens [2]int64, s int) []byte {
	off := g.r.unif(0, textPoolMax-lens[1], s)
	n := g.r.unif(lens[0], lens[1], s)
	return g.pool[off : off+n]
}

// randomString is dbgen's a_rnd: length in [lo, hi], five characters per draw.
func (g *rowGen) randomString(dst []byte, lens [2]int64, s int) []byte {
	n := g.r.unif(lens[0], lens[1], s)
	dst = dst[:n]
	var v int64
	for i := int64(0); i < n; i++ {
		if i%5 == 0 {
			v = g.r.unif(0, maxLong, s)
		}
		dst[i] = alphaNum[v&0o77]
		v >>= 6
	}
	return dst
}

// phone is dbgen's gen_phone: country code 10+nation, then three random groups.
func (g *rowGen) phone(dst *[15]byte, nation int64, s int) {
	a := g.r.unif(100, 999, s)
	b := g.r.unif(100, 999, s)
	c := g.r.unif(1000, 9999, s)
	put := func(at int, v int64, w int) {
		for i := w - 1; i >= 0; i-- {
			dst[at+i] = byte('0' + v%10)
			v /= 10
		}
	}
	put(0, 10+nation%nationsMax, 2)
	dst[2] = '-'
	put(3, a, 3)
	dst[6] = '-'
	put(7, b, 3)
	dst[10] = '-'
	put(11, c, 4)
}

// retailPrice is dbgen's rpb_routine, in cents.
func retailPrice(partKey int64) int64 {
	return 90000 + (partKey/10)%20001 + (partKey%1000)*100
}

// partSupp is dbgen's PART_SUPP_BRIDGE: the i-th supplier of a part.
func (g *rowGen) partSupp(part, i int64) int64 {
	n := g.sc.suppliers()
	return (part+i*(n/suppPerPart+(part-1)/n))%n + 1
}

func (g *rowGen) mkPart(key int64, p *partRow) {
	g.r.rowStart()
	p.key = key
	// agg_str: the first five of a random permutation of the colors. Draws past the fifth
	// cannot change the first five places; row padding consumes them.
	for i := range g.perm {
		g.perm[i] = int16(i)
	}
	for i := int64(0); i < 5; i++ {
		j := g.r.unif(i, int64(len(g.perm)-1), sPName)
		g.perm[i], g.perm[j] = g.perm[j], g.perm[i]
		p.name[i] = g.perm[i]
	}
	p.mfgr = g.r.unif(1, 5, sPMfg)
	p.brand = p.mfgr*10 + g.r.unif(1, 5, sPBrnd)
	p.typ = g.r.pick(g.d.pTypes, sPType)
	p.size = g.r.unif(1, 50, sPSize)
	p.container = g.r.pick(g.d.pCntr, sPCntr)
	p.retail = retailPrice(key)
	p.comment = g.text(g.lens.pCmnt, sPCmnt)
	for i := range p.ps {
		ps := &p.ps[i]
		ps.partKey = key
		ps.suppKey = g.partSupp(key, int64(i))
		ps.qty = g.r.unif(1, 9999, sPSQty)
		ps.cost = g.r.unif(100, 100000, sPSScst)
		ps.comment = g.text(g.lens.psCmnt, sPSCmnt)
	}
	g.r.rowStop(g.streams, g.defs)
}

func (g *rowGen) mkSupp(key int64, s *suppRow) {
	g.r.rowStart()
	s.key = key
	s.address = g.randomString(s.addrBuf[:], g.lens.sAddr, sSAddr)
	s.nation = g.r.unif(0, int64(len(g.d.nations.text)-1), sSNtrg)
	g.phone(&s.phone, s.nation, sSPhne)
	s.acctbal = g.r.unif(-99999, 999999, sSAbal)
	s.comment = append(s.cmntBuf[:0], g.text(g.lens.sCmnt, sSCmnt)...)
	n := int64(len(s.comment))
	// Drawn for every supplier so that the streams stay aligned (dbgen's comment says so).
	badPress := g.r.unif(1, 10000, sBBBComment)
	kind := g.r.unif(0, 100, sBBBType)
	noise := g.r.unif(0, n-bbbCommentLen, sBBBJunk)
	offset := g.r.unif(0, n-(bbbCommentLen+noise), sBBBOffset)
	if badPress <= bbbPerTenK {
		copy(s.comment[offset:], "Customer ")
		word := "Complaints"
		if kind >= bbbDeadbeats {
			word = "Recommends"
		}
		copy(s.comment[offset+bbbBaseLen+noise:], word)
	}
	g.r.rowStop(g.streams, g.defs)
}

func (g *rowGen) mkCust(key int64, c *custRow) {
	g.r.rowStart()
	c.key = key
	c.address = g.randomString(c.addrBuf[:], g.lens.cAddr, sCAddr)
	c.nation = g.r.unif(0, int64(len(g.d.nations.text)-1), sCNtrg)
	g.phone(&c.phone, c.nation, sCPhne)
	c.acctbal = g.r.unif(-99999, 999999, sCAbal)
	c.segment = g.r.pick(g.d.mseg, sCMseg)
	c.comment = g.text(g.lens.cCmnt, sCCmnt)
	g.r.rowStop(g.streams, g.defs)
}

// sparseKey is dbgen's mk_sparse: order keys use only 8 of every 32 numbers; refresh set
// inserts use the next 8 (seq 1).
func sparseKey(i, seq int64) int64 {
	return ((i>>3)<<2|seq)<<3 | i&7
}

// mkOrder generates order index with its lineitems. upd is the refresh set number (0 for
// the base data).
func (g *rowGen) mkOrder(index, upd int64, o *orderRow) {
	g.r.rowStart()
	var seq int64
	if upd != 0 {
		seq = 1 + upd/(10000/updatePercent)
	}
	o.key = sparseKey(index, seq)
	maxCust := g.sc.customers()
	if g.r.big {
		o.custKey = g.r.unif64(1, maxCust, sOCkey)
	} else {
		o.custKey = g.r.unif(1, maxCust, sOCkey)
	}
	// A third of the customers place no orders.
	delta := int64(1)
	for o.custKey%custMortality == 0 {
		o.custKey += delta
		o.custKey = min(o.custKey, maxCust)
		delta = -delta
	}
	date := g.r.unif(startDate, startDate+orderDateSpan, sOOdate) - startDate
	o.date = int32(date)
	o.priority = g.r.pick(g.d.oPrio, sOPrio)
	o.clerk = g.r.unif(1, max(g.sc.scale*clerksPerScale, clerksPerScale), sOClrk)
	o.comment = g.text(g.lens.oCmnt, sOCmnt)
	o.total = 0
	o.lines = int(g.r.unif(1, 7, sOLcnt))
	filled := 0
	for i := 0; i < o.lines; i++ {
		l := &o.line[i]
		l.orderKey = o.key
		l.number = int64(i + 1)
		l.qty = g.r.unif(1, 50, sLQty)
		l.discount = g.r.unif(0, 10, sLDcnt)
		l.tax = g.r.unif(0, 8, sLTax)
		l.instruct = g.r.pick(g.d.instruct, sLShip)
		l.mode = g.r.pick(g.d.smode, sLSmode)
		l.comment = g.text(g.lens.lCmnt, sLCmnt)
		if g.r.big {
			l.partKey = g.r.unif64(1, g.sc.parts(), sLPkey)
		} else {
			l.partKey = g.r.unif(1, g.sc.parts(), sLPkey)
		}
		l.suppKey = g.partSupp(l.partKey, g.r.unif(0, 3, sLSkey))
		l.price = retailPrice(l.partKey) * l.qty
		o.total += l.price * (100 - l.discount) / 100 * (100 + l.tax) / 100
		ship := date + g.r.unif(1, lShipDateMax, sLSdte)
		commit := date + g.r.unif(30, 90, sLCdte)
		receipt := ship + g.r.unif(1, lReceiptMax, sLRdte)
		l.shipDate, l.commitDate, l.receiptDate = int32(ship), int32(commit), int32(receipt)
		if receipt <= currentDay {
			l.returnFlag = g.d.rflag.text[g.r.pick(g.d.rflag, sLRflg)][0]
		} else {
			l.returnFlag = 'N'
		}
		if ship <= currentDay {
			l.status = 'F'
			filled++
		} else {
			l.status = 'O'
		}
	}
	switch {
	case filled == o.lines:
		o.status = 'F'
	case filled > 0:
		o.status = 'P'
	default:
		o.status = 'O'
	}
	g.r.rowStop(g.streams, g.defs)
}

func (g *rowGen) mkNation(key int64, n *nationRow) {
	g.r.rowStart()
	n.key = key
	n.region = g.d.nations.cum[key]
	n.comment = g.text(g.lens.nCmnt, sNCmnt)
	g.r.rowStop(g.streams, g.defs)
}

func (g *rowGen) mkRegion(key int64, r *regionRow) {
	g.r.rowStart()
	r.key = key
	r.comment = g.text(g.lens.rCmnt, sRCmnt)
	g.r.rowStop(g.streams, g.defs)
}
