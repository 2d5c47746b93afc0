// Package faults owns colink's fault suite: the faults that issue 18 fixed, each a small
// value (a name, what one try does, the criterion a try must meet, and the try itself), and
// a runner that starts the real daemons from this tree's binaries (dbt3/cluster), loads
// TPC-H once, runs every fault a number of times over each transport, classifies each try
// (right answer, clear error and how long it took, unclear error, wrong answer, hang,
// unexpected death), samples the daemons' resident sizes, and reports the lot as Markdown
// and JSON. "dbt3 faults" is its command; .ci/run runs a short version and
// scripts/faults.sh the full one.
//
// A try over a transport uses that kind of connection everywhere it can: exemgr reaches
// the primprocs over it, the clients reach exemgr's MySQL port over it, and bad input goes
// to the daemons' TCP ports or their unix sockets. Every wait is bounded: a statement or a
// wait that outlasts Config.HangTimeout is a hang, never a stuck suite.
//
// The write faults use a table of their own, so that the TPC-H tables stay as loaded; the
// crash points of a commit need a primproc built with the colink_testhooks tag
// (primproc/testhook.go), which Config.TestHookPrimproc names.
package faults
