#!/usr/bin/env bash
# leap-timeout: 20
# SPDX-License-Identifier: MIT
# shellcheck disable=SC2154 # NAME_pid and NAME_addr (A_pid, B_addr...) are set by backend_memd
# Backend counters in the Prometheus output, parsed with the reference
# parser (python3-prometheus-client): leap-agent in backend mode exports
# leap-swapd's STATS (read over its control socket) next to its own
# counters, and leap-memctl stats --format prometheus exports each
# leap-memd server's, whose pages-written counter moves with the swap
# traffic of a program that swaps through the backend.  A server that is
# down is reported, not hidden.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=tests/lib/fixture.sh
. "$root/tests/lib/fixture.sh"

require_root
AGENT=$root/bin/leap-agent
MEMCTL=$root/bin/leap-memctl
WL=$root/bin/leap-workload
PARSE=$here/helpers/prom-parse.py
for b in "$AGENT" "$MEMCTL" "$WL" "$root/bin/leap-memd" "$root/bin/leap-swapd"; do
	[ -x "$b" ] || bail_out "$b not built (run make)"
done
[ -c /dev/fuse ] || skip_all "no /dev/fuse"
[ -d /sys/fs/cgroup/memory ] || skip_all "no memory cgroup controller"
command -v jq >/dev/null || bail_out "jq missing (make deps)"
/usr/bin/python3 -c 'import prometheus_client.parser' 2>/dev/null ||
	bail_out "python3-prometheus-client missing (make deps)"

fixture_init
# shellcheck source=tests/lib/backend.sh
. "$root/tests/lib/backend.sh"
backend_init || bail_out "backend_init failed"
tmp=$BK_DIR
backend_memd A 127.0.0.1:0 160M || bail_out "leap-memd did not start"
backend_swapd 128M --cache-pages 1024 || bail_out "leap-swapd did not start"
backend_swapon || bail_out "loop device, mkswap or swapon failed"
note "backend swap on $BK_LOOP"

# One counter of leap-memd A's, from leap-memctl's text output.
memd_stat()
{
	run_timeout 20 "$MEMCTL" -k "$BK_SECRET" -s "$A_addr" stats 2>/dev/null |
		awk -v k="$1" '$2 == k {print $3}'
}
# Pages written so far: mkswap's header and nothing else.
written0=$(memd_stat pages_written)
like "$written0" '^[0-9]+$' "leap-memctl stats reads leap-memd's pages written ($written0)"

# ---- leap-agent in backend mode: its counters and leap-swapd's ---------------------
# The command swaps: 64 MiB written and read back by leap-workload in the
# 32 MiB cgroup, so at least 32 MiB (8,192 pages) go out to the backend,
# the swap area of the highest priority.  Then, the agent still running,
# its Prometheus text and its state file (written once a second).
run_timeout 120 "$AGENT" run --memory-limit 32M --backend "$BK_CTL" --backend-dev "$BK_LOOP" \
	--json "$tmp/run.json" \
	-- sh -c "'$WL' --pattern seq --footprint 64M >'$tmp/wl.out' 2>&1 && sleep 1.5 && \
		'$AGENT' stats --format prometheus >'$tmp/agent.prom' && \
		cp /run/leap/agent.json '$tmp/state.json'" \
	>/dev/null 2>"$tmp/run.err"
is $? 0 "a program swaps through the backend; stats --format prometheus while the agent runs" ||
	diag "$(cat "$tmp/run.err" "$tmp/wl.out")"
/usr/bin/python3 "$PARSE" <"$tmp/agent.prom" >"$tmp/agent.json" 2>"$tmp/parse.err"
ok $? "it parses" || diag "$(cat "$tmp/parse.err")"
pq() { jq -r "$@" "$tmp/agent.json"; }
is "$(pq '.leap_swapd_up.samples[0].value | floor')" 1 "leap_swapd_up is 1"
is "$(pq '.leap_swapd_up.samples[0].labels.socket')" "$BK_CTL" "labelled with the control socket"
is "$(pq '.leap_swapd_reads.type')" counter "leap_swapd_reads_total is a counter"
is "$(pq '.leap_swapd_cache_pages.samples[0].value | floor')" 1024 \
	"leap_swapd_cache_pages is a gauge with the cache size"
is "$(pq '.leap_agent_info.samples[0].labels.prefetch')" leap-swapd+swapcache \
	"leap_agent_info says backend mode (into the swap cache)"
[ "$(pq '.leap_agent_backend_queued_pages.samples | length')" -gt 0 ]
ok $? "the agent's own backend counters are there"
# The counter table's backend rows reach all four outputs (agent.t checks
# the others).
missing=
while IFS=$'\t' read -r key prom where _; do
	[ "$where" = backend ] || continue
	jq -e --arg k "$key" '.agent | has($k)' "$tmp/state.json" >/dev/null || missing+=" state:$key"
	jq -e --arg k "$key" 'has($k)' "$tmp/run.json" >/dev/null || missing+=" json:$key"
	grep '^leap-agent: counters:' "$tmp/run.err" | grep -q " $key=[0-9]" || missing+=" stderr:$key"
	grep -q "^${prom}[{ ]" "$tmp/agent.prom" || missing+=" prometheus:$prom"
done < <("$AGENT" stats --list)
is "$missing" "" "every backend counter is in the state file, the JSON summary, stderr and Prometheus"

# ---- leap-memctl: leap-memd's counters ------------------------------------------------
run_timeout 30 "$MEMCTL" stats --format prometheus -s "$A_addr" -k "$BK_SECRET" \
	>"$tmp/memd.prom" 2>"$tmp/memctl.err"
is $? 0 "leap-memctl stats --format prometheus" || diag "$(cat "$tmp/memctl.err")"
/usr/bin/python3 "$PARSE" <"$tmp/memd.prom" >"$tmp/memd.json" 2>"$tmp/parse.err"
ok $? "it parses" || diag "$(cat "$tmp/parse.err")"
mq() { jq -r "$@" "$tmp/memd.json"; }
is "$(mq '.leap_memd_up.samples[0].value | floor')" 1 "leap_memd_up is 1"
is "$(mq '.leap_memd_up.samples[0].labels.server')" "$A_addr" "labelled with the server"
cmp_ok "$(mq '.leap_memd_capacity_pages.samples[0].value | floor')" '>=' 40960 \
	"leap_memd_capacity_pages holds the server's size"
# Its pages written since before the program: the 8,192 pages the cgroup
# could not hold went out at least once (leap-workload's pages hold data,
# none is a zero-filled page the kernel would keep off the device).
written=$(mq '.leap_memd_pages_written.samples[0].value | floor')
cmp_ok "$((written - written0))" '>=' 8192 \
	"leap_memd_pages_written_total counts the swap traffic ($written0 before the program, $written after)"
# A second server that is not there: reported down, the first still shown.
run_timeout 60 "$MEMCTL" stats --format prometheus --retry-ms 200 -s "$A_addr" -s 127.0.0.1:1 \
	-k "$BK_SECRET" >"$tmp/memd2.prom" 2>/dev/null
isnt $? 0 "a server that is down makes leap-memctl fail"
/usr/bin/python3 "$PARSE" <"$tmp/memd2.prom" >"$tmp/memd2.json" 2>"$tmp/parse.err"
ok $? "and its output still parses" || diag "$(cat "$tmp/parse.err")"
is "$(jq -r '.leap_memd_up.samples[] | select(.labels.server == "127.0.0.1:1") | .value | floor' \
	"$tmp/memd2.json")" 0 "leap_memd_up is 0 for it"
done_testing
