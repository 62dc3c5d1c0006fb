#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/vm/guest-ublk.sh REPO MODROOT [CRASH_RUNS [PAGEIN]]: what tests/sys/guest-6.12.t (part ublk) runs in
# the 6.12 guest (tests/vm/boot.sh): swap on leap-swapd's ublk frontend.
# MODROOT is the extracted kernel tree's root (MODROOT/lib/modules/KVER).
# TAP goes to /run/leapvm/guest.tap.  CRASH_RUNS (default 3):
# SIGKILL/recover rounds; PAGEIN 0 skips the ublk-vs-NBD page-in
# measurement (default 1).
#
#   ublk_drv loads; two leap-memd (loopback) and leap-swapd --frontend
#   ublk with two replicas and --state on an ext4 on the guest's disk
#   /dev/vda start with one queue per CPU and depth 64; the disk has the size, 4 KiB
#   blocks, discard, the queues and the depth asked for; data written with
#   direct I/O reads back, a discard reads as zeros; mkswap/swapon; a
#   4-thread random workload over FOOT in a LIMIT memcg (every page
#   checksummed, exit 3 on a bad one) with the disk's in-flight count
#   sampled (more than one request at once); crash survival: CRASH_RUNS times, SIGKILL leap-swapd while
#   the workload swaps, restart it with --recover, the workload finishes
#   with every page verified and is not killed (--recover reattaches
#   through --state); the same once more with one replica and no --state
#   (every page counted written) on a second device; page-in throughput of 1
#   and 4 readers through ublk and through the NBD frontend; SIGTERM
#   refused under swap; swapoff; SIGTERM stops and deletes the disk.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -uo pipefail
repo=${1:?usage: guest-ublk.sh REPO MODROOT}
modroot=${2:?usage: guest-ublk.sh REPO MODROOT}
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"
out=${LEAPVM_OUT:-/run/leapvm}   # where the TAP and the logs go
disk=${LEAPVM_DISK:-/dev/vda} # the boot's scratch disk
exec >"$out/guest.tap" 2>&1
BIN=$repo/bin
tmp=$(mktemp -d /tmp/guest-ublk.XXXXXX)
cg=/sys/fs/cgroup/leap-ublk-t
dev= swapd_pid= nbd_pid= state_mnt=
memd_pids=()
FOOT=${FOOT:-32M} LIMIT=${LIMIT:-12M}
CRASH_RUNS=${3:-3}
PAGEIN=${4:-1}
SIZE=192M

