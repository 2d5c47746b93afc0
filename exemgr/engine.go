package exemgr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/exemgr/frontend"
	"github.com/colinkdb/colink/internal/daemon"
	"github.com/colinkdb/colink/internal/textparse"
	"github.com/colinkdb/colink/ipc"
	"github.com/colinkdb/colink/link"
	"github.com/colinkdb/colink/link/twophase"
	"github.com/colinkdb/colink/sql"
	"github.com/colinkdb/colink/sql/bind"
	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/opt"
	"github.com/colinkdb/colink/sql/physical"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
	"github.com/colinkdb/colink/sql/types"
)

// EngineConfig configures the SQL engine.
type EngineConfig struct {
	// Database is the database that holds the primprocs' tables and the views.
	Database string
	// QueryMemory bounds each query's memory: exemgr's operators and broadcast build
	// sides, and (as the fragment's memory limit) each primproc's share. 0: unbounded. A
	// session may lower it with SET colink_query_memory = n.
	QueryMemory int64
	// QueryMemoryTotal bounds all queries' memory in exemgr together (0: QueryMemory;
	// negative: unbounded); a query whose charge would pass it fails with 1041.
	QueryMemoryTotal int64
	// PmMaxMemorySmallSide is the largest estimated build side, in bytes, broadcast to the
	// primprocs for a PM join (ColumnStore's PmMaxMemorySmallSide); larger ones make a UM
	// join in exemgr. 0: the planner's default.
	PmMaxMemorySmallSide int64
	// Pushdown is how much of each query the primprocs run (full, the zero value: all
	// they can; filter; scan). A session may change it with SET colink_pushdown = '…'.
	Pushdown physical.Pushdown
	// Threads is how many build sides of one fragment exemgr computes at once per query
	// (physical.ExecOptions.Threads): sibling broadcasts, each usually another fragment's
	// rows gathered from the primprocs, overlap instead of running one after the other.
	Threads int
	// PrimProcTimeout bounds how long a statement waits for a primproc without a live
	// connection before failing, and the quick calls around its work (the opening stats,
	// the catalog, its pins and unpins), so that a wait on a primproc that is frozen or
	// being redialled always has a deadline. A fragment's stream may run as long as its
	// query; the link's heartbeat bounds it instead, failing it within the heartbeat
	// timeout and an interval of its primproc falling silent.
	PrimProcTimeout time.Duration
	// SecureFilePriv is the directory under which LOAD DATA INFILE (not LOCAL) may read
	// server-side files, like MySQL's secure_file_priv; empty refuses every such file.
	SecureFilePriv string
	// DataDir is the directory of exemgr's own state: today the views (views.json), which
	// every CREATE and DROP VIEW writes durably before it is acknowledged. Empty: views
	// live in memory only and are lost when exemgr stops.
	DataDir string
	// Logger receives the engine's events; the ExeMgr's logger if nil.
	Logger *slog.Logger
}

// DefaultQueryMemory is EngineConfig.QueryMemory's default: an eighth of physical memory,
// at most 4 GiB (1 GiB if the memory size is unknown), as primproc's.
func DefaultQueryMemory() int64 {
	total := daemon.PhysicalMemory()
	if total == 0 {
		return 1 << 30
	}
	return min(total/8, 4<<30)
}

// linkStreamsBudgeted is how many streams' windows exemgr's memory plan sets aside: the
// fragments of a few concurrent queries, each with its window of batches in flight.
const linkStreamsBudgeted = 16

// MemoryPlan is exemgr's memory as its budgets: on the Go heap the queries' memory, the
// result pool, the link's receive pool and windows (of window bytes per stream; 0: the
// link's default); off it the link's shared-memory segments, if the transport maps any;
// and the stated overhead. cmd/exemgr sets the runtime's soft limit from it.
func (e *Engine) MemoryPlan(window int) daemon.MemoryPlan {
	if window <= 0 {
		window = ipc.DefaultStreamWindow
	}
	p := daemon.MemoryPlan{Overhead: daemon.DefaultOverhead, Budgets: []daemon.Budget{
		{Name: "query memory", Bytes: e.budget.Limit()},
		{Name: "result pool", Bytes: DefaultResultPool},
		{Name: "link receive pool", Bytes: ipc.DefaultPoolIdle},
		{Name: "link windows", Bytes: linkStreamsBudgeted * int64(window)},
	}}
	if shm := e.em.ShmBytes(); shm > 0 {
		p.Budgets = append(p.Budgets, daemon.Budget{Name: "shm segments", Bytes: shm, OffHeap: true})
	}
	return p
}

