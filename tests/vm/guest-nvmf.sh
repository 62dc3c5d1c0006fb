#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/vm/guest-nvmf.sh REPO MODROOT: what tests/sys/guest-6.1.t (part nvmf) runs in the
# 6.1 guest (tests/vm/boot.sh): swap on the standard remote block path,
# NVMe over Fabrics with RDMA, in one machine through soft-RoCE:
#
#   brd ramdisk (a RAM-backed block device) -> nvmet namespace, port
#   trtype rdma on the rxe device of a dummy netdev -> nvme connect -t rdma
#   -> /dev/nvmeXnY -> mkswap/swapon
#
# then leap-agent run (fentry hooks on 6.1) over leap-workload stride:16
# (by default 32M in 16M with 1 ms of compute per page: TCG makes the
# agent late for a tight loop, docs/vm.md, and here soft-RoCE's swap I/O
# also runs on the guest's emulated CPUs; docs/nvmf.md) with --policy off
# and --policy leap: the workload verifies every page,
# prefetches through process_madvise must hit, and swap-in misses must be
# far fewer than without prefetching.  MODROOT is the extracted kernel
# tree's root (MODROOT/lib/modules/KVER): the guest's root is the host's,
# so `modprobe -d MODROOT` loads the guest kernel's modules.  TAP goes to
# /run/leapvm/guest.tap; the agent's JSON and logs next to it.
# boot.sh runs it with /bin/sh (dash).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -uo pipefail
repo=${1:?usage: guest-nvmf.sh REPO MODROOT [FOOTPRINT LIMIT COMPUTE_NS]}
modroot=${2:?usage: guest-nvmf.sh REPO MODROOT [FOOTPRINT LIMIT COMPUTE_NS]}
FOOT=${3:-32M} LIMIT=${4:-16M} COMPUTE_NS=${5:-1000000}
# shellcheck source=tests/lib/tap.sh
. "$repo/tests/lib/tap.sh"
out=${LEAPVM_OUT:-/run/leapvm} # where the TAP and the logs go
exec >"$out/guest.tap" 2>&1
BIN=$repo/bin
NQN=nqn.2026-11.org.leap:swap-test
IP=10.77.0.1
CFG=/sys/kernel/config/nvmet
S=$CFG/subsystems/$NQN
P=$CFG/ports/1
dev=

teardown()
{
	set +e
	[ -n "$dev" ] && grep -q "^$dev " /proc/swaps && swapoff "$dev"
	nvme disconnect -n "$NQN" >/dev/null 2>&1
	rm -f "$P/subsystems/$NQN" 2>/dev/null
	[ -d "$P" ] && rmdir "$P"
	[ -e "$S/namespaces/1/enable" ] && echo 0 >"$S/namespaces/1/enable"
	[ -d "$S/namespaces/1" ] && rmdir "$S/namespaces/1"
	[ -d "$S" ] && rmdir "$S"
	rdma link delete rxe0 2>/dev/null
	ip link del d0 2>/dev/null
	dmesg >"$out/dmesg.txt" 2>&1
}
trap teardown EXIT

jget()
{
	jq -r "$2 // empty" "$1" 2>/dev/null
}

note "kernel $(uname -r), footprint $FOOT, memory limit $LIMIT, compute $COMPUTE_NS ns/page"
ip link set lo up
# Everything the kernel would autoload too: its modprobe looks under the
# host's /lib/modules, which has no tree for this kernel (crc32_generic:
# rxe asks the crypto API for "crc32", which would autoload it).
for m in dummy crc32_generic rdma_rxe nvmet nvmet-rdma nvme-rdma; do
	modprobe -d "$modroot" "$m"
	ok $? "modprobe $m" || bail_out "cannot load $m from $modroot"