teardown()
{
	local i d p
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
	for p in $swapd_pid $nbd_pid; do
		kill -0 "$p" 2>/dev/null || continue
		kill -TERM "$p"
		for ((i = 0; i < 100; i++)); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
	done
	for p in "${memd_pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	[ -n "$state_mnt" ] && umount "$state_mnt"
	cp "$tmp"/*.log "$tmp"/*.out "$tmp"/*.err "$out"/ 2>/dev/null
	dmesg >"$out/dmesg.txt" 2>&1
	rm -rf "$tmp"
}
trap teardown EXIT

note "kernel $(uname -r), $(nproc) CPUs"
modprobe -d "$modroot" ublk_drv
ok $? "modprobe ublk_drv (from the extracted 6.12 tree)" || bail_out "no ublk_drv module"
[ -c /dev/ublk-control ]
ok $? "/dev/ublk-control exists"
mount -t debugfs none /sys/kernel/debug 2>/dev/null

ip link set lo up
head -c 48 /dev/urandom | base64 >"$tmp/secret"
chmod 600 "$tmp/secret"
addrs=()
for m in a b; do
	"$BIN/leap-memd" --size 256M --listen 127.0.0.1:0 --port-file "$tmp/memd-$m.port" \
		--secret-file "$tmp/secret" </dev/null 2>"$tmp/memd-$m.log" &
	memd_pids+=($!)
	for ((i = 0; i < 100; i++)); do
		[ -s "$tmp/memd-$m.port" ] && break
		sleep 0.1
	done
	[ -s "$tmp/memd-$m.port" ] || bail_out "leap-memd did not start: $(cat "$tmp/memd-$m.log")"
	addrs+=("$(cat "$tmp/memd-$m.port")")
done
addr=${addrs[0]}
# The per-page state on a disk filesystem (the guest's virtio disk): on
# tmpfs its pages could be swapped out to the very device whose daemon
# needs them to come back.
# (ext4 is a module in Debian's 6.12.)
modprobe -d "$modroot" ext4 2>"$tmp/fs.err"
if [ -b "$disk" ] && mkfs.ext4 -q -F "$disk" >>"$tmp/fs.err" 2>&1 &&
	mkdir -p "$tmp/state" && mount -t ext4 "$disk" "$tmp/state" 2>>"$tmp/fs.err"; then
	state_mnt=$tmp/state
	pass "ext4 on $disk for the --state file"
else
	bail_out "no disk filesystem for the --state file ($disk): $(cat "$tmp/fs.err")"
fi
SWAPD_ARGS=(--frontend ublk --size "$SIZE" -s "${addrs[0]}" -s "${addrs[1]}" -r 2
	--state "$state_mnt/ublk.state" --secret-file "$tmp/secret")

# start_swapd LOG [ARGS...]: leap-swapd in the background until it prints
# the disk it serves; sets swapd_pid.
start_swapd()
{
	local log=$1
	shift
	"$BIN/leap-swapd" "${SWAPD_ARGS[@]}" "$@" </dev/null 2>"$log" &
	swapd_pid=$!
	for ((i = 0; i < 300; i++)); do
		grep -q 'serving /dev/ublkb' "$log" && return 0
		kill -0 "$swapd_pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

start_swapd "$tmp/swapd.log" --ublk-depth 64 ||
	bail_out "leap-swapd --frontend ublk did not start: $(cat "$tmp/swapd.log")"
dev=$(sed -n 's|.*serving \(/dev/ublkb[0-9]*\) .*|\1|p' "$tmp/swapd.log" | head -n 1)
b=${dev#/dev/}
id=${b#ublkb}
[ -b "$dev" ]
ok $? "leap-swapd --frontend ublk serves a block device (${dev:-none})" ||
	bail_out "no ublk disk in: $(cat "$tmp/swapd.log")"
note "$(grep serving "$tmp/swapd.log")"
is "$(cat /sys/block/"$b"/size)" $((192 << 11)) "$dev has 192 MiB"
is "$(cat /sys/block/"$b"/queue/logical_block_size)" 4096 "$dev has 4 KiB logical blocks"
cmp_ok "$(cat /sys/block/"$b"/queue/discard_max_bytes)" '>' 0 "$dev accepts discard"
nq=$(ls -d /sys/block/"$b"/mq/*/ 2>/dev/null | wc -l)
is "$nq" "$(nproc)" "one hardware queue per CPU ($nq)"
is "$(cat /sys/block/"$b"/queue/nr_requests)" 64 "queue depth 64"

# ---- data path and discard, before swap -------------------------------------
python3 -c 'import sys
for i in range(2048): sys.stdout.buffer.write(i.to_bytes(4, "little") * 1024)' >"$tmp/pat"
dd if="$tmp/pat" of="$dev" bs=1M oflag=direct status=none
dd if="$dev" of="$tmp/back" bs=1M count=8 iflag=direct status=none
cmp -s "$tmp/pat" "$tmp/back"
ok $? "8 MiB written and read back intact through ublk (1 MiB requests)"
blkdiscard -o $((1 << 20)) -l $((1 << 20)) "$dev"
ok $? "blkdiscard of 1 MiB at 1 MiB"
dd if="$dev" of="$tmp/back" bs=1M count=8 iflag=direct status=none
python3 - "$tmp/pat" "$tmp/back" <<'PY'
import sys
a, b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
M = 1 << 20
sys.exit(0 if b[:M] == a[:M] and b[M:2 * M] == bytes(M) and b[2 * M:] == a[2 * M:] else 1)
PY
ok $? "the discarded range reads as zeros, the rest is intact"

# ---- swap ---------------------------------------------------------------------
mkswap -q "$dev" >/dev/null && swapon -p 32767 "$dev"
ok $? "mkswap + swapon $dev" || bail_out "no swap on $dev"
echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
mkdir -p "$cg" && echo +memory >"$cg/cgroup.subtree_control"
ok $? "cgroup v2 with the memory controller at $cg" || bail_out "no memory cgroup"

