package storage

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/colinkdb/colink/internal/rusage"
	"github.com/colinkdb/colink/storage/ndv"
	"github.com/colinkdb/colink/tpch"
)

// benchSF is the TPC-H scale factor of the benchmarks' lineitem: COLINK_BENCH_SF, default 0.1.
func benchSF(b *testing.B) float64 {
	sf := 0.1
	if v := os.Getenv("COLINK_BENCH_SF"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			b.Fatalf("COLINK_BENCH_SF: %v", err)
		}
		sf = f
	}
	return sf
}

// lineitemGenerator returns a generator of lineitem at the benchmark scale, in one chunk.
func lineitemGenerator(b *testing.B) *tpch.Generator {
	sc, err := tpch.NewScale(benchSF(b))
	if err != nil {
		b.Fatal(err)
	}
	gen, err := tpch.NewGenerator(sc, "lineitem", 1, 1)
	if err != nil {
		b.Fatal(err)
	}
	return gen
}

// loadLineitem generates lineitem at the benchmark scale into a new store in dir.
func loadLineitem(b *testing.B, dir string, opts Options) (*Store, time.Duration, int64) {
	gen := lineitemGenerator(b)
	defer gen.Close()
	s, err := Open(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	tx := s.Begin()
	w, err := tx.Replace("lineitem", gen.Schema())
	if err != nil {
		b.Fatal(err)
	}
	var writeTime time.Duration
	for {
		rec, err := gen.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		err = w.Write(ctx, rec)
		writeTime += time.Since(t0)
		rec.Release()
		if err != nil {
			b.Fatal(err)
		}
	}
	t0 := time.Now()
	if err := tx.Commit(ctx); err != nil {
		b.Fatal(err)
	}
	writeTime += time.Since(t0)
	return s, writeTime, w.Rows()
}

// BenchmarkLoadLineitem measures writing lineitem into segments (generation excluded).
func BenchmarkLoadLineitem(b *testing.B) {
	for _, comp := range []string{"none", "snappy", "zstd"} {
		b.Run(comp, func(b *testing.B) {
			var rows int64
			var total time.Duration
			var bytes int64
			for range b.N {
				s, d, n := loadLineitem(b, b.TempDir(), Options{Compression: comp, CacheSize: -1})
				snap := s.Snapshot()
				ti, _ := snap.Table("lineitem")
				for _, sg := range ti.Segments {
					bytes += sg.Bytes
				}
				snap.Release()
				s.Close()
				rows += n
				total += d
			}
			b.ReportMetric(float64(rows)/total.Seconds(), "rows/s")
			b.ReportMetric(float64(bytes)/float64(b.N)/(1<<20), "file-MiB")
		})
	}
}

var (
	q1Columns = []string{"l_returnflag", "l_linestatus", "l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_shipdate"}
	q6Columns = []string{"l_shipdate", "l_discount", "l_quantity", "l_extendedprice"}
)

// BenchmarkScanLineitem scans lineitem's Q1 and Q6 columns: warm (all in the column cache),
// cold (cache dropped, files in the page cache) and cold-disk (page cache dropped too), with 1
// and 2 workers. COLINK_BENCH_COMPRESSION picks the codec (default the store's).
func BenchmarkScanLineitem(b *testing.B) {
	opts := Options{Compression: os.Getenv("COLINK_BENCH_COMPRESSION")}
	s, _, rows := loadLineitem(b, b.TempDir(), opts)
	defer s.Close()
	ctx := context.Background()
	for _, q := range []struct {
		name string
		cols []string
	}{{"q1cols", q1Columns}, {"q6cols", q6Columns}} {
		for _, mode := range []string{"warm", "cold", "cold-disk"} {
			for _, workers := range []int{1, 2} {
				b.Run(q.name+"/"+mode+"/workers="+strconv.Itoa(workers), func(b *testing.B) {
					scan := func() ScanStats {
						snap := s.Snapshot()
						defer snap.Release()
						sc, err := snap.Scan(ScanRequest{Table: "lineitem", Columns: q.cols})
						if err != nil {
							b.Fatal(err)
						}
						defer sc.Close()
						if err := sc.ForEach(ctx, workers, func(RowGroupRef, arrow.Record) error { return nil }); err != nil {
							b.Fatal(err)
						}
						return sc.Stats()
					}
					if mode == "warm" {
						scan()
					}
					var st ScanStats
					ru0, _ := rusage.Self()
					b.ResetTimer()
					for range b.N {
						if mode != "warm" {
							b.StopTimer()
							if err := s.DropCache(mode == "cold-disk"); err != nil {
								b.Fatal(err)
							}
							b.StartTimer()
						}
						st = scan()
					}
					ru1, _ := rusage.Self()
					cpu := ru1.Sub(ru0).CPU() // includes the untimed DropCache calls (small)
					b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
					b.ReportMetric(float64(rows)*float64(b.N)/cpu.Seconds(), "rows/cpu-s")
					b.ReportMetric(float64(st.BytesFromDisk)/(1<<20), "disk-MiB/scan")
					b.ReportMetric(float64(st.BytesFromCache+st.BytesDecoded)/(1<<20), "decoded-MiB/scan")
				})
			}
		}
	}
}

// BenchmarkDecodeRowGroup compares decoding one row group's Q1 columns with this package's
// reader (Parquet INT64 decimals straight into Decimal64) against pqarrow's (Decimal128,
// then converted to Decimal64 as the engine needs).
func BenchmarkDecodeRowGroup(b *testing.B) {
	s, _, _ := loadLineitem(b, b.TempDir(), Options{CacheSize: -1})
	defer s.Close()
	snap := s.Snapshot()
	defer snap.Release()
	t := snap.cat.table("lineitem")
	sm := t.Segments[0]
	cols := make([]int, len(q1Columns))
	for i, n := range q1Columns {
		cols[i] = t.schema.FieldIndices(n)[0]
	}
	rows := sm.RowGroups[0].Rows
	b.Run("storage", func(b *testing.B) {
		sg, err := s.segment("lineitem", sm)
		if err != nil {
			b.Fatal(err)
		}
		ru0, _ := rusage.Self()
		for range b.N {
			for _, c := range cols {
				arr, _, err := sg.readColumn(0, c, t.schema.Field(c), t.kinds[c])
				if err != nil {
					b.Fatal(err)
				}
				arr.Release()
			}
		}
		ru1, _ := rusage.Self()
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(rows)*float64(b.N)/ru1.Sub(ru0).CPU().Seconds(), "rows/cpu-s")
	})
	b.Run("pqarrow", func(b *testing.B) {
		pf, err := file.OpenParquetFile(s.dir+"/"+sm.File, false)
		if err != nil {
			b.Fatal(err)
		}
		defer pf.Close()
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: rows}, memory.DefaultAllocator)
		if err != nil {
			b.Fatal(err)
		}
		ru0, _ := rusage.Self()
		for range b.N {
			tbl, err := fr.ReadRowGroups(context.Background(), cols, []int{0})
			if err != nil {
				b.Fatal(err)
			}
			for i := range int(tbl.NumCols()) {
				for _, ch := range tbl.Column(i).Data().Chunks() {
					if d, ok := ch.(*array.Decimal128); ok {
						toDecimal64(d).Release()
					}
				}
			}
			tbl.Release()
		}
		ru1, _ := rusage.Self()
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(rows)*float64(b.N)/ru1.Sub(ru0).CPU().Seconds(), "rows/cpu-s")
	})
}

