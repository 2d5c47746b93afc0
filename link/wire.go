package link

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/colinkdb/colink/exec"
	"github.com/colinkdb/colink/exec/vec"
	"github.com/colinkdb/colink/internal/rusage"
	"github.com/colinkdb/colink/ipc"
)

// Method names.
const (
	MethodLoad      = "load"
	MethodCatalog   = "catalog"
	MethodFragment  = "fragment"
	MethodDropCache = "dropcache"
	MethodStats     = "stats"
	MethodUsage     = "usage"
)

// Load modes.
const (
	ModeReplace = "replace" // the table's contents and schema become the uploaded rows
	ModeAppend  = "append"  // the uploaded rows are added as new segments
	// ModeCreate is a replace that fails if the table exists (CREATE TABLE: declared
	// columns, usually no rows).
	ModeCreate = "create"
	// ModeDrop removes the table (DROP TABLE); it takes no rows, and does nothing where the
	// table does not exist.
	ModeDrop = "drop"
)

// LoadArgs are the arguments of load. The client then uploads the rows as Arrow batches and
// ends its half with END (a LoadClientEnd, or {}); primproc commits when it sees that END.
type LoadArgs struct {
	// Table names the table (letters, digits, _ and $; at most 64).
	Table string `msgpack:"table"`
	// Mode is ModeReplace (the default), ModeAppend, ModeCreate or ModeDrop.
	Mode string `msgpack:"mode,omitempty"`
	// Columns optionally declares the table's columns by SQL type. Without it a replace takes
	// the uploaded stream's Arrow schema as the table's, and an append the existing table's.
	// Either way every uploaded batch must match the table's column names and types.
	Columns []ColumnDef `msgpack:"columns,omitempty"`
	// ClusterBy optionally names columns to sort each segment's rows by (ascending, in
	// order), so that zone maps on them become selective. Sorting holds one segment of
	// rows in memory per load.
	ClusterBy []string `msgpack:"cluster_by,omitempty"`
}

// ColumnDef declares a column by its SQL type: int, bigint, decimal(p,s) with p <= 18,
// date, char(n), varchar(n), double, boolean.
type ColumnDef struct {
	Name     string `msgpack:"name"`
	SQLType  string `msgpack:"sql_type"`
	Nullable bool   `msgpack:"nullable,omitempty"`
	// Default is the column's DEFAULT as vec.DefaultKey records it; nil: none.
	Default *string `msgpack:"default,omitempty"`
}

// LoadClientEnd is the optional payload of the client's END on a load stream. When Rows is
// set, primproc checks it against the rows it received and aborts the load on a mismatch.
type LoadClientEnd struct {
	Rows *int64 `msgpack:"rows,omitempty"`
}

// LoadEnd is the END payload of load, sent after the commit.
type LoadEnd struct {
	Table     string `msgpack:"table"`
	Mode      string `msgpack:"mode"`
	Rows      int64  `msgpack:"rows"`       // rows committed by this load
	Batches   int64  `msgpack:"batches"`    // batches received
	Segments  int    `msgpack:"segments"`   // segment files written
	RowGroups int    `msgpack:"row_groups"` // row groups written
	Bytes     int64  `msgpack:"bytes"`      // segment file bytes written
	BytesIn   uint64 `msgpack:"bytes_in"`   // link bytes received on the stream
	Version   uint64 `msgpack:"version"`    // catalog version the commit made
	ElapsedNs int64  `msgpack:"elapsed_ns"` // from the request to the commit
	SortNs    int64  `msgpack:"sort_ns"`    // spent clustering rows (ClusterBy)
	CommitNs  int64  `msgpack:"commit_ns"`  // spent in the final commit (fsyncs, catalog)
	// Rusage is the primproc process's resource use during the load (user_us, sys_us,
	// nvcsw, nivcsw; rusage.Usage.Map's keys). It is process-wide: concurrent work counts.
	Rusage map[string]int64 `msgpack:"rusage"`
}

// Elapsed returns ElapsedNs as a duration.
func (e *LoadEnd) Elapsed() time.Duration { return time.Duration(e.ElapsedNs) }

