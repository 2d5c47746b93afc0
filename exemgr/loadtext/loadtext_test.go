package loadtext

import (
	"fmt"
	"github.com/colinkdb/colink/exec/vec"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/colinkdb/colink/exemgr/frontend"
	"github.com/colinkdb/colink/sql"
)

// loadTestSchema has one column of each type LOAD DATA fills.
var loadTestSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.PrimitiveTypes.Int64},
	{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "price", Type: &arrow.Decimal64Type{Precision: 15, Scale: 2}},
	{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true,
		Metadata: arrow.NewMetadata([]string{vec.SQLTypeKey}, []string{"char(5)"})},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// loadText runs a Loader over text and renders the rows it sends (member: values) or
// its error.
func loadText(t *testing.T, spec sql.LoadSpec, members int, text string) string {
	t.Helper()
	if spec.Columns == nil {
		spec.Columns = []int{0, 1, 2, 3, 4, 5}
	}
	var out strings.Builder
	l, err := New(&spec, loadTestSchema, members, func(m int, rec arrow.RecordBatch) error {
		for r := 0; r < int(rec.NumRows()); r++ {
			fmt.Fprintf(&out, "%d:", m)
			for c := 0; c < int(rec.NumCols()); c++ {
				col := rec.Column(c)
				if col.IsNull(r) {
					out.WriteString(" NULL")
					continue
				}
				switch a := col.(type) {
				case *array.Date32:
					fmt.Fprintf(&out, " %s", a.Value(r).FormattedString())
				case *array.Decimal64:
					fmt.Fprintf(&out, " %s", a.Value(r).ToString(a.DataType().(*arrow.Decimal64Type).Scale))
				default:
					fmt.Fprintf(&out, " %s", col.ValueStr(r))
				}
			}
			out.WriteString("\n")
		}
		return nil
	})
	if err != nil {
		return "error: " + err.Error()
	}
	n, err := l.Run(strings.NewReader(text))
	if err != nil {
		return "error: " + frontendText(err)
	}
	fmt.Fprintf(&out, "%d rows\n", n)
	return out.String()
}

func frontendText(err error) string {
	code, state, msg := frontend.AsMySQL(err)
	return fmt.Sprintf("%d %s %s", code, state, msg)
}

