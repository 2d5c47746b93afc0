// Package answers owns the psv form of query results that the TPC-H reference answers use
// (../shared/tpch/answers): a header row of column names, then one line per row, values
// separated by "|", no quoting, NULL as an empty value, decimals at their scale, dates as
// YYYY-MM-DD, doubles in shortest form. It parses answer files, formats Arrow results in
// that form, and compares a result with the expected answer the way the acceptance tests
// require:
//
//   - strings (and dates) exactly;
//   - integers (counts, keys) exactly;
//   - decimals exactly: the result must equal the expected value, though it may print more
//     decimal places if they are all zeros (532348211.6500 for 532348211.65, not 0.04 for
//     0.0);
//   - averages and ratios, which the answer files print as full doubles, within 1e-6
//     relative — or, when the result is printed at scale 6 or more (MySQL prints AVG of
//     DECIMAL(15,2) at scale 6) but with fewer places than the double, within half a unit
//     of the result's last place, since an exact engine's value is then correct to every
//     digit it prints. A result printed with fewer than six places gets no such allowance:
//     25.6 is not an answer for 25.575154611454693.
//
// These are tighter than the TPC-H specification's own validation rules (clause 2.1.3.5:
// counts and singletons exact, sums within 100, averages and ratios within 1% once rounded
// to 1/100), which a wrong engine can pass; an engine with exact decimal arithmetic meets
// them to the last digit.
//
// A column counts as approximate (average or ratio) when any of its expected values has
// more than six decimal places or its values have differing numbers of decimal places: a
// decimal column prints every value at one scale, and TPC-H's sums have at most six.
package answers

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec/vec"
)

// Table is a result in psv form.
type Table struct {
	Columns []string
	Rows    [][]string
	// Text, when not nil, marks the columns whose values are strings or dates (compared
	// exactly, never as numbers). FromRecords sets it from the column types; a parsed file
	// leaves it nil.
	Text []bool
}

