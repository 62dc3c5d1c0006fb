#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/vm/checks.sh OUTDIR [--swap-dev DEV] [--footprint SIZE] [--limit SIZE]
#                    [--run-timeout S] [--compute-ns NS]
#
# The per-kernel checks of the VM test bed, the same in every guest and on
# the host (the matrix's host row).  TAP on stdout; OUTDIR gets status.txt,
# the agent's JSON and logs, and results.env (read by tests/vm/matrix.sh):
#
#   KERNEL BTF RINGBUF BPF_LOADS HOOK MADVISE FENTRY FENTRY_ERR EVENTS
#   PREFETCHED HITS MISSES_LEAP MISSES_OFF WALL_LEAP WALL_OFF SHM_MISSES
#   SHM_HITS TP_EVENTS TRACEPOINT TP_ERR OBSERVE_ONLY CGROUP V2_ATTACH_HITS
#   PASSED FAILED TOTAL
#
# Swap: --swap-dev DEV (the guest's virtio disk: mkswap + swapon here), or
# by default a swap file on the root filesystem from tests/lib/fixture.sh.
# The workload is leap-workload stride:16 over --footprint (default 64M)
# under leap-agent run --memory-limit (default half the footprint), with
# --compute-ns of work after each access (default 0).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$repo/tests/lib/fixture.sh"
BIN=$repo/bin

out=${1:?usage: checks.sh OUTDIR [--swap-dev DEV] [--footprint SIZE] [--limit SIZE]}
shift
swap_dev= footprint=64M limit= run_to=180 compute_ns=0
while [ $# -gt 0 ]; do
	case $1 in
	--swap-dev) swap_dev=$2; shift 2 ;;
	--footprint) footprint=$2; shift 2 ;;
	--limit) limit=$2; shift 2 ;;
	--run-timeout) run_to=$2; shift 2 ;;
	--compute-ns) compute_ns=$2; shift 2 ;;
	*) bail_out "checks.sh: unknown option $1" ;;
	esac
done
if [ -z "$limit" ]; then
	n=${footprint%[KMG]}
	limit=$((n / 2))${footprint#"$n"}
fi
mkdir -p "$out"
res=$out/results.env
: >"$res"
put()
{
	printf '%s=%q\n' "$1" "$2" >>"$res"
}
jget()
{
	jq -r "$2 // empty" "$1" 2>/dev/null
}

require_root
fixture_init
put KERNEL "$(uname -r)"
note "kernel $(uname -r), footprint $footprint, memory limit $limit"

# ---- swap ------------------------------------------------------------------
if [ -n "$swap_dev" ]; then
	mkswap -q "$swap_dev" >/dev/null && swapon -p 1000 "$swap_dev"
	ok $? "swap on $swap_dev" || bail_out "no swap on $swap_dev"
	fixture_register swapoff "$swap_dev"
else
	sw=$(swap_file_on 256)
	ok $? "swap file $sw" || bail_out "no swap file"
fi
note "$(cat /proc/swaps)"

# ---- status: what the kernel offers -----------------------------------------
"$BIN/leap-agent" status >"$out/status.txt" 2>"$out/status.err"
ok $? "leap-agent status exits 0" || diag "$(cat "$out/status.err")"
note "$(cat "$out/status.txt")"
field()
{
	sed -n "s/^$1: *//p" "$out/status.txt" | head -n 1
}
btf=$(field btf)
hook=$(field "hook path")
madv=$(field process_madvise)
put BTF "$btf"
put RINGBUF "$(field "ring buffer")"
put HOOK "$hook"
put MADVISE "$madv"
is "$btf" yes "status: kernel BTF at /sys/kernel/btf/vmlinux"
case $hook in
fentry | tracepoint) loads=yes ;;
*) loads=no ;;
esac
put BPF_LOADS "$loads"
is "$loads" yes "status: the BPF observer loads (hook path: $hook)"
prefetching=0
[ "$madv" = "WILLNEED supported" ] && prefetching=1

