#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# shellcheck disable=SC2154 # TAG_hits, TAG_misses, TAG_wall are set by pattern_run (eval)
# tests/vm/guest-nbd.sh REPO MODROOT: what tests/sys/guest-6.1.t (part nbd) runs in
# a guest (tests/vm/boot.sh): real swap on leap-swapd's NBD frontend.
# MODROOT is the extracted kernel tree's root (MODROOT/lib/modules/KVER):
# the guest's root is the host's, so `modprobe -d MODROOT` finds the
# guest kernel's modules.  TAP goes to /run/leapvm/guest.tap.
#
#   nbd loads; leap-memd (loopback) and leap-swapd --frontend nbd start;
#   the device has the right size and the daemon's pid; TRIM (blkdiscard)
#   zeroes exactly its range and drops prefetched copies from the cache;
#   mkswap/swapon; leap-workload (every page checksummed, exit 3 on a bad
#   one) over 32M in a 12M cgroup-v2 memory limit, seq without and with an
#   oracle pushing PREFETCH on the control socket (the cache must be hit,
#   reads from the servers must drop); SIGTERM refused under swap; swapoff; SIGTERM
#   disconnects; nothing left (device unconfigured, daemons gone, cgroups
#   removed).
# boot.sh runs it with /bin/sh (dash).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -uo pipefail
repo=${1:?usage: guest-nbd.sh REPO MODROOT}
modroot=${2:?usage: guest-nbd.sh REPO MODROOT}
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"
# The host relays this file (the console also carries kernel messages).
out=${LEAPVM_OUT:-/run/leapvm}   # where the TAP and the logs go
exec >"$out/guest.tap" 2>&1
BIN=$repo/bin
tmp=$(mktemp -d /tmp/guest-nbd.XXXXXX)
cg=/sys/fs/cgroup/leap-nbd-t
dev= memd_pid= swapd_pid=
FOOT=32M LIMIT=12M

teardown()
{
	local i
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
	rm -rf "$tmp"
}
trap teardown EXIT

send_ctl()
{
	timeout -k 5 20 python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n"); print(s.makefile().readline().strip())' "$tmp/ctl" "$1"
}
stat_ctl()
{
	send_ctl STATS | tr ' ' '\n' | sed -n "s/^$1=//p"
}

note "kernel $(uname -r)"
modprobe -d "$modroot" nbd
ok $? "modprobe nbd (from the extracted 6.1 tree)" || bail_out "no nbd module"
[ -b /dev/nbd0 ]
ok $? "/dev/nbd0 exists"

# The guest starts with every link down; leap-memd binds loopback.
ip link set lo up
ok $? "loopback up"
head -c 48 /dev/urandom | base64 >"$tmp/secret"
chmod 600 "$tmp/secret"
"$BIN/leap-memd" --size 160M --listen 127.0.0.1:0 --port-file "$tmp/memd.port" \
	--secret-file "$tmp/secret" </dev/null 2>"$tmp/memd.log" &
memd_pid=$!
for ((i = 0; i < 100; i++)); do
	[ -s "$tmp/memd.port" ] && break
	sleep 0.1
done
[ -s "$tmp/memd.port" ] || bail_out "leap-memd did not start: $(cat "$tmp/memd.log")"
addr=$(cat "$tmp/memd.port")

"$BIN/leap-swapd" --frontend nbd --size 128M -s "$addr" --secret-file "$tmp/secret" \
	--control "$tmp/ctl" --cache-pages 4096 --threads 4 </dev/null 2>"$tmp/swapd.log" &
swapd_pid=$!
for ((i = 0; i < 100; i++)); do
	grep -q 'serving /dev/nbd' "$tmp/swapd.log" && break
	kill -0 "$swapd_pid" 2>/dev/null || break
	sleep 0.1
done
dev=$(sed -n 's|.*serving \(/dev/nbd[0-9]*\) .*|\1|p' "$tmp/swapd.log")
[ -n "$dev" ]
ok $? "leap-swapd --frontend nbd serves a device (${dev:-none})" ||
	bail_out "leap-swapd --frontend nbd did not start: $(cat "$tmp/swapd.log")"
