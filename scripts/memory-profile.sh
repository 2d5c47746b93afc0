#!/usr/bin/env bash
# Where a daemon's memory goes: runs a list of the DBT3 queries for a number of passes over
# an already loaded primproc store, sampling each daemon's resident size every second, and
# at the end of each pass takes a heap profile of each (from --debug-listen). It prints each
# query's time, each daemon's peak RSS, and writes the samples and profiles to OUT. It is how
# the SF 10 memory figures in results/memory-sf10.md were taken; compare two builds with
# --bin.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

usage() {
	cat <<USAGE
usage: $(basename "$0") --store DIR [--bin DIR] [--queries "1 3 5"] [--passes N] [--out DIR] [-- primproc flags]

  --store DIR      a loaded primproc data directory (dbt3 load into it first)
  --bin DIR        primproc, exemgr and dbt3 to run (default: built from this tree into bin/)
  --queries LIST   TPC-H query numbers (default "1 3 5 7 8 9 10 13 18 21", issue 18's ten)
  --passes N       passes over the list (default 2)
  --out DIR        samples and heap profiles (default RUN_DIR/memory-<time>)
  after --          extra primproc flags, e.g. --cache-size 4GiB; GOMEMLIMIT and GOGC pass through
USAGE
}

store="" bin="" queries="1 3 5 7 8 9 10 13 18 21" passes=2 out=""
while (($#)); do
	case $1 in
	--store) store=${2:?}; shift 2 ;;
	--bin) bin=${2:?}; shift 2 ;;
	--queries) queries=${2:?}; shift 2 ;;
	--passes) passes=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--) shift; break ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
[[ -n $store && -d $store ]] || die 2 "--store DIR: a loaded primproc data directory"
if [[ -z $bin ]]; then
	bin=$COLINK_ROOT/bin
	build_bins "$bin"
fi
out=${out:-$COLINK_RUN_DIR/memory-$(date -u +%Y%m%dT%H%M%S)}
mkdir -p "$out" "$COLINK_RUN_DIR"
sock=$COLINK_RUN_DIR/memprof-pm.sock
port=$((18800 + RANDOM % 100))
"$bin/primproc" --data-dir "$store" --listen "tcp://127.0.0.1:$port" --listen "unix://$sock" \
	--debug-listen 127.0.0.1:$((port + 1000)) "$@" >"$out/primproc.log" 2>&1 &
pm=$!
"$bin/exemgr" --primproc "tcp://127.0.0.1:$port" --transport unix --mysql-listen "127.0.0.1:$((port + 100))" \
	--debug-listen 127.0.0.1:$((port + 1100)) >"$out/exemgr.log" 2>&1 &
em=$!
trap 'kill $pm $em 2>/dev/null; wait 2>/dev/null' EXIT
for _ in $(seq 100); do
	grep -q "primproc up" "$out/exemgr.log" 2>/dev/null && break
	sleep 0.2
done
(
	while kill -0 $pm 2>/dev/null; do
		printf '%s %s %s\n' "$(date +%s)" "$(awk '/VmRSS/{print $2}' /proc/$pm/status 2>/dev/null)" \
			"$(awk '/VmRSS/{print $2}' /proc/$em/status 2>/dev/null)"
		sleep 1
	done
) >"$out/rss.txt" &
sampler=$!
printf 'pass query seconds primproc_rss_mib exemgr_rss_mib\n' >"$out/queries.txt"
for ((p = 1; p <= passes; p++)); do
	for q in $queries; do
		t0=$(date +%s.%N)
		"$bin/dbt3" query --mysql "127.0.0.1:$((port + 100))" -q "$q" >/dev/null ||
			say "pass $p Q$q failed"
		t1=$(date +%s.%N)
		printf '%d Q%s %.2f %d %d\n' "$p" "$q" "$(echo "$t1 - $t0" | bc)" \
			$(($(awk '/VmRSS/{print $2}' /proc/$pm/status) / 1024)) $(($(awk '/VmRSS/{print $2}' /proc/$em/status) / 1024)) |
			tee -a "$out/queries.txt"
	done
	curl -s "http://127.0.0.1:$((port + 1000))/debug/pprof/heap" >"$out/primproc-heap-pass$p.pb.gz" || true
	curl -s "http://127.0.0.1:$((port + 1100))/debug/pprof/heap" >"$out/exemgr-heap-pass$p.pb.gz" || true
done
kill $sampler 2>/dev/null || true
pmpeak=$(awk '/VmHWM/{print $2}' /proc/$pm/status)
empeak=$(awk '/VmHWM/{print $2}' /proc/$em/status)
printf 'peak RSS: primproc %d MiB, exemgr %d MiB (samples in %s)\n' $((pmpeak / 1024)) $((empeak / 1024)) "$out" | tee "$out/peak.txt"
