#!/usr/bin/env bash
# Two commits' daemons timed by the same outside client: the mariadb client runs each of the
# 22 validation queries against BASE_BIN's primproc and exemgrs and against HEAD_BIN's, both
# clusters up at once, each over a copy of a store its own commit loaded but only one query running at
# a time; per round and query the side that goes first alternates, and so does the transport
# (tcp, unix). Round 0 is an unmeasured warm-up. Prints and writes OUT/timings.tsv (round,
# query, transport, side, seconds) and OUT/summary.md: per query and transport the median
# head/base ratio of the rounds with min–max, and the 22 queries' total per round.
#
# Use it when the two commits' dbt3 drivers differ (an older driver's per-statement overhead
# would be counted against the older daemons). It measures wall time only; scripts/ab-binaries.sh
# also gives each daemon's CPU when both sides speak the same driver protocol.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

usage() {
	echo "usage: $(basename "$0") BASE_BIN HEAD_BIN BASE_STORE HEAD_STORE OUT [--rounds R] [--queries-dir DIR]"
	echo "  BASE_STORE, HEAD_STORE: a primproc data directory loaded by each side (copied; the originals are not touched)"
}
(($# >= 5)) || { usage >&2; die 2 "want BASE_BIN HEAD_BIN BASE_STORE HEAD_STORE OUT"; }
base=$(cd "$1" && pwd) head=$(cd "$2" && pwd) base_store=$3 head_store=$4 out=$5
shift 5
rounds=5 qdir=""
while (($#)); do
	case $1 in
	--rounds) rounds=${2:?}; shift 2 ;;
	--queries-dir) qdir=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die 2 "unknown argument '$1'" ;;
	esac
done
command -v mariadb >/dev/null || die 2 "needs the mariadb client (apt-get install mariadb-client)"
rm -rf "$out/queries" && mkdir -p "$out/queries"
if [[ -n $qdir ]]; then # e.g. the older commit's own query files, when it parses less
	cp "$qdir"/*.sql "$out/queries/"
else
	(cd "$COLINK_ROOT" && go run ./cmd/dbt3 qgen --validation --out "$out/queries") >/dev/null
fi

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
port=47100
for side in base head; do
	dir=$base store=$base_store
	[[ $side == head ]] && dir=$head store=$head_store
	rm -rf "$out/$side" && mkdir -p "$out/$side"
	cp -r "$store" "$out/$side/store"
	"$dir/primproc" --data-dir "$out/$side/store" --listen "tcp://127.0.0.1:$port" \
		--listen "unix://$out/$side/pp.sock" --name "pp-$side" >"$out/$side/primproc.log" 2>&1 &
	pids+=($!)
	sleep 2
	for tr in tcp unix; do
		"$dir/exemgr" --transport "$tr" --mysql-listen "unix://$out/$side/em-$tr.sock" \
			--primproc "tcp://127.0.0.1:$port" --name "em-$side-$tr" >"$out/$side/exemgr-$tr.log" 2>&1 &
		pids+=($!)
	done
	port=$((port + 1))
done
for side in base head; do
	for tr in tcp unix; do
		for ((i = 0; i < 100; i++)); do
			mariadb -S "$out/$side/em-$tr.sock" -u root -e 'select 1' >/dev/null 2>&1 && break
			sleep 0.1
		done
	done
done

timings=$out/timings.tsv
printf 'round\tquery\ttransport\tside\tseconds\n' >"$timings"
k=0
for ((r = 0; r <= rounds; r++)); do
	for f in "$out"/queries/*.sql; do
		q=$(basename "$f" .sql)
		k=$((k + 1))
		if ((k % 2)); then order="base head"; else order="head base"; fi
		if (((k / 2) % 2)); then trs="tcp unix"; else trs="unix tcp"; fi
		for tr in $trs; do
			for side in $order; do
				t0=$(date +%s.%N)
				mariadb -S "$out/$side/em-$tr.sock" -u root tpch <"$f" >"$out/$side/last.out" ||
					die 1 "$q over $tr on $side failed"
				t1=$(date +%s.%N)
				((r > 0)) && printf '%d\t%s\t%s\t%s\t%.4f\n' "$r" "$q" "$tr" "$side" "$(echo "$t1 - $t0" | bc)" >>"$timings"
			done
			cmp -s "$out/base/last.out" "$out/head/last.out" || die 1 "$q over $tr: the sides' answers differ"
		done
	done
done

# summary: per query and transport, the rounds' head/base ratios (median, min–max).
awk -F'\t' 'NR > 1 { t[$1 FS $2 FS $3 FS $4] = $5; qs[$2] = 1; rs[$1] = 1; tot[$1 FS $3 FS $4] += $5 }
function med(a, n,   i, j, x) { for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
END {
	printf "| query | transport | base s (median) | head s (median) | head/base median [min–max] |\n|---|---|---:|---:|---:|\n"
	n = asorti(qs, qq)
	for (i = 1; i <= n; i++) for (trn = 1; trn <= 2; trn++) {
		tr = trn == 1 ? "tcp" : "unix"; m = 0
		for (r in rs) { m++; b[m] = t[r FS qq[i] FS tr FS "base"]; h[m] = t[r FS qq[i] FS tr FS "head"]; x[m] = h[m] / b[m] }
		lo = x[1]; hi = x[1]; for (j = 1; j <= m; j++) { if (x[j] < lo) lo = x[j]; if (x[j] > hi) hi = x[j] }
		printf "| %s | %s | %.3f | %.3f | %.3f [%.3f–%.3f] |\n", qq[i], tr, med(b, m), med(h, m), med(x, m), lo, hi
	}
	for (trn = 1; trn <= 2; trn++) {
		tr = trn == 1 ? "tcp" : "unix"; m = 0
		for (r in rs) { m++; x[m] = tot[r FS tr FS "head"] / tot[r FS tr FS "base"]; b[m] = tot[r FS tr FS "base"]; h[m] = tot[r FS tr FS "head"] }
		lo = x[1]; hi = x[1]; for (j = 1; j <= m; j++) { if (x[j] < lo) lo = x[j]; if (x[j] > hi) hi = x[j] }
		printf "| **total** | %s | %.3f | %.3f | %.3f [%.3f–%.3f] |\n", tr, med(b, m), med(h, m), med(x, m), lo, hi
	}
}' "$timings" >"$out/summary.md"
cat "$out/summary.md"
