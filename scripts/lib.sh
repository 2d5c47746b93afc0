# shellcheck shell=bash
# Shared by colink's daemon scripts: paths, logging, pidfiles. Sourced, not run.

# The repository root and the run directory (pidfiles, sockets, logs). Unix socket paths
# are limited to 107 bytes, so the run directory lives under TMPDIR by default.
COLINK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
COLINK_RUN_DIR=${COLINK_RUN_DIR:-${TMPDIR:-/tmp}/colink-run-$(id -u)}

die() { # die STATUS MESSAGE...
	local status=$1
	shift
	printf '%s: %s\n' "$(basename "$0")" "$*" >&2
	exit "$status"
}

say() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }

# build_bins DIR: builds primproc, exemgr and dbt3 into DIR from the source tree (go build
# is incremental: fast when nothing changed).
build_bins() {
	local dir=$1
	mkdir -p "$dir"
	(cd "$COLINK_ROOT" && go build -buildvcs=auto -o "$dir/" ./cmd/primproc ./cmd/exemgr ./cmd/dbt3) ||
		die 1 "go build failed"
}

# alive PIDFILE: true if the pidfile names a running process.
alive() {
	local pid
	[[ -f $1 ]] || return 1
	pid=$(<"$1")
	[[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null
}

# stop_pidfile PIDFILE GRACE_SECONDS: SIGTERM, then SIGKILL after the grace period;
# removes the pidfile.
stop_pidfile() {
	local pidfile=$1 grace=$2 pid i
	if alive "$pidfile"; then
		pid=$(<"$pidfile")
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < grace * 10; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			say "$(basename "$pidfile" .pid) (pid $pid) ignored SIGTERM for ${grace}s; killing it"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$pidfile"
}

# wait_log LOGFILE PIDFILE PATTERN COUNT TIMEOUT: waits until the log has COUNT lines
# matching PATTERN; fails if the process dies or the time runs out.
wait_log() {
	local log=$1 pidfile=$2 pattern=$3 count=$4 timeout=$5 i n
	for ((i = 0; i < timeout * 20; i++)); do
		n=$(grep -c -- "$pattern" "$log" 2>/dev/null || true)
		((${n:-0} >= count)) && return 0
		alive "$pidfile" || return 1
		sleep 0.05
	done
	return 1
}

# log_tail LOGFILE: the daemon's last lines, indented, for an error message.
log_tail() { tail -n 20 "$1" 2>/dev/null | sed 's/^/  /'; }
