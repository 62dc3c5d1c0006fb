#!/usr/bin/env bash
# leap-timeout: 35
# SPDX-License-Identifier: MIT
# Do no harm: leap-agent stands down where prefetching costs more than it
# saves, says why, and prefetches again when page-ins get slow.  Real swap,
# real processes (CPython strided scans):
#  - swap on zram (a page-in is a few us of CPU): the target stands down,
#    with the reason in the JSON summary and in status, and every hook
#    that follows its page-ins (the arming one too) off;
#  - swap on a file on the disk: the same program is prefetched for, and
#    its prefetches hit;
#  - one attached agent, one program running throughout: it stands down
#    while the program swaps to zram; the zram device goes away under it
#    (swapoff: its pages move to the disk), and the agent's probe finds
#    the page-ins slow and prefetches again, data intact.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"
# shellcheck source=tests/lib/agent.sh
. "$root/tests/lib/agent.sh"

require_root
require_agent_prefetch
[ -d /sys/fs/cgroup/memory ] || skip_all "no cgroup v1 memory controller (vm.t covers v2)"
fixture_init
tmp=$FX_STATE
# A zram device of the test's own: zram_swap_on takes one whose disksize is
# 0; on a host that already swaps to each zram device it has (to zram0,
# often), one more is hot-added, and removed at teardown after its reset.
[ -e /sys/class/zram-control ] || modprobe zram num_devices=1 2>/dev/null
[ -e /sys/class/zram-control/hot_add ] || skip_all "no zram module here"
zram_free()
{
	local z
	for z in /sys/block/zram*; do
		[ -e "$z/disksize" ] && [ "$(cat "$z/disksize")" = 0 ] && return 0
	done
	return 1
}
zram_hot_remove() { echo "$1" >/sys/class/zram-control/hot_remove; }
if ! zram_free; then
	zid=$(cat /sys/class/zram-control/hot_add) || bail_out "cannot hot-add a zram device"
	fixture_register zram_hot_remove "$zid"
	note "zram$zid hot-added: every other zram device is in use"
fi
zram=$(zram_swap_on 512) || bail_out "cannot swap on a free zram device"
note "zram swap on $zram"
SCAN=(/usr/bin/python3 "$root/tools/real/pyscan.py" 128 stride:16)
jf() { jq -r "$2" "$1"; }

# ---- zram: stand down, and say why -------------------------------------------------
# The command also asks status while the agent runs, and at its end saves
# its memory cgroup's page faults (memory.stat pgfault: the kernel's count
# of the faults of every process of the command).
pf0=$(vmstat_get pgfault)
run_unless_oom "$tmp/z.out" "$tmp/z.err" run_timeout 120 "$AGENT" run --memory-limit 48M \
	--bpf-stats --json "$tmp/z.json" -- sh -c 'a=$1 st=$2 flt=$3; shift 3; "$@" &&
		"$a" status >"$st" && cg=$(sed -n "s/^[0-9]*:memory://p" /proc/self/cgroup) &&
		sed -n "s/^pgfault //p" "/sys/fs/cgroup/memory$cg/memory.stat" >"$flt"' sh \
	"$AGENT" "$tmp/z.status" "$tmp/z.faults" "${SCAN[@]}"
is $? 0 "a strided scan on zram runs intact under the agent" || diag "$(cat "$tmp/z.err")"
pf1=$(vmstat_get pgfault)
is "$(jf "$tmp/z.json" '.targets[0].prefetch')" "standing down" "on zram the target stands down"
like "$(jf "$tmp/z.json" '.targets[0].why')" \
	"zram or pmem holds [0-9]+% of the swap in use and is (not )?first in line: page-ins of [0-9.]+ us, [0-9]+% of them waiting for I/O, are CPU work a prefetch cannot hide" \
	"the JSON says why: $(jf "$tmp/z.json" '.targets[0].why')"
cmp_ok "$(jf "$tmp/z.json" .stand_downs)" '>=' 1 "stand_downs counts it"
cmp_ok "$(jf "$tmp/z.json" .prefetched)" '<' 2000 \
	"it stood down within the first windows ($(jf "$tmp/z.json" .prefetched) pages prefetched)"
is "$(grep -c 'standing down (' "$tmp/z.err")" 1 "stderr says so once"
# The hooks that stay on after the stand-down run for every fault on the
# host: their time is per host fault (~120 ns here), not charged to the
# few faults the target had while its fault hooks were on (~700 ns then).
# The host's faults over the agent's span lie between the command's own
# (its cgroup's count: the command runs inside the span) and the host's
# over the whole run as counted here around it (pgfault, /proc/vmstat),
# both counted by the kernel, not by leap.
hf=$(jf "$tmp/z.json" .bpf_host_faults)
cmp_ok "$hf" '>=' "$(cat "$tmp/z.faults" 2>/dev/null)" \
	"BPF time is divided by the host's faults ($hf), the command's ($(cat "$tmp/z.faults" 2>/dev/null)) among them"
