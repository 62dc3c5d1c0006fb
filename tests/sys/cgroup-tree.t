#!/usr/bin/env bash
# leap-timeout: 40
# SPDX-License-Identifier: MIT
# Cgroup trees: a --cgroup / [cgroup PATH] target covers its descendants,
# including cgroups created after attach, and the deepest target's policy
# wins; --cgroup-exact covers the cgroup alone.  On a real swapping
# workload:
#  - a slice under `observe` with a child under `leap`: faults in another,
#    pre-existing child of the slice are counted for the slice and never
#    prefetched for; faults in a grandchild created after attach under the
#    `leap` child are prefetched for and hit, in the child's counters;
#  - status and stats (text, --json) list the cgroups matched under each
#    target; the Prometheus output (stats --format prometheus and the
#    --metrics-textfile file) parses with the reference parser;
#  - a matched cgroup removed, and a target removed and re-created, while
#    watched: the agent keeps running and says what happened, and the
#    re-created target's memory.stat, new with it, is read while it swaps;
#  - --cgroup-exact: the slice's own tasks count, its children's do not.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"
# shellcheck source=tests/lib/agent.sh
. "$root/tests/lib/agent.sh"

require_root
AGENT=$root/bin/leap-agent
WL=$root/bin/leap-workload
PARSE=$here/helpers/prom-parse.py
for b in "$AGENT" "$WL"; do
	[ -x "$b" ] || bail_out "$b not built (run make)"
done
command -v jq >/dev/null || bail_out "jq missing (make deps)"
/usr/bin/python3 -c 'import prometheus_client.parser' 2>/dev/null ||
	bail_out "python3-prometheus-client missing (make deps)"
[ -d "$FX_CG2_ROOT" ] || skip_all "no cgroup2 hierarchy at $FX_CG2_ROOT"
[ -e /sys/kernel/btf/vmlinux ] || skip_all "kernel without BTF"

fixture_init
tmp=$FX_STATE
swap=$(swap_file_on 512) || bail_out "cannot set up a swap file"
note "swap file $swap is on"

# The memory limit comes from a v1 memory cgroup (this machine's cgroup2
# has no controllers); the v2 tree below is what the agent matches.
h=$(memcg_create 32M) || bail_out "cannot create a memory cgroup"
v1=$(memcg_path_v1 "$h")
S=$FX_CG2_ROOT/$FX_TAG-tree.slice
T=$FX_CG2_ROOT/$FX_TAG-gone
mkdir -p "$S/obs.scope" "$S/leap.service" "$T" || bail_out "cannot create cgroups"
# Children first; tasks are gone by then (memcg_destroy kills them).
fixture_register sh -c "find '$S' '$T' -depth -type d -exec rmdir {} + 2>/dev/null; true"

# "${in_cg[@]}" V2DIR CMD...: CMD in the v1 memcg (the limit) and in V2DIR.
in_cg=(sh -c 'echo $$ >"$1/cgroup.procs" && echo $$ >"$2/cgroup.procs" && shift 2 && exec "$@"'
	sh "$v1")

# A counter of the stats slot whose target is $1.
slot_field() { jq -r --arg t "$1" ".[] | select(.target == \$t) | .$2" "$tmp/stats.json"; }

wait_log() # ERE: up to 5 s for the agent to log it
{
	for _ in $(seq 50); do
		grep -Eq "$1" "$tmp/agent.err" && return 0
		sleep 0.1
	done
	return 1
}

# ---- observe at the slice, leap in a child ---------------------------------------
cat >"$tmp/tree.conf" <<EOF
[default]
mode = leap
[cgroup $S]
mode = observe
[cgroup $S/leap.service]
mode = leap
EOF
start_agent attach --config "$tmp/tree.conf" --cgroup "$T" --kernel-readahead off \
	--metrics-textfile "$tmp/leap.prom"
ok $? "attach to a slice, a child of it with its own section, and another cgroup" ||
	diag "$(cat "$tmp/agent.err")"

run_timeout 120 "${in_cg[@]}" "$S/obs.scope" "$WL" --pattern stride:16 --footprint 64M \
	>/dev/null 2>"$tmp/wl1.err"
is $? 0 "workload in a pre-existing child of the observed slice: exit 0 (data verified)" ||
	diag "$(cat "$tmp/wl1.err")"

mkdir "$S/leap.service/late.scope"
ok $? "a grandchild created after attach"
run_timeout 120 "${in_cg[@]}" "$S/leap.service/late.scope" "$WL" --pattern stride:16 --footprint 64M \
	>/dev/null 2>"$tmp/wl2.err"
