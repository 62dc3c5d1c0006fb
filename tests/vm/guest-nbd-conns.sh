#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/vm/guest-nbd-conns.sh REPO MODROOT [REPS]: what tools/bench-nbd-conns.sh
# runs in the 6.1 guest: page-in throughput of /dev/nbdN through leap-swapd
# with 1, 2 and 4 NBD connections (--nbd-connections), at 0 and 20 us of
# emulated RTT (leap-memd --delay-us), 1 and 4 readers
# (tools/pagein-latency.py: 4 KiB O_DIRECT reads at random pages, what a
# swap-in costs the device).  The rows alternate, REPS (default 3) times;
# each line goes to /run/leapvm/conns.txt.  TCG: compare ratios only.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -uo pipefail
repo=${1:?usage: guest-nbd-conns.sh REPO MODROOT [REPS]}
modroot=${2:?usage: guest-nbd-conns.sh REPO MODROOT [REPS]}
REPS=${3:-3}
BIN=$repo/bin
out=/run/leapvm/conns.txt
tmp=$(mktemp -d /tmp/guest-nbd-conns.XXXXXX)
memd_pid= swapd_pid=
exec 2>>/run/leapvm/guest.log
: >"$out"

stop()
{
	local pid=$1 i
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}
trap 'stop "$swapd_pid"; stop "$memd_pid"; rm -rf "$tmp"' EXIT

modprobe -d "$modroot" nbd || exit 1
ip link set lo up
head -c 48 /dev/urandom | base64 >"$tmp/secret"
chmod 600 "$tmp/secret"
echo "# kernel $(uname -r), $(nproc) CPUs" >>"$out"
for rtt in 0 20; do
	stop "$memd_pid"
	rm -f "$tmp/memd.port"
	"$BIN/leap-memd" --size 160M --listen 127.0.0.1:0 --port-file "$tmp/memd.port" \
		--delay-us "$rtt" --secret-file "$tmp/secret" </dev/null 2>"$tmp/memd.log" &
	memd_pid=$!
	for ((i = 0; i < 100; i++)); do
		[ -s "$tmp/memd.port" ] && break
		sleep 0.1
	done
	addr=$(cat "$tmp/memd.port")
	for ((rep = 1; rep <= REPS; rep++)); do
		for c in 1 2 4; do
			"$BIN/leap-swapd" --frontend nbd --size 128M -s "$addr" \
				--secret-file "$tmp/secret" --nbd-connections "$c" --threads 8 \
				</dev/null 2>"$tmp/swapd.log" &
			swapd_pid=$!
			for ((i = 0; i < 100; i++)); do
				grep -q 'serving /dev/nbd' "$tmp/swapd.log" && break
				sleep 0.1
			done
			dev=$(sed -n 's|.*serving \(/dev/nbd[0-9]*\) .*|\1|p' "$tmp/swapd.log")
			[ -n "$dev" ] || { cat "$tmp/swapd.log" >&2; exit 1; }
			# 64 MiB written, so reads reach the server.
			dd if=/dev/urandom of="$dev" bs=1M count=64 oflag=direct status=none
			line=$(python3 "$repo/tools/pagein-latency.py" "$dev" --pages 16384 \
				--samples 3000 --threads 4 --name "c$c")
			echo "rtt_us=$rtt rep=$rep conns=$c $line" >>"$out"
			stop "$swapd_pid"
			swapd_pid=
		done
	done
done
echo "# done" >>"$out"
