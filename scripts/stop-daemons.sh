#!/usr/bin/env bash
# Stops the daemons start-daemons.sh started: exemgr first, then the primprocs (SIGTERM,
# SIGKILL after 10 s), and removes their pidfiles and sockets.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

while (($#)); do
	case $1 in
	--run-dir) COLINK_RUN_DIR=${2:?--run-dir needs a value}; shift 2 ;;
	-h | --help) echo "usage: $(basename "$0") [--run-dir DIR]   (default \$COLINK_RUN_DIR, now $COLINK_RUN_DIR)"; exit 0 ;;
	*) die 2 "unknown argument '$1'" ;;
	esac
done
run=$COLINK_RUN_DIR
[[ -d $run ]] || { say "no run directory $run: nothing to stop"; exit 0; }

stopped=0
if [[ -f $run/exemgr.pid ]]; then
	stop_pidfile "$run/exemgr.pid" 10
	stopped=$((stopped + 1))
fi
pids=()
for pidfile in "$run"/primproc*.pid; do
	[[ -e $pidfile ]] || continue
	stop_pidfile "$pidfile" 10 &
	pids+=($!)
	stopped=$((stopped + 1))
done
for p in "${pids[@]+"${pids[@]}"}"; do wait "$p"; done
rm -f "$run"/*.sock "$run"/*.sock.lock "$run/daemons.env"
say "stopped $stopped daemon(s); logs stay in $run"
