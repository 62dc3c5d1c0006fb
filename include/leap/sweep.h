/* SPDX-License-Identifier: MIT */
/*
 * Sweeps: one shared region (a shmem object: a database's buffer pool, a
 * memfd, a tmpfs file) read upwards by several processes at once, e.g.
 * PostgreSQL's parallel sequential scan, where a leader and its workers
 * take chunks of 32 blocks (64 pages) of the pool in turns from a shared
 * counter.  Each process alone sees runs of 64 pages with jumps between
 * them, three places at once, and its own stream (or lanes) follows only
 * its fragment: windows of a few pages that race the kernel's readahead
 * around each miss.  Seen where the data is (the object's page index, not
 * the process's address), the three are one front moving upwards.
 *
 * Not in the paper, whose history is global (one kernel) or per process
 * (its prototype); this follows the front of the region, not a delta: the
 * accesses of all its readers that land near the front (behind it by at
 * most `behind` pages, or ahead by at most `ahead`) keep the sweep alive,
 * and the front is the highest of them.  Once the accesses are near the
 * front in a row and come from more than one process, windows go out
 * ahead of it, past the kernel's readahead reach, doubling from pw_first
 * to pw_max while the sweep lasts, renewed when half of the lead is gone.
 * Accesses far from the front (a random look-up, another scan) take
 * the score down four times as fast as near ones build it; at zero the
 * sweep starts again where the access landed.  One reader alone is left
 * to its own stream: that is what the engine already follows.
 *
 * Pure: no I/O, no clock but the events', no allocation.
 */
#ifndef LEAP_SWEEP_H
#define LEAP_SWEEP_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LEAP_SWEEP_READERS 16u /* recent near accesses whose processes count */
#define LEAP_SWEEP_SCORE   16  /* the score's ceiling */
#define LEAP_SWEEP_ON	   8   /* the score from which windows go out */
#define LEAP_SWEEP_REGIONS 32u /* regions followed at once (LRU) */

struct leap_sweep_params {
	uint32_t ahead;	      /* pages past the front an access still continues it */
	uint32_t behind;      /* pages behind the front an access still belongs to it */
	uint32_t pw_first;    /* first window */
	uint32_t pw_max;      /* largest window */
	uint32_t ra_pages;    /* the kernel's readahead reach: windows start past it */
	uint32_t readers_min; /* processes among the recent near accesses */
};

void leap_sweep_params_default(struct leap_sweep_params *p);

/* One region's sweep. */
struct leap_sweep {
	uint64_t region; /* the object's id (0: slot free) */
	uint64_t front;	 /* the highest page index reached near the front */
	uint64_t issued; /* windows went out up to here (exclusive) */
	uint64_t last_ns;
	uint32_t pw; /* the next window's size */
	int32_t score;
	uint32_t reader[LEAP_SWEEP_READERS]; /* tgids of the recent near accesses */
	uint32_t reader_at;
	bool armed;
	uint64_t windows, pages; /* windows and pages planned */
	uint64_t restarts;	 /* the front moved elsewhere */
};

/* What one access to a region planned: pages [first, first + n) of the
 * object, and whether the region is swept (its readers' own windows are
 * then replaced by these). */
struct leap_sweep_step {
	bool sweeping;
	uint64_t first;
	uint32_t n;
};

void leap_sweep_init(struct leap_sweep *s, uint64_t region);

/* tgid reached page index `index` of the region at now_ns (a swap-in miss,
 * or a hit on a page prefetched); *out says what to fetch. */
void leap_sweep_access(struct leap_sweep *s, const struct leap_sweep_params *p,
		       uint32_t tgid, uint64_t index, uint64_t now_ns,
		       struct leap_sweep_step *out);

/* How many processes the recent near accesses came from. */
uint32_t leap_sweep_readers(const struct leap_sweep *s);

/* A small table of regions, the least recently accessed one reused. */
struct leap_sweeps {
	struct leap_sweep s[LEAP_SWEEP_REGIONS];
};

/* The sweep of region (not 0), made afresh in the least recent slot when
 * it has none. */
struct leap_sweep *leap_sweeps_get(struct leap_sweeps *t, uint64_t region);

#ifdef __cplusplus
}
#endif

#endif