is $? 0 "workload in it: exit 0 (data verified)" || diag "$(cat "$tmp/wl2.err")"
# The agent names matched cgroups at its tick, then rewrites its state.
state_fresh && state_fresh

"$AGENT" stats --json >"$tmp/stats.json"
is $? 0 "stats --json"
miss_s=$(slot_field "$S" swapin_misses)
cmp_ok "${miss_s:-0}" '>' 1000 "the slice's target counts its child's swap-in misses ($miss_s)"
is "$(slot_field "$S" prefetches)" 0 "and, observing, prefetched nothing for them"
pf_c=$(slot_field "$S/leap.service" prefetches)
hit_c=$(slot_field "$S/leap.service" prefetch_hits)
cmp_ok "${pf_c:-0}" '>' 1000 "the leap child's target prefetched for its new grandchild ($pf_c)"
cmp_ok "${hit_c:-0}" '>' 1000 "and those prefetches hit ($hit_c)"
is "$(jq -r --arg t "$S" '.[] | select(.target == $t) | .leaves[].path' "$tmp/stats.json")" \
	"$S/obs.scope" "stats --json: the slice matched its child"
is "$(jq -r --arg t "$S/leap.service" '.[] | select(.target == $t) | .leaves[].path' \
	"$tmp/stats.json")" "$S/leap.service/late.scope" \
	"stats --json: the leap child matched the grandchild created after attach"
txt=$("$AGENT" stats)
like "$txt" "matched: $S/leap.service/late.scope \(id [0-9]+\)" "stats (text) lists matched cgroups"
st=$("$AGENT" status)
like "$st" "target: +cgroup $S mode=observe .* match=tree watching" "status: the slice's policy and match"
like "$st" "matched cgroup: +$S/obs.scope" "status lists the matched cgroups"
like "$(cat "$tmp/agent.err")" "cgroup $S/leap.service/late.scope faults under target $S/leap.service" \
	"the agent logs a newly matched cgroup"

# ---- Prometheus --------------------------------------------------------------------
"$AGENT" stats --format prometheus >"$tmp/stats.prom"
is $? 0 "stats --format prometheus"
/usr/bin/python3 "$PARSE" <"$tmp/stats.prom" >"$tmp/prom.json" 2>"$tmp/parse.err"
ok $? "its output parses with prometheus_client's parser (HELP, TYPE, *_total counters)" ||
	diag "$(cat "$tmp/parse.err")"