// DefaultResultPool bounds the idle buffers of the pool exemgr builds result records in.
const DefaultResultPool = 128 << 20

// Defaults of EngineConfig.
const (
	DefaultDatabase        = "tpch"
	DefaultPrimProcTimeout = 5 * time.Second
)

// Session variables the engine answers (SET colink_… = n, SELECT @@colink_…).
const (
	varQueryMemory = "colink_query_memory"
	varSmallSide   = "colink_pm_max_memory_small_side"
	varPushdown    = "colink_pushdown"
)

// Engine runs SQL for the MySQL front end (it implements frontend.Engine, FieldLister and
// SessionEnder) over the primprocs of an ExeMgr: one per daemon, shared by every session.
// Each statement is parsed, bound against the catalog the primprocs report, optimised, cut
// into fragments and run: the fragments on every primproc over the link, the rest in
// exemgr. Every statement except SHOW QUERY STATS records the statistics SHOW QUERY STATS
// returns next.
type Engine struct {
	em    *ExeMgr
	cl    link.Cluster
	cfg   EngineConfig
	log   *slog.Logger
	cat   *systemCatalog
	views *viewSet // the views in e.cat, and their file

	mu       sync.Mutex
	sessions map[uint32]*session // guarded by mu

	dml *dmlState // writes and snapshot pins (dml.go)

	// budget is all queries' memory, shared: each query's budget is its child. pool
	// recycles the result records' buffers across queries.
	budget *exec.Budget
	pool   *vec.Pool
	// active counts statements running (from Query until their rows end), so that an idle
	// exemgr returns its free memory to the OS.
	active atomic.Int64
	// started counts the statements begun, for the Reclaimer: it returns memory only
	// after a whole interval in which none began.
	started atomic.Int64

	bg sync.WaitGroup // background unpins, waited for by Close
}

// session is the engine's state of one client session. Only the session's goroutine uses
// it (EndSession runs after the session's last statement).
type session struct {
	parser   *sql.Parser
	userVars map[string]types.Value // @name, lower case
	// Session settings; 0 (nil) means the daemon's.
	queryMemory, smallSide int64
	pushdown               *physical.Pushdown
}

// NewEngine returns the engine of em's primprocs. With cfg.DataDir it locks the directory
// (creating it) and loads the views saved there: an unreadable or corrupt views file is an
// error naming it. A view whose query no longer binds (its table was dropped) is loaded
// all the same and fails when used, as in MySQL.
func NewEngine(em *ExeMgr, cfg EngineConfig) (*Engine, error) {
	if cfg.Database == "" {
		cfg.Database = DefaultDatabase
	}
	if cfg.PrimProcTimeout <= 0 {
		cfg.PrimProcTimeout = DefaultPrimProcTimeout
	}
	if cfg.Threads <= 0 {
		cfg.Threads = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = em.log
	}
	if cfg.QueryMemoryTotal == 0 {
		cfg.QueryMemoryTotal = cfg.QueryMemory
	}
	e := &Engine{em: em, cfg: cfg, log: cfg.Logger, sessions: map[uint32]*session{}, dml: newDMLState(),
		budget: exec.NewSharedBudget(max(cfg.QueryMemoryTotal, 0), "--query-memory-total"),
		pool:   vec.NewPool(DefaultResultPool)}
	for _, p := range em.Peers() {
		e.cl = append(e.cl, link.New(p))
	}
	e.cat = newSystemCatalog(cfg.Database, cfg.Logger)
	var (
		store  *viewStore
		loaded []*catalog.View
	)
	if cfg.DataDir != "" {
		var err error
		if store, loaded, err = openViewStore(cfg.DataDir); err != nil {
			return nil, err
		}
	}
	views, err := newViewSet(cfg.Database, e.cat.views, store, loaded)
	if err != nil {
		store.close()
		return nil, err
	}
	e.views = views
	if store != nil {
		e.log.Info("exemgr: views loaded", "file", store.path, "views", len(loaded))
	}
	return e, nil
}

// Close waits for the background unpins and releases the engine's data directory.
// Statements must have ended.
func (e *Engine) Close() error {
	e.bg.Wait()
	return e.views.store.close()
}

// Service returns the front end serving MySQL clients with this engine, as a service of
// the daemon: srv comes from frontend.Listen(cfg, e).
func (e *Engine) Service(srv *frontend.Server) Service {
	return func(ctx context.Context, _ *ExeMgr) error { return srv.Serve(ctx) }
}

