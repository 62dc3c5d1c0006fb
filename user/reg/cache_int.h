/* SPDX-License-Identifier: MIT */
/* The registration cache's insides, shared by cache.c and the policies
 * (mrrc.c lookup, mre.c and mrrc_rank.c eviction, lru.c). */
#ifndef LEAP_REG_CACHE_INT_H
#define LEAP_REG_CACHE_INT_H

#include "leap/reg.h"

struct leap_reg_region {
	uint64_t start, end; /* page-aligned [start, end) */
	struct leap_reg_key key;
	uint32_t refs;
	bool cached;			     /* in the LRU stack (and index) */
	struct leap_reg_region *prev, *next; /* LRU stack, head = most recent */
	/* MRE: Evictfact = r + 1/s, given when the region is first seen in
	 * the resorting section after its last reference (valued then);
	 * a reference clears it.  mrrc-rank: scratch while resorting. */
	double evictfact;
	bool valued;
	uint32_t age; /* scratch while resorting: stack position, 0 = bottom */
};

struct leap_reg_cache {
	struct leap_reg_config cfg;
	struct leap_reg_ops ops;
	struct leap_reg_watch watch;
	bool has_watch;
	struct leap_reg_region *head, *tail;
	/* MRRC: the cached regions sorted by start; they never overlap. */
	struct leap_reg_region **idx;
	size_t nidx, idx_cap;
	struct leap_reg_stats st;
	/* deregistrations queued for one batched dereg call */
	struct leap_reg_span *batch;
	size_t nbatch, batch_cap;
	struct leap_reg_region **scratch;
	size_t scratch_cap;
	double mre_r; /* MRE's r: the aging value, 0 at start (mre.c) */
};

/* cache.c */
void reg_to_bottom(struct leap_reg_cache *c, struct leap_reg_region *r);
size_t reg_section(struct leap_reg_cache *c);
void reg_evict_segment(struct leap_reg_cache *c, size_t m, uint64_t len);
void reg_touch(struct leap_reg_cache *c, struct leap_reg_region *r);
void reg_ref(struct leap_reg_cache *c, struct leap_reg_region *r);
int reg_new_region(struct leap_reg_cache *c, uint64_t start, uint64_t end,
		   struct leap_reg_region **out);
void reg_drop(struct leap_reg_cache *c, struct leap_reg_region *r, bool gone);
void reg_flush_batch(struct leap_reg_cache *c);
bool reg_has_room(const struct leap_reg_cache *c, uint64_t len);
void reg_unref_all(struct leap_reg_cache *c, struct leap_reg_ref *ref);
void reg_add_seg(struct leap_reg_ref *ref, struct leap_reg_region *r, uint64_t addr,
		 uint64_t len);
int reg_scratch_reserve(struct leap_reg_cache *c, size_t n);
size_t reg_idx_lower(const struct leap_reg_cache *c, uint64_t start);
int reg_idx_insert(struct leap_reg_cache *c, struct leap_reg_region *r);

/* the policies: MRRC's lookup (mrrc.c) with MRE (mre.c) or the rank rule
 * (mrrc_rank.c); the LRU pin-down cache (lru.c) */
int mrrc_get(struct leap_reg_cache *c, uint64_t addr, uint64_t len,
	     struct leap_reg_ref *ref);
void mre_make_room(struct leap_reg_cache *c, uint64_t len);
void mrrc_rank_make_room(struct leap_reg_cache *c, uint64_t len);
int lru_get(struct leap_reg_cache *c, uint64_t addr, uint64_t len,
	    struct leap_reg_ref *ref);
void lru_make_room(struct leap_reg_cache *c, uint64_t len);

/* MRRC's address index (disjoint regions) is kept by both its variants. */
static inline bool reg_indexed(const struct leap_reg_cache *c)
{
	return c->cfg.policy != LEAP_REG_LRU;
}

static inline uint64_t reg_pages(const struct leap_reg_cache *c, uint64_t len)
{
	return len / c->cfg.page_size;
}

#endif
