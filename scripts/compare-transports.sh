#!/usr/bin/env bash
# The transport comparison by hand, as the original experiment ran it: for each round and
# each transport (the order reversed every other round), start the daemons with that
# transport, run the 22 validation queries one by one with dbt3 query (round 1 cold: the
# caches are dropped before each query; later rounds first run the 22 unmeasured to fill the
# freshly started primprocs' caches), stop the daemons; then print each query's median
# elapsed time per transport and each other transport's ratio to tcp. dbt3 compare does the same with more
# care (per-process CPU, /proc cross-checks, answers, plots); this script shows the steps.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

usage() {
	cat <<USAGE
usage: $(basename "$0") [--runs R] [--sf F] [--primprocs N] [--transports "tcp unix shm"] [--data DIR] [--out FILE]

  --runs R          rounds (default 3): round 1 cold, the others warm
  --sf F            scale factor, loaded on first use (default 0.1)
  --primprocs N     primprocs (default 1)
  --transports LIST tcp, unix, shm, auto, in round 1's order (default "tcp unix")
  --data DIR        the primprocs' stores (default $COLINK_ROOT/data/manual-sfF-ppN)
  --out FILE        every timing as "round transport query seconds" lines (default RUN_DIR/timings.txt)
USAGE
}

runs=3 sf=0.1 primprocs=1 transports="tcp unix" data="" out=""
while (($#)); do
	case $1 in
	--runs) runs=${2:?}; shift 2 ;;
	--sf) sf=${2:?}; shift 2 ;;
	--primprocs) primprocs=${2:?}; shift 2 ;;
	--transports) transports=${2:?}; shift 2 ;;
	--data) data=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--run-dir) COLINK_RUN_DIR=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die 2 "unknown argument '$1'" ;;
	esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || die 2 "--runs '$runs': want a whole number from 1"
read -r -a order <<<"$transports"
((${#order[@]} > 0)) || die 2 "--transports is empty"
for t in "${order[@]}"; do
	case $t in tcp | unix | shm | auto) ;; *) die 2 "unknown transport '$t' (want tcp, unix, shm or auto)" ;; esac
done
data=${data:-$COLINK_ROOT/data/manual-sf$sf-pp$primprocs}
run=$COLINK_RUN_DIR
mkdir -p "$run" "$data"
out=${out:-$run/timings.txt}
bin="$COLINK_ROOT/bin"
build_bins "$bin"
: >"$out"

here=$(dirname "$0")
trap '"$here/stop-daemons.sh" --run-dir "$run" >/dev/null 2>&1 || true' EXIT

for ((round = 1; round <= runs; round++)); do
	this=("${order[@]}")
	if ((round % 2 == 0)); then
		this=()
		for ((i = ${#order[@]} - 1; i >= 0; i--)); do this+=("${order[i]}"); done
	fi
	for t in "${this[@]}"; do
		start_args=(--transport "$t" --primprocs "$primprocs" --data "$data" --bin "$bin" --run-dir "$run")
		marker="$data/.loaded"
		[[ -f $marker ]] || start_args+=(--load "$sf")
		sock=$("$here/start-daemons.sh" "${start_args[@]}")
		touch "$marker"
		if ((round > 1)); then
			# The daemons were just started: one unmeasured pass fills primproc's cache, so
			# that the warm rounds are warm.
			for q in $(seq 1 22); do
				"$bin/dbt3" query --mysql "$sock" -q "$q" >/dev/null
			done
		fi
		for q in $(seq 1 22); do
			if ((round == 1)); then
				"$bin/dbt3" query --mysql "$sock" -e "select calFlushCache()" >/dev/null
			fi
			stats=$("$bin/dbt3" query --mysql "$sock" --stats -q "$q" 2>&1 >/dev/null) ||
				die 1 "round $round, $t, Q$q failed: $stats"
			elapsed=$(awk '/^elapsed /{sub("s,", "", $2); print $2; exit}' <<<"$stats")
			echo "$round $t Q$q $elapsed" >>"$out"
			say "round $round $t Q$q ${elapsed}s"
		done
		"$here/stop-daemons.sh" --run-dir "$run" >/dev/null
	done
done

# Medians over the warm rounds (round 1 when there is only one), and each transport's ratio
# to tcp (when tcp ran).
awk -v runs="$runs" -v order="${order[*]}" '
function median(list,    n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
(runs == 1 || $1 > 1) { v[$2 " " $3] = v[$2 " " $3] " " $4; seen[$3] = 1 }
END {
	nt = split(order, tr, " ")
	printf "%-6s", "query"
	for (i = 1; i <= nt; i++) printf " %10s", tr[i] "_s"
	for (i = 1; i <= nt; i++) if (tr[i] != "tcp") printf " %10s", tr[i] "/tcp"
	printf "\n"
	for (q = 1; q <= 22; q++) {
		k = "Q" q
		if (!(k in seen)) continue
		tc = ("tcp " k) in v ? median(v["tcp " k]) : ""
		printf "%-6s", k
		for (i = 1; i <= nt; i++) printf " %10s", (tr[i] " " k) in v ? median(v[tr[i] " " k]) : ""
		for (i = 1; i <= nt; i++) {
			if (tr[i] == "tcp") continue
			m = (tr[i] " " k) in v ? median(v[tr[i] " " k]) : ""
			printf " %10s", (tc != "" && m != "" && tc > 0) ? sprintf("%.3f", m / tc) : "-"
		}
		printf "\n"
	}
}' "$out"
say "timings in $out"
