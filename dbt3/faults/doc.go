// Package faults owns colink's fault suite: the faults that issue 18 fixed, each a small
// value (a name, what one try does, the criterion a try must meet, and the try itself), and
// a runner that starts the real daemons from this tree's binaries (dbt3/cluster), loads
// TPC-H once, runs every fault a number of times over each transport, classifies each try
// (right answer, clear error and how long it took, unclear error, wrong answer, hang,
// unexpected death), samples the daemons' resident sizes, and reports the lot as Markdown
// and JSON. "dbt3 faults" is its command; .ci/run runs a short version and
// scripts/faults.sh the full one.
//
// A try over a transport (tcp, unix or shm) uses that kind of connection everywhere it
// can: exemgr reaches the primprocs over it, the clients reach exemgr's MySQL port over
// it, and bad input goes to the daemons' TCP ports or their unix sockets. shm has no port
// of its own — it is the unix socket with the batch bodies in shared-memory rings, set up
// in the hello — so over shm exemgr runs with --transport shm, the clients use its unix
// socket, and the bad input goes to the primprocs' unix sockets, with a handshake that
// asks for shared memory and RBATCH descriptors the ring must refuse. The check query
// that closes a try is followed by SHOW QUERY STATS, which must show every link on the
// try's transport (exemgr falls back from shm to the plain socket, with a warning, when
// the rings cannot be set up; a try that ran so tested nothing of shm). Every wait is
// bounded: a statement or a wait that outlasts Config.HangTimeout is a hang, never a stuck
// suite.
//
// The write faults use a table of their own, so that the TPC-H tables stay as loaded; the
// crash points of a commit need a primproc built with the colink_testhooks tag
// (primproc/testhook.go), which Config.TestHookPrimproc names.
package faults
