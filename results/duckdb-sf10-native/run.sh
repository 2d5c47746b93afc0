#!/usr/bin/env bash
# One SF 10 run against DuckDB native: restart colink's daemons from BIN (a directory with
# primproc and exemgr) over the loaded store, run bench/duckdb against them (4 rounds, the
# first cold after dropping the page cache; RUNS=N for N), then record the daemons' peak RSS
# (VmHWM, and sampled once a second: VmRSS and VmRSS less LazyFree).
# Usage: run.sh BIN NAME (writes NAME.json, NAME.md and NAME.log here).
set -euo pipefail
bin=$1 name=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
run=/tmp/colink-sf10
pkill -f "$run/" || true
sleep 5
mkdir -p "$run"
"$bin/primproc" --data-dir "$root/data/colink-sf10-pp1/pm0" --listen "unix://$run/pp.sock" --cache-size 9GiB >"$run/pp.log" 2>&1 &
pp=$!
sleep 3
"$bin/exemgr" --primproc "unix://$run/pp.sock" --transport unix --mysql-listen tcp://127.0.0.1:13310 --mysql-socket "$run/em.sock" >"$run/em.log" 2>&1 &
em=$!
sleep 2
# Sample each daemon's resident size once a second: the largest VmRSS, and the largest
# VmRSS less LazyFree (pages the runtime freed with MADV_FREE, which the kernel may take
# back at will; see docs/running.md), to set beside VmHWM.
sample() {
	local pid=$1 name=$2 rss lazy max=0 held=0
	while [ -e "/proc/$pid/status" ]; do
		rss=$(awk '/^VmRSS:/{print $2}' "/proc/$pid/status" 2>/dev/null) || break
		lazy=$(awk '/^LazyFree:/{print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null)
		[ -n "$rss" ] || break
		[ "$rss" -gt "$max" ] && max=$rss
		[ $((rss - ${lazy:-0})) -gt "$held" ] && held=$((rss - ${lazy:-0}))
		echo "$name sampled max VmRSS $max kB, max VmRSS-LazyFree $held kB" >"$run/$name.peak"
		sleep 1
	done
}
sample "$pp" primproc &
sample "$em" exemgr &
cd "$root/bench/duckdb"
go build -o "$run/duckbench" .
/usr/bin/time -v "$run/duckbench" --data "$root/data/sf10-parquet" --threads 2 --runs "${RUNS:-4}" --drop-caches \
	--colink "$run/em.sock" --out "$here/$name.json" --markdown "$here/$name.md" --quiet 2>"$here/$name.log"
{
	echo "primproc $(grep VmHWM /proc/$pp/status)"
	echo "exemgr $(grep VmHWM /proc/$em/status)"
	cat "$run/primproc.peak" "$run/exemgr.peak"
} >>"$here/$name.log"
pkill -f "$run/" || true