// CheckDatabase implements frontend.Engine.
func (e *Engine) CheckDatabase(_ context.Context, name string) error {
	if !strings.EqualFold(name, e.cfg.Database) && !strings.EqualFold(name, bind.InfoSchema) {
		return frontend.Errorf(frontend.ErrBadDB, "Unknown database '%s'", name)
	}
	return nil
}

// EndSession implements frontend.SessionEnder.
func (e *Engine) EndSession(s *frontend.Session) {
	e.mu.Lock()
	delete(e.sessions, s.ID())
	e.mu.Unlock()
}

func (e *Engine) session(s *frontend.Session) *session {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.sessions[s.ID()]
	if st == nil {
		st = &session{parser: sql.NewParser(), userVars: map[string]types.Value{}}
		e.sessions[s.ID()] = st
	}
	return st
}

// flushCache matches ColumnStore's statement for emptying the primprocs' caches.
var flushCache = regexp.MustCompile(`(?is)^\s*select\s+calflushcache\s*\(\s*\)\s*;?\s*$`)

// Query implements frontend.Engine.
func (e *Engine) Query(ctx context.Context, s *frontend.Session, text string) (_ *frontend.Result, err error) {
	e.active.Add(1)
	e.started.Add(1)
	rowsOwnActive := false // a result with rows ends the statement when its rows end
	defer func() {
		if !rowsOwnActive {
			e.active.Add(-1)
		}
	}()
	defer e.recoverPanic(text, &err)
	ctx = exec.ContextWithLogger(ctx, e.log) // a worker panic fails this query; its stack goes to exemgr's log
	st := e.session(s)
	var stmt sql.Statement
	if !flushCache.MatchString(text) {
		var stmts []sql.Statement
		mode, _ := s.Var("sql_mode") // unset: the server's, which changes no parsing
		if err = st.parser.SetSQLMode(mode); err == nil {
			stmts, err = st.parser.Parse(text)
		}
		if err == nil && len(stmts) != 1 {
			err = sqlerr.New(sqlerr.ErParse, "colink runs one statement at a time; got %d", len(stmts))
		}
		if err == nil {
			stmt = stmts[0]
		}
		if _, ok := stmt.(*sql.ShowQueryStats); ok {
			qs, _ := s.QueryStats().(*QueryStats)
			return recordResult(queryStatsRecord(qs)), nil
		}
	}
	r := e.newRecorder(text, st)
	if err != nil {
		s.SetQueryStats(r.finish(0, nil, err))
		return nil, mysqlError(err)
	}
	res, err := e.statement(ctx, s, st, r, stmt)
	if err != nil {
		s.SetQueryStats(r.finish(0, nil, err))
		return nil, mysqlError(err)
	}
	if res == nil {
		res = &frontend.Result{}
	}
	if res.Rows == nil {
		s.SetQueryStats(r.finish(0, nil, nil))
		return res, nil
	}
	rows := &statementRows{Rows: res.Rows}
	rows.end = func(n int64, qs *physical.QueryStats, failure error) {
		s.SetQueryStats(r.finish(n, qs, failure))
		e.active.Add(-1)
	}
	res.Rows = rows
	rowsOwnActive = true
	return res, nil
}

// Reclaim returns the service that sweeps the result pool every interval and gives an
// idle exemgr's free memory back to the OS (daemon.Reclaimer).
func (e *Engine) Reclaim(interval time.Duration) Service {
	return func(ctx context.Context, em *ExeMgr) error {
		// The link's receive pool ages its buffers out on its own; what it lets go counts
		// as released too, so that it is collected and returned once idle.
		linkReleased := daemon.Released(func() int64 { return em.linkPool.Stats().Released })
		r := &daemon.Reclaimer{Busy: func() bool { return e.active.Load() > 0 }, Started: e.started.Load, Sweeps: []func() int64{e.pool.Sweep, linkReleased},
			MinFree: daemon.DefaultReclaimMinFree, Log: e.log}
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
				r.Tick()
			}
		}
	}
}

// recoverPanic turns a panic while running a statement into error 1105, so that one bad
// statement cannot take the daemon and every other session down.
func (e *Engine) recoverPanic(text string, err *error) {
	if p := recover(); p != nil {
		e.log.Error("exemgr: internal error", "panic", p, "statement", text, "stack", string(debug.Stack()))
		*err = frontend.Errorf(frontend.ErrUnknownError, "internal error in exemgr: %v (the statement was abandoned; the daemon goes on)", p)
	}
}

