#!/usr/bin/env bash
# leap-timeout: 35
# SPDX-License-Identifier: MIT
# The workers that issue windows (user/agent/issuer.c), with real swap and
# a real program (CPython, tools/real/pyscan.py 128 stride:16 in 64 MiB):
#  - the count comes from --workers, else [agent] workers, else the
#    default (a quarter of the usable CPUs, 1 to 8; none below 4), and
#    the run's JSON says which;
#  - with workers, windows go through their queues (windows_queued,
#    windows_issued), are prefetched and hit, and the data is intact; no
#    page of the scan is made cold (MADV_COLD rides the same queues:
#    test_issuer's test_cold_range_rides_the_queue; which pages a fill
#    hands out: test_replay, on recorded runs of this same program);
#  - the JSON has each worker's busy time (none longer than the run as
#    timed from outside) and the windows queued now; `stats` and its
#    Prometheus format show them while the agent runs;
#  - --workers 0 issues from the event thread (nothing queued);
#  - a pages-per-second budget ([agent] prefetch_rate) holds: pages over
#    it are counted, not issued; it gets a worker where none would run,
#    and --workers 0 with one warns;
#  - a target whose queue overflows ([agent] queue_depth = 1, one worker)
#    drops its oldest windows, counts them (windows_overflow) and says so
#    on stderr, and the windows that do go out still hit;
#  - a count or queue depth out of range is refused with a clear error;
#  - several targets at once under one `leap-agent attach` with workers
#    (two sibling cgroups, a strided leap-workload in each): each target
#    gets its own prefetches and hits; the agent stopped while both still
#    run leaves their data intact (leap-workload checks every page) and no
#    process, pin or cgroup behind.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"
# shellcheck source=tests/lib/agent.sh
. "$root/tests/lib/agent.sh"

prefetch_fixture 512

# run NAME ARGS...: the scan under leap-agent run ARGS; JSON in $tmp/NAME.json,
# the command's wall time as this shell saw it in $tmp/NAME.ns (ns, every
# try of run_unless_oom included).
run()
{
	local name=$1 t0
	shift
	t0=$(date +%s%N)
	run_unless_oom "$tmp/$name.out" "$tmp/$name.err" "$AGENT" run --policy leap "$@" \
		--memory-limit 64M --json "$tmp/$name.json" -- \
		"$PY" "$root/tools/real/pyscan.py" 128 stride:16
	is "$?" 0 "$name: the program ran to completion" || diag "$(cat "$tmp/$name.err")"
	echo $(($(date +%s%N) - t0)) >"$tmp/$name.ns"
	like "$(cat "$tmp/$name.out")" '"bad": 0' "$name: every page read back had the value the fill wrote"
	diag "$name: $(jq -c '{wall_s, workers, prefetched, hits, windows_queued, windows_issued,
		windows_coalesced, windows_stale, windows_overflow, pages_over_budget, cold_behind_pages}' "$tmp/$name.json")"
}
val() { jq -r ".$2" "$tmp/$1.json"; }

# The default: what the usable CPUs give (nproc counts this task's mask).
cpus=$(nproc)
want=$((cpus < 4 ? 0 : cpus / 4 > 8 ? 8 : cpus / 4))
run default
is "$(val default workers)" "$want" "no --workers, no config: $want workers on $cpus CPUs"

printf '[agent]\nworkers = 2\n' >"$tmp/two.conf"
run two --config "$tmp/two.conf"
is "$(val two workers)" 2 "[agent] workers = 2 starts two workers"
cmp_ok "$(val two windows_issued)" '>' 100 "windows were issued by the workers"
cmp_ok "$(val two windows_queued)" '>=' "$(val two windows_issued)" "... each one queued first"
is "$(val two 'worker_busy_ns_each | length')" 2 "the JSON has each worker's busy time"
# A worker is busy only while the agent lives: no busy time above the
# command's wall time, timed here with another clock.  The busiest worker
# was busy 268 and 300 ms of 1.49 and 1.52 s runs here (two runs): a busy
# time in too fine a unit, or counted from a clock's zero, fails; one
# counted twice would not.
# (worker_busy_ns is the sum of these same counters, issuer_counters():
# comparing the two checked nothing.)
busy=$(val two 'worker_busy_ns_each | max')
cmp_ok "$busy" '<=' "$(cat "$tmp/two.ns")" \
	"... none longer than the run (the busiest $busy ns, the run $(cat "$tmp/two.ns") ns from outside)"
