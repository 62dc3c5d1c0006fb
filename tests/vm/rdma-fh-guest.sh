#!/bin/sh
# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# tests/vm/rdma-fh-guest.sh REPO VM_CACHE: runs inside a tests/vm/boot.sh guest
# (soft-RoCE, as tests/vm/rdma-guest.sh).  Firehose in leap-memd: a server
# whose pin budget is far below its store (--pin-budget 6M in 1M regions for 3
# clients: 2 regions each), three leap-memctl stress clients at once (one
# needing 32 regions), fill and verify from separate processes, then real swap
# through leap-swapd over it; STATS must show moves and a pinned peak within
# the budget.  leap-swapd's --reg-trace is replayed by leap-regsim.
# Writes TAP lines to /run/leapvm/rdma-fh.tap.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
repo=$1 vm_cache=${2:-$1/tests/vm/cache}
B=$repo/bin
out=${LEAPVM_OUT:-/run/leapvm} # where the TAP and the logs go
tap=$out/rdma-fh.tap
: >"$tap"
n=0
t()
{
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi >>"$tap"
	[ "$1" = 0 ]
}
note() { echo "# $*" >>"$tap"; }

tmp=/tmp/leap-rdma-fh
mkdir -p "$tmp"
pids=()
loop=
cleanup()
{
	if [ -n "$loop" ]; then
		swapoff "$loop" 2>/dev/null
		losetup -d "$loop" 2>/dev/null
	fi
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	for m in "$tmp"/mnt*; do mountpoint -q "$m" 2>/dev/null && umount -l "$m"; done
	guest_rxe_down
}
trap cleanup EXIT

# ---- soft-RoCE over a dummy netdev (as tests/vm/rdma-guest.sh) ------------------
# shellcheck source=tests/vm/guest-rxe.sh
. "$repo/tests/vm/guest-rxe.sh"
guest_rxe_up "$vm_cache"
t $? "soft-RoCE: rxe0 over a dummy netdev on $(uname -r)" || exit 1
IP=$RXE_IP

head -c 48 /dev/urandom | base64 >"$tmp/secret"
chmod 600 "$tmp/secret"

BUDGET=$((6 << 20))
"$B/leap-memd" --transport rdma --size 160M --listen "$IP:0" --secret-file "$tmp/secret" \
	--pin-budget 2M --region-size 1M --fh-clients 3 2>"$tmp/small.log"
rc=$?
[ "$rc" = 1 ] && grep -q "each client needs at least one region" "$tmp/small.log"
t $? "a budget below one region per client is refused (exit $rc: $(cat "$tmp/small.log"))"

rm -f "$tmp/F.port"
"$B/leap-memd" --transport rdma --size 160M --listen "$IP:0" --port-file "$tmp/F.port" \
	--secret-file "$tmp/secret" --pin-budget 6M --region-size 1M --fh-clients 3 \
	</dev/null 2>"$tmp/F.log" &
F_pid=$!
pids+=("$F_pid")
for ((i = 0; i < 300; i++)); do
	[ -s "$tmp/F.port" ] && break
	kill -0 "$F_pid" 2>/dev/null || break
	sleep 0.1
done
F=$(cat "$tmp/F.port" 2>/dev/null)
[ -n "$F" ]
t $? "leap-memd --pin-budget 6M --region-size 1M --fh-clients 3 listens on $F" || {
	note "$(cat "$tmp/F.log")"
	exit 1
}
note "$(grep 'pin budget' "$tmp/F.log")"
stat_of() { "$B/leap-memctl" -t rdma -k "$tmp/secret" -s "$F" stats 2>/dev/null |
	awk -v k="$1" '$2 == k {print $3}'; }
# Registered so far: only the connections' message buffers (< 1 MiB), no region.
mb=$(stat_of mr_bytes)
[ "$(stat_of fh_share)" = 2 ] && [ "$(stat_of fh_budget)" = "$BUDGET" ] &&
	[ "$(stat_of fh_pinned)" = 0 ] && [ "${mb:-x}" -lt $((1 << 20)) ]
t $? "STATS: share 2 regions, budget $BUDGET, no region pinned before a client asks (mr_bytes=$mb)"

