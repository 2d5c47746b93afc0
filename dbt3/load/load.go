// Package load owns the loading of TPC-H tables into primprocs over the link ("dbt3 load",
// and the comparison and the fault suite before they measure): the rows generated in process
// (dbgen-identical, every core) or read from .tbl or Parquet files, cut into chunks dealt
// round robin across the primprocs, each table replaced atomically on every primproc.
//
// Every table is cut into chunks of about ChunkRows rows (default: the primprocs' segment
// size), the first chunk of the t-th table going to primproc t mod N: each primproc holds a
// share of every table and a table is the union of the shares. That makes every join a
// primproc can do correct as long as its build side is complete (exemgr gathers it from all
// primprocs and broadcasts it) and the probe side is the primproc's share.
package load

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/colinkdb/colink/dbt3"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/tpch"
)

// clusterKeys are the columns each table's segments are sorted by when Config.Cluster is
// on: the dates TPC-H's predicates range over. dbgen writes rows in key order with random
// dates, which leaves every row group spanning all seven years; sorted, a row group spans
// weeks and zone maps skip most of them for a date range.
var clusterKeys = map[string][]string{
	"lineitem": {"l_shipdate"},
	"orders":   {"o_orderdate"},
}

// Config is what a load loads, and where. Exactly one of SF and From is set. Settings Run
// cannot use are *dbt3.UsageError naming dbt3 load's flag.
type Config struct {
	SF   string // scale factor to generate (as dbt3 gen's --sf)
	From string // directory of .tbl or .parquet files to load instead of generating
	// Primprocs are the primprocs' endpoint URLs (tcp://host:port, unix:///path).
	Primprocs []string
	// Tables to load (nil: all eight; with From, all found).
	Tables    []string
	Transport string // link transport: tcp, unix, shm or auto
	// AuthTokenFile holds the shared secret for TCP primprocs that require one.
	AuthTokenFile string
	// ChunkRows is the rows per dealt chunk (0: the smallest segment size among the
	// primprocs).
	ChunkRows int64
	Workers   int // chunks generated or parsed at once (0: GOMAXPROCS)
	// Cluster sorts lineitem by l_shipdate and orders by o_orderdate within each segment.
	Cluster          bool
	HeartbeatTimeout time.Duration // give up on a primproc silent for this long
	// Stats prints wall and CPU time of this process and of the primprocs at the end
	// (printed anyway when Stderr is a terminal).
	Stats bool
}

// DefaultConfig returns dbt3 load's defaults; the caller sets SF or From, and Primprocs.
func DefaultConfig() Config {
	return Config{Transport: string(ipc.TransportAuto), Cluster: true, HeartbeatTimeout: ipc.DefaultHeartbeatTimeout}
}

// Run loads the tables, printing a line per table on Stdout and, with Stats, the resource
// use on Stderr.
func Run(ctx context.Context, cfg Config, out dbt3.Output) error {
	if (cfg.SF == "") == (cfg.From == "") {
		return dbt3.Usagef("give exactly one of --sf and --from")
	}
	if err := checkConnection(cfg); err != nil {
		return err
	}
	names, err := tableNames(cfg.Tables)
	if err != nil {
		return err
	}
	var scale tpch.Scale
	if cfg.SF != "" {
		if scale, err = tpch.ParseScale(cfg.SF); err != nil {
			return dbt3.Usagef("--sf: %v", err)
		}
	} else if st, err := os.Stat(cfg.From); err != nil || !st.IsDir() {
		return dbt3.Usagef("--from %s: not a directory", cfg.From)
	}
	// Generated rows draw their comments from dbgen's text pool, 300 MiB of sentences built
	// once per process: about 1 s of CPU whatever the scale factor, the whole of a small
	// load's fixed cost. It is built before any upload opens, so that no table's load time
	// (which the primprocs measure from the upload's start) includes it.
	var poolTime time.Duration
	if cfg.SF != "" {
		start := time.Now()
		g, err := tpch.NewGenerator(scale, "region", 1, 1)
		if err != nil {
			return err
		}
		g.Close()
		poolTime = time.Since(start)
	}
	s, err := connect(ctx, cfg, "dbt3 load", out)
	if err != nil {
		return err
	}
	defer s.close()

	var loads []link.TableLoad
	if cfg.SF != "" {
		if names == nil {
			names = tpch.TableNames()
		}
		for _, name := range names {
			loads = append(loads, s.plan.generated(scale, name))
		}
	} else {
		if loads, err = s.plan.files(cfg.From, names); err != nil {
			return err
		}
	}
	if cfg.Cluster {
		for i := range loads {
			loads[i].ClusterBy = clusterKeys[loads[i].Table]
		}
	}
	if err := s.run(ctx, loads, cfg, "dbt3 load", out); err != nil {
		return err
	}
	if poolTime > 0 && (cfg.Stats || out.StderrTerminal) {
		fmt.Fprintf(out.Stderr, "dbt3 load: the generator's text pool took %.2fs before that\n", poolTime.Seconds())
	}
	return nil
}

