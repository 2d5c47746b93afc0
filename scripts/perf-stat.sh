#!/usr/bin/env bash
# Wraps perf stat's software counters (context-switches, cpu-migrations, page-faults,
# task-clock) around each daemon that start-daemons.sh started, for as long as COMMAND runs:
#   scripts/perf-stat.sh -- bin/dbt3 power --mysql "$COLINK_RUN_DIR/mysql.sock" --validation
# Where perf is not installed, or may not watch the daemons, it says so and exits 2.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

usage() {
	echo "usage: $(basename "$0") [--run-dir DIR] [--out DIR] -- COMMAND [ARGS...]"
	echo "  counts each daemon of RUN_DIR (default \$COLINK_RUN_DIR, now $COLINK_RUN_DIR) while COMMAND runs"
}

out=""
while (($#)); do
	case $1 in
	--run-dir) COLINK_RUN_DIR=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--) shift; break ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die 2 "unknown argument '$1' (put the command after --)" ;;
	esac
done
(($#)) || { usage >&2; die 2 "no command to run"; }
run=$COLINK_RUN_DIR
out=${out:-$run/perf}

if ! command -v perf >/dev/null 2>&1; then
	die 2 "perf is not installed on this machine, so there are no perf counters here (Debian/Ubuntu: apt-get install linux-perf, or linux-tools-\$(uname -r)); dbt3's own figures (SHOW QUERY STATS) still report CPU and context switches"
fi
events=context-switches,cpu-migrations,page-faults,task-clock
if ! perf stat -e "$events" true >/dev/null 2>"$run/perf-probe.txt"; then
	die 2 "perf is installed but cannot count here: $(tr '\n' ' ' <"$run/perf-probe.txt")(kernel.perf_event_paranoid is $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo unknown))"
fi

mkdir -p "$out"
names=() perfs=()
for pidfile in "$run"/exemgr.pid "$run"/primproc*.pid; do
	[[ -e $pidfile ]] || continue
	alive "$pidfile" || continue
	name=$(basename "$pidfile" .pid)
	perf stat -e "$events" -p "$(<"$pidfile")" -o "$out/$name.txt" &
	perfs+=($!)
	names+=("$name")
done
((${#names[@]} > 0)) || die 2 "no running daemons in $run (start them with start-daemons.sh)"
sleep 0.2 # let perf attach before the workload starts

status=0
"$@" || status=$?
for p in "${perfs[@]}"; do kill -INT "$p" 2>/dev/null || true; done
for p in "${perfs[@]}"; do wait "$p" || true; done

for name in "${names[@]}"; do
	echo "== $name"
	grep -E 'context-switches|cpu-migrations|page-faults|task-clock|seconds time elapsed' "$out/$name.txt" || cat "$out/$name.txt"
done
say "perf output in $out; the command exited with status $status"
exit "$status"
