#!/usr/bin/env bash
# The seed experiments at their scale, on one machine: what ColumnStore's engineers ran
# (the DBT3 queries on a 10 GB load over localhost sockets and over unix sockets, the big
# PM join, select l_comment … order by 1 limit 100) and what Kudu measured (a scan moving
# column values to the client), as two dbt3 compare runs over the same loaded store:
#
#   1. the 22 queries and CS1–CS3 (CS3 is the big PM join), cold (round 1) and warm,
#      over tcp, unix and shm, at pushdown full and filter, every daemon's CPU and peak RSS;
#   2. the scan family (SCAN1…SCAN8, pinned at pushdown scan) and CS1–CS3 at full, filter
#      and scan, so the link bytes per query span orders of magnitude, with ipcbench's
#      stream over the same transports to check the fitted cost per GB;
#   3. the big PM join alone (CS3: select count(*) from orders, lineitem where
#      l_orderkey = o_orderkey) at the seed's 30 GB (--join-sf, default 30), at full and
#      filter, over tcp, unix and shm. Its store takes about 6 GB of disk at SF 30.
#
# Each run writes its report (the answer in one sentence at the top, the cost per GB with
# its interval, per-query tables with every daemon's CPU and peak RSS, plots) into its
# own directory under --out. exemgr runs with --pool-idle 5s so that memory an idle
# exemgr no longer needs goes back between queries (two exemgrs run side by side).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

usage() {
	cat <<USAGE
usage: $(basename "$0") [--sf F] [--join-sf F] [--runs R] [--transports LIST] [--data DIR] [--out DIR] [--only mix|scan|join]

  --sf F      scale factor of the mix and the scans (default 10), loaded once under DIR and reused
  --join-sf F scale factor of the big PM join (default 30), loaded once under DIR and reused
  --runs R    rounds per run (default 3): round 1 cold, the others warm
  --transports LIST
              the link's transports the mix and the scans compare (default tcp,unix,shm);
              the big PM join always runs over tcp, unix and shm
  --data DIR  where the primproc's store is kept (default $COLINK_ROOT/data)
  --out DIR   results directory (default $COLINK_ROOT/results/seed-sfF); the join goes
              to DIR/join-sfF
  --only X    run only the DBT3 mix (mix), only the scan family (scan) or only the big
              PM join (join)
USAGE
}

sf=10 join_sf=30 runs=3 transports=tcp,unix,shm data="$COLINK_ROOT/data" out="" only=""
while (($#)); do
	case $1 in
	--sf) sf=${2:?}; shift 2 ;;
	--join-sf) join_sf=${2:?}; shift 2 ;;
	--runs) runs=${2:?}; shift 2 ;;
	--transports) transports=${2:?}; shift 2 ;;
	--data) data=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--only) only=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die 2 "unknown argument '$1'" ;;
	esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || die 2 "--runs '$runs': want a whole number from 1"
case $only in "" | mix | scan | join) ;; *) die 2 "--only '$only': want mix, scan or join" ;; esac
out=${out:-$COLINK_ROOT/results/seed-sf$sf}
mkdir -p "$out" "$data"
bin="$COLINK_ROOT/bin"
build_bins "$bin"
(cd "$COLINK_ROOT" && go build -buildvcs=auto -o "$bin/ipcbench" ./cmd/ipcbench) || die 1 "go build ./cmd/ipcbench failed"

common=(--sf "$sf" --runs "$runs" --transports "$transports" --data "$data" --bin "$bin" --exemgr-arg=--pool-idle=5s)
if [[ $only == "" || $only == mix ]]; then
	say "the DBT3 mix and CS1–CS3 at SF $sf, pushdown full and filter, $runs rounds"
	"$bin/dbt3" compare "${common[@]}" --queries all --pushdown full,filter --ipcbench-rounds 0 --out "$out/mix"
fi
if [[ $only == "" || $only == scan ]]; then
	say "the scan family and CS1–CS3 at SF $sf, pushdown full, filter and scan, $runs rounds"
	"$bin/dbt3" compare "${common[@]}" --queries scan --pushdown full,filter,scan --ipcbench-rounds 3 --out "$out/scan"
fi
if [[ $only == "" || $only == join ]]; then
	say "the big PM join (CS3) at SF $join_sf, pushdown full and filter, over tcp, unix and shm, $runs rounds"
	"$bin/dbt3" compare --sf "$join_sf" --runs "$runs" --transports tcp,unix,shm --data "$data" --bin "$bin" \
		--exemgr-arg=--pool-idle=5s --queries CS3 --pushdown full,filter --ipcbench-rounds 0 --out "$out/join-sf$join_sf"
fi
say "wrote $out"
