#!/usr/bin/env bash
# Per-statement cost of colink's fixed overhead, two engines' binaries alternating: restart
# both daemons from each BIN over the SF 1 store in turn, then time N statements of each
# query on one mariadb connection. Usage: run.sh OLD_BIN NEW_BIN (from the repository root's
# data/colink-sf1-pp1/pm0, as ../duckdb-sf1-radix/run.sh expects).
set -euo pipefail
old=$1 new=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
run=/tmp/colink-overhead
mkdir -p "$run"
lat() { # lat QUERY N: µs per statement
	for _ in $(seq "$2"); do echo "$1;"; done >"$run/x.sql"
	local s e
	s=$(date +%s%N)
	mariadb -S "$run/em.sock" -u root tpch <"$run/x.sql" >/dev/null
	e=$(date +%s%N)
	echo "$(((e - s) / 1000 / $2)) us  $1"
}
q11=$(grep -v '^--' "$root/../shared/tpch/validation-queries/q11.sql" | sed '/rownum/d' | tr '\n\t' '  ' | sed 's/; *$//')
for side in "$old" "$new" "$old" "$new"; do
	pkill -f "$run/" || true
	sleep 1
	"$side/primproc" --data-dir "$root/data/colink-sf1-pp1/pm0" --listen "unix://$run/pp.sock" --cache-size 3GiB >"$run/pp.log" 2>&1 &
	sleep 1.5
	"$side/exemgr" --primproc "unix://$run/pp.sock" --transport unix --mysql-listen tcp://127.0.0.1:13308 --mysql-socket "$run/em.sock" >"$run/em.log" 2>&1 &
	sleep 1.5
	echo "== $side"
	lat "select count(*) from nation" 1000
	lat "$q11" 100
done
pkill -f "$run/" || true