done
modprobe -d "$modroot" brd rd_nr=1 rd_size=$((256 * 1024))
ok $? "modprobe brd: /dev/ram0, a 256 MiB ramdisk" || bail_out "no brd"
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
[ -d "$CFG" ]
ok $? "nvmet configfs at $CFG" || bail_out "no $CFG"

# ---- soft-RoCE on a dummy netdev -------------------------------------------
ip link add d0 type dummy && ip addr add "$IP/24" dev d0 && ip link set d0 up
ok $? "dummy netdev d0 with $IP"
rdma link add rxe0 type rxe netdev d0
ok $? "rdma link add rxe0 type rxe netdev d0" || bail_out "no rxe device"
note "$(rdma link show)"

# ---- the target ----------------------------------------------------------------
mkdir "$S" && echo 1 >"$S/attr_allow_any_host" &&
	mkdir "$S/namespaces/1" && echo -n /dev/ram0 >"$S/namespaces/1/device_path" &&
	echo 1 >"$S/namespaces/1/enable"
ok $? "nvmet subsystem $NQN, namespace 1 = /dev/ram0" || bail_out "nvmet subsystem"
mkdir "$P" && echo rdma >"$P/addr_trtype" && echo ipv4 >"$P/addr_adrfam" &&
	echo "$IP" >"$P/addr_traddr" && echo 4420 >"$P/addr_trsvcid" &&
	ln -s "$S" "$P/subsystems/$NQN"
ok $? "nvmet port 1: rdma $IP:4420" || bail_out "nvmet port"

# ---- the host side ---------------------------------------------------------------
hostid=$(cat /proc/sys/kernel/random/uuid)
nvme connect -t rdma -n "$NQN" -a "$IP" -s 4420 \
	--hostnqn "nqn.2014-08.org.nvmexpress:uuid:$hostid" --hostid "$hostid" >"$out/connect.out" 2>&1
ok $? "nvme connect -t rdma" || bail_out "nvme connect: $(cat "$out/connect.out")"
# The namespace's block device: under the subsystem (native multipath, the
# Debian default) or under the controller; hidden per-path nodes
# (nvmeXcYnZ) have no /dev entry.
ctrl=
for ((i = 0; i < 100; i++)); do
	for d in /sys/class/nvme-subsystem/* /sys/class/nvme/*; do
		[ "$(cat "$d/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
		case $d in /sys/class/nvme/*) ctrl=$d ;; esac
		for b in "$d"/nvme[0-9]*n[0-9]*; do
			[ -b "/dev/${b##*/}" ] && dev=/dev/${b##*/}
		done
	done
	[ -n "$dev" ] && break
	sleep 0.1
