package load

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/colinkdb/colink/dbt3"
	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/testbin"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/tpch"
)

// startPrimprocs builds primproc and starts n of them with small segments (4096 rows in
// row groups of 1024), returning their unix and tcp URLs.
func startPrimprocs(t *testing.T, n int) (unix, tcp []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs primproc")
	}
	bin := testbin.Build(t, t.TempDir(), "./cmd/primproc")
	for i := range n {
		dir := testbin.TempDir(t)
		u := "unix://" + filepath.Join(dir, "pm.sock")
		tc := fmt.Sprintf("tcp://127.0.0.1:%d", testbin.FreePort(t))
		p := testbin.Start(t, bin, "--data-dir", filepath.Join(dir, "data"), "--listen", tc, "--listen", u,
			"--segment-rows", "4096", "--row-group-rows", "1024", "--threads", "2", "--name", fmt.Sprintf("pm%d", i))
		p.WaitLog(t, "primproc: serving", 15*time.Second)
		unix, tcp = append(unix, u), append(tcp, tc)
	}
	return unix, tcp
}

func cluster(t *testing.T, urls []string) link.Cluster {
	t.Helper()
	var cl link.Cluster
	for _, u := range urls {
		c, err := link.Dial(u, ipc.ClientConfig{Transport: ipc.TransportAuto, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		cl = append(cl, c)
	}
	return cl
}

// runLoad runs a load of cfg (over DefaultConfig) and returns its error and output.
func runLoad(t *testing.T, cfg func(*Config)) (stdout, stderr string, err error) {
	t.Helper()
	c := DefaultConfig()
	cfg(&c)
	var out, errb bytes.Buffer
	err = Run(context.Background(), c, dbt3.Output{Stdout: &out, Stderr: &errb})
	return out.String(), errb.String(), err
}

var sf001 = func() tpch.Scale { s, _ := tpch.ParseScale("0.01"); return s }()

// genTotals counts a table's generated rows and sums one decimal column.
func genTotals(t *testing.T, table, col string) (int64, *big.Int) {
	t.Helper()
	g, err := tpch.NewGenerator(sf001, table, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	def, _ := tpch.LookupTable(table)
	ci := def.ColumnIndex(col)
	var rows int64
	sum := new(big.Int)
	for {
		rec, err := g.Next()
		if err == io.EOF {
			return rows, sum
		}
		if err != nil {
			t.Fatal(err)
		}
		rows += rec.NumRows()
		for _, v := range rec.Column(ci).(*array.Decimal64).Values() {
			sum.Add(sum, big.NewInt(int64(v)))
		}
		rec.Release()
	}
}

// clusterTotals sums a decimal column over the whole cluster with a fragment.
func clusterTotals(t *testing.T, cl link.Cluster, table, col string) (int64, *big.Int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := &link.FragmentArgs{Fragment: exec.Fragment{
		Scan:  exec.Scan{Table: table, Columns: []string{col}, Types: []vec.Type{vec.Decimal(15, 2)}},
		Steps: []exec.Step{{Aggregate: &exec.AggStep{Spec: exec.AggSpec{Aggs: []exec.Aggregate{{Func: exec.AggSum, Col: 0}, {Func: exec.AggCountStar}}}}}},
	}}
	sum := new(big.Int)
	var rows int64
	for _, c := range cl {
		fs, err := c.Fragment(ctx, args, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = fs.Each(func(rec arrow.RecordBatch) error {
			s, n := rec.Column(0).(*array.Decimal128), rec.Column(1).(*array.Int64)
			for i := 0; i < int(rec.NumRows()); i++ {
				if s.IsValid(i) {
					sum.Add(sum, s.Value(i).BigInt())
				}
				rows += n.Value(i)
			}
			return nil
		})
		fs.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return rows, sum
}

// TestLoadGenerated loads three tables generated in process into two primprocs and checks
// the shares add up to the generator's rows and sums.
func TestLoadGenerated(t *testing.T) {
	unix, tcp := startPrimprocs(t, 2)
	out, errs, err := runLoad(t, func(c *Config) {
		c.SF, c.Primprocs, c.Tables, c.Transport, c.Stats = "0.01", []string{unix[0], tcp[1]}, []string{"lineitem", "orders", "nation"}, "auto", true
	})
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out, errs)
	}
	if !strings.Contains(out, "lineitem") || !strings.Contains(errs, "dbt3 load: wall") || !strings.Contains(errs, "primproc "+tcp[1]) {
		t.Errorf("output:\n%s%s", out, errs)
	}
	cl := cluster(t, []string{unix[0], tcp[1]})
	for _, tc := range []struct{ table, col string }{{"lineitem", "l_extendedprice"}, {"orders", "o_totalprice"}} {
		wantRows, wantSum := genTotals(t, tc.table, tc.col)
		rows, sum := clusterTotals(t, cl, tc.table, tc.col)
		if rows != wantRows || sum.Cmp(wantSum) != 0 {
			t.Errorf("%s: %d rows, sum %s; want %d, %s", tc.table, rows, sum, wantRows, wantSum)
		}
	}
	ctx := context.Background()
	for i, c := range cl {
		cat, err := c.Catalog(ctx)
		if err != nil {
			t.Fatal(err)
		}
		li := cat.Table("lineitem")
		if li == nil || li.Segments < 5 || li.Rows < 25000 {
			t.Errorf("primproc %d holds lineitem %+v; want about half of 60175 rows", i, li)
		}
		if cat.Table("nation") == nil {
			t.Errorf("primproc %d has no nation table", i)
		}
	}
	merged, err := cl.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := merged.Table("nation"); n == nil || n.Rows != 25 {
		t.Errorf("merged nation: %+v", n)
	}
	// Clustered by l_shipdate: a segment's row groups cover narrow date ranges, so the union
	// of zone-map ranges is the whole range but each primproc's lineitem is sorted per segment.
	for _, col := range merged.Table("lineitem").Columns {
		if col.Name == "l_shipdate" && (col.Min == nil || col.Max == nil) {
			t.Errorf("merged l_shipdate has no range")
		}
	}
}

// TestLoadSF001Quickly loads all of SF 0.01 into a real primproc over its unix socket and
// over TCP, and requires each load to take well under a few seconds once the generator's
// text pool is built (dbgen's 300 MiB of sentences, which every process that generates
// rows builds once: about a second of CPU on two cores, whatever the scale factor). What
// remains is a few hundred milliseconds of generating, sending, sorting, encoding and
// fsyncing; a stall of the link (a flow-control wait that only a heartbeat or a timer
// ends) or of the commit would show as seconds here.
func TestLoadSF001Quickly(t *testing.T) {
	unix, tcp := startPrimprocs(t, 1)
	g, err := tpch.NewGenerator(sf001, "region", 1, 1) // builds the text pool
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := g.Next(); err != nil {
		t.Fatal(err)
	} else {
		rec.Release()
	}
	g.Close()
	const limit = 4 * time.Second
	for _, url := range []string{unix[0], tcp[0]} {
		start := time.Now()
		out, errs, err := runLoad(t, func(c *Config) { c.SF, c.Primprocs = "0.01", []string{url} })
		wall := time.Since(start)
		if err != nil {
			t.Fatalf("%s: %v\n%s%s", url, err, out, errs)
		}
		t.Logf("SF 0.01 over %s: %.2f s", url, wall.Seconds())
		if wall > limit {
			t.Errorf("loading SF 0.01 over %s took %.1f s, more than %s:\n%s", url, wall.Seconds(), limit, out)
		}
	}
}

// TestLoadFromFiles loads .tbl files (dbgen's chunked names) and a Parquet file, and
// checks their contents arrive.
func TestLoadFromFiles(t *testing.T) {
	unix, _ := startPrimprocs(t, 2)
	dir := t.TempDir()
	ctx := context.Background()
	if err := tpch.Generate(ctx, tpch.Options{Scale: sf001, Dir: dir, Format: tpch.FormatTbl, Tables: []string{"orders", "region"}, Chunks: 2, NoSync: true}); err != nil {
		t.Fatal(err)
	}
	pqDir := filepath.Join(dir, "pq")
	if err := os.Mkdir(pqDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := tpch.Generate(ctx, tpch.Options{Scale: sf001, Dir: pqDir, Format: tpch.FormatParquet, Tables: []string{"lineitem"}, NoSync: true}); err != nil {
		t.Fatal(err)
	}
	out, errs, err := runLoad(t, func(c *Config) { c.From, c.Primprocs = dir, unix })
	if err != nil {
		t.Fatalf("tbl: %v\n%s%s", err, out, errs)
	}
	if !strings.Contains(out, "orders") || !strings.Contains(out, "region") || strings.Contains(out, "lineitem") {
		t.Errorf("tbl load output:\n%s", out)
	}
	out, errs, err = runLoad(t, func(c *Config) { c.From, c.Primprocs, c.Tables = pqDir, unix, []string{"lineitem"} })
	if err != nil {
		t.Fatalf("parquet: %v\n%s%s", err, out, errs)
	}
	cl := cluster(t, unix)
	for _, tc := range []struct{ table, col string }{{"lineitem", "l_extendedprice"}, {"orders", "o_totalprice"}} {
		wantRows, wantSum := genTotals(t, tc.table, tc.col)
		rows, sum := clusterTotals(t, cl, tc.table, tc.col)
		if rows != wantRows || sum.Cmp(wantSum) != 0 {
			t.Errorf("%s: %d rows, sum %s; want %d, %s", tc.table, rows, sum, wantRows, wantSum)
		}
	}
	merged, err := cl.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r := merged.Table("region"); r == nil || r.Rows != 5 {
		t.Errorf("region: %+v", r)
	}
	// Both primprocs hold a share of orders (15000 rows, chunks of 4096).
	for i, c := range cl {
		cat, _ := c.Catalog(ctx)
		if o := cat.Table("orders"); o == nil || o.Rows == 0 {
			t.Errorf("primproc %d has no orders rows", i)
		}
	}
}

// TestLoadBadInput: malformed .tbl lines name the file and line; the tables stay as they
// were.
func TestLoadBadInput(t *testing.T) {
	unix, _ := startPrimprocs(t, 1)
	good := "0|AFRICA|lar deposits. blithely final packages cajole.|\n1|AMERICA|hs use ironic, even requests. s|\n"
	for _, tc := range []struct {
		name, content, want string
	}{
		{"region.tbl", good + "2|ASIA|ges. thinly even pinto beans ca|\n3|EUROPE|\n", "region.tbl line 4: 2 fields, table region has 3 columns"},
		{"region.tbl", good + "x|ASIA|ges.|\n", `region.tbl line 3: column r_regionkey (int): "x"`},
		{"region.tbl", good + "2|" + strings.Repeat("A", 26) + "|c|\n", "region.tbl line 3: column r_name (char(25))"},
		{"nation.tbl", "0|ALGERIA|0|haggle|\n1|ARGENTINA|99999999999|c|\n", "nation.tbl line 2: column n_regionkey (int)"},
		{"orders.tbl.1", "1|36901|O|173665.47|1996-01-02|5-LOW|Clerk#000000951|0|nstructions sleep furiously among |\n" +
			"2|78002|O|46929.18|1996-13-01|1-URGENT|Clerk#000000880|0| foxes. pending accounts at the pending|\n", "orders.tbl.1 line 2: column o_orderdate (date)"},
		{"orders.tbl", "1|36901|O|1736650000000000000.47|1996-01-02|5-LOW|Clerk#000000951|0|x|\n", "orders.tbl line 1: column o_totalprice (decimal(15,2))"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, tc.name), []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		// dbt3 load exits 1 for these: a failure, not a usage error.
		out, _, err := runLoad(t, func(c *Config) { c.From, c.Primprocs = dir, unix })
		if err == nil || dbt3.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want a failure (not a usage error) with %q\n%s", tc.name, err, tc.want, out)
		}
	}
	cl := cluster(t, unix)
	cat, err := cl[0].Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Tables) != 0 {
		t.Errorf("failed loads left tables: %+v", cat.Tables)
	}
}
