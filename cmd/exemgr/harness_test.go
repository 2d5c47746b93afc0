package main

import (
	"context"
	dsql "database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/colinkdb/colink/dbt3/answers"
	"github.com/colinkdb/colink/dbt3/queries"
	"github.com/colinkdb/colink/exemgr/frontend"
	"github.com/colinkdb/colink/internal/buildinfo"
	"github.com/colinkdb/colink/internal/testbin"
	"github.com/colinkdb/colink/internal/testref"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/tpch"
)

// The acceptance tests run the real daemons: primprocs loaded with TPC-H data by
// "dbt3 load", and exemgrs in front of them, reached through go-sql-driver/mysql and the
// mariadb client. Everything expensive is shared by the tests of this binary: the binaries
// are built once, each cluster (one primproc, two primprocs) is started and loaded once per
// scale factor on first use, and each exemgr (cluster × transport) is started once. TestMain
// stops every process and removes the directories.

// harness owns the shared processes.
type harness struct {
	setup    sync.Mutex        // serializes starting clusters and exemgrs
	mu       sync.Mutex        // guards the fields below
	dir      string            // binaries, data directories, sockets
	bins     map[string]string // command → binary
	procs    []*testbin.Proc
	clusters map[string]*cluster
	exemgrs  map[string]*exemgrProc
}

var shared = &harness{bins: map[string]string{}, clusters: map[string]*cluster{}, exemgrs: map[string]*exemgrProc{}}

func TestMain(m *testing.M) {
	code := m.Run()
	shared.stop()
	os.Exit(code)
}

// stop kills every process the harness started and removes its directory.
func (h *harness) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.procs {
		p.Kill()
	}
	if h.dir != "" {
		os.RemoveAll(h.dir)
	}
}

// tempDir is the harness's directory (short, for unix socket paths).
func (h *harness) tempDir(t testing.TB) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dir == "" {
		d, err := os.MkdirTemp("", "colink-em")
		if err != nil {
			t.Fatal(err)
		}
		h.dir = d
	}
	return h.dir
}