cmp_ok "$(val two 'worker_busy_ns_each | min')" '>' 0 "... and both workers issued windows"
like "$(val two queue_depth)" '^[0-9]+$' "... and the windows queued when the program ended"
pf=$(val two prefetched)
diag "two workers: prefetched $pf hits $(val two hits) misses $(val two swapin_misses)"
cmp_ok "$pf" '>' 3000 "thousands of pages prefetched"
cmp_ok "$(($(val two hits) * 100))" '>' "$((pf * 50))" "most of them hit (> 50%)"
# Only the fill's pages (32,768) may be made cold, never the scan's.  How
# many of them depends on when the fault hooks, armed by device reads
# (hooks.h), saw the fill: 7,424-32,272 in twelve runs here (2026-11-28),
# so the decision itself is checked on recordings (test_replay).
cmp_ok "$(val two cold_behind_pages)" '<=' 32768 "no page behind the scan was made cold ($(val two cold_behind_pages))"

run zero --config "$tmp/two.conf" --workers 0
is "$(val zero workers)" 0 "--workers 0 overrides the config"
is "$(val zero windows_queued)" 0 "... and nothing is queued"
cmp_ok "$(val zero prefetched)" '>' 3000 "the event thread prefetched instead"

# A budget well under what the scan asks for (tens of thousands of pages
# in ~2 s): each second's tokens, plus one second's burst.
rate=2000
printf '[agent]\nprefetch_rate = %d\n' "$rate" >"$tmp/rate.conf"
run rate --config "$tmp/rate.conf"
cmp_ok "$(val rate workers)" '>=' 1 "a budget gets a worker to keep it, whatever the CPUs"
cmp_ok "$(val rate pages_over_budget)" '>' 0 "pages over prefetch_rate were counted"
wall=$(val rate wall_s)
cap=$(awk -v w="$wall" -v r="$rate" 'BEGIN { printf "%d", (w + 2) * r }')
cmp_ok "$(val rate prefetched)" '<=' "$cap" "no more than the budget was prefetched ($rate pages/s over ${wall}s)"

# A queue of one behind one worker: a window queued while another waits
# replaces it (420-622 of ~4,000 windows in two runs on 2 CPUs).
printf '[agent]\nworkers = 1\nqueue_depth = 1\n' >"$tmp/q1.conf"
run q1 --config "$tmp/q1.conf"
is "$(val q1 queue_depth_max)" 1 "queue_depth = 1: never more than one window waits"
cmp_ok "$(val q1 windows_overflow)" '>' 0 "a full queue dropped its oldest windows, counted in windows_overflow"
like "$(cat "$tmp/q1.err")" "fall behind its windows; [0-9]+ dropped from its full queue" \
	"... and the agent says so, naming the target"
cmp_ok "$(val q1 hits)" '>' 1000 "the windows that went out still hit"

printf '[agent]\nqueue_depth = 0\n' >"$tmp/q0.conf"
"$AGENT" run --config "$tmp/q0.conf" -- true >"$tmp/q0.out" 2>"$tmp/q0.err"
isnt "$?" 0 "queue_depth = 0 is refused"
like "$(cat "$tmp/q0.err")" "queue_depth" "... naming the key"

run rate0 --config "$tmp/rate.conf" --workers 0
like "$(cat "$tmp/rate0.err")" "prefetch_rate is kept by the workers; with none it is not applied" \
	"--workers 0 with a budget: the agent warns that it is not applied"

"$AGENT" run --workers 99 -- true >"$tmp/bad.out" 2>"$tmp/bad.err"
is "$?" 64 "--workers 99 is refused"
like "$(cat "$tmp/bad.err")" "--workers takes 0 to" "... saying what it takes"

