#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/vm/guest-nbd-restart.sh REPO MODROOT [ROUNDS [KILLS [PASSES]]]: what
# tests/sys/guest-6.1.t runs in the 6.1 guest (part nbd-restart): leap-swapd SIGKILLed
# under heavy swapping and taken over by a new one (--reconnect, --state),
# with no page lost and no process killed.  TAP to /run/leapvm/guest.tap.
#
#   nbd and ext4 load; /dev/vda (the boot's scratch disk) gets an ext4 for
#   the state file (a disk filesystem, as documented: not tmpfs); leap-memd
#   on loopback; leap-swapd --frontend nbd --state --nbd-connections 2
#   --nbd-dead-timeout 120; swapon.  Each round: leap-workload (every page
#   checksummed with its generation: a lost or stale write is exit 3) over
#   48M in a 12M memory cgroup, random order, PASSES passes (default 2),
#   rewriting on every other pass; once it swaps hard, leap-swapd is SIGKILLed KILLS times, each
#   time restarted after 1-3 s with --reconnect /dev/nbdN and the same
#   --state.  The workload must exit 0 and the cgroup see no OOM kill; the
#   kernel must log no I/O error on the device.  At the end swapoff reads
#   every swapped page back, and leap-swapd stops cleanly.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -uo pipefail
repo=${1:?usage: guest-nbd-restart.sh REPO MODROOT [ROUNDS] [KILLS]}
modroot=${2:?usage: guest-nbd-restart.sh REPO MODROOT [ROUNDS] [KILLS]}
ROUNDS=${3:-1}
KILLS=${4:-2}
PASSES=${5:-2}
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"
# shellcheck source=tests/vm/guest-oom.sh
. "$repo/tests/vm/guest-oom.sh"
out=${LEAPVM_OUT:-/run/leapvm}   # where the TAP and the logs go
disk=${LEAPVM_DISK:-/dev/vda} # the boot's scratch disk
exec >"$out/guest.tap" 2>&1
BIN=$repo/bin
tmp=$(mktemp -d /tmp/guest-nbd-restart.XXXXXX)
cg=/sys/fs/cgroup/leap-nbd-restart
sdisk=/tmp/state-disk
dev= memd_pid= swapd_pid=
FOOT=48M LIMIT=12M SIZE=256M