// Parse reads a psv table: a header line, then rows with as many values as the header has
// names. An empty line is a row of one empty value (a NULL), which only a one-column table
// can have.
func Parse(r io.Reader) (*Table, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("answers: read: %w", err)
	}
	text := string(data)
	if text == "" {
		return nil, fmt.Errorf("answers: empty input, no header row")
	}
	text = strings.TrimSuffix(text, "\n")
	lines := strings.Split(text, "\n")
	t := &Table{Columns: strings.Split(strings.TrimSuffix(lines[0], "\r"), "|")}
	for i, line := range lines[1:] {
		line = strings.TrimSuffix(line, "\r")
		row := strings.Split(line, "|")
		if len(row) != len(t.Columns) {
			return nil, fmt.Errorf("answers: line %d has %d values, the header %d", i+2, len(row), len(t.Columns))
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// ReadFile parses the psv file at path.
func ReadFile(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("answers: %w", err)
	}
	defer f.Close()
	t, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// FromRecords formats records of the given schema: decimals at their scale, dates as
// YYYY-MM-DD, doubles in shortest form, booleans as 1 and 0, NULL as "".
func FromRecords(schema *arrow.Schema, recs []arrow.RecordBatch) (*Table, error) {
	return FormatRecords(schema, recs, "")
}

// FormatRecords is FromRecords with NULL printed as null.
func FormatRecords(schema *arrow.Schema, recs []arrow.RecordBatch, null string) (*Table, error) {
	types, err := vec.TypesFromSchema(schema)
	if err != nil {
		return nil, fmt.Errorf("answers: %w", err)
	}
	t := &Table{Text: make([]bool, len(types))}
	for i, f := range schema.Fields() {
		t.Columns = append(t.Columns, f.Name)
		t.Text[i] = types[i].ID == vec.String || types[i].ID == vec.Date32
	}
	var b vec.Batch
	var buf []byte
	for _, rec := range recs {
		if err := b.ViewRecord(rec, types, 0, int(rec.NumRows())); err != nil {
			return nil, fmt.Errorf("answers: %w", err)
		}
		for r := 0; r < b.N; r++ {
			row := make([]string, len(types))
			for c, v := range b.Cols {
				if v.IsNull(r) {
					row[c] = null
					continue
				}
				buf = v.Datum(r).AppendText(buf[:0])
				row[c] = string(buf)
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t, nil
}

// WritePSV writes the table in psv form.
func (t *Table) WritePSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(strings.Join(t.Columns, "|"))
	bw.WriteByte('\n')
	for _, row := range t.Rows {
		bw.WriteString(strings.Join(row, "|"))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// String is the table in psv form.
func (t *Table) String() string {
	var b bytes.Buffer
	t.WritePSV(&b)
	return b.String()
}

// RelTolerance is the relative difference allowed for averages and ratios.
const RelTolerance = 1e-6

// minAverageScale is the fewest decimal places of an average or ratio that may be judged
// to its own last place: MySQL's scale for AVG of a DECIMAL(p,2) (2 + div_precision_increment).
const minAverageScale = 6

// maxShownMismatches bounds the mismatches a comparison error lists.
const maxShownMismatches = 5

// Compare checks got against want (see the package comment for the rules), in row order.
// Column names are compared without regard to case. The error lists the first mismatches.
func Compare(got, want *Table) error {
	if len(got.Columns) != len(want.Columns) {
		return fmt.Errorf("answers: %d columns %v, want %d %v", len(got.Columns), got.Columns, len(want.Columns), want.Columns)
	}
	var problems []string
	for i := range want.Columns {
		if !strings.EqualFold(strings.TrimSpace(got.Columns[i]), strings.TrimSpace(want.Columns[i])) {
			problems = append(problems, fmt.Sprintf("column %d is named %q, want %q", i+1, got.Columns[i], want.Columns[i]))
		}
	}
	if len(got.Rows) != len(want.Rows) {
		problems = append(problems, fmt.Sprintf("%d rows, want %d", len(got.Rows), len(want.Rows)))
	}
	approx := approximateColumns(want)
	shown := 0
	for r := 0; r < min(len(got.Rows), len(want.Rows)); r++ {
		for c := range want.Columns {
			text := got.Text != nil && got.Text[c]
			if msg := compareValue(got.Rows[r][c], want.Rows[r][c], text, approx[c]); msg != "" {
				if shown < maxShownMismatches {
					problems = append(problems, fmt.Sprintf("row %d column %s: got %q, want %q (%s)", r+1, want.Columns[c], got.Rows[r][c], want.Rows[r][c], msg))
				}
				shown++
			}
		}
	}
	if shown > maxShownMismatches {
		problems = append(problems, fmt.Sprintf("… %d mismatching values in all", shown))
	}
	if len(problems) > 0 {
		return fmt.Errorf("answers: result differs:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// approximateColumns reports, per column, whether the expected values look like doubles
// (averages, ratios) rather than decimals.
func approximateColumns(t *Table) []bool {
	out := make([]bool, len(t.Columns))
	for c := range t.Columns {
		scale := -1
		for _, row := range t.Rows {
			n, ok := parseNumber(row[c])
			if !ok {
				continue
			}
			if n.scale > 6 || n.exp || (scale >= 0 && n.scale != scale) {
				out[c] = true
				break
			}
			scale = n.scale
		}
	}
	return out
}

// number is a parsed decimal literal: value = mant / 10^scale (exactly, as a big.Int), or a
// float for exponent forms.
type number struct {
	mant  *big.Int
	scale int
	exp   bool // written with an exponent: only f is meaningful
	f     float64
}

// parseNumber reads an optionally signed decimal such as -12.345, or a double with an
// exponent; ok is false for anything else (strings, dates, empty).
func parseNumber(s string) (number, bool) {
	if s == "" {
		return number{}, false
	}
	body := s
	if body[0] == '-' || body[0] == '+' {
		body = body[1:]
	}
	if body == "" {
		return number{}, false
	}
	if strings.ContainsAny(body, "eE") {
		var f float64
		if _, err := fmt.Sscanf(s, "%g", &f); err != nil {
			return number{}, false
		}
		return number{exp: true, f: f}, true
	}
	intPart, frac, hasPoint := strings.Cut(body, ".")
	if intPart == "" && frac == "" {
		return number{}, false
	}
	for _, part := range []string{intPart, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return number{}, false
			}
		}
	}
	if hasPoint && frac == "" {
		return number{}, false
	}
	m, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return number{}, false
	}
	if s[0] == '-' {
		m.Neg(m)
	}
	n := number{mant: m, scale: len(frac)}
	n.f, _ = new(big.Float).Quo(new(big.Float).SetInt(m), new(big.Float).SetInt(pow10(len(frac)))).Float64()
	return n, true
}

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// roundTo returns n's mantissa at scale s (s <= n.scale), rounded half away from zero.
func (n number) roundTo(s int) *big.Int {
	if s >= n.scale {
		return new(big.Int).Mul(n.mant, pow10(s-n.scale))
	}
	d := pow10(n.scale - s)
	q, r := new(big.Int).QuoRem(n.mant, d, new(big.Int))
	r.Abs(r).Mul(r, big.NewInt(2))
	if r.Cmp(d) >= 0 {
		if n.mant.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// compareValue returns "" when got matches want, else the reason.
func compareValue(got, want string, text, approx bool) string {
	if got == want {
		return ""
	}
	if text {
		return "strings differ"
	}
	g, gok := parseNumber(got)
	w, wok := parseNumber(want)
	if !gok || !wok {
		return "values differ"
	}
	if !approx {
		switch {
		case g.exp || w.exp:
			return "numbers differ"
		case g.scale < w.scale:
			return fmt.Sprintf("fewer decimal places (%d) than expected (%d)", g.scale, w.scale)
		case g.mant.Cmp(new(big.Int).Mul(w.mant, pow10(g.scale-w.scale))) != 0:
			return "numbers differ"
		}
		return "" // equal, with trailing zeros
	}
	if !g.exp && !w.exp && g.scale >= w.scale && g.roundTo(w.scale).Cmp(w.mant) == 0 {
		return "" // equal to the expected value's last printed digit
	}
	diff := math.Abs(g.f - w.f)
	tol := RelTolerance * math.Abs(w.f)
	if !g.exp && g.scale >= minAverageScale {
		tol = max(tol, 0.5*math.Pow(10, -float64(g.scale))*(1+1e-9))
	}
	if diff <= tol {
		return ""
	}
	return fmt.Sprintf("differs by %g, allowed %g", diff, tol)
}
