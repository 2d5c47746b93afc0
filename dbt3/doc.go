// Package dbt3 owns colink's DBT3 drivers: running the query scripts through exemgr's MySQL
// front end, measuring each execution (client-side elapsed time, every daemon's CPU and
// context switches from SHOW QUERY STATS, cross-checked against /proc where the daemons are
// local), checking the answers, and the power, throughput and transport-comparison tests
// built from those pieces. It also owns the jobs of dbt3's smaller commands — generating
// the tables (Generate) and the query streams (Qgen), running a script (RunScript), the
// power and throughput tests as recorded runs (PowerTest, ThroughputTest) — and what every
// job shares: where it writes (Output, with its progress bars) and how it reports bad
// settings (UsageError). The daemons themselves are started by dbt3/cluster; tables are
// loaded by dbt3/load; the transport comparison as a whole job is dbt3/bench; reports are
// written by dbt3/report; the query texts live in dbt3/queries and tpch.
//
// # Metrics
//
// The metrics are computed as DBT3's scripts compute them from their timings (the formulas
// of TPC-H clause 5.4), every timing interval in seconds:
//
//	Power@Size      = 3600 · SF / (Π QI(i,0) · Π RI(j,0))^(1/n)
//	Throughput@Size = S · 22 · 3600 / Ts · SF
//	QphH@Size       = √(Power@Size · Throughput@Size)
//
// QI(i,0) is query i's interval in the power test's stream 0, RI(j,0) refresh function j's,
// n the number of intervals present, S the number of query streams of the throughput test and
// Ts its measurement interval: from the start of the first stream to the end of the last.
//
// DBT3 takes the geometric mean over whichever power-test intervals it recorded: with RF1 and
// RF2 it is TPC-H's 24th root; without them (colink until the refresh functions arrive, issue
// 7) it is the 22nd root of the 22 query intervals, and the run's notes say that the refresh
// functions were not run. DBT3 applies no floor to short intervals; TPC-H clause 5.4.1.4
// raises every interval shorter than 1/1000 of the longest to that bound. Both figures are
// recorded: "power@size" as DBT3 computes it and "power@size_tpch" with the floor.
package dbt3