# agent_run NAME ARGS... -- CMD...: leap-agent run with the JSON in OUTDIR.
agent_run()
{
	local name=$1
	shift
	run_timeout "$run_to" "$BIN/leap-agent" run --json "$out/$name.json" "$@" \
		>"$out/$name.out" 2>"$out/$name.err"
}

# ---- fentry forced: loads exactly where status picked it ---------------------
agent_run fentry --hook fentry --policy leap -- true
frc=$?
ferr=$(grep -Ev '^leap-agent: (wall|counters:)' "$out/fentry.err" | tr '\n' ' ' | sed 's/ *$//')
if [ $frc = 0 ] && [ "$(jget "$out/fentry.json" .hook)" = fentry ]; then
	put FENTRY yes
	is "$hook" fentry "forced --hook fentry loads, and status picks it"
else
	put FENTRY no
	put FENTRY_ERR "$ferr"
	isnt "$hook" fentry "forced --hook fentry refused (status $frc), and status does not pick it"
	note "fentry refused: $ferr"
fi

# ---- the workload under leap (hook auto) ---------------------------------------
wl=("$BIN/leap-workload" --pattern stride:16 --footprint "$footprint" --compute-ns "$compute_ns")
agent_run leap --memory-limit "$limit" --policy leap -- "${wl[@]}"
rc=$?
j=$out/leap.json
ok $rc "leap: workload ran and its data is intact (exit $rc)" || diag "$(tail -n 5 "$out/leap.err")"
note "$(grep -h 'leap-agent' "$out/leap.err")"
is "$(jget "$j" .hook)" "$hook" "leap: run uses the hook status names"
events=$(jget "$j" .events)
put EVENTS "$events"
put PREFETCHED "$(jget "$j" .prefetched)"
put HITS "$(jget "$j" .hits)"
put MISSES_LEAP "$(jget "$j" .swapin_misses)"
put WALL_LEAP "$(jget "$j" .wall_s)"
cmp_ok "${events:-0}" '>' 0 "leap: events seen"
cmp_ok "$(jget "$j" .swapin_misses)" '>' 0 "leap: the workload swapped (swap-in misses)"
if grep -q ': observing only' "$out/leap.err"; then
	put OBSERVE_ONLY yes
else
	put OBSERVE_ONLY no
fi
if [ $prefetching = 1 ]; then
	cmp_ok "$(jget "$j" .prefetched)" '>' 0 "leap: prefetches issued (process_madvise)"
	cmp_ok "$(jget "$j" .hits)" '>' 0 "leap: prefetched pages hit"
	# WILLNEED came in 5.15, syscall programs in 5.14: every kernel that
	# prefetches records its windows with leap_record.
	cmp_ok "$(jget "$j" .prefetch_record_calls)" '>' 0 \
		"leap: windows recorded by the leap_record program"
	is "$(jget "$j" .prefetch_map_errors)" 0 "leap: no prefetched page refused by the map"
else
	grep -q ': observing only' "$out/leap.err"
	ok $? "leap: says it observes only ($madv)" || diag "$(cat "$out/leap.err")"
	is "$(jget "$j" .prefetched)" 0 "leap: no prefetches where the kernel refuses WILLNEED"
fi

# ---- shared memory: its own swap-in path -----------------------------------------
# A shmem page swaps in through shmem_fault() -> shmem_swapin_folio()
# (mm/shmem.c), never do_swap_page(): the fentry path hooks both
# (bpf/leap_observer.bpf.c); before it did, a shared mapping's swap-ins went
# unseen there.  The same workload over a shared anonymous mapping (as a
# database's buffer pool) must be seen and, where WILLNEED works, prefetched
# for (MADV_WILLNEED reads a shmem range's swapped pages in,
# shmem_swapin_range()) and hit.
agent_run shm --memory-limit "$limit" --policy leap -- "${wl[@]}" --shared
rc=$?
ok $rc "shm: the workload over shared memory ran and its data is intact (exit $rc)" ||
	diag "$(tail -n 5 "$out/shm.err")"
