# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# tests/lib/agent.sh: a leap-agent daemon in a system test's background,
# for tests that source tests/lib/fixture.sh and have called fixture_init.
#
#   start_agent ARGS...   "$AGENT" ARGS in the background, tracked so the
#                         fixture's teardown always stops it; its output in
#                         $FX_STATE/agent.{out,err}; returns 0 once it logs
#                         "attached to" (10 s at most), 1 if it died first
#   stop_agent            SIGINT, up to 10 s to exit; returns its status
#   require_agent_prefetch
#                         for a test that runs a real program under
#                         leap-agent with prefetching: bails out unless
#                         $root/bin/leap-agent, Debian's python3 and jq are
#                         there; skips it on a kernel without BTF or one
#                         that refuses process_madvise(MADV_WILLNEED); sets
#                         AGENT and PY
#   run_unless_oom OUT ERR CMD...
#                         CMD, stdout in OUT and stderr in ERR, again
#                         (OOM_TRIES tries at most, 3 unless the test sets
#                         it) while it ends with SIGKILL (137)
#                         and the kernel's OOM report says the program's own
#                         allocation invoked the OOM killer: memcg v1 here
#                         sometimes OOM-kills a fast allocator even with
#                         swap free, agent or not.  An OOM kill that
#                         leap-agent's allocation invoked (a prefetch's
#                         charge: process_madvise swaps pages in on the
#                         target's memcg) is leap's, and a SIGKILL with no
#                         OOM report is nobody's: neither is tried again.
#                         Each retry is said (diag) and counted in
#                         OOM_RETRIES; returns CMD's last status.  With
#                         OOM_EACH_TRY set, the function it names runs
#                         before each try (a snapshot of counters that
#                         must cover the counted try alone)
#   state_fresh           waits (3 s at most) until the running agent
#                         rewrites its state file (every second, and at
#                         once when its targets change): what it shows
#                         then is newer than the call; 1 if it did not
# AGENT_PID is the running agent's pid.

start_agent()
{
	"$AGENT" "$@" >"$FX_STATE/agent.out" 2>"$FX_STATE/agent.err" &
	AGENT_PID=$!
	fixture_track_pid "$AGENT_PID"
	for _ in $(seq 100); do
		grep -q "attached to" "$FX_STATE/agent.err" 2>/dev/null && return 0
		_fx_alive "$AGENT_PID" || return 1
		sleep 0.1
	done
	return 1
}

state_fresh()
{
	local f=/run/leap/agent.json t0
	t0=$(stat -c %y "$f" 2>/dev/null)
	for _ in $(seq 30); do
		sleep 0.1
		[ "$(stat -c %y "$f" 2>/dev/null)" != "$t0" ] && return 0
	done
	return 1
}

stop_agent()
{
	kill -INT "$AGENT_PID" 2>/dev/null
	for _ in $(seq 100); do
		_fx_alive "$AGENT_PID" || break
		sleep 0.1
	done
	wait "$AGENT_PID"
}

# shellcheck disable=SC2154 # root: set by the test that sources this file
require_agent_prefetch()
{
	AGENT=$root/bin/leap-agent
	PY=/usr/bin/python3
	[ -x "$AGENT" ] || bail_out "$AGENT not built (run make)"
	[ -x "$PY" ] || bail_out "Debian's python3 missing (make deps)"
	command -v jq >/dev/null || bail_out "jq missing (make deps)"
	[ -e /sys/kernel/btf/vmlinux ] || skip_all "kernel without BTF"
	"$AGENT" status 2>/dev/null | grep -q "^process_madvise: *WILLNEED supported" ||
		skip_all "this kernel refuses process_madvise(MADV_WILLNEED)"
}

# prefetch_fixture MIB: how a test of prefetching on a swap file begins:
# root, an agent that may prefetch, the fixture (its state folder in $tmp),
# a swap file of MIB MiB (its path in $swap) and vm.page-cluster at Linux's
# default of 3 (restored at teardown), whatever the host had.
# shellcheck disable=SC2034 # tmp and swap: for the test that calls it
prefetch_fixture()
{
	require_root
	require_agent_prefetch
	fixture_init
	tmp=$FX_STATE
	swap=$(swap_file_on "$1") || bail_out "cannot set up a swap file"
	note "swap file $swap is on"
	page_cluster_set 3 || bail_out "cannot set vm.page-cluster"
}

OOM_RETRIES=0

# The kernel's clock now (the timestamps dmesg prints), for oom_invoker.
_oom_mark()
{
	awk '{print $1}' /proc/uptime
}

# The command name of the task whose allocation invoked the OOM killer
# after mark (mm/oom_kill.c dump_header(): "COMM invoked oom-killer:"),
# the last one; empty when there is none.
oom_invoker()
{
	dmesg 2>/dev/null | awk -v mark="$1" '
		match($0, /^\[ *[0-9.]+\]/) {
			t = substr($0, 2, RLENGTH - 2) + 0
			if (t >= mark && index($0, " invoked oom-killer:")) {
				line = substr($0, RLENGTH + 2)
				sub(/ invoked oom-killer:.*/, "", line)
				who = line
			}
		}
		END { print who }'
}

run_unless_oom()
{
	local out=$1 err=$2 rc try mark who
	shift 2
	for ((try = 1; try <= ${OOM_TRIES:-3}; try++)); do
		mark=$(_oom_mark)
		[ -z "${OOM_EACH_TRY:-}" ] || "$OOM_EACH_TRY"
		"$@" >"$out" 2>"$err"
		rc=$?
		[ $rc -eq 137 ] || break
		who=$(oom_invoker "$mark")
		case $who in
		'')
			diag "$(basename "$out"): killed by SIGKILL with no OOM report in the kernel log: a failure, not tried again"
			break
			;;
		leap-agent*)
			diag "$(basename "$out"): OOM-killed, invoked by leap-agent's own allocation (a prefetch's charge): leap's failure, not tried again"
			break
			;;
		esac
		OOM_RETRIES=$((OOM_RETRIES + 1))
		diag "$(basename "$out"), try $try: OOM-killed, invoked by $who's own allocation, not a prefetch's charge (memcg v1 here OOM-kills with swap to spare, agent or not): the kernel's, not counted; OOM retries in this test: $OOM_RETRIES"
	done
	return $rc
}