// bin returns the binary of a command of this module built with the given tags, building
// it on first use.
func (h *harness) bin(t testing.TB, pkg string, tags ...string) string {
	t.Helper()
	dir := filepath.Join(h.tempDir(t), "bin")
	key := pkg + " " + strings.Join(tags, ",")
	h.mu.Lock()
	defer h.mu.Unlock()
	if b, ok := h.bins[key]; ok {
		return b
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b := testbin.Build(t, dir, pkg, tags...)
	h.bins[key] = b
	return b
}

// serverVersion is what the exemgr binary the tests run reports as @@version and
// @@version_comment (its build: a stamped binary adds its revision).
func (h *harness) serverVersion(t testing.TB) (version, comment string) {
	t.Helper()
	in, err := buildinfo.ReadFile(h.bin(t, "./cmd/exemgr"))
	if err != nil {
		t.Fatal(err)
	}
	return frontend.ServerVersionFor(in), frontend.VersionCommentFor(in)
}

// start runs a daemon until the harness stops (or the caller kills it).
func (h *harness) start(t testing.TB, bin string, args ...string) *testbin.Proc {
	t.Helper()
	return h.startEnv(t, nil, bin, args...)
}

// startEnv is start with env (NAME=value entries) added to the daemon's environment.
func (h *harness) startEnv(t testing.TB, env []string, bin string, args ...string) *testbin.Proc {
	t.Helper()
	p := testbin.SpawnEnv(t, env, bin, args...)
	h.mu.Lock()
	h.procs = append(h.procs, p)
	h.mu.Unlock()
	return p
}

// primproc is one running primproc and its endpoints.
type primproc struct {
	*testbin.Proc
	tcp, unix string
}

// cluster is a set of primprocs holding one copy of TPC-H data at SF sf.
type cluster struct {
	name      string
	sf        string
	primprocs []*primproc
}

// tcpURLs are the primprocs' TCP endpoints, as exemgr is given them.
func (c *cluster) tcpURLs() []string {
	var out []string
	for _, p := range c.primprocs {
		out = append(out, p.tcp)
	}
	return out
}

// layouts are the clusters the acceptance tests run over.
var layouts = []struct {
	name      string
	primprocs int
}{{"one-primproc", 1}, {"two-primprocs", 2}}

// startPrimproc starts a primproc on dataDir with small segments and row groups, so that
// SF 0.01 spans several of each (and zone maps have something to eliminate).
func (h *harness) startPrimproc(t testing.TB, name, dataDir string, sf string) *primproc {
	t.Helper()
	port := testbin.FreePort(t)
	p := &primproc{tcp: fmt.Sprintf("tcp://127.0.0.1:%d", port), unix: "unix://" + filepath.Join(h.tempDir(t), name+".sock")}
	rg, seg := "512", "1024"
	if sf != "0.01" {
		rg, seg = "8192", "32768"
	}
	p.Proc = h.start(t, h.bin(t, "./cmd/primproc"), "--data-dir", dataDir, "--listen", p.tcp, "--listen", p.unix,
		"--row-group-rows", rg, "--segment-rows", seg, "--threads", "2", "--cache-size", "1GiB")
	p.WaitLog(t, `primproc: serving`, 30*time.Second)
	return p
}

// cluster returns the named layout's cluster at scale factor sf, started and loaded on
// first use.
func (h *harness) cluster(t testing.TB, layout string, n int, sf string) *cluster {
	t.Helper()
	key := layout + "@" + sf
	h.setup.Lock()
	defer h.setup.Unlock()
	h.mu.Lock()
	c, ok := h.clusters[key]
	h.mu.Unlock()
	if ok {
		return c
	}
	c = &cluster{name: layout, sf: sf}
	for i := range n {
		name := fmt.Sprintf("%s-sf%s-pm%d", layout, sf, i)
		c.primprocs = append(c.primprocs, h.startPrimproc(t, name, filepath.Join(h.tempDir(t), name), sf))
	}
	start := time.Now()
	segRows := int64(1024)
	if sf != "0.01" {
		segRows = 32768
	}
	if err := loadTPCH(context.Background(), c.tcpURLs(), sf, segRows); err != nil {
		t.Fatalf("load SF %s: %v", sf, err)
	}
	t.Logf("loaded SF %s into %d primproc(s) in %v", sf, n, time.Since(start).Round(time.Millisecond))
	h.mu.Lock()
	h.clusters[key] = c
	h.mu.Unlock()
	return c
}

// loadTPCH generates the TPC-H tables at scale factor sf into the primprocs, as "dbt3 load
// --sf" does but in process: each table is cut into chunks of about segRows rows (dbgen's
// chunks), dealt round robin across the primprocs, lineitem and orders clustered by their
// dates within each segment. Only the named tables, if any are named.
func loadTPCH(ctx context.Context, urls []string, sf string, segRows int64, tables ...string) error {
	sc, err := tpch.ParseScale(sf)
	if err != nil {
		return err
	}
	var cl link.Cluster
	defer func() {
		for _, c := range cl {
			c.Close()
		}
	}()
	for _, u := range urls {
		c, err := link.Dial(u, ipc.ClientConfig{Transport: ipc.TransportTCP, Name: "exemgr test loader", Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			return err
		}
		cl = append(cl, c)
	}
	clusterBy := map[string][]string{"lineitem": {"l_shipdate"}, "orders": {"o_orderdate"}}
	var loads []link.TableLoad
	if tables == nil {
		tables = tpch.TableNames()
	}
	for _, name := range tables {
		def, _ := tpch.LookupTable(name)
		rows, err := sc.EstimatedRows(name)
		if err != nil {
			return err
		}
		units, _ := sc.Units(name)
		n := int(max(1, min((rows+segRows-1)/segRows, units)))
		if name == "nation" || name == "region" {
			n = 1 // never divided
		}
		loads = append(loads, link.TableLoad{Table: name, Schema: def.ArrowSchema(), Chunks: n,
			ClusterBy: clusterBy[name], EstimatedRows: rows,
			Open: func(k int) (link.ChunkReader, error) {
				return tpch.NewGenerator(sc, name, k+1, n)
			}})
	}
	_, err = cl.Load(ctx, loads, link.LoadOptions{})
	return err
}

// exemgrProc is a running exemgr.
type exemgrProc struct {
	*testbin.Proc
	addr   string // MySQL TCP address
	socket string // MySQL unix socket
	peers  []string
	trans  string
}

// exemgr returns an exemgr in front of c over the link transport, started on first use.
// extra flags make a separate instance.
func (h *harness) exemgr(t testing.TB, c *cluster, transport string, extra ...string) *exemgrProc {
	t.Helper()
	key := c.name + "@" + c.sf + "/" + transport + strings.Join(extra, " ")
	h.setup.Lock()
	defer h.setup.Unlock()
	h.mu.Lock()
	e, ok := h.exemgrs[key]
	h.mu.Unlock()
	if ok {
		return e
	}
	e = h.startExemgr(t, c.tcpURLs(), transport, extra...)
	h.mu.Lock()
	h.exemgrs[key] = e
	h.mu.Unlock()
	return e
}

// startExemgr starts an exemgr for the given primprocs and waits for it to connect to them.
func (h *harness) startExemgr(t testing.TB, peers []string, transport string, extra ...string) *exemgrProc {
	t.Helper()
	e := h.spawnExemgr(t, peers, transport, extra...)
	// Every primproc is connected before the first query.
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(e.Log(), "exemgr: primproc up") < len(peers) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	return e
}

// spawnExemgr starts an exemgr for the given primprocs and returns once it serves clients,
// connected to its primprocs or not.
func (h *harness) spawnExemgr(t testing.TB, peers []string, transport string, extra ...string) *exemgrProc {
	t.Helper()
	bin := h.bin(t, "./cmd/exemgr")
	port := testbin.FreePort(t)
	e := &exemgrProc{addr: fmt.Sprintf("127.0.0.1:%d", port), peers: peers, trans: transport,
		socket: filepath.Join(h.tempDir(t), fmt.Sprintf("em-%d.sock", port))}
	args := []string{"--mysql-listen", e.addr, "--mysql-socket", e.socket, "--transport", transport}
	for _, p := range peers {
		args = append(args, "--primproc", p)
	}
	e.Proc = h.start(t, bin, append(args, extra...)...)
	e.WaitLog(t, `exemgr: serving`, 30*time.Second)
	return e
}

// db opens a database/sql handle on the exemgr, over TCP or its unix socket.
func (e *exemgrProc) db(t testing.TB, overSocket bool) *dsql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.DBName = "tpch"
	cfg.Net, cfg.Addr = "tcp", e.addr
	if overSocket {
		cfg.Net, cfg.Addr = "unix", e.socket
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := dsql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}

// conn opens one session.
func (e *exemgrProc) conn(t testing.TB) *dsql.Conn {
	t.Helper()
	c, err := e.db(t, false).Conn(context.Background())
	if err != nil {
		t.Fatalf("connect to exemgr: %v\n%s", err, e.Log())
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// queryTable runs query on conn and returns its result as text, NULL as "NULL", failing t
// on an error.
func queryTable(t testing.TB, ctx context.Context, conn *dsql.Conn, query string) *answers.Table {
	t.Helper()
	rows, err := conn.QueryContext(ctx, query)
	if err != nil {
		t.Fatal(errorText(err))
	}
	defer rows.Close()
	tb, err := result(rows, "NULL")
	if err != nil {
		t.Fatal(errorText(err))
	}
	return tb
}

// result is a result set as text: NULL as nulls says.
func result(rows *dsql.Rows, null string) (*answers.Table, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	tb := &answers.Table{Columns: cols}
	vals := make([]dsql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			if v == nil {
				row[i] = null
			} else {
				row[i] = string(v)
			}
		}
		tb.Rows = append(tb.Rows, row)
	}
	return tb, rows.Err()
}

// runScript runs every statement of a script on one session and returns the last result
// set.
func runScript(ctx context.Context, c *dsql.Conn, script, null string) (*answers.Table, error) {
	var last *answers.Table
	for _, stmt := range queries.Split(script) {
		rows, err := c.QueryContext(ctx, stmt)
		if err != nil {
			return nil, err
		}
		tb, err := result(rows, null)
		rows.Close()
		if err != nil {
			return nil, err
		}
		if len(tb.Columns) > 0 {
			last = tb
		}
	}
	if last == nil {
		return nil, errors.New("the script returned no result set")
	}
	return last, nil
}

// errorText formats a MySQL error as the mariadb client prints it.
func errorText(err error) string {
	if err == nil {
		return "no error"
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return fmt.Sprintf("ERROR %d (%s): %s", me.Number, string(me.SQLState[:]), me.Message)
	}
	return err.Error()
}

// answersDir is where the TPC-H reference answers live ("" if absent: see testref).
func answersDir() string {
	dir, _ := testref.Path("answers")
	return dir
}

// expectedFile names the answer file of query n at sf: Q11's script keeps the fraction
// 0.0001 whatever the scale factor, which q11-fraction-0.0001.csv answers.
func expectedFile(sf string, n int) string {
	name := fmt.Sprintf("q%02d.csv", n)
	if n == 11 {
		name = "q11-fraction-0.0001.csv"
	}
	return filepath.Join(answersDir(), "sf"+sf, name)
}

// needAnswers skips the test if the reference answers for sf are missing.
func needAnswers(t testing.TB, sf string) {
	testref.TPCH(t, "answers", "sf"+sf)
}

// needDaemons skips in -short mode.
func needDaemons(t testing.TB) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
}

// queryStats runs SHOW QUERY STATS on the session and returns its rows by column name,
// checking the contract's process order: exemgr, then primproc0, primproc1, ….
func queryStats(t testing.TB, conn *dsql.Conn) []map[string]string {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), "SHOW QUERY STATS")
	if err != nil {
		t.Fatalf("SHOW QUERY STATS: %s", errorText(err))
	}
	defer rows.Close()
	tb, err := result(rows, "NULL")
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for i, r := range tb.Rows {
		m := map[string]string{}
		for j, c := range tb.Columns {
			m[c] = r[j]
		}
		want := "exemgr"
		if i > 0 {
			want = fmt.Sprintf("primproc%d", i-1)
		}
		if m["process"] != want {
			t.Fatalf("SHOW QUERY STATS row %d is process %q, want %q", i, m["process"], want)
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		t.Fatal("SHOW QUERY STATS returned no rows")
	}
	return out
}

// sqlSession is one connection to an exemgr for a test that runs statements in turn and
// checks their results as psvRows text, with a deadline for them all.
type sqlSession struct {
	t    *testing.T
	ctx  context.Context
	conn *dsql.Conn
}

// newSQLSession opens a session on em whose statements must finish within two minutes.
func newSQLSession(t *testing.T, em *exemgrProc) *sqlSession {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return &sqlSession{t: t, ctx: ctx, conn: em.conn(t)}
}

// run executes q, failing the test on an error.
func (s *sqlSession) run(q string) {
	s.t.Helper()
	if _, err := s.conn.ExecContext(s.ctx, q); err != nil {
		s.t.Fatalf("%s: %s", q, errorText(err))
	}
}

// query returns q's rows as psvRows text.
func (s *sqlSession) query(q string) string {
	s.t.Helper()
	return psvRows(queryTable(s.t, s.ctx, s.conn, q))
}

// check reports q's rows when they are not want.
func (s *sqlSession) check(q, want string) {
	s.t.Helper()
	if got := s.query(q); got != want {
		s.t.Errorf("%s:\n got %q\nwant %q", q, got, want)
	}
}

// fails reports q unless it fails with an error holding code and want.
func (s *sqlSession) fails(q, code, want string) {
	s.t.Helper()
	_, err := s.conn.ExecContext(s.ctx, q)
	if msg := errorText(err); !strings.Contains(msg, code) || !strings.Contains(msg, want) {
		s.t.Errorf("%s: %s, want error %s naming %q", q, msg, code, want)
	}
}