// CatalogArgs are the arguments of catalog.
type CatalogArgs struct {
	// Tables limits the reply to these tables (an unknown name is an error); empty: all.
	Tables []string `msgpack:"tables,omitempty"`
}

// CatalogEnd is the END payload of catalog: one primproc's share of every table, from one
// consistent catalog version. A client builds its whole-system catalog as the union over
// all primprocs: row counts, segments and NULL counts add up, ranges widen, distinct-value
// sketches merge.
type CatalogEnd struct {
	Name    string  `msgpack:"name"`     // the primproc's name
	Version uint64  `msgpack:"version"`  // catalog version
	StoreID string  `msgpack:"store_id"` // the store's permanent identity
	Layout  Layout  `msgpack:"layout"`
	Tables  []Table `msgpack:"tables"` // sorted by name
}

// Layout is how a primproc cuts newly loaded tables: loaders deal rows to primprocs in
// chunks of about SegmentRows rows, so that every primproc gets whole segments.
type Layout struct {
	RowGroupRows int    `msgpack:"row_group_rows"`
	SegmentRows  int    `msgpack:"segment_rows"`
	Compression  string `msgpack:"compression"`
}

// Table is one table in a Catalog.
type Table struct {
	Name string `msgpack:"name"`
	// Schema is the table's Arrow schema in the Arrow IPC stream format (a schema message
	// and the end-of-stream marker); fields carry colink.sql_type metadata. See
	// DecodeSchema.
	Schema    []byte   `msgpack:"schema"`
	Columns   []Column `msgpack:"columns"`
	Rows      int64    `msgpack:"rows"` // live rows (deleted ones excluded)
	Deleted   int64    `msgpack:"deleted"`
	Segments  int      `msgpack:"segments"`
	RowGroups int      `msgpack:"row_groups"`
	Bytes     int64    `msgpack:"bytes"` // segment file bytes
}

// Column is one column of a Table with the summary of its zone maps.
type Column struct {
	Name     string   `msgpack:"name"`
	SQLType  string   `msgpack:"sql_type"` // from colink.sql_type, or derived from Type
	Type     vec.Type `msgpack:"type"`     // the engine's type
	Nullable bool     `msgpack:"nullable"`
	// Nulls counts NULLs over all stored rows; -1 if unknown.
	Nulls int64 `msgpack:"nulls"`
	// Min and Max bound the column's stored values (deleted rows included), when known.
	Min *vec.Datum `msgpack:"min,omitempty"`
	Max *vec.Datum `msgpack:"max,omitempty"`
	// Distinct estimates the number of distinct non-NULL values among the stored rows
	// (deleted rows included) from NDVSketch; 0 when unknown.
	Distinct float64 `msgpack:"distinct,omitempty"`
	// NDVSketch is the column's distinct-value sketch merged over the primproc's segments
	// (package storage/ndv's encoding, at most about 2 KiB; exact up to 128 values), so
	// that a client merges the shares of several primprocs without counting a value twice;
	// empty when some segment has none (written before sketches were kept).
	NDVSketch []byte `msgpack:"ndv_sketch,omitempty"`
}

// FragmentArgs are the arguments of fragment: an exec.Fragment (its keys inline: scan,
// builds, steps, names) plus optional execution settings.
type FragmentArgs struct {
	exec.Fragment `msgpack:",inline"`
	// Threads caps the workers (0: the primproc's --threads).
	Threads int `msgpack:"threads,omitempty"`
	// MemoryLimit lowers the query's memory bound below the primproc's --query-memory (0:
	// the primproc's bound).
	MemoryLimit int64 `msgpack:"memory_limit,omitempty"`
	// Query optionally identifies the query in primproc's logs.
	Query string `msgpack:"query,omitempty"`
	// Pin, if not 0, runs the fragment on the snapshot a pin call returned, so that every
	// fragment of a query reads the same catalog version.
	Pin uint64 `msgpack:"pin,omitempty"`
	// Member is the tag of the row IDs a scan of RowIDColumn produces: the primproc's
	// position in the client's cluster (0 to 255).
	Member int `msgpack:"member,omitempty"`
}

