package tpch

// This file holds dbgen's random number machinery: 48 independent Park–Miller "minimum
// standard" streams (x' = 16807·x mod 2³¹−1), one or more per column, each consumed a fixed
// number of times per row (the stream's boundary) so that any row's state can be reached by
// skipping ahead (x·16807ⁿ mod 2³¹−1). Two streams switch to a 64-bit LCG at scale factors of
// 30000 and above, as dbgen 2.14 does.

// Stream indexes, one per generated column (dbgen's *_SD constants).
const (
	sPMfg       = 0
	sPBrnd      = 1
	sPType      = 2
	sPSize      = 3
	sPCntr      = 4
	sTextPool   = 5 // only drives the text pool
	sPCmnt      = 6
	sPSQty      = 7
	sPSScst     = 8
	sPSCmnt     = 9
	sOSupp      = 10 // reserved by dbgen, never drawn
	sOClrk      = 11
	sOCmnt      = 12
	sOOdate     = 13
	sLQty       = 14
	sLDcnt      = 15
	sLTax       = 16
	sLShip      = 17
	sLSmode     = 18
	sLPkey      = 19
	sLSkey      = 20
	sLSdte      = 21
	sLCdte      = 22
	sLRdte      = 23
	sLRflg      = 24
	sLCmnt      = 25
	sCAddr      = 26
	sCNtrg      = 27
	sCPhne      = 28
	sCAbal      = 29
	sCMseg      = 30
	sCCmnt      = 31
	sSAddr      = 32
	sSNtrg      = 33
	sSPhne      = 34
	sSAbal      = 35
	sSCmnt      = 36
	sPName      = 37
	sOPrio      = 38
	sHVar       = 39 // reserved by dbgen, never drawn
	sOCkey      = 40
	sNCmnt      = 41
	sRCmnt      = 42
	sOLcnt      = 43
	sBBBJunk    = 44
	sBBBType    = 45
	sBBBComment = 46
	sBBBOffset  = 47
	numStreams  = 48
)

// Table identities as dbgen numbers them; they tie streams to the table that owns them.
const (
	tidNone   = -1
	tidPart   = 0
	tidPsupp  = 1
	tidSupp   = 2
	tidCust   = 3
	tidOrder  = 4
	tidLine   = 5
	tidNation = 8
	tidRegion = 9
)

const (
	pmModulus    = 2147483647 // 2³¹−1
	pmMultiplier = 16807
	maxLong      = 0x7FFFFFFF
	rng64A       = 6364136223846793005
	rng64C       = 1
)

// streamDef is a stream's owner, starting seed and per-row boundary (draws per row).
type streamDef struct {
	table    int
	seed     int64
	boundary int64
}

// streamDefs lists dbgen 2.14's seed table.
func streamDefs() *[numStreams]streamDef {
	return &[numStreams]streamDef{
		{tidPart, 1, 1}, {tidPart, 46831694, 1}, {tidPart, 1841581359, 1},
		{tidPart, 1193163244, 1}, {tidPart, 727633698, 1}, {tidNone, 933588178, 1},
		{tidPart, 804159733, 2}, {tidPsupp, 1671059989, 4}, {tidPsupp, 1051288424, 4},
		{tidPsupp, 1961692154, 8}, {tidOrder, 1227283347, 1}, {tidOrder, 1171034773, 1},
		{tidOrder, 276090261, 2}, {tidOrder, 1066728069, 1}, {tidLine, 209208115, 7},
		{tidLine, 554590007, 7}, {tidLine, 721958466, 7}, {tidLine, 1371272478, 7},
		{tidLine, 675466456, 7}, {tidLine, 1808217256, 7}, {tidLine, 2095021727, 7},
		{tidLine, 1769349045, 7}, {tidLine, 904914315, 7}, {tidLine, 373135028, 7},
		{tidLine, 717419739, 7}, {tidLine, 1095462486, 14}, {tidCust, 881155353, 9},
		{tidCust, 1489529863, 1}, {tidCust, 1521138112, 3}, {tidCust, 298370230, 1},
		{tidCust, 1140279430, 1}, {tidCust, 1335826707, 2}, {tidSupp, 706178559, 9},
		{tidSupp, 110356601, 1}, {tidSupp, 884434366, 3}, {tidSupp, 962338209, 1},
		{tidSupp, 1341315363, 2}, {tidPart, 709314158, 92}, {tidOrder, 591449447, 1},
		{tidLine, 431918286, 1}, {tidOrder, 851767375, 1}, {tidNation, 606179079, 2},
		{tidRegion, 1500869201, 2}, {tidOrder, 1434868289, 1}, {tidSupp, 263032577, 1},
		{tidSupp, 753643799, 1}, {tidSupp, 202794285, 1}, {tidSupp, 715851524, 1},
	}
}

// nextRand is one Park–Miller step. For a seed in [0, 2³¹) the product cannot overflow;
// outside that range (only the 64-bit streams at SF ≥ 30000 get there) it wraps exactly as
// dbgen's 64-bit C arithmetic does.
func nextRand(x int64) int64 { return (x * pmMultiplier) % pmModulus }

