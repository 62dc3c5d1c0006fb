#!/usr/bin/env bash
# leap-timeout: 65
# SPDX-License-Identifier: MIT
# shellcheck disable=SC2154 # NAME_pid and NAME_addr (A_pid, B_addr...) are set by backend_memd
# Fault injection under pipelining: two leap-memd servers at r = 2 with an
# emulated 20 us RTT, and leap-memctl stress from 6 threads at once (demand
# reads, rewrites and whole-stripe prefetch-class reads, many requests in
# flight on every connection).  Each round, at random points, one server's
# connections are cut (SIGUSR1) or it is frozen (SIGSTOP, then SIGCONT), and
# one server is SIGKILLed and restarted empty on its port.  Every page read
# during the run is checked against the generation last written, and at the
# end every page is read back and checked: nothing wrong, nothing lost.
# FAULT_ROUNDS (default 4) and FAULT_SEED (default: random, printed) repeat
# a run exactly.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"

MEMD=$root/bin/leap-memd
CTL=$root/bin/leap-memctl
for b in "$MEMD" "$CTL"; do
	[ -x "$b" ] || bail_out "$b not built (run make)"
done
fixture_init
tmp=$FX_STATE
MLOCK=
[ "$(id -u)" -eq 0 ] || MLOCK=--no-mlock
ROUNDS=${FAULT_ROUNDS:-4}
SEED=${FAULT_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
RANDOM=$SEED
note "seed $SEED (FAULT_SEED=$SEED repeats this run), $ROUNDS rounds"

head -c 48 /dev/urandom | base64 >"$tmp/secret"
chmod 600 "$tmp/secret"

# start_memd NAME [ADDR]: sets NAME_pid and NAME_addr.
start_memd()
{
	local name=$1 addr=${2:-127.0.0.1:0} i
	rm -f "$tmp/$name.port"
	"$MEMD" --size 64M --listen "$addr" --port-file "$tmp/$name.port" --delay-us 20 \
		--secret-file "$tmp/secret" $MLOCK 2>>"$tmp/$name.log" &
	eval "${name}_pid=$!"
	fixture_track_pid "$!"
	for ((i = 0; i < 50; i++)); do
		[ -s "$tmp/$name.port" ] && break
		sleep 0.1
	done
	eval "${name}_addr=$(cat "$tmp/$name.port" 2>/dev/null)"
	[ -s "$tmp/$name.port" ]
}

# A random pause of 300..1299 ms.
pause()
{
	sleep "$(printf '%d.%03d' $(((300 + RANDOM % 1000) / 1000)) $(((300 + RANDOM % 1000) % 1000)))"
}

# fault: one non-destructive fault on a random server.
fault()
{
	local who=$((RANDOM % 2)) pid
	pid=$([ $who -eq 0 ] && echo "$A_pid" || echo "$B_pid")
	if ((RANDOM % 2)); then
		note "  cut the connections of server $who (SIGUSR1)"
		kill -USR1 "$pid"
	else
		note "  freeze server $who (SIGSTOP)"
		kill -STOP "$pid"
		pause
		pause
		kill -CONT "$pid"
	fi
}

# crash: SIGKILL a random server and restart it, empty, on its port.
crash()
{
	local who=$((RANDOM % 2))
	if [ $who -eq 0 ]; then
		note "  SIGKILL server 0 and restart it"
		kill -KILL "$A_pid"
		wait "$A_pid" 2>/dev/null
		pause
		start_memd A "$A_addr" || bail_out "leap-memd A did not restart"
	else
		note "  SIGKILL server 1 and restart it"
		kill -KILL "$B_pid"
		wait "$B_pid" 2>/dev/null
		pause
		start_memd B "$B_addr" || bail_out "leap-memd B did not restart"
	fi
}

start_memd A || bail_out "leap-memd A did not start: $(cat "$tmp/A.log")"
start_memd B || bail_out "leap-memd B did not start: $(cat "$tmp/B.log")"

for ((round = 1; round <= ROUNDS; round++)); do
	note "round $round"
	# One device id for every round: each run's fill rewrites the same
	# slots, so the servers (64 MiB) never fill up across rounds.
	run_timeout 60 "$CTL" -k "$tmp/secret" -s "$A_addr" -s "$B_addr" -r 2 -d 1 \
		-n 6000 --threads 6 --prefetch-pct 20 --write-pct 30 --conns 2 --window 16 \
		--seconds 6 stress >"$tmp/st" 2>"$tmp/st.err" &
	p=$!
	pause
	# The crash first or last, at random; the re-replication thread copies
	# the restarted server's pages back in the second between faults, so
	# no page is ever on a frozen or dead server only.
	if ((RANDOM % 2)); then
		crash
		sleep 1.5
		fault
	else
		fault
		pause
		crash
	fi
	wait "$p"
	rc=$?
	is "$rc" 0 "round $round: the stress run succeeded under faults" ||
		diag "$(grep -v -e "lost page" -e "similar errors" "$tmp/st.err" | head -60)"
	like "$(cat "$tmp/st")" "corrupt=0 io_errors=0" "round $round: no wrong page, no I/O error" ||
		diag "$(cat "$tmp/st")"
	like "$(cat "$tmp/st")" "verified_at_end=6000" "round $round: all 6000 pages read back and checked at the end"
	like "$(cat "$tmp/st")" "peak_inflight=([2-9]|[1-9][0-9])" \
		"round $round: requests were pipelined ($(grep -o 'peak_inflight=[0-9]*' "$tmp/st"))"
done
kill "$A_pid" "$B_pid"
wait "$A_pid" "$B_pid"
ok $? "servers stop cleanly"
done_testing