# ---- three clients at once; dev 3 spans 32 MiB (32 regions, share 2) ------------
for d in 1 2 3; do
	np=1024
	[ "$d" = 3 ] && np=8192
	"$B/leap-memctl" -t rdma -k "$tmp/secret" -s "$F" -d "$d" -n "$np" --seconds 6 \
		--write-pct 30 stress >"$tmp/st$d.out" 2>&1 &
	eval "st$d=$!"
done
rcs=
for d in 1 2 3; do
	p=st$d
	wait "${!p}"
	rcs+="$? "
done
[ "$rcs" = "0 0 0 " ]
t $? "three leap-memctl stress clients at once, every read verified (exits: $rcs)" ||
	note "$(cat "$tmp"/st*.out)"
for d in 1 2 3; do note "dev $d: $(tr '\n' ' ' <"$tmp/st$d.out")"; done
m3=$(sed -n 's/.*fh_moves=\([0-9]*\).*/\1/p' "$tmp/st3.out")
[ "${m3:-0}" -gt 0 ]
t $? "the client needing 32 regions with a share of 2 moved its firehoses ($m3 moves)"

"$B/leap-memctl" -t rdma -k "$tmp/secret" -s "$F" -d 4 -n 4096 fill >"$tmp/fill.out" 2>&1 &&
	"$B/leap-memctl" -t rdma -k "$tmp/secret" -s "$F" -d 4 -n 4096 verify \
		>"$tmp/verify.out" 2>&1
t $? "16 MiB filled then verified from another process through firehoses" ||
	note "$(cat "$tmp/fill.out" "$tmp/verify.out")"

moves=$(stat_of fh_moves) peak=$(stat_of fh_pinned_peak) refused=$(stat_of fh_refused)
bytes=$(stat_of mr_bytes) vh=$(stat_of fh_victim_hits)
# mr_bytes: the regions plus the connections' message buffers (256 KiB each).
[ "${moves:-0}" -gt 0 ] && [ -n "$peak" ] && [ "$peak" -le "$BUDGET" ] &&
	[ "$peak" -gt 0 ] && [ "${bytes:-x}" -le $((BUDGET + (1 << 20))) ] &&
	[ "${refused:-x}" = 0 ]
t $? "server STATS: fh_moves=$moves fh_pinned_peak=$peak <= $BUDGET, mr_bytes=$bytes, refused=$refused, victim_hits=$vh"

# ---- real swap through leap-swapd over the budgeted server -----------------------
mkdir -p "$tmp/mnts"
"$B/leap-swapd" --transport rdma --mount "$tmp/mnts" --size 128M -s "$F" \
	--retry-ms 1000 --secret-file "$tmp/secret" --control "$tmp/ctls" \
	--cache-pages 1024 --reg-trace "$tmp/swapd.tr" </dev/null 2>"$tmp/swapd.log" &
swapd_pid=$!
pids+=("$swapd_pid")
for ((i = 0; i < 100; i++)); do
	[ "$(stat -f -c %T "$tmp/mnts" 2>/dev/null)" = fuseblk ] && [ -f "$tmp/mnts/swap" ] &&
		break
	sleep 0.1
