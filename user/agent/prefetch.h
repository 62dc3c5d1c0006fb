/* SPDX-License-Identifier: MIT */
/*
 * Prefetching into another process's swap cache with
 * process_madvise(MADV_WILLNEED) (Linux >= 5.15 for WILLNEED).
 */
#ifndef LEAP_AGENT_PREFETCH_H
#define LEAP_AGENT_PREFETCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "leap_event.h"
#include "pagemap.h"
#include "procs.h"

#define LEAP_PREFETCH_MAX_PAGES 1024 /* one engine window at most */

/* Calls of one process_madvise advice and the time inside them. */
struct madvise_time {
	uint64_t calls;
	uint64_t cpu_ns;  /* the agent thread's CPU time */
	uint64_t wall_ns; /* wall time */
};

struct prefetch_stats {
	uint64_t requested;	/* candidate pages handed in */
	uint64_t not_swapped;	/* dropped by the pagemap filter (resident or unmapped) */
	uint64_t issued;	/* pages process_madvise accepted */
	uint64_t holes;		/* pages in ranges it refused (unmapped, ENOMEM) */
	uint64_t gone;		/* ESRCH: process exited */
	uint64_t denied;	/* EPERM / EACCES */
	uint64_t map_errors;	/* prefetched-map updates that failed */
	uint64_t record_calls;	/* leap_record program runs */
	uint64_t cold_pages;	/* pages given MADV_COLD (prefetch_cold) */
	uint64_t shmem_windows; /* windows in shared memory (vmas.h) */
	/* pages left out of a window: issued within LEAP_RECENT_TTL_NS
	 * (leap/recent.h), still on their way or in the swap cache */
	uint64_t reissues_skipped;
	/*
	 * MADV_WILLNEED: the kernel's work for the windows (allocating and
	 * charging the pages, reclaim when the memcg is at its limit,
	 * submitting the reads), apart from the agent's own.
	 */
	struct madvise_time willneed;
	/* MADV_COLD (prefetch_cold): the kernel deactivating the pages
	 * behind a fill, its TLB flush included. */
	struct madvise_time cold;
};

/*
 * Where a window's pages are recorded for the BPF side before they are
 * asked for (the observer's prefetched-page map, observer.h
 * leap_records_add()), and where refused ones come back out.
 */
struct prefetch_records {
	/* How many of pages[0..n) could not be recorded; *by_program: one
	 * leap_record run did it. */
	uint32_t (*add)(void *ctx, uint32_t tgid, const uint64_t *pages, uint32_t n,
			uint64_t marker, uint32_t window, bool *by_program);
	void (*remove)(void *ctx, uint32_t tgid, uint64_t first, uint32_t n);
	void *ctx;
};

struct prefetcher {
	/* the processes' files, shared by every prefetcher of the agent */
	struct procs *procs;
	/* NULL: windows are not recorded (tests) */
	const struct prefetch_records *records;
	/* BPF leap_issued, mmapped (LEAP_ISSUED_WINDOWS slots); NULL: none */
	struct leap_issued_slot *issued;
	/* BPF leap_pf_regions, mmapped (LEAP_PF_REGIONS bytes): where a
	 * window was recorded; NULL: none (tests) */
	uint8_t *regions;
	/* pages issued a moment ago, shared by the agent and its workers;
	 * NULL: none (tests) */
	struct leap_recent *recent;
	uint32_t window; /* the newest window recorded (LEAP_PF_WINDOW_SHIFT) */
	struct pagemap_reader pagemap;
	/* CLOCK_MONOTONIC when the last prefetch_pages() handed its window to
	 * the kernel (process_madvise(WILLNEED) entered); 0: it did not. */
	uint64_t dispatch_ns;
	struct prefetch_stats stats;
};

/* A prefetcher over the shared process files procs; nothing recorded yet. */
void prefetch_init(struct prefetcher *p, struct procs *procs);
/* Adds s to to, field by field (the workers' stats into the agent's). */
void prefetch_stats_add(struct prefetch_stats *to, const struct prefetch_stats *s);
/*
 * Asks the kernel to read these pages of tgid into its swap cache, after
 * recording them in the BPF prefetched-page map (marker, if among them, is
 * flagged LEAP_PF_MARKER: a hit on it wakes the agent at once).  pages[]
 * is reordered; a window given in descending order goes out nearest
 * first.  Returns pages issued (>= 0), or -ESRCH when the process is
 * gone, -EPERM when we may not touch it, -EINVAL/-ENOSYS when the kernel
 * refuses WILLNEED (caller switches to observing).
 */
int prefetch_pages(struct prefetcher *p, uint32_t tgid, uint64_t *pages, uint32_t n,
		   uint64_t marker);
/*
 * Backend mode, step 1: sorts and de-duplicates pages[0..n), keeps those
 * pagemap shows swapped out (not resident) and stores each one's pagemap
 * entry in ent[] (swapslot_decode() reads it).  Kept count, or -errno
 * (-EACCES: no pagemap for tgid; -ESRCH: gone).
 */
int prefetch_swap_entries(struct prefetcher *p, uint32_t tgid, uint64_t *pages,
			  uint32_t n, uint64_t *ent);
/*
 * Step 2, one of: process_madvise for pages[0..m) (sorted, unique, already
 * filtered; descending: the window ran downwards, its high end goes
 * first), recorded in the prefetched-page map as prefetch_pages does; or
 * only record them there (their slots went to leap-swapd, whose cache
 * serves the major fault: a fault on them is the hit).
 */
int prefetch_advise(struct prefetcher *p, uint32_t tgid, const uint64_t *pages,
		    uint32_t m, bool descending, uint64_t marker);
/* prefetch_record: pages issued a moment ago (p->recent) are left out, and
 * their slots[] with them (both compacted in place); how many are kept. */
uint32_t prefetch_record(struct prefetcher *p, uint32_t tgid, uint64_t *pages,
			 uint64_t *slots, uint32_t m, uint64_t marker);
/* Sorts pages[0..n) ascending and drops repeats; the new count. */
uint32_t prefetch_sort_unique(uint64_t *pages, uint32_t n);

/*
 * The iovecs for pages[0..m) (sorted, unique): runs of consecutive pages,
 * in ascending order; descending (a window running downwards): runs cut
 * into LEAP_PREFETCH_DESC_CHUNK pages, the highest first, so the pages the
 * program reaches first are read first.  iov has room for m.  Their count.
 */
#define LEAP_PREFETCH_DESC_CHUNK 16u
uint32_t prefetch_iovecs(const uint64_t *pages, uint32_t m, bool descending,
			 struct iovec *iov);
/*
 * process_madvise(MADV_COLD) on pages first..first+n-1 of tgid: pages a
 * fill is done with, so reclaim takes them before the pages still to be
 * used (mm/madvise.c madvise_cold_or_pageout_pte_range(): the young bit is
 * cleared and an active page deactivated; unmapped or non-present pages
 * are skipped).  Pages advised, or -errno (-ESRCH: gone; -EINVAL: the
 * kernel refuses MADV_COLD through process_madvise, < 5.10).
 */
int prefetch_cold(struct prefetcher *p, uint32_t tgid, uint64_t first, uint32_t n);
/* Whether this kernel accepts process_madvise(MADV_WILLNEED): 1 yes, 0 no. */
int prefetch_probe_willneed(const char **why);

#endif