// FragmentEnd is the END payload of fragment.
type FragmentEnd struct {
	// Stats are the fragment's counters: rows, batches and bytes scanned and produced,
	// row groups in the scanned segments and eliminated by zone maps, column chunks and bytes
	// from the cache and from disk, the workers' CPU time, wall time and peak query memory.
	Stats exec.FragmentStats `msgpack:"stats"`
	// Link counts the stream's traffic on the primproc's side.
	Link FragmentLink `msgpack:"link"`
	// Version is the catalog version the fragment read.
	Version uint64 `msgpack:"version"`
	// Rusage is the primproc process's resource use while the fragment ran (user_us,
	// sys_us, nvcsw, nivcsw). It is process-wide: concurrent queries count too.
	Rusage map[string]int64 `msgpack:"rusage"`
}

// FragmentLink counts a fragment stream's traffic, as the primproc saw it.
type FragmentLink struct {
	BuildRows     int64  `msgpack:"build_rows"`      // build-side rows received
	BuildBatches  int64  `msgpack:"build_batches"`   // build-side records received
	BuildBytes    uint64 `msgpack:"build_bytes"`     // link bytes received (frames included)
	BatchesSent   uint64 `msgpack:"batches_sent"`    // output batches
	BytesSent     uint64 `msgpack:"bytes_sent"`      // link bytes sent before the END (frames included)
	CreditStallNs int64  `msgpack:"credit_stall_ns"` // time spent waiting for the client's credit
}

// DropCacheArgs are the arguments of dropcache.
type DropCacheArgs struct {
	// PageCache also asks the kernel to drop the segment files' cached pages
	// (posix_fadvise DONTNEED), so the next reads come from the device.
	PageCache bool `msgpack:"page_cache,omitempty"`
}

// DropCacheEnd is the END payload of dropcache.
type DropCacheEnd struct {
	Entries   int   `msgpack:"entries"` // cached columns dropped
	Bytes     int64 `msgpack:"bytes"`   // decoded bytes dropped
	PageCache bool  `msgpack:"page_cache"`
}

// Stats is the END payload of stats.
type Stats struct {
	PID        int              `msgpack:"pid" json:"pid"`
	Name       string           `msgpack:"name" json:"name"`
	Uptime     time.Duration    `msgpack:"uptime_ns" json:"uptime_ns"`
	Goroutines int              `msgpack:"goroutines" json:"goroutines"`
	Threads    int              `msgpack:"threads" json:"threads"`           // --threads
	QueryMem   int64            `msgpack:"query_memory" json:"query_memory"` // --query-memory (0: unbounded)
	RSSBytes   int64            `msgpack:"rss_bytes" json:"rss_bytes"`       // resident set now (/proc/self/statm)
	HeapBytes  uint64           `msgpack:"heap_bytes" json:"heap_bytes"`     // Go heap in use
	Rusage     map[string]int64 `msgpack:"rusage" json:"rusage"`             // rusage.Usage.Map
	Link       ipc.ServerStats  `msgpack:"link" json:"link"`
	DataDir    string           `msgpack:"data_dir" json:"data_dir"`
	Version    uint64           `msgpack:"version" json:"version"` // catalog version
	Tables     int              `msgpack:"tables" json:"tables"`
	Prepared   int              `msgpack:"prepared" json:"prepared"`       // transactions waiting for their outcome
	Pins       int              `msgpack:"pins" json:"pins"`               // snapshots pinned for queries
	Compact    int64            `msgpack:"compactions" json:"compactions"` // compactions since start
	Cache      CacheStats       `msgpack:"cache" json:"cache"`
	Memory     MemoryStats      `msgpack:"memory" json:"memory"`
	// Methods counts requests per method since start.
	Methods map[string]MethodCounts `msgpack:"methods" json:"methods"`
}

// Usage returns the Rusage map as a rusage.Usage.
func (s *Stats) Usage() rusage.Usage { return rusage.FromMap(s.Rusage) }

// Usage is the END of usage: a primproc's process counters and catalog version now, what
// exemgr takes before and after every statement for its CPU deltas. It is answered inline
// and small to decode: stats, which also carries every connection's and method's counters,
// cost both daemons more CPU than a small query's fragment, twice a statement.
type Usage struct {
	PID      int              `msgpack:"pid"`
	Version  uint64           `msgpack:"version"`   // catalog version
	Rusage   map[string]int64 `msgpack:"rusage"`    // rusage.Usage.Map, as in Stats
	RSSBytes int64            `msgpack:"rss_bytes"` // resident set now (/proc/self/statm)
	Memory   MemoryStats      `msgpack:"memory"`
}