n=0
# start_workload TAG PATTERN PASSES: leap-workload in a fresh memcg under
# LIMIT, 4 threads; waits for its fill; sets wl (the runner's pid).
start_workload()
{
	local tag=$1 pattern=$2 passes=$3 d
	n=$((n + 1))
	d=$cg/w$n
	mkdir "$d" && echo "$LIMIT" >"$d/memory.max"
	rm -f "$tmp/ready" "$tmp/go"
	timeout -k 5 600 sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$d" \
		"$BIN/leap-workload" --footprint "$FOOT" --pattern "$pattern" --threads 4 \
		--passes "$passes" --seed "$n" --ready-file "$tmp/ready" --wait-file "$tmp/go" \
		>"$tmp/wl-$tag.out" 2>"$tmp/wl-$tag.err" &
	wl=$!
	for ((i = 0; i < 3000; i++)); do
		[ -e "$tmp/ready" ] && break
		kill -0 "$wl" 2>/dev/null || break
		sleep 0.1
	done
	touch "$tmp/go"
}

# shellcheck source=tests/vm/guest-oom.sh
. "$repo/tests/vm/guest-oom.sh"
oom_retries=0
# oom_killed TAG STATUS [WHEN]: whether the workload just waited for (exit
# STATUS, its memcg $cg/w$n) was OOM-killed by its own memcg (memory.events
# oom_kill) on its own allocation (the kernel's OOM report): a run that
# says nothing about the device either way.  Counted in oom_retries.
oom_killed()
{
	local tag=$1 status=$2 when=${3:-} oom
	oom=$(memcg_oom_kills "$cg/w$n")
	own_oom_kill "$status" 0 "$oom" || return 1
	oom_retries=$((oom_retries + 1))
	note "$tag: the workload was OOM-killed by its memcg${when:+ $when} (oom_kill $oom, invoked by its own allocation): not counted, run again (OOM retries: $oom_retries)"
}

# A random workload over the device: at most 3 runs, the OOM-killed ones
# not counted (memcg's reclaim can give up on a cgroup at its limit while
# its swap-out waits on the device: once in CI, 6.12, the device up,
# 2026-11-29).
out0=$(awk '$1 == "pswpout" {print $2}' /proc/vmstat)
in0=$(awk '$1 == "pswpin" {print $2}' /proc/vmstat)
maxin=0
for ((try = 1; try <= 3; try++)); do
	tag=plain$([ $try -gt 1 ] && echo "-try$try")
	start_workload "$tag" random 2
	while kill -0 "$wl" 2>/dev/null; do
		read -r r w <"/sys/block/$b/inflight"
		[ $((r + w)) -gt "$maxin" ] && maxin=$((r + w))
		sleep 0.05
	done
	wait "$wl"
	rc=$?
	oom_killed "$tag" "$rc"
	retry=$?
	rmdir "$cg/w$n"
	[ $retry = 0 ] || break
done
is "$rc" 0 "random, 4 threads, $FOOT in a $LIMIT memcg: exit 0, every page verified" ||
	diag "$(tail -n 5 "$tmp/wl-$tag.err")"
out1=$(awk '$1 == "pswpout" {print $2}' /proc/vmstat)
in1=$(awk '$1 == "pswpin" {print $2}' /proc/vmstat)
cmp_ok $((out1 - out0)) '>' 5000 "it swapped: pswpout +$((out1 - out0)), pswpin +$((in1 - in0))"
cmp_ok "$maxin" '>' 1 "more than one request in flight at once on $dev (peak $maxin)"
note "$(cat "$tmp/wl-$tag.out")"