done
[ -n "$dev" ]
ok $? "namespace block device $dev" || bail_out "no nvme namespace appeared"
is "$(cat "$ctrl/transport" 2>/dev/null)" rdma "$dev is reached over the rdma transport"
is "$(cat /sys/block/"${dev#/dev/}"/size)" $((256 << 11)) "$dev has the ramdisk's 256 MiB"

# Data through the fabric, direct I/O both ways.
head -c 4M /dev/urandom >/tmp/nvmf-pat
dd if=/tmp/nvmf-pat of="$dev" bs=1M oflag=direct status=none &&
	dd if="$dev" of=/tmp/nvmf-back bs=1M count=4 iflag=direct status=none
cmp -s /tmp/nvmf-pat /tmp/nvmf-back
ok $? "4 MiB written and read back intact over NVMe/RDMA"
rm -f /tmp/nvmf-pat /tmp/nvmf-back

mkswap -q "$dev" >/dev/null && swapon -p 32767 "$dev"
ok $? "mkswap + swapon $dev" || bail_out "no swap on $dev"
note "$(cat /proc/swaps)"

# ---- leap-agent over the fabric ---------------------------------------------------
"$BIN/leap-agent" status >"$out/status.txt" 2>&1
note "$(grep -E '^(hook path|process_madvise):' "$out/status.txt")"
agent_run()
{
	local name=$1
	shift
	run_timeout 400 "$BIN/leap-agent" run --json "$out/$name.json" --memory-limit "$LIMIT" \
		"$@" -- "$BIN/leap-workload" --pattern stride:16 --footprint "$FOOT" \
		--compute-ns "$COMPUTE_NS" \
		>"$out/$name.out" 2>"$out/$name.err"
}
pswpin0=$(awk '$1 == "pswpin" {print $2}' /proc/vmstat)
agent_run off --policy off
ok $? "off: stride:16 over $FOOT in $LIMIT, every page verified" ||
	diag "$(tail -n 5 "$out/off.err")"
pswpin1=$(awk '$1 == "pswpin" {print $2}' /proc/vmstat)
agent_run leap --policy leap
ok $? "leap: stride:16 over $FOOT in $LIMIT, every page verified" ||
	diag "$(tail -n 5 "$out/leap.err")"
pswpin2=$(awk '$1 == "pswpin" {print $2}' /proc/vmstat)
note "off:  $(grep -h 'leap-agent: wall' "$out/off.err")"
note "leap: $(grep -h 'leap-agent: wall' "$out/leap.err")"
note "pswpin from $dev: off $((pswpin1 - pswpin0)), leap $((pswpin2 - pswpin1))"
is "$(jget "$out/leap.json" .hook)" fentry "leap: the agent uses the fentry hooks on 6.1"
m_off=$(jget "$out/off.json" .major_faults) # an off target arms no hooks
m_leap=$(jget "$out/leap.json" .swapin_misses)
hits=$(jget "$out/leap.json" .hits)
cmp_ok "${m_off:-0}" '>' 500 "off: the workload swapped in over the fabric ($m_off misses)"
cmp_ok "$(jget "$out/leap.json" .prefetched)" '>' 0 "leap: prefetches issued (process_madvise)"
cmp_ok "${hits:-0}" '>' 0 "leap: prefetched pages hit ($hits)"
# "Far lower": at most half of the misses without prefetching.
cmp_ok $((${m_leap:-0} * 2)) '<' "${m_off:-0}" \
	"leap: swap-in misses $m_leap, at most half of off's $m_off"
printf 'MISSES_OFF=%s\nMISSES_LEAP=%s\nHITS=%s\nPREFETCHED=%s\nWALL_OFF=%s\nWALL_LEAP=%s\n' \
	"$m_off" "$m_leap" "$hits" "$(jget "$out/leap.json" .prefetched)" \
	"$(jget "$out/off.json" .wall_s)" "$(jget "$out/leap.json" .wall_s)" >"$out/results.env"

# ---- teardown, checked -------------------------------------------------------------
swapoff "$dev"
ok $? "swapoff $dev (every swapped page read back over the fabric)"
nvme disconnect -n "$NQN" >"$out/disconnect.out" 2>&1
ok $? "nvme disconnect" || diag "$(cat "$out/disconnect.out")"
for ((i = 0; i < 50; i++)); do
	[ -b "$dev" ] || break
	sleep 0.1
done
[ ! -b "$dev" ]
ok $? "$dev is gone"
dev=
rm "$P/subsystems/$NQN" && rmdir "$P" && echo 0 >"$S/namespaces/1/enable" &&
	rmdir "$S/namespaces/1" && rmdir "$S"
ok $? "nvmet port, namespace and subsystem removed"
is "$(find "$CFG/subsystems" "$CFG/ports" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)" 0 \
	"nothing left in nvmet's configfs"
rdma link delete rxe0
ok $? "rdma link delete rxe0"
ip link del d0
ok $? "dummy netdev removed"
is "$(rdma link show 2>/dev/null | grep -c rxe0)" 0 "no rxe device left"
cg2=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
left=$(ls -d "$cg2"/leap-run-* /sys/fs/bpf/leap 2>/dev/null)
is "$left" "" "no leap-run cgroups or BPF pins left behind"
done_testing
