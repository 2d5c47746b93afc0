package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/rusage"
	"github.com/colinkdb/colink/internal/testbin"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/tpch"
)

// The data tests load SF 0.01 (lineitem: 60175 rows) into primprocs cut into small row
// groups and segments, so that zone maps and dealing have something to work with.
const (
	testGroupRows = 2048
	testSegRows   = 8192
)

var testScale = func() tpch.Scale {
	sc, err := tpch.ParseScale("0.01")
	if err != nil {
		panic(err)
	}
	return sc
}()

// pm is a primproc under test.
type pm struct {
	proc      *testbin.Proc
	dataDir   string
	tcp, unix string
	args      []string
}

// startPM starts a primproc on dataDir with the test layout and extra flags.
func startPM(t *testing.T, bin, dataDir string, extra ...string) *pm {
	t.Helper()
	dir := testbin.TempDir(t)
	p := &pm{dataDir: dataDir, tcp: fmt.Sprintf("tcp://127.0.0.1:%d", testbin.FreePort(t)), unix: "unix://" + filepath.Join(dir, "pm.sock")}
	p.args = append([]string{"--data-dir", dataDir, "--listen", p.tcp, "--listen", p.unix,
		"--row-group-rows", fmt.Sprint(testGroupRows), "--segment-rows", fmt.Sprint(testSegRows), "--threads", "2"}, extra...)
	p.restart(t, bin)
	return p
}

// restart starts the primproc again with the same flags (after it died).
func (p *pm) restart(t *testing.T, bin string) {
	t.Helper()
	p.proc = testbin.Start(t, bin, p.args...)
	p.proc.WaitLog(t, `primproc: serving`, 15*time.Second)
}

func (p *pm) url(transport string) string {
	if transport == "unix" {
		return p.unix
	}
	return p.tcp
}

