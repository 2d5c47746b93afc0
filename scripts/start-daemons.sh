#!/usr/bin/env bash
# Starts colink's daemons in the background: N primprocs (each listening on loopback TCP and
# a unix socket at once) and one exemgr that reaches them over the chosen transport (tcp,
# unix, shm: the unix socket with shared-memory rings, or auto). Pidfiles, sockets and logs
# go to the run directory; stop-daemons.sh stops everything it names.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

usage() {
	cat <<USAGE
usage: $(basename "$0") --transport tcp|unix|shm|auto [--primprocs N] [--data DIR] [--port P] [--threads T] [--load SF] [--bin DIR] [--run-dir DIR]

  --transport T          how exemgr reaches the primprocs (required): tcp (their TCP ports),
                         unix (their unix sockets, found through the hello on the TCP port),
                         shm (those sockets with the batch bodies in shared-memory rings,
                         set up in the hello) or auto (shm, else unix, else tcp: exemgr's
                         choice, logged); exemgr's --transport
  --primprocs N          primprocs to start (default 1)
  --data DIR             the primprocs' stores, DIR/pm0, DIR/pm1, ..., and exemgr's own state
                         (its views), DIR/exemgr (default $COLINK_ROOT/data/manual)
  --port P               primproc i listens on 127.0.0.1:P+i (default 8620)
  --threads T            worker threads per primproc (default: all cores)
  --load SF              load TPC-H at scale factor SF (generated in process) before exemgr starts
  --bin DIR              take the binaries from DIR (default: build them into $COLINK_ROOT/bin)
  --run-dir DIR          pidfiles, sockets, logs (default \$COLINK_RUN_DIR, now $COLINK_RUN_DIR)

exemgr takes MySQL clients on RUN_DIR/mysql.sock, whatever the transport (shm has no port
of its own; the transport is that of exemgr's links):
  mariadb -S RUN_DIR/mysql.sock tpch
  dbt3 query --mysql RUN_DIR/mysql.sock -q 1
USAGE
}

transport="" primprocs=1 data="$COLINK_ROOT/data/manual" port=8620 threads="" load_sf="" bin=""
while (($#)); do
	case $1 in
	--transport) transport=${2:?--transport needs a value}; shift 2 ;;
	--primprocs) primprocs=${2:?--primprocs needs a value}; shift 2 ;;
	--data) data=${2:?--data needs a value}; shift 2 ;;
	--port) port=${2:?--port needs a value}; shift 2 ;;
	--threads) threads=${2:?--threads needs a value}; shift 2 ;;
	--load) load_sf=${2:?--load needs a value}; shift 2 ;;
	--bin) bin=${2:?--bin needs a value}; shift 2 ;;
	--run-dir) COLINK_RUN_DIR=${2:?--run-dir needs a value}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die 2 "unknown argument '$1'" ;;
	esac
done
case $transport in
tcp | unix | shm | auto) ;;
"") usage >&2; die 2 "--transport is required (tcp, unix, shm or auto)" ;;
*) die 2 "unknown transport '$transport' (want tcp, unix, shm or auto)" ;;
esac
[[ $primprocs =~ ^[1-9][0-9]*$ ]] || die 2 "--primprocs '$primprocs': want a whole number from 1"
if ! [[ $port =~ ^[1-9][0-9]*$ ]] || ((port + primprocs > 65536)); then
	die 2 "--port '$port': not a usable port"
fi
[[ -z $threads || $threads =~ ^[1-9][0-9]*$ ]] || die 2 "--threads '$threads': want a whole number from 1"

run=$COLINK_RUN_DIR
mkdir -p "$run" "$data"
for pidfile in "$run"/*.pid; do
	[[ -e $pidfile ]] || continue
	if alive "$pidfile"; then
		die 2 "$(basename "$pidfile" .pid) is already running (pid $(<"$pidfile")); run stop-daemons.sh first"
	fi
	rm -f "$pidfile"
done
if [[ -z $bin ]]; then
	bin="$COLINK_ROOT/bin"
	build_bins "$bin"
fi
for b in primproc exemgr dbt3; do
	[[ -x $bin/$b ]] || die 2 "no executable $bin/$b"
done

# Something failed: stop what started, show the failing daemon's log, exit 2.
fail() { # fail NAME REASON
	say "$1 did not start: $2; its log ($run/$1.log) ends:"
	log_tail "$run/$1.log" >&2
	"$(dirname "$0")/stop-daemons.sh" --run-dir "$run" >/dev/null 2>&1 || true
	exit 2
}

endpoints=()
for ((i = 0; i < primprocs; i++)); do
	name=primproc$i
	args=(--data-dir "$data/pm$i" --listen "tcp://127.0.0.1:$((port + i))" --listen "unix://$run/$name.sock" --name "$name")
	[[ -n $threads ]] && args+=(--threads "$threads")
	# setsid: a session of its own, so that a later Ctrl-C in this terminal does not reach it.
	setsid "$bin/primproc" "${args[@]}" >"$run/$name.log" 2>&1 </dev/null &
	echo $! >"$run/$name.pid"
	endpoints+=("tcp://127.0.0.1:$((port + i))")
done
for ((i = 0; i < primprocs; i++)); do
	wait_log "$run/primproc$i.log" "$run/primproc$i.pid" "primproc: serving" 1 30 ||
		fail "primproc$i" "not serving"
done
say "$primprocs primproc(s) serving: ${endpoints[*]}"

if [[ -n $load_sf ]]; then
	load_args=(load --sf "$load_sf")
	for ep in "${endpoints[@]}"; do load_args+=(--primproc "$ep"); done
	"$bin/dbt3" "${load_args[@]}" >&2 || {
		"$(dirname "$0")/stop-daemons.sh" --run-dir "$run" >/dev/null 2>&1 || true
		die 1 "loading SF $load_sf failed"
	}
fi

args=(--transport "$transport" --mysql-listen "unix://$run/mysql.sock" --name "exemgr-$transport" --data-dir "$data/exemgr")
for ep in "${endpoints[@]}"; do args+=(--primproc "$ep"); done
setsid "$bin/exemgr" "${args[@]}" >"$run/exemgr.log" 2>&1 </dev/null &
echo $! >"$run/exemgr.pid"
wait_log "$run/exemgr.log" "$run/exemgr.pid" "exemgr: primproc up" "$primprocs" 30 ||
	fail exemgr "its links to the primprocs did not come up"
# The ready line, not the socket file: the file exists from bind, before the socket listens.
wait_log "$run/exemgr.log" "$run/exemgr.pid" "exemgr: serving" 1 30 ||
	fail exemgr "it did not start taking MySQL clients"
# What each link came up on, from exemgr's "primproc up" lines: under shm exemgr falls back
# to the plain unix socket (with a warning) when the rings cannot be set up, and a run meant
# to measure shm must not go on without them; auto takes what it finds.
links=$(grep -- "exemgr: primproc up" "$run/exemgr.log" | grep -o 'transport=[a-z]*' | cut -d= -f2 | paste -sd, -)
IFS=, read -r -a link_list <<<"$links"
for l in "${link_list[@]}"; do
	[[ $transport == auto || $l == "$transport" ]] ||
		fail exemgr "--transport $transport, but its links came up over $links"
done
printf 'transport=%s\nlinks=%s\nprimprocs=%s\nmysql=%s\nbin=%s\n' "$transport" "$links" "$primprocs" "$run/mysql.sock" "$bin" >"$run/daemons.env"
say "exemgr (transport $transport, links over $links) takes MySQL clients on $run/mysql.sock"
echo "$run/mysql.sock"
