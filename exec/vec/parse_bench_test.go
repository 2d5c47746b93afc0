package vec

import "testing"

// BenchmarkParseText parses a decimal at a scale and a date, as CAST of string data does
// per row.
func BenchmarkParseText(b *testing.B) {
	dec, date := []byte("90123.455"), []byte("1998-12-01")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseDecimalScale(dec, 2); err != nil {
			b.Fatal(err)
		}
		if _, err := ParseDate(date); err != nil {
			b.Fatal(err)
		}
	}
}