put SHM_MISSES "$(jget "$out/shm.json" .swapin_misses)"
put SHM_HITS "$(jget "$out/shm.json" .hits)"
cmp_ok "$(jget "$out/shm.json" .swapin_misses)" '>' 0 \
	"shm: the agent saw its swap-ins ($hook)"
if [ $prefetching = 1 ]; then
	cmp_ok "$(jget "$out/shm.json" .shmem_windows)" '>' 0 "shm: windows in shared memory"
	cmp_ok "$(jget "$out/shm.json" .hits)" '>' 0 \
		"shm: prefetched pages hit ($(jget "$out/shm.json" .hits) of $(jget "$out/shm.json" .prefetched))"
fi

# ---- the tracepoint path on the same kernel -------------------------------------
# It needs the memcg/count_memcg_events tracepoint (kernels from ~6.13) with
# the memory controller on: where the kernel has it the forced run must work,
# elsewhere the agent must refuse with a reason instead of running half-blind.
# The probe reads the kernel's BTF, as the agent does (tp_btf programs attach
# by the btf_trace_<name> typedef, not through tracefs), but with bpftool, so
# the check does not take the agent's word for it.  tracefs is not mounted
# after a fresh boot, so looking under /sys/kernel/tracing would call the
# tracepoint missing on the very kernel that has it.
btf_has_typedef()
{
	# grep reads to the end: with -q it would exit at the first match and,
	# under pipefail, bpftool's SIGPIPE would make the pipeline fail.
	bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null | grep -F "TYPEDEF '$1'" >/dev/null
}
memcg_on=$(awk '$1 == "memory" { print $4 }' /proc/cgroups 2>/dev/null)
agent_run tp --hook tracepoint --memory-limit "$limit" --policy leap -- "${wl[@]}"
rc=$?
tp_err=$(grep -Ev '^leap-agent: (wall|counters:)' "$out/tp.err" | tr '\n' ' ' | sed 's/ *$//')
if btf_has_typedef btf_trace_count_memcg_events && btf_has_typedef btf_trace_page_fault_user &&
	[ "${memcg_on:-0}" != 0 ]; then
	put TRACEPOINT yes
	ok $rc "tracepoint: workload ran and its data is intact (exit $rc)" || diag "$tp_err"
	is "$(jget "$out/tp.json" .hook)" tracepoint "tracepoint: hook forced"
	put TP_EVENTS "$(jget "$out/tp.json" .events)"
	cmp_ok "$(jget "$out/tp.json" .events)" '>' 0 "tracepoint: events seen"
else
	put TRACEPOINT no
	put TP_ERR "$tp_err"
	isnt "$rc" 0 "tracepoint: refused on a kernel without memcg/count_memcg_events"
	like "$tp_err" 'count_memcg_events' "tracepoint: the refusal names the missing tracepoint"
	note "tracepoint refused: $tp_err"
fi

# ---- baseline: no prefetching -----------------------------------------------------
agent_run off --memory-limit "$limit" --policy off -- "${wl[@]}"
rc=$?
ok $rc "off: workload ran and its data is intact (exit $rc)" || diag "$(tail -n 5 "$out/off.err")"
# The off run's misses are its cgroup's major faults: an off target arms
# no fault hooks on the tracepoint path.
put MISSES_OFF "$(jget "$out/off.json" .major_faults)"
put WALL_OFF "$(jget "$out/off.json" .wall_s)"
if [ $prefetching = 1 ]; then
	cmp_ok "$(jget "$j" .swapin_misses)" '<' "$(jget "$out/off.json" .major_faults)" \
		"leap: fewer swap-in misses than without prefetching"
fi