// env is a session as the planner sees it.
type env struct {
	e  *Engine
	s  *frontend.Session
	st *session
	// now is when the statement began: @@timestamp, the time NOW() and CURDATE() read
	// (zero outside a statement).
	now time.Time
}

func (v env) Database() string { return v.s.Database() }

// Account is the session's user@host, USER()'s and CURRENT_USER()'s (colink's accounts
// are by user name alone, so the two agree).
func (v env) Account() string { return v.s.Account() }

func (v env) SystemVariable(name string, global bool) (types.Value, bool) {
	switch strings.ToLower(name) {
	case varQueryMemory:
		if global {
			return types.IntValue(v.e.cfg.QueryMemory), true
		}
		return types.IntValue(v.e.queryMemory(v.st)), true
	case varSmallSide:
		if global || v.st.smallSide == 0 {
			return types.IntValue(v.e.smallSide(nil)), true
		}
		return types.IntValue(v.st.smallSide), true
	case varPushdown:
		if global {
			return types.StringValue(v.e.cfg.Pushdown.String()), true
		}
		return types.StringValue(v.e.pushdown(v.st).String()), true
	}
	if global {
		return types.Value{}, false
	}
	switch strings.ToLower(name) {
	case "timestamp": // MySQL's: the statement's start, in seconds since the epoch
		if !v.now.IsZero() {
			return types.FloatValue(float64(v.now.UnixMicro()) / 1e6), true
		}
	case "pseudo_thread_id": // MySQL's: the connection's id unless set
		return types.IntValue(int64(v.s.ID())), true
	}
	val, numeric, ok := v.s.SystemVar(name)
	if !ok {
		return types.Value{}, false
	}
	if n, err := strconv.ParseInt(val, 10, 64); numeric && err == nil {
		return types.IntValue(n), true
	}
	return types.StringValue(val), true
}

// Variables implements frontend.VariableSource: the engine's settings as s sees them (or
// the daemon's), for SELECT @@… and SHOW VARIABLES.
func (e *Engine) Variables(s *frontend.Session, global bool) []frontend.Variable {
	ev := env{e: e, s: s, st: e.session(s)}
	var out []frontend.Variable
	for _, name := range []string{varPushdown, varQueryMemory, varSmallSide} {
		v, _ := ev.SystemVariable(name, global)
		numeric := v.Type.Kind == types.Int64 || v.Type.Kind == types.Int32
		out = append(out, frontend.Variable{Name: name, Value: valueText(v), Numeric: numeric})
	}
	return out
}

func (v env) UserVariable(name string) (types.Value, bool) {
	val, ok := v.st.userVars[strings.ToLower(name)]
	return val, ok
}

// queryMemory is the memory bound of st's queries (the daemon's if st is nil).
func (e *Engine) queryMemory(st *session) int64 {
	if st != nil && st.queryMemory > 0 && (e.cfg.QueryMemory == 0 || st.queryMemory < e.cfg.QueryMemory) {
		return st.queryMemory
	}
	return e.cfg.QueryMemory
}

// pushdown is the pushdown level of st's queries (the daemon's if st is nil).
func (e *Engine) pushdown(st *session) physical.Pushdown {
	if st != nil && st.pushdown != nil {
		return *st.pushdown
	}
	return e.cfg.Pushdown
}

// smallSide is the PM join threshold of st's queries (the daemon's if st is nil).
func (e *Engine) smallSide(st *session) int64 {
	if st != nil && st.smallSide > 0 {
		return st.smallSide
	}
	if e.cfg.PmMaxMemorySmallSide > 0 {
		return e.cfg.PmMaxMemorySmallSide
	}
	return opt.DefaultPmMaxMemorySmallSide
}

