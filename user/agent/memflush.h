/* SPDX-License-Identifier: MIT */
/*
 * Keeps the reclaim statistics of the memory cgroups leap prefetches into
 * up to date, by reading their memory.stat now and then.
 *
 * Why: a memcg's reclaim decides whether to move pages from its active
 * anon list to the inactive one by inactive_is_low() (mm/vmscan.c), which
 * reads the lists' sizes through lruvec_page_state(): for a memcg, the
 * rstat-aggregated counters, folded in only when something flushes them
 * (mm/memcontrol.c; reclaim itself flushes at most every 2 s,
 * mem_cgroup_flush_stats_ratelimited()).  shrink_lruvec() scans the
 * active anon list only through that test once the inactive list is
 * empty (its loop runs while inactive anon or file pages are left to
 * scan).  A prefetcher's pages arrive on the active list (a swap-in whose
 * refault distance is short is activated: mm/workingset.c
 * workingset_refault()) far faster than a program's own faults bring
 * them, so within a second every anon page of the memcg can be active
 * while the stale counters still show an inactive list: reclaim then
 * scans nothing, the charge's 16 tries fail in well under a millisecond,
 * and the OOM killer runs with swap to spare.  Traced here (vmscan
 * tracepoints, PageRank under leap, 2026-12-02): the reclaims before the
 * kill took 55-60 us each and scanned no list.  Reading memory.stat
 * flushes the memcg's counters (memcg1_stat_format() and
 * memory_stat_format() call mem_cgroup_flush_stats()).
 *
 * Measured (docs/bench-real.md, 2026-12-02): PageRank at 50% of its peak
 * under leap was OOM-killed in 9 of 13 runs without the reads, 0 of 20
 * with memory.stat read every 10-100 ms by a script beside it, 0 of 15
 * with this thread's reads.
 *
 * How often: every memcg_flush_ms (50 by default) while the target swaps
 * in (a device page-in or a hit seen within the last second), from a
 * thread of its own: the event loop can spend tens of milliseconds inside
 * a process_madvise whose charges reclaim (read every ~70 ms from the
 * loop, 1 of 6 PageRank runs was still killed, by the agent's own
 * charge).  A read costs ~30-50 us (v1 memory.stat, this machine).  Only
 * cgroup targets with a memory controller (v2 memory.stat, or the v1
 * memory hierarchy's cgroup of the same path) are read; the thread sleeps
 * 250 ms at a time while none swaps in.
 */
#ifndef LEAP_AGENT_MEMFLUSH_H
#define LEAP_AGENT_MEMFLUSH_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "leap_event.h" /* LEAP_STATS_SLOTS */

/* A target that swapped in within this long is read. */
#define MEMFLUSH_ACTIVE_NS (1000ULL * 1000 * 1000)
#define MEMFLUSH_IDLE_NS   (250ULL * 1000 * 1000)

/* Indexed by the target's stats slot (unique per cgroup target). */
struct memflush {
	pthread_mutex_t lock; /* path[], stop */
	pthread_cond_t wake;  /* stop */
	pthread_t thread;
	bool started, stop;
	uint64_t every_ns;
	char (*path)[PATH_MAX];		      /* memory.stat; "": none */
	uint64_t swapin_ns[LEAP_STATS_SLOTS]; /* last swap-in (events' clock) */
	uint64_t reads;			      /* counter memcg_stat_reads */
};

/* every_ms 0: nothing is ever read.  0 or -errno. */
int memflush_init(struct memflush *m, unsigned every_ms);
/* The reading thread, started only after the agent dropped its
 * capabilities: a thread keeps the sets it was created with (session.c,
 * session_drop_caps()).  0 or -errno. */
int memflush_start(struct memflush *m);
void memflush_stop(struct memflush *m);
/* The cgroup target of stats slot slot is dir (its memory.stat found, if any). */
void memflush_set(struct memflush *m, uint32_t slot, const char *dir);
void memflush_clear(struct memflush *m, uint32_t slot);
/* The target of slot swapped in at ts_ns (event thread; no lock). */
static inline void memflush_note(struct memflush *m, uint32_t slot, uint64_t ts_ns)
{
	if (slot < LEAP_STATS_SLOTS)
		__atomic_store_n(&m->swapin_ns[slot], ts_ns, __ATOMIC_RELAXED);
}

#endif