# ---- several targets at once under one attach ------------------------------
WL=$root/bin/leap-workload
[ -x "$WL" ] || bail_out "$WL not built (run make)"
ha=$(memcg_create 32M) || bail_out "cannot create a memory cgroup"
hb=$(memcg_create 32M) || bail_out "cannot create a memory cgroup"
cga=$(memcg_path_v2 "$ha")
cgb=$(memcg_path_v2 "$hb")
start_agent attach --cgroup "$cga" --cgroup "$cgb" --workers 2
ok $? "attach to two sibling cgroups with two workers" || diag "$(cat "$tmp/agent.err")"

# both FOOTPRINT: a strided workload in each cgroup at once, in the
# background (their pids in wl_pids); statuses in $tmp/wl-{a,b}.rc.
both()
{
	local fp=$1 h
	wl_pids=()
	for h in a b; do
		local hh=$ha
		[ $h = b ] && hh=$hb
		(memcg_run_timeout 120 "$hh" "$WL" --pattern stride:16 --footprint "$fp" \
			>/dev/null 2>"$tmp/wl-$h.err"; echo $? >"$tmp/wl-$h.rc") &
		wl_pids+=($!)
	done
}
both 64M
wait "${wl_pids[@]}" # not the agent, also a child
is "$(cat "$tmp/wl-a.rc") $(cat "$tmp/wl-b.rc")" "0 0" \
	"both workloads ran at once to completion (every page verified)" ||
	diag "$(cat "$tmp/wl-a.err" "$tmp/wl-b.err")"
state_fresh # the pinned stats are the BPF map's; the state file once a second
"$AGENT" stats --json >"$tmp/stats.json"
for cg in "$cga" "$cgb"; do
	pf=$(jq -r --arg t "$cg" '.[] | select(.target == $t) | .prefetches' "$tmp/stats.json")
	hit=$(jq -r --arg t "$cg" '.[] | select(.target == $t) | .prefetch_hits' "$tmp/stats.json")
	cmp_ok "${pf:-0}" '>' 1000 "target ${cg##*/}: its own prefetches ($pf)"
	cmp_ok "${hit:-0}" '>' 500 "target ${cg##*/}: and its own hits ($hit)"
done
"$AGENT" stats >"$tmp/stats.txt"
like "$(cat "$tmp/stats.txt")" "workers: 2, busy \\(s\\): [0-9.]+ [0-9.]+; windows queued now: [0-9]+" \
	"stats: one line with each worker's busy time and the queue"
"$AGENT" stats --format prometheus >"$tmp/stats.prom"
is "$(grep -c '^leap_agent_worker_busy_seconds_total{worker="[01]"} [0-9.e+-]*$' "$tmp/stats.prom")" 2 \
	"Prometheus: leap_agent_worker_busy_seconds_total for each worker" ||
	diag "$(grep worker_busy "$tmp/stats.prom")"
like "$(cat "$tmp/stats.prom")" "# TYPE leap_agent_queue_depth gauge" "... and the queue's depth as a gauge"

# Stopped mid-run: queued windows are dropped, the programs go on alone.
both 96M
sleep 1.5
stop_agent
is $? 0 "the agent stopped cleanly while both targets swapped"
wait "${wl_pids[@]}" # not the agent, also a child
is "$(cat "$tmp/wl-a.rc") $(cat "$tmp/wl-b.rc")" "0 0" \
	"both workloads finished after it with every page intact" ||
	diag "$(cat "$tmp/wl-a.err" "$tmp/wl-b.err")"
ok "$(! _fx_alive "$AGENT_PID"; echo $?)" "no agent process (nor any of its threads) left"
ok "$([ ! -e /sys/fs/bpf/leap ]; echo $?)" "no pins left"
is "$(find "$FX_CG2_ROOT" -maxdepth 1 -name 'leap-run-*' | wc -l)" 0 \
	"no cgroup left by the runs above"

done_testing