# ---- cgroup trees: a cgroup created below the watched one, after attach ----------
# The command makes a child of the cgroup leap-agent run put it in, moves
# there and runs the workload: its faults must resolve to the run cgroup's
# target through BPF's walk up the cgroup's parents (resolve_cgroup in
# bpf/leap_observer.bpf.c) on this kernel's hook path.  It moves back and
# removes the child afterwards, so run can remove its cgroup.
# shellcheck disable=SC2016 # expanded by the inner shell
tree_cmd='cg=$(sed -n "s/^0:://p" /proc/self/cgroup)
m=$(awk '"'"'$3 == "cgroup2" {print $2; exit}'"'"' /proc/mounts)
mkdir "$m$cg/child" && echo $$ >"$m$cg/child/cgroup.procs" || exit 125
"$@"; rc=$?
echo $$ >"$m$cg/cgroup.procs"; rmdir "$m$cg/child"; exit $rc'
agent_run tree --memory-limit "$limit" --policy leap -- sh -c "$tree_cmd" sh "${wl[@]}"
rc=$?
ok $rc "tree: workload in a child of the watched cgroup ran intact (exit $rc)" ||
	diag "$(tail -n 5 "$out/tree.err")"
cmp_ok "$(jget "$out/tree.json" .swapin_misses)" '>' 0 "tree: the child's swap-ins count for its parent's target"
if [ $prefetching = 1 ]; then
	cmp_ok "$(jget "$out/tree.json" .hits)" '>' 0 "tree: prefetched for the child, and hit"
else
	cmp_ok "$(jget "$out/tree.json" .events)" '>' 0 "tree: the child's events reach the agent"
fi

# ---- backend mode: swap slots through pagemap -------------------------------------
# The swap device is a block device here (the guest's virtio disk): the agent
# runs the engine on addresses, turns each window into the swap slots
# /proc/PID/pagemap shows, and pushes them to a stand-in for leap-swapd's
# control socket that answers like it and records what it gets (the whole
# backend is tested on the host by sys/backend-agent.t; this checks per
# kernel that pagemap's swap entries and the block_bio_queue program, which
# confirms the device's swap type from its reads -- bio->bi_bdev, or
# bi_disk before 5.12 -- work; before 5.15 the agent pushes only).
if [ -n "$swap_dev" ] && [ -b "$swap_dev" ]; then
	sock=$FX_STATE/fake-swapd.sock
	python3 - "$sock" "$out/backend-pushed.txt" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)
log = open(sys.argv[2], "w")
while True:
    c, _ = s.accept()
    f = c.makefile("rwb")
    for line in f:
        w = line.split()
        if w and w[0] == b"STATS":
            f.write(b"OK cache_pages=0 hits=0\n")
        elif w and w[0] == b"PREFETCH":
            log.write(" ".join(x.decode() for x in w[1:]) + "\n"); log.flush()
            f.write(b"OK queued=%d dropped=0\n" % (len(w) - 1))
        else:
            f.write(b"ERR unknown\n")
        f.flush()
PY
	fixture_track_pid $!
	for ((i = 0; i < 50; i++)); do [ -S "$sock" ] && break; sleep 0.1; done
	agent_run be --memory-limit "$limit" --policy leap --backend "$sock" \
		--backend-dev "$swap_dev" -- "${wl[@]}"
	rc=$?
	ok $rc "backend mode: workload ran and its data is intact (exit $rc)" ||
		diag "$(tail -n 5 "$out/be.err")"
	put BACKEND_QUEUED "$(jget "$out/be.json" .backend_queued)"
	cmp_ok "$(jget "$out/be.json" .swap_faults)" '>' 0 \
		"backend mode: faults with a swap offset from the device read"
	cmp_ok "$(jget "$out/be.json" .backend_queued)" '>' 0 \
		"backend mode: windows of swap offsets pushed ($(wc -l <"$out/backend-pushed.txt") commands)"
else
	skip "backend mode: the swap is not a block device here (sys/backend-agent.t covers it)"
fi

