package loadtext

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/sql"
)

// BenchmarkLoadFields loads lines of loadTestSchema's columns (an integer, an int, a
// decimal, a date, a string and a double per line), so its time per line is mostly the
// text-to-value parsing of the numbers and the date.
func BenchmarkLoadFields(b *testing.B) {
	var file bytes.Buffer
	const lines = 4096
	for i := 0; i < lines; i++ {
		fmt.Fprintf(&file, "%d|%d|%d.%02d|19%02d-%02d-%02d|ab|%d.5|\n", i*7919, i%1000-500, i*37%100000, i%100, 70+i%30, 1+i%12, 1+i%28, i)
	}
	text := file.Bytes()
	spec := sql.LoadSpec{FieldsTerminated: "|", Escaped: `\`, LinesTerminated: "\n", Columns: []int{0, 1, 2, 3, 4, 5}}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		l, err := New(&spec, loadTestSchema, 1, func(int, arrow.RecordBatch) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
		if n, err := l.Run(bytes.NewReader(text)); err != nil || n != lines {
			b.Fatal(n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*lines), "ns/line")
}

// BenchmarkParseFields parses the numeric and date fields alone, one of each per op.
func BenchmarkParseFields(b *testing.B) {
	l := &Loader{}
	cols := []loadColumn{
		{name: "k", typ: arrow.PrimitiveTypes.Int64},
		{name: "n", typ: arrow.PrimitiveTypes.Int32},
		{name: "p", typ: &arrow.Decimal64Type{Precision: 15, Scale: 2}, prec: 15, scale: 2},
		{name: "d", typ: arrow.FixedWidthTypes.Date32},
	}
	vals := [][]byte{[]byte("123456789"), []byte("-4711"), []byte("90123.45"), []byte("1998-12-01")}
	b.ReportAllocs()
	for b.Loop() {
		for i := range cols {
			if _, err := l.parseIntLike(&cols[i], vals[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
}
