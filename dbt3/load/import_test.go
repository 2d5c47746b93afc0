package load

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/colinkdb/colink/dbt3"
	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/link"
)

// runImport imports spec into the primprocs at urls, in chunks of chunkRows rows.
func runImport(urls []string, chunkRows int64, spec ImportSpec) (string, error) {
	c := DefaultConfig()
	c.Primprocs, c.ChunkRows = urls, chunkRows
	var out, errb bytes.Buffer
	err := Import(context.Background(), c, spec, dbt3.Output{Stdout: &out, Stderr: &errb})
	return out.String() + errb.String(), err
}

// tableColumns returns a table's "name type" list and its rows on each primproc.
func tableColumns(t *testing.T, urls []string, table string) (string, []int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var cols string
	var rows []int64
	for _, c := range cluster(t, urls) {
		cat, err := c.Catalog(ctx)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, tb := range cat.Tables {
			if tb.Name != table {
				continue
			}
			found = true
			rows = append(rows, tb.Rows)
			var parts []string
			for _, f := range cat.Schemas[table].Fields() {
				parts = append(parts, f.Name+" "+vec.SQLTypeOf(f))
			}
			cols = strings.Join(parts, ", ")
		}
		if !found {
			t.Fatalf("%s: no table %s", c.Peer(), table)
		}
	}
	return cols, rows
}