cmp_ok "$hf" '<=' $((pf1 - pf0)) "... and no more than the host had around the run ($((pf1 - pf0)))"
cmp_ok "$(jf "$tmp/z.json" '.bpf_ns_per_fault | floor')" '<' 400 \
	"... so a target that stood down shows what BPF costs a fault: $(jf "$tmp/z.json" '.bpf_ns_per_fault | floor') ns ($(jf "$tmp/z.json" .bpf_run_s) s, $(jf "$tmp/z.json" .faults) target faults)"
like "$(cat "$tmp/z.status" 2>/dev/null)" "target: +cgroup .* standing down" \
	"status shows the target standing down"
like "$(cat "$tmp/z.status" 2>/dev/null)" "verdict: +zram or pmem holds" \
	"... with the verdict"
like "$(cat "$tmp/z.status" 2>/dev/null)" "fault hooks: +off \(every target stands down\)" \
	"... and no hook follows its page-ins, the one that arms included"
# The status names the first synchronous area of /proc/swaps: ours, or a
# zram device the host swaps to already.
zrams=$(awk '$1 ~ /^\/dev\/zram[0-9]+$/ {print $1}' /proc/swaps | paste -sd '|')
like "$(cat "$tmp/z.status" 2>/dev/null)" \
	"swap readahead: +(none: swap area ($zrams) is on a synchronous device|.*; none from ($zrams) \(a synchronous device\))" \
	"... and that the kernel reads no page ahead from zram"

# ---- the swap file: prefetch ---------------------------------------------------------
swapoff "$zram"
swap=$(swap_file_on 1024) || bail_out "cannot set up a swap file"
run_unless_oom "$tmp/f.out" "$tmp/f.err" run_timeout 120 "$AGENT" run --memory-limit 48M \
	--json "$tmp/f.json" -- "${SCAN[@]}"
is $? 0 "the same scan with swap on $swap: intact" || diag "$(cat "$tmp/f.err")"
is "$(jf "$tmp/f.json" '.targets[0].prefetch')" prefetching "on the disk the target prefetches" ||
	diag "$(jq -c "{prefetched, hits, swapin_misses, zero_filled_misses, held_for_kernel_readahead, swap_faults, events}" "$tmp/f.json"; cat "$tmp/f.err")"
like "$(jf "$tmp/f.json" '.targets[0].why')" "a prefetch hides the wait" \
	"because it pays: $(jf "$tmp/f.json" '.targets[0].why')"
cmp_ok "$(jf "$tmp/f.json" .hits)" '>' 10000 "and its prefetches hit ($(jf "$tmp/f.json" .hits))"

# ---- one agent, a phase change: zram, then the disk ---------------------------------
swapon -p 2000 "$zram" || bail_out "cannot swapon $zram again"
h=$(memcg_create 48M) || bail_out "cannot create a memory cgroup"
start_agent attach --cgroup "$(memcg_path_v2 "$h")"
ok $? "attach" || diag "$(cat "$tmp/agent.err")"
target() { jq -r ".targets[0].$1" /run/leap/agent.json 2>/dev/null; }
wait_target() { # FIELD VALUE SECONDS
	for _ in $(seq $(($3 * 10))); do
		[ "$(target "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
memcg_run_timeout 240 "$h" /usr/bin/python3 "$here/helpers/phase-scan.py" 96 "$tmp/flag" \
	>"$tmp/phase.out" 2>"$tmp/phase.err" &
phase=$!
fixture_track_pid "$phase"
wait_target prefetch "standing down" 60
ok $? "while the program swaps to zram, the agent stands down ($(target why))"
hits0=$(jq -r .agent.hits /run/leap/agent.json)
# swapoff brings every page back through the program's full cgroup: it
# can fail (ENOMEM) while the program faults; try again.
for _ in 1 2 3 4 5; do
	swapoff "$zram" 2>"$tmp/swapoff.err" && break
	sleep 1
done
ok "$(grep -q "^$zram " /proc/swaps; echo $((!$?)))" \
	"zram goes away under the running program (its pages move to the disk)" ||
	diag "$(cat "$tmp/swapoff.err")"
wait_target prefetch prefetching 60
ok $? "a probe finds the page-ins slow: prefetching again ($(target why))"
for _ in $(seq 100); do
	[ "$(jq -r .agent.hits /run/leap/agent.json)" -gt $((hits0 + 5000)) ] && break
	sleep 0.2
done
cmp_ok "$(jq -r .agent.hits /run/leap/agent.json)" '>' $((hits0 + 5000)) \
	"and its prefetches hit ($(jq -r .agent.hits /run/leap/agent.json))"
touch "$tmp/flag"
wait "$phase"
is $? 0 "the program finishes, data intact: $(cat "$tmp/phase.out")"
cmp_ok "$(jq -r .agent.probes /run/leap/agent.json)" '>=' 1 "the agent counted its probes"
stop_agent
is $? 0 "the agent exits 0"
memcg_destroy "$h"
done_testing