// session is a load's (or an import's) connection to the primprocs and the chunking their
// layout sets.
type session struct {
	cl   link.Cluster
	plan loadPlan
}

// connect dials cfg's primprocs; name is the command, for the primprocs' logs.
func connect(ctx context.Context, cfg Config, name string, out dbt3.Output) (*session, error) {
	if err := checkConnection(cfg); err != nil {
		return nil, err
	}
	ccfg := ipc.ClientConfig{Transport: ipc.Transport(cfg.Transport), Name: name,
		Logger: out.Logger(false),
		Limits: ipc.Limits{HeartbeatTimeout: cfg.HeartbeatTimeout}}
	if cfg.AuthTokenFile != "" {
		var err error
		if ccfg.AuthToken, err = ipc.ReadTokenFile(cfg.AuthTokenFile); err != nil {
			return nil, dbt3.Usagef("--auth-token-file: %v", err)
		}
	}
	s := &session{}
	for _, ep := range cfg.Primprocs {
		c, err := link.Dial(ep, ccfg)
		if err != nil {
			s.close()
			return nil, dbt3.Usagef("--primproc %s: %v", ep, err)
		}
		s.cl = append(s.cl, c)
	}
	// The primprocs' layout sets the default chunk size.
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var layout struct{ segRows, groupRows int64 }
	for _, c := range s.cl {
		cat, err := c.Catalog(cctx)
		if err != nil {
			s.close()
			return nil, err
		}
		if layout.segRows == 0 || int64(cat.Layout.SegmentRows) < layout.segRows {
			layout.segRows, layout.groupRows = int64(cat.Layout.SegmentRows), int64(cat.Layout.RowGroupRows)
		}
	}
	chunkRows := cfg.ChunkRows
	if chunkRows == 0 {
		chunkRows = layout.segRows
	}
	s.plan = loadPlan{chunkRows: chunkRows, minShare: layout.groupRows, primprocs: len(s.cl)}
	return s, nil
}

// checkConnection checks the settings connect uses, so that a load refuses bad ones before
// it generates anything.
func checkConnection(cfg Config) error {
	if len(cfg.Primprocs) == 0 {
		return dbt3.Usagef("--primproc is required")
	}
	switch ipc.Transport(cfg.Transport) {
	case ipc.TransportTCP, ipc.TransportUnix, ipc.TransportShm, ipc.TransportAuto:
	default:
		return dbt3.Usagef("--transport %q: want tcp, unix, shm or auto", cfg.Transport)
	}
	if cfg.ChunkRows < 0 {
		return dbt3.Usagef("--chunk-rows %d: must be positive", cfg.ChunkRows)
	}
	return nil
}

func (s *session) close() {
	for _, c := range s.cl {
		c.Close()
	}
}