done
[ "$(stat -f -c %T "$tmp/mnts")" = fuseblk ]
t $? "leap-swapd --transport rdma --reg-trace over the budgeted server" || {
	note "$(cat "$tmp/swapd.log")"
	exit 1
}
loop=$(losetup --direct-io=on --show -f "$tmp/mnts/swap") || exit 1
mkswap -q "$loop" >/dev/null && swapon -p 32767 "$loop"
t $? "swap on $loop over leap-swapd over firehoses" || exit 1
echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
# What a workload's SIGKILL (exit 137) was, for its failure line: the
# memcg's OOM kills and the kernel's newest lines (one such kill seen,
# 2026-11-29, 6.1, the mrrc run, with nothing on stderr).
# shellcheck source=tests/vm/guest-oom.sh
. "$repo/tests/vm/guest-oom.sh"
memcg_kill_evidence()
{
	printf ' (memcg oom_kill %s; kernel: %s)' "$(memcg_oom_kills /sys/fs/cgroup/leapfh)" \
		"$(dmesg | tail -n 6 | tr '\n' ';')"
}
oom_retries=0
# wl_in_memcg TAG OUT ERR ARGS...: leap-workload ARGS in the 12M memcg,
# again (3 runs at most) while its memcg OOM-killed it (exit 137, its
# oom_kill count grown) on its own allocation (mm/oom_kill.c dump_header():
# "COMM invoked oom-killer:"), as guest-ublk.sh does: 1 run in 5 of the
# mrrc phase run on 6.1 in CI (2026-11-30), and once the mrrc seq run
# (2026-11-29).  A killed run's pages are gone with it; each retry is said
# and counted.  Returns the last run's status.
wl_in_memcg()
{
	local tag=$1 out=$2 err=$3 try rc before
	shift 3
	for try in 1 2 3; do
		before=$(memcg_oom_kills /sys/fs/cgroup/leapfh)
		timeout -k 5 300 sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' \
			/sys/fs/cgroup/leapfh "$B/leap-workload" "$@" >"$out" 2>"$err"
		rc=$?
		{ own_oom_kill "$rc" "$before" "$(memcg_oom_kills /sys/fs/cgroup/leapfh)" &&
			[ "$try" -lt 3 ]; } || break
		oom_retries=$((oom_retries + 1))
		note "$tag: the workload was OOM-killed by its memcg (invoked by its own allocation): not counted, run again (OOM retries: $oom_retries)"
	done
	return "$rc"
}
mkdir -p /sys/fs/cgroup/leapfh
echo 12M >/sys/fs/cgroup/leapfh/memory.max
out0=$(awk '$1 == "pswpout" {print $2}' /proc/vmstat)
wl_in_memcg seq "$tmp/wl.out" "$tmp/wl.err" --pattern seq --footprint 36M
rc=$?
out1=$(awk '$1 == "pswpout" {print $2}' /proc/vmstat)
t $rc "seq over 36M in a 12M memcg through swap over firehoses: exit $rc (every page verified)" ||
	note "$(cat "$tmp/wl.err")$(memcg_kill_evidence)"
