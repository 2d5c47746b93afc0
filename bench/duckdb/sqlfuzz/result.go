package main

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// colClass is how a result column's values compare.
type colClass uint8

const (
	classText  colClass = iota // byte-wise
	classExact                 // integers and decimals: exactly, as numbers (12.50 = 12.5)
	classFloat                 // a DOUBLE on either side: as numbers, with a tolerance
)

// classify maps an engine's column type name to its class.
func classify(typeName string) colClass {
	t := strings.ToUpper(typeName)
	switch {
	case strings.HasPrefix(t, "DECIMAL"), strings.Contains(t, "INT"), t == "NEWDECIMAL":
		return classExact
	case t == "DOUBLE", t == "FLOAT", t == "REAL":
		return classFloat
	}
	return classText
}

// cell is one value of a result: NULL, or its text as the engine printed it (dates as
// yyyy-mm-dd, numbers in decimal).
type cell struct {
	null bool
	s    string
}

func (c cell) String() string {
	if c.null {
		return "NULL"
	}
	return c.s
}

// result is a query's answer from one engine.
type result struct {
	types []string // the engine's column type names
	rows  [][]cell
}

// classes combines two results' column types: numbers compare as numbers only when both
// engines say number, with a tolerance when either says DOUBLE.
func classes(a, b *result) []colClass {
	out := make([]colClass, len(a.types))
	for i := range out {
		ca, cb := classify(a.types[i]), classify(b.types[i])
		switch {
		case ca == classText || cb == classText:
			out[i] = classText
		case ca == classFloat || cb == classFloat:
			out[i] = classFloat
		default:
			out[i] = classExact
		}
	}
	return out
}

// cellsEqual compares two values of a column of class cl.
func cellsEqual(a, b cell, cl colClass) bool {
	if a.null || b.null {
		return a.null == b.null
	}
	switch cl {
	case classExact:
		x, ok1 := new(big.Rat).SetString(a.s)
		y, ok2 := new(big.Rat).SetString(b.s)
		if ok1 && ok2 {
			return x.Cmp(y) == 0
		}
	case classFloat:
		x, err1 := strconv.ParseFloat(a.s, 64)
		y, err2 := strconv.ParseFloat(b.s, 64)
		if err1 == nil && err2 == nil {
			return floatsClose(x, y)
		}
	}
	return a.s == b.s
}

// floatsClose allows for summation order (relative 1e-9) and for MySQL's AVG, a DECIMAL
// rounded to 4 or 6 places where DuckDB's is a DOUBLE (absolute 6e-5).
func floatsClose(x, y float64) bool {
	if x == y || (math.IsNaN(x) && math.IsNaN(y)) {
		return true
	}
	d := math.Abs(x - y)
	return d <= 6e-5 || d <= 1e-9*math.Max(math.Abs(x), math.Abs(y))
}

// sortKey is a row's text for putting a multiset in order: floats rounded to 8 significant
// digits and exact numbers normalised, so that rows the comparison calls equal sort alike.
func sortKey(row []cell, cls []colClass) string {
	var b strings.Builder
	for i, c := range row {
		if i > 0 {
			b.WriteByte('|')
		}
		if c.null {
			b.WriteString("\x00NULL")
			continue
		}
		switch cls[i] {
		case classFloat:
			if f, err := strconv.ParseFloat(c.s, 64); err == nil {
				fmt.Fprintf(&b, "%.8g", f)
				continue
			}
		case classExact:
			if r, ok := new(big.Rat).SetString(c.s); ok {
				b.WriteString(r.RatString())
				continue
			}
		}
		b.WriteString(c.s)
	}
	return b.String()
}

