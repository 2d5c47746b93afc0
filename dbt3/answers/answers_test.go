package answers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/internal/testref"
)

func mustParse(t *testing.T, s string) *Table {
	t.Helper()
	tb, err := Parse(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestParse(t *testing.T) {
	tb := mustParse(t, "a|b\n1|x\n|\n")
	if len(tb.Columns) != 2 || len(tb.Rows) != 2 || tb.Rows[1][0] != "" || tb.Rows[0][1] != "x" {
		t.Fatalf("%+v", tb)
	}
	// A one-column NULL result: the header and one empty line.
	tb = mustParse(t, "avg_yearly\n\n")
	if len(tb.Rows) != 1 || tb.Rows[0][0] != "" {
		t.Fatalf("%+v", tb)
	}
	// No rows at all.
	tb = mustParse(t, "a|b\n")
	if len(tb.Rows) != 0 {
		t.Fatalf("%+v", tb)
	}
	for _, bad := range []string{"", "a|b\n1\n", "a\n1|2\n"} {
		if _, err := Parse(strings.NewReader(bad)); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
}

func TestCompare(t *testing.T) {
	want := "name|cnt|total|avg|ratio\n" +
		"A|14876|532348211.65|25.575154611454693|0.0\n" +
		"B|348|12384801.37|0.047758620689655175|0.0\n"
	cases := []struct {
		got string
		ok  bool
	}{
		{want, true},
		// MySQL's AVG scale: six places, correct to the last one.
		{"name|cnt|total|avg|ratio\nA|14876|532348211.65|25.575155|0.00000000\nB|348|12384801.37|0.047759|0.00000000\n", true},
		// Sums to the printed digit: more digits that round to the expected ones pass.
		{"name|cnt|total|avg|ratio\nA|14876|532348211.6500|25.575155|0.0\nB|348|12384801.37|0.047759|0.0\n", true},
		{"name|cnt|total|avg|ratio\nA|14876|532348211.66|25.575155|0.0\nB|348|12384801.37|0.047759|0.0\n", false},
		{"name|cnt|total|avg|ratio\nA|14876|532348211.6|25.575155|0.0\nB|348|12384801.37|0.047759|0.0\n", false},
		// Counts exact.
		{"name|cnt|total|avg|ratio\nA|14877|532348211.65|25.575155|0.0\nB|348|12384801.37|0.047759|0.0\n", false},
		// An average off in the sixth place.
		{"name|cnt|total|avg|ratio\nA|14876|532348211.65|25.575255|0.0\nB|348|12384801.37|0.047759|0.0\n", false},
		// Strings exact.
		{"name|cnt|total|avg|ratio\nA |14876|532348211.65|25.575155|0.0\nB|348|12384801.37|0.047759|0.0\n", false},
		// Row count and column names.
		{"name|cnt|total|avg|ratio\nA|14876|532348211.65|25.575155|0.0\n", false},
		{"nom|cnt|total|avg|ratio\nA|14876|532348211.65|25.575155|0.0\nB|348|12384801.37|0.047759|0.0\n", false},
		{"NAME|cnt|total|avg|ratio\nA|14876|532348211.65|25.575155|0.0\nB|348|12384801.37|0.047759|0.0\n", true},
		// NULL against a value.
		{"name|cnt|total|avg|ratio\nA|14876||25.575155|0.0\nB|348|12384801.37|0.047759|0.0\n", false},
		// Subtly wrong answers, which the TPC-H spec's own tolerances (sums within 100,
		// averages within 1%) would pass.
		// A sum off by 0.01, and one whose extra places are not zeros.
		{"name|cnt|total|avg|ratio\nA|14876|532348211.64|25.575155|0.0\nB|348|12384801.37|0.047759|0.0\n", false},
		{"name|cnt|total|avg|ratio\nA|14876|532348211.6501|25.575155|0.0\nB|348|12384801.37|0.047759|0.0\n", false},
		// An average off in the third significant digit.
		{"name|cnt|total|avg|ratio\nA|14876|532348211.65|25.475155|0.0\nB|348|12384801.37|0.047759|0.0\n", false},
		{"name|cnt|total|avg|ratio\nA|14876|532348211.65|25.575155|0.0\nB|348|12384801.37|0.047859|0.0\n", false},
		// Averages printed at too coarse a scale: within half their last place, but wrong.
		{"name|cnt|total|avg|ratio\nA|14876|532348211.65|25.6|0.0\nB|348|12384801.37|0.047759|0.0\n", false},
		{"name|cnt|total|avg|ratio\nA|14876|532348211.65|26|0.0\nB|348|12384801.37|0.047759|0.0\n", false},
		{"name|cnt|total|avg|ratio\nA|14876|532348211.65|25.575155|0.0\nB|348|12384801.37|0.05|0.0\n", false},
		// An average at scale 6 rounded the wrong way (truncated), off by a unit of its last place.
		{"name|cnt|total|avg|ratio\nA|14876|532348211.65|25.575155|0.0\nB|348|12384801.37|0.047758|0.0\n", false},
		// More places than the double, correct to 1e-6 relative.
		{"name|cnt|total|avg|ratio\nA|14876|532348211.65|25.57515461145|0.0\nB|348|12384801.37|0.04775862068966|0.0\n", true},
		// A ratio whose every expected value is 0.0: zero at any scale, nothing else.
		{"name|cnt|total|avg|ratio\nA|14876|532348211.65|25.575155|0.0000\nB|348|12384801.37|0.047759|0.00\n", true},
		{"name|cnt|total|avg|ratio\nA|14876|532348211.65|25.575155|0.04\nB|348|12384801.37|0.047759|0.0\n", false},
	}
	w := mustParse(t, want)
	for i, c := range cases {
		err := Compare(mustParse(t, c.got), w)
		if (err == nil) != c.ok {
			t.Errorf("case %d: ok=%v, err=%v", i, c.ok, err)
		}
	}
}

func TestTextColumnsCompareExactly(t *testing.T) {
	want := mustParse(t, "code\n13\n")
	got := mustParse(t, "code\n13.0\n")
	if err := Compare(got, want); err != nil {
		t.Fatalf("untyped: %v", err)
	}
	got.Text = []bool{true}
	if err := Compare(got, want); err == nil {
		t.Fatal("a string column compared as a number")
	}
}

func TestFromRecords(t *testing.T) {
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 38, Scale: 4}, Nullable: true},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"x", ""}, []bool{true, false})
	b.Field(1).(*array.Decimal128Builder).AppendValues([]decimal128.Num{decimal128.FromI64(-12345), decimal128.FromI64(5)}, nil)
	b.Field(2).(*array.Date32Builder).AppendValues([]arrow.Date32{9204, 0}, nil)
	b.Field(3).(*array.Int64Builder).AppendValues([]int64{7, 0}, []bool{true, false})
	b.Field(4).(*array.Float64Builder).AppendValues([]float64{0.5, 15.48654581228407}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	tb, err := FromRecords(schema, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	want := "s|d|day|n|f\nx|-1.2345|1995-03-15|7|0.5\n|0.0005|1970-01-01||15.48654581228407\n"
	if got := tb.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if !tb.Text[0] || tb.Text[1] || !tb.Text[2] {
		t.Fatalf("text columns %v", tb.Text)
	}
}

// TestReferenceFiles parses every answer file at SF 0.01 and compares each with itself.
func TestReferenceFiles(t *testing.T) {
	dir := testref.TPCH(t, "answers", "sf0.01")
	files, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
	if len(files) == 0 {
		t.Fatalf("no TPC-H answers at %s", dir)
	}
	for _, f := range files {
		tb, err := ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := Compare(tb, tb); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		data, _ := os.ReadFile(f)
		if tb.String() != string(data) {
			t.Errorf("%s does not round-trip", f)
		}
	}
}