# ---- crash survival -------------------------------------------------------------
# crash_round TAG: a random workload (2 passes, 4 threads); SIGKILL
# leap-swapd once it has swapped in a while, restart it with --recover; the
# workload must finish with every page verified.  0 if it did; 2 if its
# memcg OOM-killed it (memory.events oom_kill) and the kernel's OOM report
# says the workload's own allocation invoked the killer: with the device
# down, swap-out stops and reclaim in a cgroup at its limit can fail (seen
# once in CI, 6.12).  Such a round proves nothing either way and is not
# counted: crash_rounds runs it again, and says so with a count.
crash_round()
{
	local tag=$1 p0 p1 r w old alive src rc retry
	last_round=$tag
	start_workload "$tag" random 2
	p0=$(awk '$1 == "pswpin" {print $2}' /proc/vmstat)
	for ((i = 0; i < 600; i++)); do
		p1=$(awk '$1 == "pswpin" {print $2}' /proc/vmstat)
		[ $((p1 - p0)) -gt $((1500 + 500 * (n % 5))) ] && break
		kill -0 "$wl" 2>/dev/null || break
		sleep 0.1
	done
	# Every other round waits (up to 5 s) for a swap-out in flight, so
	# that writes as well as reads are cut off by the kill (the driver
	# reissues both; --state marks such a page written nowhere until the
	# reissued write lands).
	for ((i = 0; i < 500 && n % 2 == 0; i++)); do
		read -r r w <"/sys/block/$b/inflight"
		[ "$w" -gt 0 ] && break
		sleep 0.01
	done
	read -r r w <"/sys/block/$b/inflight"
	old=$swapd_pid
	kill -KILL "$old"
	wait "$old" 2>/dev/null
	note "$tag: SIGKILL leap-swapd after pswpin +$((p1 - p0)), in flight $r reads $w writes"
	sleep 0.5
	kill -0 "$wl" 2>/dev/null
	alive=$?
	start_swapd "$tmp/swapd-$tag.log" --recover "$id"
	src=$?
	ok $src "$tag: leap-swapd --recover $id took $dev over" ||
		diag "$(cat "$tmp/swapd-$tag.log")"
	if [ $src != 0 ]; then
		kill -KILL "$wl" 2>/dev/null
		return 1
	fi
	wait "$wl"
	rc=$?
	oom_killed "$tag" "$rc" "while the device was down"
	retry=$?
	rmdir "$cg/w$n"
	[ $retry = 0 ] && return 2
	is "$rc" 0 "$tag: the workload finished, every page verified (it was $([ $alive = 0 ] && echo alive || echo gone) at the kill)" ||
		diag "$(tail -n 5 "$tmp/wl-$tag.err")"
}

# crash_rounds TAG: crash_round until one counts (at most 3 OOM-killed
# rounds skipped); its status.
crash_rounds()
{
	local tag=$1 try rc
	for ((try = 1; try <= 4; try++)); do
		crash_round "$tag$([ $try -gt 1 ] && echo "-try$try")"
		rc=$?
		[ $rc != 2 ] && return $rc
	done
	fail "$tag: OOM-killed by its memcg in 4 rounds in a row"
	return 1
}

survived=0
for ((run = 1; run <= CRASH_RUNS; run++)); do
	crash_rounds "r2-state-$run" && survived=$((survived + 1))
done
is "$survived" "$CRASH_RUNS" "crash survival, 2 replicas + --state: $survived of $CRASH_RUNS SIGKILL/recover rounds in a row lost nothing"
note "runs OOM-killed by their memcg and run again (the random run and the crash rounds): $oom_retries"
grep -q "^$dev " /proc/swaps
ok $? "$dev is still swap after the recoveries"
like "$(dmesg | grep -ci 'read-error\|write-error\|I/O error' | head -n 1)" '^0$' \
	"the kernel logged no swap I/O error"

# ---- stop -----------------------------------------------------------------------
kill -TERM "$swapd_pid"
sleep 1
kill -0 "$swapd_pid"
ok $? "leap-swapd refuses SIGTERM while $dev is swap"
like "$(cat "$tmp"/swapd*.log)" "not stopping: $dev is in use" "... and says why"
swapoff "$dev"
ok $? "swapoff $dev (every swapped page read back)"

