/* SPDX-License-Identifier: MIT */
/*
 * leap-swapd's prefetch cache: pages fetched from leap-memd ahead of the
 * kernel's read, on the agent's PREFETCH command.  Leap's eager eviction: a
 * hit serves the read and frees the entry at once (the kernel now holds the
 * page); a page hit again after such an eviction (the kernel dropped and
 * re-read it) is kept on later hits.  A write to a page drops its entry, and
 * a fetch that raced with a write is discarded, so the cache never serves
 * data older than the last write.  A page the kernel has just read on
 * demand (a miss) is not fetched for PCACHE_DEMAND_FRESH_NS after: the
 * kernel holds it now, and a window pushed after the kernel's own reads
 * began (process_madvise first, then the push) would otherwise fetch it a
 * second time.  All memory is allocated at init.
 */
#ifndef LEAP_SWAPD_CACHE_H
#define LEAP_SWAPD_CACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct pcache_stats {
	uint64_t cached;	 /* entries holding a page now */
	uint64_t prefetched;	 /* pages fetched into the cache */
	uint64_t hits, misses;	 /* reads served from the cache / not */
	uint64_t evicted_hit;	 /* eager evictions */
	uint64_t evicted_unused; /* pushed out before use */
	uint64_t invalidated;	 /* dropped by a write */
	uint64_t kept;		 /* hits on pages kept (hit repeatedly) */
	uint64_t waited;	 /* reads that waited for a fetch in flight */
	uint64_t skipped_demand; /* fetches not begun: just read on demand */
};

/* How long after a demand read the page is not prefetched (see above). */
#define PCACHE_DEMAND_FRESH_NS (100 * 1000 * 1000LL)

struct pcache_demand {
	uint64_t pg1; /* page + 1, 0 = empty */
	int64_t ns;   /* when it was read on demand (CLOCK_MONOTONIC_COARSE) */
};

struct pcache_entry {
	uint64_t pg;
	uint32_t hnext;	     /* hash chain, index + 1 */
	uint32_t prev, next; /* LRU list, index + 1 */
	uint8_t state;	     /* PC_FREE, PC_FETCHING, PC_READY */
	uint8_t stale;	     /* written while fetching: discard */
	uint8_t sticky;	     /* hit repeatedly: not evicted on hit */
};

struct pcache {
	pthread_mutex_t lock;
	pthread_cond_t fetched; /* a fetch ended (pcache_end) */
	uint32_t cap, nbuckets;
	struct pcache_entry *e;
	uint32_t *bucket; /* index + 1 */
	uint32_t lru_head, lru_tail, free_head;
	uint8_t *pages;	 /* cap pages */
	uint64_t *ghost; /* pages evicted on a hit, direct-mapped, pg + 1 */
	uint32_t nghost;
	struct pcache_demand *demand; /* recent misses, direct-mapped, nghost */
	int64_t demand_fresh_ns;      /* PCACHE_DEMAND_FRESH_NS; tests change it */
	struct pcache_stats st;
};

int pcache_init(struct pcache *c, uint32_t cap);
void pcache_fini(struct pcache *c);
/* 1 and the page copied to buf on a hit, 0 on a miss (the caller reads
 * the page on demand; it is remembered as such).  A page being fetched is
 * waited for (until pcache_end), then taken or missed. */
int pcache_take(struct pcache *c, uint64_t pg, void *buf);
/* A write to pg is about to happen or has happened (it also forgets a
 * demand read: the slot holds new data now). */
void pcache_invalidate(struct pcache *c, uint64_t pg);
/* Reserves an entry to fetch pg into; the page buffer, or NULL if pg is
 * cached, being fetched already or was read on demand just now.  Evicts the least
 * recently inserted ready entry when full; NULL if nothing can be evicted. */
uint8_t *pcache_begin(struct pcache *c, uint64_t pg);
/* Ends a fetch begun with pcache_begin: ok = the buffer holds the page. */
void pcache_end(struct pcache *c, uint64_t pg, bool ok);
void pcache_get_stats(struct pcache *c, struct pcache_stats *out);

#endif /* LEAP_SWAPD_CACHE_H */