# ---- attach to a tree, on a pure cgroup v2 layout ------------------------------------
# Most distributions mount only cgroup2, with the memory controller: the
# guests do (tests/vm/init), the development host is hybrid (v1 memory).
# attach watches a parent; the workload runs in a child created after
# attach, limited by the child's own memory.max.
cg2=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
if grep -qw memory "$cg2/cgroup.controllers" 2>/dev/null && [ ! -d /sys/fs/cgroup/memory ]; then
	put CGROUP v2
	par=$cg2/leap-vm-attach
	fixture_register rmdir "$par/child" "$par"
	echo +memory >"$cg2/cgroup.subtree_control" 2>/dev/null
	mkdir -p "$par" && echo +memory >"$par/cgroup.subtree_control"
	"$BIN/leap-agent" attach --cgroup "$par" >"$out/attach.out" 2>"$out/attach.err" &
	apid=$!
	fixture_track_pid "$apid"
	for ((i = 0; i < 100; i++)); do grep -q 'attached to' "$out/attach.err" && break; sleep 0.1; done
	mkdir "$par/child" && echo "$limit" >"$par/child/memory.max"
	timeout -k 5 "$run_to" sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh \
		"$par/child" "${wl[@]}" >/dev/null 2>"$out/attach-wl.err"
	rc=$?
	kill -INT "$apid"
	wait "$apid"
	arc=$?
	ok $rc "v2 attach: workload in a child of the watched cgroup ran intact (exit $rc)" ||
		diag "$(tail -n 3 "$out/attach-wl.err")"
	is "$arc" 0 "v2 attach: the agent exits 0 on SIGINT" || diag "$(tail -n 5 "$out/attach.err")"
	sum=$(grep '^leap-agent: counters:' "$out/attach.err")
	miss=$(echo "$sum" | sed -n 's/.* swapin_misses=\([0-9]*\).*/\1/p')
	hits=$(echo "$sum" | sed -n 's/.* hits=\([0-9]*\).*/\1/p')
	put V2_ATTACH_HITS "${hits:-0}"
	cmp_ok "${miss:-0}" '>' 0 "v2 attach: the child's swap-ins count for the parent's target"
	if [ $prefetching = 1 ]; then
		cmp_ok "${hits:-0}" '>' 0 "v2 attach: prefetched for the child, and hit (${hits:-0})"
	else
		skip "v2 attach: hits (this kernel refuses process_madvise WILLNEED)"
	fi
	# $par and its child go at teardown (registered above).
	# The benchmarks' baseline rows (bench-real's a and b) run in the
	# fixture's memory cgroups: on pure v2, one cgroup with memory.max.
	h=$(memcg_create "$limit")
	is "$(cat "$(memcg_path_v2 "$h")/memory.max" 2>/dev/null)" "$(numfmt --from=iec "$limit")" \
		"fixture on pure v2: memcg_create sets memory.max"
	memcg_run_timeout "$run_to" "$h" "${wl[@]}" >/dev/null 2>"$out/fixture-wl.err"
	ok $? "fixture on pure v2: the workload ran intact in it" || diag "$(tail -n 3 "$out/fixture-wl.err")"
	cmp_ok "$(memcg_stat "$h" pgmajfault)" '>' 0 "fixture on pure v2: memcg_stat reads its major faults"
	memcg_destroy "$h"
	ok $? "fixture on pure v2: memcg_destroy removes it"
else
	put CGROUP hybrid
	skip "v2 attach: this machine's memory controller is cgroup v1 (the guests cover v2)"
	skip "fixture on pure v2: this machine is hybrid (the guests cover it)"
fi

# ---- the agent cleans up after itself ------------------------------------------------
cg2=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
left=$(ls -d "$cg2"/leap-run-* /sys/fs/cgroup/memory/leap-run-* /sys/fs/bpf/leap 2>/dev/null)
[ -z "$left" ]
ok $? "no leap-run cgroups or BPF pins left behind" || diag "$left"

put PASSED "$((_tap_n - $(tap_failures)))"
put FAILED "$(tap_failures)"
put TOTAL "$_tap_n"
done_testing
