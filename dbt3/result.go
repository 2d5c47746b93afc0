package dbt3

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/colinkdb/colink/dbt3/answers"
)

// Result is a statement's result set as the MySQL text protocol delivered it: every value
// as the server spelled it (decimals at their scale, dates as YYYY-MM-DD).
type Result struct {
	Columns []string
	Types   []string // the driver's type names: DECIMAL, BIGINT, CHAR, VARCHAR, DATE, …
	Rows    [][]string
	nulls   []int // row*len(Columns)+column of each NULL, ascending
}

// IsNull reports whether the value at row r, column c is NULL.
func (r *Result) IsNull(row, col int) bool {
	_, found := slices.BinarySearch(r.nulls, row*len(r.Columns)+col)
	return found
}

// textType reports whether a column of the driver's type name holds text (compared
// exactly, printed left-aligned) rather than a number.
func textType(name string) bool {
	switch strings.TrimPrefix(name, "UNSIGNED ") {
	case "DECIMAL", "BIGINT", "INT", "MEDIUMINT", "SMALLINT", "TINYINT", "DOUBLE", "FLOAT", "BIT", "YEAR", "NULL":
		return false
	}
	return true
}

// Answers returns the result in the TPC-H answers' psv form (NULL as an empty value), with
// its text columns marked so that answers.Compare compares them exactly.
func (r *Result) Answers() *answers.Table {
	t := &answers.Table{Columns: r.Columns, Rows: r.Rows, Text: make([]bool, len(r.Columns))}
	for i, ty := range r.Types {
		t.Text[i] = textType(ty)
	}
	return t
}

// WritePSV writes the result as the answer files spell results: a header of column names,
// then one line per row, values separated by "|", NULL as nothing.
func (r *Result) WritePSV(w io.Writer) error {
	return r.Answers().WritePSV(w)
}

// WriteTable writes the result as the mysql client's table: boxed, numbers right-aligned,
// NULL spelled out, and a row count.
func (r *Result) WriteTable(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if len(r.Columns) == 0 {
		fmt.Fprintln(bw, "Query OK, no result set")
		return bw.Flush()
	}
	cell := func(row, col int) string {
		if r.IsNull(row, col) {
			return "NULL"
		}
		return r.Rows[row][col]
	}
	width := make([]int, len(r.Columns))
	for c, name := range r.Columns {
		width[c] = utf8.RuneCountInString(name)
	}
	for row := range r.Rows {
		for c := range r.Columns {
			width[c] = max(width[c], utf8.RuneCountInString(cell(row, c)))
		}
	}
	rule := func() {
		for _, wd := range width {
			bw.WriteString("+" + strings.Repeat("-", wd+2))
		}
		bw.WriteString("+\n")
	}
	line := func(values func(c int) string, right func(c int) bool) {
		for c, wd := range width {
			v := values(c)
			pad := strings.Repeat(" ", wd-utf8.RuneCountInString(v))
			if right(c) {
				bw.WriteString("| " + pad + v + " ")
			} else {
				bw.WriteString("| " + v + pad + " ")
			}
		}
		bw.WriteString("|\n")
	}
	rule()
	line(func(c int) string { return r.Columns[c] }, func(int) bool { return false })
	rule()
	for row := range r.Rows {
		line(func(c int) string { return cell(row, c) }, func(c int) bool { return !textType(r.Types[c]) })
	}
	if len(r.Rows) > 0 {
		rule()
	}
	switch n := len(r.Rows); n {
	case 0:
		fmt.Fprintln(bw, "Empty set")
	case 1:
		fmt.Fprintln(bw, "1 row in set")
	default:
		fmt.Fprintf(bw, "%d rows in set\n", n)
	}
	return bw.Flush()
}

// WriteCSV writes the result as RFC 4180 CSV with a header row; a NULL is \N, as MySQL's
// SELECT … INTO OUTFILE and LOAD DATA spell it, so that it differs from an empty string.
func (r *Result) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(r.Columns); err != nil {
		return err
	}
	rec := make([]string, len(r.Columns))
	for row := range r.Rows {
		for c := range r.Columns {
			rec[c] = r.Rows[row][c]
			if r.IsNull(row, c) {
				rec[c] = `\N`
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the result as a JSON array with one object per row, keyed by column
// name (in the columns' order). Numbers stay numbers, with every digit the server sent (a
// DECIMAL is not rounded through a float), text is a string, NULL is null.
func (r *Result) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriter(w)
	keys := make([][]byte, len(r.Columns))
	for c, name := range r.Columns {
		k, err := json.Marshal(name)
		if err != nil {
			return err
		}
		keys[c] = k
	}
	bw.WriteString("[")
	for row := range r.Rows {
		if row > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n  {")
		for c := range r.Columns {
			if c > 0 {
				bw.WriteString(", ")
			}
			bw.Write(keys[c])
			bw.WriteString(": ")
			v := r.Rows[row][c]
			switch {
			case r.IsNull(row, c):
				bw.WriteString("null")
			case !textType(r.Types[c]) && json.Valid([]byte(v)):
				bw.WriteString(v)
			default:
				b, err := json.Marshal(v)
				if err != nil {
					return err
				}
				bw.Write(b)
			}
		}
		bw.WriteString("}")
	}
	if len(r.Rows) > 0 {
		bw.WriteString("\n")
	}
	bw.WriteString("]\n")
	return bw.Flush()
}
