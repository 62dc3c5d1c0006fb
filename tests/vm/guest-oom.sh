# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Sourced by guest scripts (tests/vm/guest-ublk.sh, rdma-fh-guest.sh):
# whether a workload's SIGKILL was its memcg's OOM kill on its own
# allocation, a run that says nothing about the device either way.
#
#   memcg_oom_kills DIR            the OOM kills of the memcg at DIR so far
#                                  (DIR/memory.events oom_kill; empty when
#                                  it cannot be read)
#   oom_invoker                    the command whose allocation invoked the
#                                  newest OOM kill (mm/oom_kill.c
#                                  dump_header(): "COMM invoked oom-killer:")
#   own_oom_kill STATUS BEFORE AFTER
#                                  0 when STATUS is 137, the memcg's
#                                  oom_kill count (memory.events) grew from
#                                  BEFORE to AFTER, and leap-workload's own
#                                  allocation invoked the kill

memcg_oom_kills()
{
	awk '$1 == "oom_kill" {print $2}' "$1/memory.events" 2>/dev/null
}

oom_invoker()
{
	dmesg | sed -n 's/^\[[^]]*\] \(.*\) invoked oom-killer:.*/\1/p' | tail -n 1
}

own_oom_kill()
{
	[ "$1" = 137 ] && [ "${3:-0}" -gt "${2:-0}" ] && [ "$(oom_invoker)" = leap-workload ]
}