// statement runs one parsed statement (or the cache flush, when stmt is nil).
func (e *Engine) statement(ctx context.Context, s *frontend.Session, st *session, r *recorder, stmt sql.Statement) (*frontend.Result, error) {
	ev := env{e: e, s: s, st: st, now: r.start}
	switch x := stmt.(type) {
	case *sql.Set:
		return e.set(ev, x)
	case *sql.Use:
		if err := e.CheckDatabase(ctx, x.DB); err != nil {
			return nil, err
		}
		s.SetDatabase(x.DB)
		return nil, nil
	case *sql.Kill:
		return nil, sqlerr.Unsupported("KILL here") // the front end answers KILL itself
	}
	// A query without tables (SELECT 1, a client's or a load balancer's health check)
	// needs neither the primprocs' stats nor a fresh catalog: it answers while every
	// primproc is down. Its statistics then have no primproc figures.
	if q, ok := stmt.(*sql.Query); !ok || q.ReadsTables() {
		versions, err := r.begin(ctx)
		if err != nil {
			return nil, err
		}
		// The deadline also bounds the statements waiting behind this one for the refresh.
		rctx, cancel := context.WithTimeout(ctx, e.cfg.PrimProcTimeout)
		err = e.cat.refresh(rctx, e.cl, versions)
		cancel()
		if err != nil {
			return nil, err
		}
	}
	view := e.cat.view()
	switch x := stmt.(type) {
	case nil:
		return e.flushCaches(ctx)
	case *sql.Query, *sql.Show:
		pl, _, err := e.plan(ctx, ev, view, x)
		if err != nil {
			return nil, err
		}
		pins, err := e.queryPins(ctx, pl, x.SQL())
		if err != nil {
			return nil, err
		}
		qm := e.queryMemory(st)
		res, err := pl.Execute(ctx, &linkRunner{cl: e.cl, memory: qm, query: x.SQL(), pins: pins.IDs()}, physical.ExecOptions{QueryMemory: qm, Threads: e.cfg.Threads, Shared: e.budget, Alloc: e.pool})
		if err != nil {
			e.unpin(pins)
			return nil, err
		}
		return &frontend.Result{Rows: &planRows{e: e, text: x.SQL(), ctx: ctx, res: res, pins: pins}}, nil
	case *sql.Insert, *sql.Delete, *sql.LoadData:
		return e.runDML(ctx, ev, view, x)
	case *sql.Explain:
		return e.explain(ctx, ev, view, x)
	case *sql.CreateView:
		return nil, e.createView(ev, view, x)
	case *sql.DropView:
		return e.dropView(ev, view, x)
	case *sql.CreateTable:
		return e.createTable(ctx, ev, view, x)
	case *sql.DropTable:
		return e.dropTables(ctx, ev, view, x)
	case *sql.TruncateTable:
		return e.truncateTable(ctx, ev, view, x)
	case *sql.Ignored:
		return nil, nil
	}
	return nil, sqlerr.Unsupported(fmt.Sprintf("%T statements", stmt))
}

// plan binds, optimises and cuts a statement into its physical plan.
func (e *Engine) plan(ctx context.Context, ev env, view *catView, stmt sql.Statement) (*physical.Plan, *plan.Query, error) {
	p := &sql.Planner{Catalog: view, Stats: view, Options: opt.Options{PmMaxMemorySmallSide: e.smallSide(ev.st), Primprocs: len(e.cl)}}
	q, err := p.Plan(ctx, ev, stmt)
	if err != nil {
		return nil, nil, err
	}
	pl, err := physical.Build(q, physical.Options{Catalog: view, Primprocs: len(e.cl), Pushdown: e.pushdown(ev.st)})
	if err != nil {
		return nil, nil, err
	}
	return pl, q, nil
}

// explain answers EXPLAIN: the physical plan, one line per operator, each saying where it
// runs; FORMAT=VERBOSE adds the optimised logical plan with its estimated rows.
func (e *Engine) explain(ctx context.Context, ev env, view *catView, x *sql.Explain) (*frontend.Result, error) {
	switch x.Format {
	case "", "row", "traditional", "verbose":
	default:
		return nil, sqlerr.Unsupported("EXPLAIN FORMAT=" + x.Format)
	}
	pl, q, err := e.plan(ctx, ev, view, x.Target)
	if err != nil {
		return nil, err
	}
	if x.Analyze {
		if x.Format != "" && x.Format != "row" && x.Format != "traditional" {
			return nil, sqlerr.Unsupported("EXPLAIN ANALYZE FORMAT=" + x.Format)
		}
		text, err := e.analyze(ctx, ev.st, pl, x.Target.SQL())
		if err != nil {
			return nil, err
		}
		return recordResult(stringsRecord("EXPLAIN", strings.Split(text, "\n"))), nil
	}
	lines := strings.Split(strings.TrimRight(pl.Explain(), "\n"), "\n")
	if x.Format == "verbose" {
		lines = append(lines, "", "logical plan, with estimated rows:")
		lines = append(lines, strings.Split(strings.TrimRight(plan.Format(q, plan.FormatOptions{Rows: true}), "\n"), "\n")...)
	}
	return recordResult(stringsRecord("EXPLAIN", lines)), nil
}