func dial(t *testing.T, url, transport string) *link.Client {
	t.Helper()
	c, err := link.Dial(url, ipc.ClientConfig{Transport: ipc.Transport(transport), BackoffMax: 200 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// genChunk reads a generator chunk, optionally pausing before each batch.
type genChunk struct {
	g     *tpch.Generator
	pause time.Duration
}

func (c *genChunk) Next() (arrow.RecordBatch, error) {
	if c.pause > 0 {
		time.Sleep(c.pause)
	}
	return c.g.Next()
}

func (c *genChunk) Close() { c.g.Close() }

// genLoad loads a TPC-H table at testScale, under the name `as`, in chunks of testSegRows.
func genLoad(table, as string, cluster []string, pause time.Duration) link.TableLoad {
	def, _ := tpch.LookupTable(table)
	rows, _ := testScale.EstimatedRows(table)
	n := int(max((rows+testSegRows-1)/testSegRows, 1))
	return link.TableLoad{Table: as, Schema: def.ArrowSchema(), ClusterBy: cluster, Chunks: n, EstimatedRows: rows,
		Open: func(k int) (link.ChunkReader, error) {
			g, err := tpch.NewGenerator(testScale, table, k+1, n, tpch.WithBatchRows(4096))
			if err != nil {
				return nil, err
			}
			return &genChunk{g: g, pause: pause}, nil
		}}
}

func loadLineitem(t *testing.T, cl link.Cluster, cluster bool) []link.TableResult {
	t.Helper()
	var keys []string
	if cluster {
		keys = []string{"l_shipdate"}
	}
	res, err := cl.Load(testCtx(t), []link.TableLoad{genLoad("lineitem", "lineitem", keys, 0)}, link.LoadOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// ---- expected answers, from a plain loop over the generator's rows ----------------------

type totals struct {
	rows int64
	q6   *big.Int            // sum(l_extendedprice*l_discount), scale 4
	q1   map[string][4]int64 // flag|status → sum(qty) sum(price) count, sum(price*(1-disc)) at scale 4 fits int64 at SF 0.01
	// minShip and maxShip bound l_shipdate.
	minShip, maxShip int32
}

func expected(t *testing.T) totals {
	t.Helper()
	g, err := tpch.NewGenerator(testScale, "lineitem", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	def, _ := tpch.LookupTable("lineitem")
	col := func(name string) int { return def.ColumnIndex(name) }
	lo, hi := vec.DaysFromCivil(1994, 1, 1), vec.DaysFromCivil(1995, 1, 1)
	cut := vec.DaysFromCivil(1998, 9, 2)
	tot := totals{q6: new(big.Int), q1: map[string][4]int64{}, minShip: 1 << 30, maxShip: -1 << 30}
	for {
		rec, err := g.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		q := rec.Column(col("l_quantity")).(*array.Decimal64)
		p := rec.Column(col("l_extendedprice")).(*array.Decimal64)
		d := rec.Column(col("l_discount")).(*array.Decimal64)
		rf := rec.Column(col("l_returnflag")).(*array.String)
		ls := rec.Column(col("l_linestatus")).(*array.String)
		sd := rec.Column(col("l_shipdate")).(*array.Date32)
		for i := 0; i < int(rec.NumRows()); i++ {
			tot.rows++
			ship := int32(sd.Value(i))
			tot.minShip, tot.maxShip = min(tot.minShip, ship), max(tot.maxShip, ship)
			qty, price, disc := int64(q.Value(i)), int64(p.Value(i)), int64(d.Value(i))
			if ship >= lo && ship < hi && disc >= 5 && disc <= 7 && qty < 2400 {
				tot.q6.Add(tot.q6, big.NewInt(price*disc))
			}
			if ship <= cut {
				k := rf.Value(i) + "|" + ls.Value(i)
				a := tot.q1[k]
				a[0] += qty
				a[1] += price
				a[2]++
				a[3] += price * (100 - disc)
				tot.q1[k] = a
			}
		}
		rec.Release()
	}
	return tot
}

// ---- fragments ------------------------------------------------------------------------

var liCols = []string{"l_quantity", "l_extendedprice", "l_discount", "l_returnflag", "l_linestatus", "l_shipdate"}
var liTypes = []vec.Type{vec.Decimal(15, 2), vec.Decimal(15, 2), vec.Decimal(15, 2), vec.StringType, vec.StringType, vec.DateType}

func mustExpr(t testing.TB, s string) *expr.Expr {
	t.Helper()
	e, err := expr.Parse(s, liCols)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// q6 is Q6's shape: scan, zone-map predicates and filter on l_shipdate, partial sum.
func q6(t testing.TB, table string) *link.FragmentArgs {
	return &link.FragmentArgs{Fragment: exec.Fragment{
		Scan: exec.Scan{Table: table, Columns: liCols, Types: liTypes, Zone: []exec.ZonePredicate{
			{Col: 5, Op: expr.OpGe, Value: vec.MustParseDate("1994-01-01")},
			{Col: 5, Op: expr.OpLt, Value: vec.MustParseDate("1995-01-01")},
		}},
		Steps: []exec.Step{
			{Filter: mustExpr(t, "(and (>= l_shipdate date'1994-01-01') (< l_shipdate date'1995-01-01') (between l_discount 0.05 0.07) (< l_quantity 24))")},
			{Project: []*expr.Expr{mustExpr(t, "(* l_extendedprice l_discount)")}},
			{Aggregate: &exec.AggStep{Spec: exec.AggSpec{Aggs: []exec.Aggregate{{Func: exec.AggSum, Col: 0}}}}},
		},
	}}
}

// q1 is Q1's shape: filter, project, partial group-by with sums and a count.
func q1(t testing.TB, table string) *link.FragmentArgs {
	return &link.FragmentArgs{Fragment: exec.Fragment{
		Scan: exec.Scan{Table: table, Columns: liCols, Types: liTypes},
		Steps: []exec.Step{
			{Filter: mustExpr(t, "(<= l_shipdate (date_sub date'1998-12-01' 90 day))")},
			{Project: []*expr.Expr{mustExpr(t, "l_returnflag"), mustExpr(t, "l_linestatus"), mustExpr(t, "l_quantity"),
				mustExpr(t, "l_extendedprice"), mustExpr(t, "(* l_extendedprice (- 1 l_discount))")}},
			{Aggregate: &exec.AggStep{Spec: exec.AggSpec{GroupBy: []int{0, 1}, Aggs: []exec.Aggregate{
				{Func: exec.AggSum, Col: 2}, {Func: exec.AggSum, Col: 3}, {Func: exec.AggCountStar}, {Func: exec.AggSum, Col: 4}}}}},
		},
	}}
}

// run runs a fragment on every primproc and returns the output records' rows (as vec
// datums) and the END of each.
func runFrag(t *testing.T, cl link.Cluster, args *link.FragmentArgs) ([][]vec.Datum, []*link.FragmentEnd) {
	t.Helper()
	rows, ends, err := tryRun(testCtx(t), cl, args)
	if err != nil {
		t.Fatal(err)
	}
	return rows, ends
}

func tryRun(ctx context.Context, cl link.Cluster, args *link.FragmentArgs) ([][]vec.Datum, []*link.FragmentEnd, error) {
	var rows [][]vec.Datum
	var ends []*link.FragmentEnd
	for _, c := range cl {
		fs, err := c.Fragment(ctx, args, nil)
		if err != nil {
			return nil, nil, err
		}
		err = fs.Each(func(rec arrow.RecordBatch) error {
			tab := &vec.Table{}
			types, _ := vec.TypesFromSchema(rec.Schema())
			tab.Types = types
			tab.AppendRecord(rec)
			rows = append(rows, tab.Rows...)
			return nil
		})
		if err != nil {
			fs.Close()
			return nil, nil, err
		}
		ends = append(ends, fs.End())
		fs.Close()
	}
	return rows, ends, nil
}

func bigOf(d vec.Datum) *big.Int {
	v := d.Decimal()
	b := new(big.Int).SetInt64(v.Hi)
	b.Lsh(b, 64)
	return b.Add(b, new(big.Int).SetUint64(v.Lo))
}

// checkAnswers runs Q6 and Q1 on the cluster and compares them with the loop's totals.
func checkAnswers(t *testing.T, cl link.Cluster, table string, want totals) {
	t.Helper()
	rows, ends := runFrag(t, cl, q6(t, table))
	got := new(big.Int)
	for _, r := range rows {
		if !r[0].Null {
			got.Add(got, bigOf(r[0]))
		}
	}
	if got.Cmp(want.q6) != 0 {
		t.Errorf("Q6 revenue %s, want %s", got, want.q6)
	}
	var scanned int64
	for _, e := range ends {
		scanned += e.Stats.RowsScanned
	}
	if scanned > want.rows {
		t.Errorf("Q6 scanned %d rows of %d", scanned, want.rows)
	}

	rows, _ = runFrag(t, cl, q1(t, table))
	q1got := map[string][4]int64{}
	for _, r := range rows {
		k := r[0].Str + "|" + r[1].Str
		a := q1got[k]
		a[0] += bigOf(r[2]).Int64()
		a[1] += bigOf(r[3]).Int64()
		a[2] += r[4].Int
		a[3] += bigOf(r[5]).Int64()
		q1got[k] = a
	}
	if fmt.Sprint(q1got) != fmt.Sprint(want.q1) {
		t.Errorf("Q1 groups:\n got %v\nwant %v", q1got, want.q1)
	}
}

func tableRows(t *testing.T, c *link.Client, table string) int64 {
	t.Helper()
	cat, err := c.Catalog(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if tb := cat.Table(table); tb != nil {
		return tb.Rows
	}
	return -1
}

// ---- tests ----------------------------------------------------------------------------

// TestLoadQueryReload loads lineitem, checks the catalog and the Q6/Q1 answers against a
// loop over the generator, reloads part of it (replace) and checks again, over tcp and unix.
func TestLoadQueryReload(t *testing.T) {
	bin := buildPrimproc(t)
	want := expected(t)
	for _, tr := range []string{"tcp", "unix"} {
		t.Run(tr, func(t *testing.T) {
			p := startPM(t, bin, filepath.Join(testbin.TempDir(t), "data"))
			c := dial(t, p.url(tr), tr)
			res := loadLineitem(t, link.Cluster{c}, true)
			if res[0].Rows != want.rows || res[0].Ends[0].Segments != int((want.rows+testSegRows-1)/testSegRows) {
				t.Fatalf("load: %d rows in %d segments", res[0].Rows, res[0].Ends[0].Segments)
			}
			if conns := c.Link().Conns(); len(conns) == 0 || conns[0].Transport() != tr {
				t.Fatalf("transport: %v", conns)
			}
			cat, err := c.Catalog(testCtx(t), "lineitem")
			if err != nil {
				t.Fatal(err)
			}
			li := cat.Table("lineitem")
			sc := cat.Schemas["lineitem"]
			if li.Rows != want.rows || sc.NumFields() != 16 || vec.SQLTypeOf(sc.Field(4)) != "decimal(15,2)" {
				t.Fatalf("catalog: %+v %s", li, sc)
			}
			for _, col := range li.Columns {
				if col.Name == "l_shipdate" && (col.Min == nil || *col.Min != vec.DateDatum(want.minShip) || *col.Max != vec.DateDatum(want.maxShip) || col.Nulls != 0) {
					t.Errorf("l_shipdate range %v..%v nulls %d, want %v..%v", col.Min, col.Max, col.Nulls, vec.DateDatum(want.minShip), vec.DateDatum(want.maxShip))
				}
			}
			checkAnswers(t, link.Cluster{c}, "lineitem", want)
			checkUsage(t, c)

			// Reload (replace) with orders' rows only for the first chunk: the table now
			// holds exactly those.
			part := genLoad("lineitem", "lineitem", nil, 0)
			part.Chunks = 1
			n := int((want.rows + testSegRows - 1) / testSegRows)
			part.Open = func(k int) (link.ChunkReader, error) {
				g, err := tpch.NewGenerator(testScale, "lineitem", 1, n)
				return &genChunk{g: g}, err
			}
			res, err = link.Cluster{c}.Load(testCtx(t), []link.TableLoad{part}, link.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := tableRows(t, c, "lineitem"); got != res[0].Rows || got >= want.rows || got == 0 {
				t.Fatalf("after reload: %d rows, loaded %d", got, res[0].Rows)
			}
			// And back to the whole table.
			loadLineitem(t, link.Cluster{c}, false)
			checkAnswers(t, link.Cluster{c}, "lineitem", want)
		})
	}
}

// checkUsage checks the usage call (answered inline) against stats: the same process and
// catalog version, the CPU the queries took, the resident set and the memory budget.
func checkUsage(t *testing.T, c *link.Client) {
	t.Helper()
	ctx := testCtx(t)
	u0, err := c.Usage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if u0.PID != st.PID || u0.Version != st.Version || u0.Version == 0 {
		t.Errorf("usage: pid %d version %d; stats: pid %d version %d", u0.PID, u0.Version, st.PID, st.Version)
	}
	ru0 := rusage.FromMap(u0.Rusage)
	if cpu := ru0.User + ru0.Sys; cpu <= 0 || cpu > st.Usage().User+st.Usage().Sys {
		t.Errorf("usage CPU %v after the queries, stats' (later) %v", cpu, st.Usage().User+st.Usage().Sys)
	}
	if u0.RSSBytes <= 0 || u0.Memory.QueryLimit != st.Memory.QueryLimit || u0.Memory.Heap <= 0 {
		t.Errorf("usage memory: rss %d, %+v; stats: %+v", u0.RSSBytes, u0.Memory, st.Memory)
	}
	u1, err := c.Usage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rusage.FromMap(u1.Rusage).Sub(ru0).User < 0 {
		t.Errorf("usage went back: %+v then %+v", u0, u1)
	}
}

// TestKill9DuringLoad kills primproc while a reload streams in; after a restart the table
// holds its previous contents, which answer queries as before.
func TestKill9DuringLoad(t *testing.T) {
	bin := buildPrimproc(t)
	want := expected(t)
	p := startPM(t, bin, filepath.Join(testbin.TempDir(t), "data"))
	c := dial(t, p.tcp, "tcp")
	loadLineitem(t, link.Cluster{c}, true)

	slow := genLoad("lineitem", "lineitem", []string{"l_shipdate"}, 30*time.Millisecond)
	errc := make(chan error, 1)
	go func() {
		_, err := link.Cluster{c}.Load(context.Background(), []link.TableLoad{slow}, link.LoadOptions{Workers: 2})
		errc <- err
	}()
	// Wait until the reload has written a segment file, then kill.
	p.proc.WaitLog(t, `primproc: serving`, time.Second)
	deadline := time.Now().Add(20 * time.Second)
	for {
		m, _ := filepath.Glob(filepath.Join(p.dataDir, "tables", "lineitem", "*.parquet"))
		if len(m) > int((want.rows+testSegRows-1)/testSegRows) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.proc.Kill()
	if err := <-errc; err == nil {
		t.Fatal("the load succeeded although primproc was killed")
	} else {
		t.Logf("load failed as expected: %v", err)
	}
	p.restart(t, bin)
	if got := tableRows(t, c, "lineitem"); got != want.rows {
		t.Fatalf("after kill -9 and restart: %d rows, want %d", got, want.rows)
	}
	checkAnswers(t, link.Cluster{c}, "lineitem", want)
	m, _ := filepath.Glob(filepath.Join(p.dataDir, "tables", "lineitem", "*.parquet"))
	if len(m) != int((want.rows+testSegRows-1)/testSegRows) {
		t.Errorf("%d segment files after restart: the interrupted load's leftovers stayed", len(m))
	}
}

// TestTwoPrimprocs deals lineitem over two primprocs: each holds about half the segments,
// and the union of their answers is the single primproc's (the loop's).
func TestTwoPrimprocs(t *testing.T) {
	bin := buildPrimproc(t)
	want := expected(t)
	dir := testbin.TempDir(t)
	a := startPM(t, bin, filepath.Join(dir, "a"))
	b := startPM(t, bin, filepath.Join(dir, "b"))
	cl := link.Cluster{dial(t, a.unix, "unix"), dial(t, b.tcp, "tcp")}
	res := loadLineitem(t, cl, true)
	sa, sb := res[0].Ends[0].Segments, res[0].Ends[1].Segments
	if sa == 0 || sb == 0 || sa-sb > 1 || sb-sa > 1 {
		t.Fatalf("segments dealt %d and %d", sa, sb)
	}
	ra, rb := tableRows(t, cl[0], "lineitem"), tableRows(t, cl[1], "lineitem")
	if ra+rb != want.rows || ra == 0 || rb == 0 {
		t.Fatalf("rows %d + %d, want %d", ra, rb, want.rows)
	}
	checkAnswers(t, cl, "lineitem", want)
	merged, err := cl.Catalog(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if li := merged.Table("lineitem"); li == nil || li.Rows != want.rows || li.Segments != sa+sb {
		t.Fatalf("merged catalog: %+v", li)
	}
	// A dimension table smaller than a chunk goes whole to one primproc; the other holds it
	// empty, so scans on both succeed.
	if _, err := cl.Load(testCtx(t), []link.TableLoad{genLoad("nation", "nation", nil, 0)}, link.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	na, nb := tableRows(t, cl[0], "nation"), tableRows(t, cl[1], "nation")
	if na+nb != 25 || (na != 0 && nb != 0) {
		t.Fatalf("nation rows %d and %d", na, nb)
	}
}

// TestZoneMaps checks that a selective date range skips row groups, that the END's stats
// say so, and that clustering by l_shipdate is what makes them selective.
func TestZoneMaps(t *testing.T) {
	bin := buildPrimproc(t)
	want := expected(t)
	p := startPM(t, bin, filepath.Join(testbin.TempDir(t), "data"))
	c := dial(t, p.unix, "unix")
	cl := link.Cluster{c}
	_, err := cl.Load(testCtx(t), []link.TableLoad{
		genLoad("lineitem", "lineitem", []string{"l_shipdate"}, 0),
		genLoad("lineitem", "lineitem_dbgen_order", nil, 0),
	}, link.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, ends := runFrag(t, cl, q6(t, "lineitem"))
	clustered := ends[0].Stats
	_, ends = runFrag(t, cl, q6(t, "lineitem_dbgen_order"))
	plain := ends[0].Stats
	t.Logf("clustered: %d of %d row groups eliminated, %d rows scanned; dbgen order: %d of %d, %d rows",
		clustered.RowGroupsEliminated, clustered.RowGroups, clustered.RowsScanned, plain.RowGroupsEliminated, plain.RowGroups, plain.RowsScanned)
	if clustered.RowGroups < 20 || clustered.RowGroupsEliminated*2 < clustered.RowGroups {
		t.Errorf("clustered lineitem: %d of %d row groups eliminated for a one-year range", clustered.RowGroupsEliminated, clustered.RowGroups)
	}
	if clustered.RowsScanned >= want.rows/2 {
		t.Errorf("clustered lineitem: %d rows scanned of %d", clustered.RowsScanned, want.rows)
	}
	if plain.RowGroupsEliminated >= clustered.RowGroupsEliminated {
		t.Errorf("dbgen order eliminated %d row groups, clustered %d", plain.RowGroupsEliminated, clustered.RowGroupsEliminated)
	}
	checkAnswers(t, cl, "lineitem_dbgen_order", want)
	checkAnswers(t, cl, "lineitem", want)

	// Cold and warm: after dropcache the scan decodes from disk, the next one hits the cache.
	if _, err := c.DropCache(testCtx(t), true); err != nil {
		t.Fatal(err)
	}
	_, ends = runFrag(t, cl, q6(t, "lineitem"))
	cold := ends[0].Stats
	_, ends = runFrag(t, cl, q6(t, "lineitem"))
	warm := ends[0].Stats
	if cold.CacheMisses == 0 || cold.BytesFromDisk == 0 || warm.CacheMisses != 0 || warm.BytesFromCache == 0 {
		t.Errorf("cold: %d misses, %d bytes from disk; warm: %d misses, %d bytes from cache",
			cold.CacheMisses, cold.BytesFromDisk, warm.CacheMisses, warm.BytesFromCache)
	}
	// The END reaches the client just before the handler returns: wait for it to.
	var st *link.Stats
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var err error
		if st, err = c.Stats(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		if st.Methods["fragment"].Active == 0 || time.Now().After(deadline) {
			break
		}
	}
	if m := st.Methods["fragment"]; m.Calls < 6 || m.Active != 0 || st.Cache.Entries == 0 || st.RSSBytes == 0 || st.Usage().CPU() == 0 {
		t.Errorf("stats: fragment %+v, cache %+v, rss %d", m, st.Cache, st.RSSBytes)
	}
}

// TestBadInput sends bad requests; each fails its own stream with an error naming the
// problem, and the primproc answers the next request.
func TestBadInput(t *testing.T) {
	bin := buildPrimproc(t)
	p := startPM(t, bin, filepath.Join(testbin.TempDir(t), "data"), "--query-memory", "256KiB")
	c := dial(t, p.tcp, "tcp")
	cl := link.Cluster{c}
	loadLineitem(t, cl, false)
	ctx := testCtx(t)

	expectErr := func(what string, err error, code string, parts ...string) {
		t.Helper()
		var re *ipc.RemoteError
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		if code != "" && (!errors.As(err, &re) || re.Code != code) {
			t.Errorf("%s: %v, want code %s", what, err, code)
		}
		for _, s := range parts {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q does not mention %q", what, err, s)
			}
		}
		// The daemon serves on.
		if _, err := c.Stats(ctx); err != nil {
			t.Fatalf("after %s: %v", what, err)
		}
	}

	f := q6(t, "orders")
	_, _, err := tryRun(ctx, cl, f)
	expectErr("unknown table", err, ipc.CodeInvalidArgument, `unknown table "orders"`)

	f = q6(t, "lineitem")
	f.Scan.Columns = slices.Clone(liCols)
	f.Scan.Columns[0] = "l_quantityy"
	_, _, err = tryRun(ctx, cl, f)
	expectErr("unknown column", err, ipc.CodeInvalidArgument, `no column "l_quantityy"`)

	f = q6(t, "lineitem")
	f.Scan.Types = slices.Clone(liTypes)
	f.Scan.Types[1] = vec.Int64Type
	f.Steps = nil
	_, _, err = tryRun(ctx, cl, f)
	expectErr("type mismatch", err, ipc.CodeInvalidArgument, "type mismatch", "l_extendedprice", "decimal(15,2)", "int64")

	f = q6(t, "lineitem")
	f.Steps[0].Filter = mustExpr(t, "(+ l_quantity 1)")
	_, _, err = tryRun(ctx, cl, f)
	expectErr("non-boolean filter", err, ipc.CodeInvalidArgument, "step 0", "not bool")

	for _, args := range [][]byte{
		{0x93, 0x01, 0x02, 0x03},               // [1, 2, 3]
		{0x81, 0xa4, 's', 'c', 'a', 'n', 0x05}, // {"scan": 5}
	} {
		_, err = c.Link().Call(ctx, link.MethodFragment, args)
		expectErr(fmt.Sprintf("args %x", args), err, ipc.CodeInvalidArgument, "fragment")
	}

	// Over --query-memory: group by a near-unique key.
	big := &link.FragmentArgs{Fragment: exec.Fragment{
		Scan:  exec.Scan{Table: "lineitem", Columns: []string{"l_orderkey", "l_partkey"}, Types: []vec.Type{vec.Int64Type, vec.Int64Type}},
		Steps: []exec.Step{{Aggregate: &exec.AggStep{Spec: exec.AggSpec{GroupBy: []int{0, 1}, Aggs: []exec.Aggregate{{Func: exec.AggCountStar}}}}}},
	}}
	_, _, err = tryRun(ctx, cl, big)
	expectErr("over query memory", err, "", "query memory limit exceeded")
	var ve *vec.Error
	if !errors.Is(err, exec.ErrMemoryLimit) || !errors.As(err, &ve) || ve.Code != vec.CodeOutOfResources {
		t.Errorf("memory error %v does not wrap exec.ErrMemoryLimit with MySQL code 1041", err)
	}

	// Loads: a batch of the wrong type, a cluster key the table lacks, an append to a table
	// that does not exist, a concurrent load of one table.
	two := []link.ColumnDef{{Name: "a", SQLType: "bigint"}, {Name: "b", SQLType: "varchar(10)"}}
	ls, err := c.Load(ctx, link.LoadArgs{Table: "t2", Columns: two})
	if err != nil {
		t.Fatal(err)
	}
	wrong := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32}, {Name: "b", Type: arrow.BinaryTypes.String}}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, wrong)
	bld.Field(0).(*array.Int32Builder).Append(1)
	bld.Field(1).(*array.StringBuilder).Append("x")
	rec := bld.NewRecordBatch()
	bld.Release()
	err = ls.Send(rec)
	rec.Release()
	if err == nil {
		_, err = ls.Commit()
	}
	expectErr("batch of the wrong type", err, ipc.CodeInvalidArgument, "column a is bigint", "int32")

	first, err := c.Load(ctx, link.LoadArgs{Table: "t3", Columns: two})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // let the first load take the table
	second, err := c.Load(ctx, link.LoadArgs{Table: "t3", Columns: two})
	if err == nil {
		_, err = second.Commit()
	}
	expectErr("concurrent load of one table", err, ipc.CodeInvalidArgument, "t3 is being loaded by another stream")
	if end, err := first.Commit(); err != nil || end.Rows != 0 || tableRows(t, c, "t3") != 0 {
		t.Fatalf("empty load of t3: %+v %v", end, err)
	}

	for _, tc := range []struct {
		args  link.LoadArgs
		parts []string
	}{
		{link.LoadArgs{Table: "nosuch", Mode: link.ModeAppend}, []string{"nosuch", "does not exist"}},
		{link.LoadArgs{Table: "t1", Mode: "upsert"}, []string{`mode "upsert"`}},
		{link.LoadArgs{Table: "t1", Columns: []link.ColumnDef{{Name: "a", SQLType: "geometry"}}}, []string{`unsupported SQL type "geometry"`}},
		{link.LoadArgs{Table: "t1", Columns: []link.ColumnDef{{Name: "a", SQLType: "int"}}, ClusterBy: []string{"b"}}, []string{`cluster_by names column "b"`}},
		{link.LoadArgs{Table: "bad name!", Columns: []link.ColumnDef{{Name: "a", SQLType: "int"}}}, []string{"not an identifier"}},
	} {
		ls, err := c.Load(ctx, tc.args)
		if err == nil {
			_, err = ls.Commit()
		}
		expectErr(fmt.Sprintf("load %+v", tc.args), err, ipc.CodeInvalidArgument, tc.parts...)
	}
	if got := tableRows(t, c, "t1"); got != -1 {
		t.Errorf("a failed load created table t1 (%d rows)", got)
	}
}

// TestJoinBuildSides runs a fragment with two build sides uploaded on its stream (a semi
// join on l_partkey, then an inner join on l_orderkey that adds a tag) on two primprocs, and
// checks the partial sums against a loop.
func TestJoinBuildSides(t *testing.T) {
	bin := buildPrimproc(t)
	dir := testbin.TempDir(t)
	a := startPM(t, bin, filepath.Join(dir, "a"))
	b := startPM(t, bin, filepath.Join(dir, "b"))
	cl := link.Cluster{dial(t, a.tcp, "tcp"), dial(t, b.unix, "unix")}
	loadLineitem(t, cl, true)

	// Side 0: orders with o_orderkey % 7 == 0, tagged P<key % 3>; side 1: parts with
	// p_partkey % 5 == 0. Both are sent in several records.
	tagSchema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "tag", Type: arrow.BinaryTypes.String}}, nil)
	partSchema := arrow.NewSchema([]arrow.Field{{Name: "pk", Type: arrow.PrimitiveTypes.Int64}}, nil)
	var side0, side1 []arrow.RecordBatch
	tb := array.NewRecordBuilder(memory.DefaultAllocator, tagSchema)
	og, err := tpch.NewGenerator(testScale, "orders", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	for {
		rec, err := og.Next()
		if err == io.EOF {
			break
		}
		keys := rec.Column(0).(*array.Int64)
		for i := 0; i < keys.Len(); i++ {
			if key := keys.Value(i); key%7 == 0 {
				tb.Field(0).(*array.Int64Builder).Append(key)
				tb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("P%d", key%3))
				if tb.Field(0).Len() == 500 {
					side0 = append(side0, tb.NewRecordBatch())
				}
			}
		}
		rec.Release()
	}
	og.Close()
	side0 = append(side0, tb.NewRecordBatch())
	tb.Release()
	pb := array.NewRecordBuilder(memory.DefaultAllocator, partSchema)
	parts, _ := testScale.Units("part")
	for k := int64(5); k <= parts; k += 5 {
		pb.Field(0).(*array.Int64Builder).Append(k)
		if pb.Field(0).Len() == 77 {
			side1 = append(side1, pb.NewRecordBatch())
		}
	}
	side1 = append(side1, pb.NewRecordBatch())
	pb.Release()
	defer func() {
		for _, r := range append(side0, side1...) {
			r.Release()
		}
	}()

	want := map[string]int64{}
	g, _ := tpch.NewGenerator(testScale, "lineitem", 1, 1)
	for {
		rec, err := g.Next()
		if err == io.EOF {
			break
		}
		ok, pk, q := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int64), rec.Column(4).(*array.Decimal64)
		for i := 0; i < int(rec.NumRows()); i++ {
			if ok.Value(i)%7 == 0 && pk.Value(i)%5 == 0 {
				want[fmt.Sprintf("P%d", ok.Value(i)%3)] += int64(q.Value(i))
			}
		}
		rec.Release()
	}
	g.Close()

	args := &link.FragmentArgs{Fragment: exec.Fragment{
		Scan:   exec.Scan{Table: "lineitem", Columns: []string{"l_orderkey", "l_partkey", "l_quantity"}, Types: []vec.Type{vec.Int64Type, vec.Int64Type, vec.Decimal(15, 2)}},
		Builds: []exec.BuildSide{{Types: []vec.Type{vec.Int64Type, vec.StringType}}, {Types: []vec.Type{vec.Int64Type}}},
		Steps: []exec.Step{
			{Join: &exec.JoinStep{Build: 1, Spec: exec.JoinSpec{Kind: exec.JoinSemi, ProbeKeys: []int{1}, BuildKeys: []int{0}}}},
			{Join: &exec.JoinStep{Build: 0, Spec: exec.JoinSpec{Kind: exec.JoinInner, ProbeKeys: []int{0}, BuildKeys: []int{0}}}},
			{Project: []*expr.Expr{expr.ColRef(4), expr.ColRef(2)}},
			{Aggregate: &exec.AggStep{Spec: exec.AggSpec{GroupBy: []int{0}, Aggs: []exec.Aggregate{{Func: exec.AggSum, Col: 1}}}}},
		},
	}}
	got := map[string]int64{}
	var buildRows int64
	for _, c := range cl {
		fs, err := c.Fragment(testCtx(t), args, []*arrow.Schema{tagSchema, partSchema})
		if err != nil {
			t.Fatal(err)
		}
		// Interleave the sides.
		for i := 0; i < max(len(side0), len(side1)); i++ {
			if i < len(side1) {
				if err := fs.SendBuild(1, side1[i]); err != nil {
					t.Fatal(err)
				}
			}
			if i < len(side0) {
				if err := fs.SendBuild(0, side0[i]); err != nil {
					t.Fatal(err)
				}
			}
		}
		err = fs.Each(func(rec arrow.RecordBatch) error {
			tag, sum := rec.Column(0).(*array.String), rec.Column(1).(*array.Decimal128)
			for i := 0; i < int(rec.NumRows()); i++ {
				got[strings.Clone(tag.Value(i))] += sum.Value(i).BigInt().Int64() // Value aliases the record's buffer
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		buildRows += fs.End().Link.BuildRows
		fs.Close()
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(want) != 3 {
		t.Fatalf("sums %v, want %v", got, want)
	}
	var sent int64
	for _, r := range append(side0, side1...) {
		sent += r.NumRows()
	}
	if buildRows != 2*sent {
		t.Errorf("primprocs received %d build rows, %d sent to each", buildRows, sent)
	}

	// A build record of the wrong type fails the stream, naming the side.
	wrongSide := &link.FragmentArgs{Fragment: args.Fragment}
	wrongSide.Builds = []exec.BuildSide{{Types: []vec.Type{vec.Int32Type, vec.StringType}}, {Types: []vec.Type{vec.Int64Type}}}
	wrongSide.Steps = nil
	fs, err := cl[0].Fragment(testCtx(t), wrongSide, []*arrow.Schema{tagSchema, partSchema})
	if err != nil {
		t.Fatal(err)
	}
	err = fs.SendBuild(0, side0[0])
	if err == nil {
		_, err = fs.Recv()
	}
	fs.Close()
	if err == nil || !strings.Contains(err.Error(), "build side 0 column 0 is int64, the fragment declares int32") {
		t.Errorf("wrong build type: %v", err)
	}
}

// TestCancelStopsFragment closes a fragment stream whose output waits on flow control;
// primproc's handler and workers stop, and the next query runs.
func TestCancelStopsFragment(t *testing.T) {
	bin := buildPrimproc(t)
	p := startPM(t, bin, filepath.Join(testbin.TempDir(t), "data"))
	loadLineitem(t, link.Cluster{dial(t, p.unix, "unix")}, false)
	// A client granting little credit (4 MiB per stream), so that the fragment's output,
	// 50 rows per lineitem row, waits for it.
	c, err := link.Dial(p.unix, ipc.ClientConfig{Transport: ipc.TransportUnix, Limits: ipc.Limits{StreamWindow: 4 << 20},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	keys := arrow.NewSchema([]arrow.Field{{Name: "pk", Type: arrow.PrimitiveTypes.Int64}}, nil)
	kb := array.NewRecordBuilder(memory.DefaultAllocator, keys)
	parts, _ := testScale.Units("part")
	for k := int64(1); k <= parts; k++ {
		for range 50 {
			kb.Field(0).(*array.Int64Builder).Append(k)
		}
	}
	build := kb.NewRecordBatch()
	kb.Release()
	defer build.Release()
	explode := &link.FragmentArgs{Fragment: exec.Fragment{
		Scan:   exec.Scan{Table: "lineitem", Columns: []string{"l_partkey"}, Types: []vec.Type{vec.Int64Type}},
		Builds: []exec.BuildSide{{Types: []vec.Type{vec.Int64Type}}},
		Steps:  []exec.Step{{Join: &exec.JoinStep{Build: 0, Spec: exec.JoinSpec{Kind: exec.JoinInner, ProbeKeys: []int{0}, BuildKeys: []int{0}}}}},
	}}
	ctx := testCtx(t)
	fs, err := c.Fragment(ctx, explode, []*arrow.Schema{keys})
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.SendBuild(0, build); err != nil {
		t.Fatal(err)
	}
	rec, err := fs.Recv()
	if err != nil {
		t.Fatal(err)
	}
	rec.Release()
	active := func() int64 {
		st, err := c.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st.Methods["fragment"].Active
	}
	time.Sleep(200 * time.Millisecond)
	if n := active(); n != 1 {
		t.Fatalf("%d fragments active while the client holds back credit, want 1", n)
	}
	fs.Close()
	deadline := time.Now().Add(2 * time.Second)
	for active() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the fragment still runs 2s after its stream was closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	rows, _ := runFrag(t, link.Cluster{c}, q6(t, "lineitem"))
	if len(rows) == 0 {
		t.Fatal("no Q6 rows after the cancel")
	}
}
