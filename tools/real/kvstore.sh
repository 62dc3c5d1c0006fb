#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Redis program for tools/bench-real.sh: an in-memory key-value store whose
# data is larger than the run's memory limit.  Debian's redis-server (with
# redis-tools: redis-cli, redis-benchmark, redis-check-rdb), run as a
# child of this script on a Unix socket only (no TCP port), so that it
# stays in the caller's cgroup.
#
#     kvstore.sh DIR MIB snapshot|get|scan
#
# Loads ~MIB MiB of keys (phase "load": SET key:NNNNNNNNNNNN through
# redis-cli --pipe, 400-byte values made from the key's number), then:
#   snapshot  BGSAVE: a forked child walks every key and writes the RDB file
#             (uncompressed), checked with redis-check-rdb (phase "snapshot")
#   get       redis-benchmark: GETs of random keys, a half of the keyspace's
#             count, 4 clients, 16 in flight each (phase "get")
#   scan      redis-cli --bigkeys: SCAN over the whole keyspace, TYPE and
#             STRLEN of every key (phase "scan")
# Then the key count must be what was loaded, and 2,000 keys spread over the
# keyspace must read back as written.  Prints one JSON line (phases, the
# server's and clients' user CPU, "bad"); exits 3 on a wrong value, 2 when
# Redis is not installed.
set -u
for c in redis-server redis-cli redis-benchmark redis-check-rdb; do
	command -v "$c" >/dev/null || {
		echo "kvstore: $c missing (apt-get install redis-server redis-tools)" >&2
		exit 2
	}
done
[ $# -eq 3 ] && [[ $2 =~ ^[1-9][0-9]*$ ]] || {
	echo "usage: kvstore.sh DIR MIB snapshot|get|scan" >&2
	exit 2
}
dir=$1 mib=$2 kind=$3
case $kind in snapshot | get | scan) ;; *)
	echo "kvstore: unknown run '$kind' (snapshot, get, scan)" >&2
	exit 2
	;;
esac
# ~550 bytes a key in the server: the 400-byte value (jemalloc's 448
# class), the key, its dict entry and object header.
keys=$((mib * 1024 * 1024 / 550))
sock=$dir/redis.sock
now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.4f", a - b }'; }
cli() { redis-cli -s "$sock" "$@"; }
mkdir -p "$dir" && rm -f "$dir/dump.rdb" "$sock" || exit 1

redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 --save '' \
	--appendonly no --dir "$dir" --dbfilename dump.rdb --rdbcompression no \
	--daemonize no --logfile "$dir/server.log" >/dev/null 2>&1 &
server=$!
server_down()
{
	kill -TERM "$server" 2>/dev/null
	wait "$server"
}
trap 'server_down' EXIT
trap 'exit 143' TERM INT # (the EXIT trap then stops the server)
for _ in $(seq 300); do
	[ "$(cli ping 2>/dev/null)" = PONG ] && break
	kill -0 "$server" 2>/dev/null || break
	sleep 0.1
done
[ "$(cli ping 2>/dev/null)" = PONG ] || {
	echo "kvstore: redis-server did not start: $(tail -n 5 "$dir/server.log")" >&2
	exit 1
}

# The value of key i: its 12-digit number and a bar, repeated to 400 bytes.
value_awk='function val(i,   s, u) { u = sprintf("%012d|", i); s = u u u u u u u u;
	s = s s s; return substr(s s, 1, 400) }'

t=$(now)
awk -v n="$keys" "$value_awk"'
BEGIN { for (i = 0; i < n; i++) {
	k = sprintf("key:%012d", i); v = val(i)
	printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(k), k, length(v), v } }' |
	cli --pipe >"$dir/load.log" 2>&1 || {
	echo "kvstore: the load failed: $(tail -n 3 "$dir/load.log")" >&2
	exit 1
}
ph_load=$(since "$t")

bad=0
t=$(now)
case $kind in
snapshot)
	cli bgsave >/dev/null || exit 1
	# The child is done once the server says so (INFO persistence).
	while cli info persistence | grep -q '^rdb_bgsave_in_progress:1'; do
		sleep 0.02
	done
	ph=$(since "$t")
	cli info persistence | grep -q '^rdb_last_bgsave_status:ok' &&
		redis-check-rdb "$dir/dump.rdb" >"$dir/check-rdb.log" 2>&1 || {
		echo "kvstore: the snapshot is not sound: $(tail -n 3 "$dir/check-rdb.log" 2>/dev/null)" >&2
		bad=1
	}
	;;
get)
	redis-benchmark -s "$sock" -t get -r "$keys" -n $((keys / 2)) -c 4 -P 16 -q \
		>"$dir/bench.log" 2>&1 || exit 1
	ph=$(since "$t")
	;;
scan)
	sampled=$(cli --bigkeys 2>&1 | sed -n 's/^Sampled \([0-9]*\) keys in the keyspace.*/\1/p')
	ph=$(since "$t")
	[ "$sampled" = "$keys" ] || {
		echo "kvstore: the scan saw ${sampled:-no} keys of $keys" >&2
		bad=1
	}
	;;
esac

n=$(cli dbsize)
[ "$n" = "$keys" ] || {
	echo "kvstore: $n keys in the store, $keys loaded" >&2
	bad=1
}
step=$((keys / 2000 > 0 ? keys / 2000 : 1))
awk -v n="$keys" -v s="$step" 'BEGIN { for (i = 0; i < n; i += s) printf "GET key:%012d\n", i }' |
	cli >"$dir/got" 2>&1
awk -v n="$keys" -v s="$step" "$value_awk"'BEGIN { for (i = 0; i < n; i += s) print val(i) }' \
	>"$dir/want"
cmp -s "$dir/got" "$dir/want" || {
	echo "kvstore: keys read back wrong: $(cmp "$dir/got" "$dir/want" 2>&1 | head -n 1)" >&2
	bad=1
}
trap - EXIT
server_down
# The server (a child of this shell, waited for) and the clients.
times >"$dir/times"
user_s=$(awk 'NR == 2 { split($1, m, "m"); sub("s", "", m[2]); print m[1] * 60 + m[2] }' "$dir/times")
printf '{"phases": {"load": %s, "%s": %s}, "keys": %d, "bad": %d, "user_s": %s}\n' \
	"$ph_load" "$kind" "$ph" "$keys" "$bad" "${user_s:-0}"
[ $bad -eq 0 ] || exit 3