// analyze runs pl for EXPLAIN ANALYZE: as the query itself would run, pinned and within
// the session's memory bound, its rows read and dropped; it returns the plan with what each
// operator and fragment did.
func (e *Engine) analyze(ctx context.Context, st *session, pl *physical.Plan, text string) (string, error) {
	pins, err := e.queryPins(ctx, pl, text)
	if err != nil {
		return "", err
	}
	defer e.unpin(pins)
	qm := e.queryMemory(st)
	res, err := pl.Execute(ctx, &linkRunner{cl: e.cl, memory: qm, query: text, pins: pins.IDs()},
		physical.ExecOptions{QueryMemory: qm, Threads: e.cfg.Threads, Shared: e.budget, Alloc: e.pool, Analyze: true})
	if err != nil {
		return "", err
	}
	var rows int64
	for {
		rec, err := res.Next(ctx)
		if err != nil {
			res.Close()
			return "", err
		}
		if rec == nil {
			break
		}
		rows += rec.NumRows()
		rec.Release()
	}
	if err := res.Close(); err != nil {
		return "", err
	}
	return pl.Analysis(res) + fmt.Sprintf("\n%d rows returned (and dropped by EXPLAIN ANALYZE)", rows), nil
}

// createView checks a view and adds it to the catalog every session shares.
func (e *Engine) createView(ev env, view *catView, x *sql.CreateView) error {
	p := &sql.Planner{Catalog: view, Stats: view}
	v, replace, err := p.CreateView(ev, x)
	if err != nil {
		return err
	}
	if err := e.views.create(v, replace); err != nil {
		if errors.Is(err, errViewExists) {
			return sqlerr.New(sqlerr.ErTableExists, "Table '%s' already exists", v.Name)
		}
		return viewWriteError(err)
	}
	e.log.Debug("exemgr: view created", "view", v.DB+"."+v.Name)
	return nil
}

// dropView drops views. Like MySQL, it drops those that exist and then reports the ones
// that do not (1051), unless IF EXISTS turns that into a note. The views it drops leave the
// views file in one write; if that fails none is dropped.
func (e *Engine) dropView(ev env, view *catView, x *sql.DropView) (*frontend.Result, error) {
	type target struct {
		shown string // db.name as the statement gives it
		name  string
		ours  bool // in the engine's database
	}
	var (
		targets []target
		names   []string // the targets in the engine's database
		stop    error    // a name that cannot be dropped ends the list
	)
	for _, v := range x.Views {
		db := v.DB
		if db == "" {
			if db = ev.Database(); db == "" {
				stop = sqlerr.New(sqlerr.ErNoDBError, "No database selected")
				break
			}
		}
		if _, isTable := view.Table(db, v.Name); isTable {
			stop = sqlerr.New(sqlerr.ErWrongObject, "'%s.%s' is not VIEW", db, v.Name)
			break
		}
		targets = append(targets, target{shown: db + "." + v.Name, name: v.Name, ours: view.isDB(db)})
		if view.isDB(db) {
			names = append(names, v.Name)
		}
	}
	absent, err := e.views.drop(names)
	if err != nil {
		return nil, viewWriteError(err)
	}
	if stop != nil {
		return nil, stop
	}
	var missing []string
	for _, t := range targets {
		if !t.ours {
			missing = append(missing, t.shown)
		} else if len(absent) > 0 && absent[0] == t.name {
			missing = append(missing, t.shown)
			absent = absent[1:]
		}
	}
	return unknownTables(missing, x.IfExists)
}

// unknownTables is how a DROP ends that named tables or views that do not exist: nothing
// when none is missing, else MySQL's 1051 naming them, a note with IF EXISTS.
func unknownTables(missing []string, ifExists bool) (*frontend.Result, error) {
	if len(missing) == 0 {
		return nil, nil
	}
	msg := fmt.Sprintf("Unknown table '%s'", strings.Join(missing, ","))
	if ifExists {
		return &frontend.Result{Warnings: []frontend.Warning{{Level: "Note", Code: uint16(sqlerr.ErBadTable), Message: msg}}}, nil
	}
	return nil, sqlerr.New(sqlerr.ErBadTable, "%s", msg)
}

// set runs the SET assignments the front end leaves to the engine: user variables, the
// engine's session variables, and the front end's variables set to an expression (SET
// sql_mode = concat(@@sql_mode, …), as MariaDB Connector/J sends at connect), whose values
// the engine evaluates and the front end checks and records.
func (e *Engine) set(ev env, x *sql.Set) (*frontend.Result, error) {
	p := &sql.Planner{Catalog: e.cat.view(), Stats: e.cat.view()}
	vals, err := p.EvalSet(ev, x)
	if err != nil {
		return nil, err
	}
	var warns []frontend.Warning
	if err := e.assign(ev, vals, &warns); err != nil {
		return nil, err
	}
	if len(warns) > 0 {
		return &frontend.Result{Warnings: warns}, nil
	}
	return nil, nil
}