teardown()
{
	local i p
	set +e
	if [ -n "$dev" ] && grep -q "^$dev " /proc/swaps; then
		swapoff "$dev"
	fi
	for d in "$cg"/w*; do
		[ -d "$d" ] || continue
		for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -KILL "$p"; done
		sleep 0.2
		rmdir "$d"
	done
	[ -d "$cg" ] && rmdir "$cg"
	if [ -n "$swapd_pid" ] && kill -0 "$swapd_pid" 2>/dev/null; then
		kill -TERM "$swapd_pid"
		for ((i = 0; i < 100; i++)); do
			kill -0 "$swapd_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$swapd_pid" 2>/dev/null
	fi
	[ -n "$memd_pid" ] && kill -TERM "$memd_pid" 2>/dev/null
	cp "$tmp"/*.log "$tmp"/*.out "$tmp"/*.err "$out"/ 2>/dev/null
	dmesg >"$out/dmesg.txt" 2>&1
	mountpoint -q "$sdisk" && umount "$sdisk"
	rm -rf "$tmp"
}
trap teardown EXIT

note "kernel $(uname -r), $(nproc) CPUs"
modprobe -d "$modroot" nbd
ok $? "modprobe nbd" || bail_out "no nbd module"
ip link set lo up

# The state file on a disk filesystem: tmpfs pages could be swapped out to
# this very device while no leap-swapd holds them locked.
state=$sdisk/swapd.state
if modprobe -d "$modroot" ext4 2>/dev/null && [ -b "$disk" ] &&
	mkfs.ext4 -q -F "$disk" >/dev/null 2>&1 && mkdir -p "$sdisk" &&
	mount -t ext4 "$disk" "$sdisk"; then
	pass "state file on ext4 ($disk)"
else
	fail "state file on ext4 ($disk)"
	bail_out "no ext4 for the state file"
fi

head -c 48 /dev/urandom | base64 >"$tmp/secret"
chmod 600 "$tmp/secret"
"$BIN/leap-memd" --size 320M --listen 127.0.0.1:0 --port-file "$tmp/memd.port" \
	--secret-file "$tmp/secret" </dev/null 2>"$tmp/memd.log" &
memd_pid=$!
for ((i = 0; i < 100; i++)); do
	[ -s "$tmp/memd.port" ] && break
	sleep 0.1
done
[ -s "$tmp/memd.port" ] || bail_out "leap-memd did not start: $(cat "$tmp/memd.log")"
addr=$(cat "$tmp/memd.port")

# start_swapd LOG ARGS...: leap-swapd on the device, waiting for its
# "serving" or "reconnected to" line; sets swapd_pid.
start_swapd()
{
	local log=$1 i
	shift
	"$BIN/leap-swapd" --frontend nbd --size "$SIZE" -s "$addr" --secret-file "$tmp/secret" \
		--state "$state" --nbd-connections 2 --nbd-dead-timeout 120 --threads 8 "$@" \
		</dev/null 2>"$log" &
	swapd_pid=$!
	for ((i = 0; i < 300; i++)); do
		grep -qE '(serving|reconnected to) /dev/nbd' "$log" && return 0
		kill -0 "$swapd_pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

start_swapd "$tmp/swapd-0.log" || bail_out "leap-swapd did not start: $(cat "$tmp/swapd-0.log")"
dev=$(sed -n 's|.*serving \(/dev/nbd[0-9]*\) .*|\1|p' "$tmp/swapd-0.log")
[ -n "$dev" ]
ok $? "leap-swapd serves a device (${dev:-none}) with 2 connections and a state file" ||
	bail_out "no device in: $(cat "$tmp/swapd-0.log")"
like "$(cat "$tmp/swapd-0.log")" "2 connections, [0-9]+ workers, dead-connection timeout 120 s" \
	"... as it says"
is "$(ls /sys/block/"${dev#/dev/}"/mq | wc -l)" 2 "$dev has one blk-mq hardware queue per connection"
mkswap -q "$dev" >/dev/null && swapon -p 32767 "$dev"
ok $? "mkswap + swapon $dev" || bail_out "no swap on $dev"

echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
mkdir -p "$cg" && echo +memory >"$cg/cgroup.subtree_control"
ok $? "memory cgroup at $cg" || bail_out "no memory cgroup"

restarts=0
for ((round = 1; round <= ROUNDS; round++)); do
	d=$cg/w$round
	mkdir "$d" && echo "$LIMIT" >"$d/memory.max"
	rm -f "$tmp/ready" "$tmp/go"
	timeout -k 5 900 sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$d" \
		"$BIN/leap-workload" --footprint "$FOOT" --pattern random --passes "$PASSES" \
		--ready-file "$tmp/ready" --wait-file "$tmp/go" \
		>"$tmp/wl-$round.out" 2>"$tmp/wl-$round.err" &
	wl=$!
	for ((i = 0; i < 3000; i++)); do
		[ -e "$tmp/ready" ] && break
		kill -0 "$wl" 2>/dev/null || break
		sleep 0.1
	done
	touch "$tmp/go"
	for ((k = 1; k <= KILLS; k++)); do
		# Wait for heavy swapping: a few thousand pages in since the last kill.
		in0=$(awk '$1 == "pswpin" {print $2}' /proc/vmstat)
		for ((i = 0; i < 600; i++)); do
			in1=$(awk '$1 == "pswpin" {print $2}' /proc/vmstat)
			((in1 - in0 >= 3000)) && break
			kill -0 "$wl" 2>/dev/null || break
			sleep 0.2
		done
		if ! kill -0 "$wl" 2>/dev/null; then
			note "round $round: the workload ended before kill $k"
			break
		fi
		kill -KILL "$swapd_pid"
		wait "$swapd_pid" 2>/dev/null
		t0=$(date +%s.%N)
		sleep "1.$((RANDOM % 10))"
		restarts=$((restarts + 1))
		start_swapd "$tmp/swapd-$restarts.log" --reconnect "$dev"
		ok $? "round $round, kill $k (pswpin +$((in1 - in0)) since the last): restarted with --reconnect $dev" ||
			diag "$(tail -n 5 "$tmp/swapd-$restarts.log")"
		note "  back after $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s; $(grep -E 'reattaching' "$tmp/swapd-$restarts.log" | sed 's/^leap-swapd: //')"
	done
	wait "$wl"
	rc=$?
	is "$rc" 0 "round $round: the workload finished, every page verified (exit $rc)" ||
		diag "$(tail -n 5 "$tmp/wl-$round.err")"
	is "$(memcg_oom_kills "$d")" 0 \
		"round $round: no OOM kill in its cgroup"
	note "round $round: $(cat "$tmp/wl-$round.out" | tr '\n' ' ')"
	rmdir "$d" 2>/dev/null
done
cmp_ok "$restarts" '>=' "$ROUNDS" "leap-swapd was killed and taken over $restarts times"
nbdn=${dev#/dev/}
errs=$(dmesg | grep -E "($nbdn|swap).*([Ee]rror|I/O)" | grep -vE 'Possible stuck request|Receive control failed|Dead connection' | head -n 5)
is "$errs" "" "the kernel logged no I/O error on $dev or swap"
note "kernel about $dev: $(dmesg | grep "$nbdn" | sed 's/^\[[^]]*\] //' | sort | uniq -c | sort -rn | tr -s ' ' | tr '\n' ';')"
swapoff "$dev"
ok $? "swapoff $dev: every swapped page read back"
kill -TERM "$swapd_pid"
for ((i = 0; i < 100; i++)); do
	kill -0 "$swapd_pid" 2>/dev/null || break
	sleep 0.1
done
wait "$swapd_pid"
is "$?" 0 "the last leap-swapd disconnected and exited 0"
like "$(cat "$tmp/swapd-$restarts.log")" "io_errors=0" "... with no I/O error from the servers"
swapd_pid=
is "$(cat /sys/block/"$nbdn"/size)" 0 "$dev is unconfigured"
done_testing
