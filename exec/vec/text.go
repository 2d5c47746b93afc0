package vec

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// The batch text format, used by data-driven tests and for debugging:
//
//	name:type name:type ...        header: one name:type pair per column
//	value | value | ...            one line per row, cells separated by '|'
//
// Cells are trimmed. NULL is a NULL; a string cell may be quoted with single quotes to keep
// surrounding spaces or to write the empty string ('') or the word NULL ('NULL'). Values use
// the forms Datum.AppendText prints (decimals as digits with a point, dates as YYYY-MM-DD,
// booleans as true/false or 1/0).

// Table is rows of Datums with column names and types.
type Table struct {
	Names []string
	Types []Type
	Rows  [][]Datum
}

// ParseTable reads the batch text format.
func ParseTable(text string) (*Table, error) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) == "" {
		return nil, fmt.Errorf("vec: table text has no header line")
	}
	t := &Table{}
	for _, f := range strings.Fields(lines[0]) {
		name, typ, ok := strings.Cut(f, ":")
		if !ok {
			return nil, fmt.Errorf("vec: header field %q is not name:type", f)
		}
		ty, err := ParseType(typ)
		if err != nil {
			return nil, err
		}
		t.Names = append(t.Names, name)
		t.Types = append(t.Types, ty)
	}
	for ln, line := range lines[1:] {
		if strings.TrimSpace(line) == "" {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) != len(t.Types) {
			return nil, fmt.Errorf("vec: row %d has %d cells, header has %d columns", ln+1, len(cells), len(t.Types))
		}
		row := make([]Datum, len(cells))
		for i, c := range cells {
			c = strings.TrimSpace(c)
			if t.Types[i].ID == String && len(c) >= 2 && c[0] == '\'' && c[len(c)-1] == '\'' {
				row[i] = StringDatum(c[1 : len(c)-1])
				continue
			}
			d, err := ParseDatum(t.Types[i], c)
			if err != nil {
				return nil, fmt.Errorf("vec: row %d column %s: %w", ln+1, t.Names[i], err)
			}
			row[i] = d
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// Batch returns rows [start, end) as a batch of append-mode Vecs.
func (t *Table) Batch(start, end int) *Batch {
	b := NewBatch(t.Types)
	for _, row := range t.Rows[start:end] {
		for c, d := range row {
			b.Cols[c].AppendDatum(d)
		}
	}
	b.N = end - start
	return b
}

// FormatCell prints one value in the text format.
func FormatCell(d Datum) string {
	if d.Null {
		return "NULL"
	}
	switch d.Type.ID {
	case String:
		if d.Str == "" || d.Str == "NULL" || strings.TrimSpace(d.Str) != d.Str || strings.Contains(d.Str, "|") {
			return "'" + d.Str + "'"
		}
		return d.Str
	case Bool:
		if d.Int != 0 {
			return "true"
		}
		return "false"
	}
	return d.String()
}

// String prints the table in the text format.
func (t *Table) String() string {
	var sb strings.Builder
	for i, n := range t.Names {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(n + ":" + t.Types[i].String())
	}
	sb.WriteByte('\n')
	for _, row := range t.Rows {
		for i, d := range row {
			if i > 0 {
				sb.WriteString(" | ")
			}
			sb.WriteString(FormatCell(d))
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// AppendBatch appends b's active rows to t.
func (t *Table) AppendBatch(b *Batch) {
	b.Rows(func(i int) {
		row := make([]Datum, len(b.Cols))
		for c, v := range b.Cols {
			row[c] = v.Datum(i)
		}
		t.Rows = append(t.Rows, row)
	})
}

// AppendRecord appends rec's rows to t.
func (t *Table) AppendRecord(rec arrow.RecordBatch) error {
	types, err := TypesFromSchema(rec.Schema())
	if err != nil {
		return err
	}
	b := &Batch{}
	if err := b.ViewRecord(rec, types, 0, int(rec.NumRows())); err != nil {
		return err
	}
	t.AppendBatch(b)
	return nil
}