func toDecimal64(d *array.Decimal128) arrow.Array {
	dt := d.DataType().(*arrow.Decimal128Type)
	bld := array.NewDecimal64Builder(memory.DefaultAllocator, &arrow.Decimal64Type{Precision: dt.Precision, Scale: dt.Scale})
	defer bld.Release()
	bld.Reserve(d.Len())
	for i := range d.Len() {
		bld.UnsafeAppend(decimal.Decimal64(d.Value(i).LowBits()))
	}
	return bld.NewArray()
}

// BenchmarkSketchLineitem measures what the distinct-value sketches add to a load: every
// column of lineitem's rows (generated once, held in memory) into its segment sketch, as the
// encoder does beside writing the row group. Compare its ns/row with
// BenchmarkLoadLineitem's rows/s.
func BenchmarkSketchLineitem(b *testing.B) {
	gen := lineitemGenerator(b)
	defer gen.Close()
	var recs []arrow.RecordBatch
	var rows int64
	for {
		rec, err := gen.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		recs = append(recs, rec)
		rows += rec.NumRows()
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	sks := make([]ndv.Sketch, recs[0].NumCols())
	b.ResetTimer()
	for b.Loop() {
		for _, r := range recs {
			for c := range sks {
				addToSketch(&sks[c], r.Column(c))
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*rows), "ns/row")
}