func TestLoadData(t *testing.T) {
	tbl := sql.LoadSpec{FieldsTerminated: "|", Escaped: `\`, LinesTerminated: "\n"}
	for _, c := range []struct {
		name    string
		spec    sql.LoadSpec
		members int
		text    string
		want    string
	}{
		{"tbl lines", tbl, 1, "1|2|3.50|1998-12-01|abc|0.5|\n2|-7|-0.01|2000-02-29|ab|1e3|\n",
			"0: 1 2 3.50 1998-12-01 abc 0.5\n0: 2 -7 -0.01 2000-02-29 ab 1000\n2 rows\n"},
		{"no final newline, no trailing bar", tbl, 1, "1|2|3|1998-12-01|abc|0.5",
			"0: 1 2 3.00 1998-12-01 abc 0.5\n1 rows\n"},
		{"placed by the first column", tbl, 3, "1|0|0|\\N|\\N|\\N|\n2|0|0|\\N|\\N|\\N|\n3|0|0|\\N|\\N|\\N|\n4|0|0|\\N|\\N|\\N|\n",
			"1: 1 0 0.00 NULL NULL NULL\n1: 2 0 0.00 NULL NULL NULL\n2: 3 0 0.00 NULL NULL NULL\n2: 4 0 0.00 NULL NULL NULL\n4 rows\n"}, // link.MemberOfInt(k, 3)
		{"rounded decimals", tbl, 1, "1|0|0.125|\\N|\\N|\\N\n2|0|-0.124|\\N|\\N|\\N\n",
			"0: 1 0 0.13 NULL NULL NULL\n0: 2 0 -0.12 NULL NULL NULL\n2 rows\n"},
		{"escapes", tbl, 1, "1|\\N|0|\\N|a\\|b|\\N\n2|\\N|0|\\N|\\\\n\\t|\\N\n",
			"0: 1 NULL 0.00 NULL a|b NULL\n0: 2 NULL 0.00 NULL \\n\t NULL\n2 rows\n"},
		{"enclosed", sql.LoadSpec{FieldsTerminated: ",", Enclosed: `"`, Escaped: `\`, LinesTerminated: "\n"}, 1,
			"1,2,3,\"2001-01-01\",\"a,\"\"b\",4\n2,3,4,\\N,\"x\ny\",5\n",
			"0: 1 2 3.00 2001-01-01 a,\"b 4\n0: 2 3 4.00 NULL x\ny 5\n2 rows\n"},
		{"crlf and ignored header", sql.LoadSpec{FieldsTerminated: "\t", Escaped: `\`, LinesTerminated: "\r\n", IgnoreLines: 1}, 1,
			"k\tn\tprice\td\ts\tf\r\n1\t2\t3\t2001-01-01\tx\t1\r\n", "0: 1 2 3.00 2001-01-01 x 1\n1 rows\n"},
		{"lines starting by", sql.LoadSpec{FieldsTerminated: "|", Escaped: `\`, LinesTerminated: "\n", LinesStarting: "row:"}, 1,
			"row:1|2|3|\\N|\\N|\\N\nskipped\nxx row:2|2|3|\\N|\\N|\\N\n", "0: 1 2 3.00 NULL NULL NULL\n0: 2 2 3.00 NULL NULL NULL\n2 rows\n"},
		{"a column list", sql.LoadSpec{FieldsTerminated: "|", Escaped: `\`, LinesTerminated: "\n", Columns: []int{2, 0}}, 1,
			"9.99|5|\n", "0: 5 NULL 9.99 NULL NULL NULL\n1 rows\n"},
		{"empty file", tbl, 2, "", "0 rows\n"},
		{"spaces, signs and long fractions", tbl, 1, " +1 |\t-2\t| +3.505 | 1998-12-01 |x|1|\n2|0|0.00000000000000000000000000000000000000000000000001|\\N|\\N|\\N|\n",
			"0: 1 -2 3.51 1998-12-01 x 1\n0: 2 0 0.00 NULL NULL NULL\n2 rows\n"},
		{"leading zeros", tbl, 1, "0001|-0002|0000000000000000000000000000000000000000012.5|\\N|\\N|\\N|\n", "0: 1 -2 12.50 NULL NULL NULL\n1 rows\n"},
		{"bigint out of range", tbl, 1, "9223372036854775808|2|3|\\N|\\N|\\N|\n", "error: 1366 HY000 Incorrect integer value: '9223372036854775808' for column 'k' at row 1"},
		{"integer with a fraction", tbl, 1, "1|2.0|3|\\N|\\N|\\N|\n", "error: 1366 HY000 Incorrect integer value: '2.0' for column 'n' at row 1"},
		{"integer prefix", tbl, 1, "12abc|2|3|\\N|\\N|\\N|\n", "error: 1366 HY000 Incorrect integer value: '12abc' for column 'k' at row 1"},
		{"decimal exponent", tbl, 1, "1|2|1e3|\\N|\\N|\\N|\n", "error: 1366 HY000 Incorrect decimal value: '1e3' for column 'price' at row 1"},
		{"decimal rounded out of range", tbl, 1, "1|2|9999999999999.995|\\N|\\N|\\N|\n", "error: 1264 22003 Out of range value for column 'price' at row 1"},
		{"decimal at its precision", tbl, 1, "1|2|-9999999999999.994|\\N|\\N|\\N|\n", "0: 1 2 -9999999999999.99 NULL NULL NULL\n1 rows\n"},
		{"short date", tbl, 1, "1|2|3|1998-1-01|\\N|\\N|\n", "error: 1292 22007 Incorrect date value: '1998-1-01' for column 'd' at row 1"},
		{"zero date", tbl, 1, "1|2|3|0000-00-00|\\N|\\N|\n", "error: 1292 22007 Incorrect date value: '0000-00-00' for column 'd' at row 1"},
		{"two-digit year", tbl, 1, "1|2|3|98-12-01|\\N|\\N|\n", "error: 1292 22007 Incorrect date value: '98-12-01' for column 'd' at row 1"},

		{"bad integer", tbl, 1, "1|2|3|\\N|\\N|\\N|\nx1|2|3|\\N|\\N|\\N|\n", "error: 1366 HY000 Incorrect integer value: 'x1' for column 'k' at row 2"},
		{"bad integer, placed", tbl, 2, "x1|2|3|\\N|\\N|\\N|\n", "error: 1366 HY000 Incorrect integer value: 'x1' for column 'k' at row 1"},
		{"empty integer", tbl, 1, "|2|3|\\N|\\N|\\N|\n", "error: 1366 HY000 Incorrect integer value: '' for column 'k' at row 1"},
		{"int out of range", tbl, 1, "1|3000000000|3|\\N|\\N|\\N|\n", "error: 1264 22003 Out of range value for column 'n' at row 1"},
		{"decimal out of range", tbl, 1, "1|2|12345678901234|\\N|\\N|\\N|\n", "error: 1264 22003 Out of range value for column 'price' at row 1"},
		{"bad decimal", tbl, 1, "1|2|1.2.3|\\N|\\N|\\N|\n", "error: 1366 HY000 Incorrect decimal value: '1.2.3' for column 'price' at row 1"},
		{"bad date", tbl, 1, "1|2|3|1998-02-30|\\N|\\N|\n", "error: 1292 22007 Incorrect date value: '1998-02-30' for column 'd' at row 1"},
		{"too long", tbl, 1, "1|2|3|\\N|abcdef|\\N|\n", "error: 1406 22001 Data too long for column 's' at row 1"},
		{"bad double", tbl, 1, "1|2|3|\\N|\\N|1.2x|\n", "error: 1366 HY000 Incorrect double value: '1.2x' for column 'f' at row 1"},
		{"too few fields", tbl, 1, "1|2|3|\\N|\\N|\\N|\n1|2|3\n", "error: 1261 01000 Row 2 doesn't contain data for all columns (3 fields, 6 expected)"},
		{"too many fields", tbl, 1, "1|2|3|\\N|\\N|\\N|7|\n", "error: 1262 01000 Row 1 was truncated; it contained more data than there were input columns (8 fields, 6 expected)"},
		{"null into not null", tbl, 1, "1|2|\\N|\\N|\\N|\\N|\n", "error: 1048 23000 Column 'price' cannot be null (row 1)"},
		{"unclosed enclosure", sql.LoadSpec{FieldsTerminated: ",", Enclosed: `"`, Escaped: `\`, LinesTerminated: "\n"}, 1,
			"1,2,3,\\N,\"abc,4", "error: 1366 HY000 Row 1: a field opened with '\"' is not closed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := loadText(t, c.spec, c.members, c.text); got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func TestLoadDataBatches(t *testing.T) {
	var sb strings.Builder
	const rows = 2*loadBatchRows + 17
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&sb, "%d|%d|1.00|2001-01-01|x|0|\n", i, i%100)
	}
	spec := sql.LoadSpec{FieldsTerminated: "|", Escaped: `\`, LinesTerminated: "\n", Columns: []int{0, 1, 2, 3, 4, 5}}
	got := map[int]int64{}
	batches := 0
	l, err := New(&spec, loadTestSchema, 2, func(m int, rec arrow.RecordBatch) error {
		got[m] += rec.NumRows()
		batches++
		if rec.NumRows() > loadBatchRows {
			t.Errorf("a batch of %d rows", rec.NumRows())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := l.Run(strings.NewReader(sb.String()))
	if err != nil || n != rows || got[0]+got[1] != rows || got[0] == 0 || got[1] == 0 || batches < 3 {
		t.Errorf("%d rows (%v) in %d batches, err %v", n, got, batches, err)
	}
}