// nthElement advances a Park–Miller seed by n steps (dbgen's NthElement), with dbgen's
// square-and-multiply, so that even a seed outside [0, 2³¹) ends where dbgen's does.
func nthElement(n, x int64) int64 {
	mult := int64(pmMultiplier)
	for n > 0 {
		if n%2 != 0 {
			x = (mult * x) % pmModulus
		}
		n /= 2
		mult = (mult * mult) % pmModulus
	}
	return x
}

// nextRand64 is one step of dbgen's 64-bit LCG.
func nextRand64(x int64) int64 { return int64(uint64(x)*rng64A + rng64C) }

// advanceRand64 advances the 64-bit LCG by n steps (dbgen's AdvanceRand64).
func advanceRand64(x, n int64) int64 {
	if n == 0 {
		return x
	}
	var (
		a    uint64 = rng64A
		apow uint64 = rng64A
		dsum uint64 = rng64C
	)
	nbit := 0
	for (n >> nbit) != rng64C {
		nbit++
	}
	for nbit--; nbit >= 0; nbit-- {
		dsum *= apow + 1
		apow *= apow
		if (n>>nbit)%2 == 1 {
			dsum += apow
			apow *= a
		}
	}
	return int64(uint64(x)*apow + dsum*rng64C)
}

// maxPad is the largest skip the padding table serves: the largest boundary.
const maxPad = 92

// rng is the state of all 48 streams for one generator, with dbgen's per-row usage counts.
// It is a plain value: copying it forks the streams.
type rng struct {
	seed  [numStreams]int64
	usage [numStreams]int64
	// pow[k] = 16807^k mod 2³¹−1, for padding a row's unused draws in one multiply.
	pow *[maxPad + 1]int64
	// big selects dbgen's 64-bit generator for o_custkey and l_partkey (SF ≥ 30000).
	big bool
}

func powTable() *[maxPad + 1]int64 {
	var t [maxPad + 1]int64
	t[0] = 1
	for k := 1; k <= maxPad; k++ {
		t[k] = (t[k-1] * pmMultiplier) % pmModulus
	}
	return &t
}

// newRNG returns every stream at its starting seed.
func newRNG(big bool) rng {
	r := rng{pow: powTable(), big: big}
	for i, d := range streamDefs() {
		r.seed[i] = d.seed
	}
	return r
}

// unif is dbgen's UnifInt: a draw uniform in [low, high] from stream s. The float arithmetic
// is dbgen's, including its 32-bit overflow for the range [0, MAX_LONG] (which makes that
// range's draws non-positive); the text columns depend on it bit for bit.
func (r *rng) unif(low, high int64, s int) int64 {
	var span float64
	if high == maxLong && low == 0 {
		span = -2147483648.0 // int32(0x7FFFFFFF - 0 + 1) in dbgen's C
	} else {
		span = float64(high - low + 1)
	}
	x := nextRand(r.seed[s])
	r.seed[s] = x
	r.usage[s]++
	return low + int64(float64(x)/2147483647.0*span)
}

// unif64 is dbgen's dss_random64, used for o_custkey and l_partkey at SF ≥ 30000.
func (r *rng) unif64(low, high int64, s int) int64 {
	if low > high {
		low, high = high, low
	}
	x := nextRand64(r.seed[s])
	r.seed[s] = x
	r.usage[s]++
	if x < 0 {
		x = -x
	}
	return low + x%(high-low+1)
}

// rowStart clears the usage counts (dbgen's row_start).
func (r *rng) rowStart() { r.usage = [numStreams]int64{} }

// rowStop pads each listed stream to its boundary (dbgen's row_stop), so that every row
// consumes exactly boundary draws of each of its streams.
func (r *rng) rowStop(streams []int, defs *[numStreams]streamDef) {
	for _, s := range streams {
		n := defs[s].boundary - r.usage[s]
		x := r.seed[s]
		if n > 0 && n <= maxPad && x >= 0 && x < 1<<31 {
			r.seed[s] = (r.pow[n] * x) % pmModulus
		} else {
			r.seed[s] = nthElement(n, x)
		}
	}
}

// skip advances each listed stream past times×rows rows, as dbgen's set_state does for
// chunk times+1 of a table split into chunks of rows rows: times rounds of its sd_* calls.
// For Park–Miller seeds this equals one jump of boundary×rows×times; the call pattern only
// matters for the 64-bit streams at SF ≥ 30000, where dbgen applies the Park–Miller jump to
// a 64-bit seed and so chunked output is defined by exactly these calls.
func (r *rng) skip(streams []int, defs *[numStreams]streamDef, rows, times int64) {
	if rows <= 0 || times <= 0 {
		return
	}
	for _, s := range streams {
		if !r.big || (s != sLPkey && s != sOCkey) {
			r.seed[s] = nthElement(defs[s].boundary*rows*times, r.seed[s])
			continue
		}
		// sd_line advances l_partkey's stream once per line slot; sd_order o_custkey's once.
		calls := defs[s].boundary
		for t := int64(0); t < times; t++ {
			for c := int64(0); c < calls; c++ {
				r.seed[s] = nthElement(rows, r.seed[s])
			}
		}
	}
}

// streamsOf lists the streams owned by the given tables, in stream order.
func streamsOf(defs *[numStreams]streamDef, tables ...int) []int {
	var out []int
	for s, d := range defs {
		for _, t := range tables {
			if d.table == t {
				out = append(out, s)
				break
			}
		}
	}
	return out
}
