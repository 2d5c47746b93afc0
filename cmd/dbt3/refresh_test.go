package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colinkdb/colink/dbt3"
	daemons "github.com/colinkdb/colink/dbt3/cluster"
	"github.com/colinkdb/colink/dbt3/measure"
	"github.com/colinkdb/colink/internal/testbin"
	"github.com/colinkdb/colink/internal/testref"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/tpch"
)

// The refresh tests run the refresh functions through real daemons — two primprocs, so that
// every statement is a two-phase commit — at SF 0.01, and check the tables against a model
// computed from the .tbl files: row counts and sums of keys, prices and quantities.

// rfState is the tables' checksum: counts and sums (money and quantities in hundredths).
type rfState struct {
	Orders, OKeys, OPrice             int64
	Lines, LKeys, LPrice, LQuantities int64
}

func (s rfState) plus(o rfState, sign int64) rfState {
	return rfState{s.Orders + sign*o.Orders, s.OKeys + sign*o.OKeys, s.OPrice + sign*o.OPrice,
		s.Lines + sign*o.Lines, s.LKeys + sign*o.LKeys, s.LPrice + sign*o.LPrice, s.LQuantities + sign*o.LQuantities}
}

// checksumQuery reads the checksum in one statement (one snapshot).
const checksumQuery = "select (select count(*) from orders), (select sum(o_orderkey) from orders), (select sum(o_totalprice) from orders), " +
	"(select count(*) from lineitem), (select sum(l_orderkey) from lineitem), (select sum(l_extendedprice) from lineitem), (select sum(l_quantity) from lineitem)"

func hundredths(s string) (int64, error) {
	whole, frac, _ := strings.Cut(strings.TrimSpace(s), ".")
	frac = (frac + "00")[:2]
	v, err := strconv.ParseInt(whole+frac, 10, 64)
	return v, err
}

func readChecksum(ctx context.Context, c *dbt3.Conn) (rfState, error) {
	res, _, err := c.Exec(ctx, checksumQuery)
	if err != nil {
		return rfState{}, err
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 7 {
		return rfState{}, fmt.Errorf("checksum: %d rows", len(res.Rows))
	}
	var v [7]int64
	for i, s := range res.Rows[0] {
		if s == "" {
			s = "0"
		}
		if i == 2 || i == 5 || i == 6 {
			v[i], err = hundredths(s)
		} else {
			v[i], err = strconv.ParseInt(s, 10, 64)
		}
		if err != nil {
			return rfState{}, fmt.Errorf("checksum column %d: %q", i, s)
		}
	}
	return rfState{v[0], v[1], v[2], v[3], v[4], v[5], v[6]}, nil
}

// tblRows reads a .tbl file's lines whose key (first field) keep accepts (nil: all).
func tblRows(t *testing.T, path string, keep func(int64) bool) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(strings.TrimSuffix(sc.Text(), "|"), "|")
		k, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			t.Fatalf("%s: %q", path, sc.Text())
		}
		if keep == nil || keep(k) {
			out = append(out, fields)
		}
	}
	return out
}

// sumsOf is the checksum of orders and lineitem rows.
func sumsOf(t *testing.T, orders, lines [][]string) rfState {
	t.Helper()
	var s rfState
	num := func(v string) int64 {
		n, err := hundredths(v)
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		return n
	}
	for _, o := range orders {
		k, _ := strconv.ParseInt(o[0], 10, 64)
		s.Orders++
		s.OKeys += k
		s.OPrice += num(o[3])
	}
	for _, l := range lines {
		k, _ := strconv.ParseInt(l[0], 10, 64)
		s.Lines++
		s.LKeys += k
		s.LQuantities += num(l[4])
		s.LPrice += num(l[5])
	}
	return s
}

