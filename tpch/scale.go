package tpch

import (
	"fmt"
	"math"
	"strconv"
)

// MaxScale is the largest scale factor dbgen 2.14 supports.
const MaxScale = 100000

// Scale is a validated scale factor with the table sizes dbgen derives from it.
//
// dbgen reads "-s F" as follows: for F ≥ 1 it uses the integer part of F; for F < 1 it keeps
// an integer scale of 1 and shrinks every table's base row count to ⌊1000·F⌋·base/1000. Scale
// accepts exactly the values for which that reading loses nothing: whole numbers from 1 to
// MaxScale, and multiples of 0.001 below 1.
type Scale struct {
	sf    float64
	scale int64     // dbgen's integer scale
	base  [10]int64 // dbgen's per-table base row counts (tdefs[].base) after -s
}

// ParseScale parses and validates a scale factor such as "0.01", "1" or "300".
func ParseScale(s string) (Scale, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return Scale{}, fmt.Errorf("scale factor %q is not a number", s)
	}
	return NewScale(f)
}

// NewScale validates a scale factor; see Scale for the accepted values.
func NewScale(sf float64) (Scale, error) {
	switch {
	case math.IsNaN(sf) || math.IsInf(sf, 0) || sf <= 0:
		return Scale{}, fmt.Errorf("scale factor %v must be positive", sf)
	case sf > MaxScale:
		return Scale{}, fmt.Errorf("scale factor %v exceeds dbgen's maximum %d", sf, MaxScale)
	case sf >= 1 && sf != math.Trunc(sf):
		return Scale{}, fmt.Errorf("scale factor %v: dbgen uses whole scale factors from 1 up (it would silently generate SF %v)", sf, math.Trunc(sf))
	}
	s := Scale{sf: sf, scale: 1}
	// dbgen's initial bases; orders and lineitem are 10 per customer.
	s.base = [10]int64{200000, 200000, 10000, 150000, 1500000, 1500000, 1500000, 200000, 90, 90}
	if sf >= 1 {
		s.scale = int64(sf)
	} else {
		thousandths := int64(1000 * sf) // dbgen: (int)(1000 * flt_scale)
		if thousandths < 1 {
			return Scale{}, fmt.Errorf("scale factor %v is below dbgen's smallest, 0.001", sf)
		}
		if math.Abs(float64(thousandths)-1000*sf) > 1e-6 && math.Abs(float64(thousandths+1)-1000*sf) > 1e-6 {
			return Scale{}, fmt.Errorf("scale factor %v: below 1 dbgen uses whole thousandths (it would generate SF %v)", sf, float64(thousandths)/1000)
		}
		for i := tidPart; i < tidRegion; i++ {
			b := thousandths * s.base[i] / 1000
			if b < 1 {
				b = 1
			}
			s.base[i] = b
		}
	}
	return s, nil
}

// SF returns the scale factor.
func (s Scale) SF() float64 { return s.sf }

// String formats the scale factor as it was given, e.g. "0.01".
func (s Scale) String() string { return strconv.FormatFloat(s.sf, 'f', -1, 64) }

// big reports whether dbgen switches o_custkey and l_partkey to its 64-bit generator.
func (s Scale) big() bool { return s.scale >= 30000 }

func (s Scale) parts() int64     { return s.base[tidPart] * s.scale }
func (s Scale) suppliers() int64 { return s.base[tidSupp] * s.scale }
func (s Scale) customers() int64 { return s.base[tidCust] * s.scale }
func (s Scale) orders() int64    { return s.base[tidOrder] * s.scale }

// Units returns how many generation units the table has: rows for every table but
// partsupp (one unit per part, four rows each) and lineitem (one unit per order, one to
// seven rows each). Chunks divide units.
func (s Scale) Units(table string) (int64, error) {
	switch table {
	case "part", "partsupp":
		return s.parts(), nil
	case "supplier":
		return s.suppliers(), nil
	case "customer":
		return s.customers(), nil
	case "orders", "lineitem":
		return s.orders(), nil
	case "nation":
		return 25, nil
	case "region":
		return 5, nil
	}
	return 0, unknownTable(table)
}

// EstimatedRows returns the table's row count: exact for every table but lineitem, whose
// count is random (about four rows per order) and is estimated.
func (s Scale) EstimatedRows(table string) (int64, error) {
	n, err := s.Units(table)
	switch table {
	case "partsupp":
		n *= suppPerPart
	case "lineitem":
		n *= 4
	}
	return n, err
}

// RefreshOrders returns the number of orders in one refresh set (RF1 inserts as many
// orders as RF2 deletes): dbgen's ⌊orders/10000⌋·10 at the integer scale.
func (s Scale) RefreshOrders() int64 {
	return s.base[tidOrder] / 10000 * s.scale * updatePercent
}

func unknownTable(name string) error {
	return fmt.Errorf("unknown TPC-H table %q (want one of %v)", name, TableNames())
}
