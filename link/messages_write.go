package link

import "time"

// Methods of the refresh functions: writes in two phases, their outcomes, and snapshot pins.
const (
	MethodWrite   = "write"
	MethodResolve = "resolve"
	MethodPin     = "pin"
	MethodUnpin   = "unpin"
)

// Write operations.
const (
	OpInsert = "insert" // the upload holds rows of the table
	OpDelete = "delete" // the upload holds row IDs (one BIGINT column) of rows to delete
)

// CodeConflict is the ERROR code of a write that collided with a concurrent change: its rows
// were compacted away or its table replaced since the statement read them. Running the
// statement again is the remedy.
const CodeConflict = "conflict"

// CodeNotDurable is the ERROR code of a commit (of a write, or of a prepared transaction)
// that took effect — its rows are visible — but whose final fsync of the data directory
// failed, so a crash may still undo it. It is not a plain failure: running the statement
// again would apply it twice.
const CodeNotDurable = "not_durable"

// RowIDColumn is the row ID column's name: in a fragment's scan (storage's pseudo column)
// and in a delete's upload.
const RowIDColumn = "_rowid"

// WriteArgs are the arguments of write: one statement's share of rows to insert into, or
// delete from, one table on this primproc.
type WriteArgs struct {
	Table string `msgpack:"table"`
	Op    string `msgpack:"op"` // OpInsert or OpDelete
	// Txn names the distributed transaction (1 to 128 of A-Z a-z 0-9 . _ : -). Required
	// unless the client's END commits at once.
	Txn string `msgpack:"txn,omitempty"`
	// Member is the tag this primproc's row IDs carry (its position in the client's cluster,
	// as passed in FragmentArgs.Member); a delete checks every uploaded ID against it.
	Member int `msgpack:"member,omitempty"`
}

// WriteClientEnd is the client's END on a write stream: what to do with the uploaded rows.
type WriteClientEnd struct {
	// Rows, if set, must equal the rows uploaded.
	Rows *int64 `msgpack:"rows,omitempty"`
	// Commit commits at once (the statement touches only this primproc). Otherwise the
	// write is prepared under WriteArgs.Txn and waits for resolve.
	Commit bool `msgpack:"commit,omitempty"`
	// Decider is the store ID of the primproc whose commit decides the transaction's
	// outcome; it is recorded with the prepared transaction for recovery.
	Decider string `msgpack:"decider,omitempty"`
}

// Transaction states, as resolve and pin report them.
const (
	TxnPrepared  = "prepared"
	TxnCommitted = "committed"
	TxnAborted   = "aborted"
	TxnUnknown   = "unknown"
	// TxnInDoubt: the outcome is decided on this primproc but not yet durable there (its
	// directory fsync failed), so a crash may bring the transaction back as prepared. A
	// status resolve does not answer it: it fsyncs again first, and fails with
	// CodeNotDurable if that fails. A client that gets it anyway treats the transaction as
	// unsettled.
	TxnInDoubt = "in_doubt"
)

// WriteEnd is the END payload of write.
type WriteEnd struct {
	Table string `msgpack:"table"`
	Op    string `msgpack:"op"`
	Txn   string `msgpack:"txn,omitempty"`
	State string `msgpack:"state"` // TxnPrepared or TxnCommitted
	Rows  int64  `msgpack:"rows"`  // rows (or row IDs) received
	// Affected counts rows inserted, or rows deleted that were live.
	Affected  int64            `msgpack:"affected"`
	Version   uint64           `msgpack:"version"` // catalog version that prepared or committed it
	ElapsedNs int64            `msgpack:"elapsed_ns"`
	CommitNs  int64            `msgpack:"commit_ns"` // prepare or commit (fsyncs, catalog)
	Rusage    map[string]int64 `msgpack:"rusage"`
}

// Elapsed returns ElapsedNs as a duration.
func (e *WriteEnd) Elapsed() time.Duration { return time.Duration(e.ElapsedNs) }

// Resolve actions.
const (
	ResolveCommit = "commit"
	ResolveAbort  = "abort"
	ResolveStatus = "status"
)

// ResolveArgs are the arguments of resolve: apply a prepared transaction's outcome, or ask
// what the primproc knows of it.
type ResolveArgs struct {
	Txn    string `msgpack:"txn"`
	Action string `msgpack:"action"` // ResolveCommit, ResolveAbort or ResolveStatus
}

// ResolveEnd is the END payload of resolve.
type ResolveEnd struct {
	Txn     string `msgpack:"txn"`
	State   string `msgpack:"state"` // after the action: TxnCommitted, TxnAborted, TxnPrepared, TxnUnknown (or TxnInDoubt)
	Version uint64 `msgpack:"version"`
}

// PinArgs are the arguments of pin.
type PinArgs struct {
	// Query optionally names the query in primproc's logs.
	Query string `msgpack:"query,omitempty"`
}

// PinEnd is the END payload of pin: a snapshot held for the client until unpin (or until
// it has gone unused for the primproc's pin TTL).
type PinEnd struct {
	Pin     uint64 `msgpack:"pin"`
	Version uint64 `msgpack:"version"`
	StoreID string `msgpack:"store_id"`
	// Prepared lists the transactions prepared here and waiting for their outcome.
	Prepared []PreparedTxn `msgpack:"prepared,omitempty"`
}

// PreparedTxn is a transaction waiting for its outcome.
type PreparedTxn struct {
	Txn     string   `msgpack:"txn"`
	Decider string   `msgpack:"decider,omitempty"`
	Tables  []string `msgpack:"tables"`
}

// UnpinArgs are the arguments of unpin.
type UnpinArgs struct {
	Pins []uint64 `msgpack:"pins"`
}

// RowIDMember returns the member tag of a row ID (storage.MakeRowID packs it into bits 55
// to 62): the position, in the cluster that ran the scan, of the primproc the row is on.
func RowIDMember(id int64) int { return int(uint64(id) >> 55 & 0xff) }
