/* SPDX-License-Identifier: MIT */
/*
 * Whose allocation invoked an OOM kill, read from the kernel log.
 *
 * A memory cgroup's counters say that the OOM killer killed one of its
 * tasks (v1 memory.oom_control, v2 memory.events: oom_kill), not whose
 * charge ran it.  With leap, it may be the agent's: the pages a window
 * reads are charged to the program's cgroup while the agent's
 * process_madvise(MADV_WILLNEED) runs (mm/swap_state.c
 * __read_swap_cache_async() -> mem_cgroup_swapin_charge_folio()), and a
 * charge that reclaim cannot satisfy runs the killer (mm/memcontrol.c
 * try_charge_memcg() -> mem_cgroup_oom()).  On this machine's memcg v1 that
 * happened in 5 of 6 runs of a PageRank under leap (docs/agent.md, "OOM
 * kills under memcg v1"): a harm of leap's own, so it is counted apart.
 *
 * The kernel's OOM report (mm/oom_kill.c), one record per line of
 * /dev/kmsg, in this order, the same since 4.19 (5.10 to 6.18 here):
 *
 *   COMM invoked oom-killer: gfp_mask=...      dump_header(), COMM = current
 *   CPU: 0 UID: 0 PID: 4939 Comm: ...          dump_stack() (no "UID:" < 6.10)
 *   ...
 *   oom-kill:constraint=CONSTRAINT_MEMCG,...,oom_memcg=/a/b,task_memcg=/a/b,task=...
 *   Memory cgroup out of memory: Killed process 4941 (python3) total-vm:...
 *
 * The parser takes one message at a time (a record's text) and reports a
 * kill at its "Killed process" line with the invoker the report named.
 * Pure: no I/O, so the formats are unit-tested on recorded lines.
 */
#ifndef LEAP_OOMLOG_H
#define LEAP_OOMLOG_H

#include <stdbool.h>
#include <stdint.h>

#define LEAP_OOMLOG_COMM  64 /* comm is 16 bytes; a kthread's may be longer */
#define LEAP_OOMLOG_MEMCG 256

struct leap_oom_kill {
	char invoker[LEAP_OOMLOG_COMM]; /* "" when the report's start was not seen */
	int32_t invoker_pid;		/* the invoking thread's id; 0: not seen */
	char victim[LEAP_OOMLOG_COMM];
	int32_t victim_pid;
	/* The cgroup whose limit was hit, as the kernel prints it (relative to
	 * its hierarchy's root); "" for a global OOM. */
	char memcg[LEAP_OOMLOG_MEMCG];
};

struct leap_oomlog {
	struct leap_oom_kill cur; /* the report being read */
	bool in_report;
};

void leap_oomlog_init(struct leap_oomlog *l);
/*
 * Feeds one message (no trailing newline needed).  Returns true and fills
 * *kill when the message is a report's "Killed process" line.
 */
bool leap_oomlog_feed(struct leap_oomlog *l, const char *msg, struct leap_oom_kill *kill);
/* Whether memcg (a path as the kernel prints it) is the cgroup named name
 * or lies under it: some component of the path equals name. */
bool leap_oomlog_memcg_has(const char *memcg, const char *name);

#endif
