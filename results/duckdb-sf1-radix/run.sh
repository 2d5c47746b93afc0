#!/usr/bin/env bash
# One side of a before/after pair against DuckDB native at SF 1: restart colink's daemons
# from BIN (a directory with primproc and exemgr) over the loaded store, then run
# bench/duckdb against them. Usage: run.sh BIN NAME (writes NAME.json and NAME.md here).
set -euo pipefail
bin=$1 name=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
run=/tmp/colink-ab
pkill -f "$run/" || true
sleep 3
mkdir -p "$run"
"$bin/primproc" --data-dir "$root/data/colink-sf1-pp1/pm0" --listen "unix://$run/pp.sock" --cache-size 3GiB >"$run/pp.log" 2>&1 &
sleep 2
"$bin/exemgr" --primproc "unix://$run/pp.sock" --transport unix --mysql-listen tcp://127.0.0.1:13307 --mysql-socket "$run/em.sock" >"$run/em.log" 2>&1 &
sleep 2
cd "$root/bench/duckdb"
go build -o "$run/duckbench" . && "$run/duckbench" --data "$root/data/sf1-parquet" --threads 2 --runs 6 --colink "$run/em.sock" \
	--check "$root/../shared/tpch/answers/sf1" --out "$here/$name.json" --markdown "$here/$name.md" --quiet
pkill -f "$run/" || true
