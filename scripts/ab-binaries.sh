#!/usr/bin/env bash
# Two commits' daemons side by side: the same dbt3 (this tree's) drives primproc and exemgr
# from BASE_BIN and from HEAD_BIN in turn, query by query, the order swapped from one query
# to the next, each query in its own `dbt3 compare --queries Q --runs R` (round 1 cold, the
# others warm, tcp and unix). Each side keeps its own loaded store, so neither reads the
# other's files. The samples are then merged into two comparison runs whose "transports" are
# the two sides — tcp.json (base against head over tcp) and unix.json (over unix) — and
# dbt3 report writes their tables: head/base per query, paired by round, with min–max and
# the 22 queries' total with its confidence interval.
#
# After the queries, ipcbench from each side (--mode stream and async, --raw, tcp and unix)
# runs alternately ROUNDS times against its own primproc: the link/raw ratios of both sides.
#
# Needs jq. Each side's driver is its own dbt3 if its directory holds one (an older dbt3 may
# not know a newer daemon's readiness line), else this tree's; this tree's runs with
# --warmup=false --ipcbench-rounds 0, which is what a driver without those flags does. What
# differs between the sides is the two directories' binaries; data, machine and order are the
# same.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

usage() {
	cat <<USAGE
usage: $(basename "$0") BASE_BIN HEAD_BIN OUT [--sf F] [--runs R] [--queries "1 2 … 22"] [--ipcbench-rounds N]

  BASE_BIN, HEAD_BIN  directories each holding primproc, exemgr and ipcbench
  OUT                 results directory (created): raw/ per query and side, tcp/ unix/ reports,
                      ipcbench/ JSON per side and round, commands.txt
  --sf F              scale factor (default 1)
  --runs R            rounds per query and side (default 3: 1 cold, 2 warm)
  --queries LIST      queries (default the 22)
  --ipcbench-rounds N ipcbench rounds per side and mode (default 5; 0 skips)
  --only-ipcbench     skip the queries (keeps OUT's tcp/ and unix/ reports)
USAGE
}

(($# >= 3)) || { usage >&2; die 2 "want BASE_BIN HEAD_BIN OUT"; }
base=$(cd "$1" && pwd) head=$(cd "$2" && pwd) out=$3
shift 3
sf=1 runs=3 queries=$(seq -s ' ' 1 22) ipc_rounds=5
while (($#)); do
	case $1 in
	--sf) sf=${2:?}; shift 2 ;;
	--runs) runs=${2:?}; shift 2 ;;
	--queries) queries=${2:?}; shift 2 ;;
	--ipcbench-rounds) ipc_rounds=${2:?}; shift 2 ;;
	--only-ipcbench) queries=""; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die 2 "unknown argument '$1'" ;;
	esac
done
command -v jq >/dev/null || die 2 "needs jq (apt-get install jq)"
for d in "$base" "$head"; do
	for b in primproc exemgr ipcbench; do
		[[ -x $d/$b ]] || die 2 "$d/$b: not an executable"
	done
done
mkdir -p "$out/raw" "$out/ipcbench" "$out/data-base" "$out/data-head"
dbt3=$out/dbt3
(cd "$COLINK_ROOT" && go build -o "$dbt3" ./cmd/dbt3) || die 1 "go build ./cmd/dbt3 failed"
log=$out/commands.txt
: >"$log"

run_side() { # run_side SIDE QUERY
	local side=$1 q=$2 dir driver extra=()
	dir=$base
	[[ $side == head ]] && dir=$head
	driver=$dbt3
	if [[ -x $dir/dbt3 ]]; then
		driver=$dir/dbt3
	fi
	if "$driver" compare --help 2>&1 | grep -q -- --warmup; then
		extra=(--warmup=false --ipcbench-rounds 0)
	fi
	local cmd=("$driver" compare --bin "$dir" --data "$out/data-$side" --sf "$sf" --queries "$q"
		--runs "$runs" --transports tcp,unix "${extra[@]}" --out "$out/raw/q$q-$side")
	echo "${cmd[*]}" >>"$log"
	"${cmd[@]}" >"$out/raw/q$q-$side.log" 2>&1 || die 1 "query $q on $side failed: see $out/raw/q$q-$side.log"
}

i=0
for q in $queries; do
	if ((i % 2 == 0)); then sides=(base head); else sides=(head base); fi
	for s in "${sides[@]}"; do
		say "Q$q $s"
		run_side "$s" "$q"
	done
	i=$((i + 1))
done

# merge TRANSPORT: one comparison run whose transports are the sides, base first.
merge() {
	local tr=$1 files=()
	for q in $queries; do files+=("$out/raw/q$q-base/compare.json" "$out/raw/q$q-head/compare.json"); done
	mkdir -p "$out/$tr"
	jq -s --arg tr "$tr" --arg cmd "scripts/ab-binaries.sh $base $head $out --sf $sf --runs $runs" '
		(.[0] | .id = "ab-" + $tr | .command = $cmd
			| .notes = ["base (" + $tr + ") against head (" + $tr + "): the same dbt3 drove each side'"'"'s daemons in turn, query by query, the order swapped per query; the two columns are the two commits, not two transports"]
			| .metrics = {}) as $head
		| $head + {samples: [ to_entries[] | (if .key % 2 == 0 then "base" else "head" end) as $side
			| .value.samples[] | select(.transport == $tr) | .transport = $side ]}' \
		"${files[@]}" >"$out/$tr/compare.json"
	"$dbt3" report --out "$out/$tr" "$out/$tr/compare.json" >/dev/null
}
if [[ -n $queries ]]; then
	merge tcp
	merge unix
fi

for ((r = 1; r <= ipc_rounds; r++)); do
	if ((r % 2 == 1)); then sides=(base head); else sides=(head base); fi
	for s in "${sides[@]}"; do
		dir=$base
		[[ $s == head ]] && dir=$head
		for mode in stream async; do
			bin_flag=()
			if "$dir/ipcbench" --help 2>&1 | grep -q -- --bin; then
				bin_flag=(--bin "$dir") # an older ipcbench takes the primproc beside it
			fi
			cmd=("$dir/ipcbench" "${bin_flag[@]}" --mode "$mode" --transport tcp,unix --raw --repeat 1
				--json "$out/ipcbench/$s-$mode-$r.json")
			echo "${cmd[*]}" >>"$log"
			say "ipcbench $mode round $r $s"
			"${cmd[@]}" >"$out/ipcbench/$s-$mode-$r.txt" 2>&1 ||
				die 1 "ipcbench $mode on $s failed: see $out/ipcbench/$s-$mode-$r.txt"
		done
	done
done
say "done: $out/tcp/report.md, $out/unix/report.md, $out/ipcbench/"
