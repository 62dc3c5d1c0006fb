/* SPDX-License-Identifier: MIT */
/*
 * Pages issued a moment ago, so that a window overlapping one still in
 * flight does not issue (and count) the same pages again.
 *
 * Measured (CPython's stride-16 scan, 64 MiB in 32, 2 CPUs, 2026-11-26,
 * docs/bench-real.md): of 20,500-28,800 pages issued, 3,000-13,600 had
 * been issued less than a millisecond before, and 2,000-3,800 more within
 * 16 ms.  The program, late for a window, makes the engine restart the
 * next one over it.  Each such page cost the second process_madvise a
 * swap-cache lookup, and counted again among the pages prefetched, which
 * swung hits per page issued from 72% to 32% from one run to the next.
 *
 * A direct-mapped table of 2^bits words, one per (process, page) hash:
 * 40 bits of the hash as a tag and 24 bits of issue time in units of
 * 2^16 ns (65.5 us; wraps after 18 minutes).  Several threads may filter
 * at once (the prefetch workers: any of them takes any target's window):
 * each word is one relaxed atomic, and two threads issuing the same page
 * at the same moment both issue it, as before.  A collision forgets a
 * page (it is issued again) or, with a matching 40-bit tag, rarely
 * skips one: a miss, never a wrong page.
 */
#ifndef LEAP_RECENT_H
#define LEAP_RECENT_H

#include <stdatomic.h>
#include <stdint.h>

/* How long an issued page is taken to be on its way or in the swap
 * cache: past the 16 ms the measurement above saw, and short enough that
 * a page reclaimed before use is asked for again by the next window. */
#define LEAP_RECENT_TTL_NS (20ULL * 1000 * 1000)
#define LEAP_RECENT_BITS   16 /* 65,536 pages: a fast disk's 20 ms, 3x over */

struct leap_recent {
	_Atomic uint64_t *slot;
	uint32_t mask;
};

/* 0, or -1 with errno set (ENOMEM, or EINVAL for bits outside 4..24). */
int leap_recent_init(struct leap_recent *r, unsigned bits);
void leap_recent_free(struct leap_recent *r);

/*
 * Keeps the pages of pages[0..n) of process tgid not issued within ttl_ns
 * before now_ns, compacted in place in their order, and records them as
 * issued at now_ns; keep (the window's marker, whose hit wakes the agent)
 * is always kept.  Returns how many were kept.  r without a table (never
 * initialised) keeps everything.
 */
uint32_t leap_recent_filter(struct leap_recent *r, uint32_t tgid, uint64_t *pages,
			    uint32_t n, uint64_t keep, uint64_t now_ns, uint64_t ttl_ns);

#endif