// assign applies SET's evaluated assignments in order, adding the front end's warnings to
// *warns.
func (e *Engine) assign(ev env, vals []sql.SetValue, warns *[]frontend.Warning) error {
	for _, v := range vals {
		switch v.Kind {
		case sql.SetUser:
			if v.Default {
				return sqlerr.New(sqlerr.ErParse, "You have an error in your SQL syntax: a user variable cannot be SET to DEFAULT")
			}
			ev.st.userVars[strings.ToLower(v.Name)] = v.Value
		case sql.SetNames:
			// The front end keeps the connection's character set; results are utf8mb4.
		case sql.SetGlobal:
			return sqlerr.Unsupported("SET GLOBAL " + v.Name)
		case sql.SetSession:
			if w, known, err := ev.s.SetSystemVar(v.Name, valueText(v.Value), v.Default, v.Value.Null && !v.Default); known {
				if err != nil {
					return err
				}
				*warns = append(*warns, w...)
				continue
			}
			if v.Name == varPushdown {
				if err := ev.st.setPushdown(v); err != nil {
					return err
				}
				continue
			}
			var dst *int64
			switch v.Name {
			case varQueryMemory:
				dst = &ev.st.queryMemory
			case varSmallSide:
				dst = &ev.st.smallSide
			default:
				return sqlerr.New(sqlerr.ErUnknownSystemVariable, "Unknown system variable '%s'", v.Name)
			}
			if v.Default {
				*dst = 0
				continue
			}
			n, ok := nonNegativeInt(v.Value)
			if !ok {
				return sqlerr.New(sqlerr.ErWrongArguments, "Variable '%s' can't be set to the value of '%s': it takes a number of bytes", v.Name, valueText(v.Value))
			}
			*dst = n
		}
	}
	return nil
}

// setPushdown sets the session's pushdown level from SET colink_pushdown = 'full' | 'filter'
// | 'scan' | DEFAULT.
func (st *session) setPushdown(v sql.SetValue) error {
	if v.Default {
		st.pushdown = nil
		return nil
	}
	if v.Value.Null || (v.Value.Type.Kind != types.Char && v.Value.Type.Kind != types.Varchar) {
		return sqlerr.New(sqlerr.ErWrongValueForVar, "Variable '%s' can't be set to the value of '%s': it takes full, filter or scan", v.Name, valueText(v.Value))
	}
	p, err := physical.ParsePushdown(v.Value.Str)
	if err != nil {
		return sqlerr.New(sqlerr.ErWrongValueForVar, "Variable '%s' can't be set to the value of '%s': it takes full, filter or scan", v.Name, valueText(v.Value))
	}
	st.pushdown = &p
	return nil
}

// nonNegativeInt reads a SET value as a byte count.
func nonNegativeInt(v types.Value) (int64, bool) {
	if v.Null {
		return 0, false
	}
	switch v.Type.Kind {
	case types.Int32, types.Int64:
		if v.Int < 0 {
			return 0, false
		}
		return v.Int, true
	case types.Decimal:
		if v.Dec == nil || v.Type.Scale != 0 || !v.Dec.IsInt64() {
			return 0, false
		}
		if v.Dec.Sign() < 0 {
			return 0, false
		}
		return v.Dec.Int64(), true
	case types.Char, types.Varchar:
		n, err := textparse.Int([]byte(v.Str), textparse.UnicodeSpace)
		if err != nil || n < 0 {
			return 0, false
		}
		return n, true
	}
	return 0, false
}

func valueText(v types.Value) string {
	switch {
	case v.Null:
		return "NULL"
	case v.Type.Kind == types.Char || v.Type.Kind == types.Varchar:
		return v.Str
	case v.Type.Kind == types.Decimal && v.Dec != nil:
		return new(big.Float).SetInt(v.Dec).String()
	case v.Type.Kind == types.Float64:
		return strconv.FormatFloat(v.Float, 'g', -1, 64)
	}
	return strconv.FormatInt(v.Int, 10)
}