// TestImport imports a CSV file and a Parquet file into new tables on two primprocs: every
// row arrives (the chunks dealt over both), NULLs and the declared or the file's types are
// kept, an existing table is refused unless --replace, and bad input names its file.
func TestImport(t *testing.T) {
	_, tcp := startPrimprocs(t, 2)
	cl := cluster(t, tcp)
	dir := t.TempDir()

	var csv strings.Builder
	csv.WriteString("id,name,price,day,flag\n")
	want := new(big.Int)
	const n = 10_000
	for i := range n {
		price := ""
		if i%7 != 0 {
			cents := int64(i*37%100000) - 5000
			price = fmt.Sprintf("%d.%02d", cents/100, abs(cents%100))
			if cents < 0 && cents/100 == 0 {
				price = "-" + price
			}
			want.Add(want, big.NewInt(cents))
		}
		fmt.Fprintf(&csv, "%d,\"name, %d\",%s,2024-%02d-%02d,%v\n", i, i, price, i%12+1, i%28+1, i%2 == 0)
	}
	csvPath := filepath.Join(dir, "sales.csv")
	if err := os.WriteFile(csvPath, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := ImportSpec{Table: "sales", Files: []string{csvPath}, Header: true,
		Columns: "id int not null, name varchar(20), price decimal(15,2), day date, flag boolean"}
	if out, err := runImport(tcp, 1500, spec); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	rows, sum := clusterTotals(t, cl, "sales", "price")
	if rows != n || sum.Cmp(want) != 0 {
		t.Errorf("sales: %d rows, price sum %s; want %d rows, %s", rows, sum, n, want)
	}
	cols, shares := tableColumns(t, tcp, "sales")
	if cols != "id int, name varchar(20), price decimal(15,2), day date, flag boolean" || len(shares) != 2 || shares[0] == 0 || shares[1] == 0 {
		t.Errorf("sales: columns %q, rows per primproc %v", cols, shares)
	}
	if out, err := runImport(tcp, 1500, spec); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a second import without --replace: %v\n%s", err, out)
	}
	spec.Replace = true
	if out, err := runImport(tcp, 0, spec); err != nil {
		t.Errorf("import --replace: %v\n%s", err, out)
	}
	if rows, _ := clusterTotals(t, cl, "sales", "price"); rows != n {
		t.Errorf("after --replace: %d rows, want %d", rows, n)
	}

	// Parquet with types colink stores wider (int16, float32) and as they are.
	pqPath := filepath.Join(dir, "points.parquet")
	writeParquet(t, pqPath, 3000)
	if out, err := runImport(tcp, 1000, ImportSpec{Table: "points", Files: []string{pqPath}}); err != nil {
		t.Fatalf("import parquet: %v\n%s", err, out)
	}
	rows, sum = clusterTotals(t, cl, "points", "price")
	if rows != 3000 || sum.Cmp(big.NewInt(3000*2999/2)) != 0 {
		t.Errorf("points: %d rows, price sum %s", rows, sum)
	}
	if cols, _ := tableColumns(t, tcp, "points"); cols != "k int, f double, s text, price decimal(15,2), d date, at datetime(3)" {
		t.Errorf("points: columns %q", cols)
	}
	// The milliseconds arrive as DATETIME's microseconds, the instant's UTC wall clock.
	if got, want := clusterMax(t, cl, "points", "at", vec.DatetimeType), int64(2999*1500*1000); got != want {
		t.Errorf("points: max(at) = %d µs, want %d", got, want)
	}

	// CSV datetimes: --columns declares them; an empty field is NULL.
	evPath := filepath.Join(dir, "events.csv")
	if err := os.WriteFile(evPath, []byte("1,2024-01-02 10:30:00.25\n2,\n3,1999-12-31 23:59:59\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := runImport(tcp, 0, ImportSpec{Table: "events", Files: []string{evPath}, Columns: "id int, at datetime(2)"}); err != nil {
		t.Fatalf("import events: %v\n%s", err, out)
	}
	if got, want := clusterMax(t, cl, "events", "at", vec.DatetimeType), int64(1704191400250000); got != want {
		t.Errorf("events: max(at) = %d µs, want %d", got, want)
	}

	for _, c := range []struct {
		name string
		spec ImportSpec
		want string
	}{
		{"csv without columns", ImportSpec{Table: "x", Files: []string{csvPath}}, "--columns is required"},
		{"bad type", ImportSpec{Table: "x", Files: []string{csvPath}, Columns: "id time"}, "time"},
		{"too many fields", ImportSpec{Table: "x", Files: []string{csvPath}, Columns: "id int"}, "more fields than the 1 columns"},
		{"not a number", ImportSpec{Table: "x", Files: []string{csvPath}, Columns: "id int, name int, price decimal(15,2), day date, flag boolean", Header: true}, "sales.csv"},
		{"other file", ImportSpec{Table: "x", Files: []string{filepath.Join(dir, "x.json")}}, "want a .parquet or .csv file"},
	} {
		if out, err := runImport(tcp, 0, c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q\n%s", c.name, err, c.want, out)
		}
	}
}

// clusterMax is the largest value of an integer-like column (its int64 payload) over the
// primprocs of cl.
func clusterMax(t *testing.T, cl link.Cluster, table, col string, typ vec.Type) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := &link.FragmentArgs{Fragment: exec.Fragment{
		Scan:  exec.Scan{Table: table, Columns: []string{col}, Types: []vec.Type{typ}},
		Steps: []exec.Step{{Aggregate: &exec.AggStep{Spec: exec.AggSpec{Aggs: []exec.Aggregate{{Func: exec.AggMax, Col: 0}}}}}},
	}}
	best := int64(math.MinInt64)
	for _, c := range cl {
		fs, err := c.Fragment(ctx, args, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = fs.Each(func(rec arrow.RecordBatch) error {
			a := rec.Column(0)
			for i := 0; i < a.Len(); i++ {
				if a.IsValid(i) {
					var v vec.Vec
					if err := v.ViewArrow(typ, a, i, i+1); err != nil {
						return err
					}
					best = max(best, v.I64[0])
				}
			}
			return nil
		})
		fs.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return best
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// writeParquet writes n rows (k int16 = i, f float32, s string with NULLs, price
// decimal(15,2) of i hundredths, d date) in row groups of 500.
func writeParquet(t *testing.T, path string, n int) {
	t.Helper()
	mem := memory.DefaultAllocator
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int16},
		{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "price", Type: &arrow.Decimal128Type{Precision: 15, Scale: 2}},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32},
		{Name: "at", Type: arrow.FixedWidthTypes.Timestamp_ms, Nullable: true}, // in UTC
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int16Builder).Append(int16(i))
		b.Field(1).(*array.Float32Builder).Append(float32(i) / 2)
		if i%5 == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("s%d", i))
		}
		b.Field(3).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i)))
		b.Field(4).(*array.Date32Builder).Append(arrow.Date32(19000 + i%365))
		b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 1500)) // 1.5 s apart
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	tbl := array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
	defer tbl.Release()
	// WriteTable closes f when it has written the footer.
	if err := pqarrow.WriteTable(tbl, f, 500, nil, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
}
