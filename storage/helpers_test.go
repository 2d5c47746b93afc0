package storage

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// mix is a deterministic 64-bit hash of (seed, row, col): test data is a pure function of
// its coordinates, so any row can be regenerated to check what a scan returns.
func mix(seed uint64, row int64, col int) uint64 {
	x := seed ^ uint64(row)*0x9E3779B97F4A7C15 ^ uint64(col+1)*0xC2B2AE3D27D4EB4F
	x ^= x >> 33
	x *= 0xFF51AFD7ED558CCD
	x ^= x >> 33
	x *= 0xC4CEB9FE1A85EC53
	x ^= x >> 33
	return x
}

// genValue is the value of column col at row row: nil for NULL, else int64, float64, bool
// or string. Dates rise with the row number (100 rows a day) so zone maps can eliminate.
func genValue(f arrow.Field, seed uint64, row int64, col int) any {
	h := mix(seed, row, col)
	if f.Nullable && h%7 == 0 {
		return nil
	}
	switch t := f.Type.(type) {
	case *arrow.BooleanType:
		return h&1 == 1
	case *arrow.Int32Type:
		return int64(int32(h))
	case *arrow.Int64Type:
		return row*3 + int64(h%3)
	case *arrow.Float64Type:
		return float64(int64(h%2000000)-1000000) / 64
	case *arrow.Date32Type:
		return int64(8035 + row/100)
	case *arrow.Decimal64Type:
		lim := uint64(math.Pow10(int(t.Precision)))
		return int64(h%(2*lim-1)) - int64(lim) + 1
	case *arrow.StringType, *arrow.BinaryType:
		words := []string{"", "a", "AIR", "TRUCK", "special requests", "ünïcødé", "furiously even deposits sleep"}
		return fmt.Sprintf("%s%d", words[h%uint64(len(words))], h%1000)
	}
	panic(fmt.Sprintf("no generator for %s", f.Type))
}

// genRecord builds rows [start, start+n) of the deterministic test table.
func genRecord(mem memory.Allocator, sc *arrow.Schema, seed uint64, start, n int64) arrow.Record {
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for c, f := range sc.Fields() {
		fb := b.Field(c)
		fb.Reserve(int(n))
		for r := start; r < start+n; r++ {
			v := genValue(f, seed, r, c)
			if v == nil {
				fb.AppendNull()
				continue
			}
			switch fb := fb.(type) {
			case *array.BooleanBuilder:
				fb.Append(v.(bool))
			case *array.Int32Builder:
				fb.Append(int32(v.(int64)))
			case *array.Int64Builder:
				fb.Append(v.(int64))
			case *array.Float64Builder:
				fb.Append(v.(float64))
			case *array.Date32Builder:
				fb.Append(arrow.Date32(v.(int64)))
			case *array.Decimal64Builder:
				fb.Append(decimal.Decimal64(v.(int64)))
			case *array.StringBuilder:
				fb.Append(v.(string))
			case *array.BinaryBuilder:
				fb.Append([]byte(v.(string)))
			default:
				panic(fmt.Sprintf("no builder for %T", fb))
			}
		}
	}
	return b.NewRecord()
}

// cellValue reads row i of arr in genValue's representation.
func cellValue(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.Date32:
		return int64(a.Value(i))
	case *array.Decimal64:
		return int64(a.Value(i))
	case *array.String:
		return a.Value(i)
	case *array.Binary:
		return string(a.Value(i))
	}
	panic(fmt.Sprintf("no reader for %T", arr))
}

// loadTable replaces table with rows [0, rows) of the generated data, written in batches.
func loadTable(t testing.TB, s *Store, table string, sc *arrow.Schema, seed uint64, rows, batch int64) {
	t.Helper()
	ctx := context.Background()
	tx := s.Begin()
	w, err := tx.Replace(table, sc)
	if err != nil {
		t.Fatal(err)
	}
	for off := int64(0); off < rows; off += batch {
		rec := genRecord(memory.DefaultAllocator, sc, seed, off, min(batch, rows-off))
		err := w.Write(ctx, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// checkTable scans every column of table and compares each value with the generator's.
func checkTable(t testing.TB, s *Store, table string, seed uint64, rows int64) {
	t.Helper()
	if err := verifyTable(s, table, seed, rows); err != nil {
		t.Fatal(err)
	}
}

func verifyTable(s *Store, table string, seed uint64, rows int64) error {
	snap := s.Snapshot()
	defer snap.Release()
	ti, err := snap.Table(table)
	if err != nil {
		return err
	}
	if ti.Rows != rows {
		return fmt.Errorf("table %s has %d rows, want %d", table, ti.Rows, rows)
	}
	names := make([]string, ti.Schema.NumFields())
	for i, f := range ti.Schema.Fields() {
		names[i] = f.Name
	}
	sc, err := snap.Scan(ScanRequest{Table: table, Columns: names})
	if err != nil {
		return err
	}
	defer sc.Close()
	ctx := context.Background()
	var row int64
	for _, ref := range sc.RowGroups() {
		rec, err := sc.Read(ctx, ref)
		if err != nil {
			return err
		}
		for c, f := range ti.Schema.Fields() {
			col := rec.Column(c)
			for i := 0; i < int(rec.NumRows()); i++ {
				want := genValue(f, seed, row+int64(i), c)
				if got := cellValue(col, i); got != want {
					rec.Release()
					return fmt.Errorf("table %s row %d column %s: got %v, want %v", table, row+int64(i), f.Name, got, want)
				}
			}
		}
		row += rec.NumRows()
		rec.Release()
	}
	if row != rows {
		return fmt.Errorf("table %s: scan returned %d rows, want %d", table, row, rows)
	}
	return nil
}

// testOptions are small layout parameters so that tests cover many row groups and segments.
func testOptions() Options {
	return Options{RowGroupRows: 1000, SegmentRows: 3000, CacheSize: 64 << 20}
}

func openTest(t testing.TB, dir string, opts Options) *Store {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