nbd=${dev#/dev/}
is "$(cat /sys/block/"$nbd"/size)" $((128 << 11)) "$dev has 128 MiB"
is "$(cat /sys/block/"$nbd"/pid 2>/dev/null)" "$swapd_pid" "$dev is served by leap-swapd's pid"
is "$(cat /sys/block/"$nbd"/queue/logical_block_size)" 4096 "$dev has 4 KiB blocks"
cmp_ok "$(cat /sys/block/"$nbd"/queue/discard_max_bytes)" '>' 0 "$dev accepts discard"
cmp_ok "$(cat /sys/block/"$nbd"/queue/max_sectors_kb)" '<=' 1024 \
	"requests capped to leap-swapd's buffers"

# ---- data path and TRIM, before swap ---------------------------------------
# A pattern over the first 4 MiB, direct I/O both ways (no page cache).
python3 -c 'import sys
for i in range(1024): sys.stdout.buffer.write(i.to_bytes(4, "little") * 1024)' >"$tmp/pat"
dd if="$tmp/pat" of="$dev" bs=1M oflag=direct status=none
dd if="$dev" of="$tmp/back" bs=1M count=4 iflag=direct status=none
cmp -s "$tmp/pat" "$tmp/back"
ok $? "4 MiB written and read back intact through NBD"
# Pages 256..511 prefetched into the cache, then discarded: a read must
# see zeros, not the cached copy.
send_ctl "PREFETCH $(seq -s ' ' 256 511)" >/dev/null
for ((i = 0; i < 50; i++)); do
	[ "$(stat_ctl cached)" -ge 256 ] 2>/dev/null && break
	sleep 0.1
done
cmp_ok "$(stat_ctl cached)" '>=' 256 "pages 256..511 are in the prefetch cache"
blkdiscard -o $((1 << 20)) -l $((1 << 20)) "$dev"
ok $? "blkdiscard of 1 MiB at 1 MiB"
dd if="$dev" of="$tmp/back" bs=1M count=4 iflag=direct status=none
python3 - "$tmp/pat" "$tmp/back" <<'PY'
import sys
a, b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
M = 1 << 20
sys.exit(0 if b[:M] == a[:M] and b[M:2 * M] == bytes(M) and b[2 * M:] == a[2 * M:] else 1)
PY
ok $? "the discarded range reads as zeros, the rest is intact (no stale cached copy)"
is "$(stat_ctl cached)" 0 "discard dropped the prefetched pages from the cache"
is "$(stat_ctl pages_discarded)" 256 "STATS counts the 256 discarded pages"
note "$(send_ctl STATS)"

# ---- swap ---------------------------------------------------------------------
mkswap -q "$dev" >/dev/null && swapon -p 32767 "$dev"
ok $? "mkswap + swapon $dev" || bail_out "no swap on $dev"
note "$(cat /proc/swaps)"

echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
mkdir -p "$cg" && echo +memory >"$cg/cgroup.subtree_control"
ok $? "cgroup v2 with the memory controller at $cg" || bail_out "no memory cgroup"
n=0
# seq without, then with, an oracle that reads the workload's pagemap (swap
# type and offset of every swapped-out page) and pushes the next swapped
# pages in address order, which for seq is the order of use, to the
# control socket.
oracle()
{
	timeout -k 5 240 python3 "$repo/tests/sys/helpers/pagemap-oracle.py" "$1" "$tmp/ctl" \
		--select all --max 512 --interval 0.02
}

pattern_run()
{
	local tag=$1 with_oracle=$2 p wl_pid d rc h0 m0 t0 t1
	n=$((n + 1))
	d=$cg/w$n
	mkdir "$d" && echo "$LIMIT" >"$d/memory.max"
	rm -f "$tmp/ready" "$tmp/go"
	timeout -k 5 240 sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$d" \
		"$BIN/leap-workload" --footprint "$FOOT" --pattern seq --passes 2 \
		--ready-file "$tmp/ready" --wait-file "$tmp/go" \
		>"$tmp/wl-$tag.out" 2>"$tmp/wl-$tag.err" &
	p=$!
	for ((i = 0; i < 1200; i++)); do
		[ -e "$tmp/ready" ] && break
		sleep 0.1
	done
	wl_pid=$(cat "$d/cgroup.procs" | head -n 1)
	h0=$(stat_ctl hits)
	m0=$(stat_ctl misses)
	if [ "$with_oracle" = 1 ]; then
		oracle "$wl_pid" >"$tmp/oracle.out" 2>&1 &
		op=$!
	fi
	t0=$(date +%s.%N)
	touch "$tmp/go"
	wait "$p"
	rc=$?
	t1=$(date +%s.%N)
	[ "$with_oracle" = 1 ] && wait "$op"
	rmdir "$d" 2>/dev/null
	eval "${tag}_hits=$(($(stat_ctl hits) - h0))"
	eval "${tag}_misses=$(($(stat_ctl misses) - m0))"
	eval "${tag}_wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')"
	return $rc
}

out0=$(awk '$1 == "pswpout" {print $2}' /proc/vmstat)
in0=$(awk '$1 == "pswpin" {print $2}' /proc/vmstat)
pattern_run plain 0
is "$?" 0 "seq over $FOOT in a $LIMIT memcg, no prefetch: exit 0, every page verified" ||
	diag "$(tail -n 5 "$tmp/wl-plain.err")"
out1=$(awk '$1 == "pswpout" {print $2}' /proc/vmstat)
in1=$(awk '$1 == "pswpin" {print $2}' /proc/vmstat)
cmp_ok $((out1 - out0)) '>' 5000 "it swapped: pswpout +$((out1 - out0)), pswpin +$((in1 - in0))"
note "no prefetch: cache hits $plain_hits, backend reads not from the cache $plain_misses, wall ${plain_wall}s; $(cat "$tmp/wl-plain.out")"
pattern_run pf 1
is "$?" 0 "seq with PREFETCH on the control socket: exit 0, every page verified" ||
	diag "$(tail -n 5 "$tmp/wl-pf.err")"
note "prefetch: cache hits $pf_hits, backend reads not from the cache $pf_misses, wall ${pf_wall}s; $(cat "$tmp/oracle.out"); $(cat "$tmp/wl-pf.out")"
cmp_ok "$pf_hits" '>' 100 "prefetched pages were hit ($pf_hits)"
cmp_ok "$pf_misses" '<' "$plain_misses" "fewer cache misses with prefetch ($pf_misses < $plain_misses)"
is "$(stat_ctl errors)" 0 "leap-swapd counted no request errors"
note "$(send_ctl STATS)"

# ---- stop ------------------------------------------------------------------------
kill -TERM "$swapd_pid"
sleep 0.5
kill -TERM "$swapd_pid"
sleep 0.5
kill -0 "$swapd_pid"
ok $? "leap-swapd refuses SIGTERM (twice) while $dev is swap"
like "$(cat "$tmp/swapd.log")" "not stopping: $dev is in use" "... and says why"
swapoff "$dev"
ok $? "swapoff $dev (every swapped page read back)"
kill -TERM "$swapd_pid"
for ((i = 0; i < 100; i++)); do
	kill -0 "$swapd_pid" 2>/dev/null || break
	sleep 0.1
done
wait "$swapd_pid"
is "$?" 0 "leap-swapd disconnected and exited 0 after swapoff"
swapd_pid=
like "$(cat "$tmp/swapd.log")" "leap-swapd: reads=[0-9]+ writes=[0-9]+ .*errors=0 .*io_errors=0" \
	"leap-swapd served every request without an I/O error"
note "$(grep -E 'leap-swapd: (reads=|nbd)' "$tmp/swapd.log")"
[ ! -e /sys/block/"$nbd"/pid ]
ok $? "$dev has no server any more"
is "$(cat /sys/block/"$nbd"/size)" 0 "$dev is unconfigured (size 0)"
grep -q nbd /proc/swaps
isnt "$?" 0 "no NBD swap left"
kill -TERM "$memd_pid"
wait "$memd_pid"
memd_pid=
rmdir "$cg" 2>/dev/null
[ ! -d "$cg" ]
ok $? "test cgroups removed"
# One name per pgrep: procps refuses a pattern longer than 15 characters
# (the length of a process name) and matches nothing.
left=$(for p in leap-swapd leap-memd leap-workload; do pgrep -x "$p"; done)
is "$left" "" "no daemon or workload left"
done_testing