rel=${S#"$FX_CG2_ROOT"}
pq() { jq -r "$@" "$tmp/prom.json"; }
is "$(pq --arg c "$rel/leap.service" \
	'.leap_prefetch_hits.samples[] | select(.labels.cgroup == $c) | .value | floor')" \
	"$hit_c" "leap_prefetch_hits_total{cgroup=\"$rel/leap.service\"} is the stats count"
cmp_ok "$(pq --arg c "$rel" '.leap_swapin_misses.samples[] | select(.labels.cgroup == $c) | .value | floor')" \
	'>' 1000 "leap_swapin_misses_total for the slice"
is "$(pq '.leap_reaction_latency_seconds.type')" histogram "reaction latency is a histogram"
hcount() { pq --arg c "$1" '.leap_reaction_latency_seconds.samples[] | select(.name == "leap_reaction_latency_seconds_count" and .labels.cgroup == $c) | .value | floor'; }
# One sample per window issued: thousands of pages in windows of up to
# pw_max (1024) pages make some hundreds of them (781 seen at 15,448 pages
# with pw_max 256, 438 with 1024).
cmp_ok "$(hcount "$rel/leap.service")" '>' 100 "per target: the leap child's prefetches are in it ($(hcount "$rel/leap.service"))"
is "$(hcount "$rel")" 0 "and the observing slice's histogram is empty"
absent=
for fam in leap_faults leap_prefetched_pages leap_events_dropped leap_prefetch_accuracy_ratio \
	leap_prefetch_coverage_ratio leap_agent_cpu_seconds leap_agent_events leap_target_info; do
	[ "$(pq ".$fam.samples | length")" -gt 0 ] || absent+=" $fam"
done
is "$absent" "" "counters, ratios, agent cost and target info are all there"
like "$(pq '.leap_cgroup_matched_info.samples[].labels.cgroup')" "$rel/leap.service/late.scope" \
	"leap_cgroup_matched_info names the grandchild"
[ -s "$tmp/leap.prom" ] && /usr/bin/python3 "$PARSE" <"$tmp/leap.prom" >/dev/null
ok $? "--metrics-textfile: the file is there and parses"
is "$(stat -c %a "$tmp/leap.prom")" 644 "and node_exporter may read it"

# ---- cgroups removed while watched ----------------------------------------------------
rmdir "$S/leap.service/late.scope"
ok $? "remove the matched grandchild"
wait_log "cgroup $S/leap.service/late.scope was removed"
ok $? "the agent says the matched cgroup was removed" || diag "$(cat "$tmp/agent.err")"
state_fresh
unlike_st=$("$AGENT" status)
if grep -q "late.scope" <<<"$unlike_st"; then fail "status still lists the removed cgroup"; else pass "status no longer lists it"; fi
rmdir "$T"
ok $? "remove a watched target cgroup"
wait_log "watched cgroup $T was removed"
ok $? "the agent says so" || diag "$(cat "$tmp/agent.err")"
state_fresh
like "$("$AGENT" status)" "target: +cgroup $T .* match=tree removed" "status shows it removed"
# Re-created with a memory controller where the first had none (on a
# hybrid host: a v1 memory cgroup of the same path, made first): the agent
# finds its memory.stat as it watches the path again, and keeps reclaim's
# statistics fresh while it swaps (user/agent/memflush.h).
reads() { "$AGENT" stats --format prometheus |
	awk '$1 == "leap_agent_memcg_stat_reads_total" { print int($2) }'; }
tv1=
if [ -z "$FX_MEMCG_V2_ONLY" ]; then
	tv1=$FX_MEMCG_V1_ROOT/${T#"$FX_CG2_ROOT"/}
	fixture_register rmdir "$tv1"
	mkdir "$tv1" && echo 32M >"$tv1/memory.limit_in_bytes" &&
		echo 60 >"$tv1/memory.swappiness"
	ok $? "a v1 memory cgroup of the removed target's path"
	is "$(reads)" 0 "no memory.stat read so far (no target had a memory controller)"
fi
mkdir "$T"
wait_log "cgroup $T exists again \(id [0-9]+\); watching it"
ok $? "re-created: watched again" || diag "$(cat "$tmp/agent.err")"
if [ -n "$tv1" ]; then
	run_timeout 120 "${in_cg[@]:0:4}" "$tv1" "$T" "$WL" --pattern stride:16 --footprint 48M \
		>/dev/null 2>"$tmp/wl3.err"
	is $? 0 "workload in it: exit 0 (data verified)" || diag "$(cat "$tmp/wl3.err")"
	state_fresh
	cmp_ok "$(reads)" '>' 0 "its memory.stat is read while it swaps"
else
	skip "memory.stat read after re-creation" "pure cgroup v2: the target had one from the start"
fi
ok "$(_fx_alive "$AGENT_PID"; echo $?)" "the agent kept running throughout"
stop_agent
is $? 0 "SIGINT: the agent exits 0"
ok "$([ ! -e "$tmp/leap.prom" ]; echo $?)" "its metrics textfile is gone with it (no stale scrapes)"

# ---- --cgroup-exact ------------------------------------------------------------------
start_agent attach --cgroup-exact "$S" --kernel-readahead off
ok $? "attach --cgroup-exact to the slice" || diag "$(cat "$tmp/agent.err")"
like "$("$AGENT" status)" "target: +cgroup $S .* match=exact" "status says match=exact"
run_timeout 120 "${in_cg[@]}" "$S/obs.scope" "$WL" --pattern stride:16 --footprint 48M >/dev/null 2>&1
is $? 0 "workload in the slice's child: exit 0"
"$AGENT" stats --json >"$tmp/stats.json"
is "$(slot_field "$S" faults)" 0 "exact: the child's faults are not the slice's"
run_timeout 120 "${in_cg[@]}" "$S" "$WL" --pattern stride:16 --footprint 48M >/dev/null 2>&1
is $? 0 "workload in the slice itself: exit 0"
"$AGENT" stats --json >"$tmp/stats.json"
cmp_ok "$(slot_field "$S" faults)" '>' 1000 "exact: the slice's own faults count ($(slot_field "$S" faults))"
stop_agent
is $? 0 "the agent exits 0"
memcg_destroy "$h"
ok "$([ ! -e /sys/fs/bpf/leap ]; echo $?)" "no pins left"
done_testing