func writeTbl(t *testing.T, path string, rows [][]string) {
	t.Helper()
	var b bytes.Buffer
	for _, r := range rows {
		b.WriteString(strings.Join(r, "|") + "|\n")
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func keySet(keys []int64) func(int64) bool {
	m := map[int64]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return func(k int64) bool { return m[k] }
}

func keysOf(rows [][]string) []int64 {
	var out []int64
	for _, r := range rows {
		k, _ := strconv.ParseInt(r[0], 10, 64)
		out = append(out, k)
	}
	return out
}

// rfProc is a daemon the refresh tests start, kill and start again.
type rfProc struct {
	bin  string
	args []string
	p    *testbin.Proc
}

// rfCluster is two primprocs and an exemgr on fixed ports.
type rfCluster struct {
	pms   []*rfProc
	urls  []string
	em    *rfProc
	mysql string
}

func startRefreshCluster(t *testing.T, bins daemons.Binaries, dir string) *rfCluster {
	t.Helper()
	c := &rfCluster{mysql: fmt.Sprintf("127.0.0.1:%d", testbin.FreePort(t))}
	// The non-LOCAL LOAD DATA statements read files under dir, which exemgr must allow.
	emArgs := []string{"--mysql-listen", c.mysql, "--threads", "1", "--primproc-timeout", "3s", "--heartbeat-timeout", "2s", "--secure-file-priv", dir}
	for i := 0; i < 2; i++ {
		url := fmt.Sprintf("tcp://127.0.0.1:%d", testbin.FreePort(t))
		c.urls = append(c.urls, url)
		c.pms = append(c.pms, &rfProc{bin: bins.PrimProc, args: []string{"--data-dir", filepath.Join(dir, fmt.Sprintf("pm%d", i)),
			"--listen", url, "--threads", "1", "--segment-rows", "16384", "--row-group-rows", "4096"}})
		emArgs = append(emArgs, "--primproc", url)
	}
	c.em = &rfProc{bin: bins.ExeMgr, args: emArgs}
	for _, p := range c.pms {
		c.start(t, p)
	}
	c.start(t, c.em)
	return c
}

// start starts p and waits until it serves.
func (c *rfCluster) start(t *testing.T, p *rfProc) {
	t.Helper()
	p.p = testbin.Start(t, p.bin, p.args...)
	if p == c.em {
		deadline := time.Now().Add(20 * time.Second)
		for {
			conn, err := dbt3.Dial(context.Background(), c.mysql, dbt3.DefaultDatabase)
			if err == nil {
				conn.Close()
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("exemgr does not answer: %v\n%s", err, p.p.Log())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	p.p.WaitLog(t, `primproc: serving`, 20*time.Second)
}

func (c *rfCluster) load(t *testing.T) {
	t.Helper()
	args := []string{"load", "--sf", "0.01"}
	for _, u := range c.urls {
		args = append(args, "--primproc", u)
	}
	if code, _, errs := runArgs(t, args...); code != exitOK {
		t.Fatalf("load: exit %d: %s", code, errs)
	}
}

func (c *rfCluster) dial(t *testing.T) *dbt3.Conn {
	t.Helper()
	conn, err := dbt3.Dial(context.Background(), c.mysql, dbt3.DefaultDatabase)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// prepared counts the transactions waiting for their outcome on every primproc.
func (c *rfCluster) prepared(t *testing.T) int {
	t.Helper()
	n := 0
	for _, u := range c.urls {
		pc, err := link.Dial(u, ipc.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		st, err := pc.Stats(context.Background())
		pc.Close()
		if err != nil {
			t.Fatal(err)
		}
		n += st.Prepared
	}
	return n
}

// refreshFixture generates SF 0.01 with refresh sets into dir/gen.
func refreshFixture(t *testing.T, dir string) string {
	t.Helper()
	gen := filepath.Join(dir, "gen")
	if code, _, errs := runArgs(t, "gen", "--sf", "0.01", "--tables", "orders,lineitem", "--refresh", "3", "--out", gen); code != exitOK {
		t.Fatalf("gen: exit %d: %s", code, errs)
	}
	// They are the official sets: the same bytes as dbgen's.
	ref, err := testref.Path("reference-sf0.01")
	if err != nil {
		t.Logf("%v: the generated refresh sets are not compared with dbgen's", err)
		return gen
	}
	for k := 1; k <= 2; k++ {
		o, l, d := tpch.RefreshFileNames(k)
		for _, name := range []string{o, l, d, "orders.tbl", "lineitem.tbl"} {
			a, err1 := os.ReadFile(filepath.Join(gen, name))
			b, err2 := os.ReadFile(filepath.Join(ref, name))
			if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
				t.Fatalf("%s differs from dbgen's (%v, %v)", name, err1, err2)
			}
		}
	}
	return gen
}

// TestRefreshFunctions runs RF1 and RF2 of the official refresh sets through SQL, checks the
// tables after each step, undoes the cycle and checks the validation queries' answers, runs
// the other DML statements and their bad input, and the power and throughput tests with
// their refresh functions.
func TestRefreshFunctions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	ctx := context.Background()
	dir := testbin.TempDir(t)
	bins := daemonBins(t, dir)
	gen := refreshFixture(t, dir)
	c := startRefreshCluster(t, bins, dir)
	c.load(t)
	conn := c.dial(t)

	orders := tblRows(t, filepath.Join(gen, "orders.tbl"), nil)
	lines := tblRows(t, filepath.Join(gen, "lineitem.tbl"), nil)
	base := sumsOf(t, orders, lines)
	check := func(what string, want rfState) {
		t.Helper()
		got, err := readChecksum(ctx, conn)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got != want {
			t.Fatalf("%s: tables hold %+v, want %+v", what, got, want)
		}
	}
	check("loaded", base)

	// RF1 and RF2 of set 1, with a query running beside them that must see each
	// statement's rows everywhere or nowhere.
	newOrders := tblRows(t, filepath.Join(gen, "orders.tbl.u1"), nil)
	newLines := tblRows(t, filepath.Join(gen, "lineitem.tbl.u1"), nil)
	delKeys, err := dbt3.ReadDeleteKeys(filepath.Join(gen, "delete.1"))
	if err != nil {
		t.Fatal(err)
	}
	gone := keySet(delKeys)
	oldOrders := tblRows(t, filepath.Join(gen, "orders.tbl"), gone)
	oldLines := tblRows(t, filepath.Join(gen, "lineitem.tbl"), gone)
	afterO := base.plus(sumsOf(t, newOrders, nil), 1)
	afterRF1 := afterO.plus(sumsOf(t, nil, newLines), 1)
	afterL := afterRF1.plus(sumsOf(t, nil, oldLines), -1)
	afterRF2 := afterL.plus(sumsOf(t, oldOrders, nil), -1)
	undo := dir + "/undo"
	os.MkdirAll(undo, 0o755)
	writeTbl(t, filepath.Join(undo, "orders.tbl"), oldOrders)
	writeTbl(t, filepath.Join(undo, "lineitem.tbl"), oldLines)
	list := keyList(keysOf(newOrders))
	undoStmts := []string{
		"DELETE FROM lineitem WHERE l_orderkey IN (" + list + ")",
		"DELETE FROM orders WHERE o_orderkey IN (" + list + ")",
		"LOAD DATA LOCAL INFILE '" + filepath.Join(undo, "orders.tbl") + "' INTO TABLE orders FIELDS TERMINATED BY '|'",
		"LOAD DATA LOCAL INFILE '" + filepath.Join(undo, "lineitem.tbl") + "' INTO TABLE lineitem FIELDS TERMINATED BY '|'",
	}
	afterU1 := afterRF2.plus(sumsOf(t, nil, newLines), -1)
	afterU2 := afterU1.plus(sumsOf(t, newOrders, nil), -1)
	afterU3 := afterU2.plus(sumsOf(t, oldOrders, nil), 1)
	legal := []rfState{base, afterO, afterRF1, afterL, afterRF2, afterU1, afterU2, afterU3}

	// Three rounds: RF1 and RF2 of set 1, then their undo (delete RF1's orders, load RF2's
	// back, LOCAL: sent by the client), after which the tables hold exactly their original
	// rows again.
	watcher := c.dial(t)
	stop := make(chan struct{})
	var seen []rfState
	var watchErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			st, err := readChecksum(ctx, watcher)
			if err != nil {
				watchErr = err
				return
			}
			seen = append(seen, st)
		}
	}()
	for round := 0; round < 3; round++ {
		var affected []int64
		rf := &dbt3.SQLRefresher{Dir: gen, OnStatement: func(_ string, n int64, _ time.Duration) { affected = append(affected, n) }}
		if err := rf.RF1(ctx, conn, 1); err != nil {
			t.Fatal(err)
		}
		check("after RF1", afterRF1)
		if err := rf.RF2(ctx, conn, 1); err != nil {
			t.Fatal(err)
		}
		check("after RF2", afterRF2)
		if want := []int64{int64(len(newOrders)), int64(len(newLines)), int64(len(oldLines)), int64(len(oldOrders))}; !slices.Equal(affected, want) {
			t.Errorf("rows affected by RF1 and RF2: %v, want %v", affected, want)
		}
		for _, stmt := range undoStmts {
			if _, _, err := conn.ExecCount(ctx, stmt); err != nil {
				t.Fatalf("%.60s: %v", stmt, err)
			}
		}
		check("after undoing the cycle", base)
	}
	close(stop)
	wg.Wait()
	if watchErr != nil {
		t.Fatalf("the query beside the refresh: %v", watchErr)
	}
	for _, st := range seen {
		if !slices.Contains(legal, st) {
			t.Errorf("a query during the refresh saw a mixture: %+v", st)
		}
	}
	t.Logf("the query beside the refreshes ran %d times", len(seen))
	if afterRF2.Orders != base.Orders {
		t.Errorf("RF1 inserts as many orders as RF2 deletes: %d, want %d", afterRF2.Orders, base.Orders)
	}

	// The validation queries give the expected answers after the cycles (and the
	// compactions they caused).
	if _, err := os.Stat(answersSF001); err == nil {
		code, stdout, errs := runArgs(t, "power", "--mysql", c.mysql, "--sf", "0.01", "--validation", "--answers", answersSF001, "--no-stats")
		if code != exitOK || strings.Count(stdout, "reference") != 22 {
			t.Errorf("validation queries after the cycle: exit %d\n%s\n%s", code, stdout, errs)
		}
	} else {
		t.Logf("%s is missing: the answers are not checked", answersSF001)
	}

	t.Run("statements", func(t *testing.T) {
		for _, c := range []struct {
			stmt     string
			affected int64
		}{
			{"insert into region values (10, 'ATLANTIS', 'lost'), (11, 'MU', 'sunk')", 2},
			{"insert into region (r_regionkey, r_name, r_comment) select r_regionkey + 20, r_name, r_comment from region where r_regionkey < 3", 3},
			{"delete from region where r_regionkey in (select r_regionkey from region where r_regionkey >= 10)", 5},
			{"insert into region values (30, 'X', 'y')", 1},
			{"delete from region where r_name = 'X'", 1},
			{"delete from region where r_regionkey = 1234", 0},
		} {
			n, _, err := conn.ExecCount(ctx, c.stmt)
			if err != nil || n != c.affected {
				t.Errorf("%s: %d rows affected, %v; want %d", c.stmt, n, err, c.affected)
			}
		}
		res, _, err := conn.Exec(ctx, "select count(*) from region")
		if err != nil || res.Rows[0][0] != "5" {
			t.Errorf("region after the statements: %v %v", res, err)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		bad := filepath.Join(undo, "bad.tbl")
		good := tblRows(t, filepath.Join(gen, "orders.tbl.u2"), nil)
		rows := slices.Clone(good)
		rows[2] = slices.Clone(rows[2])
		rows[2][3] = "12x.50"
		writeTbl(t, bad, rows)
		short := filepath.Join(undo, "short.tbl")
		writeTbl(t, short, [][]string{good[0], good[1][:4]})
		for _, c := range []struct{ stmt, want string }{
			{"insert into region values (40, 'A')", "Error 1136"},
			{"insert into region values ('forty', 'A', 'b')", "Error 1366"},
			{"insert into region values (40, 'A', 'b', 'c'), (41, 'B', 'c')", "Error 1136"},
			{"insert into orders select * from region", "Error 1136"},
			{"delete from orders wher o_orderkey = 1", "Error 1064"},
			{"delete orders where o_orderkey in (1, 2", "Error 1064"},
			{"load data infile '" + bad + "' into table orders fields terminated by '|'", "Incorrect decimal value: '12x.50' for column 'o_totalprice' at row 3"},
			{"load data local infile '" + short + "' into table orders fields terminated by '|'", "Row 2 doesn't contain data for all columns"},
			{"load data infile '" + filepath.Join(undo, "missing.tbl") + "' into table orders fields terminated by '|'", "Error 29"},
			{"load data infile '" + bad + "' into table no_such_table fields terminated by '|'", "Error 1146"},
		} {
			_, _, err := conn.ExecCount(ctx, c.stmt)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want %q", c.stmt, err, c.want)
			}
		}
		check("after the bad statements", base)
	})

	t.Run("power and throughput", func(t *testing.T) {
		out := filepath.Join(dir, "power.json")
		code, stdout, errs := runArgs(t, "power", "--mysql", c.mysql, "--sf", "0.01", "--seed", "7", "--refresh", gen, "--refresh-set", "2", "--refresh-local=false", "--out", out)
		if code != exitOK || !strings.Contains(stdout, "Power@Size") || strings.Contains(stdout, "were not run") {
			t.Fatalf("power: exit %d\n%s\n%s", code, stdout, errs)
		}
		run, err := measure.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var intervals []float64
		for _, s := range run.Samples {
			intervals = append(intervals, s.Elapsed)
		}
		if len(run.Samples) != 24 || run.Samples[0].Query != "RF1" || run.Samples[23].Query != "RF2" {
			t.Errorf("power samples: %d, first %s, last %s", len(run.Samples), run.Samples[0].Query, run.Samples[len(run.Samples)-1].Query)
		}
		if want, _ := dbt3.PowerAtSize(0.01, intervals); run.Metrics["power@size"] != want {
			t.Errorf("power@size %v, want %v over 24 intervals", run.Metrics["power@size"], want)
		}
		code, stdout, errs = runArgs(t, "throughput", "--mysql", c.mysql, "--sf", "0.01", "--seed", "7", "--streams", "1", "--refresh", gen, "--refresh-set", "3")
		if code != exitOK || !strings.Contains(stdout, "Throughput@Size") || !strings.Contains(stdout, "RF2") {
			t.Fatalf("throughput: exit %d\n%s\n%s", code, stdout, errs)
		}
		if _, err := os.Stat(answersSF001); err == nil {
			if code, _, errs := runArgs(t, "power", "--mysql", c.mysql, "--validation", "--answers", answersSF001, "--refresh", gen); code != exitUsage || !strings.Contains(errs, "--answers with --refresh") {
				t.Errorf("power --answers --refresh: exit %d: %s", code, errs)
			}
		}
	})
	if n := c.prepared(t); n != 0 {
		t.Errorf("%d transactions left prepared", n)
	}
}

func keyList(keys []int64) string {
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = strconv.FormatInt(k, 10)
	}
	return strings.Join(s, ",")
}

// TestRefreshCrash kills a primproc or exemgr (kill -9) at random moments while a stream of
// refresh statements runs, starts it again, and checks that the tables hold the state before
// or after the statement that was running, never a part of it, and that no transaction stays
// prepared once a query has run.
func TestRefreshCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	ctx := context.Background()
	dir := testbin.TempDir(t)
	bins := daemonBins(t, dir)
	gen := refreshFixture(t, dir)
	c := startRefreshCluster(t, bins, dir)
	c.load(t)
	base := sumsOf(t, tblRows(t, filepath.Join(gen, "orders.tbl"), nil), tblRows(t, filepath.Join(gen, "lineitem.tbl"), nil))

	// A cycle of statements that ends where it began: RF1 and RF2 of set 1, then their undo.
	newOrders := tblRows(t, filepath.Join(gen, "orders.tbl.u1"), nil)
	newLines := tblRows(t, filepath.Join(gen, "lineitem.tbl.u1"), nil)
	delKeys, _ := dbt3.ReadDeleteKeys(filepath.Join(gen, "delete.1"))
	oldOrders := tblRows(t, filepath.Join(gen, "orders.tbl"), keySet(delKeys))
	oldLines := tblRows(t, filepath.Join(gen, "lineitem.tbl"), keySet(delKeys))
	undo := filepath.Join(dir, "undo")
	os.MkdirAll(undo, 0o755)
	writeTbl(t, filepath.Join(undo, "orders.tbl"), oldOrders)
	writeTbl(t, filepath.Join(undo, "lineitem.tbl"), oldLines)
	newKeys, oldKeys := keyList(keysOf(newOrders)), keyList(delKeys)
	o1, l1, _ := tpch.RefreshFileNames(1)
	cycle := []struct {
		stmt  string
		delta rfState
	}{
		{"LOAD DATA INFILE '" + filepath.Join(gen, o1) + "' INTO TABLE orders FIELDS TERMINATED BY '|'", sumsOf(t, newOrders, nil)},
		{"LOAD DATA INFILE '" + filepath.Join(gen, l1) + "' INTO TABLE lineitem FIELDS TERMINATED BY '|'", sumsOf(t, nil, newLines)},
		{"DELETE FROM lineitem WHERE l_orderkey IN (" + oldKeys + ")", sumsOf(t, nil, oldLines).negate()},
		{"DELETE FROM orders WHERE o_orderkey IN (" + oldKeys + ")", sumsOf(t, oldOrders, nil).negate()},
		{"DELETE FROM lineitem WHERE l_orderkey IN (" + newKeys + ")", sumsOf(t, nil, newLines).negate()},
		{"DELETE FROM orders WHERE o_orderkey IN (" + newKeys + ")", sumsOf(t, newOrders, nil).negate()},
		{"LOAD DATA INFILE '" + filepath.Join(undo, "orders.tbl") + "' INTO TABLE orders FIELDS TERMINATED BY '|'", sumsOf(t, oldOrders, nil)},
		{"LOAD DATA INFILE '" + filepath.Join(undo, "lineitem.tbl") + "' INTO TABLE lineitem FIELDS TERMINATED BY '|'", sumsOf(t, nil, oldLines)},
	}
	states := []rfState{base}
	for _, s := range cycle {
		states = append(states, states[len(states)-1].plus(s.delta, 1))
	}
	if states[len(cycle)] != base {
		t.Fatalf("the cycle does not end where it began: %+v vs %+v", states[len(cycle)], base)
	}

	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	pos := 0 // the state the tables are in: states[pos % len(cycle)]
	const iterations = 8
	deadline := time.Now().Add(90 * time.Second)
	for it := 0; it < iterations && time.Now().Before(deadline); it++ {
		conn, err := dbt3.Dial(ctx, c.mysql, dbt3.DefaultDatabase)
		if err != nil {
			t.Fatal(err)
		}
		// The stream: statements one after another until one fails (the kill).
		done := make(chan struct{})
		var acked int
		go func() {
			defer close(done)
			for k := pos; ; k++ {
				if _, _, err := conn.ExecCount(ctx, cycle[k%len(cycle)].stmt); err != nil {
					return
				}
				acked++
			}
		}()
		time.Sleep(time.Duration(50+rng.IntN(400)) * time.Millisecond)
		victim := c.em
		name := "exemgr"
		if v := rng.IntN(3); v < 2 {
			victim, name = c.pms[v], fmt.Sprintf("primproc%d", v)
		}
		victim.p.Kill() // SIGKILL, and gone once it returns
		<-done
		conn.Close()
		c.start(t, victim)
		// A query settles whatever the crash left prepared and sees the state after the
		// acknowledged statements, or after the one that was running too.
		var got rfState
		var qerr error
		check := c.dial(t)
		for wait := time.Now().Add(20 * time.Second); time.Now().Before(wait); time.Sleep(100 * time.Millisecond) {
			if got, qerr = readChecksum(ctx, check); qerr == nil {
				break
			}
		}
		if qerr != nil {
			t.Fatalf("iteration %d (killed %s): no answer after the restart: %v", it, name, qerr)
		}
		before, after := states[(pos+acked)%len(cycle)], states[(pos+acked+1)%len(cycle)]
		switch got {
		case before:
			pos += acked
		case after:
			pos += acked + 1
		default:
			t.Fatalf("iteration %d (killed %s after %d statements from %d): tables hold %+v, want %+v or %+v",
				it, name, acked, pos%len(cycle), got, before, after)
		}
		if n := c.prepared(t); n != 0 {
			t.Errorf("iteration %d (killed %s): %d transactions still prepared after a query", it, name, n)
		}
		settled := strings.Count(c.em.p.Log(), "settled transactions left prepared")
		t.Logf("iteration %d: killed %s after %d acknowledged statements; tables at step %d of the cycle; exemgr settled prepared transactions %d times so far",
			it, name, acked, pos%len(cycle), settled)
	}
}

func (s rfState) negate() rfState { return rfState{}.plus(s, -1) }
