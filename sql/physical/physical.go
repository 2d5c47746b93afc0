// Package physical owns colink's physical plans: it cuts an optimised logical plan (package
// plan, after package opt's rules) into fragments that every primproc runs next to its data
// and the operators exemgr runs itself, and it executes such a plan.
//
// # Fragments and exemgr's operators
//
// A fragment (exec.Fragment) is a scan of one table — with zone-map predicates derived from
// the pushed-down range and equality filters — followed by steps: filters, projections,
// probes of hash joins whose build sides are broadcast with the fragment (PM joins), and at
// most one partial aggregate, partial top-N or limit. Its rows reach exemgr through a Gather,
// one stream per primproc. Everything else runs in exemgr on exec's operators: the final
// phase of aggregations, joins of two large inputs (UM joins), sorts, top-N, limits,
// DISTINCT, and the glue of subqueries:
//
//   - an uncorrelated scalar subquery (and any join with a side that yields exactly one row,
//     such as an aggregate without GROUP BY) becomes a parameter: exemgr computes its row
//     first and its values enter the other side's expressions as constants, so that a
//     condition like Q22's c_acctbal > (select avg(…)) filters inside the fragment; where
//     the subquery's SUM, MIN or MAX is over the very rows that the other side groups
//     (Q11's HAVING), it is computed from the groups, which exemgr keeps for both readers,
//     so the grouped rows are scanned and aggregated once;
//   - a semi, anti or left join that builds its preserved (left) side runs as a match join:
//     the build rows carry a row number, the primprocs report which row numbers found a
//     match (or the matching pairs, for a left join), and exemgr emits the build rows that
//     matched or did not;
//   - a mark join (IN / EXISTS under OR or NOT IN with NULLs) probes like any other.
//
// A build side is computed by exemgr first — it is a plan of its own, usually a Gather of
// another fragment — and shipped with the fragment that probes it.
//
// # Running
//
// Plan.Execute runs a plan with a Runner, the one thing that knows where the primprocs are:
// exemgr's runner sends fragments over the link; tests run them in process over local
// stores (package enginetest). Result streams the rows and reports QueryStats:
// what came back from the primprocs, what was broadcast to them, row groups eliminated,
// and each fragment's per-primproc statistics. For one query:
//
//	q, err := planner.Plan(ctx, env, stmt)                      // package sql
//	p, err := physical.Build(q, physical.Options{Catalog: cat})
//	fmt.Print(p.Explain())                                      // EXPLAIN
//	res, err := p.Execute(ctx, runner, physical.ExecOptions{QueryMemory: limit})
//	defer res.Close()
//	for rec, err := res.Next(ctx); rec != nil; rec, err = res.Next(ctx) { … rec.Release() }
//	stats := res.Stats()                                        // SHOW QUERY STATS
//
// # EXPLAIN
//
// Plan.Explain prints the plan as a tree whose every line says where it runs (exemgr or
// primproc); a Gather's fragment is printed under it, and a PM join's broadcast build side
// under the join step that probes it.
//
// A Plan is built per query and runs once at a time (running sets its parameters' values).
package physical

import (
	"context"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/expr"
	"github.com/colinkdb/colink/exec/vec"
)

// Stream is one primproc's output of a fragment.
type Stream interface {
	exec.RecordStream
	// Stats is the primproc's report on the fragment; complete once Next has returned nil.
	// It is called before Close.
	Stats() exec.FragmentStats
	// Received is what arrived of the output: rows, batches and bytes, counted once, by
	// whatever carried them (the link, for a remote primproc).
	Received() (rows, batches, bytes int64)
	// Close stops the fragment (if it is still running) and releases the stream.
	Close() error
}

// Runner runs fragments on the primprocs.
type Runner interface {
	// Run starts frag on every primproc, shipping builds (one list of records per
	// frag.Builds entry; the caller keeps them valid until the streams are closed), and
	// returns one stream per primproc. Each primproc scans the segments of the table it owns.
	Run(ctx context.Context, frag *exec.Fragment, builds [][]arrow.RecordBatch) ([]Stream, error)
}

