package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

// table is a query's result as text, in the answer files' form: one string per cell, SQL
// NULL as the empty string.
type table struct {
	Columns []string
	Types   []string // DuckDB's type names: "DECIMAL(38,4)", "DOUBLE", "VARCHAR", …
	Rows    [][]string
}

// formatCell writes a value scanned from DuckDB as the answer files print it: decimals at
// their scale, dates as YYYY-MM-DD, doubles in their shortest exact form with at least one
// digit after the point (0.0, 25.575154611454693).
func formatCell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case bool:
		return strconv.FormatBool(x)
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint:
		return fmt.Sprint(x)
	case *big.Int:
		return x.String()
	case float32:
		return formatDouble(float64(x))
	case float64:
		return formatDouble(x)
	case duckdb.Decimal:
		return formatDecimal(x.Value, int(x.Scale))
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format(time.DateOnly)
		}
		return x.Format("2006-01-02 15:04:05.999999")
	}
	return fmt.Sprint(v)
}

// formatDecimal prints the integer v scaled by 10^-scale with exactly scale digits after the
// point.
func formatDecimal(v *big.Int, scale int) string {
	if v == nil {
		return ""
	}
	digits := new(big.Int).Abs(v).String()
	sign := ""
	if v.Sign() < 0 {
		sign = "-"
	}
	if scale <= 0 {
		return sign + digits
	}
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	cut := len(digits) - scale
	return sign + digits[:cut] + "." + digits[cut:]
}

// formatDouble prints f in its shortest round-tripping form, positionally between 1e-4 and
// 1e16 with at least one digit after the point, and in exponent form outside that range.
func formatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	a := math.Abs(f)
	if a != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// isFloatType reports whether a DuckDB column type holds binary floating point values, which
// are compared within a relative tolerance; every other type is compared exactly.
func isFloatType(t string) bool {
	switch strings.ToUpper(t) {
	case "DOUBLE", "FLOAT", "REAL", "FLOAT4", "FLOAT8":
		return true
	}
	return false
}

// floatTolerance is the relative difference allowed between a double result and its answer:
// averages and ratios depend on the order of summation.
const floatTolerance = 1e-6

// writePSV writes t as the answer files are written: a header row, then the rows, cells
// separated by '|'.
func writePSV(w io.Writer, t *table) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(strings.Join(t.Columns, "|") + "\n")
	for _, r := range t.Rows {
		bw.WriteString(strings.Join(r, "|") + "\n")
	}
	return bw.Flush()
}

// readPSV reads an answer file: a header row, then '|'-separated rows without quoting.
func readPSV(path string) (*table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var t table
	first := true
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		cells := strings.Split(line, "|")
		if first {
			t.Columns = cells
			first = false
			continue
		}
		t.Rows = append(t.Rows, cells)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if first {
		return nil, fmt.Errorf("%s: empty file, want a header row", path)
	}
	return &t, nil
}

// answerPath returns the answer file for q in dir, or "" if q has none (the extra queries).
// The validation scripts keep qgen -d's Q11 fraction 0.0001 at every scale factor, whereas
// q11.csv applies the specification's 0.0001/SF; where the directory has the answer for the
// fixed fraction (SF < 1) and the script uses it, that file is the right one.
func answerPath(dir string, q *query) string {
	if q.Number == 0 {
		return ""
	}
	if q.Number == 11 && strings.Contains(q.Script, "0.0001000000") {
		p := filepath.Join(dir, "q11-fraction-0.0001.csv")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return filepath.Join(dir, fmt.Sprintf("q%02d.csv", q.Number))
}

// maxReported bounds the differences compareResult lists for one query.
const maxReported = 5

// compareResult compares got with the expected answer: the same number of columns and rows,
// in order; strings, integers, dates and decimals equal to the last printed digit, doubles
// within floatTolerance relative. It returns a description of each difference (at most
// maxReported, then a count of the rest); none means the result matches.
func compareResult(got, want *table) []string {
	var diffs []string
	if len(want.Rows) > 0 && len(got.Columns) != len(want.Columns) {
		return []string{fmt.Sprintf("%d columns (%s), want %d (%s)", len(got.Columns),
			strings.Join(got.Columns, "|"), len(want.Columns), strings.Join(want.Columns, "|"))}
	}
	if len(got.Rows) != len(want.Rows) {
		diffs = append(diffs, fmt.Sprintf("%d rows, want %d", len(got.Rows), len(want.Rows)))
	}
	more := 0
	for i := range min(len(got.Rows), len(want.Rows)) {
		g, w := got.Rows[i], want.Rows[i]
		if len(w) != len(g) {
			diffs = append(diffs, fmt.Sprintf("row %d: %d cells, want %d", i+1, len(g), len(w)))
			continue
		}
		for j := range g {
			if cellsEqual(g[j], w[j], isFloatType(got.Types[j])) {
				continue
			}
			if len(diffs) >= maxReported {
				more++
				continue
			}
			diffs = append(diffs, fmt.Sprintf("row %d column %s: got %q, want %q", i+1, got.Columns[j], g[j], w[j]))
		}
	}
	if more > 0 {
		diffs = append(diffs, fmt.Sprintf("and %d more differences", more))
	}
	return diffs
}

// cellsEqual compares one cell with its answer, within floatTolerance for doubles.
func cellsEqual(got, want string, float bool) bool {
	if got == want {
		return true
	}
	if !float || got == "" || want == "" {
		return false
	}
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(want, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	return math.Abs(g-w) <= floatTolerance*math.Max(math.Abs(g), math.Abs(w))
}