// sameAnswer compares two results: in the order of the ORDER BY keys order (output column
// indexes, most significant first) when it is not nil, else as multisets. It returns "" when
// they agree, or what differs.
//
// Consecutive rows whose keys tie under the comparison's tolerance, on either side, make a
// tie group, compared as a multiset: where a key is a DOUBLE on one side and a rounded DECIMAL on the other (AVG is
// DECIMAL(p,4) in MySQL, DOUBLE in DuckDB), MySQL sees ties that DuckDB breaks by the digits
// beyond the scale, and the keys after it then order the tied rows differently on each side,
// both correctly. A tie group that the end of a LIMITed answer cuts holds rows each engine
// may pick freely among the tied ones, so there only the keys are compared.
func sameAnswer(a, b *result, order []int, limited bool) string {
	if len(a.types) != len(b.types) {
		return fmt.Sprintf("%d columns against %d", len(a.types), len(b.types))
	}
	cls := classes(a, b)
	ra, rb := a.rows, b.rows
	if order == nil {
		ra, rb = sortedRows(ra, cls), sortedRows(rb, cls)
	}
	if len(ra) != len(rb) {
		return fmt.Sprintf("%d rows against %d", len(ra), len(rb))
	}
	// The keys up to and including the first DOUBLE key decide tie groups; with no DOUBLE
	// key every group is one row, and rows compare in order.
	var tieKeys []int
	for _, k := range order {
		tieKeys = append(tieKeys, k)
		if cls[k] == classFloat {
			break
		}
	}
	if len(tieKeys) == 0 || cls[tieKeys[len(tieKeys)-1]] != classFloat {
		tieKeys = nil
	}
	tied := func(x, y []cell) bool {
		for _, k := range tieKeys {
			if !cellsEqual(x[k], y[k], cls[k]) {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(ra); {
		// A group runs on while consecutive rows tie on either side: ties are not
		// transitive under a tolerance, and the two sides' rounding places the breaks
		// differently (706, 300, 441 at 2.9254, 2.9255, 2.9255 in colink, and 706, 441,
		// 300 at 2.92544, 2.92548, 2.92555 in DuckDB, where 706 ties only with 441).
		j := i + 1
		if tieKeys != nil {
			for j < len(ra) && (tied(ra[j-1], ra[j]) || tied(rb[j-1], rb[j])) {
				j++
			}
		}
		ga, gb := ra[i:j], rb[i:j]
		if j-i > 1 {
			// Put the group's rows in the order of their other columns first: the tie keys
			// differ within the tolerance from side to side, so they cannot order the rows.
			ga, gb = sortedRowsBy(ga, cls, tieKeys), sortedRowsBy(gb, cls, tieKeys)
		}
		// The last group of a LIMITed answer may have lost its tied rows to the cut, even
		// down to one row.
		cut := limited && tieKeys != nil && j == len(ra)
		for r := range ga {
			for c := range ga[r] {
				if cut && !slices.Contains(tieKeys, c) {
					continue
				}
				if !cellsEqual(ga[r][c], gb[r][c], cls[c]) {
					return fmt.Sprintf("row %d column %d: %s against %s", i+r+1, c+1, ga[r][c], gb[r][c])
				}
			}
		}
		i = j
	}
	return ""
}

// sortedRowsBy is sortedRows with the columns last moved to the end of each row's sort key.
func sortedRowsBy(rows [][]cell, cls []colClass, last []int) [][]cell {
	order := make([]int, 0, len(cls))
	for c := range cls {
		if !slices.Contains(last, c) {
			order = append(order, c)
		}
	}
	order = append(order, last...)
	type keyed struct {
		k string
		r []cell
	}
	ks := make([]keyed, len(rows))
	for i, r := range rows {
		re := make([]cell, len(order))
		rc := make([]colClass, len(order))
		for k, c := range order {
			re[k], rc[k] = r[c], cls[c]
		}
		ks[i] = keyed{sortKey(re, rc), r}
	}
	slices.SortStableFunc(ks, func(x, y keyed) int { return strings.Compare(x.k, y.k) })
	out := make([][]cell, len(rows))
	for i := range ks {
		out[i] = ks[i].r
	}
	return out
}

func sortedRows(rows [][]cell, cls []colClass) [][]cell { return sortedRowsBy(rows, cls, nil) }

// format prints up to max rows in psv form.
func (r *result) format(max int) string {
	var b strings.Builder
	for i, row := range r.rows {
		if i == max {
			fmt.Fprintf(&b, "… %d more rows\n", len(r.rows)-max)
			break
		}
		for j, c := range row {
			if j > 0 {
				b.WriteByte('|')
			}
			b.WriteString(c.String())
		}
		b.WriteByte('\n')
	}
	if len(r.rows) == 0 {
		b.WriteString("(no rows)\n")
	}
	return b.String()
}