// Plan is a query's physical plan.
type Plan struct {
	// Root produces the result rows, in the columns of Schema.
	Root Node
	// Schema names the result columns (the query's names) with their Arrow types and, in
	// field metadata colink.sql_type, their SQL types.
	Schema *arrow.Schema
	// Pushdown is the level the plan was cut at (Options.Pushdown).
	Pushdown Pushdown

	params     []*paramGroup
	fragments  []*Fragment
	broadcasts []*Broadcast
}

// Fragments lists the plan's fragments, numbered from 1 in the order they were cut.
func (p *Plan) Fragments() []*Fragment { return p.fragments }

// Node is an operator exemgr runs.
type Node interface {
	// Types is the node's output column types.
	Types() []vec.Type
	// label is the node's line in EXPLAIN.
	label() string
	// inputs are the nodes printed under it.
	inputs() []Node
	// open returns the exec operator producing the node's rows for one run.
	open(r *run) (exec.Operator, error)
}

// Fragment is the work every primproc runs for one Gather.
type Fragment struct {
	// ID numbers the fragment within its plan (1, 2, …).
	ID int
	// Exec is what is sent to the primprocs.
	Exec exec.Fragment
	// Builds are the build sides, one per Exec.Builds entry.
	Builds []*Broadcast

	scanLabel string
	steps     []stepInfo // one per Exec.Steps entry
}

// stepInfo is how a fragment step prints, and which broadcast a join step probes.
type stepInfo struct {
	label string
	build int // index into Builds for a join step, else -1
}

// Broadcast is a build side computed by exemgr and shipped to the primprocs with a
// fragment (or hashed by exemgr for a UM join).
type Broadcast struct {
	// ID numbers the broadcast within its plan.
	ID int
	// Input computes the rows.
	Input Node
	// RowID appends a BIGINT column numbering the rows from 0: the match joins' row numbers.
	RowID bool
	// uniqueKeys, if not nil, are columns that must not repeat (a scalar subquery's
	// correlation keys: a second row for a key is MySQL's error 1242).
	uniqueKeys []int
	types      []vec.Type
}

// Types is the broadcast records' column types (with the row number, if any).
func (b *Broadcast) Types() []vec.Type { return b.types }

// paramGroup is a subplan that yields at most one row, whose values are constants in
// other expressions. single: more than one row is error 1242, none gives NULLs; otherwise
// the subplan always yields exactly one row (an aggregate without GROUP BY).
type paramGroup struct {
	id     int
	node   Node
	slots  []*expr.Expr // per output column: the shared constant node
	names  []string
	single bool
}

// QueryStats describes one run of a plan.
type QueryStats struct {
	Elapsed time.Duration
	// Rows, batches and bytes that arrived from the primprocs (fragment outputs).
	RowsReceived, BatchesReceived, BytesReceived int64
	// BytesBroadcast counts build-side bytes shipped, once per primproc.
	BytesBroadcast int64
	// FragmentsRun counts fragment runs (a fragment runs once per Gather opened).
	FragmentsRun int
	// Primprocs totals every primproc's fragment statistics (row groups, cache, CPU).
	Primprocs exec.FragmentStats
	// Fragments lists each fragment run.
	Fragments []FragmentRun
	// PeakMemory is the most memory exemgr's operators held at once.
	PeakMemory int64
}

// FragmentRun is one run of a fragment.
type FragmentRun struct {
	Fragment int
	Table    string
	// Streams holds each primproc's report.
	Streams []exec.FragmentStats
	// What arrived from all primprocs.
	RowsReceived, BatchesReceived, BytesReceived int64
	BytesBroadcast                               int64
}

// statsCollector gathers a run's statistics from concurrent operators.
type statsCollector struct {
	mu sync.Mutex
	s  QueryStats
}

func (c *statsCollector) addFragment(fr FragmentRun) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.s.FragmentsRun++
	c.s.RowsReceived += fr.RowsReceived
	c.s.BatchesReceived += fr.BatchesReceived
	c.s.BytesReceived += fr.BytesReceived
	c.s.BytesBroadcast += fr.BytesBroadcast
	for _, st := range fr.Streams {
		c.s.Primprocs.Add(st)
	}
	c.s.Fragments = append(c.s.Fragments, fr)
}

func (c *statsCollector) snapshot() QueryStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.s
	s.Fragments = append([]FragmentRun(nil), c.s.Fragments...)
	return s
}