# ---- page-in throughput: ublk vs NBD ------------------------------------------
if [ "$PAGEIN" = 1 ]; then
	# Written first: after a --recover every page counts as written (one
	# replica, docs/backend.md), so a never-written page reads as an
	# error, not zeros.
	pages=$((16 << 8))
	dd if=/dev/urandom of="$dev" bs=1M count=16 oflag=direct status=none
	for t in 1 4; do
		r=$(timeout -k 5 300 python3 "$repo/tools/pagein-latency.py" "$dev" --name ublk-$t \
			--pages "$pages" --samples 1500 --threads "$t")
		note "pagein $r"
	done
	if modprobe -d "$modroot" nbd 2>/dev/null; then
		"$BIN/leap-swapd" --frontend nbd --size "$SIZE" -s "$addr" --dev 5 \
			--secret-file "$tmp/secret" --threads 16 </dev/null 2>"$tmp/nbd.log" &
		nbd_pid=$!
		for ((i = 0; i < 200; i++)); do
			grep -q 'serving /dev/nbd' "$tmp/nbd.log" && break
			sleep 0.1
		done
		nbd=$(sed -n 's|.*serving \(/dev/nbd[0-9]*\) .*|\1|p' "$tmp/nbd.log")
		if [ -n "$nbd" ]; then
			dd if=/dev/urandom of="$nbd" bs=1M count=16 oflag=direct status=none
			for t in 1 4; do
				r=$(timeout -k 5 300 python3 "$repo/tools/pagein-latency.py" "$nbd" \
					--name nbd-$t --pages "$pages" --samples 1500 --threads "$t")
				note "pagein $r"
			done
		fi
		kill -TERM "$nbd_pid"
		wait "$nbd_pid"
		nbd_pid=
	fi
fi

kill -TERM "$swapd_pid"
for ((i = 0; i < 100; i++)); do
	kill -0 "$swapd_pid" 2>/dev/null || break
	sleep 0.1
done
wait "$swapd_pid"
is "$?" 0 "leap-swapd stopped the disk and exited 0 after swapoff"
log=$(ls -t "$tmp"/swapd*.log | head -n 1)
like "$(cat "$log")" "ublkb$id stopped and deleted" "... and deleted it"
like "$(cat "$log")" "leap-swapd: reads=[0-9]+ writes=[0-9]+ .*errors=0 .*io_errors=0" \
	"the last leap-swapd served every request without an I/O error"
note "$(grep -h 'leap-swapd: reads=' "$tmp"/swapd*.log)"
# Which queues served: the last leap-swapd saw the last crash round's 4
# threads and swapoff.
perq=$(sed -n 's/.*requests per queue: //p' "$log")
note "requests per queue (last leap-swapd): $perq"
used=0
for c in $perq; do [ "$c" -gt 0 ] && used=$((used + 1)); done
cmp_ok "$used" '>' 1 "requests came through $used of the hardware queues"
swapd_pid=
[ ! -e /sys/block/"$b" ]
ok $? "$dev is gone"
[ ! -e /dev/ublkc"$id" ]
ok $? "/dev/ublkc$id is gone"

# ---- one replica, no --state --------------------------------------------------
# --recover counts every page as written (docs/backend.md).
SWAPD_ARGS=(--frontend ublk --size "$SIZE" -s "$addr" --dev 3 --secret-file "$tmp/secret")
start_swapd "$tmp/swapd-r1.log" || bail_out "leap-swapd r=1 did not start: $(cat "$tmp/swapd-r1.log")"
dev=$(sed -n 's|.*serving \(/dev/ublkb[0-9]*\) .*|\1|p' "$tmp/swapd-r1.log" | head -n 1)
b=${dev#/dev/}
id=${b#ublkb}
mkswap -q "$dev" >/dev/null && swapon -p 32767 "$dev"
ok $? "r=1: mkswap + swapon $dev"
crash_rounds "r1-nostate"
swapoff "$dev"
ok $? "r=1: swapoff $dev (every swapped page read back)"
kill -TERM "$swapd_pid"
wait "$swapd_pid"
is "$?" 0 "r=1: leap-swapd stopped and exited 0"
like "$(cat "$tmp/swapd-$last_round.log")" "errors=0 .*io_errors=0" "r=1: no I/O error"
swapd_pid=
for p in "${memd_pids[@]}"; do
	kill -TERM "$p"
	wait "$p"
done
memd_pids=()
rmdir "$cg" 2>/dev/null
[ ! -d "$cg" ]
ok $? "test cgroups removed"
# One name per pgrep: a pattern longer than 15 characters matches nothing.
left=$(for p in leap-swapd leap-memd leap-workload; do pgrep -x "$p"; done)
is "$left" "" "no daemon or workload left"
done_testing
