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

stop_agent()
{
	kill -INT "$AGENT_PID" 2>/dev/null
	for _ in $(seq 100); do
		_fx_alive "$AGENT_PID" || break
		sleep 0.1
	done
	wait "$AGENT_PID"
}