// flushCaches empties every primproc's column cache and the kernel's cached pages of its
// segment files, as ColumnStore's calFlushCache() does; it returns 0 like it.
func (e *Engine) flushCaches(ctx context.Context) (*frontend.Result, error) {
	if err := e.cl.DropCache(ctx, true); err != nil {
		return nil, err
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.Append(0)
	col := b.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "calFlushCache()", Type: arrow.PrimitiveTypes.Int64}}, nil)
	return recordResult(array.NewRecordBatch(schema, []arrow.Array{col}, 1)), nil
}

// FieldList implements frontend.FieldLister (COM_FIELD_LIST, the mariadb client's tab
// completion) from the catalog as it is, without asking the primprocs.
func (e *Engine) FieldList(ctx context.Context, s *frontend.Session, table, wildcard string) ([]frontend.Column, error) {
	db := s.Database()
	if db == "" {
		return nil, frontend.Errorf(frontend.ErrNoDB, "No database selected")
	}
	view := e.cat.view()
	var fields []arrow.Field
	if t, ok := view.table(db, table); ok && t.schema != nil {
		fields = t.schema.Fields()
	} else if _, ok := view.View(db, table); ok {
		q := &sql.Query{}
		stmts, err := sql.NewParser().Parse("select * from `" + strings.ReplaceAll(table, "`", "``") + "`")
		if err != nil {
			return nil, mysqlError(err)
		}
		if q, ok = stmts[0].(*sql.Query); !ok {
			return nil, frontend.Errorf(frontend.ErrUnknownError, "cannot describe view %s", table)
		}
		pl, _, err := e.plan(ctx, env{e: e, s: s, st: e.session(s)}, view, q)
		if err != nil {
			return nil, mysqlError(err)
		}
		fields = pl.Schema.Fields()
	} else {
		return nil, frontend.Errorf(frontend.ErrNoSuchTable, "Table '%s.%s' doesn't exist", db, table)
	}
	var out []frontend.Column
	for _, f := range fields {
		if wildcard != "" && !types.Like(strings.ToLower(f.Name), strings.ToLower(wildcard), '\\') {
			continue
		}
		c, err := frontend.ColumnFromField(f)
		if err != nil {
			return nil, err
		}
		c.OrgName, c.Table, c.OrgTable, c.Database = f.Name, table, table, db
		out = append(out, c)
	}
	return out, nil
}

// planRows streams a plan's result to the front end.
type planRows struct {
	e    *Engine
	text string
	ctx  context.Context
	res  *physical.Result
	cur  arrow.RecordBatch
	pins *twophase.Pins // the query's snapshots, dropped at Close (nil: none)
}

func (p *planRows) Schema() *arrow.Schema { return p.res.Schema() }

func (p *planRows) Next() (_ arrow.RecordBatch, err error) {
	defer p.e.recoverPanic(p.text, &err)
	if p.cur != nil {
		p.cur.Release()
		p.cur = nil
	}
	rec, err := p.res.Next(p.ctx)
	if err != nil {
		return nil, mysqlError(err)
	}
	if rec == nil {
		return nil, io.EOF
	}
	p.cur = rec
	return rec, nil
}

func (p *planRows) Close() error {
	if p.cur != nil {
		p.cur.Release()
		p.cur = nil
	}
	err := p.res.Close()
	p.e.unpin(p.pins)
	p.pins = nil
	return err
}

// statementRows counts the rows a statement's result delivers and records the statement's
// statistics when the front end closes it.
type statementRows struct {
	frontend.Rows
	rows   int64
	failed error
	end    func(rows int64, qs *physical.QueryStats, failure error)
	closed bool
}

func (s *statementRows) Next() (arrow.RecordBatch, error) {
	rec, err := s.Rows.Next()
	if rec != nil {
		s.rows += rec.NumRows()
	}
	if err != nil && err != io.EOF && s.failed == nil {
		s.failed = err
	}
	return rec, err
}

func (s *statementRows) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.Rows.Close()
	var qs *physical.QueryStats
	if p, ok := s.Rows.(*planRows); ok {
		st := p.res.Stats()
		qs = &st
	}
	s.end(s.rows, qs, s.failed)
	return err
}

// recordResult is a result set of one record held in memory.
func recordResult(rec arrow.RecordBatch) *frontend.Result {
	return &frontend.Result{Rows: frontend.RecordRows(rec)}
}

// stringsRecord is a one-column result of text rows.
func stringsRecord(name string, rows []string) arrow.RecordBatch {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(rows, nil)
	col := b.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: name, Type: arrow.BinaryTypes.String}}, nil)
	return array.NewRecordBatch(schema, []arrow.Array{col}, int64(len(rows)))
}
