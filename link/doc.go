// Package link owns the contract between colink's two daemons, below them both: the names
// of primproc's methods (load, catalog, fragment, write, resolve, pin, unpin, dropcache,
// stats), their msgpack argument and END schemas, the fragment envelope and the encoding of
// a fragment's join build sides, the conversion of a table schema to and from its Arrow IPC
// form, and the client side of every method: loads dealt across the primprocs, catalogs
// merged into the system's, fragments, writes and the two-phase commit of a write that
// spans several primprocs. primproc serves these messages; exemgr, dbt3 and ipcbench are
// clients. It imports exec (fragments, statistics), ipc (the transport) and storage's
// sketches, never a daemon.
//
// A Client wraps one primproc's *ipc.Client. Errors name the primproc. A query error the
// primproc reports with a MySQL code (arithmetic out of range, the query memory limit) comes
// back as an *vec.Error wrapped with the peer's name, so errors.As and
// errors.Is(err, exec.ErrMemoryLimit) work as they would in process.
//
// The protocol is specified in PROTOCOL.md beside this file; the names below follow it.
// Every map key is snake_case; unknown keys are ignored, so fields can be added.
package link