// run loads the tables with a progress bar on a terminal, prints a line per table on
// Stdout and, with cfg.Stats or on a terminal, the resource use on Stderr.
func (s *session) run(ctx context.Context, loads []link.TableLoad, cfg Config, name string, out dbt3.Output) error {
	cl := s.cl
	var total int64
	for _, l := range loads {
		total += l.EstimatedRows
	}
	opts := link.LoadOptions{Workers: cfg.Workers}
	bar := out.ProgressBar(total, fmt.Sprintf("loading into %d primproc(s)", len(cl)), "rows")
	if bar != nil {
		opts.Progress = func(n int64) { _ = bar.Add64(n) }
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	pm0, _ := cl.Stats(cctx)
	start := time.Now()
	results, err := cl.Load(ctx, loads, opts)
	wall := time.Since(start)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	for _, r := range results {
		fmt.Fprintf(out.Stdout, "%-9s %10d rows %4d segments  %.2fs\n", r.Table, r.Rows, r.Segments(), r.Elapsed().Seconds())
	}
	if cfg.Stats || out.StderrTerminal {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		pm1, _ := cl.Stats(sctx)
		fmt.Fprintf(out.Stderr, "%s: %s\n", name, dbt3.UsageLine(wall))
		for i := range pm1 {
			if i >= len(pm0) || pm0[i] == nil || pm1[i] == nil {
				continue
			}
			d := pm1[i].Usage().Sub(pm0[i].Usage())
			fmt.Fprintf(out.Stderr, "primproc %s: user %.2fs sys %.2fs ctxsw %d voluntary %d involuntary rss %d MiB\n",
				cl[i].Peer(), d.User.Seconds(), d.Sys.Seconds(), d.Voluntary, d.Involuntary, pm1[i].RSSBytes>>20)
		}
	}
	return nil
}

// tableNames validates Config.Tables.
func tableNames(list []string) ([]string, error) {
	if list == nil {
		return nil, nil
	}
	var out []string
	for _, t := range list {
		t = strings.ToLower(strings.TrimSpace(t))
		if _, ok := tpch.LookupTable(t); !ok {
			return nil, dbt3.Usagef("--tables: unknown table %q (want some of %s)", t, strings.Join(tpch.TableNames(), ","))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// loadPlan decides how tables are cut into dealt chunks.
type loadPlan struct {
	chunkRows int64 // target rows per chunk
	minShare  int64 // a table of at least primprocs·minShare rows is spread over all primprocs
	primprocs int
}

// chunks is the number of chunks for a table of rows rows.
func (p loadPlan) chunks(rows int64) int {
	n := (rows + p.chunkRows - 1) / p.chunkRows
	if n < int64(p.primprocs) && rows >= int64(p.primprocs)*p.minShare {
		n = int64(p.primprocs)
	}
	return int(max(n, 1))
}

// generated loads a table from the generator: chunk k is dbgen's chunk k+1 of n.
func (p loadPlan) generated(sc tpch.Scale, name string) link.TableLoad {
	def, _ := tpch.LookupTable(name)
	rows, _ := sc.EstimatedRows(name)
	units, _ := sc.Units(name)
	n := min(p.chunks(rows), int(max(units, 1)))
	if name == "nation" || name == "region" {
		n = 1 // never divided
	}
	return link.TableLoad{Table: name, Schema: def.ArrowSchema(), Chunks: n, EstimatedRows: rows,
		Open: func(k int) (link.ChunkReader, error) {
			return tpch.NewGenerator(sc, name, k+1, n)
		}}
}

var tableFile = regexp.MustCompile(`^([a-z]+)(?:\.tbl(?:\.(\d+))?|(?:\.(\d+))?\.parquet)$`)

// files loads the tables found in dir (only those named, if any).
func (p loadPlan) files(dir string, names []string) ([]link.TableLoad, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, dbt3.Usagef("--from: %v", err)
	}
	type found struct {
		path string
		part int
	}
	byTable := map[string][]found{}
	for _, e := range ents {
		m := tableFile.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		if _, ok := tpch.LookupTable(m[1]); !ok {
			continue
		}
		part, _ := strconv.Atoi(m[2] + m[3])
		byTable[m[1]] = append(byTable[m[1]], found{filepath.Join(dir, e.Name()), part})
	}
	if names == nil {
		for _, t := range tpch.TableNames() {
			if byTable[t] != nil {
				names = append(names, t)
			}
		}
		if names == nil {
			return nil, dbt3.Usagef("--from %s: no TPC-H table files (name.tbl[.K] or name[.K].parquet)", dir)
		}
	}
	var out []link.TableLoad
	for _, name := range names {
		fs := byTable[name]
		if len(fs) == 0 {
			return nil, dbt3.Usagef("--from %s: no file for table %s", dir, name)
		}
		sort.Slice(fs, func(i, j int) bool { return fs[i].part < fs[j].part })
		parquet := strings.HasSuffix(fs[0].path, ".parquet")
		var paths []string
		for _, f := range fs {
			if strings.HasSuffix(f.path, ".parquet") != parquet {
				return nil, dbt3.Usagef("--from %s: table %s has both .tbl and .parquet files", dir, name)
			}
			paths = append(paths, f.path)
		}
		var l link.TableLoad
		if parquet {
			l, err = p.parquetTable(name, paths)
		} else {
			l, err = p.tblTable(name, paths)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}