// CacheStats are the column cache's counters (storage.CacheStats on the wire).
type CacheStats struct {
	Capacity       int64 `msgpack:"capacity" json:"capacity"`
	Used           int64 `msgpack:"used" json:"used"`
	Entries        int   `msgpack:"entries" json:"entries"`
	Hits           int64 `msgpack:"hits" json:"hits"`
	Misses         int64 `msgpack:"misses" json:"misses"`
	Evictions      int64 `msgpack:"evictions" json:"evictions"`
	BytesFromCache int64 `msgpack:"bytes_from_cache" json:"bytes_from_cache"`
	BytesDecoded   int64 `msgpack:"bytes_decoded" json:"bytes_decoded"`
	BytesFromDisk  int64 `msgpack:"bytes_from_disk" json:"bytes_from_disk"`
}

// MemoryStats is a daemon's memory against its budgets, in bytes.
type MemoryStats struct {
	// QueryUsed and QueryLimit: all queries' charges now, and --query-memory-total (0:
	// unbounded).
	QueryUsed  int64 `msgpack:"query_used" json:"query_used"`
	QueryLimit int64 `msgpack:"query_limit" json:"query_limit"`
	// OffHeap is the memory mapped outside the Go heap (the decode pool: the cached
	// columns, arrays scans hold, idle buffers), OffHeapInUse the part not idle.
	OffHeap      int64 `msgpack:"off_heap" json:"off_heap"`
	OffHeapInUse int64 `msgpack:"off_heap_in_use" json:"off_heap_in_use"`
	// PoolIdle is the fragments' recycling pool's idle bytes.
	PoolIdle int64 `msgpack:"pool_idle" json:"pool_idle"`
	// Heap is the Go heap's live objects, HeapHeld what the runtime holds for its heap
	// (spans in use and not yet returned to the OS), SoftLimit the runtime's soft limit.
	Heap      int64 `msgpack:"heap" json:"heap"`
	HeapHeld  int64 `msgpack:"heap_held" json:"heap_held"`
	SoftLimit int64 `msgpack:"soft_limit" json:"soft_limit"`
}

// MethodCounts count one method's requests.
type MethodCounts struct {
	Calls  int64 `msgpack:"calls" json:"calls"`   // requests started
	Errors int64 `msgpack:"errors" json:"errors"` // requests that ended with ERROR
	Active int64 `msgpack:"active" json:"active"` // requests running now
	WallNs int64 `msgpack:"wall_ns" json:"wall_ns"`
}

// CodeSQLError is the ERROR code of a query error that carries a MySQL error number and
// SQLSTATE (an *vec.Error: arithmetic out of range, the query memory limit, ...). Its
// message is "<number> <sqlstate> <text>"; SQLError and AsSQLError convert.
const CodeSQLError = "sql_error"

// SQLError returns the link error for a query error.
func SQLError(e *vec.Error) error {
	return ipc.Errorf(CodeSQLError, "%d %s %s", e.Code, e.SQLState, e.Msg)
}

// AsSQLError turns a link error with CodeSQLError back into an *vec.Error (whose Err is
// exec.ErrMemoryLimit for the memory limit, so errors.Is works on the client as on the
// server). It returns nil for any other error.
func AsSQLError(err error) *vec.Error {
	var re *ipc.RemoteError
	if !errors.As(err, &re) || re.Code != CodeSQLError {
		return nil
	}
	var code int
	var state string
	rest := re.Message
	if n, _ := fmt.Sscanf(rest, "%d %s", &code, &state); n == 2 {
		rest = strings.TrimPrefix(rest, fmt.Sprintf("%d %s ", code, state))
	} else {
		code, state = vec.CodeUnknown, "HY000"
	}
	e := &vec.Error{Code: code, SQLState: state, Msg: rest}
	if code == vec.CodeOutOfResources {
		e.Err = exec.ErrMemoryLimit
	}
	return e
}
