#!/usr/bin/env bash
# The long differential fuzzing run (issue 16's target): 10,000 random queries over TPC-H
# SF 0.1, 2,000 from each of 5 seeds, checked against DuckDB's own tables and by SQLancer's
# TLP and NoREC oracles. Findings (reduced, with both answers) and the summary go to
# results/fuzz-sf0.1/. It builds the daemons and the DuckDB module (cgo) first; it takes
# one to two hours on 2 cores. Each query has 10 s on each engine (--timeout); one that runs
# longer is skipped and counted as a timeout in the summary. The short version runs in .ci/run.
set -euo pipefail
cd "$(dirname "$0")/../bench/duckdb"
sf=0.1 seeds=1,2,3,4,5 queries=2000 timeout=10s out=../../results/fuzz-sf0.1
while (($#)); do
	case $1 in
	--sf) sf=${2:?}; shift 2 ;;
	--seeds) seeds=${2:?}; shift 2 ;;
	--queries) queries=${2:?}; shift 2 ;;
	--timeout) timeout=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	-h|--help) echo "usage: $(basename "$0") [--sf F] [--seeds S,…] [--queries N per seed] [--timeout D per query] [--out DIR]"; exit 0 ;;
	*) echo "$(basename "$0"): unknown argument $1" >&2; exit 2 ;;
	esac
done
mkdir -p "$out"
rm -f "$out"/seed*.sql
exec go run ./sqlfuzz --sf "$sf" --seeds "$seeds" --queries "$queries" --timeout "$timeout" --out "$out" --verbose
