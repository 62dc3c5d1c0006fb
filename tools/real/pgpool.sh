#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# PostgreSQL program for tools/bench-real.sh: a database server whose
# buffer pool (shared_buffers: one MAP_SHARED | MAP_ANONYMOUS mapping, shmem
# pages) holds the whole table and is larger than the run's memory limit,
# so the pool itself swaps.  Debian's postgresql-15 (postgresql-contrib:
# pg_prewarm), run as the postgres user on a Unix socket only.
#
#     pgpool.sh setup DIR MIB   a cluster in DIR/data: table t of ~3/4 MIB
#                               MiB (rows of ~400 bytes, in key order), its
#                               primary key, and the checksums every run
#                               must read back (DIR/expected)
#     pgpool.sh run DIR MIB WHAT
#                               starts the server with shared_buffers = MIB
#                               MiB, reads the table into the pool
#                               (pg_prewarm: phase "prewarm"), then WHAT:
#       seqscan  a parallel sequential scan, leader + 2 workers taking
#                chunks of blocks from a shared counter (phase "seqscan")
#       index    the table read in key order through its index, one
#                process (index leaves and heap pages in turns: two
#                ascending streams; phase "index")
#       point    look-ups of a random tenth of the keys (phase "point")
#
# The run prints one JSON line (phases, the user CPU of the server's
# processes and psql's, "bad") and exits 3 when a checksum differs.  The
# server runs as a child of this script (not daemonized), so its processes
# stay in the caller's cgroup and their resource usage comes back to it.
set -u
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
[ -x "$PG_BIN/postgres" ] || {
	echo "pgpool: no PostgreSQL server (apt-get install postgresql postgresql-contrib)" >&2
	exit 2
}
usage()
{
	echo "usage: pgpool.sh setup DIR MIB | run DIR MIB seqscan|index|point" >&2
	exit 2
}
[ $# -ge 3 ] && [[ $3 =~ ^[1-9][0-9]*$ ]] || usage
what=$1 dir=$2 mib=$3
rows=$((mib * 3 * 1024 * 1024 / 4 / 432)) # 3/4 of MIB MiB, ~432 bytes a row with its header
# setpriv execs (runuser forks and waits, which would put a process between
# this shell and the server it signals).
as_pg() { setpriv --reuid postgres --regid postgres --init-groups -- "$@"; }
sql() { as_pg "$PG_BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$dir" -d leap "$@"; }
now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.4f", a - b }'; }

server_up()
{
	# Not through as_pg: a function run in the background is a subshell,
	# and $! would be it, not the server.
	setpriv --reuid postgres --regid postgres --init-groups -- \
		"$PG_BIN/postgres" -D "$dir/data" -k "$dir" -c listen_addresses= \
		-c shared_buffers="${1}MB" -c huge_pages=off -c fsync=off \
		-c synchronous_commit=off -c full_page_writes=off \
		-c max_parallel_workers_per_gather=2 -c max_worker_processes=8 \
		-c parallel_leader_participation=on -c jit=off \
		-c logging_collector=off >"$dir/server.log" 2>&1 &
	server=$!
	for _ in $(seq 300); do
		as_pg "$PG_BIN/pg_isready" -q -h "$dir" && return 0
		kill -0 "$server" 2>/dev/null || break
		sleep 0.1
	done
	echo "pgpool: the server did not start: $(tail -n 5 "$dir/server.log")" >&2
	return 1
}

server_down()
{
	kill -INT "$server" 2>/dev/null # fast shutdown
	wait "$server"
}

# sum(hashtext(pad)) of the rows a query returns, and their count: what the
# rows hold, checked against setup's.
checksum="count(*) || ' ' || sum(hashtext(pad)::bigint)"
# The look-ups of a random tenth of the keys (the same keys every time):
# setup's answer is what every point run must read back.
point="SELECT setseed(0.5);
	SELECT $checksum FROM t WHERE id IN
	  (SELECT 1 + (random() * ($rows - 1))::int FROM generate_series(1, $((rows / 10))));"

case $what in
setup)
	rm -rf "$dir/data" && mkdir -p "$dir" && chown postgres: "$dir" || exit 1
	as_pg "$PG_BIN/initdb" -D "$dir/data" -A trust -U postgres --no-sync \
		>"$dir/initdb.log" 2>&1 || {
		echo "pgpool: initdb failed: $(tail -n 5 "$dir/initdb.log")" >&2
		exit 1
	}
	server_up 128 || exit 1
	as_pg "$PG_BIN/createdb" -h "$dir" leap &&
		sql -c "CREATE EXTENSION pg_prewarm" \
			-c "CREATE TABLE t (id int PRIMARY KEY, pad text) WITH (fillfactor = 100)" \
			-c "INSERT INTO t SELECT i, repeat(md5(i::text), 12)
			    FROM generate_series(1, $rows) i" \
			-c "VACUUM ANALYZE t" -c "CHECKPOINT" &&
		sql -c "SELECT $checksum FROM t" >"$dir/expected" &&
		sql -c "$point" | tail -n 1 >"$dir/expected-point"
	rc=$?
	server_down
	exit $rc
	;;
run) [ $# -eq 4 ] || usage ;;
*) usage ;;
esac

kind=$4
server_up "$mib" || exit 1
trap 'server_down' EXIT
trap 'exit 143' TERM INT # (the EXIT trap then stops the server)
t=$(now)
sql -c "SELECT pg_prewarm('t')" >/dev/null || exit 1
ph_prewarm=$(since "$t")
t=$(now)
case $kind in
seqscan)
	got=$(sql -c "SET parallel_setup_cost = 0; SET min_parallel_table_scan_size = 0;
		SELECT $checksum FROM t") && want=$(cat "$dir/expected")
	;;
index)
	got=$(sql -c "SET enable_seqscan = off; SET enable_bitmapscan = off;
		SET max_parallel_workers_per_gather = 0;
		SELECT $checksum FROM (SELECT pad FROM t WHERE id > 0 ORDER BY id) s") &&
		want=$(cat "$dir/expected")
	;;
point)
	got=$(sql -c "SET enable_seqscan = off; SET max_parallel_workers_per_gather = 0;
		$point" | tail -n 1) && want=$(cat "$dir/expected-point")
	;;
*)
	echo "pgpool: unknown run '$kind' (seqscan, index, point)" >&2
	exit 2
	;;
esac || exit 1
ph_query=$(since "$t")
bad=0
[ "$got" = "$want" ] || {
	echo "pgpool: $kind read back '$got', setup wrote '$want'" >&2
	bad=1
}
trap - EXIT
server_down
# The server's processes (children of this shell, waited for) and psql.
# (times here, not in a command substitution: a subshell has its own.)
times >"$dir/times"
user_s=$(awk 'NR == 2 { split($1, m, "m"); sub("s", "", m[2]); print m[1] * 60 + m[2] }' "$dir/times")
printf '{"phases": {"prewarm": %s, "%s": %s}, "bad": %d, "user_s": %s}\n' \
	"$ph_prewarm" "$kind" "$ph_query" "$bad" "${user_s:-0}"
[ $bad -eq 0 ] || exit 3