[ $((out1 - out0)) -gt 3000 ]
t $? "pswpout grew by $((out1 - out0))"
st=$(timeout -k 5 20 python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
s.sendall(b"STATS\n"); print(s.makefile().readline().strip())' "$tmp/ctls")
note "swapd: $st"
sm=$(echo "$st" | tr ' ' '\n' | sed -n 's/^fh_moves=//p')
[ "${sm:-0}" -gt 0 ]
t $? "leap-swapd moved firehoses (fh_moves=$sm)"
peak=$(stat_of fh_pinned_peak)
[ -n "$peak" ] && [ "$peak" -le "$BUDGET" ]
t $? "after swap: fh_pinned_peak=$peak still <= $BUDGET"
swapoff "$loop" && losetup -d "$loop" && loop=
t $? "swapoff: every page came back"
# Stopped cleanly, leap-swapd closes (flushes) its trace.
kill -TERM "$swapd_pid" && wait "$swapd_pid"

# ---- zero-copy through the registration cache (client side, MRRC) ----------------
"$B/leap-memctl" -t rdma -k "$tmp/secret" -s "$F" -d 5 -n 2048 --seconds 4 \
	--reg-cache mrrc stress >"$tmp/zc.out" 2>&1
rc=$?
note "memctl --reg-cache mrrc: $(tr '\n' ' ' <"$tmp/zc.out")"
lk=$(sed -n 's/.*reg_lookups=\([0-9]*\).*/\1/p' "$tmp/zc.out")
[ "$rc" = 0 ] && [ "${lk:-0}" -gt 0 ]
t $? "leap-memctl stress --reg-cache mrrc: every read verified, $lk cache lookups (exit $rc)"

mkdir -p "$tmp/mntz"
"$B/leap-swapd" --transport rdma --mount "$tmp/mntz" --size 128M -s "$F" -d 7 \
	--retry-ms 1000 --secret-file "$tmp/secret" --control "$tmp/ctlz" \
	--cache-pages 1024 --reg-cache mrrc --reg-cache-size 2M \
	--reg-trace "$tmp/swapdz.tr" </dev/null 2>"$tmp/swapdz.log" &
swapdz_pid=$!
pids+=("$swapdz_pid")
for ((i = 0; i < 100; i++)); do
	[ "$(stat -f -c %T "$tmp/mntz" 2>/dev/null)" = fuseblk ] && [ -f "$tmp/mntz/swap" ] &&
		break
	sleep 0.1
done
[ "$(stat -f -c %T "$tmp/mntz")" = fuseblk ] && loop=$(losetup --direct-io=on --show -f "$tmp/mntz/swap") &&
	mkswap -q "$loop" >/dev/null && swapon -p 32767 "$loop"
t $? "swap over leap-swapd --reg-cache mrrc (zero-copy into FUSE buffers)" || {
	note "$(cat "$tmp/swapdz.log")"
	exit 1
}
wl_in_memcg "seq, mrrc" "$tmp/wlz.out" "$tmp/wlz.err" --pattern seq --footprint 36M
rc=$?
t $rc "seq over 36M through swap with --reg-cache mrrc: exit $rc (every page verified)" ||
	note "$(cat "$tmp/wlz.err")$(memcg_kill_evidence)"
# A second access shape for the recorded trace: phase cycles seq, stride:8,
# reverse and random segments (docs/registration.md replays swapdz.tr).
wl_in_memcg "phase, mrrc" "$tmp/wlp.out" "$tmp/wlp.err" --pattern phase --footprint 24M \
	--segment 256
rc=$?
t $rc "phase over 24M through swap with --reg-cache mrrc: exit $rc (every page verified)" ||
	note "$(cat "$tmp/wlp.err")$(memcg_kill_evidence)"
stz=$(timeout -k 5 20 python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
s.sendall(b"STATS\n"); print(s.makefile().readline().strip())' "$tmp/ctlz")
note "swapd --reg-cache mrrc: $stz"
zl=$(echo "$stz" | tr ' ' '\n' | sed -n 's/^reg_lookups=//p')
zh=$(echo "$stz" | tr ' ' '\n' | sed -n 's/^reg_hits=//p')
zc=$(echo "$stz" | tr ' ' '\n' | sed -n 's/^reg_contained=//p')
[ "${zl:-0}" -gt 1000 ] && [ $((${zh:-0} + ${zc:-0})) -gt 0 ]
t $? "leap-swapd's RDMA went through the cache: lookups=$zl hits=$zh contained=$zc"
# 2 MiB is below what the FUSE buffers need (~4.5 MiB): MRE evicts, and the
# swap above was verified page by page while it did.
ze=$(echo "$stz" | tr ' ' '\n' | sed -n 's/^reg_evictions=//p')
zd=$(echo "$stz" | tr ' ' '\n' | sed -n 's/^reg_deregistrations=//p')
zp=$(echo "$stz" | tr ' ' '\n' | sed -n 's/^reg_pinned_peak=//p')
[ "${ze:-0}" -gt 0 ] && [ "${zd:-0}" -gt 0 ]
t $? "MRE evicted in the real data path: evictions=$ze deregistrations=$zd pinned_peak=$zp"
swapoff "$loop" && losetup -d "$loop" && loop=
t $? "swapoff with --reg-cache mrrc: every page came back"
kill -TERM "$swapdz_pid" && wait "$swapdz_pid"

# ---- the transport's registration trace through leap-regsim ----------------------
nr=$(grep -c '^r ' "$tmp/swapd.tr" 2>/dev/null)
[ "${nr:-0}" -gt 1000 ]
t $? "leap-swapd --reg-trace recorded $nr RDMA buffer references"
"$B/leap-regsim" cache --capacity 4M "$tmp/swapd.tr" >"$tmp/regsim.out" 2>&1
t $? "leap-regsim cache replays it" && while IFS= read -r l; do note "regsim: $l"; done <"$tmp/regsim.out"
cp "$tmp/swapd.tr" "$tmp/swapdz.tr" "$out/" 2>/dev/null
# The last line, only here: a run cut short never writes it.
echo "# guest done" >>"$tap"
exit 0
